//! A directory of numbered checkpoints: start one, write shard snapshots into it, complete it with
//! its manifest, find the newest intact one (skipping and reporting torn, corrupt, unfinished and
//! unreadable ones), and keep only the newest `retain`.
//!
//! "Intact" means one thing everywhere (restore, retention, `sluice inspect`, exporting a
//! savepoint): the folder is a real folder (not a link), its manifest reads and checks out, and
//! every file it names is a regular file of the size and CRC-32 the manifest records that decodes
//! as a snapshot this sluice reads (magic, version, header and section checksums) of the shard and
//! key groups the manifest says.

use super::manifest::{FileEntry, Kind, Manifest, MANIFEST_FORMAT};
use super::snapshot::{self, read_snapshot, write_snapshot, Snapshot};
use super::{files, CheckpointError};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A checkpoint passed over when looking for the newest complete one, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub id: u64,
    pub why: String,
}

/// One checkpoint as [`CheckpointStore::list`] finds it: (id, manifest or why it is not usable).
pub type Listed = (u64, Result<Manifest, String>);

/// What [`CheckpointStore::restore_point`] finds: the newest intact checkpoint with its snapshots,
/// if any, and every newer one passed over.
pub type Found = (Option<(Manifest, Vec<Snapshot>)>, Vec<Skipped>);

pub struct CheckpointStore {
    dir: PathBuf,
}

fn folder_name(id: u64) -> String {
    format!("chk-{id:020}")
}

fn parse_folder(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("chk-")?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

pub(super) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Links (or copies) `m`'s files from folder `from` into folder `to` (created, mode 0700; must be
/// empty and not a link), fsyncs them, and writes `m` there as the manifest.
fn place_files(from: &Path, to: &Path, m: &Manifest) -> Result<(), CheckpointError> {
    files::create_dir_all(to)
        .and_then(|()| files::real_dir(to))
        .map_err(|e| CheckpointError::io(to, e))?;
    let busy = std::fs::read_dir(to)
        .map_err(|e| CheckpointError::io(to, e))?
        .next()
        .is_some();
    if busy {
        return Err(CheckpointError::corrupt(
            to,
            "already exists and is not empty (a savepoint is never overwritten)",
        ));
    }
    for f in &m.files {
        let (src, dst) = (from.join(&f.name), to.join(&f.name));
        // link(2) neither follows a link at `dst` nor replaces anything there.
        if std::fs::hard_link(&src, &dst).is_err() {
            files::copy(&src, &dst).map_err(|e| CheckpointError::io(&dst, e))?;
        }
        files::open_regular(&dst)
            .and_then(|f| f.sync_all())
            .map_err(|e| CheckpointError::io(&dst, e))?;
    }
    m.write(to)
}

/// Reads the snapshot file `path` if it is a regular file of `size` bytes with CRC-32 `crc32`.
fn read_whole(path: &Path, size: u64, crc32: u32) -> Result<Vec<u8>, String> {
    let at = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut f = files::open_regular(path).map_err(at)?;
    let len = f.metadata().map_err(at)?.len();
    if len != size {
        return Err(format!(
            "{}: {len} bytes, manifest says {size} (torn write)",
            path.display()
        ));
    }
    // Reserved up front only up to 256 MiB: the size comes from the manifest, not from memory.
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(256 << 20)).unwrap_or(0));
    f.read_to_end(&mut bytes).map_err(at)?;
    if bytes.len() as u64 != size {
        return Err(format!("{}: changed while read", path.display()));
    }
    if crc32fast::hash(&bytes) != crc32 {
        return Err(format!("{}: checksum mismatch (corrupt)", path.display()));
    }
    Ok(bytes)
}

