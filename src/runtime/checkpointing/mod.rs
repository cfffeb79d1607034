//! Checkpoints in the run: shard 0 starts one every `interval` (or at once when a savepoint is
//! asked for) by sending a barrier ahead of one of its chunks to every shard; each shard meets it at
//! that same chunk boundary, encodes its state (watermark progress and every operator's keys) into
//! memory and hands it to the checkpoint writer thread — the only pause in event processing. The
//! writer makes the snapshots and staged output durable and the last snapshot completes the
//! checkpoint with the manifest (source position = that chunk), commits the sinks, applies
//! retention and, if one was asked for, exports the checkpoint as a savepoint. A run resumes from
//! the newest intact checkpoint, or from a savepoint: every shard restores the keys it owns from
//! every snapshot (so the shard count may differ) and all start reading at the recorded chunk.
//!
//! Guarantee: state is exactly-once (a restored run's windows equal an uninterrupted run's); a
//! sink's output is what its `Guarantee` says: staged sinks are exactly-once (their lines are
//! staged per checkpoint and committed after its manifest by their `Committer`, see
//! `connectors::staged`); stdout and dead letters are at-least-once (emitted again on replay).
//! Never touches the event path: barriers are in-band messages, checked where chunk ends are.

mod restore;
mod writer;

pub use crate::metrics::CheckpointMetrics;
pub use restore::{open, OpenArgs, Resume};
pub use writer::{spawn_writer, Job};

use crate::checkpoint::CheckpointStore;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Shared by all shards of a run with `[checkpoint]`.
pub struct Ckpt {
    pub store: CheckpointStore,
    pub dir: PathBuf,
    pub interval: Duration,
    pub retain: usize,
    pub tolerable_failures: u32,
    pub key_groups: u32,
    /// Input partitions by name, in order: a checkpoint's positions mean something only for these.
    pub partitions: Vec<String>,
    /// Name -> state signature of every operator, recorded in each manifest.
    pub operators: std::collections::BTreeMap<String, String>,
    /// Highest checkpoint id in the directory when the run started (complete or not): ids only
    /// grow, so this run's start above it and a damaged checkpoint stays for inspection.
    pub base_id: u64,
    /// Id of the newest checkpoint completed by this run (`base_id` before any).
    pub completed: AtomicU64,
    /// Id of the newest checkpoint completed or failed: shard 0 starts the next one only after.
    pub settled: AtomicU64,
    /// When shard 0 sent the barrier of the checkpoint in flight (id, time).
    pub issued: Mutex<(u64, Instant)>,
    /// The open sinks' shares of each checkpoint's two-phase commit, set once they are open
    /// (before any shard starts).
    pub committers: std::sync::OnceLock<Vec<Arc<dyn crate::connectors::sink::Committer>>>,
    pub savepoint: SavepointCtl,
    pub metrics: Mutex<CheckpointMetrics>,
    /// Why the writer stopped the job (a failure past the tolerance, or a failed commit).
    pub error: Mutex<Option<String>>,
    /// Checkpoint ids whose snapshot writes fail on purpose (`SLUICE_FAIL_CHECKPOINTS`, tests only).
    pub fail_ids: Vec<u64>,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    /// Per (shard, operator): the encoding buffer of the last checkpoint, back from the writer
    /// (a per-shard double buffer: one being written while the shard runs, one to encode into).
    buffers: Mutex<std::collections::HashMap<(usize, usize), Vec<u8>>>,
}

/// Savepoint requests: SIGUSR1 sets `requested`; shard 0 then starts a checkpoint at once and
/// notes its id in `at`; the writer exports that checkpoint when it completes.
pub struct SavepointCtl {
    pub requested: Arc<AtomicBool>,
    pub at: AtomicU64,
    /// Where a savepoint goes when the signal came without a `sluice savepoint --out` request.
    pub default_dir: PathBuf,
}

impl Ckpt {
    /// Hands a shard's part of a checkpoint to the writer.
    pub fn submit(&self, job: Job) -> Result<(), String> {
        let jobs = self.jobs.lock().map_err(|_| "checkpoint lock poisoned")?;
        match jobs.as_ref() {
            Some(tx) => tx
                .send(job)
                .map_err(|_| "checkpoint writer has stopped".to_string()),
            None => Err("checkpoint writer has stopped".into()),
        }
    }

    /// An empty buffer to encode operator `op` of `shard` into, with the capacity of the last one.
    pub fn buffer(&self, shard: usize, op: usize) -> Vec<u8> {
        let mut b = self
            .buffers
            .lock()
            .ok()
            .and_then(|mut m| m.remove(&(shard, op)))
            .unwrap_or_default();
        b.clear();
        b
    }

    /// The writer is done with a snapshot: its operator sections' buffers go back for reuse.
    pub fn recycle(&self, snap: crate::checkpoint::Snapshot) {
        let shard = snap.shard as usize;
        if let Ok(mut m) = self.buffers.lock() {
            let ops = snap
                .sections
                .into_iter()
                .filter(|s| s.name.starts_with("op/"));
            for (i, s) in ops.enumerate() {
                m.insert((shard, i), s.bytes);
            }
        }
    }

    /// Tells the writer no more jobs will come; it finishes what it has and exits.
    pub fn close(&self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.take();
        }
    }

    /// Stops the job: `why` is reported as the run's error.
    pub fn fail(&self, why: String) {
        if let Ok(mut e) = self.error.lock() {
            e.get_or_insert(why);
        }
    }

    pub fn error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|e| e.clone())
    }

    pub fn metrics(&self) -> CheckpointMetrics {
        self.metrics.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Shard 0, at a chunk start: whether to start checkpoint `settled + 1` now — the previous one
    /// has settled and the interval has passed or a savepoint was asked for.
    pub fn due(&self, issued: u64, last: Instant) -> bool {
        self.settled.load(Ordering::Acquire) == issued
            && (last.elapsed() >= self.interval || self.savepoint.requested.load(Ordering::Relaxed))
    }

    /// Shard 0 sends checkpoint `id`'s barrier now; a pending savepoint request is served by it.
    pub fn issue(&self, id: u64) {
        if let Ok(mut i) = self.issued.lock() {
            *i = (id, Instant::now());
        }
        self.claim_savepoint(id);
    }

    /// A pending savepoint request is served by checkpoint `id`.
    pub fn claim_savepoint(&self, id: u64) {
        if self.savepoint.requested.swap(false, Ordering::AcqRel) {
            self.savepoint.at.store(id, Ordering::Release);
        }
    }
}

/// Ids listed in `SLUICE_FAIL_CHECKPOINTS` (comma-separated): their snapshot writes fail, so tests
/// can see a failed checkpoint counted, tolerated or fatal, and its output committed later.
fn injected_failures() -> Vec<u64> {
    std::env::var("SLUICE_FAIL_CHECKPOINTS")
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}
