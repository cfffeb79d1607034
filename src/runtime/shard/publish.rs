//! A shard's part in the live metrics: every `PUBLISH_EVERY` it copies its counters, watermark,
//! ring fill and latency quantiles into the shared `Live` in one batch (never per event), and
//! shard 0 marks the job as draining once a stop was asked for; and, live or not, it samples its
//! operators' state sizes for their peaks in the run summary.

use super::Shard;
use crate::metrics::live::{ShardSnapshot, PUBLISH_EVERY};
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Shard {
    /// Samples each operator's state size into its peak, every `STATE_SAMPLE_EVERY`.
    pub(super) fn maybe_sample_state(&mut self, now: Instant) {
        if now.duration_since(self.last_state_sample) < crate::metrics::STATE_SAMPLE_EVERY {
            return;
        }
        self.last_state_sample = now;
        self.state_peaks.resize(self.ops.len(), 0);
        for (op, peak) in self.ops.iter().zip(&mut self.state_peaks) {
            let mut r = crate::metrics::OperatorReport::default();
            op.report(&mut r);
            *peak = (*peak).max(r.state_bytes);
        }
    }

    /// Publishes if the last batch is `PUBLISH_EVERY` old (`now`: the loop's clock reading).
    pub(super) fn maybe_publish(&mut self, now: Instant) {
        // The clock first: cloning the shared Arc every loop would bounce its count between cores.
        if self.setup.live.is_none() || now.duration_since(self.last_publish) < PUBLISH_EVERY {
            return;
        }
        let Some(live) = self.setup.live.clone() else {
            return;
        };
        self.last_publish = now;
        if self.id == 0 && self.setup.stop.requested.load(Ordering::Relaxed) {
            live.draining.store(true, Ordering::Release);
        }
        let mut stats = self.stats.clone();
        stats.late_to_side_output += self.emitter.late_to_side;
        stats.records_filtered += self.emitter.results_filtered;
        if let Some(h) = &self.hot {
            stats.hot_keys = h.hot_keys();
        }
        stats.operators.clear();
        for op in &self.ops {
            let mut r = crate::metrics::OperatorReport::default();
            op.report(&mut r);
            stats.fired += r.fired;
            stats.refired += r.refired;
            stats.late_dropped += r.late_dropped;
            stats.operators.push(r);
        }
        let ring_events = self
            .inbound
            .iter_mut()
            .chain(self.xin.iter_mut().flatten())
            .flatten()
            .map(|c| c.available() as u64)
            .sum();
        let h = &self.hist;
        let latency_us = [0.5, 0.9, 0.99, 0.999].map(|q| h.value_at_quantile(q));
        let e = &self.event_hist;
        let event_latency_ms = [0.5, 0.9, 0.99, 0.999].map(|q| e.value_at_quantile(q));
        let op_state = stats
            .operators
            .iter()
            .map(|r| (r.keys, r.state_bytes))
            .collect();
        live.publish(
            self.id,
            ShardSnapshot {
                stats,
                // The least watermark of any node (WM_MIN, i64::MIN: none yet).
                watermark_ms: self
                    .node_wm
                    .iter()
                    .copied()
                    .min()
                    .unwrap_or(self.tracker.current()),
                ring_events,
                latency_us,
                event_latency_ms,
                op_state,
                source_read_ms: self.source_read.clone(),
                at: Some(now),
                partition_wm_ms: if self.id == 0 {
                    self.tracker.partition_watermarks()
                } else {
                    Vec::new()
                },
                log_lag: self
                    .readers
                    .iter()
                    .flatten()
                    .flat_map(|r| r.lag())
                    .collect(),
                alignment_paused: match (&self.setup.log_align, self.id) {
                    (Some(a), 0) => a.paused(),
                    (None, 0) => self.setup.schedule.paused(),
                    _ => Vec::new(),
                },
            },
        );
    }
}