/// Checks the checkpoint (or savepoint) in `folder` as the module says "intact"; with `keep`, also
/// returns its snapshots (read once, for a restore).
fn check_folder(folder: &Path, keep: bool) -> Result<(Manifest, Vec<Snapshot>), String> {
    files::real_dir(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let m = match Manifest::read(folder) {
        Ok(Some(m)) => m,
        Ok(None) => return Err("incomplete: no manifest (interrupted before it completed)".into()),
        Err(e) => return Err(e.to_string()),
    };
    let mut snaps = Vec::new();
    for f in &m.files {
        let p = folder.join(&f.name);
        let bytes = read_whole(&p, f.size, f.crc32)?;
        let found = if keep {
            snapshot::decode(&bytes).map(|s| {
                let found = (s.shard, s.key_groups);
                snaps.push(s);
                found
            })
        } else {
            snapshot::check(&bytes)
        };
        let (shard, (lo, hi)) = found.map_err(|why| format!("{}: {why}", p.display()))?;
        if (shard, (lo, hi)) != (f.shard, f.key_groups) || lo > hi || hi > m.key_groups {
            return Err(format!(
                "{}: holds shard {shard}, key groups {lo}..{hi}; the manifest says shard {}, key \
                 groups {}..{} of {}",
                p.display(),
                f.shard,
                f.key_groups.0,
                f.key_groups.1,
                m.key_groups
            ));
        }
    }
    Ok((m, snaps))
}

/// Reads the manifest in `folder` (a checkpoint's or a savepoint's) and checks that it and every
/// file it names are intact (see the module); the reason it is not usable otherwise.
pub fn verify_folder(folder: &Path) -> Result<Manifest, String> {
    check_folder(folder, false).map(|(m, _)| m)
}

/// [`verify_folder`] and the snapshots, read once: what a restore from a savepoint needs.
pub fn load_folder(folder: &Path) -> Result<(Manifest, Vec<Snapshot>), String> {
    check_folder(folder, true)
}

/// Reads the snapshots `m` names from `folder`, verifying each section.
pub fn read_folder(folder: &Path, m: &Manifest) -> Result<Vec<Snapshot>, CheckpointError> {
    m.files
        .iter()
        .map(|f| read_snapshot(&folder.join(&f.name)))
        .collect()
}

impl CheckpointStore {
    /// The store at `dir`, created if missing (each folder created mode 0700).
    pub fn open(dir: &Path) -> Result<Self, CheckpointError> {
        files::create_dir_all(dir).map_err(|e| CheckpointError::io(dir, e))?;
        Ok(CheckpointStore {
            dir: dir.to_path_buf(),
        })
    }

    pub fn folder(&self, id: u64) -> PathBuf {
        self.dir.join(folder_name(id))
    }

    /// Checkpoint ids present (complete or not), ascending.
    pub fn ids(&self) -> Result<Vec<u64>, CheckpointError> {
        let rd = std::fs::read_dir(&self.dir).map_err(|e| CheckpointError::io(&self.dir, e))?;
        let mut ids: Vec<u64> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| parse_folder(&e.file_name().to_string_lossy()))
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// Starts checkpoint `id`: an empty folder, mode 0700 (an existing one is refused: ids only
    /// grow).
    pub fn begin(&self, id: u64) -> Result<PathBuf, CheckpointError> {
        let f = self.folder(id);
        files::create_dir(&f).map_err(|e| CheckpointError::io(&f, e))?;
        Ok(f)
    }

    /// Starts checkpoint `id` if no one has yet: for a checkpoint every shard starts on its own (the
    /// final one at the end of a run). What is there must be a folder, not a link to one.
    pub fn begin_shared(&self, id: u64) -> Result<PathBuf, CheckpointError> {
        let f = self.folder(id);
        match files::create_dir(&f) {
            Ok(()) => Ok(f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                files::real_dir(&f).map_err(|e| CheckpointError::io(&f, e))?;
                Ok(f)
            }
            Err(e) => Err(CheckpointError::io(&f, e)),
        }
    }

    /// Writes one shard's snapshot into checkpoint `id` and returns its manifest entry.
    pub fn write_shard(&self, id: u64, snap: &Snapshot) -> Result<FileEntry, CheckpointError> {
        let name = format!("shard-{}.snap", snap.shard);
        let (size, crc32) = write_snapshot(&self.folder(id).join(&name), snap)?;
        Ok(FileEntry {
            name,
            shard: snap.shard,
            key_groups: snap.key_groups,
            size,
            crc32,
        })
    }

    /// Completes checkpoint `id`: only now does it exist for `latest`.
    pub fn complete(
        &self,
        id: u64,
        key_groups: u32,
        sources: serde_json::Value,
        operators: BTreeMap<String, String>,
        files: Vec<FileEntry>,
    ) -> Result<Manifest, CheckpointError> {
        let m = Manifest {
            format: MANIFEST_FORMAT,
            kind: Kind::Checkpoint,
            id,
            created_unix_ms: unix_ms(),
            key_groups,
            sources,
            operators,
            files,
        };
        m.write(&self.folder(id))?;
        Ok(m)
    }

    /// Checks that checkpoint `id` is intact (see the module); with `keep`, returns its snapshots.
    fn check(&self, id: u64, keep: bool) -> Result<(Manifest, Vec<Snapshot>), String> {
        let (m, snaps) = check_folder(&self.folder(id), keep)?;
        if m.id != id {
            return Err(format!("manifest says id {}, folder says {id}", m.id));
        }
        Ok((m, snaps))
    }

    fn verify(&self, id: u64) -> Result<Manifest, String> {
        self.check(id, false).map(|(m, _)| m)
    }

    /// Exports complete checkpoint `m` as a savepoint into `target` (which must not exist, or be
    /// an empty folder): its snapshot files hard-linked (copied across file systems), then a
    /// manifest of kind savepoint, written last like any manifest. sluice never deletes it.
    /// A target inside the checkpoint directory (the default `savepoints/`) must not lie below a
    /// link planted there.
    pub fn export(&self, m: &Manifest, target: &Path) -> Result<Manifest, CheckpointError> {
        if target.starts_with(&self.dir) {
            files::no_links_below(&self.dir, target).map_err(|e| CheckpointError::io(target, e))?;
        }
        let mut sp = m.clone();
        sp.kind = Kind::Savepoint;
        sp.format = MANIFEST_FORMAT;
        place_files(&self.folder(m.id), target, &sp)?;
        Ok(sp)
    }

    /// Makes savepoint `sp` (read from `from`) checkpoint `id` of this store, so that the run
    /// restored from it, and any restart before its first own checkpoint, resumes from exactly
    /// that state rather than from an older lineage's newer checkpoints.
    pub fn adopt(&self, sp: &Manifest, from: &Path, id: u64) -> Result<Manifest, CheckpointError> {
        let mut m = sp.clone();
        m.kind = Kind::Checkpoint;
        m.format = MANIFEST_FORMAT;
        m.id = id;
        place_files(from, &self.folder(id), &m)?;
        Ok(m)
    }

    /// The newest intact checkpoint, and every newer one passed over with the reason.
    pub fn latest(&self) -> Result<(Option<Manifest>, Vec<Skipped>), CheckpointError> {
        let (found, skipped) = self.newest_intact(false)?;
        Ok((found.map(|(m, _)| m), skipped))
    }

    /// What a restore resumes from: the newest intact checkpoint with its snapshots (each file
    /// read once), and every newer one passed over with the reason.
    pub fn restore_point(&self) -> Result<Found, CheckpointError> {
        self.newest_intact(true)
    }

    fn newest_intact(&self, keep: bool) -> Result<Found, CheckpointError> {
        let mut skipped = Vec::new();
        for id in self.ids()?.into_iter().rev() {
            match self.check(id, keep) {
                Ok(found) => return Ok((Some(found), skipped)),
                Err(why) => skipped.push(Skipped { id, why }),
            }
        }
        Ok((None, skipped))
    }

    /// Every checkpoint folder, newest first: its manifest if intact, else why not.
    pub fn list(&self) -> Result<Vec<Listed>, CheckpointError> {
        Ok(self
            .ids()?
            .into_iter()
            .rev()
            .map(|id| (id, self.verify(id)))
            .collect())
    }

    /// Reads the snapshots of a complete checkpoint, verifying each section.
    pub fn read_shards(&self, m: &Manifest) -> Result<Vec<Snapshot>, CheckpointError> {
        read_folder(&self.folder(m.id), m)
    }

    /// Keeps the newest `retain` intact checkpoints (at least one) and deletes every folder older
    /// than the oldest kept, complete or not, except ids from `in_progress` on (checkpoints still
    /// being written). Folders newer than the newest intact one are left for `latest` to report.
    /// Returns the ids deleted; a folder someone else deleted meanwhile is not an error.
    pub fn retain(&self, retain: usize, in_progress: u64) -> Result<Vec<u64>, CheckpointError> {
        let ids = self.ids()?;
        let intact: Vec<u64> = ids
            .iter()
            .rev()
            .copied()
            .filter(|&id| self.verify(id).is_ok())
            .take(retain.max(1))
            .collect();
        let Some(&oldest_kept) = intact.last() else {
            return Ok(Vec::new());
        };
        let mut deleted = Vec::new();
        for id in ids
            .into_iter()
            .filter(|&id| id < oldest_kept && id < in_progress)
        {
            let f = self.folder(id);
            match std::fs::remove_dir_all(&f) {
                Ok(()) => deleted.push(id),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(CheckpointError::io(&f, e)),
            }
        }
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests;
