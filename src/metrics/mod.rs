//! Counters and latency: per-shard plain integers and one histogram per shard, merged at exit.
//!
//! Nothing here is shared between threads while the job runs: a shard owns its [`ShardStats`] and
//! hands it back when it ends, so no counter costs an atomic per event. Metric names follow
//! Prometheus conventions so the live endpoint (a later issue) can publish them unchanged.

mod connectors;
pub mod live;

pub use connectors::{LogEnds, SinkCounters};

use hdrhistogram::Histogram;
use serde::Serialize;
use std::time::Duration;

#[derive(Debug, Clone, Default)]
pub struct ShardStats {
    /// Records read and parsed by this shard (valid ones).
    pub events_in: u64,
    /// Events processed by this shard's operators (after routing).
    pub events_processed: u64,
    /// Events of hot keys this shard combined where it read them (phase one).
    pub events_combined: u64,
    /// Partial aggregates this shard merged as a key's owner (phase two).
    pub partials_merged: u64,
    pub dead_letters: u64,
    /// Records a filter dropped (counted once per filter path that dropped them).
    pub records_filtered: u64,
    /// Records of filters and selects written to sinks.
    pub records_written: u64,
    /// Records skipped by a source's start position (`start_offset`, `start_time`).
    pub records_skipped: u64,
    /// Dead letters by reason class (see [`live::DEAD_REASONS`]).
    pub dead_by_reason: [u64; live::DEAD_REASONS.len()],
    /// Late events written to a side output (the rest of `late_dropped` had none configured).
    pub late_to_side_output: u64,
    pub late_dropped: u64,
    pub fired: u64,
    pub refired: u64,
    pub bytes_read: u64,
    pub chunks_read: u64,
    pub busy: Duration,
    pub backpressured: Duration,
    pub idle: Duration,
    pub open_windows: u64,
    /// Per operator (by node id): what it holds and has done, at exit.
    pub operators: Vec<OperatorReport>,
    /// Snapshots this shard wrote for checkpoints, and the time it spent writing them (time the
    /// shard did not process events).
    pub checkpoints: u64,
    pub checkpoint_time: Duration,
    /// Id of the last checkpoint this shard wrote (0: none).
    pub last_checkpoint: u64,
    /// `hot_keys = { mode = "auto" }`: the keys hot on this shard at exit, as (operator id, key,
    /// recent share of the shard's events).
    pub hot_keys: Vec<(usize, String, f64)>,
}

impl ShardStats {
    pub fn add(&mut self, o: &ShardStats) {
        self.events_in += o.events_in;
        self.checkpoints += o.checkpoints;
        self.checkpoint_time += o.checkpoint_time;
        self.last_checkpoint = self.last_checkpoint.max(o.last_checkpoint);
        self.events_processed += o.events_processed;
        self.events_combined += o.events_combined;
        self.partials_merged += o.partials_merged;
        self.dead_letters += o.dead_letters;
        self.records_filtered += o.records_filtered;
        self.records_written += o.records_written;
        self.records_skipped += o.records_skipped;
        self.late_to_side_output += o.late_to_side_output;
        for (a, b) in self.dead_by_reason.iter_mut().zip(o.dead_by_reason) {
            *a += b;
        }
        self.late_dropped += o.late_dropped;
        self.fired += o.fired;
        self.refired += o.refired;
        self.bytes_read += o.bytes_read;
        self.chunks_read += o.chunks_read;
        self.busy += o.busy;
        self.backpressured += o.backpressured;
        self.idle += o.idle;
        self.open_windows += o.open_windows;
        if self.operators.len() < o.operators.len() {
            self.operators
                .resize(o.operators.len(), OperatorReport::default());
        }
        for (mine, theirs) in self.operators.iter_mut().zip(&o.operators) {
            mine.add(theirs);
        }
    }
}

/// What a join (or dedupe) holds, per side (0 left or input, 1 right or table): rows buffered now
/// and at most, rows dropped by cleanup once no match was possible, rows late on arrival.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JoinStats {
    pub buffered: [u64; 2],
    pub peak: [u64; 2],
    pub cleaned: [u64; 2],
    pub late: [u64; 2],
    /// Approximate bytes of state held now (rows, timers and key index).
    pub state_bytes: u64,
    /// Rows whose key was missing or null: they never match (an inner join drops them, an outer
    /// join emits them unmatched, a dedupe passes them).
    pub null_keys: u64,
    /// Table versions of a temporal join dropped for arriving after a later version of their
    /// key (`out_of_order_versions = "drop"`).
    pub superseded: u64,
}

