//! Replay controls on a Kafka source through the real binary and broker: `start = { offsets }` per
//! partition (unlisted partitions as `committed`, here: from the earliest) and `stop_at = {
//! timestamp }` (each partition ends before its first record with a Kafka timestamp at or after
//! the time) read exactly the records a hand-computed expectation names; bad partition names are
//! config errors naming the key.

mod common;

use common::kafka::{broker, client_toml, topic};
use common::{read_lines, sluice, toml_str};
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
/// 2026-11-01T00:00:00Z.
const T0: i64 = 1_793_491_200_000;
const PER_PARTITION: i64 = 1_000;

/// Record `i` of partition `p`: Kafka timestamp and event time T0 + i s, id p * 10000 + i.
fn produce(topic: &str) {
    let prod: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    for p in 0..2 {
        for i in 0..PER_PARTITION {
            let ts = T0 + i * 1000;
            let value = format!("{{\"id\":{},\"ts\":{ts}}}", p * 10_000 + i);
            prod.send(
                BaseRecord::<(), str>::to(topic)
                    .payload(&value)
                    .partition(p as i32)
                    .timestamp(ts),
            )
            .unwrap();
            prod.poll(Duration::ZERO);
        }
    }
    prod.flush(Duration::from_secs(30)).unwrap();
}

fn config(d: &Path, name: &str, kafka: &str) -> String {
    let t = format!(
        "[runtime]\nshards = 2\n\n\
         [sources.ev]\ntype = \"kafka\"\n{}{kafka}\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"1s\" }}\n\n\
         [transforms.all]\ntype = \"filter\"\ninputs = [\"ev\"]\nwhere = \"id >= 0\"\n\n\
         [sinks.out]\ntype = \"file\"\ninputs = [\"all\"]\npath = {}\n",
        client_toml(),
        toml_str(&d.join(format!("{name}.ndjson")).to_string_lossy()),
    );
    let p = d.join(format!("{name}.toml"));
    std::fs::write(&p, t).unwrap();
    p.to_string_lossy().into_owned()
}

fn ids(d: &Path, name: &str) -> BTreeSet<i64> {
    read_lines(&d.join(format!("{name}.ndjson")))
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

#[test]
fn start_offsets_per_partition_and_stop_at_a_time_read_exactly_that_range() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = topic("replay", 2);
    produce(&t);
    // Partition 0 from offset 100, partition 1 (unlisted, nothing committed) from the earliest;
    // both stop before 2026-11-01T00:13:20Z = T0 + 800 s, so at offset 800.
    let cfg = config(
        d,
        "range",
        &format!(
            "topic = \"{t}\"\nstart = {{ offsets = {{ \"0\" = 100 }} }}\n\
             stop_at = {{ timestamp = \"2026-11-01T00:13:20Z\" }}\n"
        ),
    );
    let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    let want: BTreeSet<i64> = (100..800).chain(10_000..10_800).collect();
    assert_eq!(ids(d, "range"), want);

    // TOPIC/N names a partition too; an offset past the end starts at the end (nothing read),
    // and a time after every record stops at the current end.
    let cfg = config(
        d,
        "named",
        &format!(
            "topic = \"{t}\"\nstart = {{ offsets = {{ \"{t}/0\" = 999999, \"1\" = 990 }} }}\n\
             stop_at = {{ timestamp = \"2030-01-01T00:00:00Z\" }}\n"
        ),
    );
    let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    assert_eq!(ids(d, "named"), (10_990..11_000).collect());
}

#[test]
fn bad_partition_names_and_times_are_config_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = config(
        d,
        "bad",
        "topics = [\"a\", \"b\"]\nstart = { offsets = { \"0\" = 1, \"c/1\" = 2, \"a/x\" = 3, \"b/2\" = -4 } }\n\
         stop_at = { timestamp = \"yesterday\" }\n",
    );
    let r = sluice(d, &["validate", "--config", &cfg], MIN);
    assert!(!r.success);
    for want in [
        "sources.ev.start.offsets.0:",
        "name the partition as \"TOPIC/0\"",
        "`c` is not a topic of this source",
        "`x` is not a partition number",
        "offset -4 is negative",
        "sources.ev.stop_at",
        "`yesterday` is not an RFC 3339 time",
    ] {
        assert!(r.stderr.contains(want), "{want:?} not in:\n{}", r.stderr);
    }
}
