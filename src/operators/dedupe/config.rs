//! `[transforms.NAME] type = "dedupe"`: the table a dedupe is written as.

use serde::{Deserialize, Serialize};

use crate::config::Duration;

/// `type = "dedupe"`: the first record of each `key` passes; another within `horizon` of it (in
/// event time) is dropped.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DedupeConfig {
    pub inputs: Vec<String>,
    pub key: Vec<String>,
    pub horizon: Duration,
    /// Name of the side output that receives records behind the watermark on arrival.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_events: Option<String>,
    /// Not supported: present only so `validate` can say why (see `plan::build`).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_keys: Option<toml::Value>,
}
