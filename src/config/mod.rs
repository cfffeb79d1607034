//! The TOML config as typed data: what a user may write, with every default filled in.
//!
//! This module owns the shape of a config file and its parse errors (file, line, column, key,
//! what was expected). It never checks how components refer to each other (that is
//! [`crate::plan::build`]) and never opens the files a config names.
//!
//! Every table denies unknown keys; each component kind is an internally tagged enum
//! (`type = "window"`); defaults live in [`defaults`], each saying where its value comes from.

pub mod defaults;
mod duration;
mod error;
mod parts;
pub mod print;
mod source_text;
pub mod suggest;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

pub use crate::connectors::{SinkConfig, SourceConfig};
pub use crate::operators::{
    Aggregates, DedupeConfig, FilterTransformConfig, HotKeyMode, HotKeysConfig, IntervalJoinConfig,
    IntervalJoinKind, JoinOnConfig, OutOfOrderVersions, RegularJoinConfig, SelectTransformConfig,
    TemporalJoinConfig, TemporalJoinKind, TopNConfig, TransformConfig, WindowConfig,
    WindowTransformConfig,
};
pub use duration::{Duration, DurationError, SignedDuration, EXPECTED_FORM};
pub use error::ConfigError;
use parts::kinds_of;
pub use source_text::{Entry, EntryValue, KeyPath, Location, Seg, SourceText};

/// A whole config file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub runtime: RuntimeConfig,
    #[serde(default)]
    pub sources: BTreeMap<String, SourceConfig>,
    #[serde(default)]
    pub transforms: BTreeMap<String, TransformConfig>,
    #[serde(default)]
    pub sinks: BTreeMap<String, SinkConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dead_letter: Option<DeadLetterConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<ApiConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<PipelineConfig>,
}

/// `[pipeline]`: the job's sources, transforms and sinks written as Flink SQL instead.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// A `.sql` file (one line ending in `.sql`, relative to the working directory) or the SQL
    /// text itself.
    pub sql: String,
}

/// `[api]`: the live metrics and health endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ApiConfig {
    /// Loopback by default: any other address needs `allow_remote`.
    #[serde(default = "defaults::api_address")]
    pub address: String,
    /// Whether `address` may be reachable from other hosts (the endpoint has no authentication).
    #[serde(default = "defaults::api_allow_remote")]
    pub allow_remote: bool,
    /// Connections served at once; past it the oldest open one is shut to make way.
    #[serde(default = "defaults::api_max_connections")]
    pub max_connections: usize,
    /// Time to receive a whole request head, from the accept.
    #[serde(default = "defaults::api_read_timeout")]
    pub read_timeout: Duration,
    /// Time to send a whole response.
    #[serde(default = "defaults::api_write_timeout")]
    pub write_timeout: Duration,
}

/// `[checkpoint]`: consistent snapshots of all state, taken every `interval`, in `dir`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointConfig {
    pub dir: PathBuf,
    #[serde(default = "defaults::checkpoint_interval")]
    pub interval: Duration,
    #[serde(default = "defaults::checkpoint_retain")]
    pub retain: usize,
    #[serde(default = "defaults::tolerable_failures")]
    pub tolerable_failures: u32,
    /// Where SIGUSR1 savepoints go; default `<dir>/savepoints`.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub savepoint_dir: Option<PathBuf>,
}

/// `[runtime]`. Ranges (shards >= 1, a power-of-two ring, ...) are checked by the plan, so that
/// all of a config's problems are reported together.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeConfig {
    #[serde(default = "defaults::shards")]
    pub shards: usize,
    #[serde(default = "defaults::key_groups")]
    pub key_groups: u32,
    #[serde(default = "defaults::ring_capacity")]
    pub ring_capacity: usize,
    #[serde(default = "defaults::chunk_bytes")]
    pub chunk_bytes: usize,
    #[serde(default = "defaults::pin_cores")]
    pub pin_cores: bool,
    #[serde(default = "defaults::max_line_bytes")]
    pub max_line_bytes: usize,
    /// How long a stop (SIGINT/SIGTERM) may drain before the process exits anyway.
    #[serde(default = "defaults::drain_timeout")]
    pub drain_timeout: Duration,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            shards: defaults::shards(),
            key_groups: defaults::key_groups(),
            ring_capacity: defaults::ring_capacity(),
            chunk_bytes: defaults::chunk_bytes(),
            pin_cores: defaults::pin_cores(),
            max_line_bytes: defaults::max_line_bytes(),
            drain_timeout: defaults::drain_timeout(),
        }
    }
}