impl JoinStats {
    pub fn add(&mut self, o: &JoinStats) {
        for i in 0..2 {
            self.buffered[i] += o.buffered[i];
            self.peak[i] += o.peak[i];
            self.cleaned[i] += o.cleaned[i];
            self.late[i] += o.late[i];
        }
        self.state_bytes += o.state_bytes;
        self.null_keys += o.null_keys;
        self.superseded += o.superseded;
    }
}

/// What one operator holds and has done on one shard (summed over shards where merged). Every
/// operator fills it through one hook (`Operator::report`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct OperatorReport {
    /// Records emitted when the watermark passed (or, for joins, when a match was found).
    pub fired: u64,
    /// Window results emitted again for events within the allowed lateness.
    pub refired: u64,
    pub late_dropped: u64,
    /// Windows (or sessions) still open; for joins and dedupe, rows waiting for the watermark.
    pub open: u64,
    /// Keys (window rows per key and window) or rows (joins, dedupe) held now.
    pub keys: u64,
    /// Approximate bytes of state held now.
    pub state_bytes: u64,
    /// The most `state_bytes` the shard saw (sampled every [`STATE_SAMPLE_EVERY`] and at exit;
    /// the shard fills it, not the operator).
    pub state_bytes_peak: u64,
    /// Joins and dedupe: rows per side.
    pub rows: Option<JoinStats>,
}

/// How often a shard samples its operators' state for `state_bytes_peak`: often enough to see a
/// window's state before it fires, rare enough to cost nothing per event.
pub const STATE_SAMPLE_EVERY: Duration = Duration::from_millis(50);

impl OperatorReport {
    pub fn add(&mut self, o: &OperatorReport) {
        self.fired += o.fired;
        self.refired += o.refired;
        self.late_dropped += o.late_dropped;
        self.open += o.open;
        self.keys += o.keys;
        self.state_bytes += o.state_bytes;
        self.state_bytes_peak += o.state_bytes_peak;
        if let Some(r) = &o.rows {
            self.rows.get_or_insert_with(Default::default).add(r);
        }
    }
}

/// Ingestion-to-emission latency in microseconds, 1 us .. 1 h, 3 significant digits.
/// Event-to-emit latencies in ms, up to ten years (a replay of old data emits results years after
/// their event time), 2 significant figures.
pub fn event_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 315_360_000_000, 2)
        .unwrap_or_else(|_| Histogram::new(2).expect("2 sig figs is valid"))
}

/// The busiest shard's aggregation work over the mean; 1.0 with one shard or no work.
pub fn load_balance(per_shard: &[ShardStats]) -> f64 {
    let loads: Vec<u64> = per_shard
        .iter()
        .map(|s| s.events_processed + s.events_combined + s.partials_merged)
        .collect();
    let total: u64 = loads.iter().sum();
    if total == 0 {
        return 1.0;
    }
    let max = loads.iter().copied().max().unwrap_or(0);
    max as f64 * loads.len() as f64 / total as f64
}

pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3)
        .unwrap_or_else(|_| Histogram::new(3).expect("3 sig figs is valid"))
}

#[derive(Debug, Clone, Serialize)]
pub struct ShardSummary {
    pub shard: usize,
    pub events_in: u64,
    pub events_processed: u64,
    /// Events this shard combined where it read them (phase one of `hot_keys`).
    pub events_combined: u64,
    /// Partial aggregates this shard merged as the keys' owner (phase two).
    pub partials_merged: u64,
    /// The aggregation work this shard did: events processed + events combined + partials merged.
    pub load: u64,
    pub busy_seconds: f64,
    pub backpressured_seconds: f64,
    pub idle_seconds: f64,
}

