//! Window results as a stream with a time attribute, through the real binary: `window_time` of a
//! window aggregation is its results' time attribute (as in Flink), so a later window rolls them
//! up and an interval join meets them with raw rows (Nexmark q7's highest bid per window); a
//! window without aggregates gives the distinct keys per window. Rows worked out by hand below.

mod common;

use common::read_lines;
use common::sql::run_sql;
use serde_json::{json, Value};
use std::path::Path;

/// 2023-11-14 22:13:20 UTC: a multiple of 10 s.
const B: i64 = 1_700_000_000_000;

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn window_results_roll_up_and_join_back_through_window_time() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    // (auction, price, second): windows of 10 s at 0, 10, 20.
    let bids = [
        (1, 5, 0),
        (2, 9, 3),
        (1, 9, 7), // ties the maximum of [0, 10): both bids are the highest
        (3, 4, 12),
        (1, 7, 19),
        (2, 2, 25),
        (3, 8, 29), // the maximum of [20, 30) at 29.999 would still be in; 29 is
        (1, 1, 41), // moves the watermark past 30 s: every window above closes
    ];
    let lines: Vec<String> = bids
        .iter()
        .map(|(a, p, s)| json!({"auction": a, "price": p, "ts": B + s * 1000}).to_string())
        .collect();
    std::fs::write(dir.join("bid.ndjson"), lines.join("\n") + "\n").unwrap();
    let sql = format!(
        "CREATE TABLE bid (auction BIGINT, price BIGINT, ts BIGINT, dt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR dt AS dt - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE highest (auction BIGINT, price BIGINT, at_s BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE rollup (window_start TIMESTAMP(3), bids BIGINT, top BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE keys (auction BIGINT, window_start TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE VIEW per10 AS
SELECT MAX(price) AS maxprice, COUNT(*) AS n, window_time
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dt), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, window_time;
INSERT INTO highest
SELECT B.auction, B.price, SECOND(B.dt) FROM bid B JOIN per10 B1 ON B.price = B1.maxprice
WHERE B.dt BETWEEN B1.window_time - INTERVAL '9.999' SECOND AND B1.window_time;
INSERT INTO rollup
SELECT window_start, SUM(n), MAX(maxprice)
FROM TABLE(TUMBLE(TABLE per10, DESCRIPTOR(window_time), INTERVAL '30' SECOND))
GROUP BY window_start, window_end;
INSERT INTO keys
SELECT auction, window_start FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dt), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;",
        path(&dir.join("bid.ndjson")),
        path(&dir.join("highest")),
        path(&dir.join("rollup")),
        path(&dir.join("keys"))
    );
    run_sql(dir, &sql);
    let rows = |name: &str| {
        let mut v: Vec<String> = read_lines(&dir.join(name).join("part-0.json"));
        v.sort();
        v.iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect::<Vec<Value>>()
    };
    // Seconds after B (22:13:20): [0,10): max 9, bids at 3 s and 7 s; [10,20): max 7 at 19 s;
    // [20,30): max 8 at 29 s; [40,50): max 1 at 41 s (the end of input closes it). SECOND() is
    // of the wall clock: B + 3 s is :23.
    let h = |a: i64, p: i64, s: i64| json!({"auction": a, "price": p, "at_s": (20 + s) % 60});
    assert_eq!(
        rows("highest"),
        vec![
            h(1, 1, 41),
            h(1, 7, 19),
            h(1, 9, 7),
            h(2, 9, 3),
            h(3, 8, 29)
        ]
    );
    // Windows of 30 s (from the epoch: 22:13:00, 22:13:30, ...) over the 10 s results, each at
    // its window_time: [22:13:00, 22:13:30) holds the first (3 bids, max 9); [22:13:30,
    // 22:14:00) the second and third (2 + 2 bids, max 8); [22:14:00, ..) the last.
    assert_eq!(
        rows("rollup"),
        vec![
            json!({"window_start": "2023-11-14 22:13:00", "bids": 3, "top": 9}),
            json!({"window_start": "2023-11-14 22:13:30", "bids": 4, "top": 8}),
            json!({"window_start": "2023-11-14 22:14:00", "bids": 1, "top": 1}),
        ]
    );
    let k = |a: i64, s: &str| json!({"auction": a, "window_start": format!("2023-11-14 22:{s}")});
    let mut want = vec![
        k(1, "13:20"),
        k(2, "13:20"),
        k(3, "13:30"),
        k(1, "13:30"),
        k(2, "13:40"),
        k(3, "13:40"),
        k(1, "14:00"),
    ];
    want.sort_by_key(|v| v.to_string());
    let mut got = rows("keys");
    got.sort_by_key(|v| v.to_string());
    assert_eq!(got, want);
}

/// `COUNT(DISTINCT user_id)` is exact, as in Flink, where the window holds thousands of users
/// (the case: 200 000 generated clicks, the busiest ad's first minute has 16 455 distinct users
/// where a HyperLogLog said 16 774); `APPROX_COUNT_DISTINCT` is the bounded estimate. The model
/// is the set of users per (ad, minute) of the input file (no event is late: the generator's
/// jitter, 2 s, is within the watermark's 5 s).
#[test]
fn count_distinct_is_exact_and_approx_count_distinct_estimates() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let input = dir.join("clicks.ndjson");
    let gen = common::sluice(
        dir,
        &[
            "loadgen",
            "clicks",
            "--events",
            "200000",
            "--out",
            &path(&input),
        ],
        std::time::Duration::from_secs(60),
    );
    assert!(gen.success, "{}", gen.stderr);
    let sql = format!(
        "CREATE TABLE clicks (ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE users (ad_id STRING, window_start TIMESTAMP(3), exact BIGINT, approx BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO users
SELECT ad_id, window_start, COUNT(DISTINCT user_id), APPROX_COUNT_DISTINCT(user_id)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY ad_id, window_start, window_end;",
        path(&input),
        path(&dir.join("users"))
    );
    run_sql(dir, &sql);
    let mut model: std::collections::BTreeMap<(String, String), std::collections::HashSet<String>> =
        Default::default();
    for l in read_lines(&input) {
        let v: Value = serde_json::from_str(&l).unwrap();
        let key = (
            v["ad_id"].as_str().unwrap().to_string(),
            common::sql::flink_ts(v["ts"].as_i64().unwrap().div_euclid(60_000) * 60_000),
        );
        model
            .entry(key)
            .or_default()
            .insert(v["user_id"].as_str().unwrap().to_string());
    }
    let mut got = std::collections::BTreeMap::new();
    for l in read_lines(&dir.join("users").join("part-0.json")) {
        let v: Value = serde_json::from_str(&l).unwrap();
        let key = (
            v["ad_id"].as_str().unwrap().to_string(),
            v["window_start"].as_str().unwrap().to_string(),
        );
        got.insert(
            key,
            (v["exact"].as_i64().unwrap(), v["approx"].as_i64().unwrap()),
        );
    }
    assert_eq!(got.len(), model.len(), "one row per ad and minute");
    let mut big = 0;
    for (key, users) in &model {
        let (exact, approx) = got[key];
        assert_eq!(exact, users.len() as i64, "{key:?}");
        let err = (approx - exact).abs() as f64;
        assert!(
            err <= 0.05 * exact as f64,
            "{key:?}: approx {approx}, exact {exact}"
        );
        big = big.max(exact);
    }
    assert!(
        big > 10_000,
        "the busiest ad's minute has thousands of users, got {big}"
    );
}
