//! The Parquet sink through the real binary, read back with DuckDB (`scripts/duckdb-local.sh`,
//! installed with pip when missing): a windowed job's part files hold exactly the rows an
//! independent reference computes from the same events (exact decimal sums, row counts, pinned
//! and inferred column types), rolled into several files; a value that does not fit its pinned
//! column goes to the dead letters naming the sink and column; and under checkpoints ten `kill -9` at
//! random moments (small rolls and intervals, so kills land mid-roll and mid-commit), each
//! followed by a restore on another shard count, never leaves a partial or temporary file visible
//! nor a row twice, and the union of the committed files ends equal to the reference.

mod common;

use common::duckdb::duckdb;
use common::{sluice, toml_str, SplitMix, BASE, BIN};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// (ad_id, window_start) -> (clicks, spend in cents, qty).
type Reference = BTreeMap<(String, i64), (i64, i128, i64)>;

/// `n` events over `ads` ads, 2 ms apart in event time, up to 1 s out of order (the watermark
/// allows 2 s, so none is late and every window fires once), with 2-decimal prices; and the
/// reference sums.
fn events(d: &Path, n: u64, ads: u64, seed: u64) -> (String, Reference) {
    let mut rng = SplitMix(seed);
    let mut text = String::with_capacity(n as usize * 80);
    let mut want = Reference::new();
    for i in 0..n {
        let ts = BASE + 2 * i as i64 + (rng.next() % 1000) as i64;
        let ad = format!("ad-{}", rng.next() % ads);
        let cents = (rng.next() % 50_000) as i128;
        let qty = (rng.next() % 10) as i64;
        text.push_str(&format!(
            "{{\"ts\":{ts},\"ad_id\":\"{ad}\",\"price\":{}.{:02},\"qty\":{qty}}}\n",
            cents / 100,
            cents % 100
        ));
        let e = want.entry((ad, ts - ts.rem_euclid(1000))).or_default();
        e.0 += 1;
        e.1 += cents;
        e.2 += qty;
    }
    let path = d.join("events.ndjson");
    std::fs::write(&path, text).unwrap();
    (path.to_string_lossy().into_owned(), want)
}

struct Job<'a> {
    input: &'a str,
    out: &'a Path,
    shards: usize,
    roll: u64,
    columns: &'a str,
    /// `[checkpoint]` interval, if any.
    checkpoint: Option<&'a str>,
    rate: Option<&'a str>,
}

fn config(d: &Path, name: &str, j: &Job<'_>) -> String {
    let mut t = format!(
        "[runtime]\nshards = {}\nchunk_bytes = 65536\n\n\
         [sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"2s\", idle_timeout = \"30s\" }}\n{}\n\
         [transforms.per_ad]\ntype = \"window\"\ninputs = [\"ev\"]\ngroup_by = [\"ad_id\"]\n\
         window = {{ type = \"tumbling\", size = \"1s\" }}\n\
         aggregates = {{ clicks = \"count()\", spend = \"sum(price)\", qty = \"sum(qty)\" }}\n\n\
         [sinks.history]\ntype = \"parquet\"\ninputs = [\"per_ad\"]\npath = {}\n\
         roll = {{ rows = {} }}\ncolumns = {{ {} }}\n\n\
         [dead_letter]\npath = {}\n",
        j.shards,
        toml_str(j.input),
        j.rate
            .map_or(String::new(), |r| format!("rate_limit = \"{r}\"\n")),
        toml_str(&j.out.to_string_lossy()),
        j.roll,
        j.columns,
        toml_str(&d.join(format!("{name}.dead.ndjson")).to_string_lossy()),
    );
    if let Some(iv) = j.checkpoint {
        t.push_str(&format!(
            "\n[checkpoint]\ndir = {}\ninterval = \"{iv}\"\nretain = 2\n",
            toml_str(&d.join(format!("{name}-state")).to_string_lossy())
        ));
    }
    let p = d.join(format!("{name}.toml"));
    std::fs::write(&p, t).unwrap();
    p.to_string_lossy().into_owned()
}

/// The visible files of a sink directory: (part files, anything else).
fn listing(dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut parts = Vec::new();
    let mut other = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten() {
        let n = e.unwrap().file_name().into_string().unwrap();
        if n.starts_with("part-") && n.ends_with(".parquet") {
            parts.push(n);
        } else {
            other.push(n);
        }
    }
    parts.sort();
    other.sort();
    (parts, other)
}

