//! The validated execution plan: what the runtime runs, and nothing it could refuse.
//!
//! A `Plan` is built from a parsed [`crate::config::Config`] by [`build()`], which checks the whole
//! graph (every input names a stream, no cycles, aggregates name known functions and fields) and
//! reports every problem at once. The plan never touches threads, rings or the files a source reads:
//! a glob stays a pattern here and is expanded when the runtime opens the source.

mod build;
pub use build::{build, load, LoadError, PlanError, PlanErrors};

use std::path::PathBuf;

/// Index into [`Plan::sources`].
pub type SourceId = usize;
/// Index into [`Plan::windows`].
pub type OpId = usize;
/// Index into [`Plan::stages`].
pub type StageId = usize;

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub runtime: RuntimePlan,
    pub sources: Vec<SourcePlan>,
    pub windows: Vec<WindowPlan>,
    /// Filters and selects, by name.
    pub stages: Vec<StagePlan>,
    /// Temporal joins, by name; operator id = `windows.len()` + index.
    pub joins: Vec<JoinPlan>,
    /// Interval joins, by name; operator id = `windows.len() + joins.len()` + index.
    pub interval_joins: Vec<IntervalJoinPlan>,
    /// Dedupes, by name; operator ids after the interval joins.
    pub dedupes: Vec<DedupePlan>,
    pub sinks: Vec<SinkPlan>,
    /// Where malformed input goes; `None` means it is only counted (and logged once).
    pub dead_letter: Option<PathBuf>,
    pub checkpoint: Option<CheckpointPlan>,
    /// Where the metrics endpoint listens (`[api]`).
    pub api: Option<std::net::SocketAddr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointPlan {
    pub dir: PathBuf,
    pub interval_ms: i64,
    /// Completed checkpoints kept (at least 1).
    pub retain: usize,
    /// Consecutive failed checkpoints tolerated before the job stops.
    pub tolerable_failures: u32,
    /// Where savepoints asked for by SIGUSR1 alone (no `sluice savepoint --out`) are written.
    pub savepoint_dir: PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RuntimePlan {
    pub shards: usize,
    pub key_groups: u32,
    /// Events each (sender, receiver) ring holds; a full ring is "no credit".
    pub ring_capacity: usize,
    /// Bytes of input (or generated events x 64) one chunk covers; chunks are the unit of parallel parsing.
    pub chunk_bytes: usize,
    /// Pin each shard thread to a core.
    pub pin_cores: bool,
    /// Longest accepted input line; longer lines go to the dead letter output.
    pub max_line_bytes: usize,
    /// How long a stop may drain before the process exits anyway.
    pub drain_timeout_ms: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SourcePlan {
    pub name: String,
    pub kind: SourceKind,
    pub event_time: EventTimePlan,
    pub watermark: WatermarkPlan,
    pub backfill: BackfillPlan,
}

/// Where and how fast a source is read (for replays): nothing set reads everything at full speed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BackfillPlan {
    /// Records per second, at most (spread evenly over the shards).
    pub rate_per_s: Option<f64>,
    /// Records starting before this byte offset of each file are skipped.
    pub start_offset: u64,
    /// Records with an event time before this (epoch ms) are skipped.
    pub start_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SourceKind {
    /// A file or a glob; each matching file is one partition. Format is NDJSON.
    File {
        path: String,
    },
    Generator(GeneratorPlan),
    Kafka(KafkaPlan),
}

/// A Kafka source (see `sources::kafka`).
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaPlan {
    pub brokers: String,
    pub topics: Vec<String>,
    pub group_id: String,
    pub start: KafkaStart,
    /// Stop at the end offsets taken when the job first started.
    pub stop_at_end: bool,
    /// The record's Kafka timestamp is its event time.
    pub kafka_timestamp: bool,
    pub options: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KafkaStart {
    Committed,
    Earliest,
    Latest,
    /// Epoch ms.
    Timestamp(i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Millis,
    Seconds,
    Micros,
    Rfc3339,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EventTimePlan {
    pub field: String,
    pub unit: TimeUnit,
    /// Records more than this ahead of the wall clock are dead letters.
    pub max_future_ms: i64,
    pub allow_negative: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatermarkPlan {
    pub max_out_of_orderness_ms: i64,
    pub idle_timeout_ms: i64,
    /// Watermark alignment (`runtime::aligned`); `None` = this source is never paused.
    pub max_drift_ms: Option<i64>,
}

/// The synthetic click model shared by the `generator` source and `sluice loadgen`.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorPlan {
    pub seed: u64,
    /// Distinct `ad_id`s (`ad-0` .. `ad-{keys-1}`), drawn Zipf-distributed.
    pub keys: u64,
    pub zipf_exponent: f64,
    /// Share of events that go to the celebrity key `ad-0` regardless of Zipf (0.0 ..= 1.0).
    pub celebrity_share: f64,
    /// Distinct `user_id`s, drawn uniformly.
    pub users: u64,
    /// Event-time rate: events per second of event time.
    pub events_per_second: u64,
    /// Event time of the first event, epoch ms.
    pub start_ms: i64,
    /// Each event's time is jittered back by up to this much (stays within the watermark bound).
    pub out_of_orderness_ms: i64,
    /// Share of events made late on purpose (0.0 ..= 1.0).
    pub late_fraction: f64,
    /// How far behind its slot a late event's time is.
    pub late_by_ms: i64,
    /// `None`: unbounded.
    pub count: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    Tumbling { size_ms: i64 },
    Sliding { size_ms: i64, slide_ms: i64 },
    Session { gap_ms: i64 },
    Cumulative { step_ms: i64, max_size_ms: i64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    Sum,
    Min,
    Max,
    Avg,
    CountDistinct,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AggPlan {
    /// Output field name.
    pub name: String,
    pub func: AggFunc,
    /// Input field; `None` only for `count()`.
    pub field: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WindowPlan {
    pub name: String,
    /// Sources read directly.
    pub inputs: Vec<SourceId>,
    /// Sources read through filters and selects.
    pub via: Vec<InputPath>,
    pub group_by: Vec<String>,
    pub window: WindowKind,
    pub allowed_lateness_ms: i64,
    /// Name of the late side output stream, if configured.
    pub late_events: Option<String>,
    pub aggregates: Vec<AggPlan>,
    pub hot_keys: HotKeysPlan,
}

/// Where a window's phase one runs (see `operators::window::combine`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HotKeysPlan {
    pub mode: HotKeyPlanMode,
    /// Events a shard may hold back in phase one.
    pub max_buffered: usize,
}

impl HotKeysPlan {
    pub const OFF: HotKeysPlan = HotKeysPlan {
        mode: HotKeyPlanMode::Off,
        max_buffered: crate::config::defaults::hot_key_max_buffered(),
    };
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HotKeyPlanMode {
    Off,
    /// Every key is combined where it is read, on shards `0..salt` (every shard when `None`; the
    /// shard count is known only at run time, after `--shards`).
    Salt {
        salt: Option<usize>,
    },
    /// Keys above `threshold` of a shard's recent events are combined (default: by shard count,
    /// `config::defaults::hot_key_threshold`, known only at run time).
    Auto {
        threshold: Option<f64>,
    },
}

/// An event-time temporal join of two sources, keyed on one field each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinPlan {
    pub name: String,
    pub input: SourceId,
    pub table: SourceId,
    pub on_input: String,
    pub on_table: String,
    /// `left`: input records with no version get `"table":null`.
    pub left: bool,
}

impl JoinPlan {
    /// What the join's state layout depends on (see [`WindowPlan::state_signature`]).
    pub fn state_signature(&self) -> String {
        format!(
            "TemporalJoin input {} on {:?} table {} on {:?}",
            self.input, self.on_input, self.table, self.on_table
        )
    }
}

/// Event-time deduplication of one or more sources on key fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DedupePlan {
    pub name: String,
    pub inputs: Vec<SourceId>,
    pub key: Vec<String>,
    pub horizon_ms: i64,
    pub late_events: Option<String>,
}

impl DedupePlan {
    pub fn state_signature(&self) -> String {
        format!("Dedupe key {:?}", self.key)
    }
}

/// An event-time interval join of two sources on equal fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntervalJoinPlan {
    pub name: String,
    pub left: SourceId,
    pub right: SourceId,
    pub on: Vec<String>,
    pub lower_ms: i64,
    pub upper_ms: i64,
    /// Emit unmatched rows of (left, right).
    pub outer: [bool; 2],
    pub late_events: Option<String>,
}

impl IntervalJoinPlan {
    pub fn state_signature(&self) -> String {
        format!(
            "IntervalJoin left {} right {} on {:?}",
            self.left, self.right, self.on
        )
    }
}

/// A record transform, applied on the shard that reads the record, before it is keyed: `filter`
/// keeps the records its condition holds for, `select` reshapes them. Stateless, so it needs no
/// routing and no state in checkpoints. Expressions are kept as text (checked by `build`) and
/// compiled where they run.
#[derive(Debug, Clone, PartialEq)]
pub struct StagePlan {
    pub name: String,
    pub kind: StageKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StageKind {
    Filter {
        condition: String,
    },
    /// Output field name -> expression, in output order.
    Select {
        fields: Vec<(String, String)>,
    },
}

/// How records reach a consumer: read from `source`, then through the stages of `chain` in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputPath {
    pub source: SourceId,
    pub chain: Vec<StageId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamRef {
    /// The results of window `OpId`.
    Window(OpId),
    /// The late side output of window `OpId`.
    Late(OpId),
}

#[derive(Debug, Clone, PartialEq)]
pub enum SinkKind {
    File { path: PathBuf },
    Stdout,
    Kafka(KafkaSinkPlan),
}

/// A Kafka sink (see `sinks::kafka` for what each delivery mode guarantees).
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaSinkPlan {
    pub brokers: String,
    pub topic: String,
    pub key: Vec<String>,
    pub exactly_once: bool,
    pub transactional_id_prefix: String,
    pub options: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SinkPlan {
    pub name: String,
    pub kind: SinkKind,
    pub inputs: Vec<StreamRef>,
    /// Records of filters and selects this sink writes, one line each.
    pub records: Vec<InputPath>,
    /// Window results passed through filters and selects: (window, chain of stages).
    pub results_via: Vec<(OpId, Vec<StageId>)>,
}

impl Plan {
    /// Every operator as (name, state signature), in operator-id order: windows, temporal joins,
    /// interval joins, dedupes. The one place that order is written down for the runtime.
    pub fn operators(&self) -> Vec<(String, String)> {
        let windows = self.windows.iter().map(|w| (&w.name, w.state_signature()));
        let joins = self.joins.iter().map(|j| (&j.name, j.state_signature()));
        let intervals = self
            .interval_joins
            .iter()
            .map(|j| (&j.name, j.state_signature()));
        let dedupes = self.dedupes.iter().map(|d| (&d.name, d.state_signature()));
        windows
            .chain(joins)
            .chain(intervals)
            .chain(dedupes)
            .map(|(n, s)| (n.clone(), s))
            .collect()
    }
}

impl WindowPlan {
    /// What this window's state layout depends on: its kind and sizes, its key and its aggregate
    /// functions with their inputs, in order. Two configs whose windows have the same name and
    /// signature can share state (lateness, inputs and output names may differ); anything else
    /// cannot, and a restore says so.
    pub fn state_signature(&self) -> String {
        let aggs: Vec<String> = self
            .aggregates
            .iter()
            .map(|a| format!("{:?}({})", a.func, a.field.as_deref().unwrap_or("")))
            .collect();
        format!(
            "{:?} group_by {:?} aggregates [{}]",
            self.window,
            self.group_by,
            aggs.join(", ")
        )
    }
}
