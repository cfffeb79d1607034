//! Flink's scalar functions in SQL through the real binary, on hand-written bids, against the
//! rows worked out by hand below: Nexmark's q21 (channel ids from a CASE over `lower(channel)`
//! or REGEXP_EXTRACT of the URL), REGEXP / REGEXP_REPLACE, and CAST's precision and length
//! rules (NULL past a DECIMAL's precision, a string cut to its VARCHAR(n)), EXTRACT and HOUR etc.;
//! and a `csv` table read by the DDL's column order, its malformed line a dead letter.

mod common;

use common::read_lines;
use common::sql::run_sql;
use serde_json::{json, Value};
use std::path::Path;

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn nexmark_q21_and_regexp_replace_give_the_hand_worked_rows() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let bids = [
        // (auction, channel, url)
        (1, "Apple", "https://www.nexmark.com/a/b/item.htm?query=1"),
        (
            2,
            "channel-7",
            "https://www.nexmark.com/a/b/item.htm?query=1&channel_id=2130706432",
        ),
        (
            3,
            "channel-8",
            "https://www.nexmark.com/a/b/item.htm?query=1",
        ),
        (4, "channel-9", "channel_id=5&x=1"),
        (5, "BAIDU", "https://www.nexmark.com/x?channel_id="),
        (
            6,
            "channel-10",
            "https://www.nexmark.com/x?not_channel_id=9",
        ),
    ];
    let lines: Vec<String> = bids
        .iter()
        .enumerate()
        .map(|(i, (a, c, u))| {
            json!({"auction": a, "bidder": 10 + a, "price": 100 * a, "channel": c, "url": u,
                   "dateTime": 1_700_000_000_000i64 + i as i64 * 1000, "extra": ""})
            .to_string()
        })
        .collect();
    let bid_file = dir.join("bid.ndjson");
    std::fs::write(&bid_file, lines.join("\n") + "\n").unwrap();
    let sql = format!(
        "CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
  dateTime BIGINT, extra STRING, dt AS TO_TIMESTAMP_LTZ(dateTime, 3),
  WATERMARK FOR dt AS dt - INTERVAL '4' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE q21 (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, channel_id STRING)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE casts (auction BIGINT, small DECIMAL(3, 1), cut STRING, wide DECIMAL(25, 2),
  y BIGINT, mo BIGINT, dd BIGINT, h BIGINT, mi BIGINT, s BIGINT, m BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE hosts (auction BIGINT, host STRING, has_query BOOLEAN)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO q21
SELECT
    auction, bidder, price, channel,
    CASE
        WHEN lower(channel) = 'apple' THEN '0'
        WHEN lower(channel) = 'google' THEN '1'
        WHEN lower(channel) = 'facebook' THEN '2'
        WHEN lower(channel) = 'baidu' THEN '3'
        ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)
        END
    AS channel_id FROM bid
    where REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null or
          lower(channel) in ('apple', 'google', 'facebook', 'baidu');
INSERT INTO hosts
SELECT auction, REGEXP_REPLACE(url, '^https://|/.*$', ''), REGEXP(url, '\\?query=')
FROM bid WHERE auction <= 3;
INSERT INTO casts
SELECT auction, CAST(price / 5 AS DECIMAL(3, 1)), CAST(channel AS VARCHAR(5)), CAST(price AS DECIMAL(25, 2)),
  YEAR(dt), EXTRACT(MONTH FROM dt), EXTRACT(DAY FROM dt), HOUR(dt), MINUTE(dt), EXTRACT(SECOND FROM dt), MOD(price, 7)
FROM bid WHERE auction IN (1, 6);",
        path(&bid_file),
        path(&dir.join("q21")),
        path(&dir.join("casts")),
        path(&dir.join("hosts"))
    );
    run_sql(dir, &sql);
    let rows = |name: &str| {
        let mut v: Vec<Value> = read_lines(&dir.join(name).join("part-0.json"))
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        v.sort_by_key(|r| r["auction"].as_i64());
        v
    };
    let q21 = |a: i64, c: &str, id: &str| json!({"auction": a, "bidder": 10 + a, "price": 100 * a, "channel": c, "channel_id": id});
    // 1: Apple -> '0'. 2: its url's channel_id after `&`. 3: no channel_id, not a known
    // channel: dropped. 4: channel_id at the start of the url. 5: BAIDU -> '3' (its empty
    // channel_id would be ''). 6: `not_channel_id` is neither after `&` nor at the start.
    assert_eq!(
        rows("q21"),
        vec![
            q21(1, "Apple", "0"),
            q21(2, "channel-7", "2130706432"),
            q21(4, "channel-9", "5"),
            q21(5, "BAIDU", "3"),
        ]
    );
    let host = |a: i64, h: &str, q: bool| json!({"auction": a, "host": h, "has_query": q});
    assert_eq!(
        rows("hosts"),
        vec![
            host(1, "www.nexmark.com", true),
            host(2, "www.nexmark.com", true),
            host(3, "www.nexmark.com", true),
        ]
    );
    // 100 / 5 = 20.0 fits DECIMAL(3, 1); 600 / 5 = 120.0 has three integer digits: NULL, as
    // Flink's CAST gives; a string cut to 5 characters; a wide DECIMAL keeps its two digits.
    assert_eq!(
        rows("casts"),
        vec![
            json!({"auction": 1, "small": 20.0, "cut": "Apple", "wide": 100.00,
                   "y": 2023, "mo": 11, "dd": 14, "h": 22, "mi": 13, "s": 20, "m": 2}),
            json!({"auction": 6, "small": null, "cut": "chann", "wide": 600.00,
                   "y": 2023, "mo": 11, "dd": 14, "h": 22, "mi": 13, "s": 25, "m": 5}),
        ]
    );
    let text = read_lines(&dir.join("casts").join("part-0.json")).join("\n");
    assert!(
        text.contains("\"small\":20.0,") && text.contains("\"wide\":100.00"),
        "{text}"
    );
}

#[test]
fn a_csv_table_reads_its_fields_by_the_ddls_column_order() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    // `;`-separated, a quoted field holding the delimiter, a malformed line (two fields).
    let csv = "ad-1;\"a;b\";2.50;1700000000000\nad-2;c;1.25;1700000001000\nbroken;line\nad-1;d;0.25;1700000002000\n";
    std::fs::write(dir.join("t.csv"), csv).unwrap();
    let sql = format!(
        "CREATE TABLE t (ad_id STRING, note STRING, price DECIMAL(10, 2), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv', 'csv.field-delimiter' = ';');
CREATE TABLE o (ad_id STRING, note STRING, doubled DECIMAL(11, 2))
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO o SELECT ad_id, note, price * 2 FROM t;",
        path(&dir.join("t.csv")),
        path(&dir.join("o"))
    );
    run_sql(dir, &sql);
    let mut got = read_lines(&dir.join("o").join("part-0.json"));
    got.sort();
    assert_eq!(
        got,
        [
            r#"{"ad_id":"ad-1","note":"a;b","doubled":5.00}"#,
            r#"{"ad_id":"ad-1","note":"d","doubled":0.50}"#,
            r#"{"ad_id":"ad-2","note":"c","doubled":2.50}"#,
        ]
    );
    let dead = read_lines(&dir.join("dead.ndjson"));
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert!(dead[0].contains("not a CSV record"), "{}", dead[0]);
}
