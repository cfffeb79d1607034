//! Read positions of a job that reads logs (partitions read as records arrive), in checkpoints.
//! Such a job's position is not one chunk number but each partition's own: for a log partition the
//! next offset after the chunks a checkpoint covers (every receiver learns it from chunk-end
//! markers) and the end offset a bounded job stops at (taken when the job first started, so a
//! restored job stops where the uninterrupted one would); for a range partition (a file, a
//! generator) the number of its chunks the checkpoint covers. A resumed job numbers its chunks
//! afresh from there. Both follow the chunk order in the checkpoint's `time` section. Never reads
//! records.

use super::checkpointing::Resume;
use super::RuntimeError;
use crate::checkpoint::codec::{Dec, Enc};
use crate::connectors::source::{Extent, Partition};
use crate::time::WatermarkTracker;

/// Appends each partition's (next offset or chunks done, end offset) to a checkpoint (-1: none).
pub fn encode(next: &[i64], parts: &[Partition], e: &mut Enc) {
    e.u64(parts.len() as u64);
    for (p, n) in parts.iter().zip(next) {
        let end = match p.extent {
            Extent::Log { end, .. } => end.unwrap_or(-1),
            Extent::Ranges { .. } => -1,
        };
        e.i64(*n);
        e.i64(end);
    }
}

/// Moves every log partition to where the checkpoint being resumed left it, and every range
/// partition past the chunks it covered.
pub fn restore(parts: &mut [Partition], r: &Resume) -> Result<(), RuntimeError> {
    let fail = |m: String| RuntimeError::Checkpoint(format!("checkpoint {}: {m}", r.id));
    let time = r
        .snapshots
        .first()
        .and_then(|s| s.sections.iter().find(|x| x.name == "time"))
        .ok_or_else(|| fail("no watermark state".into()))?;
    let mut d = Dec::new(&time.bytes);
    let init: Vec<(i64, bool)> = parts
        .iter()
        .map(|p| (p.max_out_of_orderness_ms, true))
        .collect();
    WatermarkTracker::new(&init).decode(&mut d).map_err(fail)?;
    d.i64("watermark").map_err(fail)?;
    if d.u8("chunk order").map_err(fail)? != 0 {
        return Err(fail(
            "a job reading logs has a checkpoint with an aligned chunk order".into(),
        ));
    }
    let n = d.count(16, "partition positions").map_err(fail)?;
    if n != parts.len() {
        return Err(fail(format!(
            "it holds positions of {n} partitions; this job reads {}",
            parts.len()
        )));
    }
    for p in parts.iter_mut() {
        let next = d.i64("partition position").map_err(fail)?;
        let end = d.i64("partition end offset").map_err(fail)?;
        match &mut p.extent {
            Extent::Log { start, end: stop } => {
                if next >= 0 {
                    *start = next;
                }
                *stop = (end >= 0).then_some(end);
                tracing::info!(partition = %p.name, offset = *start, "log partition resumes at its checkpointed offset");
            }
            Extent::Ranges { .. } => {
                p.first_chunk = next.max(0) as u64;
                tracing::info!(partition = %p.name, chunk = p.first_chunk, "partition resumes after its checkpointed chunks");
            }
        }
    }
    Ok(())
}
