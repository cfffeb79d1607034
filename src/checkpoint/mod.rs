//! Checkpoint storage: per-shard snapshot files and the manifest that makes a set of them a
//! checkpoint, in a directory of numbered checkpoints with retention.
//!
//! Owns the on-disk format and its guarantees: every snapshot section carries its own CRC-32, every
//! file's size and CRC-32 are in the manifest, the manifest carries its own CRC-32, and it is
//! written last (temp file, fsync, rename, fsync of the directory), so **a checkpoint exists only
//! when its manifest does**, and a torn, corrupt or unreadable file (or manifest) is detected when
//! the checkpoint is read and the newest intact one is used instead, with the reason reported.
//! Everything it creates in the directory is owner-only (files 0600, folders 0700) and nothing is
//! read or written through a link planted there ([`files`]). It never decides *when* to checkpoint or *what* the state
//! means: shards hand it opaque named sections, the runtime hands it source positions.
//!
//! Layout of `dir`: one folder per checkpoint, `chk-<id, 20 digits>/`, holding `shard-<n>.snap` files
//! and `manifest.json`. Snapshot files are written through a memory map (`memmap2`) and flushed with
//! msync (asynchronous) and an fsync through io_uring (plain fsync where io_uring is unavailable)
//! before the manifest names them.
//!
//! The runtime decides when and where (`runtime::checkpointing`); operators encode their own state
//! through [`codec`].

pub mod codec;
pub mod control;
pub mod files;
mod manifest;
pub mod savepoint;
mod snapshot;
mod store;

pub use manifest::{FileEntry, Kind, Manifest, MANIFEST_FILE, MANIFEST_FORMAT};
pub use snapshot::{read_snapshot, write_snapshot, Section, Snapshot, SNAPSHOT_VERSION};
pub use store::{load_folder, read_folder, verify_folder, CheckpointStore, Found, Skipped};

use std::path::PathBuf;

/// What can go wrong reading or writing checkpoints. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {why}")]
    Corrupt { path: PathBuf, why: String },
    #[error("{0}: no such checkpoint directory")]
    Missing(PathBuf),
}

impl CheckpointError {
    fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CheckpointError::Io {
            path: path.into(),
            source,
        }
    }

    fn corrupt(path: impl Into<PathBuf>, why: impl Into<String>) -> Self {
        CheckpointError::Corrupt {
            path: path.into(),
            why: why.into(),
        }
    }
}

/// `sluice inspect DIR`: one paragraph per checkpoint, newest first — id, completion time, source
/// position, total size, and per shard its key-group range and snapshot size; a damaged or
/// unfinished one says why it would be skipped.
pub fn inspect(dir: &std::path::Path) -> Result<String, CheckpointError> {
    use std::fmt::Write;
    if !dir.is_dir() {
        return Err(CheckpointError::Missing(dir.to_path_buf()));
    }
    let mut out = String::new();
    // A savepoint (or a single checkpoint's folder): its own manifest.
    let list = if dir.join(MANIFEST_FILE).exists() {
        let m = verify_folder(dir);
        let id = m.as_ref().map_or(0, |m| m.id);
        vec![(id, m)]
    } else {
        CheckpointStore::open(dir)?.list()?
    };
    if list.is_empty() {
        let _ = writeln!(out, "{}: no checkpoints", dir.display());
    }
    for (id, m) in list {
        match m {
            Ok(m) => {
                let total: u64 = m.files.iter().map(|f| f.size).sum();
                let kind = match m.kind {
                    Kind::Checkpoint => "checkpoint",
                    Kind::Savepoint => "savepoint",
                };
                let _ = writeln!(
                    out,
                    "{kind} {id}: complete (unix ms {}); resumes at chunk {}; {} bytes; key_groups {}",
                    m.created_unix_ms, m.sources["chunk"], total, m.key_groups
                );
                for (name, sig) in &m.operators {
                    let _ = writeln!(out, "  window {name}: {sig}");
                }
                for f in &m.files {
                    let _ = writeln!(
                        out,
                        "  shard {}: key groups {}..{}, {} ({} bytes, crc32 {:08x})",
                        f.shard, f.key_groups.0, f.key_groups.1, f.name, f.size, f.crc32
                    );
                }
                if let Some(c) = m.sources.get("commit").and_then(|c| c.as_object()) {
                    for (path, len) in c {
                        let _ =
                            writeln!(out, "  output {path}: {} bytes after its commit", len["to"]);
                    }
                }
            }
            Err(why) => {
                let _ = writeln!(out, "checkpoint {id}: not usable: {why}");
            }
        }
    }
    Ok(out)
}
