//! Per-shard families: the counters every shard keeps, its liveness and ring depth, its
//! watermark, its dead letters and late events, its latency quantiles, and how evenly the shards
//! share the work. Every row is labelled `shard` (plus `reason` or `quantile` where a shard has
//! several); a shard with no watermark yet has no watermark rows.

use super::render::{family, shard_label, single, Kind, Rows, Scrape};
use super::{ShardSnapshot, DEAD_REASONS};

/// A per-shard counter: name, help, and how to read it from a snapshot.
type Counter = (&'static str, &'static str, fn(&ShardSnapshot) -> f64);

const COUNTERS: [Counter; 14] = [
    (
        "sluice_events_in_total",
        "Records read and parsed by the shard.",
        |s| s.stats.events_in as f64,
    ),
    (
        "sluice_events_processed_total",
        "Events the shard's operators processed.",
        |s| s.stats.events_processed as f64,
    ),
    (
        "sluice_events_combined_total",
        "Events of hot keys the shard combined where it read them (phase one of hot_keys).",
        |s| s.stats.events_combined as f64,
    ),
    (
        "sluice_partials_merged_total",
        "Partial aggregates the shard merged as the keys' owner (phase two of hot_keys).",
        |s| s.stats.partials_merged as f64,
    ),
    (
        "sluice_busy_seconds_total",
        "Time the shard spent working; rate() is the busy fraction.",
        |s| s.stats.busy.as_secs_f64(),
    ),
    (
        "sluice_backpressured_seconds_total",
        "Time the shard waited for ring credit.",
        |s| s.stats.backpressured.as_secs_f64(),
    ),
    (
        "sluice_idle_seconds_total",
        "Time the shard had nothing to do.",
        |s| s.stats.idle.as_secs_f64(),
    ),
    (
        "sluice_dead_letters_total",
        "Records sent to the dead-letter output.",
        |s| s.stats.dead_letters as f64,
    ),
    (
        "sluice_late_events_dropped_total",
        "Events too late for every window (also sent to a side output if configured).",
        |s| s.stats.late_dropped as f64,
    ),
    (
        "sluice_results_emitted_total",
        "Window and join results emitted.",
        |s| s.stats.fired as f64,
    ),
    (
        "sluice_results_refired_total",
        "Window results emitted again for late events within the allowed lateness.",
        |s| s.stats.refired as f64,
    ),
    (
        "sluice_records_filtered_total",
        "Records dropped by filters.",
        |s| s.stats.records_filtered as f64,
    ),
    (
        "sluice_bytes_read_total",
        "Input bytes read by the shard.",
        |s| s.stats.bytes_read as f64,
    ),
    (
        "sluice_checkpoint_pause_seconds_total",
        "Time the shard paused to hand its state to the checkpoint writer.",
        |s| s.stats.checkpoint_time.as_secs_f64(),
    ),
];

impl Scrape<'_> {
    pub(super) fn render_shard_counters(&self, out: &mut String) {
        for (name, help, f) in COUNTERS {
            family(out, name, Kind::Counter, help, &self.per_shard(f));
        }
    }

    /// How long since each shard published, and how many events wait for it.
    pub(super) fn render_shard_gauges(&self, out: &mut String) {
        family(
            out,
            "sluice_shard_unresponsive_seconds",
            Kind::Gauge,
            "Time since the shard last published (every 0.1 s while its loop turns): a shard blocked in a sink write shows here.",
            &self.per_shard(|s| s.at.map_or(0.0, |t| t.elapsed().as_secs_f64())),
        );
        family(
            out,
            "sluice_ring_events",
            Kind::Gauge,
            "Events waiting in the shard's inbound rings.",
            &self.per_shard(|s| s.ring_events as f64),
        );
    }

    /// Each shard's watermark and how far it trails the wall clock.
    pub(super) fn render_watermarks(&self, out: &mut String) {
        let rows = |f: &dyn Fn(i64) -> f64| -> Rows {
            self.snaps
                .iter()
                .enumerate()
                .filter(|(_, s)| s.watermark_ms > i64::MIN)
                .map(|(i, s)| (shard_label(i), f(s.watermark_ms)))
                .collect()
        };
        family(
            out,
            "sluice_watermark_seconds",
            Kind::Gauge,
            "The shard's event-time watermark, seconds since the Unix epoch.",
            &rows(&|wm| wm as f64 / 1e3),
        );
        family(
            out,
            "sluice_watermark_lag_seconds",
            Kind::Gauge,
            "Wall clock minus the shard's watermark: how far event time trails now.",
            &rows(&|wm| self.secs_since(wm)),
        );
    }

    /// Only the reasons a shard has seen: nine zero rows per shard would drown the few that matter.
    pub(super) fn render_dead_letters_by_reason(&self, out: &mut String) {
        let mut rows = Vec::new();
        for (i, s) in self.snaps.iter().enumerate() {
            for (n, reason) in s.stats.dead_by_reason.iter().zip(DEAD_REASONS) {
                if *n > 0 {
                    rows.push((format!("{{shard=\"{i}\",reason=\"{reason}\"}}"), *n as f64));
                }
            }
        }
        family(
            out,
            "sluice_dead_letters_by_reason_total",
            Kind::Counter,
            "Dead letters by reason class.",
            &rows,
        );
    }

    pub(super) fn render_late_to_side_output(&self, out: &mut String) {
        family(
            out,
            "sluice_late_events_to_side_output_total",
            Kind::Counter,
            "Late events written to a late side output.",
            &self.per_shard(|s| s.stats.late_to_side_output as f64),
        );
    }

    pub(super) fn render_latencies(&self, out: &mut String) {
        family(
            out,
            "sluice_ingest_to_emit_latency_seconds",
            Kind::Summary,
            "Time from reading a chunk to emitting the results it completed.",
            &self.quantile_rows(|s| s.latency_us, 1e6),
        );
        family(
            out,
            "sluice_event_to_emit_latency_seconds",
            Kind::Summary,
            "Wall clock at emission minus the event time the results were complete at (the watermark that fired them, within one watermark step of their window end).",
            &self.quantile_rows(|s| s.event_latency_ms, 1e3),
        );
    }

    pub(super) fn render_load(&self, out: &mut String) {
        let loads: Vec<crate::metrics::ShardStats> =
            self.snaps.iter().map(|s| s.stats.clone()).collect();
        family(
            out,
            "sluice_load_max_over_avg",
            Kind::Gauge,
            "The busiest shard's aggregation work (events processed + combined + partials merged) over the mean, since the start.",
            &single(crate::metrics::load_balance(&loads)),
        );
    }
}
