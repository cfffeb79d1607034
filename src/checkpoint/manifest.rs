//! The manifest: what makes a folder of snapshot files a checkpoint. Written last and atomically
//! (temp file, fsync, rename, fsync of the folder), so it either names complete, flushed files or
//! does not exist.

use super::CheckpointError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Manifest format this sluice writes. Format 1 (no `kind`, no `operators`) is still read.
pub const MANIFEST_FORMAT: u32 = 2;
pub const MANIFEST_FILE: &str = "manifest.json";

/// One snapshot file of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// File name inside the checkpoint folder.
    pub name: String,
    pub shard: u32,
    /// Key groups `lo..hi` its state covers.
    pub key_groups: (u32, u32),
    pub size: u64,
    pub crc32: u32,
}

/// A checkpoint belongs to sluice (kept by retention, deleted when old); a savepoint belongs to the
/// user (written where asked, never deleted by sluice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    #[default]
    Checkpoint,
    Savepoint,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: u32,
    #[serde(default)]
    pub kind: Kind,
    pub id: u64,
    /// Wall-clock time the checkpoint completed, ms since the Unix epoch.
    pub created_unix_ms: u64,
    pub key_groups: u32,
    /// Where every source resumes: opaque to this module (the runtime's positions).
    pub sources: serde_json::Value,
    /// Every operator whose state the snapshots hold: name -> signature (what its state layout
    /// depends on), so a restore can tell a renamed or redefined operator from the same one.
    #[serde(default)]
    pub operators: BTreeMap<String, String>,
    pub files: Vec<FileEntry>,
}

impl Manifest {
    /// Writes the manifest into `folder` atomically and durably.
    pub fn write(&self, folder: &Path) -> Result<(), CheckpointError> {
        let tmp = folder.join(format!(".{MANIFEST_FILE}.tmp"));
        let dst = folder.join(MANIFEST_FILE);
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| CheckpointError::corrupt(&dst, format!("cannot encode manifest: {e}")))?;
        let mut f = File::create(&tmp).map_err(|e| CheckpointError::io(&tmp, e))?;
        f.write_all(&json)
            .and_then(|()| f.sync_all())
            .map_err(|e| CheckpointError::io(&tmp, e))?;
        std::fs::rename(&tmp, &dst).map_err(|e| CheckpointError::io(&dst, e))?;
        // The rename is durable only once the folder's entry is.
        File::open(folder)
            .and_then(|d| d.sync_all())
            .map_err(|e| CheckpointError::io(folder, e))
    }

    /// Reads `folder/manifest.json`; `Ok(None)` when there is none (an incomplete checkpoint).
    pub fn read(folder: &Path) -> Result<Option<Manifest>, CheckpointError> {
        let path = folder.join(MANIFEST_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CheckpointError::io(&path, e)),
        };
        let m: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| CheckpointError::corrupt(&path, format!("unreadable manifest: {e}")))?;
        if !(1..=MANIFEST_FORMAT).contains(&m.format) {
            return Err(CheckpointError::corrupt(
                &path,
                format!(
                    "manifest format {}; this sluice reads formats 1 to {MANIFEST_FORMAT}",
                    m.format
                ),
            ));
        }
        Ok(Some(m))
    }
}
