//! Updating results through the real binary: Flink SQL GROUP BY jobs over a table without a
//! WATERMARK, written as `debezium-json` files and `print` rows, on 1, 2 and 3 shards. The
//! changelogs are materialised here (a `c` or `+I`/`+U` adds its row, a `d` or `-U`/`-D` takes
//! exactly that row back, which must be there) and compared with a reference model that
//! recomputes each GROUP BY from the valid input lines: per-key counts, sums, maxima and Flink's
//! truncated integer AVG, NULL keys and values, a HAVING that turns false (its row deleted), a
//! GROUP BY over another GROUP BY's updating result, and a malformed line in the dead letters.
//! Into a real PostgreSQL table keyed on the group, the same changelog upserts and deletes rows,
//! and kill -9 three times with restores on other shard counts ends with the model's table.

mod common;

use common::changelog::{materialise_debezium, materialise_print};
use common::sql::{run_job, sql_job};
use common::{read_lines, sluice, toml_str};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// (ad, bid) of the valid lines, in order; `None` is a missing field or JSON null.
type Click = (Option<String>, Option<i64>);

/// 3 000 clicks over seven ads (some without an ad, some with a null bid) and one malformed line.
fn clicks() -> (String, Vec<Click>) {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut text, mut valid) = (String::new(), Vec::new());
    for i in 0..3000 {
        if i == 1234 {
            text.push_str("{\"ad_id\": \"a1\", \"bid\": \n");
            continue;
        }
        let r = next();
        let ad = match r % 8 {
            7 => None,
            k => Some(format!("a{k}")),
        };
        let bid = (!r.is_multiple_of(13)).then_some(((r >> 8) % 500) as i64);
        let mut fields = Vec::new();
        if let Some(a) = &ad {
            fields.push(format!("\"ad_id\":\"{a}\""));
        }
        fields.push(match bid {
            Some(b) => format!("\"bid\":{b}"),
            None => "\"bid\":null".to_string(),
        });
        text.push_str(&format!("{{{}}}\n", fields.join(",")));
        valid.push((ad, bid));
    }
    (text, valid)
}

