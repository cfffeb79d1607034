//! `[transforms.NAME] type = "interval_join"`: the table it is written as, and the join kinds it
//! shares with the regular join.

use serde::{Deserialize, Serialize};

use crate::config::SignedDuration;

/// `type = "interval_join"`: rows of `left` and `right` with equal `on` fields whose event times
/// satisfy `between[0] <= right - left <= between[1]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalJoinConfig {
    pub left: String,
    pub right: String,
    pub on: Vec<String>,
    pub between: [SignedDuration; 2],
    #[serde(default)]
    pub kind: IntervalJoinKind,
    /// Name of the side output that receives rows behind the watermark on arrival.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_events: Option<String>,
    /// Not supported: present only so `validate` can say why (see `plan::build`).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_keys: Option<toml::Value>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalJoinKind {
    #[default]
    Inner,
    Left,
    Right,
    Full,
}
