//! `[transforms.NAME] type = "group_aggregate"`: the table a group aggregate (Flink's GROUP BY
//! without a window) is written as.

use serde::{Deserialize, Serialize};

use crate::operators::window::config::{Aggregates, HotKeysConfig};

/// `type = "group_aggregate"`: one row per `group_by` key, updated by every record of its group.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GroupAggregateConfig {
    pub inputs: Vec<String>,
    /// Empty: one global group.
    pub group_by: Vec<String>,
    /// `{ name = "func(field)" }`, as a window's: count, sum, min, max, avg, count_distinct,
    /// approx_count_distinct; and values as written: first_value, last_value, min_string,
    /// max_string.
    pub aggregates: Aggregates,
    /// Two-phase aggregation of heavy groups (`off` unless set), as a window's: Flink's
    /// local-global aggregation. Append-only inputs read from sources only.
    #[serde(default, skip_serializing_if = "HotKeysConfig::is_off")]
    pub hot_keys: HotKeysConfig,
}
