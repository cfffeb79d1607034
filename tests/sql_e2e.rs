//! Flink SQL jobs through the real binary (`[pipeline] sql`): a hand-worked clicks file (out of
//! order, late, duplicate, null and malformed lines) gives exactly the window and projection rows
//! worked out below, written as Flink's JSON format writes them; a TOML window job and its SQL
//! twin give identical lines on generated data, both equal to a per-event watermark model written
//! here; `explain` shows the compiled graph; bad SQL is refused by `validate` with the file, line
//! and column.

mod common;

use common::sql::{run_job, sql_job};
use common::{read_lines, sluice, toml_str};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
/// 2023-11-14 22:13:20 UTC.
const B: i64 = 1_700_000_000_000;

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `CREATE TABLE clicks` over `file`, watermark `rt - bound_s`.
fn clicks_table(file: &Path, bound_s: u32) -> String {
    format!(
        "CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '{bound_s}' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
",
        path(file)
    )
}

/// A window result row as Flink's JSON writes it, within minute 22:13 of 2023-11-14; `count` names
/// the COUNT(*) column.
fn window_row(ad: &str, start: &str, end: &str, count: (&str, i64), spend: i64) -> Value {
    json!({"ad_id": ad, "window_start": format!("2023-11-14 22:13:{start}"),
           "window_end": format!("2023-11-14 22:13:{end}"), count.0: count.1, "spend": spend})
}

fn parsed_sorted(p: &Path) -> Vec<Value> {
    let mut rows: Vec<Value> = read_lines(p)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    rows.sort_by_key(|r| r.to_string());
    rows
}

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(|r| r.to_string());
    rows
}

fn line(ts: i64, ad: &str, bid: &str) -> String {
    format!(
        "{{\"ad_id\":\"{ad}\",\"user_id\":\"u\",\"bid\":{bid},\"ts\":{}}}",
        B + ts
    )
}

#[test]
fn hand_worked_clicks_give_flinks_window_and_projection_rows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Watermark = max event time - 2 s; the comment is the watermark (offset from B) after the line.
    let lines = [
        line(1_000, "a", "3"),                   // -1000
        line(4_000, "b", "7"),                   // 2000
        line(2_000, "a", "2"),                   // out of order, same window; 2000
        line(13_000, "a", "10"),                 // 11000: [0 s, 10 s) fires
        line(5_000, "b", "100"),                 // late for [0 s, 10 s): dropped and counted
        line(11_000, "b", "1"),                  // 11000
        line(11_000, "b", "1"),                  // a duplicate: SQL counts it again
        "{\"ad_id\":\"a\",\"bid\":".to_string(), // malformed: a dead letter
        line(25_000, "a", "4"),                  // 23000: [10 s, 20 s) fires
        line(26_000, "c", "50"),                 // filtered out of the projection by ad_id <> 'c'
        line(27_000, "a", "null"), // COUNT(*) counts it, SUM skips it, WHERE bid > 2 drops it
    ];
    let input = d.join("clicks.ndjson");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let (cpm, tiers) = (d.join("cpm"), d.join("tiers"));
    let sql = format!(
        "{}CREATE TABLE cpm (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, spend BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TEMPORARY TABLE tiers (ad STRING, tier STRING, double_bid BIGINT, at TIMESTAMP_LTZ(3))
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO cpm
SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '10' SECOND))
GROUP BY ad_id, window_start, window_end;
INSERT INTO tiers
SELECT UPPER(ad_id), CASE WHEN bid >= 100 THEN 'high' WHEN bid > 5 THEN 'mid' ELSE 'low' END, bid * 2, rt
FROM clicks WHERE bid > 2 AND ad_id <> 'c';
END;
",
        clicks_table(&input, 2),
        path(&cpm),
        path(&tiers)
    );
    let cfg = sql_job(d, &sql, "");
    let exit = run_job(d, &cfg);
    assert!(
        exit.stderr.contains("1 late dropped, 1 dead letters"),
        "{}",
        exit.stderr
    );

    let w = |ad, start, end, clicks, spend| window_row(ad, start, end, ("clicks", clicks), spend);
    let want = vec![
        w("a", "20", "30", 2, 5),
        w("b", "20", "30", 1, 7),
        w("a", "30", "40", 1, 10),
        w("b", "30", "40", 2, 2),
        w("a", "40", "50", 2, 4),
        w("c", "40", "50", 1, 50),
    ];
    assert_eq!(parsed_sorted(&cpm.join("part-0.json")), sorted(want));

    let t = |ad: &str, tier: &str, double_bid: i64, sec: u32| json!({"ad": ad, "tier": tier, "double_bid": double_bid, "at": format!("2023-11-14 22:13:{sec}Z")});
    let want = vec![
        t("A", "low", 6, 21),
        t("B", "mid", 14, 24),
        t("A", "mid", 20, 33),
        t("B", "high", 200, 25),
        t("A", "low", 8, 45),
    ];
    assert_eq!(parsed_sorted(&tiers.join("part-0.json")), sorted(want));

    let dead = read_lines(&d.join("dead.ndjson"));
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert!(
        dead[0].contains("\\\"bid\\\":"),
        "the raw line is kept: {}",
        dead[0]
    );
}

