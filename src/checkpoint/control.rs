//! How `sluice savepoint` talks to a running job through its checkpoint directory: the job keeps
//! its pid in `sluice.pid` while it runs; a client writes `savepoint.request` (where to write, and
//! a nonce), sends SIGUSR1, and waits for `savepoint.result` with the same nonce. Files, not a
//! socket, because the directory is the one thing both sides already agree on. Never touches
//! snapshot contents.
//!
//! A pid is trusted only as far as it is checked: the pid file must hold a positive 32-bit pid
//! (sluice writes nothing else; `0`, `-1` or a value past `i32::MAX` would make `kill` signal a
//! process group or every process the user may signal), the process must exist and its
//! `/proc/PID/comm` must be readable and name sluice (unreadable is "not sluice"). The signal goes
//! through a pidfd where the kernel has them, so the process checked is the process signalled even
//! if its pid is reused in between. The control files are created 0600 and never through a link
//! (see [`super::files`]).

use super::files;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

const PID_FILE: &str = "sluice.pid";
const REQUEST_FILE: &str = "savepoint.request";
const RESULT_FILE: &str = "savepoint.result";
/// Bytes read of a pid file at most (a pid has at most 10 digits).
const PID_LIMIT: u64 = 64;
/// Bytes read of a request or result at most (a path and a nonce).
const JSON_LIMIT: u64 = 1 << 20;

/// What can go wrong claiming a directory or signalling its job.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("another sluice (pid {pid}) is running with checkpoint dir {}", dir.display())]
    Running { pid: i32, dir: PathBuf },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("sluice (pid {pid}) is no longer there to signal: {why}")]
    Gone { pid: i32, why: String },
    #[error("cannot signal sluice (pid {pid}): {source}")]
    Signal {
        pid: i32,
        #[source]
        source: io::Error,
    },
}

/// What a client asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Folder to write the savepoint into (absolute: the job may run elsewhere).
    pub out: PathBuf,
    pub nonce: String,
}

/// What the job answers: the savepoint written, or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub nonce: String,
    pub id: u64,
    pub out: PathBuf,
    pub error: Option<String>,
}

/// What `sluice.pid` says about a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PidFile {
    /// No pid file: no job runs there.
    Absent,
    /// A live sluice other than this process runs there.
    Running(i32),
    /// A valid pid, but not of a live sluice (a killed job's file, its pid maybe reused since).
    Stale { pid: i32, why: String },
    /// Not a pid file sluice wrote: why (the text is not a positive pid, or the file is a link or
    /// cannot be read). Nothing is signalled on its word.
    Invalid(String),
}

impl PidFile {
    pub fn running(&self) -> Option<i32> {
        match self {
            PidFile::Running(pid) => Some(*pid),
            _ => None,
        }
    }
}

/// The pid file of `dir`, for messages.
pub fn pid_path(dir: &Path) -> PathBuf {
    dir.join(PID_FILE)
}

/// A pid file's text as a pid: a positive `i32` (surrounding white space allowed), nothing else.
pub fn parse_pid(text: &str) -> Result<i32, String> {
    let t = text.trim();
    match t.parse::<i32>() {
        Ok(pid) if pid > 0 => Ok(pid),
        _ => {
            let shown: String = t.chars().take(40).collect();
            let more = if shown.len() < t.len() { "..." } else { "" };
            Err(format!(
                "{shown:?}{more} is not a process id (sluice writes a positive 32-bit pid there)"
            ))
        }
    }
}

/// Whether a process whose `/proc/PID/comm` reads `comm` is sluice: only when it can be read and
/// names sluice.
fn judge_comm(comm: io::Result<String>) -> Result<(), String> {
    match comm {
        Ok(c) if c.trim_end().starts_with("sluice") => Ok(()),
        Ok(c) => Err(format!("it is `{}`, not sluice", c.trim_end())),
        Err(e) => Err(format!(
            "its /proc entry cannot be read ({e}), so it is not known to be sluice"
        )),
    }
}

/// Ok when `pid` (positive) is a live sluice this user may signal; else why not.
fn sluice_at(pid: i32) -> Result<(), String> {
    debug_assert!(pid > 0);
    // SAFETY: signal 0 sends nothing, it only checks that the process exists and may be
    // signalled; `pid` is positive, so it names that one process and never a group.
    if unsafe { libc::kill(pid, 0) } != 0 {
        let e = io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::EPERM) {
            "it belongs to another user".to_string()
        } else {
            "no such process is running".to_string()
        });
    }
    judge_comm(std::fs::read_to_string(format!("/proc/{pid}/comm")))
}

/// What `dir/sluice.pid` says: read without following a link, validated, and checked against the
/// live process.
pub fn pid_file(dir: &Path) -> PidFile {
    let bytes = match files::read_at_most(&dir.join(PID_FILE), PID_LIMIT) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return PidFile::Absent,
        Err(e) => return PidFile::Invalid(format!("cannot be read: {e}")),
    };
    let pid = match parse_pid(&String::from_utf8_lossy(&bytes)) {
        Ok(pid) => pid,
        Err(why) => return PidFile::Invalid(why),
    };
    if pid.unsigned_abs() == std::process::id() {
        return PidFile::Stale {
            pid,
            why: "that is this process".into(),
        };
    }
    match sluice_at(pid) {
        Ok(()) => PidFile::Running(pid),
        Err(why) => PidFile::Stale { pid, why },
    }
}

