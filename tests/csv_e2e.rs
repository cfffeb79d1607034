//! `format = "csv"` through the real binary: CSV files with a header (quoted fields holding
//! commas and quotes, CRLF line ends, a few malformed lines) windowed into exact decimal sums equal
//! to a reference computed from the generated rows, malformed lines in the dead letters with their
//! reason and byte offset; and CSV Kafka records with declared columns read from a real broker.

mod common;

use common::kafka::{broker, client_toml, topic};
use common::{read_lines, sluice, toml_str, SplitMix, BASE};
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);

/// (ad, window start) -> (count, cents).
type Reference = BTreeMap<(String, i64), (u64, i64)>;

/// `n` rows `ts,ad,price,note` (CRLF ends) with a header; every 500th line malformed. The
/// reference over the good rows, and the byte offsets of the bad lines.
fn csv_file(d: &Path, n: u64) -> (String, Reference, Vec<u64>) {
    let mut rng = SplitMix(3);
    let mut text = String::from("ts,ad,price,note\r\n");
    let (mut want, mut bad) = (Reference::new(), Vec::new());
    for i in 0..n {
        let offset = text.len() as u64;
        if i % 500 == 499 {
            text.push_str(&format!("{},\"unclosed,1.00,x\r\n", BASE + i as i64));
            bad.push(offset);
            continue;
        }
        let ts = BASE + i as i64 * 7 + (rng.next() % 500) as i64;
        let ad = format!("ad, \"{}\"", rng.next() % 5);
        let cents = (rng.next() % 100_000) as i64;
        let quoted = ad.replace('"', "\"\"");
        text.push_str(&format!(
            "{ts},\"{quoted}\",{}.{:02},note {i}\r\n",
            cents / 100,
            cents % 100
        ));
        let e = want.entry((ad, ts - ts.rem_euclid(1000))).or_default();
        e.0 += 1;
        e.1 += cents;
    }
    let p = d.join("clicks.csv");
    std::fs::write(&p, text).unwrap();
    (p.to_string_lossy().into_owned(), want, bad)
}

fn cents(text: &str) -> i64 {
    let (i, f) = text.split_once('.').unwrap_or((text, ""));
    format!("{i}{f:0<2}").parse().unwrap()
}

#[test]
fn a_csv_file_with_a_header_windows_to_exact_sums_and_bad_lines_are_dead_letters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (input, want, bad) = csv_file(d, 6_000);
    let out = d.join("out.ndjson");
    let dead = d.join("dead.ndjson");
    let cfg = d.join("csv.toml");
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 2\nchunk_bytes = 16384\n\n\
             [sources.clicks]\ntype = \"file\"\npath = {}\nformat = \"csv\"\ncsv = {{ header = true }}\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
             watermark = {{ max_out_of_orderness = \"1s\" }}\n\n\
             [transforms.per_ad]\ntype = \"window\"\ninputs = [\"clicks\"]\ngroup_by = [\"ad\"]\n\
             window = {{ type = \"tumbling\", size = \"1s\" }}\n\
             aggregates = {{ n = \"count()\", spend = \"sum(price)\" }}\n\n\
             [sinks.out]\ntype = \"file\"\ninputs = [\"per_ad\"]\npath = {}\n\n\
             [dead_letter]\npath = {}\n",
            toml_str(&input),
            toml_str(&out.to_string_lossy()),
            toml_str(&dead.to_string_lossy()),
        ),
    )
    .unwrap();
    let r = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    let mut got = Reference::new();
    for l in read_lines(&out) {
        let v: Value = serde_json::from_str(&l).unwrap();
        // The sum's own text: exact cents.
        let spend = l.split("\"spend\":").nth(1).unwrap().trim_end_matches('}');
        let key = (
            v["ad"].as_str().unwrap().to_string(),
            v["window_start"].as_i64().unwrap(),
        );
        got.insert(key, (v["n"].as_u64().unwrap(), cents(spend)));
    }
    assert_eq!(got, want);
    let dead = read_lines(&dead);
    assert_eq!(dead.len(), bad.len(), "{dead:?}");
    let mut offsets = Vec::new();
    for l in &dead {
        let v: Value = serde_json::from_str(l).unwrap();
        let reason = v["reason"].as_str().unwrap();
        assert!(
            reason.contains("not a CSV record") && reason.contains("not closed"),
            "{reason}"
        );
        offsets.push(v["offset"].as_u64().unwrap());
    }
    // Two shards write dead letters as they meet them.
    offsets.sort_unstable();
    assert_eq!(offsets, bad);
}

