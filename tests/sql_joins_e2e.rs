//! SQL joins and deduplication through the real binary: a hand-worked job (a duplicate click, a
//! late click, a click without an impression id, bounds hit exactly, a price change between
//! clicks) gives exactly the rows worked out below; and the shipped `config/ad_spend.sql` on
//! `sluice loadgen flow` files equals the ad-spend reference model (`common::flow_model`, written
//! from the semantics) row for row, as its TOML twin does.

mod common;

use common::flow_job::flow_data;
use common::flow_model::{exact_number, spend_model_dir};
use common::{read_lines, sluice, toml_str};
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
/// 2023-11-14 22:13:20 UTC.
const B: i64 = 1_700_000_000_000;

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn run_sql(dir: &Path, sql: &str) -> common::Exit {
    std::fs::write(dir.join("job.sql"), sql).unwrap();
    let toml = format!(
        "[runtime]\nshards = 2\n\n[pipeline]\nsql = {}\n\n[dead_letter]\npath = {}\n",
        toml_str(&path(&dir.join("job.sql"))),
        toml_str(&path(&dir.join("dead.ndjson")))
    );
    std::fs::write(dir.join("job.toml"), toml).unwrap();
    let exit = sluice(
        dir,
        &["run", "--config", &path(&dir.join("job.toml"))],
        MIN * 2,
    );
    assert!(exit.success, "{}", exit.stderr);
    exit
}

/// Epoch ms as Flink's JSON writes a TIMESTAMP(3): `2023-11-14 22:13:20` (no fraction at .000).
fn flink_ts(ms: i64) -> String {
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let s = rem / 1000;
    let frac = if rem % 1000 == 0 {
        String::new()
    } else {
        format!(".{:03}", rem % 1000)
    };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}{frac}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
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
    let sql = format!(
        "SET 'table.exec.state.ttl' = '10 min';
{}{}{}CREATE TABLE o (click_id BIGINT, imp_id BIGINT, ad_id STRING, price DECIMAL(10, 4),
  doubled DECIMAL(11, 4), rt TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE VIEW uc AS SELECT click_id, imp_id, rt FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY click_id ORDER BY rt) AS rn FROM clicks) WHERE rn = 1;
CREATE VIEW m AS SELECT c.click_id, i.imp_id, i.ad_id, c.rt FROM imps i, uc c
  WHERE i.imp_id = c.imp_id AND c.rt >= i.rt AND c.rt <= i.rt + INTERVAL '10' SECOND;
INSERT INTO o SELECT m.click_id, m.imp_id, m.ad_id, p.price, p.price * 2, m.rt
  FROM m JOIN prices FOR SYSTEM_TIME AS OF m.rt AS p ON m.ad_id = p.ad_id;",
        table("imps", "imp_id BIGINT, ad_id STRING", &ip, ""),
        table("clicks", "click_id BIGINT, imp_id BIGINT", &cp, ""),
        table("prices", "ad_id STRING, price DECIMAL(10, 4)", &pp, ",\n  PRIMARY KEY (ad_id) NOT ENFORCED"),
        path(&out)
    );
    run_sql(dir, &sql);
    let mut got = read_lines(&out.join("part-0.json"));
    got.sort();
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
