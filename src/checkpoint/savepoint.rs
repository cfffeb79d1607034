//! `sluice savepoint`, the client side: ask the job running on a checkpoint directory for a
//! savepoint and wait for its answer; with no job running, export the newest complete checkpoint
//! (a finished or crashed job's last consistent state) instead. Savepoints are written where the
//! user says and never deleted by sluice. A pid file that is not one sluice wrote (not a positive
//! pid, a link) is refused with nothing signalled; one naming a process that is not a live sluice
//! is stale, and said so.

use super::control::{self, ControlError, PidFile, Request};
use super::{CheckpointError, CheckpointStore};
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum SavepointError {
    #[error(transparent)]
    Store(#[from] CheckpointError),
    #[error(transparent)]
    Control(#[from] ControlError),
    #[error("{0}")]
    Refused(String),
}

/// Takes a savepoint into `out`; returns what was done, for the user.
pub fn take(dir: &Path, out: &Path, wait: Duration) -> Result<String, SavepointError> {
    // The job may run in another working directory: it gets an absolute path.
    let out = std::path::absolute(out).map_err(|e| CheckpointError::io(out, e))?;
    let pid_path = control::pid_path(dir);
    let mut stale = String::new();
    match control::pid_file(dir) {
        PidFile::Invalid(why) => {
            return Err(SavepointError::Refused(format!(
                "{}: {why}; no process was signalled (if no job runs on {}, delete the file)",
                pid_path.display(),
                dir.display()
            )))
        }
        PidFile::Stale { pid, why } => {
            stale = format!(
                " ({} names pid {pid}, but {why}: a stale pid file)",
                pid_path.display()
            );
        }
        PidFile::Absent => {}
        PidFile::Running(pid) => {
            if let Some(done) = ask(dir, pid, &out, wait)? {
                return Ok(done);
            }
        }
    }
    let store = CheckpointStore::open(dir)?;
    let (latest, _) = store.latest()?;
    let m = latest.ok_or_else(|| {
        SavepointError::Refused(format!(
            "no job is running on {}{stale} and it holds no complete checkpoint to save",
            dir.display()
        ))
    })?;
    store.export(&m, &out)?;
    Ok(format!(
        "no job is running on {}{stale}: exported its newest complete checkpoint {} as a \
         savepoint to {}",
        dir.display(),
        m.id,
        out.display()
    ))
}

/// Asks the sluice with `pid` running on `dir` for a savepoint into `out` and waits for it; `None`
/// when the job ended before taking it (its last checkpoint is then the state to save).
fn ask(dir: &Path, pid: i32, out: &Path, wait: Duration) -> Result<Option<String>, SavepointError> {
    let nonce = format!("{}-{}", std::process::id(), super::store::unix_ms());
    let req = Request {
        out: out.to_path_buf(),
        nonce: nonce.clone(),
    };
    control::write_request(dir, &req)?;
    control::signal_savepoint(pid)?;
    let start = Instant::now();
    while start.elapsed() < wait {
        if let Some(o) = control::read_outcome(dir, &nonce) {
            return match o.error {
                None => Ok(Some(format!(
                    "savepoint {} of the running job (pid {pid}) written to {}",
                    o.id,
                    o.out.display()
                ))),
                Some(e) => Err(SavepointError::Refused(e)),
            };
        }
        if control::running_pid(dir).is_none() {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if control::running_pid(dir).is_some() {
        return Err(SavepointError::Refused(format!(
            "the job (pid {pid}) did not write the savepoint within {} s",
            wait.as_secs()
        )));
    }
    Ok(None)
}
