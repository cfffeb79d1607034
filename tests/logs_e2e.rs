//! Logs: with `--log-format json` every state change is one JSON object on its own stderr line
//! (start, checkpoint, end), with a level and a message; the text format says the same in words.

mod common;

use common::{late_clicks_toml, sluice};
use serde_json::Value;
use std::time::Duration;

#[test]
fn json_logs_are_one_object_per_state_change() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ckpt = format!(
        "[checkpoint]\ndir = {:?}\ninterval = \"1s\"\n",
        d.join("state")
    );
    let toml = late_clicks_toml(
        "shards = 2",
        100_000,
        r#"n = "count()""#,
        &d.join("out.ndjson"),
        &ckpt,
    );
    let cfg = d.join("job.toml");
    std::fs::write(&cfg, toml).unwrap();
    let cfg = cfg.to_string_lossy().into_owned();
    let run = sluice(
        d,
        &["run", "--config", &cfg, "--log-format", "json"],
        Duration::from_secs(60),
    );
    assert!(run.success, "{}", run.stderr);
    let logs: Vec<Value> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let messages: Vec<&str> = logs
        .iter()
        .map(|v| {
            assert!(v["level"].is_string() && v["timestamp"].is_string(), "{v}");
            v["fields"]["message"].as_str().unwrap()
        })
        .collect();
    assert_eq!(messages.first(), Some(&"job started"), "{messages:?}");
    assert_eq!(messages.last(), Some(&"job ended"), "{messages:?}");
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("checkpoint ") && m.ends_with(" completed")),
        "{messages:?}"
    );
    // The text format: the same events in words; a second run resumes and says so.
    let again = sluice(d, &["run", "--config", &cfg], Duration::from_secs(60));
    assert!(
        again.success && again.stderr.contains("INFO resuming from checkpoint"),
        "{}",
        again.stderr
    );
}