/// (ad_id, window start) -> (count, sum).
type Windows = BTreeMap<(String, i64), (i64, i64)>;

/// Counts and sums per (ad_id, minute) with the watermark advanced per event (max - 5 s), an
/// event dropped when its window's last millisecond is at or below the watermark on arrival.
fn model(lines: &[String]) -> (Windows, usize) {
    let (mut wm, mut late, mut out) = (i64::MIN, 0, BTreeMap::new());
    for l in lines {
        let v: Value = serde_json::from_str(l).unwrap();
        let ts = v["ts"].as_i64().unwrap();
        let start = ts.div_euclid(60_000) * 60_000;
        if start + 60_000 - 1 <= wm {
            late += 1;
        } else {
            let e = out
                .entry((v["ad_id"].as_str().unwrap().to_string(), start))
                .or_insert((0, 0));
            e.0 += 1;
            e.1 += v["bid"].as_i64().unwrap();
        }
        wm = wm.max(ts - 5_000);
    }
    (out, late)
}

#[test]
fn a_toml_window_job_and_its_sql_twin_write_identical_lines_equal_to_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("clicks.ndjson");
    let gen = sluice(
        d,
        &[
            "loadgen",
            "clicks",
            "--events",
            "60000",
            "--keys",
            "300",
            "--rate",
            "200",
            "--late-fraction",
            "0.02",
            "--late-by-ms",
            "70000",
            "--out",
            &path(&input),
        ],
        MIN,
    );
    assert!(gen.success, "{}", gen.stderr);

    let toml_out = d.join("toml.ndjson");
    let toml = format!(
        "[runtime]\nshards = 2\n\n[sources.clicks]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\nwatermark = {{ max_out_of_orderness = \"5s\" }}\n\n\
         [transforms.cpm]\ntype = \"window\"\ninputs = [\"clicks\"]\ngroup_by = [\"ad_id\"]\n\
         window = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ clicks = \"count()\", spend = \"sum(bid)\" }}\n\n\
         [transforms.cpm_out]\ntype = \"select\"\ninputs = [\"cpm\"]\n\
         fields = {{ ad_id = \"ad_id\", window_start = \"sql_timestamp(window_start)\", window_end = \"sql_timestamp(window_end)\", clicks = \"clicks\", spend = \"spend\" }}\n\n\
         [sinks.out]\ntype = \"file\"\ninputs = [\"cpm_out\"]\npath = {}\n",
        toml_str(&path(&input)),
        toml_str(&path(&toml_out))
    );
    std::fs::write(d.join("window.toml"), toml).unwrap();
    run_job(d, &path(&d.join("window.toml")));

    let sql_out = d.join("sql");
    let sql = format!(
        "{}CREATE TABLE cpm (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, spend BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*) AS clicks, SUM(bid) AS spend
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY ad_id, window_start, window_end;",
        clicks_table(&input, 5),
        path(&sql_out)
    );
    let cfg = sql_job(d, &sql, "");
    let exit_sql = run_job(d, &cfg);

    let mut toml_lines = read_lines(&toml_out);
    let mut sql_lines = read_lines(&sql_out.join("part-0.json"));
    toml_lines.sort();
    sql_lines.sort();
    assert!(toml_lines.len() > 1000, "{} results", toml_lines.len());
    assert_eq!(toml_lines, sql_lines);

    let (want, late) = model(&read_lines(&input));
    assert!(late > 100, "the input should hold late events: {late}");
    assert!(
        exit_sql.stderr.contains(&format!(" {late} late dropped")),
        "model: {late} late\n{}",
        exit_sql.stderr
    );
    let fmt = |ms: i64| {
        let secs = ms.div_euclid(1000);
        // Civil time from epoch seconds (UTC), independent of the engine's formatter.
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (y, m, dd) = civil(days);
        format!(
            "{y:04}-{m:02}-{dd:02} {:02}:{:02}:{:02}",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        )
    };
    let want: Vec<Value> = want
        .into_iter()
        .map(|((ad, start), (clicks, spend))| {
            json!({"ad_id": ad, "window_start": fmt(start), "window_end": fmt(start + 60_000), "clicks": clicks, "spend": spend})
        })
        .collect();
    assert_eq!(parsed_sorted(&sql_out.join("part-0.json")), sorted(want));
}

