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

/// `[transforms.NAME]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TransformConfig {
    Window(WindowTransformConfig),
    Filter(FilterTransformConfig),
    Select(SelectTransformConfig),
    TemporalJoin(TemporalJoinConfig),
    IntervalJoin(IntervalJoinConfig),
    Join(RegularJoinConfig),
    Dedupe(DedupeConfig),
    TopN(TopNConfig),
}

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
pub enum OutOfOrderVersions {
    #[default]
    Keep,
    Drop,
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

impl TransformConfig {
    /// Every stream name this transform reads, with the key that names it: (`inputs`, Some(2),
    /// name) for `inputs[2]`, (`left`, None, name) for `left`.
    pub fn input_names(&self) -> Vec<(&'static str, Option<usize>, &str)> {
        fn list(v: &[String]) -> Vec<(&'static str, Option<usize>, &str)> {
            v.iter()
                .enumerate()
                .map(|(i, n)| ("inputs", Some(i), n.as_str()))
                .collect()
        }
        match self {
            TransformConfig::Window(w) => list(&w.inputs),
            TransformConfig::Filter(f) => list(&f.inputs),
            TransformConfig::Select(s) => list(&s.inputs),
            TransformConfig::Dedupe(d) => list(&d.inputs),
            TransformConfig::TopN(t) => list(&t.inputs),
            TransformConfig::IntervalJoin(j) => {
                vec![
                    ("left", None, j.left.as_str()),
                    ("right", None, j.right.as_str()),
                ]
            }
            TransformConfig::Join(j) => {
                vec![
                    ("left", None, j.left.as_str()),
                    ("right", None, j.right.as_str()),
                ]
            }
            TransformConfig::TemporalJoin(j) => vec![
                ("input", None, j.input.as_str()),
                ("table", None, j.table.as_str()),
            ],
        }
    }

    /// Renames the streams it reads that `rename` has a new name for; whether any was.
    pub fn rename_inputs(&mut self, rename: &dyn Fn(&str) -> Option<String>) -> bool {
        let mut changed = false;
        let mut one = |name: &mut String| {
            if let Some(to) = rename(name) {
                *name = to;
                changed = true;
            }
        };
        match self {
            TransformConfig::Window(w) => w.inputs.iter_mut().for_each(&mut one),
            TransformConfig::Filter(f) => f.inputs.iter_mut().for_each(&mut one),
            TransformConfig::Select(s) => s.inputs.iter_mut().for_each(&mut one),
            TransformConfig::Dedupe(d) => d.inputs.iter_mut().for_each(&mut one),
            TransformConfig::TopN(t) => t.inputs.iter_mut().for_each(&mut one),
            TransformConfig::IntervalJoin(j) => {
                one(&mut j.left);
                one(&mut j.right);
            }
            TransformConfig::Join(j) => {
                one(&mut j.left);
                one(&mut j.right);
            }
            TransformConfig::TemporalJoin(j) => {
                one(&mut j.input);
                one(&mut j.table);
            }
        }
        changed
    }

    /// The name of its late side output, if it has one.
    pub fn late_events(&self) -> Option<&str> {
        match self {
            TransformConfig::Window(w) => w.late_events.as_deref(),
            TransformConfig::Dedupe(d) => d.late_events.as_deref(),
            TransformConfig::TopN(t) => t.late_events.as_deref(),
            TransformConfig::IntervalJoin(j) => j.late_events.as_deref(),
            TransformConfig::Join(j) => j.late_events.as_deref(),
            TransformConfig::TemporalJoin(j) => j.late_events.as_deref(),
            TransformConfig::Filter(_) | TransformConfig::Select(_) => None,
        }
    }

    pub fn inputs(&self) -> &[String] {
        match self {
            TransformConfig::Window(w) => &w.inputs,
            TransformConfig::Filter(f) => &f.inputs,
            TransformConfig::Select(s) => &s.inputs,
            // Not a list: `input` and `table` are checked by the join's own validation.
            TransformConfig::Dedupe(d) => &d.inputs,
            TransformConfig::TopN(t) => &t.inputs,
            TransformConfig::TemporalJoin(_)
            | TransformConfig::IntervalJoin(_)
            | TransformConfig::Join(_) => &[],
        }
    }
}

/// `type = "filter"`: keeps the records for which `where` is true (null or false drops them).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FilterTransformConfig {
    pub inputs: Vec<String>,
    #[serde(rename = "where")]
    pub condition: String,
}

/// `type = "select"`: each record becomes `{ name: value of expression, ... }`, in the order
/// written; fields not listed are dropped, `new = "old"` renames.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SelectTransformConfig {
    pub inputs: Vec<String>,
    pub fields: OrderedTable,
}

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
