//! What every shard shares read-only for a run: partitions, the chunk schedule, the graph's
//! topology (who reads what, which inputs each node's watermark follows), and the stop
//! coordinator. Built once before any thread starts; never mutated after,
//! except the stop coordinator's atomics (touched once per loop iteration, never per event).

use super::checkpointing::{Ckpt, Resume};
use super::schedule::{ChunkCount, ChunkOrder};
use crate::connectors::source::Partition;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Arc;
use std::time::Instant;

/// Agreement on where to stop after SIGINT/SIGTERM: each shard proposes the first chunk it has not
/// started; once all have, the maximum is the end for everyone.
#[derive(Debug, Default)]
pub struct StopCoord {
    pub requested: Arc<AtomicBool>,
    pub proposal: AtomicU64,
    pub arrived: AtomicUsize,
    /// Set by a shard (or the checkpoint writer) that fails, so the others stop instead of waiting
    /// for its chunks.
    pub failed: Arc<AtomicBool>,
}

pub struct ShardSetup {
    pub shards: usize,
    pub key_groups: u32,
    pub chunk_bytes: usize,
    pub parts: Arc<Vec<Partition>>,
    pub chunk_counts: Vec<ChunkCount>,
    pub schedule: ChunkOrder,
    /// Per partition: (max out-of-orderness, has data).
    pub tracker_init: Vec<(i64, bool)>,
    /// Source names by source index.
    pub sources: Vec<String>,
    /// Per source: its `rate_limit`, records per second over all its partitions.
    pub rates: Vec<Option<f64>>,
    /// The job reads logs: positions are offsets (a resumed run numbers chunks from 0 again).
    pub log_job: bool,
    /// Watermark alignment of log partitions (`max_drift` on a log source).
    pub log_align: Option<Arc<super::log_align::LogAlign>>,
    pub topo: Arc<super::topology::Topology>,
    pub stop: StopCoord,
    pub epoch: Instant,
    /// Node names by node id (they name operator state in checkpoints).
    pub op_names: Vec<String>,
    pub ckpt: Option<Arc<Ckpt>>,
    /// Live metrics for the `[api]` endpoint; shards publish into it every 100 ms.
    pub live: Option<Arc<crate::metrics::live::Live>>,
    pub resume: Option<Arc<Resume>>,
}
