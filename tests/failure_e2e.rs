//! A failing sink ends the whole run with an error naming the sink, on every shard count, instead of
//! leaving the other shards waiting for chunks that will never come.
mod common;

use std::time::Duration;

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
        // The shared harness kills the run and fails the test if it outlives the timeout.
        let cfg = cfg.to_str().unwrap();
        let exit = common::sluice(
            dir.path(),
            &["run", "--config", cfg],
            Duration::from_secs(30),
        );
        let err = exit.stderr;
        assert!(
            !exit.success,
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