fn cents(text: &str) -> i128 {
    let (i, f) = text.split_once('.').unwrap_or((text, "00"));
    assert_eq!(f.len(), 2, "{text} keeps its scale");
    let neg = i.starts_with('-');
    let v = i.trim_start_matches('-').parse::<i128>().unwrap() * 100 + f.parse::<i128>().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

/// Every row of the committed files, as DuckDB reads them, keyed like the reference; panics on a
/// key seen twice.
fn rows(dir: &Path) -> Reference {
    if listing(dir).0.is_empty() {
        return Reference::new();
    }
    let glob = dir.join("part-*.parquet");
    let sql = format!(
        "SELECT ad_id, epoch_ms(window_start) AS ws, clicks, CAST(spend AS VARCHAR) AS spend, qty \
         FROM read_parquet('{}') ORDER BY ad_id, ws",
        glob.display()
    );
    let table =
        duckdb(&sql).unwrap_or_else(|e| panic!("DuckDB cannot read {}: {e}", dir.display()));
    let mut got = Reference::new();
    for r in &table[1..] {
        let key = (r[0].clone(), r[1].parse().unwrap());
        let v = (r[2].parse().unwrap(), cents(&r[3]), r[4].parse().unwrap());
        assert!(
            got.insert(key.clone(), v).is_none(),
            "row {key:?} twice in {}",
            dir.display()
        );
    }
    got
}

fn assert_equal(got: &Reference, want: &Reference, what: &str) {
    let missing: Vec<_> = want
        .iter()
        .filter(|(k, _)| !got.contains_key(*k))
        .take(3)
        .collect();
    let wrong: Vec<_> = got
        .iter()
        .filter(|(k, v)| want.get(*k) != Some(*v))
        .take(3)
        .collect();
    assert!(
        missing.is_empty() && wrong.is_empty(),
        "{what}: missing {missing:?}; not the reference's {wrong:?}"
    );
    assert_eq!(got.len(), want.len(), "{what}");
}

#[test]
fn duckdb_reads_exactly_the_reference_rows_with_pinned_types_from_rolled_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (input, want) = events(d, 60_000, 40, 7);
    let out = d.join("history");
    let job = Job {
        input: &input,
        out: &out,
        shards: 2,
        roll: 1000,
        columns: r#"spend = "decimal(18,2)", window_start = "timestamp", window_end = "timestamp""#,
        checkpoint: None,
        rate: None,
    };
    let cfg = config(d, "plain", &job);
    let r = sluice(d, &["run", "--config", &cfg], Duration::from_secs(120));
    assert!(r.success, "{}", r.stderr);
    let (parts, other) = listing(&out);
    assert!(other.is_empty(), "only part files are left: {other:?}");
    assert!(parts.len() >= 4, "rolled at 1000 rows: {parts:?}");
    assert!(want.len() > 4000);
    assert_equal(&rows(&out), &want, "a clean run");
    // Exact totals and the column types DuckDB sees.
    let glob = out.join("part-*.parquet").display().to_string();
    let t = duckdb(&format!(
        "SELECT count(*), CAST(sum(spend) AS VARCHAR), sum(clicks) FROM read_parquet('{glob}')"
    ))
    .unwrap();
    let total: i128 = want.values().map(|v| v.1).sum();
    let clicks: i64 = want.values().map(|v| v.0).sum();
    assert_eq!(t[1][0], want.len().to_string());
    assert_eq!(cents(&t[1][1]), total);
    assert_eq!(t[1][2], clicks.to_string());
    let types = duckdb(&format!(
        "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('{glob}'))"
    ))
    .unwrap();
    let types: BTreeMap<&str, &str> = types[1..]
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(types["spend"], "DECIMAL(18,2)", "{types:?}");
    assert_eq!(
        types["window_start"], "TIMESTAMP WITH TIME ZONE",
        "{types:?}"
    );
    assert_eq!(types["clicks"], "BIGINT", "{types:?}");
    assert_eq!(types["ad_id"], "VARCHAR", "{types:?}");
}

