//! SQL joins and deduplication through the real binary: a hand-worked job (a duplicate click, a
//! late click, a click without an impression id, bounds hit exactly, a price change between
//! clicks) gives exactly the rows worked out below; and the shipped `config/ad_spend.sql` on
//! `sluice loadgen flow` files equals the ad-spend reference model (`common::flow_model`, written
//! from the semantics) row for row, as its TOML twin does.

mod common;

use common::flow_job::flow_data;
use common::flow_model::{exact_number, spend_model_dir};
use common::read_lines;
use common::sql::{flink_ts, run_sql};
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// 2023-11-14 22:13:20 UTC.
const B: i64 = 1_700_000_000_000;

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn table(name: &str, cols: &str, file: &Path, extra: &str) -> String {
    format!(
        "CREATE TABLE {name} ({cols}, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND{extra}
) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');\n",
        path(file)
    )
}

#[test]
fn hand_worked_dedupe_interval_and_temporal_join_rows() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let s = |sec: i64| B + sec * 1000;
    let imps = [(1, "a", 0), (2, "b", 1), (3, "a", 8), (4, "a", 30)];
    let imp_lines: Vec<String> = imps
        .iter()
        .map(|(id, ad, t)| format!(r#"{{"imp_id":{id},"ad_id":"{ad}","ts":{}}}"#, s(*t)))
        .collect();
    // (click_id, imp_id, ts): 10 twice (the second dropped by the dedupe); 11 is 11 s after its
    // impression (past the bound); 12 at 0 s and 13 at 10 s after theirs (both bounds inclusive;
    // 12 at 8 s is not late: 11 moved the watermark to 7 s); 14 has no imp_id (NULL never
    // matches); 15 joins impression 4; 17, read after 15 moved the clicks' watermark to 26 s, is
    // 21 s behind it: late, dropped by the dedupe.
    let clicks: [(i64, Option<i64>, i64); 8] = [
        (10, Some(1), 3),
        (10, Some(1), 4),
        (11, Some(2), 12),
        (12, Some(3), 8),
        (13, Some(3), 18),
        (14, None, 5),
        (15, Some(4), 31),
        (17, Some(1), 5),
    ];
    let click_lines: Vec<String> = clicks
        .iter()
        .map(|(id, imp, t)| match imp {
            Some(i) => format!(r#"{{"click_id":{id},"imp_id":{i},"ts":{}}}"#, s(*t)),
            None => format!(r#"{{"click_id":{id},"ts":{}}}"#, s(*t)),
        })
        .collect();
    // Ad a costs 1.5000 from 0 s and 2.2500 from 10 s; b 0.1000 from 0 s.
    let prices = [
        r#"{"ad_id":"a","price":1.5000,"ts":T0}"#.replace("T0", &s(0).to_string()),
        r#"{"ad_id":"b","price":0.1000,"ts":T0}"#.replace("T0", &s(0).to_string()),
        r#"{"ad_id":"a","price":2.2500,"ts":T10}"#.replace("T10", &s(10).to_string()),
    ];
    let write = |name: &str, lines: &[String]| {
        let p = dir.join(name);
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        p
    };
    let (ip, cp, pp) = (
        write("imps.ndjson", &imp_lines),
        write("clicks.ndjson", &click_lines),
        write("prices.ndjson", &prices),
    );
    let out = dir.join("out");
    let sql = table("price_log", "ad_id STRING, price DECIMAL(10, 4)", &pp, "") + &format!(
        "SET 'table.exec.state.ttl' = '10 min';
{}{}{}CREATE TABLE o (click_id BIGINT, imp_id BIGINT, ad_id STRING, price DECIMAL(10, 4),
  doubled DECIMAL(11, 4), rt TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE VIEW uc AS SELECT click_id, imp_id, rt FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY click_id ORDER BY rt) AS rn FROM clicks) WHERE rn = 1;
CREATE VIEW m AS SELECT c.click_id, i.imp_id, i.ad_id, c.rt FROM imps i, uc c
  WHERE i.imp_id = c.imp_id AND c.rt >= i.rt AND c.rt <= i.rt + INTERVAL '10' SECOND;
INSERT INTO o SELECT m.click_id, m.imp_id, m.ad_id, p.price, p.price * 2, m.rt
  FROM m JOIN prices FOR SYSTEM_TIME AS OF m.rt AS p ON m.ad_id = p.ad_id;
CREATE TABLE o2 (click_id BIGINT, imp_id BIGINT, ad_id STRING, price DECIMAL(10, 4),
  doubled DECIMAL(11, 4), rt TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE VIEW versioned_prices AS SELECT ad_id, price, rt FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY ad_id ORDER BY rt DESC) AS rn FROM price_log) WHERE rn = 1;
INSERT INTO o2 SELECT m.click_id, m.imp_id, m.ad_id, p.price, p.price * 2, m.rt
  FROM m JOIN versioned_prices FOR SYSTEM_TIME AS OF m.rt AS p ON m.ad_id = p.ad_id;",
        table("imps", "imp_id BIGINT, ad_id STRING", &ip, ""),
        table("clicks", "click_id BIGINT, imp_id BIGINT", &cp, ""),
        table("prices", "ad_id STRING, price DECIMAL(10, 4)", &pp, ",\n  PRIMARY KEY (ad_id) NOT ENFORCED"),
        path(&out),
        path(&dir.join("out2")),
    );
    run_sql(dir, &sql);
    let mut got = read_lines(&out.join("part-0.json"));
    got.sort();
    // The same prices as a changelog without a key, read through Flink's versioned view
    // (ROW_NUMBER ... DESC), price the same rows.
    let mut through_view = read_lines(&dir.join("out2").join("part-0.json"));
    through_view.sort();
    assert_eq!(through_view, got);
    let row = |click: i64, imp: i64, price: &str, doubled: &str, t: i64| {
        format!(
            r#"{{"click_id":{click},"imp_id":{imp},"ad_id":"a","price":{price},"doubled":{doubled},"rt":"{}"}}"#,
            flink_ts(s(t))
        )
    };
    let mut want = vec![
        row(10, 1, "1.5000", "3.0000", 3),
        row(12, 3, "1.5000", "3.0000", 8),
        row(13, 3, "2.2500", "4.5000", 18),
        row(15, 4, "2.2500", "4.5000", 31),
    ];
    want.sort();
    assert_eq!(got, want);
}

/// `config/ad_spend.sql`'s output lines as (ad_id, window_start) -> (clicks, exact spend).
fn sql_spend(path: &Path) -> BTreeMap<(String, String), (u64, Decimal)> {
    let mut out = BTreeMap::new();
    for line in read_lines(path) {
        let v: Value = serde_json::from_str(&line).unwrap();
        let key = (
            v["ad_id"].as_str().unwrap().to_string(),
            v["window_start"].as_str().unwrap().to_string(),
        );
        let clicks = v["clicks"].as_u64().unwrap();
        assert!(
            out.insert(key, (clicks, exact_number(&line, &v, "spend")))
                .is_none(),
            "a second row for a window (append-only result): {line}"
        );
    }
    out
}

#[test]
fn the_shipped_ad_spend_sql_equals_the_reference_model() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    flow_data(dir, 20_000, 2_000, 7);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sql = std::fs::read_to_string(root.join("config/ad_spend.sql"))
        .unwrap()
        .replace("'data/", &format!("'{}/", path(dir)))
        .replace("'out/", &format!("'{}/out/", path(dir)));
    run_sql(dir, &sql);
    let got = sql_spend(&dir.join("out/ad_spend/part-0.json"));
    let want: BTreeMap<(String, String), (u64, Decimal)> = spend_model_dir(dir)
        .into_iter()
        .map(|((ad, start), v)| ((ad, flink_ts(start)), v))
        .collect();
    assert!(
        want.len() > 100,
        "too few windows to mean anything: {}",
        want.len()
    );
    assert_eq!(got.len(), want.len());
    let differ: Vec<_> = want
        .iter()
        .filter(|(k, v)| got.get(*k) != Some(v))
        .take(5)
        .collect();
    assert!(differ.is_empty(), "first differences (want): {differ:?}");
    // The decimal sum keeps its scale: 4 digits, as the prices have.
    let any = got.values().next().unwrap().1;
    assert_eq!(any.scale(), 4, "{any}");
}

