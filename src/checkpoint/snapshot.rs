//! One shard's snapshot file: a header naming the shard and its key-group range, then named
//! sections of opaque bytes, each with its length and CRC-32.
//!
//! Format version 2 ([`SNAPSHOT_VERSION`]; the container is version 1's, but version 2 changed
//! what window sections hold, so a file of any other version is refused with both numbers),
//! little-endian:
//! ```text
//! header   magic "SLUICESN" | version u32 | shard u32 | key_group_lo u32 | key_group_hi u32
//!          | sections u32 | header crc32 u32 (over the 28 bytes before it)
//! section  name_len u32 | name (UTF-8) | len u64 | crc32 u32 | bytes
//!          (the crc covers name_len, name, len and bytes: the whole section but itself)
//! ```
//! Never interprets section bytes; a reader gets them back exactly or gets an error saying which
//! section of which file is damaged and how.

use super::{files, CheckpointError};
use memmap2::MmapMut;
use std::path::Path;

pub const SNAPSHOT_VERSION: u32 = 2;
const MAGIC: &[u8; 8] = b"SLUICESN";
const HEADER: usize = 32;

/// One named piece of a shard's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// A shard's snapshot as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub shard: u32,
    /// Key groups `lo..hi` this shard's state covers.
    pub key_groups: (u32, u32),
    pub sections: Vec<Section>,
}

fn encode(s: &Snapshot) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        HEADER
            + s.sections
                .iter()
                .map(|x| 16 + x.name.len() + x.bytes.len())
                .sum::<usize>(),
    );
    out.extend_from_slice(MAGIC);
    for v in [
        SNAPSHOT_VERSION,
        s.shard,
        s.key_groups.0,
        s.key_groups.1,
        s.sections.len() as u32,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    for x in &s.sections {
        let start = out.len();
        out.extend_from_slice(&(x.name.len() as u32).to_le_bytes());
        out.extend_from_slice(x.name.as_bytes());
        out.extend_from_slice(&(x.bytes.len() as u64).to_le_bytes());
        let crc = section_crc(&out[start..], &x.bytes);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&x.bytes);
    }
    out
}

/// CRC-32 of a section's fields before the crc (`head`) and its bytes.
fn section_crc(head: &[u8], bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(head);
    h.update(bytes);
    h.finalize()
}

/// Writes `snap` to a new file at `path` (mode 0600) through a memory map, durable before
/// returning: the map's write-back is started (msync MS_ASYNC) and the file fsynced through
/// io_uring where the kernel offers it (plain fsync otherwise). Runs on the checkpoint writer
/// thread, never on a shard. Returns the file's size and CRC-32 (for the manifest). Refuses to
/// overwrite a file or to write through a link at `path`.
pub fn write_snapshot(path: &Path, snap: &Snapshot) -> Result<(u64, u32), CheckpointError> {
    let bytes = encode(snap);
    let file = files::create_new(path).map_err(|e| CheckpointError::io(path, e))?;
    file.set_len(bytes.len() as u64)
        .map_err(|e| CheckpointError::io(path, e))?;
    // On a full file system a store to a mapped page with no block behind it is SIGBUS, not an
    // error: the blocks are reserved first, and written with plain writes where they cannot be.
    let reserved = reserve(&file, bytes.len()).map_err(|e| CheckpointError::io(path, e))?;
    if !reserved {
        use std::os::unix::fs::FileExt;
        file.write_all_at(&bytes, 0)
            .map_err(|e| CheckpointError::io(path, e))?;
    } else if !bytes.is_empty() {
        // SAFETY: the file was created just now (`create_new`) by this process and is not shared; it
        // is mapped only here, so nothing else changes it while the map is alive. Its blocks are
        // allocated (`reserve`), so no store to the map can fault for want of space.
        let mut map =
            unsafe { MmapMut::map_mut(&file) }.map_err(|e| CheckpointError::io(path, e))?;
        map.copy_from_slice(&bytes);
        map.flush_async()
            .map_err(|e| CheckpointError::io(path, e))?;
    }
    fsync(&file).map_err(|e| CheckpointError::io(path, e))?;
    Ok((bytes.len() as u64, crc32fast::hash(&bytes)))
}

/// Allocates the blocks of `file`'s first `len` bytes: `Ok(false)` where the file system cannot
/// (then only plain writes are safe), an error (ENOSPC) where there is no room.
fn reserve(file: &std::fs::File, len: usize) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let Ok(len) = libc::off_t::try_from(len) else {
        return Ok(false);
    };
    if len == 0 {
        return Ok(true);
    }
    // SAFETY: posix_fallocate reads only its integer arguments; `file` keeps the descriptor open.
    match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) } {
        0 => Ok(true),
        libc::EOPNOTSUPP | libc::EINVAL => Ok(false),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

/// fsync of `file` as an io_uring operation when a ring can be set up, else `fsync(2)`. Either way
/// the mapped pages written through the file's shared map are on disk when it returns.
fn fsync(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let Ok(mut ring) = io_uring::IoUring::new(2) else {
        return file.sync_all();
    };
    let entry = io_uring::opcode::Fsync::new(io_uring::types::Fd(file.as_raw_fd()))
        .build()
        .user_data(1);
    // SAFETY: the operation references only the file descriptor, which `file` keeps open until
    // this function has reaped the completion below.
    if unsafe { ring.submission().push(&entry) }.is_err() {
        return file.sync_all();
    }
    ring.submit_and_wait(1)?;
    let done = ring.completion().next().map(|c| c.result());
    match done {
        Some(r) if r < 0 => Err(std::io::Error::from_raw_os_error(-r)),
        Some(_) => Ok(()),
        None => file.sync_all(),
    }
}

/// Little-endian reader over a file's bytes that reports where it ran out.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| {
                format!(
                    "truncated: {what} needs {n} bytes at offset {}, file has {}",
                    self.at,
                    self.b.len()
                )
            })?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(b))
    }
}