/// The pid of the job running on `dir`, if one is.
pub fn running_pid(dir: &Path) -> Option<i32> {
    pid_file(dir).running()
}

/// Sends SIGUSR1 to the sluice with `pid` after checking once more that it is one: through a pidfd
/// where the kernel offers them (Linux 5.3 on), so that the process checked is the one signalled,
/// or the signal fails; with a plain `kill` elsewhere.
pub fn signal_savepoint(pid: i32) -> Result<(), ControlError> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    if pid <= 0 {
        return Err(ControlError::Gone {
            pid,
            why: "not a process id".into(),
        });
    }
    let gone = |why| ControlError::Gone { pid, why };
    // SAFETY: pidfd_open takes a pid and flags and returns a new file descriptor or -1; no memory
    // is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOSYS) {
            return Err(gone(e.to_string()));
        }
        sluice_at(pid).map_err(gone)?;
        // SAFETY: `pid` is positive, so this signals that one process, just checked to be sluice.
        if unsafe { libc::kill(pid, libc::SIGUSR1) } != 0 {
            let source = io::Error::last_os_error();
            return Err(ControlError::Signal { pid, source });
        }
        return Ok(());
    }
    // SAFETY: `fd` was just returned by pidfd_open, is open, and nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    sluice_at(pid).map_err(gone)?;
    // SAFETY: `fd` is an open pidfd; a null siginfo makes this act as kill(2); flags must be 0.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            libc::SIGUSR1,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if r != 0 {
        let source = io::Error::last_os_error();
        return Err(ControlError::Signal { pid, source });
    }
    Ok(())
}

fn io_err(path: PathBuf) -> impl FnOnce(io::Error) -> ControlError {
    move |source| ControlError::Io { path, source }
}

/// Writes `value` as JSON to `dir/name` atomically (see [`files::replace`]), so a reader never
/// sees half of it and a link planted at the name is replaced, not written through.
fn write_json<T: Serialize>(dir: &Path, name: &str, value: &T) -> Result<(), ControlError> {
    let bytes = serde_json::to_vec(value).map_err(|e| ControlError::Io {
        path: dir.join(name),
        source: io::Error::other(e),
    })?;
    files::replace(dir, name, &bytes, false).map_err(io_err(dir.join(name)))
}

fn read_json<T: for<'a> Deserialize<'a>>(path: &Path) -> Option<T> {
    serde_json::from_slice(&files::read_at_most(path, JSON_LIMIT).ok()?).ok()
}

/// Claims `dir` for this process; refused while another live sluice runs on it (two jobs writing
/// one checkpoint directory would corrupt each other's state and output). A stale or invalid pid
/// file (or a link at its name) is replaced.
pub fn claim(dir: &Path) -> Result<(), ControlError> {
    match pid_file(dir) {
        PidFile::Running(pid) => {
            return Err(ControlError::Running {
                pid,
                dir: dir.to_path_buf(),
            })
        }
        PidFile::Invalid(why) => {
            tracing::warn!("{}: {why}; replacing it", dir.join(PID_FILE).display())
        }
        PidFile::Absent | PidFile::Stale { .. } => {}
    }
    write_json(dir, PID_FILE, &std::process::id())
}

/// Releases `dir` at the end of a run: removes the pid file if it is still this process's.
pub fn release(dir: &Path) {
    let path = dir.join(PID_FILE);
    let ours = files::read_at_most(&path, PID_LIMIT)
        .ok()
        .and_then(|b| parse_pid(&String::from_utf8_lossy(&b)).ok())
        .is_some_and(|pid| pid.unsigned_abs() == std::process::id());
    if ours {
        let _ = std::fs::remove_file(path);
    }
}

pub fn write_request(dir: &Path, r: &Request) -> Result<(), ControlError> {
    let _ = std::fs::remove_file(dir.join(RESULT_FILE));
    write_json(dir, REQUEST_FILE, r)
}

/// Takes the pending request, if a client left one (a link at its name is removed, not read).
pub fn take_request(dir: &Path) -> Option<Request> {
    let p = dir.join(REQUEST_FILE);
    let r = read_json(&p);
    let _ = std::fs::remove_file(p);
    r
}

pub fn write_outcome(dir: &Path, o: &Outcome) -> Result<(), ControlError> {
    write_json(dir, RESULT_FILE, o)
}

/// The job's answer to the request with `nonce`, once there is one.
pub fn read_outcome(dir: &Path, nonce: &str) -> Option<Outcome> {
    read_json::<Outcome>(&dir.join(RESULT_FILE)).filter(|o| o.nonce == nonce)
}

#[cfg(test)]
mod tests;
