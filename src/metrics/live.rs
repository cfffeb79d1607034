//! Live metrics: what each shard publishes while the job runs, and its Prometheus text rendering.
//!
//! A shard keeps its counters as plain integers and copies them here in one batch every
//! [`PUBLISH_EVERY`] (a `try_lock`, never a wait: a scrape in progress only delays the next copy),
//! so the event path pays nothing per event. The endpoint renders the latest copies. Names follow
//! Prometheus conventions: `sluice_<thing>_<unit>`, counters end in `_total`, base units (seconds,
//! bytes).

use super::{CheckpointMetrics, ShardStats};
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// A per-shard counter: name, help, and how to read it from a snapshot.
type Counter<'a> = (&'a str, &'a str, &'a dyn Fn(&ShardSnapshot) -> f64);

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
    /// Kafka partitions this shard reads: (partition index, next offset, end of log; -1 unknown).
    pub kafka_lag: Vec<(u16, i64, i64)>,
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
            kafka_lag: Vec::new(),
            at: None,
        }
    }
}

/// A label value with `\` and `"` escaped, as the exposition format requires.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
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
    /// Kafka jobs: the brokers' log ends, for record lag.
    pub kafka: Option<crate::sources::kafka::HighWatch>,
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
            kafka: None,
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

    /// The Prometheus text exposition of the latest batches.
    pub fn render(&self) -> String {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let snaps: Vec<ShardSnapshot> = self
            .shards
            .iter()
            .map(|s| s.lock().map(|g| g.clone()).unwrap_or_default())
            .collect();
        let mut out = String::new();
        let mut family = |name: &str, kind: &str, help: &str, rows: &[(String, f64)]| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} {kind}");
            for (labels, v) in rows {
                let _ = writeln!(out, "{name}{labels} {v}");
            }
        };
        let per_shard = |f: &dyn Fn(&ShardSnapshot) -> f64| -> Vec<(String, f64)> {
            snaps
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("{{shard=\"{i}\"}}"), f(s)))
                .collect()
        };
        let counters: [Counter; 14] = [
            (
                "sluice_events_in_total",
                "Records read and parsed by the shard.",
                &|s| s.stats.events_in as f64,
            ),
            (
                "sluice_events_processed_total",
                "Events the shard's operators processed.",
                &|s| s.stats.events_processed as f64,
            ),
            (
                "sluice_events_combined_total",
                "Events of hot keys the shard combined where it read them (phase one of hot_keys).",
                &|s| s.stats.events_combined as f64,
            ),
            (
                "sluice_partials_merged_total",
                "Partial aggregates the shard merged as the keys' owner (phase two of hot_keys).",
                &|s| s.stats.partials_merged as f64,
            ),
            (
                "sluice_busy_seconds_total",
                "Time the shard spent working; rate() is the busy fraction.",
                &|s| s.stats.busy.as_secs_f64(),
            ),
            (
                "sluice_backpressured_seconds_total",
                "Time the shard waited for ring credit.",
                &|s| s.stats.backpressured.as_secs_f64(),
            ),
            (
                "sluice_idle_seconds_total",
                "Time the shard had nothing to do.",
                &|s| s.stats.idle.as_secs_f64(),
            ),
            (
                "sluice_dead_letters_total",
                "Records sent to the dead-letter output.",
                &|s| s.stats.dead_letters as f64,
            ),
            (
                "sluice_late_events_dropped_total",
                "Events too late for every window (also sent to a side output if configured).",
                &|s| s.stats.late_dropped as f64,
            ),
            (
                "sluice_results_emitted_total",
                "Window and join results emitted.",
                &|s| s.stats.fired as f64,
            ),
            (
                "sluice_results_refired_total",
                "Window results emitted again for late events within the allowed lateness.",
                &|s| s.stats.refired as f64,
            ),
            (
                "sluice_records_filtered_total",
                "Records dropped by filters.",
                &|s| s.stats.records_filtered as f64,
            ),
            (
                "sluice_bytes_read_total",
                "Input bytes read by the shard.",
                &|s| s.stats.bytes_read as f64,
            ),
            (
                "sluice_checkpoint_pause_seconds_total",
                "Time the shard paused to hand its state to the checkpoint writer.",
                &|s| s.stats.checkpoint_time.as_secs_f64(),
            ),
        ];
        for (name, help, f) in counters {
            family(name, "counter", help, &per_shard(f));
        }
        family(
            "sluice_shard_unresponsive_seconds",
            "gauge",
            "Time since the shard last published (every 0.1 s while its loop turns): a shard blocked in a sink write shows here.",
            &per_shard(&|s| s.at.map_or(0.0, |t| t.elapsed().as_secs_f64())),
        );
        family(
            "sluice_ring_events",
            "gauge",
            "Events waiting in the shard's inbound rings.",
            &per_shard(&|s| s.ring_events as f64),
        );
        let with_wm: Vec<(usize, i64)> = snaps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.watermark_ms > i64::MIN)
            .map(|(i, s)| (i, s.watermark_ms))
            .collect();
        let wm_rows = |f: &dyn Fn(i64) -> f64| -> Vec<(String, f64)> {
            with_wm
                .iter()
                .map(|&(i, wm)| (format!("{{shard=\"{i}\"}}"), f(wm)))
                .collect()
        };
        family(
            "sluice_watermark_seconds",
            "gauge",
            "The shard's event-time watermark, seconds since the Unix epoch.",
            &wm_rows(&|wm| wm as f64 / 1e3),
        );
        family(
            "sluice_watermark_lag_seconds",
            "gauge",
            "Wall clock minus the shard's watermark: how far event time trails now.",
            &wm_rows(&|wm| (now_ms.saturating_sub(wm)) as f64 / 1e3),
        );
        // Time lag per source: now minus the newest event time read from it (how far the reading
        // trails the present; for a replay, how far it still has to go).
        let mut read: Vec<i64> = vec![i64::MIN; self.source_names.len()];
        for s in &snaps {
            for (r, t) in read.iter_mut().zip(&s.source_read_ms) {
                *r = (*r).max(*t);
            }
        }
        let lag: Vec<(String, f64)> = self
            .source_names
            .iter()
            .zip(&read)
            .filter(|(_, t)| **t > i64::MIN)
            .map(|(n, t)| {
                (
                    format!("{{source=\"{n}\"}}"),
                    now_ms.saturating_sub(*t) as f64 / 1e3,
                )
            })
            .collect();
        family(
            "sluice_source_time_lag_seconds",
            "gauge",
            "Wall clock minus the newest event time read from the source.",
            &lag,
        );
        let parts: Vec<(String, f64)> = snaps
            .first()
            .map(|s| {
                self.partition_names
                    .iter()
                    .zip(&s.partition_wm_ms)
                    .filter(|(_, w)| **w > i64::MIN)
                    .map(|(n, w)| {
                        (
                            format!("{{partition=\"{}\"}}", escape_label(n)),
                            *w as f64 / 1e3,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        family(
            "sluice_partition_watermark_seconds",
            "gauge",
            "Each input partition's own watermark, seconds since the Unix epoch.",
            &parts,
        );
        let paused: Vec<(String, f64)> = snaps
            .first()
            .map(|s| {
                self.partition_names
                    .iter()
                    .zip(&s.alignment_paused)
                    .map(|(n, p)| (format!("{{partition=\"{}\"}}", escape_label(n)), *p as f64))
                    .collect()
            })
            .unwrap_or_default();
        // Per Kafka partition: (read position, end of log), from the shards' last batches (the
        // position, and the end librdkafka's statistics gave them) and from the brokers directly.
        let mut kafka: std::collections::BTreeMap<u16, (i64, i64)> = self
            .kafka
            .as_ref()
            .map(|k| k.start.iter().map(|&(p, s)| (p, (s, -1))).collect())
            .unwrap_or_default();
        for s in &snaps {
            for &(p, next, high) in &s.kafka_lag {
                let e = kafka.entry(p).or_insert((next, high));
                *e = (e.0.max(next), e.1.max(high));
            }
        }
        if let Some(k) = &self.kafka {
            for (p, high) in k.highs() {
                if let Some(e) = kafka.get_mut(&p) {
                    e.1 = e.1.max(high);
                }
            }
        }
        let mut record_lag = Vec::new();
        let mut time_lag = Vec::new();
        let part_wm = snaps.first().map(|s| &s.partition_wm_ms[..]).unwrap_or(&[]);
        for (&p, &(next, high)) in &kafka {
            let Some(name) = self.partition_names.get(p as usize) else {
                continue;
            };
            let label = format!("{{partition=\"{}\"}}", escape_label(name));
            if high >= 0 {
                record_lag.push((label.clone(), (high - next).max(0) as f64));
            }
            if let Some(&wm) = part_wm.get(p as usize).filter(|w| **w > i64::MIN) {
                time_lag.push((label, now_ms.saturating_sub(wm) as f64 / 1e3));
            }
        }
        family(
            "sluice_kafka_partition_record_lag",
            "gauge",
            "Records in the Kafka partition not read yet: end of its log (as last reported) minus the read position.",
            &record_lag,
        );
        family(
            "sluice_kafka_partition_time_lag_seconds",
            "gauge",
            "Wall clock minus the Kafka partition's watermark.",
            &time_lag,
        );
        family(
            "sluice_partition_alignment_paused_rounds_total",
            "counter",
            "Rounds of chunks the partition sat out because its watermark ran more than max_drift ahead.",
            &paused,
        );
        let mut by_reason = Vec::new();
        let mut late_side = Vec::new();
        for (i, s) in snaps.iter().enumerate() {
            for (r, name) in DEAD_REASONS.iter().enumerate() {
                if s.stats.dead_by_reason[r] > 0 {
                    by_reason.push((
                        format!("{{shard=\"{i}\",reason=\"{name}\"}}"),
                        s.stats.dead_by_reason[r] as f64,
                    ));
                }
            }
            late_side.push((
                format!("{{shard=\"{i}\"}}"),
                s.stats.late_to_side_output as f64,
            ));
        }
        family(
            "sluice_dead_letters_by_reason_total",
            "counter",
            "Dead letters by reason class.",
            &by_reason,
        );
        family(
            "sluice_late_events_to_side_output_total",
            "counter",
            "Late events written to a late side output.",
            &late_side,
        );
        // Per shard, the p50/p90/p99/p999 a shard published, in seconds (`per_second`: counts
        // per second).
        let quantiles = |f: &dyn Fn(&ShardSnapshot) -> [u64; 4], per_second: f64| {
            let mut q = Vec::new();
            for (i, s) in snaps.iter().enumerate() {
                for (v, quantile) in f(s).iter().zip(["0.5", "0.9", "0.99", "0.999"]) {
                    q.push((
                        format!("{{shard=\"{i}\",quantile=\"{quantile}\"}}"),
                        *v as f64 / per_second,
                    ));
                }
            }
            q
        };
        family(
            "sluice_ingest_to_emit_latency_seconds",
            "summary",
            "Time from reading a chunk to emitting the results it completed.",
            &quantiles(&|s| s.latency_us, 1e6),
        );
        family(
            "sluice_event_to_emit_latency_seconds",
            "summary",
            "Wall clock at emission minus the event time the results were complete at (the watermark that fired them, within one watermark step of their window end).",
            &quantiles(&|s| s.event_latency_ms, 1e3),
        );
        let mut joins: Vec<(String, f64)> = Vec::new();
        let mut held: Vec<(String, f64)> = Vec::new();
        let mut total = ShardStats::default();
        for s in &snaps {
            total.add(&s.stats);
        }
        for (op, j) in total.joins.iter().enumerate() {
            let (Some(j), Some(name)) = (j, self.op_names.get(op)) else {
                continue;
            };
            for (side, label) in ["0", "1"].iter().enumerate() {
                held.push((
                    format!("{{operator=\"{name}\",side=\"{label}\"}}"),
                    j.buffered[side] as f64,
                ));
            }
        }
        let mut keys: Vec<(String, f64)> = Vec::new();
        for (op, name) in self.op_names.iter().enumerate() {
            let (k, b) = snaps
                .iter()
                .filter_map(|s| s.op_state.get(op))
                .fold((0u64, 0u64), |(k, b), (k2, b2)| (k + k2, b + b2));
            let label = format!("{{operator=\"{}\"}}", escape_label(name));
            keys.push((label.clone(), k as f64));
            joins.push((label, b as f64));
        }
        let mut hot: Vec<(String, f64)> = Vec::new();
        for (shard, s) in snaps.iter().enumerate() {
            for (op, key, share) in &s.stats.hot_keys {
                let name = self.op_names.get(*op).map_or("", String::as_str);
                hot.push((
                    format!(
                        "{{operator=\"{}\",shard=\"{shard}\",key=\"{}\"}}",
                        escape_label(name),
                        escape_label(key)
                    ),
                    *share,
                ));
            }
        }
        family(
            "sluice_hot_key_share",
            "gauge",
            "Keys hot_keys = auto combines on a shard now, with their share of its recent events.",
            &hot,
        );
        let loads: Vec<crate::metrics::ShardStats> =
            snaps.iter().map(|s| s.stats.clone()).collect();
        family(
            "sluice_load_max_over_avg",
            "gauge",
            "The busiest shard's aggregation work (events processed + combined + partials merged) over the mean, since the start.",
            &[(String::new(), crate::metrics::load_balance(&loads))],
        );
        family(
            "sluice_join_rows",
            "gauge",
            "Rows a join or dedupe holds, per side (at the last batch).",
            &held,
        );
        family(
            "sluice_operator_state_bytes",
            "gauge",
            "Approximate bytes of state an operator holds, over all shards.",
            &joins,
        );
        family(
            "sluice_operator_keys",
            "gauge",
            "Keys (window rows per key and window; rows for joins and dedupe) an operator holds, over all shards.",
            &keys,
        );
        let ck = self.checkpoint.lock().ok().and_then(|c| c.clone());
        if let Some(c) = ck {
            let age = c
                .last_completed_at
                .map_or(-1.0, |t| t.elapsed().as_secs_f64());
            let rows = |v: f64| vec![(String::new(), v)];
            family(
                "sluice_checkpoints_completed_total",
                "counter",
                "Checkpoints completed.",
                &rows(c.completed as f64),
            );
            family(
                "sluice_checkpoints_failed_total",
                "counter",
                "Checkpoints that failed.",
                &rows(c.failed as f64),
            );
            family(
                "sluice_checkpoint_last_id",
                "gauge",
                "Id of the newest completed checkpoint.",
                &rows(c.last_completed_id as f64),
            );
            family(
                "sluice_checkpoint_age_seconds",
                "gauge",
                "Seconds since the newest checkpoint completed (-1: none yet).",
                &rows(age),
            );
            family(
                "sluice_checkpoint_duration_seconds",
                "gauge",
                "Barrier to commit of the newest checkpoint.",
                &rows(c.last_duration_ms / 1e3),
            );
            family(
                "sluice_checkpoint_alignment_seconds",
                "gauge",
                "Barrier to the last shard meeting it, newest checkpoint.",
                &rows(c.last_alignment_ms / 1e3),
            );
            family(
                "sluice_checkpoint_size_bytes",
                "gauge",
                "Snapshot bytes of the newest checkpoint.",
                &rows(c.last_size_bytes as f64),
            );
        }
        family(
            "sluice_ready",
            "gauge",
            "1 once restored and running, 0 before and while draining.",
            &[(String::new(), f64::from(u8::from(self.is_ready())))],
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks the text the way `promtool check metrics` would for what we emit: every sample line
    /// is `name{labels} value` with a finite number, its family has HELP and TYPE lines before it,
    /// counters end in `_total`, and no family is declared twice.
    pub fn check_exposition(text: &str) -> Result<usize, String> {
        let mut types: std::collections::HashMap<String, String> = Default::default();
        let mut samples = 0;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').ok_or(format!("bad TYPE: {line}"))?;
                if types.insert(name.to_string(), kind.to_string()).is_some() {
                    return Err(format!("{name} declared twice"));
                }
                if kind == "counter" && !name.ends_with("_total") {
                    return Err(format!("counter {name} does not end in _total"));
                }
                continue;
            }
            if line.starts_with("# HELP ") || line.is_empty() {
                continue;
            }
            let (series, value) = line.rsplit_once(' ').ok_or(format!("bad sample: {line}"))?;
            let name = series.split('{').next().unwrap_or_default();
            if !types.contains_key(name) {
                return Err(format!("{name} has no TYPE before its samples"));
            }
            let v: f64 = value.parse().map_err(|_| format!("bad value: {line}"))?;
            if !v.is_finite() {
                return Err(format!("not finite: {line}"));
            }
            if series.contains('{') && !series.ends_with('}') {
                return Err(format!("bad labels: {line}"));
            }
            samples += 1;
        }
        Ok(samples)
    }

    #[test]
    fn render_is_valid_exposition_and_shows_what_the_shards_published() {
        let mut live = Live::new(2, vec!["w".into()]);
        live.source_names = vec!["clicks".into()];
        live.partition_names = vec!["data/a.ndjson".into()];
        let mut stats = ShardStats {
            events_in: 42,
            events_processed: 10,
            events_combined: 30,
            partials_merged: 2,
            hot_keys: vec![(0, "\"ad-0\"".into(), 0.8)],
            ..ShardStats::default()
        };
        stats.dead_by_reason[dead_reason_class("invalid JSON: expected a value")] = 2;
        stats.busy = Duration::from_millis(1500);
        live.publish(
            1,
            ShardSnapshot {
                stats,
                watermark_ms: 1_700_000_000_000,
                ring_events: 7,
                latency_us: [100, 200, 300, 400],
                event_latency_ms: [1000, 2000, 3000, 4000],
                op_state: vec![(7, 4096)],
                source_read_ms: vec![1_700_000_000_000],
                partition_wm_ms: Vec::new(),
                alignment_paused: Vec::new(),
                kafka_lag: vec![(0, 90, 100)],
                at: Some(std::time::Instant::now()),
            },
        );
        live.publish(
            0,
            ShardSnapshot {
                alignment_paused: vec![5],
                ..ShardSnapshot::default()
            },
        );
        *live.checkpoint.lock().unwrap() = Some(CheckpointMetrics {
            completed: 3,
            ..CheckpointMetrics::default()
        });
        let text = live.render();
        let n = check_exposition(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(n > 30, "{text}");
        assert!(
            text.contains(
                "sluice_hot_key_share{operator=\"w\",shard=\"1\",key=\"\\\"ad-0\\\"\"} 0.8"
            ),
            "{text}"
        );
        assert!(
            text.contains("sluice_events_combined_total{shard=\"1\"} 30"),
            "{text}"
        );
        // Shard 1 did all 42 units of work, shard 0 none: twice the mean.
        assert!(text.contains("sluice_load_max_over_avg 2\n"), "{text}");
        assert!(
            text.contains("sluice_events_in_total{shard=\"1\"} 42\n"),
            "{text}"
        );
        assert!(
            text.contains("sluice_busy_seconds_total{shard=\"1\"} 1.5\n"),
            "{text}"
        );
        assert!(text.contains("sluice_ring_events{shard=\"1\"} 7\n"));
        assert!(text.contains("sluice_watermark_seconds{shard=\"1\"} 1700000000\n"));
        assert!(
            !text.contains("sluice_watermark_seconds{shard=\"0\"}"),
            "no watermark yet"
        );
        assert!(text.contains(
            "sluice_ingest_to_emit_latency_seconds{shard=\"1\",quantile=\"0.99\"} 0.0003\n"
        ));
        assert!(text.contains("sluice_checkpoints_completed_total 3\n"));
        assert!(
            text.contains(
                "sluice_partition_alignment_paused_rounds_total{partition=\"data/a.ndjson\"} 5\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("sluice_kafka_partition_record_lag{partition=\"data/a.ndjson\"} 10\n"),
            "{text}"
        );
        assert!(text
            .contains("sluice_event_to_emit_latency_seconds{shard=\"1\",quantile=\"0.99\"} 3\n"));
        assert!(
            text.contains("sluice_operator_keys{operator=\"w\"} 7\n"),
            "{text}"
        );
        assert!(text.contains("sluice_operator_state_bytes{operator=\"w\"} 4096\n"));
        assert!(
            text.contains(
                "sluice_dead_letters_by_reason_total{shard=\"1\",reason=\"invalid_json\"} 2\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("sluice_source_time_lag_seconds{source=\"clicks\"} "),
            "{text}"
        );
        assert!(
            !text.contains("sluice_partition_watermark_seconds{"),
            "shard 0 published none"
        );
        assert!(text.contains("sluice_ready 0\n"));
        live.ready.store(true, Ordering::Release);
        assert!(live.render().contains("sluice_ready 1\n"));
        live.draining.store(true, Ordering::Release);
        assert!(!live.is_ready(), "draining is not ready");
    }

    #[test]
    fn dead_letter_reasons_fall_into_their_classes() {
        let c = |r: &str| DEAD_REASONS[dead_reason_class(r)];
        assert_eq!(c("invalid JSON: unexpected end"), "invalid_json");
        assert_eq!(c("missing event time field `ts`"), "missing_time");
        assert_eq!(
            c("field `ts` is 7200 s ahead of the wall clock (max_future 3600 s): x"),
            "clock_skew"
        );
        assert_eq!(
            c("field `ts` is before 1970 (-5 ms); set ..."),
            "negative_time"
        );
        assert_eq!(
            c("field `bid` is not a number (aggregates over it need one)"),
            "not_a_number"
        );
        assert_eq!(c("line is 9000 bytes; max_line_bytes is 100"), "too_long");
        assert_eq!(
            c("select `p`, field `x`: `a * b` at column 1: ..."),
            "expression"
        );
        assert_eq!(c("field `ts` must be a number (event time)"), "bad_time");
        assert_eq!(c("something new"), "other");
    }

    #[test]
    fn the_checker_catches_what_promtool_would() {
        assert!(check_exposition("# TYPE a_total counter\na_total 1\n").is_ok());
        assert!(check_exposition("a_total 1\n").is_err(), "no TYPE");
        assert!(
            check_exposition("# TYPE a counter\na 1\n").is_err(),
            "counter without _total"
        );
        assert!(
            check_exposition("# TYPE a gauge\na x\n").is_err(),
            "not a number"
        );
    }
}
