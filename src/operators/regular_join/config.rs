//! `[transforms.NAME] type = "join"`: the table a regular join is written as.

use serde::{Deserialize, Serialize};

use crate::config::Duration;
use crate::operators::IntervalJoinKind;

/// `type = "join"`: Flink's regular equi-join of `left` and `right` on equal `on` fields.
///
/// Without `ttl`, every row is kept until a retraction takes it back, as Flink keeps it without
/// `table.exec.state.ttl`: any kind, over insert-only and updating inputs; its result updates
/// where a side is outer or an input updates. With `ttl`, state expires that long after each
/// row's event time (`table.exec.state.ttl` in event time): two rows join when their times differ
/// by at most `ttl`; inner only, over insert-only inputs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegularJoinConfig {
    pub left: String,
    pub right: String,
    pub on: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Duration>,
    #[serde(default)]
    pub kind: IntervalJoinKind,
    /// An expression over the joined record (`left.<field>`, `right.<field>`) that a pair must
    /// make true to match, besides equal `on` fields: SQL's `ON .. AND a.t < b.t` in an outer
    /// join, where it decides which rows are NULL-padded. Without `ttl` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Name of the side output that receives rows behind the watermark on arrival (with `ttl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_events: Option<String>,
    /// Not supported: present only so `validate` can say why (see `plan::build`).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_keys: Option<toml::Value>,
}
