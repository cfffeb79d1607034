//! The clock-skew guard through the real binary: a record dated far in the future (a producer
//! whose clock is wrong) or before 1970 goes to the dead letters with its reason and offset, and
//! does not move the watermark: the records after it are not late and their windows fire as usual.

mod common;

use common::{read_lines, sluice, toml_str};
use serde_json::Value;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[test]
fn future_and_negative_times_are_dead_letters_and_leave_the_watermark_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let base = now - 600_000; // ten minutes ago
    let future = now + 2 * 3_600_000; // two hours ahead
    let lines = [
        format!(r#"{{"k":"a","ts":{base}}}"#),
        format!(r#"{{"k":"a","ts":{future}}}"#),
        r#"{"k":"a","ts":-5}"#.to_string(),
        format!(r#"{{"k":"a","ts":{}}}"#, base + 1_000),
        format!(r#"{{"k":"b","ts":{}}}"#, base + 61_000),
    ];
    let input = d.join("in.ndjson");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let cfg = d.join("job.toml");
    let q = |p: &str| toml_str(&d.join(p).to_string_lossy());
    std::fs::write(
        &cfg,
        format!(
            "[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\nevent_time = {{ field = \"ts\", unit = \"ms\" }}\n\
             watermark = {{ max_out_of_orderness = \"0s\" }}\n\n[transforms.w]\ntype = \"window\"\ninputs = [\"ev\"]\n\
             group_by = [\"k\"]\nwindow = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ n = \"count()\" }}\n\n\
             [sinks.out]\ntype = \"file\"\ninputs = [\"w\"]\npath = {}\n\n[dead_letter]\npath = {}\n",
            q("in.ndjson"),
            q("out.ndjson"),
            q("dead.ndjson")
        ),
    )
    .unwrap();
    let run = sluice(
        d,
        &["run", "--config", &cfg.to_string_lossy()],
        Duration::from_secs(60),
    );
    assert!(run.success, "{}", run.stderr);
    assert!(
        run.stderr.contains("0 late dropped, 2 dead letters"),
        "{}",
        run.stderr
    );
    let dead: Vec<Value> = read_lines(&d.join("dead.ndjson"))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(dead.len(), 2);
    let offset_of = |i: usize| lines[..i].iter().map(|l| l.len() as u64 + 1).sum::<u64>();
    assert_eq!(dead[0]["offset"], offset_of(1));
    let why = dead[0]["reason"].as_str().unwrap();
    assert!(
        why.contains("ahead of the wall clock") && why.contains("max_future 3600 s"),
        "{why}"
    );
    assert_eq!(dead[1]["offset"], offset_of(2));
    assert!(
        dead[1]["reason"].as_str().unwrap().contains("before 1970"),
        "{dead:?}"
    );
    // Both "a" records land in one window (the future one did not make the second late).
    let out: Vec<Value> = read_lines(&d.join("out.ndjson"))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let a: Vec<&Value> = out.iter().filter(|v| v["k"] == "a").collect();
    assert_eq!(
        a.iter().map(|v| v["n"].as_u64().unwrap()).sum::<u64>(),
        2,
        "{out:?}"
    );
}
