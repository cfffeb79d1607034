//! `[transforms.NAME] type = "temporal_join"`: the table a temporal join is written as.

use serde::{Deserialize, Serialize};

/// `type = "temporal_join"`: each `input` record joins the version of `table` (a changelog stream)
/// valid at its event time.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TemporalJoinConfig {
    pub input: String,
    pub table: String,
    pub on: JoinOnConfig,
    #[serde(default)]
    pub kind: TemporalJoinKind,
    /// Name of the side output that receives rows behind the watermark on arrival.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_events: Option<String>,
    /// What a table version older than its key's latest one, arriving after it, does: `keep`
    /// (a version like any other) or `drop` (as Flink's ROW_NUMBER keep-last view does).
    #[serde(default)]
    pub out_of_order_versions: OutOfOrderVersions,
    /// Not supported: present only so `validate` can say why (see `plan::build`).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_keys: Option<toml::Value>,
}

/// `on = { input = "currency", table = "currency" }`: the equality the join keys on.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JoinOnConfig {
    pub input: String,
    pub table: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TemporalJoinKind {
    #[default]
    Inner,
    /// An input record with no version yet: the table fields are null.
    Left,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutOfOrderVersions {
    #[default]
    Keep,
    Drop,
}
