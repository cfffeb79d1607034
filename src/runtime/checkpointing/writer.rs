//! The checkpoint writer: one thread per run, off the shards' cores' critical path, that turns the
//! state shards hand it into durable checkpoints. For each shard's part it fsyncs the staged output
//! the shard sealed and writes the snapshot file (memmap2, io_uring fsync); when every shard's part of
//! a checkpoint is in, it writes the manifest, commits the file sinks, applies retention and serves
//! a savepoint request. Jobs arrive in checkpoint order, so checkpoints complete in id order.
//! A failed checkpoint is counted and, within `tolerable_failures`, skipped: its staged lines are
//! committed with the next checkpoint that completes.

use super::Ckpt;
use crate::checkpoint::{control, FileEntry, Manifest, Snapshot};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// One shard's part of checkpoint `id`, handed over when it met the barrier.
pub struct Job {
    pub id: u64,
    /// Chunk the run resumes at from this checkpoint.
    pub chunk: u64,
    pub shards: usize,
    pub snap: Snapshot,
    /// Staging files the shard sealed for `id`: made durable before the manifest names `id`.
    pub seal: Vec<File>,
    /// When the shard met the barrier.
    pub met: Instant,
    /// How long the shard paused to encode its state.
    pub pause: Duration,
    /// The run's final checkpoint (end of input or an agreed stop): its failure is never
    /// tolerated, since no later checkpoint would commit the output it covers.
    pub last: bool,
}

#[derive(Default)]
struct Pending {
    files: Vec<FileEntry>,
    arrived: usize,
    failed: Option<String>,
    first_met: Option<Instant>,
    last_met: Option<Instant>,
    write_time: Duration,
    pause: Duration,
}

/// Starts the writer. It exits when [`Ckpt::close`] has been called and every job is done; a fatal
/// error is left in [`Ckpt::error`] and `failed` is raised so the shards stop.
pub fn spawn_writer(
    ck: Arc<Ckpt>,
    rx: mpsc::Receiver<Job>,
    failed: Arc<AtomicBool>,
    live: Option<Arc<crate::metrics::live::Live>>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("sluice-checkpoint".into())
        .spawn(move || {
            let mut pending: BTreeMap<u64, Pending> = BTreeMap::new();
            let mut consecutive_failures = 0u32;
            while let Ok(job) = rx.recv() {
                if let Err(why) = one(&ck, &mut pending, &mut consecutive_failures, job) {
                    ck.fail(why);
                    failed.store(true, Ordering::Release);
                }
                if let Some(Ok(mut c)) = live.as_ref().map(|l| l.checkpoint.lock()) {
                    *c = Some(ck.metrics());
                }
            }
        })
}

fn one(
    ck: &Ckpt,
    pending: &mut BTreeMap<u64, Pending>,
    consecutive: &mut u32,
    job: Job,
) -> Result<(), String> {
    let (id, shards) = (job.id, job.shards);
    let p = pending.entry(id).or_default();
    p.arrived += 1;
    p.first_met = Some(p.first_met.map_or(job.met, |t| t.min(job.met)));
    p.last_met = Some(p.last_met.map_or(job.met, |t| t.max(job.met)));
    p.pause = p.pause.max(job.pause);
    let t = Instant::now();
    match write_part(ck, &job) {
        Ok(entry) => p.files.push(entry),
        Err(why) => {
            p.failed.get_or_insert(why);
        }
    }
    p.write_time += t.elapsed();
    ck.recycle(job.snap);
    if p.arrived < shards {
        return Ok(());
    }
    let p = pending.remove(&id).unwrap_or_default();
    let serves_savepoint = ck.savepoint.at.load(Ordering::Acquire) == id;
    let last = job.last;
    if let Some(why) = p.failed {
        return failed(ck, id, why, consecutive, serves_savepoint, last);
    }
    let bytes: u64 = p.files.iter().map(|f| f.size).sum();
    // A manifest that cannot be written (a full disk) fails the checkpoint like a snapshot would.
    let manifest = match complete(ck, id, job.chunk, p.files) {
        Ok(m) => m,
        Err(why) => return failed(ck, id, why, consecutive, serves_savepoint, last),
    };
    *consecutive = 0;
    let done = Instant::now();
    if let Ok(mut m) = ck.metrics.lock() {
        let (issued_id, issued_at) = ck.issued.lock().map(|g| *g).unwrap_or((0, done));
        // The final checkpoint has no barrier: it starts when the first shard reaches the end.
        let start = if issued_id == id {
            issued_at
        } else {
            p.first_met.unwrap_or(done)
        };
        let align = match (issued_id == id, p.last_met) {
            (true, Some(last)) => last.saturating_duration_since(issued_at),
            _ => Duration::ZERO,
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        m.completed += 1;
        m.last_completed_id = id;
        m.last_completed_unix_ms = manifest.created_unix_ms;
        m.last_completed_at = Some(done);
        m.last_duration_ms = ms(done.saturating_duration_since(start));
        m.max_duration_ms = m.max_duration_ms.max(m.last_duration_ms);
        m.last_size_bytes = bytes;
        m.max_size_bytes = m.max_size_bytes.max(bytes);
        m.total_bytes += bytes;
        m.write_time += p.write_time;
        m.last_alignment_ms = ms(align);
        m.max_alignment_ms = m.max_alignment_ms.max(m.last_alignment_ms);
        m.max_sync_pause_ms = m.max_sync_pause_ms.max(ms(p.pause));
        if !m.write_time.is_zero() {
            m.write_mb_per_s = m.total_bytes as f64 / 1e6 / m.write_time.as_secs_f64();
        }
    }
    tracing::info!(
        checkpoint = id,
        bytes,
        chunk = job.chunk,
        "checkpoint {id} completed"
    );
    if serves_savepoint {
        serve_savepoint(ck, id, Ok(&manifest));
    }
    ck.completed.fetch_max(id, Ordering::AcqRel);
    ck.settled.fetch_max(id, Ordering::AcqRel);
    Ok(())
}

/// Makes one shard's part durable: its sealed output, then its snapshot file.
/// Checkpoint `id` failed for `why`: counted, logged, its partial folder removed (on a full disk
/// it holds the space the next checkpoint needs), and the job stopped past `tolerable_failures`
/// in a row, or when it is the final one. Its output stays staged and is committed with the next
/// checkpoint that completes.
fn failed(
    ck: &Ckpt,
    id: u64,
    why: String,
    consecutive: &mut u32,
    serves_savepoint: bool,
    last: bool,
) -> Result<(), String> {
    *consecutive += 1;
    if let Ok(mut m) = ck.metrics.lock() {
        m.failed += 1;
    }
    tracing::error!(
        checkpoint = id,
        "checkpoint {id} failed: {why} ({} in a row; {} tolerated)",
        consecutive,
        ck.tolerable_failures
    );
    let folder = ck.store.folder(id);
    if let Err(e) = std::fs::remove_dir_all(&folder) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(
                checkpoint = id,
                "cannot remove the failed checkpoint's folder {}: {e}",
                folder.display()
            );
        }
    }
    if last {
        return Err(format!(
            "the final checkpoint {id} failed: {why}; the output after the last completed \
             checkpoint is staged, not committed: run the job again once this is fixed (it resumes \
             from that checkpoint and commits it)"
        ));
    }
    if *consecutive > ck.tolerable_failures {
        return Err(format!("checkpoint {id} failed: {why}"));
    }
    if serves_savepoint {
        serve_savepoint(ck, id, Err(format!("checkpoint {id} failed: {why}")));
    }
    ck.settled.fetch_max(id, Ordering::AcqRel);
    Ok(())
}