fn sql(dir: &Path) -> String {
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    format!(
        "CREATE TABLE clicks (ad_id STRING, bid BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE per_ad (ad_id STRING, n BIGINT, spend BIGINT, top BIGINT, avg_bid BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');
CREATE TABLE quiet (ad_id STRING, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');
CREATE TABLE totals (ads BIGINT, clicks BIGINT) WITH ('connector' = 'print');
CREATE VIEW counts AS SELECT ad_id, COUNT(*) AS n FROM clicks GROUP BY ad_id;
INSERT INTO per_ad SELECT ad_id, COUNT(*), SUM(bid), MAX(bid), AVG(bid) FROM clicks GROUP BY ad_id;
INSERT INTO quiet SELECT ad_id, COUNT(*) FROM clicks GROUP BY ad_id HAVING COUNT(*) < 380;
INSERT INTO totals SELECT COUNT(*), SUM(n) FROM counts;
",
        p("clicks.ndjson"),
        p("per_ad"),
        p("quiet")
    )
}

/// The model's rows for `per_ad`, `quiet` and `totals`, in the sinks' encodings.
fn model(valid: &[Click]) -> [BTreeMap<String, usize>; 3] {
    let mut groups: BTreeMap<Option<String>, Vec<Option<i64>>> = BTreeMap::new();
    for (ad, bid) in valid {
        groups.entry(ad.clone()).or_default().push(*bid);
    }
    let (mut per_ad, mut quiet, mut totals) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for (ad, bids) in &groups {
        let vals: Vec<i64> = bids.iter().flatten().copied().collect();
        let n = bids.len() as i64;
        let (spend, top, avg) = if vals.is_empty() {
            (Value::Null, Value::Null, Value::Null)
        } else {
            let sum: i64 = vals.iter().sum();
            // Flink's AVG of a BIGINT column is a BIGINT: the quotient truncated.
            (
                sum.into(),
                (*vals.iter().max().unwrap()).into(),
                (sum / vals.len() as i64).into(),
            )
        };
        let row =
            serde_json::json!({"ad_id": ad, "n": n, "spend": spend, "top": top, "avg_bid": avg});
        per_ad.insert(row.to_string(), 1);
        if n < 380 {
            quiet.insert(serde_json::json!({"ad_id": ad, "n": n}).to_string(), 1);
        }
    }
    totals.insert(format!("[{}, {}]", groups.len(), valid.len()), 1);
    [per_ad, quiet, totals]
}

#[test]
fn group_by_changelogs_materialise_to_the_model_on_any_shard_count() {
    let (text, valid) = clicks();
    let want = model(&valid);
    // The HAVING must both keep and drop groups for the test to mean anything.
    assert!(
        !want[1].is_empty() && want[1].len() < want[0].len(),
        "{want:?}"
    );
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("clicks.ndjson"), &text).unwrap();
        std::fs::write(d.join("job.sql"), sql(d)).unwrap();
        let cfg = format!(
            "[runtime]\nshards = {shards}\n\n[pipeline]\nsql = {}\n\n[dead_letter]\npath = {}\n",
            toml_str(&d.join("job.sql").to_string_lossy()),
            toml_str(&d.join("dead.ndjson").to_string_lossy())
        );
        std::fs::write(d.join("job.toml"), cfg).unwrap();
        let cfg = d.join("job.toml").to_string_lossy().into_owned();
        let exit = sluice(d, &["run", "--config", &cfg], Duration::from_secs(120));
        assert!(exit.success, "{}", exit.stderr);
        let ctx = format!("{shards} shard(s)");
        assert_eq!(
            materialise_debezium(&d.join("per_ad/part-0.json")),
            want[0],
            "{ctx}"
        );
        assert_eq!(
            materialise_debezium(&d.join("quiet/part-0.json")),
            want[1],
            "{ctx}"
        );
        assert_eq!(materialise_print(&exit.stdout), want[2], "{ctx}");
        let dead = read_lines(&d.join("dead.ndjson"));
        assert_eq!(dead.len(), 1, "{ctx}: {dead:?}");
        assert!(
            dead[0].contains("\"raw\":\"{\\\"ad_id\\\": \\\"a1\\\", \\\"bid\\\": \""),
            "{}",
            dead[0]
        );
    }
}

/// `lines` clicks over eight ads, each with an ad (a table's key is NOT NULL), some bids null.
fn keyed_clicks(lines: usize) -> (String, Vec<(String, Option<i64>)>) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let (mut text, mut valid) = (String::new(), Vec::new());
    for _ in 0..lines {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let ad = format!("a{}", x % 8);
        let bid = (!x.is_multiple_of(11)).then_some(((x >> 8) % 100) as i64);
        let b = bid.map_or("null".to_string(), |b| b.to_string());
        text.push_str(&format!("{{\"ad_id\":\"{ad}\",\"bid\":{b}}}\n"));
        valid.push((ad, bid));
    }
    (text, valid)
}

/// A TOML job: `GROUP BY ad_id` (count, sum) with `HAVING n < below` into the PostgreSQL table
/// `table` keyed on `ad_id`, checkpointed every 10 ms.
fn pg_job(d: &Path, shards: usize, url: &str, table: &str, below: i64) -> String {
    let p = |n: &str| toml_str(&d.join(n).to_string_lossy());
    let cfg = format!(
        r#"[runtime]
shards = {shards}

[checkpoint]
dir = {}
interval = "10ms"

[sources.clicks]
type = "file"
path = {}

[transforms.per_ad]
type = "group_aggregate"
inputs = ["clicks"]
group_by = ["ad_id"]
aggregates = {{ n = "count()", spend = "sum(bid)" }}

[transforms.quiet]
type = "filter"
inputs = ["per_ad"]
where = "n < {below}"

[sinks.db]
type = "postgres"
inputs = ["quiet"]
url = "{url}"
table = "{table}"
key = ["ad_id"]
create_table = true
batch = {{ rows = 50 }}
"#,
        p("state"),
        p("clicks.ndjson")
    );
    let path = d.join(format!("job-{shards}.toml"));
    std::fs::write(&path, cfg).unwrap();
    path.to_string_lossy().into_owned()
}

