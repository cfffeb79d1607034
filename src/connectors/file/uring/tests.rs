//! The read against a scripted ring: interrupted and failing waits, failed pieces and completions
//! that never come. The fake performs each read (a `pread` into the queued span) only when it
//! completes it, and the tests check that `read_at` never returns while one is still queued.

use super::*;
use std::io::Write;
use std::os::unix::fs::FileExt;

/// What one `submit_and_wait` call does.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Completes up to `n` queued reads, then returns Ok.
    Complete(usize),
    /// Completes up to `n` queued reads, then returns this errno (reads done before the signal).
    CompleteThenErr(usize, i32),
    /// Completes nothing and returns this errno.
    Err(i32),
    /// Fails piece `tag`'s read with -errno, completing it.
    FailPiece(u64, i32),
}

struct Fake {
    file: File,
    queued: Vec<(u64, *mut u8, u32, u64)>,
    done: Vec<(u64, i32)>,
    script: Vec<Step>,
    /// Once the script is used up: `Some(n)` completes n per call, `None` completes nothing and
    /// returns EIO (a ring that never answers).
    then: Option<usize>,
    capacity: usize,
}

impl Fake {
    fn new(file: &File, script: Vec<Step>, then: Option<usize>) -> Fake {
        Fake {
            file: file.try_clone().unwrap(),
            queued: Vec::new(),
            done: Vec::new(),
            script: script.into_iter().rev().collect(),
            then,
            capacity: 3,
        }
    }

    fn complete(&mut self, n: usize) {
        for _ in 0..n.min(self.queued.len()) {
            let (tag, dst, len, off) = self.queued.remove(0);
            // SAFETY: `read_at` keeps the span valid until this completion is reaped (the
            // contract of `ReadRing::queue`), and nothing else writes it meanwhile.
            let buf = unsafe { std::slice::from_raw_parts_mut(dst, len as usize) };
            let got = self.file.read_at(buf, off).unwrap();
            self.done.push((tag, got as i32));
        }
    }
}

impl ReadRing for Fake {
    unsafe fn queue(&mut self, _fd: RawFd, dst: *mut u8, len: u32, off: u64, tag: u64) -> bool {
        if self.queued.len() >= self.capacity {
            return false;
        }
        self.queued.push((tag, dst, len, off));
        true
    }

    fn submit_and_wait(&mut self) -> io::Result<()> {
        let step = self.script.pop().or(self.then.map(Step::Complete));
        match step {
            Some(Step::Complete(n)) => self.complete(n),
            Some(Step::CompleteThenErr(n, e)) => {
                self.complete(n);
                return Err(io::Error::from_raw_os_error(e));
            }
            Some(Step::Err(e)) => return Err(io::Error::from_raw_os_error(e)),
            Some(Step::FailPiece(tag, e)) => {
                if let Some(i) = self.queued.iter().position(|q| q.0 == tag) {
                    self.queued.remove(i);
                    self.done.push((tag, -e));
                }
            }
            None => return Err(io::Error::from_raw_os_error(libc::EIO)),
        }
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<(u64, i32)>) {
        out.append(&mut self.done);
    }
}

fn data_file(len: usize) -> (tempfile::NamedTempFile, Vec<u8>) {
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(&data).unwrap();
    (f, data)
}

fn run(
    script: Vec<Step>,
    then: Option<usize>,
    len: usize,
) -> (Result<usize, Failure>, Vec<u8>, Fake) {
    let (f, data) = data_file(len);
    let mut fake = Fake::new(f.as_file(), script, then);
    let mut buf = vec![0u8; len];
    let got = read_at(&mut fake, f.as_file(), 0, &mut buf);
    if let Ok(n) = got {
        assert_eq!(&buf[..n], &data[..n]);
    }
    (got, data, fake)
}

#[test]
fn a_whole_chunk_in_several_rounds_reads_every_byte() {
    let len = 5 * PIECE + 1234;
    let (got, data, fake) = run(vec![Step::Complete(1), Step::Complete(2)], Some(1), len);
    assert_eq!(got.unwrap(), data.len());
    assert!(fake.queued.is_empty());
}

#[test]
fn interrupted_and_busy_waits_are_retried() {
    let len = 4 * PIECE;
    let script = vec![
        Step::Err(libc::EINTR),
        Step::CompleteThenErr(1, libc::EINTR),
        Step::Err(libc::EAGAIN),
        Step::Err(libc::EBUSY),
        Step::Complete(1),
    ];
    let (got, _, fake) = run(script, Some(1), len);
    assert_eq!(got.unwrap(), len);
    assert!(fake.queued.is_empty());
}

#[test]
fn a_failed_piece_waits_for_the_reads_in_flight_before_returning() {
    // Pieces 0..3 are in flight when piece 1 fails; 0 and 2 must be reaped before the error
    // returns (the old code returned with them still targeting the buffer), and nothing more is
    // submitted after the failure.
    let len = 6 * PIECE;
    let (got, _, fake) = run(vec![Step::FailPiece(1, libc::EIO)], Some(1), len);
    match got {
        Err(Failure::Failed(e)) => assert_eq!(e.raw_os_error(), Some(libc::EIO)),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert!(fake.queued.is_empty(), "returned with reads in flight");
}

#[test]
fn a_hard_ring_error_waits_out_the_reads_in_flight() {
    let len = 3 * PIECE;
    let script = vec![Step::CompleteThenErr(1, libc::EBADF)];
    let (got, _, fake) = run(script, Some(1), len);
    match got {
        Err(Failure::Failed(e)) => assert_eq!(e.raw_os_error(), Some(libc::EBADF)),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert!(fake.queued.is_empty(), "returned with reads in flight");
}

#[test]
fn a_ring_that_never_completes_is_abandoned_not_waited_on_forever() {
    let len = 2 * PIECE;
    let (got, _, fake) = run(vec![Step::Complete(1)], None, len);
    match got {
        Err(Failure::Abandoned(e)) => assert!(e.to_string().contains("never completed"), "{e}"),
        other => panic!("expected abandon, got {other:?}"),
    }
    assert_eq!(fake.queued.len(), 1, "the read left in flight");
}

#[test]
fn a_short_file_reads_what_is_there() {
    let (f, data) = data_file(PIECE + 10);
    let mut fake = Fake::new(f.as_file(), vec![], Some(1));
    let mut buf = vec![0u8; 3 * PIECE];
    let got = read_at(&mut fake, f.as_file(), 0, &mut buf).unwrap();
    assert_eq!(got, data.len());
    assert_eq!(&buf[..got], &data[..]);
}

#[test]
fn the_real_ring_reads_like_pread() {
    let Ok(mut ring) = io_uring::IoUring::new(4) else {
        return; // the kernel refuses io_uring here: the pread path is tested elsewhere
    };
    let len = 3 * PIECE + 77;
    let (f, data) = data_file(len);
    let mut buf = vec![0u8; len + 100];
    let got = read_at(&mut ring, f.as_file(), 0, &mut buf).unwrap();
    assert_eq!(&buf[..got], &data[..]);
}