/// What `run` prints at exit and writes to `--stats`.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub shards: usize,
    pub elapsed_seconds: f64,
    pub events: u64,
    pub events_per_second: f64,
    pub bytes_read: u64,
    pub dead_letters: u64,
    /// Records filters dropped, and records of filters and selects written to sinks.
    pub records_filtered: u64,
    pub records_written: u64,
    /// Records skipped before a source's start position.
    pub records_skipped: u64,
    pub late_dropped: u64,
    pub results_emitted: u64,
    pub results_refired: u64,
    pub open_windows_at_exit: u64,
    pub stopped_by_signal: bool,
    pub latency_p50_us: u64,
    pub latency_p99_us: u64,
    pub latency_p999_us: u64,
    pub latency_max_us: u64,
    pub per_shard: Vec<ShardSummary>,
    /// Checkpoint figures (`None` without `[checkpoint]`).
    pub checkpoint: Option<CheckpointMetrics>,
    /// Per join or dedupe: rows buffered at exit, peak (each shard's peak, summed), dropped by
    /// cleanup, late; `[left, right]` (`[input, table]` for a temporal join).
    pub joins: Vec<JoinSummary>,
    /// Per operator: its name and the peak of its approximate state bytes (each shard's peak,
    /// summed).
    pub operators: Vec<OperatorSummary>,
    /// Per input partition, under watermark alignment only: rounds of chunks it sat out because
    /// it ran more than `max_drift` ahead (empty without alignment).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alignment_paused_rounds: Vec<u64>,
    /// The busiest shard's `load` over the mean (1.0: perfectly even).
    pub load_max_over_avg: f64,
    /// `hot_keys = { mode = "auto" }`: the keys hot at exit, per shard.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hot_keys: Vec<HotKeySummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HotKeySummary {
    pub transform: String,
    pub shard: usize,
    pub key: String,
    /// The key's recent share of the events the shard read.
    pub share: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct OperatorSummary {
    pub name: String,
    pub state_bytes_peak: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct JoinSummary {
    pub name: String,
    #[serde(flatten)]
    pub stats: JoinStats,
}

/// Checkpoint figures for the run summary (and the metrics endpoint later). Kept by the checkpoint
/// writer, once per checkpoint, never per event.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CheckpointMetrics {
    pub completed: u64,
    /// Checkpoints that failed (counted even when tolerated).
    pub failed: u64,
    pub savepoints: u64,
    pub last_completed_id: u64,
    /// Wall clock of the last completion, ms since the Unix epoch (0: none in this run).
    pub last_completed_unix_ms: u64,
    /// Seconds since the last checkpoint completed, when the summary was made.
    pub age_seconds: Option<f64>,
    /// Barrier sent -> manifest written and output committed.
    pub last_duration_ms: f64,
    pub max_duration_ms: f64,
    /// Bytes of snapshot files of the last checkpoint, and of the largest.
    pub last_size_bytes: u64,
    pub max_size_bytes: u64,
    /// Snapshot bytes written by this run in all.
    pub total_bytes: u64,
    /// Barrier sent -> the last shard met it (every shard meets it at the same chunk boundary, so
    /// this is the time the slowest shard needed to finish the chunks before it).
    pub last_alignment_ms: f64,
    pub max_alignment_ms: f64,
    /// The longest a shard paused event processing to hand its state to the writer.
    pub max_sync_pause_ms: f64,
    /// Snapshot bytes written per second of the writer's time writing them (files and fsync),
    /// over the whole run.
    pub write_mb_per_s: f64,
    #[serde(skip)]
    pub write_time: std::time::Duration,
    #[serde(skip)]
    pub last_completed_at: Option<std::time::Instant>,
}

impl RunSummary {
    pub fn new(
        per_shard: &[ShardStats],
        hist: &Histogram<u64>,
        elapsed: Duration,
        stopped: bool,
    ) -> Self {
        let mut total = ShardStats::default();
        for s in per_shard {
            total.add(s);
        }
        let secs = elapsed.as_secs_f64().max(1e-9);
        RunSummary {
            shards: per_shard.len(),
            elapsed_seconds: secs,
            events: total.events_in,
            events_per_second: total.events_in as f64 / secs,
            bytes_read: total.bytes_read,
            dead_letters: total.dead_letters,
            records_filtered: total.records_filtered,
            records_written: total.records_written,
            records_skipped: total.records_skipped,
            late_dropped: total.late_dropped,
            results_emitted: total.fired,
            results_refired: total.refired,
            open_windows_at_exit: total.open_windows,
            stopped_by_signal: stopped,
            latency_p50_us: hist.value_at_quantile(0.5),
            latency_p99_us: hist.value_at_quantile(0.99),
            latency_p999_us: hist.value_at_quantile(0.999),
            latency_max_us: hist.max(),
            checkpoint: None,
            joins: Vec::new(),
            operators: Vec::new(),
            alignment_paused_rounds: Vec::new(),
            load_max_over_avg: load_balance(per_shard),
            hot_keys: Vec::new(),
            per_shard: per_shard
                .iter()
                .enumerate()
                .map(|(i, s)| ShardSummary {
                    shard: i,
                    events_in: s.events_in,
                    events_processed: s.events_processed,
                    events_combined: s.events_combined,
                    partials_merged: s.partials_merged,
                    load: s.events_processed + s.events_combined + s.partials_merged,
                    busy_seconds: s.busy.as_secs_f64(),
                    backpressured_seconds: s.backpressured.as_secs_f64(),
                    idle_seconds: s.idle.as_secs_f64(),
                })
                .collect(),
        }
    }

