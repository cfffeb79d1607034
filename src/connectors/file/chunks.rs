//! The NDJSON `file` source: a file or glob, one partition per file, read in chunks through io_uring.
//!
//! Chunk `k` of a file covers the lines whose first byte lies in `[k * chunk_bytes, (k+1) * chunk_bytes)`.
//! A chunk therefore reads one byte before its range (to know whether its first byte starts a line)
//! and past its end up to the newline that ends its last line (at most `max_line_bytes` further).
//! Reads are split into pieces submitted together to io_uring so several are in flight; where the
//! kernel refuses io_uring the reader falls back to `pread`, saying so once.

use super::uring as uring_read;
use crate::connectors::source::SourceError;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// Step by which a chunk reads on to find the end of its last line.
const TAIL_STEP: usize = 64 * 1024;

/// Files matching `pattern` (a plain path or a glob), sorted by path.
pub fn expand(source: &str, pattern: &str) -> Result<Vec<PathBuf>, SourceError> {
    let is_glob = pattern.contains(['*', '?', '[']);
    if !is_glob {
        let p = PathBuf::from(pattern);
        if !p.exists() {
            return Err(SourceError::NoMatch {
                source_name: source.into(),
                pattern: pattern.into(),
            });
        }
        return Ok(vec![p]);
    }
    let paths = glob::glob(pattern).map_err(|e| SourceError::Pattern {
        source_name: source.into(),
        pattern: pattern.into(),
        message: e.to_string(),
    })?;
    let mut out: Vec<PathBuf> = paths
        .filter_map(Result::ok)
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(SourceError::NoMatch {
            source_name: source.into(),
            pattern: pattern.into(),
        });
    }
    Ok(out)
}

/// Where one chunk's lines are in the reader's buffer ([`ChunkReader::buf`]).
#[derive(Debug, Clone, Copy)]
pub struct ChunkBytes {
    /// File offset of `buf[0]`.
    pub base: u64,
    /// Index in `buf` of the chunk's first line.
    pub first: usize,
    /// Lines starting at an index below this belong to the chunk.
    pub limit: usize,
}

/// Per-shard reader; owns its io_uring instance and buffer.
pub struct ChunkReader {
    uring: Option<io_uring::IoUring>,
    buf: Vec<u8>,
}

impl ChunkReader {
    /// `uring = false` forces plain reads. Returns the reader and, if io_uring was wanted but refused,
    /// the reason.
    pub fn new(uring: bool) -> (Self, Option<String>) {
        let (ring, why) = if uring {
            match io_uring::IoUring::new(16) {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.to_string())),
            }
        } else {
            (None, None)
        };
        (
            ChunkReader {
                uring: ring,
                buf: Vec::new(),
            },
            why,
        )
    }

    /// Reads chunk `k` of `file` (of `size` bytes).
    pub fn read_chunk(
        &mut self,
        file: &File,
        size: u64,
        k: u64,
        chunk_bytes: usize,
        max_line_bytes: usize,
    ) -> io::Result<ChunkBytes> {
        let start = k * chunk_bytes as u64;
        let end = (start + chunk_bytes as u64).min(size);
        let base = start.saturating_sub(1);
        let len = (end - base) as usize;
        // Resizing without clearing first only zero-fills growth, not the whole chunk every time.
        self.buf.resize(len, 0);
        let got = match self.uring.as_mut() {
            None => pread_full(file, base, &mut self.buf)?,
            Some(ring) => match uring_read::read_at(ring, file, base, &mut self.buf) {
                Ok(got) => got,
                Err(uring_read::Failure::Failed(e)) => return Err(e),
                Err(uring_read::Failure::Abandoned(e)) => {
                    self.abandon();
                    return Err(e);
                }
            },
        };
        self.buf.truncate(got);
        // Read on until a newline at or after `end - 1` ends the last line that starts in range.
        let need_nl_from = (end - 1 - base) as usize;
        let mut file_pos = base + self.buf.len() as u64;
        while file_pos < size
            && memchr::memchr(b'\n', &self.buf[need_nl_from.min(self.buf.len())..]).is_none()
        {
            if self.buf.len() - need_nl_from > max_line_bytes {
                break;
            }
            let old = self.buf.len();
            let step = TAIL_STEP.min((size - file_pos) as usize);
            self.buf.resize(old + step, 0);
            let got = file.read_at(&mut self.buf[old..], file_pos)?;
            self.buf.truncate(old + got);
            if got == 0 {
                break;
            }
            file_pos += got as u64;
        }
        let first = if start == 0 {
            0
        } else {
            match memchr::memchr(b'\n', &self.buf) {
                Some(i) => i + 1,
                None => self.buf.len(),
            }
        };
        Ok(ChunkBytes {
            base,
            first,
            limit: (end - base) as usize,
        })
    }

    /// Gives up the buffer and the ring after reads that never completed: the kernel may still
    /// write into that memory, so it is leaked, never freed or reused; reads go on with `pread`.
    fn abandon(&mut self) {
        std::mem::forget(std::mem::take(&mut self.buf));
        if let Some(ring) = self.uring.take() {
            std::mem::forget(ring);
        }
    }

    /// The bytes of the chunk read last.
    pub fn buf(&self) -> &[u8] {
        &self.buf
    }
}

