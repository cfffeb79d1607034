//! Job-wide families, each one unlabelled row: the checkpoint writer's figures (none at all until
//! the writer has published some, as in a job without `[checkpoint]`) and readiness.

use super::render::{family, single, Kind, Scrape};

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
