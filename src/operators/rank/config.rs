//! `[transforms.NAME] type = "rank"`: the table a Top-N over a whole stream is written as.

use serde::{Deserialize, Serialize};

/// `type = "rank"`: per `partition_by` key, the `n` best rows by `order_by` among every row the
/// input holds at this moment (Flink's Top-N without a window), kept up to date as rows arrive
/// or are retracted: an updating result. `n = 1` ordered by time descending keeps the last row
/// per key (Flink's keep-last deduplication).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RankConfig {
    pub inputs: Vec<String>,
    #[serde(default)]
    pub partition_by: Vec<String>,
    /// `"field"` or `"field desc"` / `"field asc"`, most significant first.
    pub order_by: Vec<String>,
    pub n: usize,
    /// The field the row's rank (1 = best) is written to; none: not written, and a row that
    /// only moves within the top `n` emits nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_field: Option<String>,
    /// Of rows equal on every order field of an append-only input, which ranks first: the
    /// `earlier` in source order (Flink's Top-N: arrival order), or the `later` (Flink's
    /// keep-last deduplication: the last arrival replaces).
    #[serde(default, skip_serializing_if = "Ties::is_earlier")]
    pub ties: Ties,
}

/// See [`RankConfig::ties`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    #[default]
    Earlier,
    Later,
}

impl Ties {
    pub fn is_earlier(&self) -> bool {
        *self == Ties::Earlier
    }
}
