//! `[transforms.NAME] type = "interval_join"` and `type = "join"` (a regular join, run as the
//! interval join whose bounds are its state TTL): the tables they are written as.

use serde::{Deserialize, Serialize};

use crate::config::{Duration, SignedDuration};

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

/// `type = "join"`: Flink's regular (unbounded) equi-join of two append-only streams, with its
/// state expiring `ttl` after each row's event time (`table.exec.state.ttl` in event time): a
/// row stays until the watermark passes its time + `ttl`, so two rows with equal `on` fields
/// join when their times differ by at most `ttl`. Inner only: an outer regular join's result
/// updates (Flink retracts a NULL-padded row when its match arrives).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegularJoinConfig {
    pub left: String,
    pub right: String,
    pub on: Vec<String>,
    pub ttl: Duration,
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