#[test]
fn hand_worked_window_top_n_ranks_each_minute_once_it_closes() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let s = |sec: i64| B - 20_000 + sec * 1000; // minute 22:13:00 starts at s(0)
                                                // Minute 0: a spends 5+5, b 7, c 10, d 1; minute 1: b 3, a 2 (only two ads: two rows).
                                                // A last click at 2:10 closes minute 1 (watermark 2:05 >= 1:59.999); the end of the input
                                                // closes minute 2, z alone.
    let clicks = [
        ("a", 5, 1),
        ("b", 7, 2),
        ("c", 10, 3),
        ("a", 5, 40),
        ("d", 1, 59),
        ("b", 3, 61),
        ("a", 2, 70),
        ("z", 0, 130),
    ];
    let lines: Vec<String> = clicks
        .iter()
        .map(|(ad, bid, t)| format!(r#"{{"ad_id":"{ad}","bid":{bid},"ts":{}}}"#, s(*t)))
        .collect();
    let input = dir.join("clicks.ndjson");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = dir.join("out");
    let sql = format!(
        "{}CREATE TABLE o (window_start TIMESTAMP(3), ad_id STRING, spend BIGINT, rn BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO o SELECT window_start, ad_id, spend, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY spend DESC) AS rn
  FROM (SELECT window_start, window_end, ad_id, SUM(bid) AS spend
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
        GROUP BY window_start, window_end, ad_id)
) WHERE rn <= 2;",
        table("clicks", "ad_id STRING, bid BIGINT", &input, ""),
        path(&out)
    );
    run_sql(dir, &sql);
    let got: Vec<String> = read_lines(&out.join("part-0.json"));
    let row = |m: i64, ad: &str, spend: i64, rn: i64| {
        format!(
            r#"{{"window_start":"{}","ad_id":"{ad}","spend":{spend},"rn":{rn}}}"#,
            flink_ts(s(m * 60))
        )
    };
    // Minute 0: a and c both spent 10: the tie goes by the row's text (ad a first); b (7) is third.
    let mut want = vec![
        row(0, "a", 10, 1),
        row(0, "c", 10, 2),
        row(1, "b", 3, 1),
        row(1, "a", 2, 2),
        row(2, "z", 0, 1),
    ];
    let mut got_sorted = got.clone();
    got_sorted.sort();
    want.sort();
    assert_eq!(got_sorted, want, "{got:?}");
}