#[test]
fn csv_kafka_records_with_declared_columns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = topic("csv", 2);
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    for i in 0..2_000i64 {
        let line = format!("{i};{};\"city; {}\"", BASE + i, i % 3);
        p.send(
            BaseRecord::<(), str>::to(&t)
                .payload(&line)
                .partition((i % 2) as i32),
        )
        .unwrap();
        p.poll(Duration::ZERO);
    }
    p.send(BaseRecord::<(), str>::to(&t).payload("oops").partition(0))
        .unwrap();
    p.flush(Duration::from_secs(30)).unwrap();
    let out = d.join("out.ndjson");
    let dead = d.join("dead.ndjson");
    let cfg = d.join("k.toml");
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 2\n\n\
             [sources.ev]\ntype = \"kafka\"\n{}topic = \"{t}\"\nstart = \"earliest\"\nstop_at = \"end\"\n\
             format = \"csv\"\ncsv = {{ columns = [\"id\", \"ts\", \"city\"], delimiter = \";\" }}\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n\n\
             [transforms.one]\ntype = \"filter\"\ninputs = [\"ev\"]\nwhere = \"city == 'city; 1'\"\n\n\
             [sinks.out]\ntype = \"file\"\ninputs = [\"one\"]\npath = {}\n\n\
             [dead_letter]\npath = {}\n",
            client_toml(),
            toml_str(&out.to_string_lossy()),
            toml_str(&dead.to_string_lossy()),
        ),
    )
    .unwrap();
    let r = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    let mut ids: Vec<i64> = read_lines(&out)
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_i64()
                .unwrap()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..2_000).filter(|i| i % 3 == 1).collect::<Vec<_>>());
    let dead = read_lines(&dead);
    assert_eq!(dead.len(), 1);
    assert!(
        dead[0].contains("1 fields; the source has 3 columns"),
        "{}",
        dead[0]
    );
}

#[test]
fn csv_settings_that_cannot_work_are_config_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = d.join("bad.toml");
    std::fs::write(
        &cfg,
        "[sources.a]\ntype = \"file\"\npath = \"x.csv\"\nformat = \"csv\"\n\
         event_time = { field = \"ts\" }\n\n\
         [sources.b]\ntype = \"file\"\npath = \"y.csv\"\nformat = \"csv\"\n\
         csv = { columns = [\"ts\", \"ts\"], delimiter = \";;\" }\nevent_time = { field = \"ts\" }\n\n\
         [sources.c]\ntype = \"kafka\"\nbrokers = \"b:9092\"\ntopic = \"t\"\nformat = \"csv\"\n\
         csv = { header = true }\nevent_time = { field = \"ts\" }\n\n\
         [sources.d]\ntype = \"file\"\npath = \"z.ndjson\"\ncsv = { header = true }\n\
         event_time = { field = \"ts\" }\n\n\
         [transforms.f]\ntype = \"filter\"\ninputs = [\"a\", \"b\", \"c\", \"d\"]\nwhere = \"true\"\n\n\
         [sinks.o]\ntype = \"stdout\"\ninputs = [\"f\"]\n",
    )
    .unwrap();
    let r = sluice(d, &["validate", "--config", &cfg.to_string_lossy()], MIN);
    assert!(!r.success);
    for want in [
        "sources.a.csv: name the columns",
        "sources.b.csv.delimiter: one ASCII character",
        "sources.b.csv.columns: `ts`: column names must be non-empty and distinct",
        "sources.c.csv.header: a Kafka record has no header line",
        "sources.d.csv: `csv` is for format = \"csv\"",
    ] {
        assert!(r.stderr.contains(want), "{want:?} not in:\n{}", r.stderr);
    }
}
