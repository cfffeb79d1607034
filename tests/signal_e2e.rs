//! SIGINT/SIGTERM on an unbounded job: stop reading, drain, flush whole lines, exit 0 within seconds.
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn run_and_signal(sig: i32) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("job.toml");
    let out = dir.path().join("out.ndjson");
    std::fs::write(
        &cfg,
        format!(
            r#"[runtime]
shards = 2
[sources.clicks]
type = "generator"
events_per_second = 1000000
out_of_orderness = "0s"
watermark = {{ max_out_of_orderness = "100ms", idle_timeout = "30s" }}
[transforms.cps]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1s" }}
aggregates = {{ clicks = "count()" }}
[sinks.out]
type = "file"
inputs = ["cps"]
path = "{}"
"#,
            out.display()
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["run", "--config"])
        .arg(&cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending a signal to our own child process, whose pid is valid until we wait on it.
    unsafe { libc::kill(child.id() as i32, sig) };
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "did not stop within 10 s of the signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit status {status:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.is_empty(),
        "windows that completed before the signal were written"
    );
    assert!(text.ends_with('\n'));
    // Every emitted window is complete: 1M events per second of event time, so each window_start
    // sums to exactly 1,000,000 clicks; nothing in flight was lost or half-counted.
    let mut per_window = std::collections::BTreeMap::<i64, u64>::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("every line is whole JSON");
        *per_window
            .entry(v["window_start"].as_i64().unwrap())
            .or_default() += v["clicks"].as_u64().unwrap();
    }
    assert!(!per_window.is_empty());
    for (start, total) in per_window {
        assert_eq!(total, 1_000_000, "window {start}");
    }
}

#[test]
fn sigint_drains_and_exits_zero() {
    run_and_signal(libc::SIGINT);
}

#[test]
fn sigterm_drains_and_exits_zero() {
    run_and_signal(libc::SIGTERM);
}
