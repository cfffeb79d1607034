//! `sluice savepoint`, the client side: ask the job running on a checkpoint directory for a
//! savepoint and wait for its answer; with no job running, export the newest complete checkpoint
//! (a finished or crashed job's last consistent state) instead. Savepoints are written where the
//! user says and never deleted by sluice.

use super::control::{self, Request};
use super::{CheckpointError, CheckpointStore};
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum SavepointError {
    #[error(transparent)]
    Store(#[from] CheckpointError),
    #[error("{0}")]
    Refused(String),
}

/// Takes a savepoint into `out`; returns what was done, for the user.
pub fn take(dir: &Path, out: &Path, wait: Duration) -> Result<String, SavepointError> {
    // The job may run in another working directory: it gets an absolute path.
    let out = std::path::absolute(out).map_err(|e| CheckpointError::io(out, e))?;
    if let Some(pid) = control::running_pid(dir) {
        let nonce = format!("{}-{}", std::process::id(), super::store::unix_ms());
        let req = Request {
            out: out.clone(),
            nonce: nonce.clone(),
        };
        control::write_request(dir, &req).map_err(|e| CheckpointError::io(dir, e))?;
        // SAFETY: sends a signal to a pid we just checked is a live sluice; no memory involved.
        if unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR1) } != 0 {
            return Err(SavepointError::Refused(format!(
                "cannot signal sluice (pid {pid}): {}",
                std::io::Error::last_os_error()
            )));
        }
        let start = Instant::now();
        while start.elapsed() < wait {
            if let Some(o) = control::read_outcome(dir, &nonce) {
                return match o.error {
                    None => Ok(format!(
                        "savepoint {} of the running job (pid {pid}) written to {}",
                        o.id,
                        o.out.display()
                    )),
                    Some(e) => Err(SavepointError::Refused(e)),
                };
            }
            if control::running_pid(dir).is_none() {
                break; // ended before taking it: its last checkpoint is the state to save
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if control::running_pid(dir).is_some() {
            return Err(SavepointError::Refused(format!(
                "the job (pid {pid}) did not write the savepoint within {} s",
                wait.as_secs()
            )));
        }
    }
    let store = CheckpointStore::open(dir)?;
    let (latest, _) = store.latest()?;
    let m = latest.ok_or_else(|| {
        SavepointError::Refused(format!(
            "no job is running on {} and it holds no complete checkpoint to save",
            dir.display()
        ))
    })?;
    store.export(&m, &out)?;
    Ok(format!(
        "no job is running on {}: exported its newest complete checkpoint {} as a savepoint to {}",
        dir.display(),
        m.id,
        out.display()
    ))
}