/// Howard Hinnant's days-from-civil inverse: (year, month, day) of a day count since 1970-01-01.
fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[test]
fn explain_prints_the_compiled_graph_and_validate_points_bad_sql_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("clicks.ndjson");
    std::fs::write(&input, line(0, "a", "1") + "\n").unwrap();
    let good = format!(
        "{}CREATE TABLE o (ad_id STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id, COUNT(*) FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(rt), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end, ad_id;",
        clicks_table(&input, 5)
    );
    let cfg = sql_job(d, &good, "");
    let exit = sluice(d, &["explain", "--config", &cfg], MIN);
    assert!(exit.success, "{}", exit.stderr);
    for want in [
        "type = \"sliding\", size = \"10000ms\", slide = \"5000ms\"",
        "clicks: file ",
        "watermark = max event time - 5000 ms",
        "window, sliding 10000 ms every 5000 ms",
        "inputs keyed on ad_id <- clicks",
        "o: stdout <- insert_1_o_window -> insert_1_o (select)",
    ] {
        assert!(
            exit.stdout.contains(want),
            "{want:?} not in\n{}",
            exit.stdout
        );
    }

    // The bad column is on line 7 of job.sql, column 40.
    let bad = good.replace("SELECT ad_id, COUNT(*)", "SELECT ad_id, COUNT(*) + nope");
    let cfg = sql_job(d, &bad, "");
    let exit = sluice(d, &["validate", "--config", &cfg], MIN);
    assert!(!exit.success);
    let sql_file = path(&d.join("job.sql"));
    assert!(
        exit.stderr
            .contains(&format!("{sql_file}:7:40: no column `nope`")),
        "{}",
        exit.stderr
    );
    assert!(exit.stderr.contains("no column `nope`"), "{}", exit.stderr);
}

#[test]
fn session_windows_per_partition_key_close_a_gap_after_their_last_event() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("clicks.ndjson");
    let lines = [
        line(1_000, "a", "1"),
        line(2_000, "b", "10"),
        line(3_000, "a", "2"),  // extends a's session to 8 s
        line(7_500, "a", "4"),  // within the gap again: a's session now ends at 12.5 s
        line(13_000, "a", "8"), // 500 ms past the end: a new session
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = d.join("sessions");
    let sql = format!(
        "{}CREATE TABLE s (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT, spend BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO s SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)
FROM TABLE(SESSION(TABLE clicks PARTITION BY ad_id, DESCRIPTOR(rt), INTERVAL '5' SECOND))
GROUP BY ad_id, window_start, window_end;",
        clicks_table(&input, 0),
        path(&out)
    );
    let cfg = sql_job(d, &sql, "");
    run_job(d, &cfg);
    let s = |ad, start, end, n, spend| window_row(ad, start, end, ("n", n), spend);
    let want = vec![
        s("a", "21", "32.5", 3, 7),
        s("b", "22", "27", 1, 10),
        s("a", "33", "38", 1, 8),
    ];
    assert_eq!(parsed_sorted(&out.join("part-0.json")), sorted(want));
}

