//! How `sluice savepoint` talks to a running job through its checkpoint directory: the job keeps
//! its pid in `sluice.pid` while it runs; a client writes `savepoint.request` (where to write, and
//! a nonce), sends SIGUSR1, and waits for `savepoint.result` with the same nonce. Files, not a
//! socket, because the directory is the one thing both sides already agree on. Never touches
//! snapshot contents.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

const PID_FILE: &str = "sluice.pid";
const REQUEST_FILE: &str = "savepoint.request";
const RESULT_FILE: &str = "savepoint.result";

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

/// Writes `value` as JSON to `dir/name` atomically (temp file + rename), so a reader never sees
/// half of it.
fn write_json<T: Serialize>(dir: &Path, name: &str, value: &T) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(
        &tmp,
        serde_json::to_vec(value).map_err(std::io::Error::other)?,
    )?;
    std::fs::rename(tmp, dir.join(name))
}

fn read_json<T: for<'a> Deserialize<'a>>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Whether `pid` is a live sluice process (a stale pid file from a killed job, or a pid since
/// reused by something else, is not).
fn is_live_sluice(pid: u32) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only checks the pid exists and may be signalled.
    let alive = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
    alive
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim_end().starts_with("sluice"))
            .unwrap_or(true)
}

/// The pid of the job running on `dir`, if one is.
pub fn running_pid(dir: &Path) -> Option<u32> {
    let pid: u32 = std::fs::read_to_string(dir.join(PID_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (pid != std::process::id() && is_live_sluice(pid)).then_some(pid)
}

/// Claims `dir` for this process; refused while another live sluice runs on it (two jobs writing
/// one checkpoint directory would corrupt each other's state and output).
pub fn claim(dir: &Path) -> Result<(), String> {
    if let Some(pid) = running_pid(dir) {
        return Err(format!(
            "another sluice (pid {pid}) is running with checkpoint dir {}",
            dir.display()
        ));
    }
    write_json(dir, PID_FILE, &std::process::id())
        .map_err(|e| format!("{}: {e}", dir.join(PID_FILE).display()))
}

/// Releases `dir` at the end of a run.
pub fn release(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(PID_FILE));
}

pub fn write_request(dir: &Path, r: &Request) -> std::io::Result<()> {
    let _ = std::fs::remove_file(dir.join(RESULT_FILE));
    write_json(dir, REQUEST_FILE, r)
}

/// Takes the pending request, if a client left one.
pub fn take_request(dir: &Path) -> Option<Request> {
    let p = dir.join(REQUEST_FILE);
    let r = read_json(&p);
    let _ = std::fs::remove_file(p);
    r
}

pub fn write_outcome(dir: &Path, o: &Outcome) -> std::io::Result<()> {
    write_json(dir, RESULT_FILE, o)
}

/// The job's answer to the request with `nonce`, once there is one.
pub fn read_outcome(dir: &Path, nonce: &str) -> Option<Outcome> {
    read_json::<Outcome>(&dir.join(RESULT_FILE)).filter(|o| o.nonce == nonce)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_or_own_pid_file_does_not_count_as_a_running_job() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(running_pid(dir.path()), None);
        claim(dir.path()).unwrap();
        assert_eq!(
            running_pid(dir.path()),
            None,
            "our own pid is not another job"
        );
        std::fs::write(dir.path().join(PID_FILE), "4194304").unwrap(); // above pid_max
        assert_eq!(running_pid(dir.path()), None);
        claim(dir.path()).unwrap();
        release(dir.path());
        assert!(!dir.path().join(PID_FILE).exists());
    }

    #[test]
    fn request_and_outcome_round_trip_and_match_by_nonce() {
        let dir = tempfile::tempdir().unwrap();
        let r = Request {
            out: "/tmp/sp".into(),
            nonce: "n1".into(),
        };
        write_request(dir.path(), &r).unwrap();
        assert_eq!(take_request(dir.path()), Some(r));
        assert_eq!(take_request(dir.path()), None, "a request is served once");
        let o = Outcome {
            nonce: "n1".into(),
            id: 7,
            out: "/tmp/sp".into(),
            error: None,
        };
        write_outcome(dir.path(), &o).unwrap();
        assert_eq!(read_outcome(dir.path(), "n2"), None);
        assert_eq!(read_outcome(dir.path(), "n1"), Some(o));
    }
}
