//! Two joins of issue 42 through the real binary, on 1, 2 and 3 shards, each against a model
//! written here:
//! - an event-time temporal join whose versioned table is a Debezium changelog file (creates,
//!   updates whose `before` carries the old row's time, deletes whose `before` carries the
//!   deleted version's time), as Flink's versioned table reads it: `+I`/`+U` are versions from
//!   their time, `-U` changes nothing, `-D` ends the row at its time;
//! - LEFT and FULL OUTER regular joins whose ON reads both sides beyond the key
//!   (`o.amount >= c.min_amount`): a row is NULL-padded while no row of its key meets the
//!   condition, whatever its key holds.

mod common;

use common::changelog::materialise_debezium;
use common::read_lines;
use common::sql::{debezium_file, run_job, sql_job};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

type Table = BTreeMap<String, usize>;

fn add(t: &mut Table, row: Value) {
    *t.entry(row.to_string()).or_default() += 1;
}

/// Writes `sql` as a job on `shards` shards and runs it.
fn run(d: &Path, sql: &str, shards: usize) {
    let cfg = sql_job(d, sql, "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replace("shards = 2", &format!("shards = {shards}"));
    std::fs::write(&cfg, text).unwrap();
    run_job(d, &cfg);
    assert!(
        read_lines(&d.join("dead.ndjson")).is_empty(),
        "dead letters"
    );
}

fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// A price row of the changelog: (ad, price, ts).
type Price = (u64, u64, i64);

fn price_json(p: Option<&Price>) -> Value {
    p.map_or(
        Value::Null,
        |&(ad, price, ts)| json!({"ad": format!("ad-{ad}"), "price": price, "ts": ts}),
    )
}

/// Ads 0..8 with a price each 4 s apart (a create, then updates), over 120 s of event time. Ads
/// 0 and 1 are deleted at 60 s (their `-D` carries the last version's time) and ad 1 is created
/// again at 90 s. Orders every 100 ms, each of a random ad, except for a deleted ad between its
/// last version's time and 66 s (the deletion plus the watermark bound): which of those rows
/// were answered before the deletion arrived depends on the two files' pace, as in Flink.
/// Returns the model: each order with the price its ad had at its time, or none.
fn temporal_data(d: &Path) -> Table {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let mut live: BTreeMap<u64, Price> = BTreeMap::new();
    // (ad, time) -> the row valid from then on, or none (deleted).
    let mut versions: BTreeMap<(u64, i64), Option<Price>> = BTreeMap::new();
    let mut last_version: BTreeMap<u64, i64> = BTreeMap::new();
    let mut changes = String::new();
    let mut write = |before: Option<&Price>, after: Option<&Price>, op: &str| {
        let line = json!({"before": price_json(before), "after": price_json(after), "op": op});
        changes.push_str(&format!("{line}\n"));
    };
    for step in 0..30i64 {
        let t = step * 4000;
        if t == 60_000 {
            for ad in [0, 1] {
                let gone = live.remove(&ad).unwrap();
                write(Some(&gone), None, "d");
                versions.insert((ad, gone.2), None);
            }
        }
        for ad in 0..8u64 {
            if (ad == 0 && t >= 60_000) || (ad == 1 && (60_000..90_000).contains(&t)) {
                continue;
            }
            let row = (ad, 100 + next() % 900, t + (ad as i64) * 10);
            match live.insert(ad, row) {
                None => write(None, Some(&row), "c"),
                Some(old) => write(Some(&old), Some(&row), "u"),
            }
            versions.insert((ad, row.2), Some(row));
            if t < 60_000 {
                last_version.insert(ad, row.2);
            }
        }
    }
    std::fs::write(d.join("prices.ndjson"), changes).unwrap();
    let mut orders = String::new();
    let mut want = Table::new();
    for id in 0..1200i64 {
        let t = id * 100 + 5;
        let ad = next() % 8;
        let unsure = ad < 2 && (last_version[&ad]..66_000).contains(&t);
        if unsure {
            continue;
        }
        orders.push_str(&format!(
            "{}\n",
            json!({"id": id, "ad": format!("ad-{ad}"), "ts": t})
        ));
        let price = versions
            .range((ad, i64::MIN)..=(ad, t))
            .next_back()
            .and_then(|(_, v)| *v);
        add(
            &mut want,
            json!({"id": id, "ad": format!("ad-{ad}"), "price": price.map(|p| p.1), "price_ts": price.map(|p| p.2)}),
        );
    }
    std::fs::write(d.join("orders.ndjson"), orders).unwrap();
    want
}

fn temporal_sql(d: &Path) -> String {
    let p = |n: &str| d.join(n).to_string_lossy().into_owned();
    format!(
        "CREATE TABLE orders (id BIGINT, ad STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE prices (ad STRING, price BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND,
  PRIMARY KEY (ad) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');
CREATE TABLE priced (id BIGINT, ad STRING, price BIGINT, price_ts BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO priced SELECT o.id, o.ad, p.price, p.ts
FROM orders AS o LEFT JOIN prices FOR SYSTEM_TIME AS OF o.rt AS p ON o.ad = p.ad;
",
        p("orders.ndjson"),
        p("prices.ndjson"),
        p("priced")
    )
}

#[test]
fn a_debezium_changelog_is_a_versioned_table_updates_and_deletes_included() {
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let want = temporal_data(d);
        let nulls = want.keys().filter(|r| r.contains("\"price\":null")).count();
        // Deleted ads' later orders, and none before the first prices: both kinds occur.
        assert!(
            nulls > 50 && nulls < want.len() / 2,
            "{nulls} of {}",
            want.len()
        );
        run(d, &temporal_sql(d), shards);
        let mut got = Table::new();
        for line in read_lines(&d.join("priced/part-0.json")) {
            add(&mut got, serde_json::from_str(&line).unwrap());
        }
        assert_eq!(got, want, "{shards} shard(s)");
    }
}

/// Orders (id, customer, amount) and customers (id, min_amount), duplicates and customers without
/// orders included; returns the LEFT and FULL joins' tables on `customer = id AND amount >=
/// min_amount`.
fn condition_data(d: &Path) -> [Table; 2] {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let orders: Vec<(i64, i64, i64)> = (0..1500)
        .map(|id| (id, (next() % 25) as i64, (next() % 100) as i64))
        .collect();
    let mut customers: Vec<(i64, i64)> = (0..20).map(|c| (c, (next() % 120) as i64)).collect();
    customers.push((3, 10));
    customers.push((3, 10));
    let lines = |rows: Vec<Value>| rows.iter().map(|r| format!("{r}\n")).collect::<String>();
    let o = orders
        .iter()
        .map(|&(id, c, a)| json!({"id": id, "customer": c, "amount": a}));
    std::fs::write(d.join("orders.ndjson"), lines(o.collect())).unwrap();
    let c = customers
        .iter()
        .map(|&(id, m)| json!({"cid": id, "min_amount": m}));
    std::fs::write(d.join("customers.ndjson"), lines(c.collect())).unwrap();
    let meets = |o: &(i64, i64, i64), c: &(i64, i64)| o.1 == c.0 && o.2 >= c.1;
    let (mut left, mut full) = (Table::new(), Table::new());
    for o in &orders {
        let mut any = false;
        for c in customers.iter().filter(|c| meets(o, c)) {
            any = true;
            add(&mut left, json!({"id": o.0, "cid": c.0}));
            add(&mut full, json!({"id": o.0, "cid": c.0}));
        }
        if !any {
            add(&mut left, json!({"id": o.0, "cid": null}));
            add(&mut full, json!({"id": o.0, "cid": null}));
        }
    }
    for c in customers
        .iter()
        .filter(|c| !orders.iter().any(|o| meets(o, c)))
    {
        add(&mut full, json!({"id": null, "cid": c.0}));
    }
    [left, full]
}

fn condition_sql(d: &Path) -> String {
    let p = |n: &str| d.join(n).to_string_lossy().into_owned();
    let dbz = |n: &str| debezium_file(&d.join(n));
    format!(
        "CREATE TABLE orders (id BIGINT, customer BIGINT, amount BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE customers (cid BIGINT, min_amount BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE lj (id BIGINT, cid BIGINT) {};
CREATE TABLE fj (id BIGINT, cid BIGINT) {};
INSERT INTO lj SELECT o.id, c.cid FROM orders o LEFT JOIN customers c
  ON o.customer = c.cid AND o.amount >= c.min_amount;
INSERT INTO fj SELECT o.id, c.cid FROM orders o FULL OUTER JOIN customers c
  ON o.customer = c.cid AND o.amount >= c.min_amount;
",
        p("orders.ndjson"),
        p("customers.ndjson"),
        dbz("lj"),
        dbz("fj")
    )
}

#[test]
fn outer_joins_pad_each_row_by_the_rows_meeting_their_condition() {
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let [left, full] = condition_data(d);
        // Some orders find their customer's key but not the condition: padded all the same.
        let padded = left.keys().filter(|r| r.contains("\"cid\":null")).count();
        assert!(padded > 300 && padded < 1400, "{padded}");
        run(d, &condition_sql(d), shards);
        let ctx = format!("{shards} shard(s)");
        assert_eq!(
            materialise_debezium(&d.join("lj/part-0.json")),
            left,
            "{ctx}: lj"
        );
        assert_eq!(
            materialise_debezium(&d.join("fj/part-0.json")),
            full,
            "{ctx}: fj"
        );
    }
}