#[test]
fn is_null_is_not_null_and_count_of_a_column_see_missing_and_null_fields() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("clicks.ndjson");
    let lines = [
        line(1_000, "a", "1"),
        line(2_000, "b", "null"),
        format!("{{\"ad_id\":\"c\",\"ts\":{}}}", B + 3_000), // no bid at all: null too
        line(4_000, "d", "0"),
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let (nulls, set) = (d.join("nulls"), d.join("set"));
    let sql = format!(
        "{}CREATE TABLE nulls (ad_id STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE set_ (ad_id STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO nulls SELECT ad_id FROM clicks WHERE bid IS NULL;
INSERT INTO set_ SELECT ad_id FROM clicks WHERE bid IS NOT NULL;
CREATE TABLE counts (n BIGINT, bids BIGINT, users BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO counts SELECT COUNT(*), COUNT(bid), COUNT(user_id)
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end;",
        clicks_table(&input, 0),
        path(&nulls),
        path(&set),
        path(&d.join("counts"))
    );
    let cfg = sql_job(d, &sql, "");
    run_job(d, &cfg);
    let ads = |p: &Path| parsed_sorted(&p.join("part-0.json"));
    assert_eq!(
        ads(&nulls),
        vec![json!({"ad_id": "b"}), json!({"ad_id": "c"})]
    );
    assert_eq!(
        ads(&set),
        vec![json!({"ad_id": "a"}), json!({"ad_id": "d"})]
    );
    // COUNT(col) counts the non-NULL values: bid is null in b and missing in c; user_id is
    // there in the three lines that have it (c has none).
    assert_eq!(
        ads(&d.join("counts")),
        vec![json!({"n": 4, "bids": 2, "users": 3})]
    );
}

#[test]
fn hints_give_a_window_allowed_lateness_a_late_table_and_hot_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("clicks.ndjson");
    // Watermark = max time (bound 0). Minute 22:13 ends at B + 40 s. a@-20 s fires it at 45 s
    // (n 1); a@-19 s is late but within the 30 s lateness: it re-fires (n 2, spend 5); b@100 s
    // ends the lateness; a@-18 s then goes to the late table as read.
    let lines = [
        line(-20_000, "a", "1"),
        line(45_000, "a", "2"),
        line(-19_000, "a", "4"),
        line(100_000, "b", "8"),
        line(-18_000, "a", "16"),
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let (out, late) = (d.join("out"), d.join("late"));
    let sql = format!(
        "{}CREATE TABLE o (ad_id STRING, window_start TIMESTAMP(3), n BIGINT, spend BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE late (ad_id STRING, bid BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO o SELECT ad_id, window_start, COUNT(*), SUM(bid)
FROM TABLE(TUMBLE(TABLE clicks /*+ OPTIONS('sluice.hot_keys'='auto', 'sluice.allowed_lateness'='30 s', 'sluice.late_events'='late') */, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY ad_id, window_start, window_end;",
        clicks_table(&input, 0),
        path(&out),
        path(&late)
    );
    let cfg = sql_job(d, &sql, "");
    run_job(d, &cfg);
    let row = |ad: &str, m: &str, n: i64, spend: i64| json!({"ad_id": ad, "window_start": format!("2023-11-14 22:{m}:00"), "n": n, "spend": spend});
    // The re-fire is an update: the file holds both values of minute 13, in order.
    let got: Vec<Value> = read_lines(&out.join("part-0.json"))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let a13: Vec<&Value> = got
        .iter()
        .filter(|r| r["window_start"] == "2023-11-14 22:13:00")
        .collect();
    assert_eq!(a13, [&row("a", "13", 1, 1), &row("a", "13", 2, 5)]);
    assert_eq!(
        sorted(got.clone()),
        sorted(vec![
            row("a", "13", 1, 1),
            row("a", "13", 2, 5),
            row("a", "14", 1, 2),
            row("b", "15", 1, 8)
        ])
    );
    let late_rows = parsed_sorted(&late.join("part-0.json"));
    assert_eq!(
        late_rows,
        vec![serde_json::from_str::<Value>(&lines[4]).unwrap()]
    );
}

#[test]
fn a_datagen_table_runs_on_the_built_in_generator() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out");
    let sql = format!(
        "CREATE TABLE g (ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'number-of-rows' = '20000');
CREATE TABLE o (window_start TIMESTAMP(3), n BIGINT, users BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO o SELECT window_start, COUNT(*), COUNT(user_id)
FROM TABLE(TUMBLE(TABLE g, DESCRIPTOR(rt), INTERVAL '1' SECOND)) GROUP BY window_start, window_end;",
        path(&out)
    );
    let cfg = sql_job(d, &sql, "");
    run_job(d, &cfg);
    let rows = parsed_sorted(&out.join("part-0.json"));
    let total: i64 = rows.iter().map(|r| r["n"].as_i64().unwrap()).sum();
    // Every generated row once (the generator's jitter stays within the 5 s bound: none late),
    // each with a user.
    assert_eq!(total, 20_000, "{rows:?}");
    assert!(rows.iter().all(|r| r["users"] == r["n"]), "{rows:?}");
}

/// A table without a WATERMARK is an ordinary table (Flink's): it feeds a projection and a filter,
/// its rows need no time column, and a malformed line still goes to the dead letters. Beside it in
/// the same job, a timed table over the same file feeds a window, where a row without `ts` has no
/// time and is dead-lettered as before.
#[test]
fn a_table_without_a_watermark_feeds_projections_and_filters_beside_a_timed_window() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("clicks.ndjson");
    let lines = [
        line(1_000, "a", "5"),
        line(500, "b", "7"),
        "{\"ad_id\":\"a\",\"user_id\":\"u\",\"bid\":9}".to_string(), // no ts
        "not json".to_string(),
        line(100, "c", "1"),
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let (big, per) = (d.join("big"), d.join("per"));
    let sql = format!(
        "CREATE TABLE plain (ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
{}CREATE TABLE big (ad_id STRING, bid2 BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE per (ad_id STRING, n BIGINT, spend BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
INSERT INTO big SELECT ad_id, bid * 2 FROM plain WHERE bid > 4;
INSERT INTO per SELECT ad_id, COUNT(*), SUM(bid)
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end;",
        path(&input),
        clicks_table(&input, 0),
        path(&big),
        path(&per)
    );
    let cfg = sql_job(d, &sql, "");
    run_job(d, &cfg);
    // Every parsed row with bid > 4, the one without ts included.
    assert_eq!(
        parsed_sorted(&big.join("part-0.json")),
        sorted(vec![
            json!({"ad_id": "a", "bid2": 10}),
            json!({"ad_id": "b", "bid2": 14}),
            json!({"ad_id": "a", "bid2": 18}),
        ])
    );
    // The window sees the timed rows only (the ts-less one is a dead letter there).
    assert_eq!(
        parsed_sorted(&per.join("part-0.json")),
        sorted(vec![
            json!({"ad_id": "a", "n": 1, "spend": 5}),
            json!({"ad_id": "b", "n": 1, "spend": 7}),
            json!({"ad_id": "c", "n": 1, "spend": 1}),
        ])
    );
    let dead: Vec<Value> = read_lines(&d.join("dead.ndjson"))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut seen: Vec<(String, i64, String)> = dead
        .iter()
        .map(|v| {
            let raw = v["raw"].as_str().unwrap_or_default();
            let source = v["source"].as_str().unwrap().to_string();
            (source, v["offset"].as_i64().unwrap(), raw.to_string())
        })
        .collect();
    seen.sort();
    let off_no_ts = (lines[0].len() + lines[1].len() + 2) as i64;
    let off_bad = off_no_ts + lines[2].len() as i64 + 1;
    assert_eq!(
        seen,
        [
            ("clicks".to_string(), off_no_ts, lines[2].clone()),
            ("clicks".to_string(), off_bad, "not json".to_string()),
            ("plain".to_string(), off_bad, "not json".to_string()),
        ],
        "{dead:#?}"
    );
}