/// `event_time = { field = "ts", unit = "ms" }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventTimeConfig {
    /// The record's field holding its event time (empty with `kafka_timestamp`).
    #[serde(default)]
    pub field: String,
    #[serde(default)]
    pub unit: TimeUnitConfig,
    /// Clock-skew guard: a record more than this ahead of the wall clock is a dead letter (it would
    /// push the watermark past everything else).
    #[serde(default = "defaults::max_future")]
    pub max_future: Duration,
    /// Accept event times before 1970 (rejected by default: usually a unit or parsing mistake).
    #[serde(default)]
    pub allow_negative: bool,
    /// Kafka sources: take the record's Kafka timestamp as its event time instead of a field.
    #[serde(default)]
    pub kafka_timestamp: bool,
}

impl Default for EventTimeConfig {
    /// What a table written as `event_time = {}` holds: the defaults of its keys.
    fn default() -> Self {
        EventTimeConfig {
            field: String::new(),
            unit: TimeUnitConfig::default(),
            max_future: defaults::max_future(),
            allow_negative: false,
            kafka_timestamp: false,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeUnitConfig {
    #[default]
    Ms,
    S,
    Us,
    Rfc3339,
}

/// `watermark = { max_out_of_orderness = "5s", idle_timeout = "30s", max_drift = "30s" }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WatermarkConfig {
    #[serde(default = "defaults::max_out_of_orderness")]
    pub max_out_of_orderness: Duration,
    #[serde(default = "defaults::idle_timeout")]
    pub idle_timeout: Duration,
    /// Watermark alignment: a partition whose watermark runs further than this ahead of the
    /// slowest partition of any source that also sets it pauses until the others catch up.
    /// Unset (the default): never paused.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_drift: Option<Duration>,
}

impl Default for WatermarkConfig {
    fn default() -> Self {
        WatermarkConfig {
            max_out_of_orderness: defaults::max_out_of_orderness(),
            idle_timeout: defaults::idle_timeout(),
            max_drift: None,
        }
    }
}

/// A table of `name = "expression"` kept in the order written (aggregates, select fields).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrderedTable(pub Vec<(String, String)>);

impl Serialize for OrderedTable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for OrderedTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TableVisitor;
        impl<'de> Visitor<'de> for TableVisitor {
            type Value = OrderedTable;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of `name = \"expression\"`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedTable, A::Error> {
                let mut out = Vec::new();
                while let Some((name, expr)) = map.next_entry::<String, String>()? {
                    out.push((name, expr));
                }
                Ok(OrderedTable(out))
            }
        }
        deserializer.deserialize_map(TableVisitor)
    }
}

/// `[dead_letter]`: where malformed input goes.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DeadLetterConfig {
    pub path: PathBuf,
}

/// Reads and parses a config file. Messages name the file as `path` is written.
pub fn load(path: &Path) -> Result<(Config, SourceText), ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })?;
    parse(&text, &path.display().to_string())
}

/// Parses config text; `origin` names it in messages.
pub fn parse(text: &str, origin: &str) -> Result<(Config, SourceText), ConfigError> {
    let src = SourceText::new(origin, text);
    match toml::from_str::<Config>(text) {
        Ok(config) => Ok((config, src)),
        Err(err) => Err(parts::all_problems(text, &src, &err)),
    }
}

#[cfg(test)]
mod tests;
