//! The scrape and the text format: [`Live::render`] copies every shard's latest batch once and
//! writes the families in a fixed order, each through [`family`], so every family has its HELP and
//! TYPE lines before its samples and every sample is `name{labels} value`.
//!
//! The order is part of the output (the golden tests compare the text byte for byte); a new family
//! goes where its neighbours are, not at the end by default.

use super::{Live, ShardSnapshot};
use std::fmt::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// One family's samples: (`{labels}`, or empty for none; value).
pub(super) type Rows = Vec<(String, f64)>;

/// A family's Prometheus type, the word on its TYPE line.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Counter,
    Gauge,
    Summary,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Summary => "summary",
        }
    }
}

/// What one scrape renders from: the shards' batches copied out, so no shard waits on a lock while
/// the text is formatted, and the wall clock every lag is measured against.
pub(super) struct Scrape<'a> {
    pub(super) live: &'a Live,
    pub(super) snaps: Vec<ShardSnapshot>,
    pub(super) now_ms: i64,
}

impl Live {
    /// The Prometheus text exposition of the latest batches.
    pub fn render(&self) -> String {
        let scrape = Scrape::take(self);
        let mut out = String::new();
        scrape.render_shard_counters(&mut out);
        scrape.render_shard_gauges(&mut out);
        scrape.render_watermarks(&mut out);
        scrape.render_source_lag(&mut out);
        scrape.render_partition_watermarks(&mut out);
        scrape.render_log_lag(&mut out);
        scrape.render_alignment_paused(&mut out);
        scrape.render_dead_letters_by_reason(&mut out);
        scrape.render_late_to_side_output(&mut out);
        scrape.render_latencies(&mut out);
        scrape.render_hot_keys(&mut out);
        scrape.render_load(&mut out);
        scrape.render_join_rows(&mut out);
        scrape.render_operator_state(&mut out);
        scrape.render_checkpoint(&mut out);
        scrape.render_sinks(&mut out);
        scrape.render_ready(&mut out);
        out
    }
}

impl<'a> Scrape<'a> {
    fn take(live: &'a Live) -> Scrape<'a> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        // A poisoned lock (its shard panicked while publishing) reads as a shard that never did.
        let snaps = live
            .shards
            .iter()
            .map(|s| s.lock().map(|g| g.clone()).unwrap_or_default())
            .collect();
        Scrape {
            live,
            snaps,
            now_ms,
        }
    }

    /// Seconds from `t_ms` (epoch ms) to this scrape's wall clock.
    pub(super) fn secs_since(&self, t_ms: i64) -> f64 {
        self.now_ms.saturating_sub(t_ms) as f64 / 1e3
    }

    /// A row per shard, labelled with its index, valued by `f`.
    pub(super) fn per_shard(&self, f: impl Fn(&ShardSnapshot) -> f64) -> Rows {
        self.snaps
            .iter()
            .enumerate()
            .map(|(i, s)| (shard_label(i), f(s)))
            .collect()
    }

    /// Per shard, the p50/p90/p99/p999 it published, divided by `per_second` (counts per second)
    /// to give seconds.
    pub(super) fn quantile_rows(
        &self,
        f: impl Fn(&ShardSnapshot) -> [u64; 4],
        per_second: f64,
    ) -> Rows {
        let mut rows = Vec::new();
        for (i, s) in self.snaps.iter().enumerate() {
            for (v, quantile) in f(s).iter().zip(["0.5", "0.9", "0.99", "0.999"]) {
                rows.push((
                    format!("{{shard=\"{i}\",quantile=\"{quantile}\"}}"),
                    *v as f64 / per_second,
                ));
            }
        }
        rows
    }
}

/// Writes one family: its HELP and TYPE lines (even with no rows), then a sample per row.
pub(super) fn family(out: &mut String, name: &str, kind: Kind, help: &str, rows: &[(String, f64)]) {
    // Writing to a String cannot fail.
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {}", kind.as_str());
    for (labels, v) in rows {
        let _ = writeln!(out, "{name}{labels} {v}");
    }
}

/// The one row of an unlabelled family.
pub(super) fn single(v: f64) -> [(String, f64); 1] {
    [(String::new(), v)]
}

pub(super) fn shard_label(shard: usize) -> String {
    format!("{{shard=\"{shard}\"}}")
}

pub(super) fn partition_label(name: &str) -> String {
    format!("{{partition=\"{}\"}}", escape_label(name))
}

pub(super) fn operator_label(name: &str) -> String {
    format!("{{operator=\"{}\"}}", escape_label(name))
}

/// A label value with `\` and `"` escaped, as the exposition format requires.
pub(super) fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"")
}
