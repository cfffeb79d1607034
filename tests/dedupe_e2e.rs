//! Dedupe through the real binary against a reference in this test: clicks with repeated ids, out
//! of order within the watermark bound, on 1 and 3 shards: the first occurrence of each id in event
//! time passes, repeats within the horizon are removed, a repeat after it passes again.

mod common;

use common::{read_lines, sluice, toml_str};
use std::collections::HashMap;
use std::time::Duration;

#[test]
fn first_occurrences_in_event_time_pass_repeats_within_the_horizon_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 3000 clicks over 300 s with ids drawn from 400: many repeats, some > 60 s apart.
    let mut state = 12345u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut rows: Vec<(u64, i64, usize)> = (0..3000)
        .map(|i| (next(400), i as i64 * 100 + next(100) as i64, i))
        .collect();
    // Arrival: by time plus a jitter below the 2 s bound.
    let mut arrival: Vec<(i64, usize)> = rows
        .iter()
        .map(|r| (r.1 + next(2000) as i64, r.2))
        .collect();
    arrival.sort();
    let line =
        |r: &(u64, i64, usize)| format!(r#"{{"click_id":"c-{}","ts":{},"n":{}}}"#, r.0, r.1, r.2);
    let text: String = arrival
        .iter()
        .map(|(_, i)| line(&rows[*i]) + "\n")
        .collect();
    std::fs::write(d.join("clicks.ndjson"), text).unwrap();
    // Reference: in event-time order, pass when the id's last passed time is >= 60 s earlier.
    rows.sort_by_key(|r| (r.1, r.2));
    let mut last: HashMap<u64, i64> = HashMap::new();
    let mut want: Vec<String> = Vec::new();
    for r in &rows {
        if last.get(&r.0).is_none_or(|&l| r.1 - l >= 60_000) {
            last.insert(r.0, r.1);
            want.push(line(r));
        }
    }
    want.sort();
    assert!(want.len() > 400 && want.len() < 2000, "{}", want.len());
    for shards in [1, 3] {
        let out = d.join(format!("unique-{shards}.ndjson"));
        let cfg = d.join(format!("dedupe-{shards}.toml"));
        std::fs::write(
            &cfg,
            format!(
                r#"[runtime]
shards = {shards}
chunk_bytes = 4096

[sources.clicks]
type = "file"
path = {input}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "2s" }}

[transforms.unique_clicks]
type = "dedupe"
inputs = ["clicks"]
key = ["click_id"]
horizon = "1m"

[sinks.out]
type = "file"
inputs = ["unique_clicks"]
path = {out}
"#,
                input = toml_str(&d.join("clicks.ndjson").to_string_lossy()),
                out = toml_str(&out.to_string_lossy()),
            ),
        )
        .unwrap();
        let run = sluice(
            d,
            &["run", "--config", &cfg.to_string_lossy()],
            Duration::from_secs(60),
        );
        assert!(run.success, "{}", run.stderr);
        assert!(run.stderr.contains("0 late dropped"), "{}", run.stderr);
        let mut got = read_lines(&out);
        got.sort();
        assert_eq!(got, want, "{shards} shards");
    }
}
