//! The chunk order of a run, from its partitions: fixed by their sizes; aligned on event time when
//! a range source sets `watermark.max_drift` (`aligned`); or, when the job reads logs, padded
//! rounds in which each log partition's chunks fall to the shard that owns it, aligned partitions
//! sitting rounds out (`log_align`).

use std::sync::Arc;

use super::aligned;
use super::schedule::{ChunkCount, ChunkOrder, Schedule};
use crate::connectors::source::{Extent, Partition};
use crate::plan::Plan;

/// What a run's chunks are: their counts, their order, whether the job reads logs, and the
/// alignment of its log partitions.
type Chunks = (
    Vec<ChunkCount>,
    ChunkOrder,
    bool,
    Option<Arc<super::log_align::LogAlign>>,
);

/// The chunk order of a run: padded rounds for logs (aligned log partitions sitting rounds out),
/// aligned on event time when a range source sets `max_drift`, else fixed by sizes.
pub(super) fn schedule(plan: &Plan, parts: &[Partition], n: usize) -> Chunks {
    let log_job = parts.iter().any(Partition::is_log);
    let mut chunk_counts: Vec<_> = parts
        .iter()
        .map(|p| p.chunks(plan.runtime.chunk_bytes))
        .collect();
    if log_job {
        // Every log partition gets a chunk in every round (bounded ones run empty once done),
        // so the order stays a plain function of the sequence number.
        let common = parts
            .iter()
            .zip(&chunk_counts)
            .filter(|(p, _)| p.is_log())
            .try_fold(0u64, |m, (_, c)| c.map(|c| m.max(c)));
        for (p, c) in parts.iter().zip(chunk_counts.iter_mut()) {
            if p.is_log() {
                *c = common;
            }
        }
    }
    let aligned = parts
        .iter()
        .any(|p| plan.sources[p.source].watermark.max_drift_ms.is_some());
    let order = if log_job {
        // A log partition is read by the shard whose consumer owns it (`i % shards`).
        let pinned: Vec<Option<usize>> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| p.is_log().then_some(i % n))
            .collect();
        // Aligned: partitions of sources with `max_drift`, except files with no chunk at all
        // (nothing to read, nothing to report).
        let aligned: Vec<bool> = parts
            .iter()
            .zip(&chunk_counts)
            .map(|(p, c)| plan.sources[p.source].watermark.max_drift_ms.is_some() && *c != Some(0))
            .collect();
        let align = super::log_align::LogAlign::new(
            &parts
                .iter()
                .zip(&chunk_counts)
                .zip(&aligned)
                .map(|((p, c), &on)| {
                    let drift = plan.sources[p.source].watermark.max_drift_ms?;
                    let chunks = if p.is_log() { None } else { *c };
                    on.then_some((drift, p.max_out_of_orderness_ms, chunks))
                })
                .collect::<Vec<_>>(),
        )
        .map(Arc::new);
        let Some(align) = align else {
            let order = ChunkOrder::Mixed(super::schedule::Mixed::new(&chunk_counts, &pinned, n));
            return (chunk_counts, order, log_job, None);
        };
        // The job is bounded when every partition is; aligned partitions then take as many
        // rounds as sitting out makes them need, the others end by their counts.
        let bounded = parts
            .iter()
            .zip(&chunk_counts)
            .all(|(p, c)| match p.extent {
                Extent::Log { end, .. } => end.is_some(),
                Extent::Ranges { .. } => c.is_some(),
            });
        for (c, &on) in chunk_counts.iter_mut().zip(&aligned) {
            if on {
                *c = None;
            }
        }
        let others = chunk_counts
            .iter()
            .zip(&aligned)
            .filter(|(_, &on)| !on)
            .try_fold(0u64, |m, (c, _)| c.map(|c| m.max(c)));
        let order = super::schedule::Mixed::new(&chunk_counts, &pinned, n)
            .aligned(align.clone(), others.filter(|_| bounded));
        return (chunk_counts, ChunkOrder::Mixed(order), log_job, Some(align));
    } else if aligned {
        ChunkOrder::Aligned(aligned::AlignedOrder::new(
            parts
                .iter()
                .zip(&chunk_counts)
                .map(|(p, &chunks)| aligned::AlignedPart {
                    chunks,
                    max_out_of_orderness_ms: p.max_out_of_orderness_ms,
                    max_drift_ms: plan.sources[p.source].watermark.max_drift_ms,
                })
                .collect(),
            n,
        ))
    } else {
        ChunkOrder::Fixed(Schedule::new(&chunk_counts))
    };
    (chunk_counts, order, log_job, None)
}
