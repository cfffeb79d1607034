//! A `debezium-json` file read as a changelog table (Flink's `'format' = 'debezium-json'`)
//! through the real binary on 1, 2 and 3 shards: customers created, read by a snapshot, updated
//! (their tier changes), deleted and created again, with a tombstone and a malformed change among
//! them; grouped on its own, joined with an append-only orders file and grouped (MIN and MAX
//! taking values back as customers change tier), and joined LEFT.
//! A filter and select writes the changelog straight into a sink. Each sink's changelog, applied
//! in order, must equal the table a model computes from the final customers (every change applied
//! in file order) and the orders; the malformed change is a dead
//! letter with its reason. The same changes from a Kafka topic (3 partitions, each id's changes
//! in its partition, Debezium's tombstones after deletes) give the same tables, and so do they
//! as Debezium's Avro envelope through the schema registry (`debezium-avro-confluent`, one more
//! record not Avro at all, a dead letter too). An event-time
//! window over the changelog and the changelog written into an append-only sink are refused
//! before anything runs.

mod common;

use common::changelog::materialise_debezium;
use common::kafka::{broker, topic};
use common::registry::{register, registry};
use common::sql::{debezium_file, run_job, sql_job};
use common::{read_lines, sluice};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const TIERS: [&str; 3] = ["gold", "silver", "bronze"];

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Writes `customers.ndjson` (600 changes of ids 0..40) and `orders.ndjson` (1 500 orders of
/// customers 0..45); returns the final customers (id -> tier) and the orders (customer, amount).
fn data(d: &Path) -> (BTreeMap<i64, &'static str>, Vec<(i64, i64)>) {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut live: BTreeMap<i64, &'static str> = BTreeMap::new();
    let mut text = String::new();
    let row = |id: i64, tier: &str| json!({"id": id, "tier": tier});
    for i in 0..600 {
        if i == 300 {
            text.push_str("null\n{\"before\":null,\"after\":{\"id\":1},\"op\":\"z\"}\n");
        }
        let id = rng.below(40) as i64;
        let tier = TIERS[rng.below(3) as usize];
        let change = match live.get(&id).copied() {
            None => {
                live.insert(id, tier);
                let op = if i < 40 { "r" } else { "c" };
                json!({"before": null, "after": row(id, tier), "op": op, "ts_ms": i})
            }
            Some(old) if rng.below(4) == 0 => {
                live.remove(&id);
                json!({"before": row(id, old), "after": null, "op": "d"})
            }
            Some(old) => {
                live.insert(id, tier);
                json!({"before": row(id, old), "after": row(id, tier), "op": "u"})
            }
        };
        text.push_str(&format!("{change}\n"));
    }
    std::fs::write(d.join("customers.ndjson"), text).unwrap();
    let mut orders = Vec::new();
    let mut text = String::new();
    for n in 0..1500 {
        let (c, a) = (rng.below(45) as i64, 1 + rng.below(100) as i64);
        text.push_str(&format!(
            "{{\"order_id\":{n},\"customer\":{c},\"amount\":{a}}}\n"
        ));
        orders.push((c, a));
    }
    std::fs::write(d.join("orders.ndjson"), text).unwrap();
    (live, orders)
}

fn sql(d: &Path) -> String {
    let p = |n: &str| d.join(n).to_string_lossy().into_owned();
    let dbz = |n: &str| debezium_file(&d.join(n));
    format!(
        "CREATE TABLE customers (id BIGINT, tier STRING, PRIMARY KEY (id) NOT ENFORCED) {};
CREATE TABLE orders (order_id BIGINT, customer BIGINT, amount BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE tiers (tier STRING, n BIGINT) {};
CREATE TABLE spend (tier STRING, n BIGINT, total BIGINT, low BIGINT, high BIGINT) {};
CREATE TABLE enriched (order_id BIGINT, tier STRING) {};
CREATE TABLE copied (id BIGINT, tier STRING) {};
INSERT INTO tiers SELECT tier, COUNT(*) FROM customers GROUP BY tier;
INSERT INTO spend SELECT c.tier, COUNT(*), SUM(o.amount), MIN(o.amount), MAX(o.amount) FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.tier;
INSERT INTO enriched SELECT o.order_id, c.tier FROM orders o LEFT JOIN customers c ON o.customer = c.id;
INSERT INTO copied SELECT id, UPPER(tier) FROM customers WHERE id > 3;
",
        dbz("customers.ndjson"),
        p("orders.ndjson"),
        dbz("tiers"),
        dbz("spend"),
        dbz("enriched"),
        dbz("copied")
    )
}

type Table = BTreeMap<String, usize>;

fn model(live: &BTreeMap<i64, &str>, orders: &[(i64, i64)]) -> [Table; 4] {
    let mut tiers: BTreeMap<&str, i64> = BTreeMap::new();
    for t in live.values() {
        *tiers.entry(t).or_default() += 1;
    }
    let mut spend: BTreeMap<&str, (i64, i64, i64, i64)> = BTreeMap::new();
    let mut enriched = Table::new();
    for (n, (c, a)) in orders.iter().enumerate() {
        let tier = live.get(c).copied();
        if let Some(t) = tier {
            let s = spend.entry(t).or_insert((0, 0, i64::MAX, i64::MIN));
            *s = (s.0 + 1, s.1 + a, s.2.min(*a), s.3.max(*a));
        }
        *enriched
            .entry(json!({"order_id": n, "tier": tier}).to_string())
            .or_insert(0) += 1;
    }
    let one = |v: Value| (v.to_string(), 1);
    [
        tiers
            .iter()
            .map(|(t, n)| one(json!({"tier": t, "n": n})))
            .collect(),
        spend
            .iter()
            .map(|(t, (n, s, lo, hi))| {
                one(json!({"tier": t, "n": n, "total": s, "low": lo, "high": hi}))
            })
            .collect(),
        enriched,
        live.iter()
            .filter(|(id, _)| **id > 3)
            .map(|(id, t)| one(json!({"id": id, "tier": t.to_uppercase()})))
            .collect(),
    ]
}

#[test]
fn a_debezium_file_is_a_changelog_table_grouped_and_joined_as_the_model_says() {
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (live, orders) = data(d);
        // Deletes and re-creations must both happen for the test to mean anything.
        assert!(live.len() > 15 && live.len() < 40, "{}", live.len());
        let want = model(&live, &orders);
        let cfg = sql_job(d, &sql(d), "");
        let text = std::fs::read_to_string(&cfg).unwrap();
        std::fs::write(
            &cfg,
            text.replace("shards = 2", &format!("shards = {shards}")),
        )
        .unwrap();
        run_job(d, &cfg);
        let ctx = format!("{shards} shard(s)");
        for (i, name) in ["tiers", "spend", "enriched", "copied"].iter().enumerate() {
            let got = materialise_debezium(&d.join(name).join("part-0.json"));
            assert_eq!(got, want[i], "{ctx}: {name}");
        }
        let dead = read_lines(&d.join("dead.ndjson"));
        assert_eq!(dead.len(), 1, "{ctx}: {dead:?}");
        assert!(
            dead[0].contains("unknown Debezium operation"),
            "{}",
            dead[0]
        );
    }
}

#[test]
fn a_window_over_a_changelog_and_a_changelog_into_an_append_only_sink_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    data(d);
    let table = format!(
        "CREATE TABLE customers (id BIGINT, tier STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');
CREATE TABLE o (tier STRING, n BIGINT) WITH ('connector' = 'print');\n",
        d.join("customers.ndjson").to_string_lossy()
    );
    let cases = [
        ("INSERT INTO o SELECT tier, COUNT(*) FROM TABLE(TUMBLE(TABLE customers, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY tier, window_start, window_end;", "takes appends only, but `customers` is a changelog"),
        ("CREATE TABLE j (id BIGINT) WITH ('connector' = 'filesystem', 'path' = 'j', 'format' = 'json');\nINSERT INTO j SELECT id FROM customers;", "`j` takes appends only, but this query's result is updating"),
    ];
    for (query, want) in cases {
        let cfg = sql_job(d, &format!("{table}{query}"), "");
        let exit = sluice(d, &["run", "--config", &cfg], Duration::from_secs(60));
        assert!(!exit.success, "{query}");
        assert!(exit.stderr.contains(want), "{query}: {}", exit.stderr);
    }
}