/// A small deterministic pseudo-random sequence (splitmix64), so the data is the same every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// The reference scenario's four inputs: impressions every 50 ms (jittered within 2 s), clicks
/// 0-14 s after about half of them (a tenth repeated, a few 30 s late), orders and a rate
/// changelog of three currencies.
fn reference_data(dir: &Path) {
    let mut rng = Rng(11);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let (mut imps, mut clicks, mut orders, mut rates) = (vec![], vec![], vec![], vec![]);
    let mut click_id = 0;
    for i in 0..3000i64 {
        let t = B + i * 50 - rng.below(2000) as i64;
        imps.push(format!(
            r#"{{"imp_id":"i-{i}","ad_id":"ad-{}","ts":{t}}}"#,
            rng.below(20)
        ));
        if rng.below(2) == 0 {
            click_id += 1;
            let ct = t + rng.below(14_000) as i64;
            let line = format!(r#"{{"click_id":"c-{click_id}","imp_id":"i-{i}","ts":{ct}}}"#);
            clicks.push((ct, line.clone()));
            if rng.below(10) == 0 {
                clicks.push((ct + rng.below(3000) as i64, line));
            }
        }
    }
    // Clicks in time order (jitter within the bound), a few held back 30 s: late.
    clicks.sort_by_key(|(t, _)| *t);
    let mut click_lines: Vec<String> = Vec::new();
    let mut held = Vec::new();
    for (n, (_, line)) in clicks.into_iter().enumerate() {
        if n % 97 == 5 {
            held.push(line);
        } else {
            click_lines.push(line);
        }
        if n % 600 == 599 {
            click_lines.append(&mut held);
        }
    }
    click_lines.append(&mut held);
    for (k, cur) in ["EUR", "GBP", "JPY"].iter().enumerate() {
        for v in 0..15i64 {
            let rate = format!("{}.{:06}", k + 1, rng.below(1_000_000));
            rates.push((
                B - 10_000 + v * 10_000 + k as i64,
                format!(r#"{{"currency":"{cur}","rate":{rate},"ts":TS}}"#),
            ));
        }
    }
    rates.sort_by_key(|(t, _)| *t);
    for o in 0..2000i64 {
        let t = B - 15_000 + o * 80;
        let cur = ["EUR", "GBP", "JPY", "CHF"][rng.below(4) as usize];
        orders.push(format!(
            r#"{{"order_id":{o},"currency":"{cur}","amount":{}.{:02},"ts":{t}}}"#,
            rng.below(500),
            rng.below(100)
        ));
    }
    let write = |name: &str, lines: Vec<String>| {
        std::fs::write(data.join(name), lines.join("\n") + "\n").unwrap()
    };
    write("impressions.ndjson", imps);
    write("clicks.ndjson", click_lines);
    write("orders.ndjson", orders);
    write(
        "fx_rates.ndjson",
        rates
            .into_iter()
            .map(|(t, l)| l.replace("TS", &t.to_string()))
            .collect(),
    );
}

fn json_lines(path: &Path) -> Vec<Value> {
    read_lines(path)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn sorted_strings(rows: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = rows.into_iter().collect();
    v.sort();
    v
}

#[test]
fn the_reference_scenario_and_its_sql_twin_give_the_same_rows() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    reference_data(dir);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(dir.join("config")).unwrap();
    for f in ["reference.toml", "reference.sql", "sql_reference.toml"] {
        std::fs::copy(root.join("config").join(f), dir.join("config").join(f)).unwrap();
    }
    for cfg in ["config/reference.toml", "config/sql_reference.toml"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(["run", "--config", cfg])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cfg}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = dir.join("out");
    // Unique clicks: the TOML writes the click as read, the SQL its three columns.
    let toml_unique = sorted_strings(
        json_lines(&out.join("unique_clicks.ndjson"))
            .iter()
            .map(|v| format!("{}|{}|{}", v["click_id"], v["imp_id"], v["ts"])),
    );
    let sql_unique = sorted_strings(
        json_lines(&out.join("sql_unique_clicks/part-0.json"))
            .iter()
            .map(|v| format!("{}|{}|{}", v["click_id"], v["imp_id"], v["ts"])),
    );
    assert!(toml_unique.len() > 1000, "{}", toml_unique.len());
    assert_eq!(sql_unique, toml_unique);
    // Matched: the TOML's left/right records against the SQL's flat columns (NULL: no click).
    let toml_matched = sorted_strings(json_lines(&out.join("matched.ndjson")).iter().map(|v| {
        format!(
            "{}|{}|{}|{}",
            v["left"]["imp_id"], v["left"]["ad_id"], v["right"]["click_id"], v["right"]["ts"]
        )
    }));
    let sql_matched = sorted_strings(json_lines(&out.join("sql_matched/part-0.json")).iter().map(
        |v| {
            format!(
                "{}|{}|{}|{}",
                v["imp_id"], v["ad_id"], v["click_id"], v["click_ts"]
            )
        },
    ));
    assert!(
        toml_matched.iter().any(|l| l.ends_with("|null|null")),
        "some impressions go unmatched"
    );
    // The held-back clicks are late for the dedupe: dropped there, in both.
    let ids: std::collections::BTreeSet<String> = json_lines(&dir.join("data/clicks.ndjson"))
        .iter()
        .map(|v| v["click_id"].to_string())
        .collect();
    assert!(
        toml_unique.len() < ids.len(),
        "{} of {}",
        toml_unique.len(),
        ids.len()
    );
    assert_eq!(sql_matched, toml_matched);
    // Orders in USD, exact: CHF has no rate (LEFT: NULL), the others the product.
    let exact = |path: &Path| {
        sorted_strings(read_lines(path).iter().map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let usd = if v["amount_usd"].is_null() {
                "null".to_string()
            } else {
                exact_number(l, &v, "amount_usd").normalize().to_string()
            };
            format!("{}|{}|{}|{usd}", v["order_id"], v["currency"], v["ts"])
        }))
    };
    let toml_orders = exact(&out.join("orders_usd.ndjson"));
    assert_eq!(toml_orders.len(), 2000);
    assert!(toml_orders.iter().any(|l| l.ends_with("|null")));
    assert_eq!(exact(&out.join("sql_orders_usd/part-0.json")), toml_orders);
}
