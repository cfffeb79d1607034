//! Job-wide families, each one unlabelled row: the checkpoint writer's figures (none at all until
//! the writer has published some, as in a job without `[checkpoint]`), readiness, and the table
//! sinks' figures, one row per sink.

use super::render::{escape_label, family, single, Kind, Rows, Scrape};
use crate::metrics::SinkCounters;
use std::sync::atomic::Ordering;

impl Scrape<'_> {
    pub(super) fn render_checkpoint(&self, out: &mut String) {
        // A poisoned lock (the writer panicked) reads as no checkpoint figures.
        let Some(c) = self.live.checkpoint.lock().ok().and_then(|c| c.clone()) else {
            return;
        };
        let age = c
            .last_completed_at
            .map_or(-1.0, |t| t.elapsed().as_secs_f64());
        let rows: [(&str, Kind, &str, f64); 7] = [
            (
                "sluice_checkpoints_completed_total",
                Kind::Counter,
                "Checkpoints completed.",
                c.completed as f64,
            ),
            (
                "sluice_checkpoints_failed_total",
                Kind::Counter,
                "Checkpoints that failed.",
                c.failed as f64,
            ),
            (
                "sluice_checkpoint_last_id",
                Kind::Gauge,
                "Id of the newest completed checkpoint.",
                c.last_completed_id as f64,
            ),
            (
                "sluice_checkpoint_age_seconds",
                Kind::Gauge,
                "Seconds since the newest checkpoint completed (-1: none yet).",
                age,
            ),
            (
                "sluice_checkpoint_duration_seconds",
                Kind::Gauge,
                "Barrier to commit of the newest checkpoint.",
                c.last_duration_ms / 1e3,
            ),
            (
                "sluice_checkpoint_alignment_seconds",
                Kind::Gauge,
                "Barrier to the last shard meeting it, newest checkpoint.",
                c.last_alignment_ms / 1e3,
            ),
            (
                "sluice_checkpoint_size_bytes",
                Kind::Gauge,
                "Snapshot bytes of the newest checkpoint.",
                c.last_size_bytes as f64,
            ),
        ];
        for (name, kind, help, v) in rows {
            family(out, name, kind, help, &single(v));
        }
    }

    pub(super) fn render_ready(&self, out: &mut String) {
        family(
            out,
            "sluice_ready",
            Kind::Gauge,
            "1 once restored and running, 0 before and while draining.",
            &single(f64::from(u8::from(self.live.is_ready()))),
        );
    }
}

impl Scrape<'_> {
    /// Table sinks (PostgreSQL): nothing for a job without one.
    pub(super) fn render_sinks(&self, out: &mut String) {
        let sinks = &self.live.sinks;
        if sinks.is_empty() {
            return;
        }
        type Get = fn(&SinkCounters) -> f64;
        let families: [(&str, Kind, &str, Get); 7] = [
            (
                "sluice_sink_rows_written_total",
                Kind::Counter,
                "Rows a table sink has written (upserted or inserted).",
                |c| c.rows_written.load(Ordering::Relaxed) as f64,
            ),
            (
                "sluice_sink_batches_total",
                Kind::Counter,
                "Statements a table sink has completed.",
                |c| c.batches.load(Ordering::Relaxed) as f64,
            ),
            (
                "sluice_sink_errors_total",
                Kind::Counter,
                "Writes that failed (each retried, or fatal).",
                |c| c.errors.load(Ordering::Relaxed) as f64,
            ),
            (
                "sluice_sink_retries_total",
                Kind::Counter,
                "Reconnects after a failed write.",
                |c| c.retries.load(Ordering::Relaxed) as f64,
            ),
            (
                "sluice_sink_rows_rejected_total",
                Kind::Counter,
                "Rows the database refused, sent to the dead letters.",
                |c| c.rejected.load(Ordering::Relaxed) as f64,
            ),
            (
                "sluice_sink_batch_seconds_sum",
                Kind::Counter,
                "Seconds spent in completed statements (divide by batches for the mean).",
                |c| c.batch_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            ),
            (
                "sluice_sink_batch_seconds_max",
                Kind::Gauge,
                "The slowest completed statement so far.",
                |c| c.batch_nanos_max.load(Ordering::Relaxed) as f64 / 1e9,
            ),
        ];
        for (name, kind, help, get) in families {
            let rows: Rows = sinks
                .iter()
                .map(|c| (format!("{{sink=\"{}\"}}", escape_label(&c.name)), get(c)))
                .collect();
            family(out, name, kind, help, &rows);
        }
    }
}