/// Every change of `customers.ndjson` into `topic`, keyed by its row's id (as Debezium keys by
/// the primary key), an id's changes to partition `id % 3`; a tombstone after each delete.
fn produce(d: &Path, topic: &str) {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    let send = |key: &str, part: i32, value: Option<&str>| {
        let mut r = BaseRecord::<str, str>::to(topic).key(key).partition(part);
        if let Some(v) = value {
            r = r.payload(v);
        }
        while let Err((e, back)) = p.send(r) {
            assert!(
                format!("{e}").contains("queue"),
                "producing to {topic}: {e}"
            );
            p.poll(Duration::from_millis(20));
            r = back;
        }
        p.poll(Duration::ZERO);
    };
    for line in read_lines(&d.join("customers.ndjson")) {
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let row = if v["after"].is_object() {
            &v["after"]
        } else {
            &v["before"]
        };
        let id = row["id"].as_i64().unwrap_or(0);
        let key = json!({"id": id}).to_string();
        send(&key, (id % 3) as i32, Some(&line));
        if v["op"] == "d" {
            send(&key, (id % 3) as i32, None);
        }
    }
    p.flush(Duration::from_secs(60)).unwrap();
}

#[test]
fn a_debezium_topic_is_the_same_changelog_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (live, orders) = data(d);
    let want = model(&live, &orders);
    let t = topic("cdc-customers", 3);
    produce(d, &t);
    let file_table = format!(
        "WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json')",
        d.join("customers.ndjson").to_string_lossy()
    );
    let kafka_table = format!(
        "WITH ('connector' = 'kafka', 'topic' = '{t}', 'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'debezium-json')",
        broker()
    );
    let cfg = sql_job(d, &sql(d).replacen(&file_table, &kafka_table, 1), "");
    run_job(d, &cfg);
    for (i, name) in ["tiers", "spend", "enriched", "copied"].iter().enumerate() {
        let got = materialise_debezium(&d.join(name).join("part-0.json"));
        assert_eq!(got, want[i], "{name}");
    }
    // The malformed change is a dead letter; the tombstones change nothing.
    let dead = read_lines(&d.join("dead.ndjson"));
    assert_eq!(dead.len(), 1, "{dead:?}");
}

