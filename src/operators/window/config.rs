//! `[transforms.NAME] type = "window"`: the table a window is written as, with its shape
//! (`window = { ... }`) and its two-phase aggregation of hot keys (`hot_keys = { ... }`).

use serde::{Deserialize, Serialize};

use crate::config::{defaults, Duration, OrderedTable};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WindowTransformConfig {
    pub inputs: Vec<String>,
    /// Empty: one global group.
    pub group_by: Vec<String>,
    pub window: WindowConfig,
    #[serde(default = "defaults::allowed_lateness")]
    pub allowed_lateness: Duration,
    /// Name of the side output that receives events too late for their window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_events: Option<String>,
    pub aggregates: Aggregates,
    /// Two-phase aggregation of heavy keys (`off` unless set).
    #[serde(default)]
    pub hot_keys: HotKeysConfig,
}

/// `hot_keys = { mode = "salt" }`: where a window's phase one (partial aggregates) runs.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HotKeysConfig {
    #[serde(default)]
    pub mode: HotKeyMode,
    /// `salt`: how many shards combine a salted key's events before its owner merges them
    /// (every shard when unset; at most the shard count takes effect).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub salt: Option<u32>,
    /// `auto`: a key is hot while it is more than this share of a shard's recent events (default:
    /// `defaults::hot_key_threshold`, which depends on the shard count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Events a shard holds back in phase one before it must hand them on (bounds its memory).
    #[serde(default = "defaults::hot_key_max_buffered")]
    pub max_buffered: usize,
}

impl HotKeysConfig {
    /// The default: every event goes to its key's owner.
    pub fn is_off(&self) -> bool {
        *self == HotKeysConfig::default()
    }
}

impl Default for HotKeysConfig {
    fn default() -> Self {
        HotKeysConfig {
            mode: HotKeyMode::Off,
            salt: None,
            threshold: None,
            max_buffered: defaults::hot_key_max_buffered(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HotKeyMode {
    /// Every event goes to its key's owner.
    #[default]
    Off,
    /// Every key is combined on the shard that reads it; only partial aggregates reach the owner.
    Salt,
    /// Only keys detected as heavy hitters on the reading shard are combined there.
    Auto,
}

/// `window = { type = "tumbling", size = "1m" }` and its siblings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WindowConfig {
    Tumbling { size: Duration },
    Sliding { size: Duration, slide: Duration },
    Session { gap: Duration },
    Cumulative { step: Duration, max_size: Duration },
}

/// `aggregates = { name = "func(field)", ... }` in the order written, which is the order of the
/// fields in each output line. The expressions are parsed by the plan.
pub type Aggregates = OrderedTable;