pub(super) fn pread_full(file: &File, off: u64, dst: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < dst.len() {
        match file.read_at(&mut dst[n..], off + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads the raw record of `len` bytes at `pos` (late side output) onto `out`. A record that is
/// no longer all there (the file shrank or was replaced) is an error, never a partial line.
pub fn recall(file: &File, pos: u64, len: u32, out: &mut Vec<u8>) -> io::Result<()> {
    let old = out.len();
    out.resize(old + len as usize, 0);
    let got = pread_full(file, pos, &mut out[old..]);
    let complete = matches!(got, Ok(n) if n == len as usize);
    if !complete {
        out.truncate(old);
        return Err(match got {
            Err(e) => e,
            Ok(n) => io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("only {n} of the record's {len} bytes are left in the file"),
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_record_cut_short_is_an_error_not_a_partial_line() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"{\"a\":1}\n{\"b\":2}\n").unwrap();
        let mut out = b"x".to_vec();
        recall(f.as_file(), 8, 7, &mut out).unwrap();
        assert_eq!(out, b"x{\"b\":2}");
        f.as_file().set_len(12).unwrap();
        let mut out = b"x".to_vec();
        let e = recall(f.as_file(), 8, 7, &mut out).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(out, b"x", "nothing of the cut record is kept");
    }

    fn lines_of(
        reader: &mut ChunkReader,
        f: &File,
        size: u64,
        k: u64,
        cb: usize,
    ) -> Vec<(u64, String)> {
        let c = reader.read_chunk(f, size, k, cb, 1 << 20).unwrap();
        let buf = reader.buf();
        let mut out = Vec::new();
        let mut i = c.first;
        while i < c.limit && i < buf.len() {
            let nl = memchr::memchr(b'\n', &buf[i..])
                .map(|n| i + n)
                .unwrap_or(buf.len());
            out.push((
                c.base + i as u64,
                String::from_utf8_lossy(&buf[i..nl]).into_owned(),
            ));
            i = nl + 1;
        }
        out
    }

    #[test]
    fn every_line_lands_in_exactly_one_chunk_for_any_chunk_size() {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        let mut want = Vec::new();
        let mut off = 0u64;
        for i in 0..200 {
            let line = "x".repeat(i % 23);
            want.push((off, line.clone()));
            writeln!(tmp, "{line}").unwrap();
            off += line.len() as u64 + 1;
        }
        write!(tmp, "tail-without-newline").unwrap();
        want.push((off, "tail-without-newline".into()));
        let size = off + 20;
        let f = File::open(tmp.path()).unwrap();
        for uring in [true, false] {
            let (mut r, _) = ChunkReader::new(uring);
            for cb in [1usize, 2, 7, 64, 1000, 1 << 20] {
                let chunks = size.div_ceil(cb as u64);
                let got: Vec<_> = (0..chunks)
                    .flat_map(|k| lines_of(&mut r, &f, size, k, cb))
                    .collect();
                assert_eq!(got, want, "chunk_bytes={cb} uring={uring}");
            }
        }
    }
}
