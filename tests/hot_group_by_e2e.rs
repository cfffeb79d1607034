//! Hot keys of a GROUP BY without a window, end to end: one ad with 80% of 40 000 clicks, Flink's
//! mini-batch settings (`table.exec.mini-batch.enabled`, which turns on the two-phase
//! aggregation of hot groups) and a `sluice.hot_keys` hint on a global aggregate. On 1 to 3
//! shards and chunk sizes from 512 bytes to 1 MiB, each changelog materialises to a model
//! computed here from the input lines (COUNT, SUM, MIN, MAX, Flink's truncated AVG, exact
//! COUNT(DISTINCT), FILTER: more fields than an event header holds, so the hot ad's records are
//! folded from their payload); combining must really happen on 2 and 3 shards (partials merged, most of the
//! hot ad's events combined) and only shorten the changelog.

mod common;

use common::changelog::{materialise_debezium, materialise_print};
use common::{read_lines, sluice, toml_str};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// (ad, user, bid) of the valid lines, in order.
type Click = (String, i64, i64);

/// 40 000 clicks, `a0` 80%, the rest over 40 ads, 3 000 users; one malformed line.
fn clicks() -> (String, Vec<Click>) {
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut text, mut valid) = (String::new(), Vec::new());
    for i in 0..40_000 {
        if i == 20_000 {
            text.push_str("{\"ad_id\": \"a0\", \"bid\": oops}\n");
        }
        let r = next();
        let ad = match r % 10 {
            0 | 1 => format!("a{}", 1 + (r >> 8) % 40),
            _ => "a0".to_string(),
        };
        let user = ((r >> 20) % 3000) as i64;
        let bid = ((r >> 40) % 1000) as i64 - 100;
        text.push_str(&format!(
            "{{\"ad_id\":\"{ad}\",\"user_id\":{user},\"bid\":{bid}}}\n"
        ));
        valid.push((ad, user, bid));
    }
    (text, valid)
}

