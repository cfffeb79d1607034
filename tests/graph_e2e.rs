//! The contract pipeline of the dataflow-graph issue, end to end through the binary on files:
//! clicks deduplicated, matched to their impression within 10 s, priced at the ad's price valid
//! at click time and summed per ad and minute — equal to the reference model in
//! `common::flow_model` (written from the semantics, not from engine code) on 1, 2 and 3 shards,
//! whatever the chunk size and ring capacity; and after `kill -9` three times mid-run with
//! checkpoints, restored on other shard counts, the committed output equals the uninterrupted
//! run's, and so it is after twenty kills at random moments.

mod common;

use common::flow_job::{flow_config_on, flow_data as write_data, kill_after_checkpoint};
use common::flow_model::{assert_spend_eq, read_spend_output, spend_model_dir};
use common::{read_lines, sluice, toml_str};
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);

/// `config/ad_spend.toml` with its paths in `dir`, its runtime set, its output `dir/<name>.ndjson`
/// and `extra` appended.
fn config(dir: &Path, name: &str, runtime: &str, extra: &str) -> String {
    let out = dir.join(format!("{name}.ndjson"));
    flow_config_on(dir, name, runtime, &out, extra)
}

#[test]
fn the_contract_pipeline_equals_the_reference_model_on_any_shard_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_data(d, 30_000, 300, 11);
    let want = spend_model_dir(d);
    assert!(
        want.len() > 500,
        "a non-trivial result: {} windows",
        want.len()
    );
    let mut first: Option<Vec<String>> = None;
    for (i, rt) in [
        "shards = 1",
        "shards = 2",
        "shards = 3\nring_capacity = 16\nchunk_bytes = 4096",
        "shards = 2\nring_capacity = 64\nchunk_bytes = 777",
        "shards = 3\nchunk_bytes = 65536",
    ]
    .iter()
    .enumerate()
    {
        let name = format!("run{i}");
        let cfg = config(d, &name, rt, "");
        let exit = sluice(d, &["run", "--config", &cfg], MIN * 2);
        assert!(exit.success, "{rt}: {}", exit.stderr);
        let out = d.join(format!("{name}.ndjson"));
        assert_spend_eq(&want, &read_spend_output(&out), rt);
        // The same lines whatever the shard count, chunk size or ring capacity.
        let mut lines = read_lines(&out);
        lines.sort();
        match &first {
            None => first = Some(lines),
            Some(f) => assert_eq!(f, &lines, "{rt}: the same output lines"),
        }
    }
}

#[test]
fn kill_9_three_times_and_restore_on_other_shard_counts_gives_the_uninterrupted_output() {
    let resumed = kill_and_finish(150_000, 5, &[(2, 20), (1, 60), (3, 120)]);
    assert!(resumed >= 2, "recovery was exercised only {resumed} times");
}

/// Twenty kills at seeded random moments (0-100 ms after each run's first new checkpoint), each
/// restart on another shard count (1..3): a join and a window chained survive them all exactly.
#[test]
fn kill_9_at_twenty_random_moments_on_changing_shard_counts_gives_the_uninterrupted_output() {
    let mut x: u64 = 0x2071_11A5;
    let kills: Vec<(usize, u64)> = (0..20)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (1 + (i + (x >> 60) as usize) % 3, (x >> 33) % 100)
        })
        .collect();
    let resumed = kill_and_finish(400_000, 9, &kills);
    assert!(
        resumed >= 10,
        "recovery was exercised only {resumed} times of 21 runs"
    );
}

