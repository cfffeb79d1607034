//! `[transforms.NAME] type = "top_n"`: the table a top-n is written as.

use serde::{Deserialize, Serialize};

/// `type = "top_n"`: per `partition_by` key and event time (a window's results: one time per
/// window), the `n` best rows by `order_by`, once the watermark has passed that time.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopNConfig {
    pub inputs: Vec<String>,
    pub partition_by: Vec<String>,
    /// `"field"` or `"field desc"` / `"field asc"`, most significant first.
    pub order_by: Vec<String>,
    pub n: usize,
    /// The field the row's rank (1 = best) is written to; none: not written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_field: Option<String>,
    /// Name of the side output that receives rows behind the watermark on arrival.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_events: Option<String>,
}

impl TopNConfig {
    /// The most rows a top-n keeps per key and time (`n`): they are held until the watermark
    /// passes.
    pub const MAX_N: usize = 10_000;
}
