//! A failing sink ends the whole run with an error naming the sink, on every shard count, instead of
//! leaving the other shards waiting for chunks that will never come.
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sink_write_failure_fails_the_run_without_hanging() {
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("job.toml");
        std::fs::write(
            &cfg,
            format!(
                r#"[runtime]
shards = {shards}
[sources.clicks]
type = "generator"
count = 2000000
[transforms.cps]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1s" }}
aggregates = {{ clicks = "count()" }}
[sinks.full]
type = "file"
inputs = ["cps"]
path = "/dev/full"
"#
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
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("shards={shards}: still running 30 s after its sink started failing");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(
            !status.success(),
            "shards={shards}: a failed sink must fail the run"
        );
        assert!(
            err.contains("sink `full`") && err.contains("write failed"),
            "shards={shards}: {err}"
        );
        assert!(
            !err.contains("another shard failed"),
            "the cause is reported, not the echo: {err}"
        );
    }
}
