//! Savepoints and failed checkpoints through the real binary: a savepoint of a running job
//! restores on fewer and on more shards with results identical to an uninterrupted run; a restore
//! that would drop or misread state is refused by name unless allowed; a bare SIGUSR1 writes a
//! savepoint to the default folder; failed checkpoints are counted, tolerated up to the limit, and
//! lose no line; a pid file that names no sluice (0, -1, out of range, garbage, another program) is
//! refused with a clear message and signals nobody.

mod common;

use common::{late_clicks_toml, read_lines, sluice, BIN};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MIN: Duration = Duration::from_secs(60);

/// The late-clicks job; `name` picks output, state dir and config file; `extra_ckpt` and
/// `aggregates` vary what a restore must check.
fn config(dir: &Path, name: &str, events: u64, ckpt: Option<&str>, aggregates: &str) -> String {
    let out = dir.join(format!("{name}.ndjson"));
    let tail = ckpt.map_or(String::new(), |extra| {
        format!(
            "[checkpoint]\ndir = {:?}\n{extra}\n",
            dir.join(format!("{name}-state"))
        )
    });
    let toml = late_clicks_toml(
        "shards = 2\nchunk_bytes = 65536",
        events,
        aggregates,
        &out,
        &tail,
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

const AGGS: &str = r#"clicks = "count()", spend = "sum(bid)", users = "count_distinct(user_id)""#;

fn sorted_lines(dir: &Path, name: &str) -> Vec<String> {
    let mut v = read_lines(&dir.join(format!("{name}.ndjson")));
    v.sort();
    v
}

fn spawn(args: &[&str], stderr: &Path, env: &[(&str, &str)]) -> Child {
    Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

/// Waits until `state` holds a completed checkpoint (the job is running and checkpointing).
fn wait_for_checkpoint(state: &Path) {
    let start = Instant::now();
    while start.elapsed() < MIN {
        let done = std::fs::read_dir(state).ok().is_some_and(|rd| {
            rd.filter_map(Result::ok)
                .any(|e| e.path().join("manifest.json").exists())
        });
        if done {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no checkpoint in {} within a minute", state.display());
}

fn arg(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn a_running_jobs_savepoint_restores_on_one_and_on_three_shards_with_identical_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let events = 4_000_000;
    let plain = config(d, "plain", events, None, AGGS);
    assert!(sluice(d, &["run", "--config", &plain], MIN * 3).success);
    let want = sorted_lines(d, "plain");
    assert!(want.len() > 10_000);

    let job = config(d, "sp", events, Some("interval = \"20ms\""), AGGS);
    let mut child = spawn(&["run", "--config", &job], &d.join("job-stderr.txt"), &[]);
    let state = d.join("sp-state");
    wait_for_checkpoint(&state);
    // A bare SIGUSR1: a savepoint into `<dir>/savepoints/savepoint-<id>`.
    // SAFETY: signals the child we spawned and have not waited for: its pid is still its own.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGUSR1) },
        0
    );
    wait_for_checkpoint(&state.join("savepoints"));
    // `sluice savepoint`: into the folder asked for, answered when written.
    let sp = d.join("savepoints/first");
    let taken = sluice(d, &["savepoint", "--config", &job, "--out", &arg(&sp)], MIN);
    let _ = child.kill(); // SIGKILL mid-run: the savepoint is all that is restored from
    let _ = child.wait();
    assert!(taken.success, "{}", taken.stderr);
    assert!(
        taken.stdout.contains("of the running job"),
        "the job ended before the savepoint was asked for; make the input larger: {}",
        taken.stdout
    );
    let listed = sluice(d, &["inspect", &arg(&sp)], MIN);
    assert!(
        listed.stdout.contains("savepoint ")
            && listed.stdout.contains("shard 1: key groups")
            && listed.stdout.contains("window per_ad: Tumbling"),
        "{}",
        listed.stdout
    );
    let job_stderr = std::fs::read_to_string(d.join("job-stderr.txt")).unwrap();
    assert_eq!(job_stderr.matches("written to").count(), 2, "{job_stderr}");

    for shards in ["1", "3"] {
        let r = sluice(
            d,
            &[
                "run",
                "--config",
                &job,
                "--from-savepoint",
                &arg(&sp),
                "--shards",
                shards,
            ],
            MIN * 3,
        );
        assert!(r.success, "{}", r.stderr);
        assert!(r.stderr.contains("resuming from savepoint"), "{}", r.stderr);
        assert_eq!(
            sorted_lines(d, "sp"),
            want,
            "restored on {shards} shards from the savepoint"
        );
    }
    // The savepoint is the user's: still whole after runs that applied retention around it.
    let again = sluice(d, &["inspect", &arg(&sp)], MIN);
    assert!(again.stdout.contains("complete"), "{}", again.stdout);
}

#[test]
fn a_restore_that_would_drop_or_misread_state_is_refused_by_name_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = config(d, "j", 200_000, Some("interval = \"5ms\""), AGGS);
    assert!(sluice(d, &["run", "--config", &job], MIN).success);
    // No job running: the newest checkpoint (the finished run's final one) is exported.
    let sp = d.join("sp");
    let taken = sluice(d, &["savepoint", "--config", &job, "--out", &arg(&sp)], MIN);
    assert!(
        taken.success && taken.stdout.contains("no job is running"),
        "{}{}",
        taken.stdout,
        taken.stderr
    );
    let twice = sluice(d, &["savepoint", "--config", &job, "--out", &arg(&sp)], MIN);
    assert!(
        !twice.success && twice.stderr.contains("not empty"),
        "{}",
        twice.stderr
    );

    let from = ["--from-savepoint", &arg(&sp)];
    // Other key groups: refused, whatever else.
    let kg = std::fs::read_to_string(&job)
        .unwrap()
        .replace("shards = 2", "shards = 2\nkey_groups = 64");
    let kg_path = d.join("kg.toml");
    std::fs::write(&kg_path, kg).unwrap();
    let r = sluice(
        d,
        &[&["run", "--config", &arg(&kg_path)][..], &from[..]].concat(),
        MIN,
    );
    assert!(
        !r.success && r.stderr.contains("key_groups = 720") && r.stderr.contains("64"),
        "{}",
        r.stderr
    );
    // The window now sums another field: its saved accumulators would be misread.
    let changed = std::fs::read_to_string(&job)
        .unwrap()
        .replace(r#"spend = "sum(bid)""#, r#"spend = "max(bid)""#);
    let changed_path = d.join("changed.toml");
    std::fs::write(&changed_path, changed).unwrap();
    let changed_arg = arg(&changed_path);
    let run_changed = |extra: &[&str]| {
        let args = [&["run", "--config", &changed_arg][..], &from[..], extra].concat();
        sluice(d, &args, MIN)
    };
    let r = run_changed(&[]);
    assert!(
        !r.success
            && r.stderr.contains("window `per_ad` was saved as")
            && r.stderr.contains("--allow-dropped-state"),
        "{}",
        r.stderr
    );
    let r = run_changed(&["--allow-dropped-state"]);
    assert!(
        r.success && r.stderr.contains("dropping state"),
        "{}",
        r.stderr
    );
}

#[test]
fn failed_checkpoints_are_counted_tolerated_up_to_the_limit_and_lose_no_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let events = 400_000;
    let plain = config(d, "plain", events, None, AGGS);
    assert!(sluice(d, &["run", "--config", &plain], MIN).success);
    let want = sorted_lines(d, "plain");

    // Checkpoints 2 and 3 fail; two in a row are tolerated.
    let ok = config(
        d,
        "ok",
        events,
        Some("interval = \"1ms\"\ntolerable_failures = 2"),
        AGGS,
    );
    let stats = d.join("ok-stats.json");
    let mut child = spawn(
        &["run", "--config", &ok, "--stats", &arg(&stats)],
        &d.join("ok-stderr.txt"),
        &[("SLUICE_FAIL_CHECKPOINTS", "2,3")],
    );
    assert!(child.wait().unwrap().success());
    let err = std::fs::read_to_string(d.join("ok-stderr.txt")).unwrap();
    assert!(
        err.contains("checkpoint 2 failed") && err.contains("2 in a row; 2 tolerated"),
        "{err}"
    );
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let c = &s["checkpoint"];
    assert_eq!(c["failed"], 2, "{c}");
    assert!(c["completed"].as_u64().unwrap() >= 2, "{c}");
    assert!(c["last_size_bytes"].as_u64().unwrap() > 0, "{c}");
    assert_eq!(
        sorted_lines(d, "ok"),
        want,
        "failed checkpoints' lines commit later"
    );

    // One tolerated: the second in a row stops the job; a restart resumes and loses nothing.
    let strict = config(
        d,
        "strict",
        events,
        Some("interval = \"1ms\"\ntolerable_failures = 1"),
        AGGS,
    );
    let mut child = spawn(
        &["run", "--config", &strict],
        &d.join("strict-stderr.txt"),
        &[("SLUICE_FAIL_CHECKPOINTS", "2,3")],
    );
    assert!(!child.wait().unwrap().success());
    let err = std::fs::read_to_string(d.join("strict-stderr.txt")).unwrap();
    assert!(err.contains("checkpoint: checkpoint 3 failed"), "{err}");
    let r = sluice(d, &["run", "--config", &strict], MIN);
    assert!(
        r.success && r.stderr.contains("resuming from checkpoint 1"),
        "{}",
        r.stderr
    );
    assert_eq!(sorted_lines(d, "strict"), want);
}

/// `sluice savepoint` in a process group of its own, so that a regression that signals "process
/// group 0" hits only that process; returns its exit status and stderr.
fn savepoint_alone(job: &str, out: &Path, stderr: &Path) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(BIN)
        .args([
            "savepoint",
            "--config",
            job,
            "--out",
            &arg(out),
            "--timeout",
            "2",
        ])
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > MIN {
            let _ = child.kill();
            panic!("sluice savepoint did not end within a minute");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (status, std::fs::read_to_string(stderr).unwrap())
}

#[test]
fn a_pid_file_that_names_no_sluice_is_refused_clearly_and_signals_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = config(d, "pidf", 1000, Some("interval = \"1s\""), AGGS);
    let state = d.join("pidf-state");
    std::fs::create_dir_all(&state).unwrap();
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let sleeping = sleeper.id().to_string();
    // Read as u32 and cast to pid_t these name the caller's process group (0) and every process
    // it may signal (-1, 4294967295): the harmless ones come first, and `0` (confined to its own
    // process group above) before the `-1`s, so a regression stops the test before it can reach
    // other processes.
    let cases = [
        ("12abc", "not a process id"),
        ("", "not a process id"),
        ("2147483648", "not a process id"),
        ("0", "not a process id"),
        ("-1", "not a process id"),
        ("4294967295", "not a process id"),
        (sleeping.as_str(), "not sluice"),
    ];
    for (i, (content, why)) in cases.into_iter().enumerate() {
        std::fs::write(state.join("sluice.pid"), content).unwrap();
        let out = d.join(format!("sp-{i}"));
        let (status, stderr) = savepoint_alone(&job, &out, &d.join(format!("sp-{i}.txt")));
        assert_eq!(
            status.signal(),
            None,
            "pid file {content:?}: `sluice savepoint` was killed by a signal (it signalled itself)"
        );
        assert!(
            !status.success() && stderr.contains("sluice.pid") && stderr.contains(why),
            "pid file {content:?}: want a refusal naming sluice.pid and saying {why:?}: {stderr}"
        );
        assert!(
            sleeper.try_wait().unwrap().is_none(),
            "pid file {content:?}: the sleep process was signalled"
        );
        assert!(!out.exists(), "pid file {content:?}: nothing is written");
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}