/// Upserts and deletes into a real PostgreSQL table: the groups whose count passes the HAVING's
/// bound are deleted again, the others hold their last count and sum; after a clean run and after
/// kill -9 three times with restores on 1, 3 and 2 shards the table equals the model.
#[test]
fn a_group_by_with_a_having_that_turns_false_upserts_and_deletes_in_postgres() {
    use common::flow_job::kill_after_checkpoint;
    use common::pg::Pg;
    let pg = Pg::shared();
    let (text, valid) = keyed_clicks(150_000);
    let mut groups: BTreeMap<String, (i64, Option<i64>)> = BTreeMap::new();
    for (ad, bid) in &valid {
        let g = groups.entry(ad.clone()).or_insert((0, None));
        g.0 += 1;
        if let Some(b) = bid {
            g.1 = Some(g.1.unwrap_or(0) + b);
        }
    }
    let mut counts: Vec<i64> = groups.values().map(|g| g.0).collect();
    counts.sort_unstable();
    let below = counts[counts.len() / 2];
    let want: Vec<String> = groups
        .iter()
        .filter(|(_, g)| g.0 < below)
        .map(|(ad, (n, s))| format!("{ad}\t{n}\t{}", s.map_or(String::new(), |s| s.to_string())))
        .collect();
    assert!(!want.is_empty() && want.len() < groups.len(), "{want:?}");
    let table_of = |t: &str| pg.sql(&format!("SELECT ad_id, n, spend FROM {t} ORDER BY ad_id"));
    for (table, crashes) in [("groups_clean", false), ("groups_killed", true)] {
        pg.sql(&format!("DROP TABLE IF EXISTS {table}"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("clicks.ndjson"), &text).unwrap();
        if crashes {
            let (mut live, mut resumed) = (0, 0);
            for (i, shards) in [1usize, 3, 2].into_iter().enumerate() {
                let cfg = pg_job(d, shards, &pg.url(), table, below);
                let err = d.join(format!("crash-{i}.txt"));
                let run =
                    kill_after_checkpoint(&cfg, &d.join("state"), Duration::from_millis(30), &err);
                live += usize::from(run.live);
                resumed += usize::from(run.resumed);
            }
            assert!(live >= 1, "every run ended before its kill");
            assert!(resumed >= 1, "no killed run resumed from a checkpoint");
        }
        let cfg = pg_job(d, 2, &pg.url(), table, below);
        let exit = sluice(d, &["run", "--config", &cfg], Duration::from_secs(120));
        assert!(exit.success, "{}", exit.stderr);
        assert_eq!(table_of(table), want, "{table}");
    }
}

/// `config/ad_totals.sql` as shipped (its paths and URL pointed at this test's files and server):
/// the running total per ad in PostgreSQL equals the ad-spend model's per-minute rows summed per
/// ad (the generated flow has no late records, so every priced click is in some minute).
#[test]
fn the_shipped_ad_totals_job_serves_each_ads_running_total_from_postgres() {
    use common::flow_job::flow_data;
    use common::flow_model::{decimal, spend_model_dir};
    use common::pg::Pg;
    let pg = Pg::shared();
    pg.sql("DROP TABLE IF EXISTS ad_totals_e2e");
    pg.sql(
        "CREATE TABLE ad_totals_e2e (ad_id TEXT PRIMARY KEY, clicks BIGINT, spend NUMERIC(38, 4))",
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    flow_data(d, 30_000, 1000, 11);
    let shipped =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("config/ad_totals.sql"))
            .unwrap();
    let url = pg.url();
    let port = url
        .split(':')
        .nth(2)
        .and_then(|p| p.split('/').next())
        .unwrap();
    let sql = shipped
        .replace("'data/", &format!("'{}/", d.to_string_lossy()))
        .replace("127.0.0.1:55432", &format!("127.0.0.1:{port}"))
        .replace(
            "'table-name' = 'ad_totals'",
            "'table-name' = 'ad_totals_e2e'",
        );
    assert_ne!(sql, shipped);
    run_job(d, &sql_job(d, &sql, ""));
    let mut want: BTreeMap<String, (u64, rust_decimal::Decimal)> = BTreeMap::new();
    for ((ad, _), (n, spend)) in spend_model_dir(d) {
        let t = want.entry(ad).or_default();
        t.0 += n;
        t.1 += spend;
    }
    assert!(want.len() > 10, "{want:?}");
    let got: BTreeMap<String, (u64, rust_decimal::Decimal)> = pg
        .sql("SELECT ad_id, clicks, spend::text FROM ad_totals_e2e")
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), (f[1].parse().unwrap(), decimal(f[2])))
        })
        .collect();
    assert_eq!(got, want);
}