#[test]
fn inferred_types_are_exact_and_values_too_big_for_a_pinned_decimal_are_dead_letters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (input, want) = events(d, 30_000, 40, 11);
    // Inferred: spend is DECIMAL(38,2) (never a float), window bounds BIGINT epoch ms.
    let out = d.join("inferred");
    let job = Job {
        input: &input,
        out: &out,
        shards: 1,
        roll: 1_000_000,
        columns: "",
        checkpoint: None,
        rate: None,
    };
    let cfg = config(d, "inferred", &job);
    let r = sluice(d, &["run", "--config", &cfg], Duration::from_secs(120));
    assert!(r.success, "{}", r.stderr);
    assert_eq!(listing(&out).0, ["part-0-0.parquet"]);
    let glob = out.join("part-*.parquet").display().to_string();
    let types = duckdb(&format!(
        "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('{glob}'))"
    ))
    .unwrap();
    let types: Vec<(String, String)> = types[1..]
        .iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    let names: Vec<&str> = types.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "ad_id",
            "window_start",
            "window_end",
            "clicks",
            "spend",
            "qty"
        ]
    );
    let ty = |n: &str| types.iter().find(|t| t.0 == n).unwrap().1.clone();
    assert_eq!(ty("spend"), "DECIMAL(38,2)");
    assert_eq!(ty("window_start"), "BIGINT");
    let sql = format!(
        "SELECT ad_id, window_start AS ws, clicks, CAST(spend AS VARCHAR), qty FROM read_parquet('{glob}')"
    );
    let mut got = Reference::new();
    for r in &duckdb(&sql).unwrap()[1..] {
        let v = (r[2].parse().unwrap(), cents(&r[3]), r[4].parse().unwrap());
        got.insert((r[0].clone(), r[1].parse().unwrap()), v);
    }
    assert_equal(&got, &want, "inferred types");

    // Pinned decimal(3,2) holds at most 9.99: windows of 10 clicks or more are dead letters, the
    // rest written.
    let out = d.join("narrow");
    let job = Job {
        out: &out,
        columns: r#"clicks = "decimal(3,2)""#,
        ..job
    };
    let cfg = config(d, "narrow", &job);
    let r = sluice(d, &["run", "--config", &cfg], Duration::from_secs(120));
    assert!(r.success, "{}", r.stderr);
    let (fits, too_big): (Reference, Reference) =
        want.clone().into_iter().partition(|(_, v)| v.0 < 10);
    assert!(!fits.is_empty() && !too_big.is_empty());
    let got = {
        let sql = format!(
            "SELECT ad_id, window_start, CAST(clicks AS BIGINT), CAST(spend AS VARCHAR), qty \
             FROM read_parquet('{}')",
            out.join("part-*.parquet").display()
        );
        let mut got = Reference::new();
        for r in &duckdb(&sql).unwrap()[1..] {
            let v = (r[2].parse().unwrap(), cents(&r[3]), r[4].parse().unwrap());
            got.insert((r[0].clone(), r[1].parse().unwrap()), v);
        }
        got
    };
    assert_equal(&got, &fits, "rows that fit decimal(3,2)");
    let dead = common::read_lines(&d.join("narrow.dead.ndjson"));
    assert_eq!(
        dead.len(),
        too_big.len(),
        "one dead letter per row that does not fit"
    );
    for l in &dead {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let reason = v["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("parquet sink `history`: column `clicks`")
                && reason.contains("more than 3 digits"),
            "{reason}"
        );
        assert_eq!(v["source"], "history");
        let row: serde_json::Value = serde_json::from_str(v["raw"].as_str().unwrap()).unwrap();
        let key = (
            row["ad_id"].as_str().unwrap().to_string(),
            row["window_start"].as_i64().unwrap(),
        );
        assert!(too_big.contains_key(&key), "{l}");
    }
    assert!(
        r.stderr
            .contains(&format!("{} dead letters", too_big.len())),
        "counted: {}",
        r.stderr
    );
}