fn write_part(ck: &Ckpt, job: &Job) -> Result<FileEntry, String> {
    if ck.fail_ids.contains(&job.id) {
        return Err("injected failure (SLUICE_FAIL_CHECKPOINTS)".into());
    }
    for f in &job.seal {
        f.sync_all()
            .map_err(|e| format!("syncing staged output: {e}"))?;
    }
    ck.store.begin_shared(job.id).map_err(|e| e.to_string())?;
    ck.store
        .write_shard(job.id, &job.snap)
        .map_err(|e| e.to_string())
}

/// Completes checkpoint `id` at `chunk`: each sink's committer prepares (and says what the
/// manifest must record for it, such as an output's length before and after this checkpoint's
/// lines, so recovery can roll a cut-short commit forward or cut a later checkpoint's output
/// back), then the manifest, then the commits, then retention.
fn complete(ck: &Ckpt, id: u64, chunk: u64, mut files: Vec<FileEntry>) -> Result<Manifest, String> {
    files.sort_by_key(|f| f.shard);
    let committers = ck.committers.get().map_or(&[][..], |c| &c[..]);
    let mut sources =
        serde_json::json!({ "chunk": chunk, "partitions": ck.partitions, "commit": {} });
    let mut recorded = Vec::with_capacity(committers.len());
    for c in committers {
        let r = c.prepare(id)?;
        if let Some((section, key, value)) = &r {
            if !sources[*section].is_object() {
                sources[*section] = serde_json::json!({});
            }
            sources[*section][key.as_str()] = value.clone();
        }
        recorded.push(r.map(|(_, _, v)| v));
    }
    let m = ck
        .store
        .complete(id, ck.key_groups, sources, ck.operators.clone(), files)
        .map_err(|e| format!("checkpoint {id}: {e}"))?;
    for (c, r) in committers.iter().zip(&recorded) {
        c.commit(id, r.as_ref())?;
    }
    ck.store
        .retain(ck.retain, id + 1)
        .map_err(|e| format!("checkpoint {id}: retention: {e}"))?;
    Ok(m)
}

/// Where the savepoint for checkpoint `id` goes, and the nonce to answer with: the client's
/// request, else the default folder (a bare SIGUSR1).
fn savepoint_target(ck: &Ckpt, id: u64) -> (PathBuf, String) {
    match control::take_request(&ck.dir) {
        Some(r) => (r.out, r.nonce),
        None => (
            ck.savepoint.default_dir.join(format!("savepoint-{id}")),
            String::new(),
        ),
    }
}

/// Exports completed checkpoint `m` as the requested savepoint (or says why it could not) and
/// answers the request; the job goes on either way.
fn serve_savepoint(ck: &Ckpt, id: u64, m: Result<&Manifest, String>) {
    let (target, nonce) = savepoint_target(ck, id);
    let out = m.and_then(|m| {
        ck.store
            .export(m, &target)
            .map_err(|e| format!("savepoint {}: {e}", target.display()))
    });
    match &out {
        Ok(_) => {
            if let Ok(mut x) = ck.metrics.lock() {
                x.savepoints += 1;
            }
            tracing::info!(savepoint = id, path = %target.display(), "savepoint {id} written to {}", target.display());
        }
        Err(e) => tracing::error!("savepoint not written: {e}"),
    }
    let outcome = control::Outcome {
        nonce,
        id,
        out: target,
        error: out.err(),
    };
    if let Err(e) = control::write_outcome(&ck.dir, &outcome) {
        tracing::error!("cannot answer the savepoint request: {e}");
    }
}
