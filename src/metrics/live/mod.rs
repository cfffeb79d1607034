//! Live metrics: what each shard publishes while the job runs, and its Prometheus text rendering.
//!
//! A shard keeps its counters as plain integers and copies them here in one batch every
//! [`PUBLISH_EVERY`] (a `try_lock`, never a wait: a scrape in progress only delays the next copy),
//! so the event path pays nothing per event. The endpoint renders the latest copies. Names follow
//! Prometheus conventions: `sluice_<thing>_<unit>`, counters end in `_total`, base units (seconds,
//! bytes).
//!
//! [`Live::render`] writes the families in a fixed order, one function per family or small group
//! of related families: `render` holds the scrape, the text format and the order, `shards` the
//! per-shard families, `inputs` sources, partitions and Kafka, `operators` operator state and hot
//! keys, `job` checkpoints and readiness.

mod inputs;
mod job;
mod operators;
mod render;
mod shards;

use super::{CheckpointMetrics, ShardStats};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Dead-letter reason classes, the `reason` label of `sluice_dead_letters_by_reason_total`.
pub const DEAD_REASONS: [&str; 9] = [
    "invalid_json",
    "missing_time",
    "bad_time",
    "clock_skew",
    "negative_time",
    "not_a_number",
    "too_long",
    "expression",
    "other",
];

/// The class of a dead letter's reason text.
pub fn dead_reason_class(reason: &str) -> usize {
    let class = if reason.starts_with("invalid JSON") {
        "invalid_json"
    } else if reason.starts_with("missing event time") {
        "missing_time"
    } else if reason.contains("ahead of the wall clock") {
        "clock_skew"
    } else if reason.contains("before 1970") {
        "negative_time"
    } else if reason.contains("is not a number") {
        "not_a_number"
    } else if reason.contains("max_line_bytes") || reason.contains("inline key limit") {
        "too_long"
    } else if reason.starts_with("select `") || reason.starts_with("filter `") {
        "expression"
    } else if reason.contains("event time")
        || reason.contains("RFC 3339")
        || reason.contains("out of range")
    {
        "bad_time"
    } else {
        "other"
    };
    DEAD_REASONS
        .iter()
        .position(|c| *c == class)
        .unwrap_or(DEAD_REASONS.len() - 1)
}

/// How often a shard copies its counters out.
pub const PUBLISH_EVERY: Duration = Duration::from_millis(100);

/// One shard's published state.
#[derive(Debug, Clone)]
pub struct ShardSnapshot {
    pub stats: ShardStats,
    /// The shard's operator watermark, epoch ms (i64::MIN: none yet).
    pub watermark_ms: i64,
    /// Events waiting in this shard's inbound rings.
    pub ring_events: u64,
    /// Ingest-to-emit latency quantiles in microseconds: p50, p90, p99, p999.
    pub latency_us: [u64; 4],
    /// Event-to-emit latency quantiles in ms (wall clock at emission minus the watermark that
    /// fired the results): p50, p90, p99, p999.
    pub event_latency_ms: [u64; 4],
    /// Per operator: (keys or rows held, approximate state bytes).
    pub op_state: Vec<(u64, u64)>,
    /// Per source: the largest event time this shard has read (i64::MIN: none).
    pub source_read_ms: Vec<i64>,
    /// Per partition: its own watermark (published by shard 0 only; empty elsewhere).
    pub partition_wm_ms: Vec<i64>,
    /// Per partition: rounds it sat out under watermark alignment (shard 0 only; empty without
    /// alignment).
    pub alignment_paused: Vec<u64>,
    /// Log partitions this shard reads: (partition index, next offset, end of log; -1 unknown).
    pub log_lag: Vec<(u16, i64, i64)>,
    /// When the shard published this (None: never).
    pub at: Option<std::time::Instant>,
}

impl Default for ShardSnapshot {
    fn default() -> Self {
        ShardSnapshot {
            stats: ShardStats::default(),
            watermark_ms: i64::MIN,
            ring_events: 0,
            latency_us: [0; 4],
            event_latency_ms: [0; 4],
            op_state: Vec::new(),
            source_read_ms: Vec::new(),
            partition_wm_ms: Vec::new(),
            alignment_paused: Vec::new(),
            log_lag: Vec::new(),
            at: None,
        }
    }
}

/// Everything the endpoint shows, shared by the shards, the checkpoint writer and the server.
pub struct Live {
    pub shards: Vec<Mutex<ShardSnapshot>>,
    /// Operator names by id (label values).
    pub op_names: Vec<String>,
    /// Source and partition names by index (label values).
    pub source_names: Vec<String>,
    pub partition_names: Vec<String>,
    /// Restored and running: `/ready` answers 200.
    pub ready: AtomicBool,
    /// Asked to stop: `/ready` answers 503 while the job drains.
    pub draining: AtomicBool,
    pub checkpoint: Mutex<Option<CheckpointMetrics>>,
    /// Jobs reading logs: each log source's ends as its system answers, for record lag.
    pub log_ends: Vec<Box<dyn super::LogEnds>>,
    /// Table sinks' counters (rows written, errors, retries, batch latency).
    pub sinks: Vec<std::sync::Arc<crate::metrics::SinkCounters>>,
}

impl Live {
    pub fn new(shards: usize, op_names: Vec<String>) -> Live {
        Live {
            shards: (0..shards).map(|_| Mutex::default()).collect(),
            op_names,
            source_names: Vec::new(),
            partition_names: Vec::new(),
            ready: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            checkpoint: Mutex::new(None),
            log_ends: Vec::new(),
            sinks: Vec::new(),
        }
    }

    /// A shard's batch; skipped if a scrape holds the lock (the next one comes soon).
    pub fn publish(&self, shard: usize, snap: ShardSnapshot) {
        if let Some(Ok(mut s)) = self.shards.get(shard).map(Mutex::try_lock) {
            *s = snap;
        }
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire) && !self.draining.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests;
