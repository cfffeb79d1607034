//! The shipped `config/ad_spend.sql` on a real Kafka broker, its tables switched to Flink's
//! Kafka connectors: impressions and clicks as `kafka` topics (3 partitions, from the earliest
//! offset, bounded at the latest), the ad prices as an `upsert-kafka` topic keyed by `ad_id` (a
//! versioned table), the results into an `upsert-kafka` topic keyed by `(ad_id, window_start)`
//! exactly once. The committed results equal the ad-spend reference model row for row, and
//! every record's key is its row's primary key.

mod common;

use common::flow_job::flow_data;
use common::flow_model::{exact_number, spend_model_dir};
use common::kafka::{broker, read_all, topic};
use common::sql::{flink_ts, sql_job};
use common::{read_lines, sluice, toml_str};
use rdkafka::config::ClientConfig;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Every line of `file` into `topic`, line `i` to partition `i % partitions`, keyed by `key`'s
/// JSON object of the line's field `key` when given.
fn produce(file: &Path, topic: &str, partitions: i32, key: Option<&str>) {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    for (i, line) in read_lines(file).iter().enumerate() {
        let k = key.map(|k| {
            let v: Value = serde_json::from_str(line).unwrap();
            serde_json::json!({ k: v[k] }).to_string()
        });
        let mut record = BaseRecord::<str, str>::to(topic)
            .payload(line)
            .partition((i as i32) % partitions);
        if let Some(k) = &k {
            record = record.key(k);
        }
        while let Err((e, r)) = p.send(record) {
            assert!(
                format!("{e}").contains("queue"),
                "producing to {topic}: {e}"
            );
            p.poll(Duration::from_millis(20));
            record = r;
        }
        p.poll(Duration::ZERO);
    }
    p.flush(Duration::from_secs(60)).unwrap();
}

fn kafka(topic: &str, extra: &str) -> String {
    format!(
        "'topic' = '{topic}', 'properties.bootstrap.servers' = '{}', 'scan.bounded.mode' = 'latest-offset'{extra}",
        broker()
    )
}

#[test]
fn ad_spend_sql_on_kafka_and_upsert_kafka_equals_the_model_exactly_once() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    flow_data(dir, 20_000, 2_000, 7);
    let t: Vec<String> = ["sql-imps", "sql-clicks", "sql-prices", "sql-spend"]
        .iter()
        .map(|n| topic(n, 3))
        .collect();
    produce(&dir.join("flow_impressions.ndjson"), &t[0], 3, None);
    produce(&dir.join("flow_clicks.ndjson"), &t[1], 3, None);
    // A compacted topic's shape: each price keyed by its ad (one partition keeps an ad's
    // versions in order, as a keyed producer would).
    produce(&dir.join("flow_prices.ndjson"), &t[2], 1, Some("ad_id"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = |name: &str| {
        format!("'connector' = 'filesystem', 'path' = 'data/{name}.ndjson', 'format' = 'json'")
    };
    let sql = std::fs::read_to_string(root.join("config/ad_spend.sql")).unwrap();
    let json_sink = "clicks BIGINT, spend DECIMAL(38, 4)\n) WITH ('connector' = 'filesystem', 'path' = 'out/ad_spend', 'format' = 'json');";
    for part in [
        file("flow_impressions"),
        file("flow_clicks"),
        file("flow_prices"),
        json_sink.into(),
    ] {
        assert!(sql.contains(&part), "config/ad_spend.sql changed: {part}");
    }
    let sql = sql
        .replace(&file("flow_impressions"), &format!("'connector' = 'kafka', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset', {}", kafka(&t[0], "")))
        .replace(&file("flow_clicks"), &format!("'connector' = 'kafka', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset', {}", kafka(&t[1], "")))
        .replace(&file("flow_prices"), &format!("'connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json', {}", kafka(&t[2], "")))
        .replace(
            json_sink,
            &format!(
                "clicks BIGINT, spend DECIMAL(38, 4),\n  PRIMARY KEY (ad_id, window_start) NOT ENFORCED\n) WITH ('connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json', 'topic' = '{}', 'properties.bootstrap.servers' = '{}', 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'sql-e2e-{}');",
                t[3],
                broker(),
                std::process::id()
            ),
        );
    let p = |x: &Path| x.to_string_lossy().into_owned();
    let checkpoint = format!(
        "[checkpoint]\ndir = {}\ninterval = \"200ms\"\n\n",
        toml_str(&p(&dir.join("state")))
    );
    let cfg = sql_job(dir, &sql, &checkpoint);
    let exit = sluice(dir, &["run", "--config", &cfg], Duration::from_secs(180));
    assert!(exit.success, "{}", exit.stderr);
    let mut got = BTreeMap::new();
    for m in read_all(&t[3]) {
        let line = String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned();
        let v: Value = serde_json::from_str(&line).unwrap();
        let key: Value = serde_json::from_slice(m.key().unwrap_or_default()).unwrap();
        assert_eq!(
            key,
            serde_json::json!({"ad_id": v["ad_id"], "window_start": v["window_start"]}),
            "the record's key is its primary key: {line}"
        );
        let k = (
            v["ad_id"].as_str().unwrap().to_string(),
            v["window_start"].as_str().unwrap().to_string(),
        );
        let row = (
            v["clicks"].as_u64().unwrap(),
            exact_number(&line, &v, "spend"),
        );
        assert!(
            got.insert(k, row).is_none(),
            "a window twice (exactly once): {line}"
        );
    }
    let want: BTreeMap<_, _> = spend_model_dir(dir)
        .into_iter()
        .map(|((ad, start), v)| ((ad, flink_ts(start)), v))
        .collect();
    assert!(
        want.len() > 100,
        "too few windows to mean anything: {}",
        want.len()
    );
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the topic's rows differ from the model");
}
