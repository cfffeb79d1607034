//! Two-phase commit for sinks under checkpoints (the file sink; the exactly-once Kafka sink stages
//! its lines the same way before its committer sends them): each shard writes the lines it emits before
//! checkpoint `id` to its own staging file `<output>.staging/<id>-<shard>`, sealed (fsync, by the
//! checkpoint writer) when it meets the barrier; once the manifest of `id` is durable, the staged
//! files of `id` and of any earlier checkpoint that failed are appended to the output in (id, shard)
//! order, the output is fsynced and the staging files are deleted. The manifest records the
//! output's length before and after that append, so a crash in the middle is rolled forward on
//! recovery (truncate to the first, append again) and a crash while deleting is recognised (the
//! output already has the second); staging of a checkpoint that never completed is discarded.
//! Output becomes visible once per checkpoint.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::connectors::sink::SinkPart;

/// A check every staged line must pass (an exactly-once Avro Kafka sink's schema): a line that
/// fails it is refused now, as a dead letter, rather than failing a commit later.
pub trait LineCheck: std::fmt::Debug + Send + Sync {
    /// `Err(why)` when `line` (without its newline) cannot be written; `scratch` is reusable space.
    fn check(&self, line: &[u8], scratch: &mut Vec<u8>) -> Result<(), String>;
}

/// A shard's part of a staged sink: its lines go to its staging file of the current checkpoint.
#[derive(Debug)]
pub struct StagePart {
    stage: Stage,
    check: Option<Arc<dyn LineCheck>>,
    rejected: Vec<(String, Vec<u8>)>,
}

impl StagePart {
    pub fn new(stage: Stage, check: Option<Arc<dyn LineCheck>>) -> StagePart {
        StagePart {
            stage,
            check,
            rejected: Vec::new(),
        }
    }
}

impl SinkPart for StagePart {
    fn write(&mut self, buf: &mut Vec<u8>, _durable: bool) -> Result<(), String> {
        if buf.is_empty() {
            return Ok(());
        }
        if let Some(check) = &self.check {
            checked(&**check, buf, &mut self.rejected);
        }
        let res = self.stage.write(buf);
        buf.clear();
        res.map_err(|e| format!("write failed: {e}"))
    }

    fn seal(&mut self, id: u64) -> Result<Vec<File>, String> {
        Ok(self.stage.seal(id).into_iter().collect())
    }

    fn has_rejected(&self) -> bool {
        !self.rejected.is_empty()
    }

    fn take_rejected(&mut self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut self.rejected)
    }
}

/// Keeps in `buf` only the lines `check` passes; the others go to `rejected` with why.
fn checked(check: &dyn LineCheck, buf: &mut Vec<u8>, rejected: &mut Vec<(String, Vec<u8>)>) {
    let mut scratch = Vec::new();
    let mut kept = Vec::with_capacity(buf.len());
    for line in buf.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        match check.check(body, &mut scratch) {
            Ok(()) => kept.extend_from_slice(line),
            Err(why) => rejected.push((why, body.to_vec())),
        }
    }
    *buf = kept;
}

/// The staging folder of the file sink writing `output`.
pub fn staging_dir(output: &Path) -> PathBuf {
    let mut name = output.file_name().unwrap_or_default().to_os_string();
    name.push(".staging");
    output.with_file_name(name)
}

pub fn staging_file(output: &Path, id: u64, shard: usize) -> PathBuf {
    staging_dir(output).join(format!("{id:020}-{shard}"))
}

/// Staging files of `output` by checkpoint id, each list in shard order.
fn staged(output: &Path) -> io::Result<Vec<(u64, usize, PathBuf)>> {
    let dir = staging_dir(output);
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut v = Vec::new();
    for e in rd {
        let e = e?;
        let name = e.file_name();
        let Some((id, shard)) = name.to_str().and_then(|n| n.split_once('-')) else {
            continue;
        };
        if let (Ok(id), Ok(shard)) = (id.parse::<u64>(), shard.parse::<usize>()) {
            v.push((id, shard, e.path()));
        }
    }
    v.sort();
    Ok(v)
}

