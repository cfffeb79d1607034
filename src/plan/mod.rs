//! The validated execution plan: what the runtime runs, and nothing it could refuse.
//!
//! A `Plan` is built from a parsed [`crate::config::Config`] by [`build()`], which checks the whole
//! graph (every input names a stream, no cycles, aggregates name known functions and fields that
//! the upstream operators produce) and reports every problem at once. The plan never touches
//! threads, rings or the files a source reads: a glob stays a pattern here and is expanded when the
//! runtime opens the source.
//!
//! The graph: stateful operators are [`NodePlan`]s in one list, in topological order; each has
//! typed input [`PortPlan`]s (a window's `inputs`, a join's `left` and `right`, ...) that say what
//! their events are keyed on and carry, and which streams feed them. A stream is a source, a
//! node's output or a node's late side output, read through a chain of stateless steps (filters
//! and selects): an [`Edge`]. Sinks read edges too.

pub(crate) mod build;
pub mod columns;
mod explain;
pub use build::{build, load, load_job, LoadError, Loaded, Locate, PlanError, PlanErrors};
pub use explain::explain;

use crate::expr::FieldPath;
pub use crate::operators::dedupe::plan::DedupePlan;
pub use crate::operators::interval_join::plan::IntervalJoinPlan;
pub use crate::operators::temporal_join::plan::TemporalJoinPlan;
pub use crate::operators::top_n::plan::TopNPlan;
pub use crate::operators::window::plan::{
    AggFunc, AggPlan, HotKeyPlanMode, HotKeysPlan, WindowKind, WindowPlan,
};
pub use crate::operators::NodeKind;
pub use crate::record::bind::{SlotUse, TimeUnit};
use std::path::PathBuf;

/// Index into [`Plan::sources`].
pub type SourceId = usize;
/// Index into [`Plan::nodes`].
pub type NodeId = usize;
/// Index into [`Plan::steps`].
pub type StepId = usize;
/// Index into [`Plan::ports`]; every event carries the port it is keyed for.
pub type PortId = usize;

#[derive(Debug, Clone)]
pub struct Plan {
    pub runtime: RuntimePlan,
    pub sources: Vec<SourcePlan>,
    /// Stateful operators in topological order (a node reads only sources and earlier nodes);
    /// ties by name, so ids are deterministic.
    pub nodes: Vec<NodePlan>,
    /// Every node's input ports, node by node.
    pub ports: Vec<PortPlan>,
    /// Filters and selects, by name.
    pub steps: Vec<StepPlan>,
    pub sinks: Vec<SinkPlan>,
    /// Where malformed input goes; `None` means it is only counted (and logged once).
    pub dead_letter: Option<DeadLetterPlan>,
    pub checkpoint: Option<CheckpointPlan>,
    /// The metrics endpoint (`[api]`).
    pub api: Option<ApiPlan>,
}

/// A stream anything can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamRef {
    Source(SourceId),
    /// The output of a node.
    Node(NodeId),
    /// The late side output of a node (`late_events`).
    Late(NodeId),
}

/// A stream read through stateless steps, in order (none: the stream as it is).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Edge {
    pub from: StreamRef,
    pub steps: Vec<StepId>,
}

/// One stateful operator.
#[derive(Debug, Clone)]
pub struct NodePlan {
    pub name: String,
    pub kind: NodeKind,
    /// Its ports are `Plan::ports[ports.clone()]`, in the order of the kind (left before right,
    /// input before table).
    pub ports: std::ops::Range<PortId>,
    pub late_events: Option<String>,
    /// 0 when every input is a source (through steps); else 1 + the deepest node it reads.
    pub depth: usize,
    /// How far behind its input watermark it may emit records: the watermark it passes on is
    /// held back by this, so its output is never late downstream (outer joins' unmatched rows).
    pub hold_ms: i64,
    /// It emits updates of earlier results (a window with allowed lateness re-fires): each update
    /// reaches consumers as a retraction of the previous result followed by the new one.
    pub updates: bool,
    /// Its output is an updating result (`+I`, `-U`, `+U`, `-D`) without event time: a group
    /// aggregate's.
    pub changelog: bool,
}

