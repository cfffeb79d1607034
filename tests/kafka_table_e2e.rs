//! A compacted Kafka topic as a versioned table (`changelog = "upsert"`) through the real binary
//! and broker: orders from a file join the FX rate valid at their event time from a rates topic
//! keyed by `{"currency": ...}`, where a tombstone ends a currency's validity until its next
//! version. Every order's `amount_usd` equals an independent as-of lookup over the produced
//! changelog, exact to the last decimal (the product of cents and micro-units), and a tombstone
//! under `changelog = "append"` goes to the dead letters with its reason.

mod common;

use common::kafka::{broker, client_toml, script, unique_name};
use common::{read_lines, sluice, toml_str, SplitMix};
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
const T0: i64 = 1_793_491_200_000;
const CURRENCIES: [&str; 4] = ["EUR", "GBP", "JPY", "CHF"];

/// A compacted topic of its own.
fn compacted_topic(name: &str) -> String {
    let t = unique_name(name);
    let out = Command::new("bash")
        .args([script(), "run", "org.apache.kafka.tools.TopicCommand"])
        .args(["--bootstrap-server", broker(), "--create", "--topic", &t])
        .args(["--partitions", "2", "--replication-factor", "1"])
        .args(["--config", "cleanup.policy=compact"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t
}

/// Per currency: (Kafka timestamp, rate in micro-units or `None` for a tombstone), ascending.
type Changelog = BTreeMap<&'static str, Vec<(i64, Option<i64>)>>;

/// Rate versions every ~10 s per currency over 600 s, with a tombstone now and then; produced
/// keyed by currency (so each currency stays in one partition, in time order).
fn produce_rates(topic: &str) -> Changelog {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    let mut rng = SplitMix(5);
    let mut log = Changelog::new();
    for (ci, c) in CURRENCIES.iter().enumerate() {
        let key = format!("{{\"currency\":\"{c}\"}}");
        let mut t = T0 + ci as i64 * 1_000 + 50;
        while t < T0 + 600_000 {
            let rate =
                (!rng.next().is_multiple_of(8)).then(|| 500_000 + (rng.next() % 1_500_000) as i64);
            let value = rate.map(|r| {
                format!(
                    "{{\"currency\":\"{c}\",\"rate\":{}.{:06}}}",
                    r / 1_000_000,
                    r % 1_000_000
                )
            });
            let mut rec = BaseRecord::<str, str>::to(topic).key(&key).timestamp(t);
            if let Some(v) = &value {
                rec = rec.payload(v);
            }
            p.send(rec).unwrap();
            p.poll(Duration::ZERO);
            log.entry(c).or_default().push((t, rate));
            t += 5_000 + (rng.next() % 10_000) as i64;
        }
    }
    p.flush(Duration::from_secs(30)).unwrap();
    log
}

/// Orders every ~120 ms over 620 s (a little out of order), amounts in cents; the expected
/// `amount_usd` scaled by 1e8 (`None`: no rate valid then).
fn orders(d: &Path, log: &Changelog) -> (String, BTreeMap<u64, Option<i128>>) {
    let mut rng = SplitMix(9);
    let mut text = String::new();
    let mut want = BTreeMap::new();
    for id in 0..5_000u64 {
        let ts = T0 + id as i64 * 124 + (rng.next() % 2_000) as i64;
        let c = CURRENCIES[(rng.next() % 4) as usize];
        let cents = (rng.next() % 1_000_000) as i128;
        text.push_str(&format!(
            "{{\"order_id\":{id},\"currency\":\"{c}\",\"amount\":{}.{:02},\"ts\":{ts}}}\n",
            cents / 100,
            cents % 100
        ));
        let valid = log[c]
            .iter()
            .rev()
            .find(|(t, _)| *t <= ts)
            .and_then(|(_, r)| *r);
        want.insert(id, valid.map(|r| cents * r as i128));
    }
    let p = d.join("orders.ndjson");
    std::fs::write(&p, text).unwrap();
    (p.to_string_lossy().into_owned(), want)
}

fn config(d: &Path, orders: &str, rates: &str, changelog: &str) -> String {
    let at = |f: &str| toml_str(&d.join(f).to_string_lossy());
    let t = format!(
        "[runtime]\nshards = 2\n\n\
         [sources.orders]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"3s\" }}\n\n\
         [sources.rates]\ntype = \"kafka\"\n{}topic = \"{rates}\"\nstart = \"earliest\"\n\
         stop_at = \"end\"\nchangelog = \"{changelog}\"\nkey_format = \"json\"\n\
         event_time = {{ kafka_timestamp = true }}\n\
         watermark = {{ max_out_of_orderness = \"1s\" }}\n\n\
         [transforms.priced]\ntype = \"temporal_join\"\ninput = \"orders\"\ntable = \"rates\"\n\
         on = {{ input = \"currency\", table = \"currency\" }}\nkind = \"left\"\n\n\
         [transforms.usd]\ntype = \"select\"\ninputs = [\"priced\"]\n\
         fields = {{ order_id = \"order_id\", amount_usd = \"amount * table.rate\" }}\n\n\
         [sinks.out]\ntype = \"file\"\ninputs = [\"usd\"]\npath = {}\n\n\
         [dead_letter]\npath = {}\n",
        toml_str(orders),
        client_toml(),
        at(&format!("{changelog}.ndjson")),
        at(&format!("{changelog}.dead.ndjson")),
    );
    let p = d.join(format!("{changelog}.toml"));
    std::fs::write(&p, t).unwrap();
    p.to_string_lossy().into_owned()
}

/// A decimal's text scaled by 1e8 exactly.
fn scaled(text: &str) -> i128 {
    let (neg, t) = text.strip_prefix('-').map_or((false, text), |t| (true, t));
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    assert!(frac.len() <= 8, "{text}");
    let v: i128 = format!("{int}{frac:0<8}").parse().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

#[test]
fn orders_join_the_rate_valid_then_and_a_tombstone_ends_a_currencys_validity() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rates = compacted_topic("rates");
    let log = produce_rates(&rates);
    let tombstones: usize = log
        .values()
        .map(|v| v.iter().filter(|(_, r)| r.is_none()).count())
        .sum();
    assert!(tombstones > 0);
    let (orders_path, want) = orders(d, &log);
    let cfg = config(d, &orders_path, &rates, "upsert");
    let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    assert!(read_lines(&d.join("upsert.dead.ndjson")).is_empty());
    let mut got = BTreeMap::new();
    for l in read_lines(&d.join("upsert.ndjson")) {
        let v: Value = serde_json::from_str(&l).unwrap();
        // The number's own text (serde_json would read it through a float).
        let text = l.split("\"amount_usd\":").nth(1).unwrap();
        let text = text.trim_end_matches(['}', ' ']).split(',').next().unwrap();
        let usd = (text != "null").then(|| scaled(text));
        got.insert(v["order_id"].as_u64().unwrap(), usd);
    }
    let unpriced = want.values().filter(|w| w.is_none()).count();
    assert!(
        unpriced > 0 && unpriced < want.len() / 2,
        "{unpriced} orders without a rate"
    );
    assert_eq!(got.len(), want.len());
    for (id, w) in &want {
        assert_eq!(got[id], *w, "order {id}");
    }

    // As an append stream, the same topic's tombstones are dead letters with their reason.
    let cfg = config(d, &orders_path, &rates, "append");
    let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    let dead = read_lines(&d.join("append.dead.ndjson"));
    assert_eq!(dead.len(), tombstones);
    assert!(
        dead[0].contains("a tombstone") && dead[0].contains("changelog"),
        "{}",
        dead[0]
    );
}