/// The staging files of checkpoint `id` and every earlier one, in (id, shard) order.
pub fn staged_upto(output: &Path, id: u64) -> io::Result<Vec<PathBuf>> {
    Ok(staged(output)?
        .into_iter()
        .filter(|(i, _, _)| *i <= id)
        .map(|(_, _, p)| p)
        .collect())
}

/// Deletes every staging file of `output`.
pub fn discard(output: &Path) -> io::Result<()> {
    for (_, _, p) in staged(output)? {
        std::fs::remove_file(p)?;
    }
    Ok(())
}

/// Current length of `output` (0 if it does not exist yet): recorded before a commit.
pub fn output_len(output: &Path) -> io::Result<u64> {
    match std::fs::metadata(output) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

/// Appends the staged files of checkpoint `id` and of every earlier one (a failed checkpoint's
/// lines are committed with the next that completes) to `output`, which must be `from` bytes long
/// first: it is truncated to that, so a repeated commit after a crash writes nothing twice. Then
/// fsyncs and deletes them.
pub fn commit(output: &Path, id: u64, from: u64) -> io::Result<()> {
    let files: Vec<PathBuf> = staged(output)?
        .into_iter()
        .filter(|(i, _, _)| *i <= id)
        .map(|(_, _, p)| p)
        .collect();
    let out = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(output)?;
    out.set_len(from)?;
    let mut out = OpenOptions::new().append(true).open(output)?;
    for p in &files {
        let mut f = File::open(p)?;
        io::copy(&mut f, &mut out)?;
    }
    out.flush()?;
    out.sync_all()?;
    for p in &files {
        std::fs::remove_file(p)?;
    }
    Ok(())
}

/// Bytes staged for checkpoint `id` (and earlier failed ones): the output grows by this much when
/// it is committed.
pub fn staged_len(output: &Path, id: u64) -> io::Result<u64> {
    let mut n = 0;
    for (i, _, p) in staged(output)? {
        if i <= id {
            n += std::fs::metadata(p)?.len();
        }
    }
    Ok(n)
}

/// The output's length before and after checkpoint `id`'s commit, as its manifest records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    pub id: u64,
    pub from: u64,
    pub to: u64,
}

/// Recovery to checkpoint `latest`: rolls its commit forward if it was cut short (the output is
/// shorter than the commit left it and its staging is still there), or else cuts the output back
/// to what it held right after that commit (output of a later checkpoint, when the run falls back
/// past it, is produced again by the replay); then discards all staging. `None`: no checkpoint.
/// Returns how many bytes the output lacks of what the checkpoint covers (not 0 only when someone
/// replaced or shortened the output: the replay does not rewrite lines from before the checkpoint).
pub fn recover(output: &Path, latest: Option<Committed>) -> io::Result<u64> {
    let mut missing = 0;
    if let Some(c) = latest {
        let len = output_len(output)?;
        let staged_here = staged(output)?.iter().any(|(i, _, _)| *i <= c.id);
        if len < c.to && staged_here && len >= c.from {
            commit(output, c.id, c.from)?;
        } else if len > c.to {
            let f = OpenOptions::new().write(true).open(output)?;
            f.set_len(c.to)?;
            f.sync_all()?;
        } else {
            missing = c.to - len;
        }
    }
    for (_, _, p) in staged(output)? {
        std::fs::remove_file(p)?;
    }
    Ok(missing)
}

/// One shard's staging for one file sink: the checkpoint its current lines belong to.
#[derive(Debug)]
pub struct Stage {
    pub output: PathBuf,
    pub shard: usize,
    /// The checkpoint the lines written now will be committed with.
    pub id: u64,
    file: Option<File>,
}

impl Stage {
    pub fn new(output: PathBuf, shard: usize, id: u64) -> Self {
        Stage {
            output,
            shard,
            id,
            file: None,
        }
    }

