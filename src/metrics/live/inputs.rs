//! Input families: how far each source's reading trails the wall clock, each partition's own
//! watermark and alignment pauses, and Kafka record and time lag per partition. Partition figures
//! come from shard 0 alone, the one shard that publishes them; a partition with no name (not in
//! `partition_names`) or no watermark yet has no row.

use super::render::{family, partition_label, Kind, Rows, Scrape};
use std::collections::BTreeMap;

impl Scrape<'_> {
    /// Per source: now minus the newest event time any shard read from it (how far the reading
    /// trails the present; for a replay, how far it still has to go).
    pub(super) fn render_source_lag(&self, out: &mut String) {
        let names = &self.live.source_names;
        let mut read: Vec<i64> = vec![i64::MIN; names.len()];
        for s in &self.snaps {
            for (r, t) in read.iter_mut().zip(&s.source_read_ms) {
                *r = (*r).max(*t);
            }
        }
        // Known gap: the source name is not escaped here (it is for partitions and operators),
        // so a name with `"` or `\` breaks the line. Left as is: this split changes no output.
        let rows: Rows = names
            .iter()
            .zip(&read)
            .filter(|(_, t)| **t > i64::MIN)
            .map(|(n, t)| (format!("{{source=\"{n}\"}}"), self.secs_since(*t)))
            .collect();
        family(
            out,
            "sluice_source_time_lag_seconds",
            Kind::Gauge,
            "Wall clock minus the newest event time read from the source.",
            &rows,
        );
    }

    /// Shard 0's per-partition watermarks (empty before it has published).
    fn partition_wm(&self) -> &[i64] {
        self.snaps.first().map_or(&[], |s| &s.partition_wm_ms[..])
    }

    pub(super) fn render_partition_watermarks(&self, out: &mut String) {
        let rows: Rows = self
            .live
            .partition_names
            .iter()
            .zip(self.partition_wm())
            .filter(|(_, w)| **w > i64::MIN)
            .map(|(n, w)| (partition_label(n), *w as f64 / 1e3))
            .collect();
        family(
            out,
            "sluice_partition_watermark_seconds",
            Kind::Gauge,
            "Each input partition's own watermark, seconds since the Unix epoch.",
            &rows,
        );
    }

    /// Per partition of a log source (Kafka): (read position, end of log; -1 unknown), the larger of what the shards
    /// last published (their position, and the end librdkafka's statistics gave them) and what
    /// the brokers answer the endpoint directly, so the lag still shows while every shard is
    /// blocked. Before any shard has published, the position is where the partition started.
    fn log_positions(&self) -> BTreeMap<u16, (i64, i64)> {
        let mut logs: BTreeMap<u16, (i64, i64)> = self
            .live
            .log_ends
            .iter()
            .flat_map(|k| k.starts())
            .map(|(p, s)| (p, (s, -1)))
            .collect();
        for s in &self.snaps {
            for &(p, next, high) in &s.log_lag {
                let e = logs.entry(p).or_insert((next, high));
                *e = (e.0.max(next), e.1.max(high));
            }
        }
        for k in &self.live.log_ends {
            for (p, high) in k.ends() {
                if let Some(e) = logs.get_mut(&p) {
                    e.1 = e.1.max(high);
                }
            }
        }
        logs
    }

    pub(super) fn render_log_lag(&self, out: &mut String) {
        let mut record_lag = Vec::new();
        let mut time_lag = Vec::new();
        let part_wm = self.partition_wm();
        for (&p, &(next, high)) in &self.log_positions() {
            let Some(name) = self.live.partition_names.get(p as usize) else {
                continue;
            };
            let label = partition_label(name);
            if high >= 0 {
                record_lag.push((label.clone(), (high - next).max(0) as f64));
            }
            if let Some(&wm) = part_wm.get(p as usize).filter(|w| **w > i64::MIN) {
                time_lag.push((label, self.secs_since(wm)));
            }
        }
        family(
            out,
            "sluice_kafka_partition_record_lag",
            Kind::Gauge,
            "Records in the Kafka partition not read yet: end of its log (as last reported) minus the read position.",
            &record_lag,
        );
        family(
            out,
            "sluice_kafka_partition_time_lag_seconds",
            Kind::Gauge,
            "Wall clock minus the Kafka partition's watermark.",
            &time_lag,
        );
    }

    pub(super) fn render_alignment_paused(&self, out: &mut String) {
        let rows: Rows = self
            .snaps
            .first()
            .map(|s| {
                self.live
                    .partition_names
                    .iter()
                    .zip(&s.alignment_paused)
                    .map(|(n, p)| (partition_label(n), *p as f64))
                    .collect()
            })
            .unwrap_or_default();
        family(
            out,
            "sluice_partition_alignment_paused_rounds_total",
            Kind::Counter,
            "Rounds of chunks the partition sat out because its watermark ran more than max_drift ahead.",
            &rows,
        );
    }
}
