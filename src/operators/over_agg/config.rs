//! `[transforms.NAME] type = "over_aggregate"`: the table an OVER aggregation (Flink's
//! `AGG(x) OVER (PARTITION BY k ORDER BY rt ROWS|RANGE BETWEEN ... PRECEDING AND CURRENT ROW)`)
//! is written as.

use serde::{Deserialize, Serialize};

use crate::operators::window::config::Aggregates;

/// How the frame of each row is measured: in rows or in event time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameUnit {
    /// `ROWS`: the current row and the `preceding` rows of its partition before it.
    Rows,
    /// `RANGE`: every row of the partition whose time is within `preceding` of the current
    /// row's, rows of the same time included (SQL's default frame with an ORDER BY).
    #[default]
    Range,
}

/// How far back a frame reaches: a number of rows (`ROWS`), a duration (`RANGE`, `"10s"`), or
/// `"unbounded"` (from the partition's first row).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Preceding {
    Rows(u64),
    Text(String),
}

/// `type = "over_aggregate"`: every input row once the watermark passes its time, with
/// `aggregates` over its frame (`frame`, `preceding`) within its `partition_by` partition added
/// as fields.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OverAggregateConfig {
    pub inputs: Vec<String>,
    /// Empty: one partition of every row.
    #[serde(default)]
    pub partition_by: Vec<String>,
    #[serde(default)]
    pub frame: FrameUnit,
    /// Absent: `"unbounded"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preceding: Option<Preceding>,
    /// `{ name = "func(field)" }`, as a window's: count, sum, min, max, avg (and, over an
    /// unbounded frame, count_distinct and approx_count_distinct).
    pub aggregates: Aggregates,
    /// Name of the side output that receives rows behind the watermark on arrival.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_events: Option<String>,
}