impl NodePlan {
    /// The changelog mode of its output, as `explain` shows it.
    pub fn mode(&self) -> &'static str {
        if self.changelog {
            "updating (+I, -U, +U, -D)"
        } else if self.updates {
            "insert-only, and -U/+U when a late event re-fires a result"
        } else {
            "insert-only (+I)"
        }
    }
}

/// One input of a node: which streams feed it and what their records become as its events.
#[derive(Debug, Clone, PartialEq)]
pub struct PortPlan {
    pub node: NodeId,
    /// Position among the node's ports (0: left, input or a window's inputs; 1: right or table).
    pub side: usize,
    /// The config key naming its streams (`inputs`, `left`, `right`, `input`, `table`).
    pub name: &'static str,
    /// Key fields, in order; every record is keyed (and routed) on them.
    pub key: Vec<FieldPath>,
    /// Value slots: slot `i` holds `values[i]`.
    pub values: Vec<(FieldPath, SlotUse)>,
    /// Events carry the record itself (joins and dedupe output whole records).
    pub row: bool,
    pub inputs: Vec<Edge>,
}

/// The metrics endpoint: where it listens and how it bounds its clients.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiPlan {
    pub address: std::net::SocketAddr,
    /// `address` is not loopback (`allow_remote` said it may be): warned about at start.
    pub remote: bool,
    /// Connections served at once (1..=[`ApiPlan::MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// Deadlines for receiving a request head and for sending a response (both > 0).
    pub read_timeout: std::time::Duration,
    pub write_timeout: std::time::Duration,
}

impl ApiPlan {
    /// The most `max_connections` may be: each connection is served by a thread of its own.
    pub const MAX_CONNECTIONS: usize = 1024;
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

#[derive(Debug, Clone)]
pub struct SourcePlan {
    pub name: String,
    /// The validated source of its kind (see `connectors`).
    pub source: std::sync::Arc<dyn crate::connectors::source::Source>,
    /// `None`: its records have no event time (`record::NO_EVENT_TIME`).
    pub event_time: Option<EventTimePlan>,
    pub watermark: WatermarkPlan,
}

impl SourcePlan {
    /// The source's plan as its connector's type, when it is one (for tests and tools).
    pub fn source_as<T: 'static>(&self) -> Option<&T> {
        self.source.as_any().downcast_ref()
    }
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

/// A stateless step on an edge, applied where a record is read or emitted, before it is keyed:
/// `filter` keeps the records its condition holds for, `select` reshapes them. Expressions are
/// kept as text (checked by `build`) and compiled where they run.
#[derive(Debug, Clone, PartialEq)]
pub struct StepPlan {
    pub name: String,
    pub kind: StepKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StepKind {
    Filter {
        condition: String,
    },
    /// Output field name -> expression, in output order.
    Select {
        fields: Vec<(String, String)>,
    },
}

/// `[dead_letter]`: where malformed input, refused rows and unreadable late records go.
#[derive(Debug, Clone)]
pub struct DeadLetterPlan {
    pub path: PathBuf,
    pub sink: std::sync::Arc<dyn crate::connectors::sink::Sink>,
}

#[derive(Debug, Clone)]
pub struct SinkPlan {
    pub name: String,
    /// The validated sink of its kind (see `connectors`).
    pub sink: std::sync::Arc<dyn crate::connectors::sink::Sink>,
    /// The streams it writes, one line per record.
    pub inputs: Vec<Edge>,
}

impl SinkPlan {
    /// The sink's plan as its connector's type, when it is one (for tests and tools).
    pub fn sink_as<T: 'static>(&self) -> Option<&T> {
        self.sink.as_any().downcast_ref()
    }
}

impl Plan {
    /// Every node as (name, state signature), in node order: the one place checkpoints learn which
    /// state belongs to which operator.
    pub fn operators(&self) -> Vec<(String, String)> {
        self.nodes
            .iter()
            .map(|n| (n.name.clone(), n.kind.state_signature()))
            .collect()
    }

    /// The ports of node `id`.
    pub fn ports_of(&self, id: NodeId) -> &[PortPlan] {
        &self.ports[self.nodes[id].ports.clone()]
    }

    /// The deepest node's depth plus one: how many levels of exchange a chunk goes through.
    pub fn depths(&self) -> usize {
        self.nodes.iter().map(|n| n.depth + 1).max().unwrap_or(0)
    }
}