/// `avg` renders as many digits as each quotient needs (`1.5`, `3.3333333333333335`): a column
/// typed from the first rows' scale would refuse later ones, so an unpinned average is a DOUBLE
/// and every window arrives, each within float rounding of the reference.
#[test]
fn averages_are_doubles_and_every_window_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (input, want) = events(d, 20_000, 30, 5);
    let out = d.join("avg");
    let job = Job {
        input: &input,
        out: &out,
        shards: 2,
        roll: 1_000_000,
        columns: "",
        checkpoint: None,
        rate: None,
    };
    let cfg = config(d, "avg", &job);
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "qty = \"sum(qty)\"",
        "qty = \"sum(qty)\", mean = \"avg(price)\"",
    );
    std::fs::write(&cfg, text).unwrap();
    let r = sluice(d, &["run", "--config", &cfg], Duration::from_secs(120));
    assert!(r.success, "{}", r.stderr);
    assert!(
        common::read_lines(&d.join("avg.dead.ndjson")).is_empty(),
        "no dead letters"
    );
    let glob = out.join("part-*.parquet").display().to_string();
    let types = duckdb(&format!(
        "SELECT column_type FROM (DESCRIBE SELECT mean FROM read_parquet('{glob}'))"
    ))
    .unwrap();
    assert_eq!(types[1], ["DOUBLE"]);
    let rows = duckdb(&format!(
        "SELECT ad_id, window_start, mean FROM read_parquet('{glob}')"
    ))
    .unwrap();
    assert_eq!(rows.len() - 1, want.len(), "every window");
    for r in &rows[1..] {
        let (clicks, cents, _) = want[&(r[0].clone(), r[1].parse::<i64>().unwrap())];
        let expect = cents as f64 / 100.0 / clicks as f64;
        let got: f64 = r[2].parse().unwrap();
        assert!(
            (got - expect).abs() <= 1e-9 * expect.abs().max(1.0),
            "{r:?}: {expect}"
        );
    }
}

#[test]
fn kill_9_at_random_moments_then_restore_never_shows_a_partial_or_duplicate_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Many ads: nearly a row per event, so a shard's 256 KiB line buffer fills and rolls files
    // several times between checkpoints, and kills find files open and rolled, not yet committed.
    let (input, want) = events(d, 200_000, 400, 23);
    let out = d.join("history");
    let mut rng = SplitMix(99);
    let mut resumed = 0;
    let mut kills = 0;
    let mut mid_file = 0;
    let cols = r#"spend = "decimal(18,2)", window_start = "timestamp""#;
    for (i, shards) in [2usize, 1, 3, 2, 1, 3, 2, 1, 3, 2].into_iter().enumerate() {
        let job = Job {
            input: &input,
            out: &out,
            shards,
            roll: 500,
            columns: cols,
            checkpoint: Some("300ms"),
            rate: Some("40000/s"),
        };
        let cfg = config(d, "crash", &job);
        let err = d.join(format!("crash-stderr-{i}.txt"));
        let mut child = Command::new(BIN)
            .args(["run", "--config", &cfg])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(150 + rng.next() % 750));
        if child.try_wait().unwrap().is_none() {
            kills += 1;
        }
        let _ = child.kill(); // SIGKILL: no flush, no final checkpoint, maybe mid-roll or mid-commit
        let _ = child.wait();
        let log = std::fs::read_to_string(&err).unwrap();
        resumed += usize::from(log.contains("resuming from checkpoint"));
        eprintln!(
            "run {i} on {shards} shards: {} committed files, {} temporaries; resumed: {}",
            listing(&out).0.len(),
            listing(&out).1.len(),
            log.contains("resuming from checkpoint")
        );
        // Whatever the moment: every visible file is whole (DuckDB reads them all), no temporary
        // has a part's name, no row is there twice, and each is the reference's.
        let (_, other) = listing(&out);
        // Temporaries left: the kill came with files open or rolled and not yet committed.
        mid_file += usize::from(!other.is_empty());
        assert!(
            other
                .iter()
                .all(|n| n.starts_with(".part-") && n.ends_with(".parquet.tmp")),
            "{other:?}"
        );
        let got = rows(&out);
        for (k, v) in &got {
            assert_eq!(want.get(k), Some(v), "after kill {i}: {k:?}");
        }
    }
    let job = Job {
        input: &input,
        out: &out,
        shards: 2,
        roll: 500,
        columns: cols,
        checkpoint: Some("300ms"),
        rate: None,
    };
    let cfg = config(d, "crash", &job);
    let last = sluice(d, &["run", "--config", &cfg], Duration::from_secs(120));
    assert!(last.success, "{}", last.stderr);
    resumed += usize::from(last.stderr.contains("resuming from checkpoint"));
    assert!(
        kills >= 8,
        "only {kills} runs were killed before they ended"
    );
    assert!(resumed >= 3, "recovery was exercised only {resumed} times");
    assert!(mid_file >= 1, "no kill found files not yet committed");
    let (parts, other) = listing(&out);
    assert!(other.is_empty(), "nothing temporary is left: {other:?}");
    assert!(parts.len() > 10, "{parts:?}");
    assert_equal(
        &rows(&out),
        &want,
        "the union of committed files after kill -9 and restores",
    );
    let dead = common::read_lines(&d.join("crash.dead.ndjson"));
    assert!(dead.is_empty(), "{dead:?}");
}
