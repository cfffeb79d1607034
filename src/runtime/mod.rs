//! The runtime: runs a [`Plan`] on N pinned shard threads that share nothing but SPSC rings.
//!
//! Key -> hash -> key group (`key_groups` of them, fixed for the life of the state) -> shard: shard `i`
//! owns a contiguous range of key groups and all state for them. `run` builds everything a shard needs
//! before any thread starts (so a bad source or sink fails first), starts the shards, waits for them
//! and merges their counters. It knows operators, sources and sinks only through their traits.

pub mod aligned;
mod checkpointing;
mod chunks;
pub mod log_align;
mod positions;
mod pushdown;
pub mod ring;
pub mod schedule;
mod setup;
mod shard;
mod start;
pub mod topology;

use crate::connectors::sink::SinkError;
use crate::connectors::source::{OpenCx, OpenSource, Partition, SourceError};
use crate::metrics::RunSummary;
use crate::plan::Plan;
use schedule::ChunkOrder;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What a shard says when it stops because another one failed.
pub(crate) const SECONDARY_FAILURE: &str = "stopped because another shard failed";

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Sink(#[from] SinkError),
    #[error("{what}: {message}")]
    Setup { what: String, message: String },
    #[error("shard {shard} failed: {message}")]
    Shard { shard: usize, message: String },
    #[error("checkpoint: {0}")]
    Checkpoint(String),
}

pub struct RunOptions {
    /// Set by SIGINT/SIGTERM: stop reading, finish what is in flight, flush, return.
    pub stop: Arc<AtomicBool>,
    /// Read files through io_uring (falls back to pread if the kernel refuses).
    pub uring: bool,
    /// Replace the plan's sources by these, one for each (benchmarks and tests on pre-parsed
    /// events, `connectors::memory`).
    pub sources: Option<Vec<Arc<dyn OpenSource>>>,
    /// Set by SIGUSR1: take a savepoint now and keep running (needs `[checkpoint]`).
    pub savepoint: Arc<AtomicBool>,
    /// Restore from this savepoint instead of the newest checkpoint.
    pub from_savepoint: Option<std::path::PathBuf>,
    /// Restore even if state of windows this config no longer has (or redefines) is dropped.
    pub allow_dropped_state: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            stop: Arc::new(AtomicBool::new(false)),
            uring: true,
            sources: None,
            savepoint: Arc::new(AtomicBool::new(false)),
            from_savepoint: None,
            allow_dropped_state: false,
        }
    }
}

pub fn run(plan: &Plan, mut opts: RunOptions) -> Result<RunSummary, RuntimeError> {
    let sources = match opts.sources.take() {
        Some(s) => s,
        None => open_sources(plan)?,
    };
    let parts = partitions(plan, &sources)?;
    let (ckpt, resume, jobs) = match &plan.checkpoint {
        Some(c) => {
            let args = checkpointing::OpenArgs {
                key_groups: plan.runtime.key_groups.max(1),
                parts: &parts,
                committers: plan
                    .sinks
                    .iter()
                    .filter_map(|s| s.sink.committer(&s.name, &c.dir))
                    .collect(),
                operators: plan.operators(),
                from_savepoint: opts.from_savepoint.as_deref(),
                allow_dropped_state: opts.allow_dropped_state,
                savepoint_requested: opts.savepoint.clone(),
            };
            let (ckpt, resume, jobs) = checkpointing::open(c, args)?;
            (Some(ckpt), resume.map(Arc::new), Some(jobs))
        }
        None if opts.from_savepoint.is_some() => {
            return Err(RuntimeError::Checkpoint(
                "--from-savepoint needs a [checkpoint] section: the restored job checkpoints                  into its dir"
                    .into(),
            ))
        }
        None => (None, None, None),
    };
    // Whatever happens from here, the writer is stopped and the checkpoint dir released.
    let result = start::run_shards(plan, opts, &sources, parts, ckpt.clone(), resume, jobs);
    if let Some(ck) = &ckpt {
        ck.close();
        crate::checkpoint::control::release(&ck.dir);
    }
    result
}

/// Opens every source of the plan, each through its connector: its partitions found and what its
/// shards share set up, before any thread starts.
fn open_sources(plan: &Plan) -> Result<Vec<Arc<dyn OpenSource>>, RuntimeError> {
    plan.sources
        .iter()
        .map(|s| {
            let cx = OpenCx {
                name: &s.name,
                shards: plan.runtime.shards.max(1),
                chunk_bytes: plan.runtime.chunk_bytes.max(1),
                max_line_bytes: plan.runtime.max_line_bytes,
                max_out_of_orderness_ms: s.watermark.max_out_of_orderness_ms,
                idle_timeout_ms: s.watermark.idle_timeout_ms,
                event_time: s.event_time.as_ref(),
            };
            Ok(s.source.open(&cx)?)
        })
        .collect()
}

/// Every source's partitions, in plan order (a partition's run index is its place here).
fn partitions(
    plan: &Plan,
    sources: &[Arc<dyn OpenSource>],
) -> Result<Vec<Partition>, RuntimeError> {
    let mut out = Vec::new();
    for (i, (src, open)) in plan.sources.iter().zip(sources).enumerate() {
        for (index, f) in open.partitions().iter().enumerate() {
            out.push(Partition {
                source: i,
                index,
                name: f.name.clone(),
                max_out_of_orderness_ms: src.watermark.max_out_of_orderness_ms,
                extent: f.extent,
                first_chunk: 0,
            });
        }
    }
    if out.len() > u16::MAX as usize {
        return Err(SourceError::TooManyPartitions {
            max: u16::MAX as usize,
            found: out.len(),
        }
        .into());
    }
    Ok(out)
}

/// Continues the chunk order a checkpoint recorded (after its watermarks in the `time` section),
/// before any shard asks it for a chunk.
fn restore_order(
    order: &ChunkOrder,
    tracker_init: &[(i64, bool)],
    r: &checkpointing::Resume,
) -> Result<(), RuntimeError> {
    let fail = |m: String| RuntimeError::Checkpoint(format!("checkpoint {}: {m}", r.id));
    let time = r
        .snapshots
        .first()
        .and_then(|s| s.sections.iter().find(|x| x.name == "time"))
        .ok_or_else(|| fail("no watermark state".into()))?;
    let mut d = crate::checkpoint::codec::Dec::new(&time.bytes);
    crate::time::WatermarkTracker::new(tracker_init)
        .decode(&mut d)
        .map_err(fail)?;
    d.i64("watermark").map_err(fail)?;
    order.decode(&mut d).map_err(fail)
}
