//! Kafka record metadata as fields through the real binary and broker: with `metadata = true` a
//! job filters on a header (`_kafka.headers.kind`), groups a window by the record key
//! (`_kafka.key`, decoded as JSON) and selects partition, offset, topic and timestamp; the results
//! equal what an independent reader of the same topic sees (its own partition/offset per record)
//! and a count computed from the produced records; a Kafka sink sets record headers from result
//! fields. Records without a key or headers still flow.

mod common;

use common::kafka::{broker, client_toml, read_all, topic};
use common::{read_lines, sluice, toml_str, SplitMix, BASE};
use rdkafka::config::ClientConfig;
use rdkafka::message::{Header, Message, OwnedHeaders, OwnedMessage};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);

/// One produced record: (id, key user or none, header kind or none, event time).
type Sent = (u64, Option<u64>, Option<&'static str>, i64);

fn produce(topic: &str, n: u64) -> Vec<Sent> {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    let mut rng = SplitMix(77);
    let mut sent = Vec::new();
    for id in 0..n {
        let ts = BASE + id as i64 * 10;
        let user = (!rng.next().is_multiple_of(10)).then(|| rng.next() % 7);
        let kind = match rng.next() % 4 {
            0 => None,
            1 => Some("view"),
            _ => Some("click"),
        };
        let value = format!("{{\"id\":{id},\"ts\":{ts}}}");
        let key = user.map(|u| format!("{{\"user\":{u}}}"));
        let mut r = BaseRecord::to(topic)
            .payload(&value)
            .partition((id % 2) as i32);
        if let Some(k) = &key {
            r = r.key(k);
        }
        if let Some(kind) = kind {
            r = r.headers(
                OwnedHeaders::new()
                    .insert(Header {
                        key: "kind",
                        value: Some(kind),
                    })
                    .insert(Header {
                        key: "trace",
                        value: Some(&format!("t-{id}")),
                    }),
            );
        }
        p.send(r).unwrap();
        p.poll(Duration::ZERO);
        sent.push((id, user, kind, ts));
    }
    p.flush(Duration::from_secs(30)).unwrap();
    sent
}

/// The `id` field of a record's JSON value.
fn id_of(m: &OwnedMessage) -> u64 {
    let v: Value = serde_json::from_slice(m.payload().unwrap()).unwrap();
    v["id"].as_u64().unwrap()
}

/// id -> (partition, offset, timestamp) as a plain reader of the topic sees it.
fn positions(topic: &str) -> BTreeMap<u64, (i32, i64, i64)> {
    read_all(topic)
        .iter()
        .map(|m| {
            (
                id_of(m),
                (
                    m.partition(),
                    m.offset(),
                    m.timestamp().to_millis().unwrap(),
                ),
            )
        })
        .collect()
}

/// id -> headers of every record of `topic`.
fn headers_of(topic: &str) -> BTreeMap<u64, BTreeMap<String, String>> {
    use rdkafka::message::Headers;
    read_all(topic)
        .iter()
        .map(|m| {
            let h = m.headers().map_or_else(BTreeMap::new, |hs| {
                hs.iter()
                    .map(|x| {
                        let value = String::from_utf8(x.value.unwrap().to_vec()).unwrap();
                        (x.key.to_string(), value)
                    })
                    .collect()
            });
            (id_of(m), h)
        })
        .collect()
}

fn config(d: &Path, input: &str, output: &str) -> String {
    let out = |f: &str| toml_str(&d.join(f).to_string_lossy());
    let t = format!(
        "[runtime]\nshards = 2\n\n\
         [sources.ev]\ntype = \"kafka\"\n{client}topic = \"{input}\"\nstart = \"earliest\"\n\
         stop_at = \"end\"\nmetadata = true\nkey_format = \"json\"\n\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"1s\" }}\n\n\
         [transforms.clicks]\ntype = \"filter\"\ninputs = [\"ev\"]\n\
         where = \"_kafka.headers.kind == 'click'\"\n\n\
         [transforms.per_user]\ntype = \"window\"\ninputs = [\"clicks\"]\n\
         group_by = [\"_kafka.key.user\"]\nwindow = {{ type = \"tumbling\", size = \"10s\" }}\n\
         aggregates = {{ n = \"count()\" }}\n\n\
         [transforms.where_from]\ntype = \"select\"\ninputs = [\"ev\"]\n\
         fields = {{ id = \"id\", p = \"_kafka.partition\", o = \"_kafka.offset\", \
         t = \"_kafka.topic\", ts = \"_kafka.timestamp\", trace = \"_kafka.headers.trace\" }}\n\n\
         [sinks.counts]\ntype = \"file\"\ninputs = [\"per_user\"]\npath = {counts}\n\n\
         [sinks.meta]\ntype = \"file\"\ninputs = [\"where_from\"]\npath = {meta}\n\n\
         [sinks.tagged]\ntype = \"kafka\"\ninputs = [\"where_from\"]\n{client}topic = \"{output}\"\n\
         headers = {{ trace = \"trace\", from = \"p\" }}\n\n\
         [dead_letter]\npath = {dead}\n",
        client = client_toml(),
        counts = out("counts.ndjson"),
        meta = out("meta.ndjson"),
        dead = out("dead.ndjson"),
    );
    let p = d.join("meta.toml");
    std::fs::write(&p, t).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn keys_headers_and_positions_reach_filters_group_by_and_selects() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (input, output) = (topic("meta", 2), topic("meta-out", 1));
    let sent = produce(&input, 4_000);
    let cfg = config(d, &input, &output);
    let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    assert!(read_lines(&d.join("dead.ndjson")).is_empty());

    // Every record, with the position an independent reader sees.
    let seen = positions(&input);
    let mut got = BTreeMap::new();
    for l in read_lines(&d.join("meta.ndjson")) {
        let v: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["t"], Value::String(input.clone()));
        let id = v["id"].as_u64().unwrap();
        let kind = sent[id as usize].2;
        let trace = kind.map_or(Value::Null, |_| Value::String(format!("t-{id}")));
        assert_eq!(v["trace"], trace, "{l}");
        let pos = (
            v["p"].as_i64().unwrap() as i32,
            v["o"].as_i64().unwrap(),
            v["ts"].as_i64().unwrap(),
        );
        got.insert(id, pos);
    }
    assert_eq!(got, seen);

    // Headers from fields: the trace where the record had one, the partition as text; none for a
    // null field.
    let tagged = headers_of(&output);
    assert_eq!(tagged.len(), sent.len());
    for (id, h) in &tagged {
        let mut want = BTreeMap::from([("from".to_string(), seen[id].0.to_string())]);
        if sent[*id as usize].2.is_some() {
            want.insert("trace".into(), format!("t-{id}"));
        }
        assert_eq!(h, &want, "record {id}");
    }

    // Clicks per (user key, 10 s window): keyless clicks group under null.
    let mut want: BTreeMap<(Option<u64>, i64), u64> = BTreeMap::new();
    for (_, user, kind, ts) in &sent {
        if *kind == Some("click") {
            *want.entry((*user, ts - ts.rem_euclid(10_000))).or_default() += 1;
        }
    }
    let mut counts = BTreeMap::new();
    for l in read_lines(&d.join("counts.ndjson")) {
        let v: Value = serde_json::from_str(&l).unwrap();
        let key = (
            v["_kafka.key.user"].as_u64(),
            v["window_start"].as_i64().unwrap(),
        );
        counts.insert(key, v["n"].as_u64().unwrap());
    }
    assert_eq!(counts, want);
}