/// Runs the contract pipeline with checkpoints, killing it (`kill -9`) once per `(shards,
/// delay_ms)`: `delay_ms` after that run's first new checkpoint, then finishes it on 2 shards.
/// Asserts the committed output equals the uninterrupted run's (and the reference model's);
/// returns how many runs resumed from a checkpoint.
fn kill_and_finish(events: u64, seed: u64, kills: &[(usize, u64)]) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_data(d, events, 1000, seed);
    let plain = config(d, "plain", "shards = 2", "");
    assert!(sluice(d, &["run", "--config", &plain], MIN * 2).success);
    let mut want = read_lines(&d.join("plain.ndjson"));
    want.sort();
    assert_spend_eq(
        &spend_model_dir(d),
        &read_spend_output(&d.join("plain.ndjson")),
        "plain",
    );

    let state = toml_str(&d.join("state").to_string_lossy());
    let ckpt = format!("\n[checkpoint]\ndir = {state}\ninterval = \"10ms\"\n");
    let mut resumed = 0;
    for (i, &(shards, delay)) in kills.iter().enumerate() {
        let rt = format!("shards = {shards}\nchunk_bytes = 65536");
        let cfg = config(d, "crash", &rt, &ckpt);
        let err = d.join(format!("crash-{i}.txt"));
        let run = kill_after_checkpoint(&cfg, &d.join("state"), Duration::from_millis(delay), &err);
        resumed += usize::from(run.resumed);
    }
    let cfg = config(d, "crash", "shards = 2\nchunk_bytes = 65536", &ckpt);
    let last = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(last.success, "{}", last.stderr);
    resumed += usize::from(last.stderr.contains("resuming from"));
    let mut got = read_lines(&d.join("crash.ndjson"));
    got.sort();
    assert_eq!(got.len(), want.len(), "no line lost or written twice");
    assert_eq!(got, want);
    resumed
}

/// Two unrelated pipelines in one job, both read at a steady rate: a window over a source whose
/// event time covers an hour, and one over a source whose event time stays in its first seconds.
/// Each window's watermark follows its own inputs only, so the first pipeline's windows fire while
/// both are being read; stopped by SIGTERM halfway, the job has written them (a job-wide
/// watermark would have held every one back behind the second source, which is never idle and
/// never ends before the stop).
#[test]
fn an_unrelated_lagging_source_does_not_hold_back_another_pipelines_windows() {
    use std::fmt::Write as _;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (mut fast, mut slow) = (String::new(), String::new());
    for i in 0..10_000i64 {
        let _ = writeln!(fast, r#"{{"k":"a","ts":{}}}"#, 1_699_999_980_000 + i * 360);
        let _ = writeln!(slow, r#"{{"k":"b","ts":{}}}"#, 1_699_999_980_000 + i / 2);
    }
    std::fs::write(d.join("fast.ndjson"), fast).unwrap();
    std::fs::write(d.join("slow.ndjson"), slow).unwrap();
    let p = |f: &str| toml_str(&d.join(f).to_string_lossy());
    let window = |name: &str, input: &str| {
        format!("[transforms.{name}]\ntype = \"window\"\ninputs = [\"{input}\"]\ngroup_by = [\"k\"]\nwindow = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ n = \"count()\" }}\n\n")
    };
    let source = |name: &str, file: &str| {
        format!("[sources.{name}]\ntype = \"file\"\npath = {}\nevent_time = {{ field = \"ts\" }}\nrate_limit = \"2000/s\"\n\n", p(file))
    };
    let cfg = format!(
        "[runtime]\nshards = 2\nchunk_bytes = 4096\n\n{}{}{}{}[sinks.a_out]\ntype = \"file\"\ninputs = [\"a\"]\npath = {}\n\n[sinks.b_out]\ntype = \"file\"\ninputs = [\"b\"]\npath = {}\n",
        source("fast", "fast.ndjson"),
        source("slow", "slow.ndjson"),
        window("a", "fast"),
        window("b", "slow"),
        p("a.ndjson"),
        p("b.ndjson"),
    );
    std::fs::write(d.join("two.toml"), cfg).unwrap();
    let mut child = Command::new(common::BIN)
        .args(["run", "--config", &d.join("two.toml").to_string_lossy()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Both sources take 5 s to read; stop the job halfway.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(child.try_wait().unwrap().is_none(), "still reading");
    // SAFETY: sending a signal to our own child process, whose pid is valid until we wait on it.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < MIN, "did not stop after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success());
    let a = read_lines(&d.join("a.ndjson"));
    assert!(
        (10..60).contains(&a.len()),
        "the first pipeline's windows fired while the lagging source was read: {} of 60",
        a.len()
    );
    for l in &a {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(
            v["n"].as_u64().unwrap() >= 166,
            "a closed minute holds its events: {l}"
        );
    }
    assert!(
        read_lines(&d.join("b.ndjson")).is_empty(),
        "the lagging pipeline's window had not closed"
    );
}