/// The same GROUP BY with its HAVING into a real broker: an `upsert-kafka` topic keyed by
/// `ad_id` (exactly once, under checkpoints), where a group the HAVING drops leaves a tombstone,
/// and a `kafka` topic in `debezium-json`. Read back, the latest value per key and the
/// materialised Debezium changes both equal the model.
#[test]
fn group_by_into_upsert_kafka_with_tombstones_and_a_debezium_topic() {
    use common::kafka::{broker, read_all, topic};
    use rdkafka::message::Message;
    let (text, valid) = keyed_clicks(20_000);
    let mut groups: BTreeMap<String, i64> = BTreeMap::new();
    for (ad, _) in &valid {
        *groups.entry(ad.clone()).or_default() += 1;
    }
    let mut counts: Vec<i64> = groups.values().copied().collect();
    counts.sort_unstable();
    let below = counts[counts.len() / 2];
    let want: BTreeMap<String, usize> = groups
        .iter()
        .filter(|(_, n)| **n < below)
        .map(|(ad, n)| (serde_json::json!({"ad_id": ad, "n": n}).to_string(), 1))
        .collect();
    assert!(!want.is_empty() && want.len() < groups.len());
    let (upserts, changes) = (topic("changelog-upsert", 3), topic("changelog-debezium", 1));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("clicks.ndjson"), &text).unwrap();
    let sql = format!(
        "CREATE TABLE clicks (ad_id STRING, bid BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE quiet (ad_id STRING, n BIGINT, PRIMARY KEY (ad_id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json', 'topic' = '{upserts}',
        'properties.bootstrap.servers' = '{b}', 'sink.delivery-guarantee' = 'exactly-once',
        'sink.transactional-id-prefix' = '{upserts}');
CREATE TABLE changes (ad_id STRING, n BIGINT)
  WITH ('connector' = 'kafka', 'format' = 'debezium-json', 'topic' = '{changes}', 'properties.bootstrap.servers' = '{b}');
CREATE VIEW counts AS SELECT ad_id, COUNT(*) AS n FROM clicks GROUP BY ad_id HAVING COUNT(*) < {below};
INSERT INTO quiet SELECT * FROM counts;
INSERT INTO changes SELECT * FROM counts;
",
        d.join("clicks.ndjson").to_string_lossy(),
        b = broker()
    );
    let state = toml_str(&d.join("state").to_string_lossy());
    let checkpoint = format!("[checkpoint]\ndir = {state}\ninterval = \"50ms\"\n\n");
    run_job(d, &sql_job(d, &sql, &checkpoint));
    // Upserts: the last record of each key (the topic's partitions keep each key's order).
    let mut latest: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut tombstones = 0;
    for m in read_all(&upserts) {
        let key = String::from_utf8(m.key().expect("every record has its key").to_vec()).unwrap();
        let value = m.payload().map(|p| String::from_utf8(p.to_vec()).unwrap());
        tombstones += usize::from(value.is_none());
        if let Some(v) = &value {
            let row: Value = serde_json::from_str(v).unwrap();
            assert_eq!(
                key,
                serde_json::json!({"ad_id": row["ad_id"]}).to_string(),
                "{v}"
            );
        }
        latest.insert(key, value);
    }
    assert!(
        tombstones > 0,
        "a group past the HAVING's bound leaves a tombstone"
    );
    let table: BTreeMap<String, usize> = latest
        .into_values()
        .flatten()
        .map(|v| (serde_json::from_str::<Value>(&v).unwrap().to_string(), 1))
        .collect();
    assert_eq!(table, want, "upsert-kafka");
    // Debezium: every change in order (one partition: its records carry no key).
    let changes_dir = d.join("changes.ndjson");
    let lines: Vec<String> = read_all(&changes)
        .iter()
        .map(|m| String::from_utf8(m.payload().unwrap().to_vec()).unwrap())
        .collect();
    std::fs::write(&changes_dir, lines.join("\n") + "\n").unwrap();
    assert_eq!(materialise_debezium(&changes_dir), want, "debezium-json");
}