    /// Names the operator and join statistics the shards gathered (operator `i` is `names[i]`).
    pub fn set_joins(&mut self, names: &[String], per_shard: &[ShardStats]) {
        let mut total = ShardStats::default();
        for s in per_shard {
            total.add(s);
        }
        self.operators = names
            .iter()
            .zip(&total.operators)
            .map(|(n, r)| OperatorSummary {
                name: n.clone(),
                state_bytes_peak: r.state_bytes_peak,
            })
            .collect();
        self.joins = names
            .iter()
            .zip(&total.operators)
            .filter_map(|(n, r)| {
                Some(JoinSummary {
                    name: n.clone(),
                    stats: r.rows?,
                })
            })
            .collect();
    }

    /// Names the hot keys the shards detected (operator `i` is `names[i]`).
    pub fn set_hot_keys(&mut self, names: &[String], per_shard: &[ShardStats]) {
        self.hot_keys = per_shard
            .iter()
            .enumerate()
            .flat_map(|(shard, s)| {
                s.hot_keys
                    .iter()
                    .map(move |(op, key, share)| HotKeySummary {
                        transform: names.get(*op).cloned().unwrap_or_default(),
                        shard,
                        key: key.clone(),
                        share: *share,
                    })
            })
            .collect();
    }

    /// Adds the checkpoint figures, with their age as of now.
    pub fn set_checkpoints(&mut self, mut c: CheckpointMetrics) {
        c.age_seconds = c.last_completed_at.map(|t| t.elapsed().as_secs_f64());
        self.checkpoint = Some(c);
    }

    /// The human summary printed at exit.
    pub fn text(&self) -> String {
        let mut s = format!(
            "sluice: {} events in {:.3} s = {:.2} M events/s on {} shards; {} results (+{} re-fired), {} late dropped, {} dead letters\n\
             latency ingestion->emission: p50 {} us, p99 {} us, p999 {} us, max {} us\n",
            self.events,
            self.elapsed_seconds,
            self.events_per_second / 1e6,
            self.shards,
            self.results_emitted,
            self.results_refired,
            self.late_dropped,
            self.dead_letters,
            self.latency_p50_us,
            self.latency_p99_us,
            self.latency_p999_us,
            self.latency_max_us,
        );
        if self.records_filtered + self.records_written > 0 {
            s.push_str(&format!(
                "  filters and selects: {} records written, {} dropped by filters\n",
                self.records_written, self.records_filtered
            ));
        }
        for p in &self.per_shard {
            s.push_str(&format!(
                "  shard {}: {} events in, {} processed; busy {:.2} s, backpressured {:.2} s, idle {:.2} s\n",
                p.shard, p.events_in, p.events_processed, p.busy_seconds, p.backpressured_seconds, p.idle_seconds
            ));
            if p.events_combined + p.partials_merged > 0 {
                s.push_str(&format!(
                    "    hot keys: {} events combined where read, {} partials merged\n",
                    p.events_combined, p.partials_merged
                ));
            }
        }
        if self.per_shard.len() > 1 {
            s.push_str(&format!(
                "  load max/avg {:.3} (events processed + combined + partials merged per shard)\n",
                self.load_max_over_avg
            ));
        }
        for h in &self.hot_keys {
            s.push_str(&format!(
                "  hot key of {} on shard {}: {} ({:.1}% of its recent events)\n",
                h.transform,
                h.shard,
                h.key,
                h.share * 100.0
            ));
        }
        if let Some(c) = &self.checkpoint {
            s.push_str(&format!(
                "  checkpoints: {} completed (last id {}, {} bytes, {:.1} ms), {} failed, {} savepoints; \
                 longest {:.1} ms, alignment up to {:.1} ms, shard pause up to {:.1} ms, writes {:.0} MB/s\n",
                c.completed,
                c.last_completed_id,
                c.last_size_bytes,
                c.last_duration_ms,
                c.failed,
                c.savepoints,
                c.max_duration_ms,
                c.max_alignment_ms,
                c.max_sync_pause_ms,
                c.write_mb_per_s
            ));
        }
        if self.stopped_by_signal && self.open_windows_at_exit > 0 {
            s.push_str(&format!(
                "  stopped by signal with {} open windows not emitted (their events were not complete)\n",
                self.open_windows_at_exit
            ));
        }
        s
    }
}
