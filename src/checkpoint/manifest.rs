//! The manifest: what makes a folder of snapshot files a checkpoint. Written last and atomically
//! (temp file, fsync, rename, fsync of the folder), so it either names complete, flushed files or
//! does not exist.
//!
//! From format 3 it carries its own CRC-32: the pretty JSON of the manifest is written with one
//! more last field, `"checksum": <CRC-32 of that JSON without the field>`, so any change to its
//! bytes — a flipped digit in the resume position included, which is still valid JSON — is caught
//! before the manifest is believed. Formats 1 and 2 (no checksum) are still read.

use super::{files, CheckpointError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Manifest format this sluice writes: 3 (format 2 and a checksum). Format 1 (no `kind`, no
/// `operators`) and 2 (no checksum) are still read.
pub const MANIFEST_FORMAT: u32 = 3;
pub const MANIFEST_FILE: &str = "manifest.json";
/// What precedes the checksum in a format-3 manifest; after it come its digits and `\n}`.
const CHECKSUM_FIELD: &[u8] = b",\n  \"checksum\": ";

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
    /// The manifest's bytes on disk in the layout of its `format`: pretty JSON, from format 3 with
    /// its checksum as the last field.
    fn encode(&self) -> Result<Vec<u8>, String> {
        let body = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        if self.format < 3 {
            return Ok(body);
        }
        let head = body
            .strip_suffix(b"\n}")
            .ok_or("pretty JSON that does not end in a closing brace")?;
        let mut out = head.to_vec();
        out.extend_from_slice(CHECKSUM_FIELD);
        out.extend_from_slice(crc32fast::hash(&body).to_string().as_bytes());
        out.extend_from_slice(b"\n}");
        Ok(out)
    }

    /// Checks the checksum of a format-3 manifest's bytes: the CRC-32 of the bytes with the
    /// checksum field taken out.
    fn check_sum(bytes: &[u8]) -> Result<(), String> {
        let missing = || "manifest checksum missing (corrupt)".to_string();
        let at = bytes
            .windows(CHECKSUM_FIELD.len())
            .rposition(|w| w == CHECKSUM_FIELD)
            .ok_or_else(missing)?;
        let digits = bytes[at + CHECKSUM_FIELD.len()..]
            .strip_suffix(b"\n}")
            .ok_or_else(missing)?;
        let want: u32 = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse().ok())
            .ok_or_else(missing)?;
        let mut h = crc32fast::Hasher::new();
        h.update(&bytes[..at]);
        h.update(b"\n}");
        if h.finalize() != want {
            return Err("manifest checksum mismatch (corrupt)".into());
        }
        Ok(())
    }

    /// A manifest from its bytes: valid JSON of a format this sluice reads, its checksum right
    /// (format 3 on), every file it names a plain name inside its folder.
    fn decode(bytes: &[u8]) -> Result<Manifest, String> {
        let mut v: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| format!("unreadable manifest: {e}"))?;
        let format = v
            .get("format")
            .and_then(serde_json::Value::as_u64)
            .ok_or("unreadable manifest: no format number")?;
        if !(1..=u64::from(MANIFEST_FORMAT)).contains(&format) {
            return Err(format!(
                "manifest format {format}; this sluice reads formats 1 to {MANIFEST_FORMAT}"
            ));
        }
        if format >= 3 {
            Self::check_sum(bytes)?;
            if let Some(o) = v.as_object_mut() {
                o.remove("checksum");
            }
        }
        let m: Manifest =
            serde_json::from_value(v).map_err(|e| format!("unreadable manifest: {e}"))?;
        for f in &m.files {
            let plain = !f.name.is_empty()
                && f.name != "."
                && f.name != ".."
                && !f.name.contains(['/', '\0']);
            if !plain {
                return Err(format!(
                    "manifest names file {:?}, which is not a file in its folder",
                    f.name
                ));
            }
        }
        Ok(m)
    }

    /// Writes the manifest into `folder` atomically and durably (see [`files::replace`]: a link
    /// planted at its name or its temp file's is replaced, never written through).
    pub fn write(&self, folder: &Path) -> Result<(), CheckpointError> {
        let dst = folder.join(MANIFEST_FILE);
        let bytes = self
            .encode()
            .map_err(|e| CheckpointError::corrupt(&dst, format!("cannot encode manifest: {e}")))?;
        files::replace(folder, MANIFEST_FILE, &bytes, true)
            .map_err(|e| CheckpointError::io(&dst, e))
    }

    /// Reads `folder/manifest.json` (never through a link); `Ok(None)` when there is none (an
    /// incomplete checkpoint).
    pub fn read(folder: &Path) -> Result<Option<Manifest>, CheckpointError> {
        let path = folder.join(MANIFEST_FILE);
        let bytes = match files::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CheckpointError::io(&path, e)),
        };
        Self::decode(&bytes)
            .map(Some)
            .map_err(|why| CheckpointError::corrupt(&path, why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            format: MANIFEST_FORMAT,
            kind: Kind::Checkpoint,
            id: 7,
            created_unix_ms: 1_700_000_000_000,
            key_groups: 720,
            sources: serde_json::json!({ "chunk": 1234, "partitions": ["a"] }),
            operators: BTreeMap::from([("w".into(), "Tumbling".into())]),
            files: vec![FileEntry {
                name: "shard-0.snap".into(),
                shard: 0,
                key_groups: (0, 720),
                size: 99,
                crc32: 5,
            }],
        }
    }

    #[test]
    fn every_changed_byte_of_a_manifest_is_caught_and_old_formats_still_read() {
        let m = manifest();
        let bytes = m.encode().unwrap();
        assert_eq!(Manifest::decode(&bytes).unwrap(), m);
        assert!(
            bytes.ends_with(b"\n}") && serde_json::from_slice::<serde_json::Value>(&bytes).is_ok()
        );
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                assert!(
                    Manifest::decode(&b).is_err(),
                    "byte {i} bit {bit} went unnoticed"
                );
            }
            assert!(Manifest::decode(&bytes[..i]).is_err(), "cut at {i}");
        }
        for old in [1, 2] {
            let m = Manifest {
                format: old,
                ..manifest()
            };
            let b = m.encode().unwrap();
            assert!(!b.windows(8).any(|w| w == b"checksum"));
            assert_eq!(Manifest::decode(&b).unwrap(), m);
        }
        let future = Manifest {
            format: 4,
            ..manifest()
        }
        .encode()
        .unwrap();
        let e = Manifest::decode(&future).unwrap_err();
        assert!(
            e.contains("manifest format 4; this sluice reads formats 1 to 3"),
            "{e}"
        );
    }

    #[test]
    fn a_manifest_naming_a_file_outside_its_folder_is_refused() {
        for name in ["../x", "/etc/passwd", "a/b", "", ".."] {
            let mut m = manifest();
            m.files[0].name = name.into();
            let e = Manifest::decode(&m.encode().unwrap()).unwrap_err();
            assert!(e.contains("not a file in its folder"), "{name:?}: {e}");
        }
    }
}