/// Walks a snapshot's bytes, checking magic, version, header and section checksums and exact
/// length, and hands every section to `each`; returns the shard and its key-group range.
fn walk<'a>(
    b: &'a [u8],
    mut each: impl FnMut(&'a str, &'a [u8]),
) -> Result<(u32, (u32, u32)), String> {
    let mut c = Cursor { b, at: 0 };
    if c.take(8, "magic")? != MAGIC {
        return Err("not a sluice snapshot (bad magic)".into());
    }
    let version = c.u32("version")?;
    let shard = c.u32("shard")?;
    let lo = c.u32("key group range")?;
    let hi = c.u32("key group range")?;
    let n = c.u32("section count")?;
    let crc = c.u32("header checksum")?;
    if crc != crc32fast::hash(&b[..HEADER - 4]) {
        return Err("header checksum mismatch".into());
    }
    if version != SNAPSHOT_VERSION {
        return Err(format!(
            "format version {version}; this sluice reads version {SNAPSHOT_VERSION}"
        ));
    }
    for i in 0..n {
        let what = format!("section {i}");
        let head_start = c.at;
        let name_len = c.u32(&what)? as usize;
        let name = std::str::from_utf8(c.take(name_len, &what)?)
            .map_err(|_| format!("{what}: name is not UTF-8"))?;
        let len = usize::try_from(c.u64(&what)?).map_err(|_| format!("{what}: length"))?;
        let head = &b[head_start..c.at];
        let crc = c.u32(&what)?;
        let bytes = c.take(len, &format!("section {name:?}"))?;
        if section_crc(head, bytes) != crc {
            return Err(format!("section {name:?}: checksum mismatch"));
        }
        each(name, bytes);
    }
    if c.at != b.len() {
        return Err(format!("{} bytes after the last section", b.len() - c.at));
    }
    Ok((shard, (lo, hi)))
}

/// Decodes a snapshot's bytes, checked as [`read_snapshot`] says.
pub(super) fn decode(b: &[u8]) -> Result<Snapshot, String> {
    let mut sections = Vec::new();
    let (shard, key_groups) = walk(b, |name, bytes| {
        sections.push(Section {
            name: name.to_string(),
            bytes: bytes.to_vec(),
        })
    })?;
    Ok(Snapshot {
        shard,
        key_groups,
        sections,
    })
}

/// Checks a snapshot's bytes as [`decode`] does, without copying its sections; returns its shard
/// and key-group range.
pub(super) fn check(b: &[u8]) -> Result<(u32, (u32, u32)), String> {
    walk(b, |_, _| {})
}

/// Reads and verifies a snapshot file (never through a link): magic, version, header and
/// per-section checksums, exact length.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, CheckpointError> {
    let bytes = files::read(path).map_err(|e| CheckpointError::io(path, e))?;
    decode(&bytes).map_err(|why| CheckpointError::corrupt(path, why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn snap(sections: Vec<(String, Vec<u8>)>) -> Snapshot {
        Snapshot {
            shard: 3,
            key_groups: (180, 360),
            sections: sections
                .into_iter()
                .map(|(name, bytes)| Section { name, bytes })
                .collect(),
        }
    }

    proptest! {
        #[test]
        fn round_trips_and_every_damage_is_detected(
            sections in proptest::collection::vec(("[a-z/]{0,12}", proptest::collection::vec(any::<u8>(), 0..300)), 0..5),
            flip in any::<prop::sample::Index>(),
            cut in any::<prop::sample::Index>(),
        ) {
            let s = snap(sections);
            let bytes = encode(&s);
            prop_assert_eq!(decode(&bytes).unwrap(), s);
            // Any single flipped bit and any truncation is an error, never different state.
            let mut bad = bytes.clone();
            let i = flip.index(bad.len());
            bad[i] ^= 1;
            prop_assert!(decode(&bad).is_err());
            let cut = cut.index(bytes.len());
            prop_assert!(decode(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn written_file_reads_back_and_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("shard-3.snap");
        let s = snap(vec![
            ("windows".into(), vec![1, 2, 3]),
            ("empty".into(), vec![]),
        ]);
        let (size, crc) = write_snapshot(&p, &s).unwrap();
        let on_disk = std::fs::read(&p).unwrap();
        assert_eq!(
            (size, crc),
            (on_disk.len() as u64, crc32fast::hash(&on_disk))
        );
        assert_eq!(read_snapshot(&p).unwrap(), s);
        assert!(
            write_snapshot(&p, &s).is_err(),
            "create_new refuses an existing file"
        );
        std::fs::write(&p, &on_disk[..on_disk.len() - 1]).unwrap();
        let e = read_snapshot(&p).unwrap_err().to_string();
        assert!(e.contains("shard-3.snap") && e.contains("truncated"), "{e}");
    }
}