/// Flink's Nexmark q15 shape, hand-computed: grouping by an expression (`DATE_FORMAT` of the
/// time) and aggregates with `FILTER (WHERE ...)`, COUNT(DISTINCT) among them; each day's rows
/// in order, and the final table.
#[test]
fn grouping_by_an_expression_with_filtered_aggregates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let day1 = 1_700_000_000_000i64; // 2023-11-14 22:13:20 UTC
    let day2 = day1 + 86_400_000;
    let rows = [
        ("a", 5, day1),
        ("b", 70, day1 + 1000),
        ("a", 90, day2),
        ("a", 9, day2 + 1),
        ("c", 3, day2 + 2),
    ];
    let text: String = rows
        .iter()
        .map(|(ad, bid, ts)| format!("{{\"ad_id\":\"{ad}\",\"bid\":{bid},\"ts\":{ts}}}\n"))
        .collect();
    std::fs::write(d.join("clicks.ndjson"), text).unwrap();
    let sql = format!(
        "CREATE TABLE clicks (ad_id STRING, bid BIGINT, ts BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE per_day (day STRING, n BIGINT, cheap BIGINT, big_spend BIGINT, ads BIGINT, cheap_ads BIGINT, after_first BIGINT)
  WITH ('connector' = 'print');
INSERT INTO per_day
SELECT DATE_FORMAT(TO_TIMESTAMP_LTZ(ts, 3), 'yyyy-MM-dd') AS day, COUNT(*),
  COUNT(*) FILTER (WHERE bid < 10), SUM(bid) FILTER (WHERE bid >= 10),
  COUNT(DISTINCT ad_id), COUNT(DISTINCT ad_id) FILTER (WHERE bid < 10),
  COUNT(*) FILTER (WHERE DATE_FORMAT(TO_TIMESTAMP_LTZ(ts, 3), 'yyyy-MM-dd') > '2023-11-14')
FROM clicks GROUP BY DATE_FORMAT(TO_TIMESTAMP_LTZ(ts, 3), 'yyyy-MM-dd');
",
        d.join("clicks.ndjson").to_string_lossy()
    );
    let exit = run_job(d, &sql_job(d, &sql, ""));
    let day2_rows: Vec<&str> = exit
        .stdout
        .lines()
        .filter(|l| l.contains("2023-11-15"))
        .collect();
    assert_eq!(
        day2_rows,
        [
            // a 90: no cheap row yet, so the filtered counts are 0 and the filtered sum is 90.
            "+I[2023-11-15, 1, 0, 90, 1, 0, 1]",
            "-U[2023-11-15, 1, 0, 90, 1, 0, 1]",
            "+U[2023-11-15, 2, 1, 90, 1, 1, 2]",
            "-U[2023-11-15, 2, 1, 90, 1, 1, 2]",
            "+U[2023-11-15, 3, 2, 90, 2, 2, 3]",
        ]
    );
    let table = materialise_print(&exit.stdout);
    let want: BTreeMap<String, usize> = [
        // Day 1: a 5 and b 70; nothing at or above 10 but b's 70.
        // The last column's FILTER reads the GROUP BY expression: only the second day counts.
        ("[2023-11-14, 2, 1, 70, 2, 1, 0]".to_string(), 1),
        ("[2023-11-15, 3, 2, 90, 2, 2, 3]".to_string(), 1),
    ]
    .into();
    assert_eq!(table, want);
}
