//! One chunk read through io_uring: the chunk is cut into pieces submitted together, so several
//! reads are in flight, and the function returns only when the kernel no longer writes into the
//! buffer. That is the invariant the `unsafe` submission rests on, on every path: `EINTR`,
//! `EAGAIN` and `EBUSY` from the ring are retried, a failed piece or a hard ring error stops new
//! submissions and waits out the reads already in flight, and if completions stop coming at all the
//! caller is told to abandon (leak) the buffer rather than reuse memory a read may still fill.
//!
//! The ring is reached through [`ReadRing`] so tests can inject interrupted waits, failed pieces
//! and completions that never come.

use super::chunks::pread_full;
use std::fs::File;
use std::io;
use std::os::unix::io::{AsRawFd, RawFd};
use std::time::Duration;

/// Largest single read submitted to io_uring.
pub(super) const PIECE: usize = 256 * 1024;
/// Rounds in a row without a completion, after a ring error, before the reads are given up.
const MAX_IDLE_ROUNDS: u32 = 2_000;
/// Pause between such rounds (so giving up takes about 2 s, not a busy spin).
const IDLE_PAUSE: Duration = Duration::from_millis(1);

/// What the read needs from io_uring.
pub(super) trait ReadRing {
    /// Queues a read of `len` bytes at file offset `off` into `dst`, tagged `tag`; false when the
    /// submission queue is full.
    ///
    /// # Safety
    /// `dst..dst + len` must stay valid and unused by anything else until the read's completion
    /// has been reaped.
    unsafe fn queue(&mut self, fd: RawFd, dst: *mut u8, len: u32, off: u64, tag: u64) -> bool;
    /// Submits what is queued and waits for at least one completion.
    fn submit_and_wait(&mut self) -> io::Result<()>;
    /// Moves the completions available now into `out` as (tag, result).
    fn reap(&mut self, out: &mut Vec<(u64, i32)>);
}

impl ReadRing for io_uring::IoUring {
    unsafe fn queue(&mut self, fd: RawFd, dst: *mut u8, len: u32, off: u64, tag: u64) -> bool {
        let entry = io_uring::opcode::Read::new(io_uring::types::Fd(fd), dst, len)
            .offset(off)
            .build()
            .user_data(tag);
        // SAFETY: the caller keeps `dst..dst + len` valid and untouched until this entry's
        // completion is reaped (this function's own contract).
        unsafe { self.submission().push(&entry) }.is_ok()
    }

    fn submit_and_wait(&mut self) -> io::Result<()> {
        io_uring::IoUring::submit_and_wait(self, 1).map(|_| ())
    }

    fn reap(&mut self, out: &mut Vec<(u64, i32)>) {
        out.extend(self.completion().map(|c| (c.user_data(), c.result())));
    }
}

/// Why a read failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// Every submitted read has completed; the buffer is the caller's again.
    Failed(io::Error),
    /// Completions stopped coming while reads were in flight: the kernel may still write into
    /// the buffer, so the caller must never free or reuse it (nor the ring).
    Abandoned(io::Error),
}

fn transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
    )
}

/// Reads `dst.len()` bytes at `off` (fewer only at end of file).
pub(super) fn read_at<R: ReadRing>(
    ring: &mut R,
    file: &File,
    off: u64,
    dst: &mut [u8],
) -> Result<usize, Failure> {
    let fd = file.as_raw_fd();
    let pieces = dst.len().div_ceil(PIECE);
    let mut done = vec![0usize; pieces];
    let (mut submitted, mut in_flight) = (0usize, 0usize);
    let mut failed: Option<io::Error> = None;
    let mut cq = Vec::new();
    let mut idle = 0u32;
    loop {
        while failed.is_none() && submitted < pieces {
            let lo = submitted * PIECE;
            let hi = (lo + PIECE).min(dst.len());
            let at = dst[lo..hi].as_mut_ptr();
            // SAFETY: `dst` is borrowed for the whole call and this loop only returns once
            // `in_flight` is 0 (every queued read reaped), or with `Abandoned`, after which the
            // caller leaks the buffer; the file descriptor outlives the call.
            let queued =
                unsafe { ring.queue(fd, at, (hi - lo) as u32, off + lo as u64, submitted as u64) };
            if !queued {
                break;
            }
            submitted += 1;
            in_flight += 1;
        }
        if in_flight == 0 {
            break;
        }
        let waited = ring.submit_and_wait();
        cq.clear();
        ring.reap(&mut cq);
        for &(tag, res) in &cq {
            in_flight = in_flight.saturating_sub(1);
            match (usize::try_from(tag).ok().and_then(|i| done.get_mut(i)), res) {
                (Some(d), r) if r >= 0 => *d = r as usize,
                (_, r) => {
                    let e = if r < 0 {
                        io::Error::from_raw_os_error(-r)
                    } else {
                        io::Error::other("io_uring completed a read it was not given")
                    };
                    failed.get_or_insert(e);
                }
            }
        }
        let waited = match waited {
            Err(e) if !transient(&e) => {
                failed.get_or_insert(e);
                Err(())
            }
            other => other.map_err(|_| ()),
        };
        if !cq.is_empty() {
            idle = 0;
            continue;
        }
        if waited.is_err() {
            idle += 1;
            if idle >= MAX_IDLE_ROUNDS {
                let e = failed
                    .take()
                    .unwrap_or_else(|| io::Error::other("io_uring stalled"));
                return Err(Failure::Abandoned(io::Error::new(
                    e.kind(),
                    format!("{e}; {in_flight} reads never completed"),
                )));
            }
            std::thread::sleep(IDLE_PAUSE);
        }
    }
    if let Some(e) = failed {
        return Err(Failure::Failed(e));
    }
    complete_short_pieces(file, off, dst, &done).map_err(Failure::Failed)
}

/// A short piece (end of file or a short read) is completed with plain reads, in order.
fn complete_short_pieces(
    file: &File,
    off: u64,
    dst: &mut [u8],
    done: &[usize],
) -> io::Result<usize> {
    let mut total = 0;
    for (i, &got) in done.iter().enumerate() {
        let lo = i * PIECE;
        let hi = (lo + PIECE).min(dst.len());
        let got = got.min(hi - lo);
        if got < hi - lo {
            let more = pread_full(file, off + (lo + got) as u64, &mut dst[lo + got..hi])?;
            total = lo + got + more;
            if got + more < hi - lo {
                return Ok(total);
            }
        } else {
            total = hi;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests;