fn sql(dir: &Path) -> String {
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    format!(
        "SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '5000';
CREATE TABLE clicks (ad_id STRING, user_id BIGINT, bid BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE per_ad (ad_id STRING, n BIGINT, spend BIGINT, lo BIGINT, hi BIGINT,
    avg_bid BIGINT, users BIGINT, big BIGINT, refunds BIGINT, big_users BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');
CREATE TABLE totals (n BIGINT, spend BIGINT, users BIGINT) WITH ('connector' = 'print');
INSERT INTO per_ad SELECT ad_id, COUNT(*), SUM(bid), MIN(bid), MAX(bid), AVG(bid),
  COUNT(DISTINCT user_id), COUNT(*) FILTER (WHERE bid > 500),
  SUM(bid) FILTER (WHERE bid < 0), COUNT(DISTINCT user_id) FILTER (WHERE bid > 800)
  FROM clicks GROUP BY ad_id;
INSERT INTO totals SELECT COUNT(*), SUM(bid), COUNT(DISTINCT user_id)
  FROM clicks /*+ OPTIONS('sluice.hot_keys' = 'salt') */;
",
        p("clicks.ndjson"),
        p("per_ad"),
    )
}

/// The model's rows of `per_ad` (debezium `after` images) and `totals` (print rows).
fn model(valid: &[Click]) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
    let mut groups: BTreeMap<&str, Vec<(i64, i64)>> = BTreeMap::new();
    for (ad, user, bid) in valid {
        groups.entry(ad).or_default().push((*user, *bid));
    }
    let mut per_ad = BTreeMap::new();
    for (ad, rows) in &groups {
        let bids: Vec<i64> = rows.iter().map(|r| r.1).collect();
        let sum: i64 = bids.iter().sum();
        let users: BTreeSet<i64> = rows.iter().map(|r| r.0).collect();
        let refunds: Vec<i64> = bids.iter().copied().filter(|b| *b < 0).collect();
        let big_users: BTreeSet<i64> = rows.iter().filter(|r| r.1 > 800).map(|r| r.0).collect();
        let row = serde_json::json!({
            "ad_id": ad, "n": bids.len(), "spend": sum,
            "lo": bids.iter().min(), "hi": bids.iter().max(),
            // Flink's AVG of a BIGINT column is a BIGINT: the quotient truncated.
            "avg_bid": sum / bids.len() as i64, "users": users.len(),
            "big": bids.iter().filter(|b| **b > 500).count(),
            // SUM over no rows is NULL.
            "refunds": (!refunds.is_empty()).then(|| refunds.iter().sum::<i64>()),
            "big_users": big_users.len(),
        });
        per_ad.insert(row.to_string(), 1);
    }
    let users: BTreeSet<i64> = valid.iter().map(|c| c.1).collect();
    let spend: i64 = valid.iter().map(|c| c.2).sum();
    let totals = BTreeMap::from([(format!("[{}, {spend}, {}]", valid.len(), users.len()), 1)]);
    (per_ad, totals)
}

fn sum_of(stats: &Value, field: &str) -> u64 {
    (stats["per_shard"].as_array().expect("per_shard").iter())
        .map(|p| p[field].as_u64().expect("a count"))
        .sum()
}

#[test]
fn hot_groups_combined_on_any_shard_count_materialise_to_the_model() {
    let (text, valid) = clicks();
    let (per_ad, totals) = model(&valid);
    let hot = valid.iter().filter(|c| c.0 == "a0").count() as u64;
    assert!((31_000..33_000).contains(&hot), "a0 has {hot} of 40000");
    let mut lines_on_one = 0;
    for (shards, chunk) in [
        (1, 1 << 20),
        (2, 512),
        (2, 1 << 16),
        (3, 4096),
        (3, 1 << 20),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("clicks.ndjson"), &text).unwrap();
        std::fs::write(d.join("job.sql"), sql(d)).unwrap();
        let cfg = format!(
            "[runtime]\nshards = {shards}\nchunk_bytes = {chunk}\n\n[pipeline]\nsql = {}\n\n[dead_letter]\npath = {}\n",
            toml_str(&d.join("job.sql").to_string_lossy()),
            toml_str(&d.join("dead.ndjson").to_string_lossy())
        );
        std::fs::write(d.join("job.toml"), cfg).unwrap();
        let path = |n: &str| d.join(n).to_string_lossy().into_owned();
        let (cfg, stats) = (path("job.toml"), path("stats.json"));
        let args = ["run", "--config", &cfg, "--stats", &stats];
        let exit = sluice(d, &args, Duration::from_secs(120));
        let ctx = format!("{shards} shard(s), chunks of {chunk} bytes");
        assert!(exit.success, "{ctx}: {}", exit.stderr);
        let changelog = d.join("per_ad/part-0.json");
        assert_eq!(materialise_debezium(&changelog), per_ad, "{ctx}");
        assert_eq!(materialise_print(&exit.stdout), totals, "{ctx}");
        let dead = read_lines(&d.join("dead.ndjson"));
        assert_eq!(dead.len(), 1, "{ctx}: {dead:?}");
        let stats: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        let (combined, partials) = (
            sum_of(&stats, "events_combined"),
            sum_of(&stats, "partials_merged"),
        );
        let lines = read_lines(&changelog).len();
        if shards == 1 {
            // One shard owns every group: nothing to spread, nothing combined.
            assert_eq!((combined, partials), (0, 0), "{ctx}");
            lines_on_one = lines;
        } else {
            // The salted global aggregate combines (nearly) every click, auto most of the hot
            // ad's (wide records, from their payload) once it has been seen hot; with 1 MiB
            // chunks the 2 MB file is two chunks, read before detection has seen much.
            assert!(
                combined > 60_000 || chunk == 1 << 20,
                "{ctx}: only {combined} events combined"
            );
            assert!(
                partials > 0 && partials * 5 < combined,
                "{ctx}: {partials} partials"
            );
            assert!(
                lines < lines_on_one,
                "{ctx}: {lines} changelog lines, {lines_on_one} on 1 shard"
            );
        }
    }
}