/// Debezium's Avro envelope of the customers table: `before` and `after` a nullable row record.
const ENVELOPE: &str = r#"{"type":"record","name":"Envelope","namespace":"pg.public.customers",
 "fields":[
  {"name":"before","type":["null",{"type":"record","name":"Value","fields":[
    {"name":"id","type":"long"},{"name":"tier","type":["null","string"],"default":null}]}],
   "default":null},
  {"name":"after","type":["null","Value"],"default":null},
  {"name":"op","type":"string"},
  {"name":"ts_ms","type":["null","long"],"default":null}]}"#;

/// The Avro value of a change line of `customers.ndjson` (`None` for its `null` line).
fn envelope(v: &Value) -> Option<apache_avro::types::Value> {
    use apache_avro::types::Value as Avro;
    let nullable = |x: Option<Avro>| match x {
        Some(x) => Avro::Union(1, Box::new(x)),
        None => Avro::Union(0, Box::new(Avro::Null)),
    };
    let row = |r: &Value| {
        r.is_object().then(|| {
            let tier = r["tier"].as_str().map(|t| Avro::String(t.into()));
            Avro::Record(vec![
                ("id".into(), Avro::Long(r["id"].as_i64().unwrap())),
                ("tier".into(), nullable(tier)),
            ])
        })
    };
    Some(Avro::Record(vec![
        ("before".into(), nullable(row(&v["before"]))),
        ("after".into(), nullable(row(&v["after"]))),
        ("op".into(), Avro::String(v["op"].as_str()?.into())),
        (
            "ts_ms".into(),
            nullable(v["ts_ms"].as_i64().map(Avro::Long)),
        ),
    ]))
}

/// Every change of `customers.ndjson` into `topic` as Confluent wire-format Avro under the
/// subject `<topic>-value`, keyed and partitioned as [`produce`] does; the file's `null` line
/// and each delete's follower as tombstones; and one value that is not Avro.
fn produce_avro(d: &Path, topic: &str) {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let schema = apache_avro::Schema::parse_str(ENVELOPE).unwrap();
    let id = register(&format!("{topic}-value"), ENVELOPE);
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    let send = |key: &str, part: i32, value: Option<&[u8]>| {
        let mut r = BaseRecord::<str, [u8]>::to(topic).key(key).partition(part);
        if let Some(v) = value {
            r = r.payload(v);
        }
        p.send(r).map_err(|(e, _)| e).unwrap();
        p.poll(Duration::ZERO);
    };
    for line in read_lines(&d.join("customers.ndjson")) {
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let Some(datum) = envelope(&v) else {
            send("{}", 0, None);
            continue;
        };
        let row = if v["after"].is_object() {
            &v["after"]
        } else {
            &v["before"]
        };
        let id_of = row["id"].as_i64().unwrap_or(0);
        let key = json!({"id": id_of}).to_string();
        let mut wire = vec![0];
        wire.extend_from_slice(&id.to_be_bytes());
        #[allow(deprecated)]
        wire.extend(apache_avro::to_avro_datum(&schema, datum).unwrap());
        send(&key, (id_of % 3) as i32, Some(&wire));
        if v["op"] == "d" {
            send(&key, (id_of % 3) as i32, None);
        }
    }
    send(
        "{}",
        1,
        Some(br#"{"before":null,"after":{"id":1,"tier":"x"},"op":"c"}"#),
    );
    p.flush(Duration::from_secs(60)).unwrap();
}

#[test]
fn a_debezium_avro_topic_through_the_registry_is_the_same_changelog_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (live, orders) = data(d);
    let want = model(&live, &orders);
    let t = topic("cdc-customers-avro", 3);
    produce_avro(d, &t);
    let file_table = format!(
        "WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json')",
        d.join("customers.ndjson").to_string_lossy()
    );
    let kafka_table = format!(
        "WITH ('connector' = 'kafka', 'topic' = '{t}', 'properties.bootstrap.servers' = '{}', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.url' = '{}')",
        broker(),
        registry()
    );
    let cfg = sql_job(d, &sql(d).replacen(&file_table, &kafka_table, 1), "");
    run_job(d, &cfg);
    for (i, name) in ["tiers", "spend", "enriched", "copied"].iter().enumerate() {
        let got = materialise_debezium(&d.join(name).join("part-0.json"));
        assert_eq!(got, want[i], "{name}");
    }
    // The change of an unknown operation and the value that is not Avro are dead letters.
    let dead = read_lines(&d.join("dead.ndjson"));
    assert_eq!(dead.len(), 2, "{dead:?}");
    assert!(
        dead.iter()
            .any(|l| l.contains("unknown Debezium operation")),
        "{dead:?}"
    );
}
