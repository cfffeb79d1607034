//! Disk full: the checkpoint directory, or a file sink's directory, on a small tmpfs that fills up
//! mid-run. A checkpoint that finds no room fails (counted, reported, its partial folder removed)
//! and the job goes on within `tolerable_failures`; past it, or when the sink cannot write, the job
//! stops with the reason, and once there is room again a restart finishes with exactly the
//! uninterrupted run's output. (Before: a snapshot written through a memory map on a full tmpfs
//! killed the process with SIGBUS.)
//!
//! Needs to mount tmpfs (root, as on the CI machine); says so and passes vacuously elsewhere.
mod common;

use common::flow_job::{flow_config as config, flow_data, sorted_lines as sorted, uninterrupted};
use common::{sluice, toml_str};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);

/// A tmpfs mounted at a path for the test's lifetime.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }

    /// Gives the file system `size` (room comes back).
    fn resize(&self, size: &str) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .unwrap();
        let df = Command::new("df")
            .arg(&self.0)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        assert!(st.success(), "remount to {size} failed:\n{df}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_checkpoint_disk_fails_checkpoints_within_tolerance_then_a_restart_finishes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(fs) = Tmpfs::mount(&d.join("ck"), "6m") else {
        eprintln!("disk_full_e2e: cannot mount tmpfs here (not root?); skipped");
        return;
    };
    flow_data(d, 150_000, 1000, 5);
    let want = uninterrupted(d);
    let state = toml_str(&d.join("ck/state").to_string_lossy());

    // Room for the small checkpoints, not the big ones: some fail, the job goes on.
    let out = d.join("tolerant.ndjson");
    let extra =
        format!("\n[checkpoint]\ndir = {state}\ninterval = \"10ms\"\ntolerable_failures = 1000\n");
    let cfg = config(d, "tolerant", &out, &extra);
    let stats = d.join("tolerant.json");
    let exit = sluice(
        d,
        &["run", "--config", &cfg, "--stats", &stats.to_string_lossy()],
        MIN,
    );
    assert!(
        exit.stderr.contains("No space left on device"),
        "{}",
        exit.stderr
    );
    if exit.success {
        let st: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert!(
            st["checkpoint"]["failed"].as_u64().unwrap_or(0) >= 1,
            "{st}"
        );
        assert_eq!(
            sorted(&out),
            want,
            "output of a run whose checkpoints partly failed"
        );
    } else {
        // The final checkpoint found no room: never tolerated (nothing after it would commit
        // the output it covers), so the job says so and fails; with room, a rerun finishes it.
        assert!(
            exit.stderr.contains("the final checkpoint"),
            "{}",
            exit.stderr
        );
        fs.resize("64m");
        let exit = sluice(d, &["run", "--config", &cfg], MIN);
        assert!(exit.success, "{}", exit.stderr);
        assert_eq!(
            sorted(&out),
            want,
            "a failed final checkpoint, then a rerun"
        );
        // Not shrunk back: the rerun's state can exceed 6 MiB, and a tmpfs cannot shrink below
        // what it holds (the remount fails); the state is removed before the next resize.
    }

    // No room even for the final checkpoint: however many failures are tolerated, the job
    // must not end "successfully" with its last output uncommitted.
    std::fs::remove_dir_all(d.join("ck/state")).unwrap();
    fs.resize("100k");
    let out = d.join("final.ndjson");
    let cfg = config(d, "final", &out, &extra);
    let exit = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(!exit.success, "a failed final checkpoint must fail the run");
    assert!(
        exit.stderr.contains("the final checkpoint"),
        "{}",
        exit.stderr
    );
    fs.resize("64m");
    let exit = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(exit.success, "{}", exit.stderr);
    assert_eq!(
        sorted(&out),
        want,
        "after a failed final checkpoint and a rerun"
    );

    // No failure tolerated: the job stops at the first full-disk checkpoint...
    std::fs::remove_dir_all(d.join("ck/state")).unwrap();
    fs.resize("1m");
    let out = d.join("strict.ndjson");
    let extra =
        format!("\n[checkpoint]\ndir = {state}\ninterval = \"10ms\"\ntolerable_failures = 0\n");
    let cfg = config(d, "strict", &out, &extra);
    let exit = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(!exit.success, "the job must stop past tolerable_failures");
    assert!(
        exit.stderr.contains("No space left on device"),
        "{}",
        exit.stderr
    );
    // ...and once there is room again, a restart finishes with the uninterrupted output.
    fs.resize("64m");
    let exit = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(exit.success, "{}", exit.stderr);
    assert_eq!(sorted(&out), want, "output after a restart with room again");
}

#[test]
fn a_full_sink_disk_stops_the_job_and_a_restart_with_room_finishes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(fs) = Tmpfs::mount(&d.join("sink"), "128k") else {
        eprintln!("disk_full_e2e: cannot mount tmpfs here (not root?); skipped");
        return;
    };
    flow_data(d, 150_000, 1000, 5);
    let want = uninterrupted(d);
    let state = toml_str(&d.join("state").to_string_lossy());
    let out = d.join("sink/out.ndjson");
    let extra = format!("\n[checkpoint]\ndir = {state}\ninterval = \"10ms\"\n");
    let cfg = config(d, "sink", &out, &extra);
    let exit = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(!exit.success, "a sink that cannot write must stop the job");
    assert!(
        exit.stderr.contains("No space left on device") && exit.stderr.contains("out.ndjson"),
        "{}",
        exit.stderr
    );
    fs.resize("64m");
    let exit = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(exit.success, "{}", exit.stderr);
    assert_eq!(
        sorted(&out),
        want,
        "output after the sink's disk had room again"
    );
}
