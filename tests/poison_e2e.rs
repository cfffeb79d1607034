//! A poison flood: 1% of an input's lines are garbage of every kind (binary, cut-off JSON, no or bad
//! event time, wrong types, a bare array). Every one must reach the dead letters with its reason and
//! its exact byte offset, nothing else may, and the window results must equal a count over the good
//! lines only, on 1 and 3 shards. (Throughput and memory under the flood are measured by
//! `scripts/bench_poison.sh`, not asserted here.)
mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

const EVENTS: usize = 200_000;

/// Garbage lines, each refused for a reason the dead letter must say (a word of it).
const GARBAGE: &[(&str, &str)] = &[
    ("\u{1}\u{2}binary\u{7f}", "JSON"),
    (r#"{"ts":17000000,"ad_id":"cut"#, "JSON"),
    (r#"{"ad_id":"no-time","bid":1}"#, "ts"),
    (r#"{"ts":"yesterday","ad_id":"x","bid":1}"#, "ts"),
    (r#"{"ts":1000,"ad_id":"x","bid":"lots"}"#, "bid"),
    (r#"[1,2,3]"#, "object"),
    (r#"{"ts":1000,"ad_id":"x","bid":1}}"#, "trailing"),
    (r#"{"ts":1000,"ad_id":"x","bid":1,"ad_id":"y"}"#, "twice"),
];

struct Input {
    text: String,
    /// Byte offset -> the garbage line's index in GARBAGE.
    garbage: BTreeMap<u64, usize>,
    /// (ad_id, window_start) -> count over the good lines.
    counts: BTreeMap<(String, i64), u64>,
}

fn input() -> Input {
    let mut text = String::new();
    let mut garbage = BTreeMap::new();
    let mut counts = BTreeMap::new();
    let mut x: u64 = 0x0BAD_5EED;
    for i in 0..EVENTS {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if (x >> 33).is_multiple_of(100) {
            let g = ((x >> 40) as usize) % GARBAGE.len();
            garbage.insert(text.len() as u64, g);
            text += GARBAGE[g].0;
            text.push('\n');
            continue;
        }
        // In order, so nothing is late: the counts are the whole truth.
        let ts = 1_700_000_000_000 + i as i64 * 5;
        let ad = format!("ad-{}", (x >> 45) % 50);
        *counts
            .entry((ad.clone(), ts - ts.rem_euclid(60_000)))
            .or_insert(0) += 1;
        text += &format!(
            "{{\"ts\":{ts},\"ad_id\":\"{ad}\",\"bid\":{}}}\n",
            (x >> 50) % 100
        );
    }
    Input {
        text,
        garbage,
        counts,
    }
}

#[test]
fn every_garbage_line_is_a_dead_letter_at_its_offset_and_results_count_only_good_lines() {
    let inp = input();
    assert!(
        inp.garbage.len() > EVENTS / 200,
        "the flood is {} lines",
        inp.garbage.len()
    );
    for shards in [1, 3] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("clicks.ndjson");
        std::fs::write(&data, &inp.text).unwrap();
        let cfg = dir.path().join("job.toml");
        let (out, dead) = (
            dir.path().join("out.ndjson"),
            dir.path().join("dead.ndjson"),
        );
        std::fs::write(
            &cfg,
            format!(
                r#"[runtime]
shards = {shards}
chunk_bytes = 65536

[sources.clicks]
type = "file"
path = "{}"
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "1s" }}

[transforms.per_minute]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1m" }}
aggregates = {{ n = "count()", spend = "sum(bid)" }}

[sinks.out]
type = "file"
inputs = ["per_minute"]
path = "{}"

[dead_letter]
path = "{}"
"#,
                data.display(),
                out.display(),
                dead.display()
            ),
        )
        .unwrap();
        let stats = dir.path().join("stats.json");
        let exit = common::sluice(
            dir.path(),
            &[
                "run",
                "--config",
                cfg.to_str().unwrap(),
                "--stats",
                stats.to_str().unwrap(),
            ],
            Duration::from_secs(120),
        );
        assert!(exit.success, "shards={shards}: {}", exit.stderr);

        let mut seen = BTreeMap::new();
        for line in std::fs::read_to_string(&dead).unwrap().lines() {
            let v: Value = serde_json::from_str(line).expect("a dead letter is one JSON line");
            let off = v["offset"].as_u64().expect("offset");
            let g = *inp.garbage.get(&off).unwrap_or_else(|| {
                panic!("shards={shards}: a good line at {off} dead-lettered: {line}")
            });
            let (raw, word) = GARBAGE[g];
            assert_eq!(v["raw"].as_str(), Some(raw), "shards={shards}: {line}");
            let reason = v["reason"].as_str().unwrap_or("");
            assert!(
                reason.contains(word),
                "shards={shards}: reason {reason:?} for {raw:?}"
            );
            assert!(
                v["partition"]
                    .as_str()
                    .unwrap_or("")
                    .ends_with("clicks.ndjson"),
                "{line}"
            );
            assert!(
                seen.insert(off, ()).is_none(),
                "shards={shards}: offset {off} twice"
            );
        }
        assert_eq!(
            seen.len(),
            inp.garbage.len(),
            "shards={shards}: dead letters lost"
        );
        let st: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert_eq!(st["dead_letters"].as_u64(), Some(inp.garbage.len() as u64));

        let mut got: BTreeMap<(String, i64), u64> = BTreeMap::new();
        for line in std::fs::read_to_string(&out).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let key = (
                v["ad_id"].as_str().unwrap().to_string(),
                v["window_start"].as_i64().unwrap(),
            );
            // The last line of a window is its value (no re-fires here: nothing is late).
            got.insert(key, v["n"].as_u64().unwrap());
        }
        assert_eq!(
            got, inp.counts,
            "shards={shards}: results differ from the good lines' counts"
        );
    }
}