    /// Appends bytes to this checkpoint's staging file (created on first use).
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.file.is_none() {
            // Staged lines are private and (for Kafka sinks) live in the checkpoint directory:
            // owner-only, and never written through a link planted at the staging path.
            let dir = staging_dir(&self.output);
            crate::checkpoint::files::create_dir_all(&dir)?;
            crate::checkpoint::files::real_dir(&dir)?;
            let p = staging_file(&self.output, self.id, self.shard);
            let f = crate::checkpoint::files::open_append(&p)?;
            self.file = Some(f);
        }
        match self.file.as_mut() {
            Some(f) => f.write_all(bytes),
            None => Ok(()),
        }
    }

    /// Closes what was staged for checkpoint `id` and hands back its file, which must be fsynced
    /// before `id`'s manifest is written (by the checkpoint writer, off the event path); later
    /// lines belong to `id + 1`.
    pub fn seal(&mut self, id: u64) -> Option<File> {
        self.id = id + 1;
        self.file.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_files_are_owner_only_and_a_planted_link_is_not_written_through() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("kafka-staging").join("orders");
        let mut a = Stage::new(out.clone(), 0, 1);
        a.write(b"x\n").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&staging_file(&out, 1, 0)), 0o600);
        assert_eq!(mode(&staging_dir(&out)), 0o700);
        let target = dir.path().join("victim");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, staging_file(&out, 2, 0)).unwrap();
        let mut b = Stage::new(out.clone(), 0, 2);
        let e = b.write(b"y\n").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }

    #[test]
    fn commit_is_repeatable_and_recovery_discards_the_uncommitted() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ndjson");
        let mut a = Stage::new(out.clone(), 0, 1);
        let mut b = Stage::new(out.clone(), 1, 1);
        a.write(b"a1\n").unwrap();
        b.write(b"b1\n").unwrap();
        for f in [a.seal(1), b.seal(1)].into_iter().flatten() {
            f.sync_all().unwrap();
        }
        a.write(b"a2\n").unwrap(); // belongs to checkpoint 2, which never completes
        let from = output_len(&out).unwrap();
        let c = Committed {
            id: 1,
            from,
            to: from + staged_len(&out, 1).unwrap(),
        };
        // A crash after half an append: recovery truncates and appends again.
        std::fs::write(&out, b"a1\n").unwrap();
        assert_eq!(recover(&out, Some(c)).unwrap(), 0);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "a1\nb1\n");
        assert_eq!(
            staged(&out).unwrap(),
            vec![],
            "checkpoint 2's staging is discarded"
        );
        // Nothing staged for it: the output stays as that commit left it...
        recover(&out, Some(c)).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "a1\nb1\n");
        // ...cut back from what later checkpoints committed (falling back past them replays it).
        std::fs::write(&out, b"a1\nb1\nlater\n").unwrap();
        recover(&out, Some(c)).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "a1\nb1\n");
        // Replaced by a shorter file: nothing to roll forward, and the shortfall is reported.
        std::fs::write(&out, b"a1\n").unwrap();
        assert_eq!(recover(&out, Some(c)).unwrap(), 3);
    }

    #[test]
    fn a_crash_while_deleting_staging_does_not_lose_the_deleted_lines() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ndjson");
        let mut a = Stage::new(out.clone(), 0, 1);
        let mut b = Stage::new(out.clone(), 1, 1);
        a.write(b"a1\n").unwrap();
        b.write(b"b1\n").unwrap();
        let _ = (a.seal(1), b.seal(1));
        let c = Committed {
            id: 1,
            from: 0,
            to: staged_len(&out, 1).unwrap(),
        };
        // The commit appended both and deleted shard 0's file before the crash.
        std::fs::write(&out, b"a1\nb1\n").unwrap();
        std::fs::remove_file(staging_file(&out, 1, 0)).unwrap();
        recover(&out, Some(c)).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "a1\nb1\n");
        assert_eq!(staged(&out).unwrap(), vec![]);
    }

    #[test]
    fn a_failed_checkpoints_lines_are_committed_with_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ndjson");
        let mut a = Stage::new(out.clone(), 0, 1);
        a.write(b"one\n").unwrap();
        let _ = a.seal(1); // checkpoint 1 fails: never committed
        a.write(b"two\n").unwrap();
        let _ = a.seal(2);
        a.write(b"three\n").unwrap(); // checkpoint 3, not yet sealed
        assert_eq!(staged_len(&out, 2).unwrap(), 8);
        commit(&out, 2, 0).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "one\ntwo\n");
        assert_eq!(staged_len(&out, 3).unwrap(), 6);
    }
}
