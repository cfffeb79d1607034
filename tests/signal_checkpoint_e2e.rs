//! SIGTERM while a checkpoint is being written, and right after a savepoint was asked for: the job
//! exits cleanly (status 0, whole lines), the newest checkpoint it leaves is usable (`sluice
//! inspect`, and a restart resumes from it), a savepoint it completed restores, and every path
//! ends with exactly the uninterrupted run's output.
mod common;

use common::flow_job::{flow_config, flow_data, sorted_lines, uninterrupted};
use common::{sluice, toml_str, BIN};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MIN: Duration = Duration::from_secs(60);

fn spawn(cfg: &str, err: &Path) -> Child {
    Command::new(BIN)
        .args(["run", "--config", cfg])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(err).unwrap())
        .spawn()
        .unwrap()
}

fn entries(p: &Path) -> usize {
    std::fs::read_dir(p).map_or(0, |r| r.count())
}

/// Waits until `dir` has more entries than `before` (or the child ended).
fn wait_for_new_entry(child: &mut Child, dir: &Path, before: usize) {
    let start = Instant::now();
    while start.elapsed() < MIN && entries(dir) <= before {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn signal(child: &Child, sig: i32) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill only sends a signal to the child this test spawned (a positive pid).
    unsafe { libc::kill(pid, sig) };
}

/// Waits for the child, killing it (and failing) if it outlives a minute.
fn exit_status(child: &mut Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if start.elapsed() > MIN {
            let _ = child.kill();
            panic!("the job did not exit within a minute of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn sigterm_during_checkpoint_writes_exits_cleanly_and_leaves_a_usable_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    flow_data(d, 300_000, 1000, 7);
    let want = uninterrupted(d);
    let state = d.join("state");
    let extra = format!(
        "\n[checkpoint]\ndir = {}\ninterval = \"10ms\"\n",
        toml_str(&state.to_string_lossy())
    );
    let out = d.join("out.ndjson");
    let cfg = flow_config(d, "job", &out, &extra);
    // Checkpoints of this job's state take tens of ms to write: signals 0-30 ms after a new
    // checkpoint folder appears land inside a write.
    for (i, delay) in [0u64, 3, 8, 15, 30].into_iter().enumerate() {
        let err = d.join(format!("term-{i}.txt"));
        let mut child = spawn(&cfg, &err);
        wait_for_new_entry(&mut child, &state, entries(&state));
        std::thread::sleep(Duration::from_millis(delay));
        signal(&child, libc::SIGTERM);
        let st = exit_status(&mut child);
        let log = std::fs::read_to_string(&err).unwrap();
        assert!(st.success(), "run {i}: SIGTERM must exit 0: {st:?}\n{log}");
        assert!(!log.contains("panicked"), "run {i}: {log}");
        let inspect = sluice(d, &["inspect", &state.to_string_lossy()], MIN);
        assert!(inspect.success, "run {i}: inspect: {}", inspect.stderr);
        let text = sorted_lines(&out).join("\n");
        assert!(
            !text.contains("\n\n"),
            "run {i}: a broken line in the output"
        );
    }
    let last = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(last.success, "{}", last.stderr);
    assert_eq!(
        sorted_lines(&out),
        want,
        "after five SIGTERMs and a last run"
    );
}

#[test]
fn sigterm_right_after_a_savepoint_request_exits_cleanly_and_the_savepoint_restores() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    flow_data(d, 300_000, 1000, 8);
    let want = uninterrupted(d);
    let mut restored = 0;
    for (i, delay) in [0u64, 2, 10, 40].into_iter().enumerate() {
        let state = d.join(format!("state-{i}"));
        let sp = d.join(format!("sp-{i}"));
        let extra = format!(
            "\n[checkpoint]\ndir = {}\ninterval = \"50ms\"\nsavepoint_dir = {}\n",
            toml_str(&state.to_string_lossy()),
            toml_str(&sp.to_string_lossy())
        );
        let out = d.join(format!("out-{i}.ndjson"));
        let cfg = flow_config(d, &format!("job-{i}"), &out, &extra);
        let err = d.join(format!("sp-{i}.txt"));
        let mut child = spawn(&cfg, &err);
        wait_for_new_entry(&mut child, &state, 0);
        signal(&child, libc::SIGUSR1);
        std::thread::sleep(Duration::from_millis(delay));
        signal(&child, libc::SIGTERM);
        let st = exit_status(&mut child);
        let log = std::fs::read_to_string(&err).unwrap();
        assert!(st.success(), "run {i}: {st:?}\n{log}");
        assert!(!log.contains("panicked"), "run {i}: {log}");
        // A savepoint it finished must restore to the uninterrupted output; one it did not
        // finish must not be left looking like one.
        let done: Vec<_> = std::fs::read_dir(&sp)
            .map(|r| r.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        for s in &done {
            let inspect = sluice(d, &["inspect", &s.to_string_lossy()], MIN);
            assert!(
                inspect.success,
                "run {i}: savepoint {} not usable: {}",
                s.display(),
                inspect.stderr
            );
            let fresh = d.join(format!("fresh-{i}"));
            let extra = format!(
                "\n[checkpoint]\ndir = {}\n",
                toml_str(&fresh.to_string_lossy())
            );
            let cfg2 = flow_config(d, &format!("restore-{i}"), &out, &extra);
            let from = s.to_string_lossy();
            let exit = sluice(
                d,
                &["run", "--config", &cfg2, "--from-savepoint", &from],
                MIN,
            );
            assert!(exit.success, "run {i}: restore: {}", exit.stderr);
            assert_eq!(
                sorted_lines(&out),
                want,
                "run {i}: restored from {}",
                s.display()
            );
            restored += 1;
        }
        if done.is_empty() {
            // No savepoint: the checkpoints must still finish the job exactly.
            let exit = sluice(d, &["run", "--config", &cfg], MIN);
            assert!(exit.success, "run {i}: {}", exit.stderr);
            assert_eq!(
                sorted_lines(&out),
                want,
                "run {i}: resumed without a savepoint"
            );
        }
    }
    assert!(
        restored >= 1,
        "no savepoint completed before SIGTERM in any run"
    );
}
