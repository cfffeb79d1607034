//! Checkpoints in the run: shard 0 starts one every `interval` by sending a barrier ahead of one of
//! its chunks to every shard; each shard meets it at that same chunk boundary, writes its state
//! (watermark progress and every operator's keys) and the last one to finish completes the
//! checkpoint with the manifest (source position = that chunk). A run resumes from the newest
//! intact checkpoint: every shard restores the keys it owns from every snapshot (so the shard count
//! may differ) and all start reading at the recorded chunk.
//!
//! Guarantee: state is exactly-once (a restored run's windows equal an uninterrupted run's); file
//! sinks are exactly-once (lines are staged per checkpoint and committed after its manifest, see
//! `sinks::staged`); stdout and dead letters are at-least-once (emitted again on replay).
//! Never touches the event path: barriers are in-band messages, checked where chunk ends are.

use super::RuntimeError;
use crate::checkpoint::{CheckpointStore, FileEntry, Snapshot};
use crate::plan::CheckpointPlan;
use crate::sinks;
use crate::sources::Partition;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Shared by all shards of a run with `[checkpoint]`.
pub struct Ckpt {
    pub store: CheckpointStore,
    pub interval: Duration,
    pub retain: usize,
    pub key_groups: u32,
    /// Input partitions by name, in order: a checkpoint's positions mean something only for these.
    pub partitions: Vec<String>,
    /// Highest checkpoint id in the directory when the run started (complete or not): ids only
    /// grow, so this run's start above it and a damaged checkpoint stays for inspection.
    pub base_id: u64,
    /// Id of the newest checkpoint completed by this run (`base_id` before any).
    pub completed: AtomicU64,
    /// Snapshots written so far, per checkpoint not yet complete (at the end of a run a shard may
    /// write the final checkpoint while another still writes the one before).
    pub files: Mutex<BTreeMap<u64, Vec<FileEntry>>>,
    /// Outputs of the file sinks, committed with each checkpoint.
    pub staged: Vec<PathBuf>,
}

/// Where a resumed run starts: the checkpoint's chunk and every shard's snapshot.
pub struct Resume {
    pub id: u64,
    pub chunk: u64,
    pub snapshots: Vec<Snapshot>,
}

/// Opens the store and finds what to resume from; refuses a checkpoint taken with other key groups
/// or other input partitions, naming the difference.
pub fn open(
    plan: &CheckpointPlan,
    key_groups: u32,
    parts: &[Partition],
    staged: Vec<PathBuf>,
) -> Result<(Arc<Ckpt>, Option<Resume>), RuntimeError> {
    let err = |m: String| RuntimeError::Checkpoint(m);
    let store = CheckpointStore::open(&plan.dir).map_err(|e| err(e.to_string()))?;
    let (latest, skipped) = store.latest().map_err(|e| err(e.to_string()))?;
    for s in &skipped {
        eprintln!(
            "sluice: checkpoint {} in {} skipped: {}",
            s.id,
            plan.dir.display(),
            s.why
        );
    }
    let partitions: Vec<String> = parts.iter().map(|p| p.name.clone()).collect();
    // Output staged for the newest checkpoint is committed (again: a crash may have cut the
    // commit short); staging for anything else never completed, or was committed already.
    for out in &staged {
        let key = out.to_string_lossy();
        let newest = latest.as_ref().map(|m| {
            let c = &m.sources["commit"][key.as_ref()];
            sinks::staged::Committed {
                id: m.id,
                from: c["from"].as_u64().unwrap_or(0),
                to: c["to"].as_u64().unwrap_or(0),
            }
        });
        sinks::staged::recover(out, newest)
            .map_err(|e| err(format!("recovering output {}: {e}", out.display())))?;
    }
    let mut resume = None;
    let base_id = store
        .ids()
        .map_err(|e| err(e.to_string()))?
        .last()
        .copied()
        .unwrap_or(0);
    if let Some(m) = latest {
        let dir = plan.dir.display();
        if m.key_groups != key_groups {
            return Err(err(format!(
                "checkpoint {} in {dir} was taken with key_groups = {}; this config has {key_groups}, \
                 and key groups are fixed for the life of the state",
                m.id, m.key_groups
            )));
        }
        let theirs: Vec<String> = serde_json::from_value(m.sources["partitions"].clone())
            .map_err(|e| err(format!("checkpoint {} in {dir}: bad partitions: {e}", m.id)))?;
        if theirs != partitions {
            return Err(err(format!(
                "checkpoint {} in {dir} was taken over input partitions {theirs:?}; this run reads \
                 {partitions:?}",
                m.id
            )));
        }
        let chunk = m.sources["chunk"]
            .as_u64()
            .ok_or_else(|| err(format!("checkpoint {} in {dir}: no chunk position", m.id)))?;
        let snapshots = store.read_shards(&m).map_err(|e| err(e.to_string()))?;
        eprintln!(
            "sluice: resuming from checkpoint {} in {dir} (chunk {chunk})",
            m.id
        );
        resume = Some(Resume {
            id: m.id,
            chunk,
            snapshots,
        });
    }
    let ckpt = Ckpt {
        store,
        interval: Duration::from_millis(plan.interval_ms.max(1) as u64),
        retain: plan.retain,
        key_groups,
        partitions,
        base_id,
        completed: AtomicU64::new(base_id),
        files: Mutex::new(BTreeMap::new()),
        staged,
    };
    Ok((Arc::new(ckpt), resume))
}

impl Ckpt {
    /// Records one shard's written snapshot; the last of `shards` completes checkpoint `id` at
    /// `chunk` and applies retention.
    pub fn shard_done(
        &self,
        id: u64,
        chunk: u64,
        entry: FileEntry,
        shards: usize,
    ) -> Result<(), String> {
        let (mut files, in_progress) = {
            let mut all = self.files.lock().map_err(|_| "checkpoint lock poisoned")?;
            let files = all.entry(id).or_default();
            files.push(entry);
            if files.len() < shards {
                return Ok(());
            }
            let files = all.remove(&id).unwrap_or_default();
            (files, all.keys().next().copied().unwrap_or(u64::MAX))
        };
        files.sort_by_key(|f| f.shard);
        // Each output's length before and after this checkpoint's lines: recovery rolls a cut-short
        // commit forward from the first, or cuts a later checkpoint's output back to the second.
        let mut lens = Vec::with_capacity(self.staged.len());
        let mut commit = serde_json::Map::new();
        for out in &self.staged {
            let io = |e: std::io::Error| format!("{}: {e}", out.display());
            let from = sinks::staged::output_len(out).map_err(io)?;
            let to = from + sinks::staged::staged_len(out, id).map_err(io)?;
            lens.push(from);
            commit.insert(
                out.to_string_lossy().into_owned(),
                serde_json::json!({ "from": from, "to": to }),
            );
        }
        let sources =
            serde_json::json!({ "chunk": chunk, "partitions": self.partitions, "commit": commit });
        self.store
            .complete(id, self.key_groups, sources, files)
            .map_err(|e| e.to_string())?;
        for (out, from) in self.staged.iter().zip(lens) {
            sinks::staged::commit(out, id, from)
                .map_err(|e| format!("committing output {}: {e}", out.display()))?;
        }
        self.store
            .retain(self.retain, in_progress)
            .map_err(|e| e.to_string())?;
        self.completed.fetch_max(id, Ordering::AcqRel);
        Ok(())
    }
}
