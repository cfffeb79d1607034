//! Avro with a real Schema Registry (Apicurio's Confluent API) and broker, through the real
//! binary. A topic holds records of two schema versions (V2 drops a field, promotes `qty` from
//! int to long and adds `currency` with a default), written here with apache-avro's encoder in
//! the Confluent wire format under Avro keys, plus three records that are not valid and one
//! whose key is not Avro. The job reads them with the
//! subject's latest version as reader schema: every record must arrive with V2's fields (V1's
//! currency from the default), decimals digit for digit; the broken records are dead letters
//! with their reasons. Its per-currency windows go to a file, to an at-least-once Avro sink that
//! registers its schema, and to an exactly-once Avro sink whose schema cannot hold one currency
//! (an enum), whose rows must be dead letters. An independent reference (plain integer cents)
//! gives the expected windows, and the Avro output is decoded with the schema its ids name.

mod common;

use apache_avro::types::Value as Avro;
use apache_avro::Schema;
use common::kafka::{broker, client_toml, read_all, topic};
use common::registry::{register, registry, schema_by_id};
use common::{read_lines, sluice, toml_str, SplitMix, BASE};
use rdkafka::config::ClientConfig;
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::value::RawValue;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);

const V1: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"note","type":["null","string"],"default":null},
  {"name":"qty","type":"int"}]}"#;

const V2: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"qty","type":"long"},
  {"name":"currency","type":"string","default":"EUR"}]}"#;

const OUT: &str = r#"{"type":"record","name":"Spend","fields":[
  {"name":"window_start","type":"long"},
  {"name":"currency","type":"string"},
  {"name":"n","type":"long"},
  {"name":"qty","type":"long"},
  {"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":18,"scale":2}}]}"#;

const OUT_ENUM: &str = r#"{"type":"record","name":"SpendEurUsd","fields":[
  {"name":"window_start","type":"long"},
  {"name":"currency","type":{"type":"enum","name":"Cur","symbols":["EUR","USD"]}},
  {"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":18,"scale":2}}]}"#;

const KEY: &str =
    r#"{"type":"record","name":"OrderKey","fields":[{"name":"customer","type":"long"}]}"#;

const CURRENCIES: [&str; 3] = ["EUR", "USD", "GBP"];

/// One order as the reference sees it.
struct Order {
    id: i64,
    cents: i64,
    ts: i64,
    qty: i64,
    currency: &'static str,
}

/// `cents` as the decimal text a scale-2 decimal has (`-5` -> `-0.05`).
fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100)
}

/// Decimal text (any scale) as integer cents, refusing anything finer.
fn cents_of(text: &str) -> i64 {
    let (neg, t) = text.strip_prefix('-').map_or((false, text), |t| (true, t));
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let frac = format!("{frac:0<2}");
    assert!(frac[2..].bytes().all(|b| b == b'0'), "{text}");
    let c = int.parse::<i64>().unwrap() * 100 + frac[..2].parse::<i64>().unwrap();
    if neg {
        -c
    } else {
        c
    }
}

/// The Confluent wire record of `v` under schema `id`.
fn wire(id: u32, schema: &Schema, v: Avro) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&id.to_be_bytes());
    #[allow(deprecated)]
    out.extend(apache_avro::to_avro_datum(schema, v).unwrap());
    out
}

/// The decimal of `cents` as Java's BigInteger.toByteArray() writes it (shortest).
fn decimal(cents: i64) -> Avro {
    Avro::Decimal(apache_avro::Decimal::from(
        num_bigint::BigInt::from(cents).to_signed_bytes_be(),
    ))
}

fn produce(input: &str, subject: &str) -> (Vec<Order>, u32) {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    let (s1, s2) = (
        Schema::parse_str(V1).unwrap(),
        Schema::parse_str(V2).unwrap(),
    );
    let id1 = register(subject, V1);
    let id2 = register(subject, V2);
    assert_ne!(id1, id2);
    let key_schema = Schema::parse_str(KEY).unwrap();
    let kid = register(&format!("{input}-key"), KEY);
    let mut rng = SplitMix(11);
    let mut orders = Vec::new();
    let send_keyed = |key: &[u8], payload: &[u8], part: i32| {
        p.send(
            BaseRecord::to(input)
                .key(key)
                .payload(payload)
                .partition(part),
        )
        .unwrap();
        p.poll(Duration::ZERO);
    };
    let key = |id: i64| {
        let k = Avro::Record(vec![("customer".into(), Avro::Long(id % 13))]);
        wire(kid, &key_schema, k)
    };
    let send = |payload: &[u8], part: i32| send_keyed(&key(1), payload, part);
    for id in 0..6_000i64 {
        let ts = BASE + id * 7 + (rng.next() % 500) as i64;
        let cents = (rng.next() % 200_000) as i64 - 500;
        let qty = (rng.next() % 9) as i64 + 1;
        let (payload, currency) = if id < 3_000 {
            let v = Avro::Record(vec![
                ("id".into(), Avro::Long(id)),
                ("amount".into(), decimal(cents)),
                ("ts".into(), Avro::TimestampMillis(ts)),
                (
                    "note".into(),
                    Avro::Union(1, Box::new(Avro::String(format!("n{id}")))),
                ),
                ("qty".into(), Avro::Int(qty as i32)),
            ]);
            (wire(id1, &s1, v), "EUR")
        } else {
            let c = CURRENCIES[(rng.next() % 3) as usize];
            let v = Avro::Record(vec![
                ("id".into(), Avro::Long(id)),
                ("amount".into(), decimal(cents)),
                ("ts".into(), Avro::TimestampMillis(ts)),
                ("qty".into(), Avro::Long(qty)),
                ("currency".into(), Avro::String(c.into())),
            ]);
            (wire(id2, &s2, v), c)
        };
        send_keyed(&key(id), &payload, (id % 2) as i32);
        orders.push(Order {
            id,
            cents,
            ts,
            qty,
            currency,
        });
    }
    // Not valid: a JSON value, a truncated datum, and an id the registry never gave.
    send(br#"{"id":1}"#, 0);
    let cut = wire(
        id1,
        &s1,
        Avro::Record(vec![
            ("id".into(), Avro::Long(1)),
            ("amount".into(), decimal(1)),
            ("ts".into(), Avro::TimestampMillis(BASE)),
            ("note".into(), Avro::Union(0, Box::new(Avro::Null))),
            ("qty".into(), Avro::Int(1)),
        ]),
    );
    send(&cut[..cut.len() - 2], 1);
    send(&[0, 0x7f, 0xff, 0xff, 0x01, 2], 0);
    // A valid value under a key that is not wire-format Avro.
    send_keyed(b"plain", &cut, 1);
    p.flush(Duration::from_secs(30)).unwrap();
    (orders, id1)
}

fn config(d: &Path, input: &str, out: &str, out_eo: &str) -> String {
    let path = |f: &str| toml_str(&d.join(f).to_string_lossy());
    std::fs::write(d.join("spend.avsc"), OUT).unwrap();
    std::fs::write(d.join("spend_eur_usd.avsc"), OUT_ENUM).unwrap();
    let t = format!(
        "[runtime]\nshards = 2\n\n\
         [sources.orders]\ntype = \"kafka\"\n{client}topic = \"{input}\"\nstart = \"earliest\"\n\
         stop_at = \"end\"\nformat = \"avro\"\nschema_registry = {{ url = \"{reg}\" }}\n\
         metadata = true\nkey_format = \"avro\"\n\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"1s\" }}\n\n\
         [transforms.rows]\ntype = \"select\"\ninputs = [\"orders\"]\n\
         fields = {{ id = \"id\", amount = \"amount\", ts = \"ts\", qty = \"qty\", currency = \"currency\", note = \"note\", customer = \"_kafka.key.customer\" }}\n\n\
         [transforms.spend]\ntype = \"window\"\ninputs = [\"orders\"]\ngroup_by = [\"currency\"]\n\
         window = {{ type = \"tumbling\", size = \"10s\" }}\n\
         aggregates = {{ n = \"count()\", qty = \"sum(qty)\", total = \"sum(amount)\" }}\n\n\
         [sinks.rows_file]\ntype = \"file\"\ninputs = [\"rows\"]\npath = {rows}\n\n\
         [sinks.spend_file]\ntype = \"file\"\ninputs = [\"spend\"]\npath = {spend}\n\n\
         [sinks.spend_avro]\ntype = \"kafka\"\ninputs = [\"spend\"]\n{client}topic = \"{out}\"\n\
         format = \"avro\"\nschema_registry = {{ url = \"{reg}\", schema_file = {avsc} }}\n\n\
         [sinks.spend_eo]\ntype = \"kafka\"\ninputs = [\"spend\"]\n{client}topic = \"{out_eo}\"\n\
         delivery = \"exactly_once\"\ntransactional_id_prefix = \"{out_eo}\"\n\
         format = \"avro\"\nschema_registry = {{ url = \"{reg}\", schema_file = {avsc_eo} }}\n\n\
         [checkpoint]\ndir = {state}\ninterval = \"200ms\"\n\n\
         [dead_letter]\npath = {dead}\n",
        client = client_toml(),
        reg = registry(),
        rows = path("rows.ndjson"),
        spend = path("spend.ndjson"),
        avsc = path("spend.avsc"),
        avsc_eo = path("spend_eur_usd.avsc"),
        state = path("state"),
        dead = path("dead.ndjson"),
    );
    let p = d.join("avro.toml");
    std::fs::write(&p, t).unwrap();
    p.to_string_lossy().into_owned()
}

/// (window start, currency) -> (count, qty, cents), computed from the orders.
fn reference(orders: &[Order]) -> BTreeMap<(i64, String), (i64, i64, i64)> {
    let mut w = BTreeMap::new();
    for o in orders {
        let e = w
            .entry((o.ts - o.ts.rem_euclid(10_000), o.currency.to_string()))
            .or_insert((0, 0, 0));
        e.0 += 1;
        e.1 += o.qty;
        e.2 += o.cents;
    }
    w
}

fn fields(line: &str) -> HashMap<String, Box<RawValue>> {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// An Avro output topic decoded with the schema each record's id names.
fn decoded(topic: &str) -> Vec<Vec<(String, Avro)>> {
    let mut schemas: HashMap<u32, Schema> = HashMap::new();
    read_all(topic)
        .iter()
        .map(|m| {
            let p = m.payload().unwrap();
            assert_eq!(p[0], 0, "magic byte");
            let id = u32::from_be_bytes([p[1], p[2], p[3], p[4]]);
            let s = schemas
                .entry(id)
                .or_insert_with(|| Schema::parse_str(&schema_by_id(id)).unwrap());
            #[allow(deprecated)]
            match apache_avro::from_avro_datum(s, &mut &p[5..], None).unwrap() {
                Avro::Record(f) => f,
                v => panic!("not a record: {v:?}"),
            }
        })
        .collect()
}

fn avro_cents(v: &Avro) -> i64 {
    let Avro::Decimal(d) = v else {
        panic!("not a decimal: {v:?}")
    };
    let n = num_bigint::BigInt::from(d.clone());
    n.to_string().parse().unwrap()
}

#[test]
fn two_schema_versions_resolve_to_the_latest_and_windows_round_trip_through_avro_sinks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (input, out, out_eo) = (
        topic("avro-in", 2),
        topic("avro-out", 1),
        topic("avro-eo", 1),
    );
    let (orders, _) = produce(&input, &format!("{input}-value"));
    let cfg = config(d, &input, &out, &out_eo);
    let r = sluice(d, &["run", "--config", &cfg], MIN * 3);
    assert!(r.success, "{}", r.stderr);

    // Every order, read through V2: V1's `note` gone, its currency the default, exact money.
    let mut rows = BTreeMap::new();
    for l in read_lines(&d.join("rows.ndjson")) {
        let f = fields(&l);
        let id: i64 = f["id"].get().parse().unwrap();
        assert_eq!(f["note"].get(), "null", "{l}");
        rows.insert(id, l);
    }
    assert_eq!(rows.len(), orders.len());
    for o in &orders {
        let f = fields(&rows[&o.id]);
        assert_eq!(f["amount"].get(), money(o.cents), "order {}", o.id);
        assert_eq!(f["ts"].get(), o.ts.to_string());
        assert_eq!(f["qty"].get(), o.qty.to_string());
        assert_eq!(f["currency"].get(), format!("\"{}\"", o.currency));
        assert_eq!(
            f["customer"].get(),
            (o.id % 13).to_string(),
            "the Avro key of {}",
            o.id
        );
    }

    let want = reference(&orders);
    let mut got = BTreeMap::new();
    for l in read_lines(&d.join("spend.ndjson")) {
        let f = fields(&l);
        let cur: String = serde_json::from_str(f["currency"].get()).unwrap();
        let key = (f["window_start"].get().parse().unwrap(), cur);
        let n = f["n"].get().parse().unwrap();
        let qty = f["qty"].get().parse().unwrap();
        got.insert(key, (n, qty, cents_of(f["total"].get())));
    }
    assert_eq!(got, want, "windows vs the reference");

    // The at-least-once Avro sink: every window, decoded with the registered schema.
    let mut avro = BTreeMap::new();
    for rec in decoded(&out) {
        let m: HashMap<_, _> = rec.into_iter().collect();
        let (Avro::Long(ws), Avro::String(c), Avro::Long(n), Avro::Long(q)) =
            (&m["window_start"], &m["currency"], &m["n"], &m["qty"])
        else {
            panic!("{m:?}")
        };
        avro.insert((*ws, c.clone()), (*n, *q, avro_cents(&m["total"])));
    }
    assert_eq!(avro, want, "the Avro sink vs the reference");

    // The exactly-once sink's enum has no GBP: those windows are dead letters, the rest arrive.
    let mut eo = BTreeMap::new();
    for rec in decoded(&out_eo) {
        let m: HashMap<_, _> = rec.into_iter().collect();
        let (Avro::Long(ws), Avro::Enum(_, c)) = (&m["window_start"], &m["currency"]) else {
            panic!("{m:?}")
        };
        eo.insert((*ws, c.clone()), avro_cents(&m["total"]));
    }
    let want_eo: BTreeMap<_, _> = want
        .iter()
        .filter(|((_, c), _)| c != "GBP")
        .map(|(k, v)| (k.clone(), v.2))
        .collect();
    assert_eq!(eo, want_eo, "the exactly-once Avro sink vs the reference");

    let dead: Vec<serde_json::Value> = read_lines(&d.join("dead.ndjson"))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reasons: Vec<&str> = dead.iter().map(|v| v["reason"].as_str().unwrap()).collect();
    let gbp = want.keys().filter(|(_, c)| c == "GBP").count();
    let has = |s: &str| reasons.iter().filter(|r| r.contains(s)).count();
    assert_eq!(has("magic byte 123"), 1, "{reasons:#?}");
    assert_eq!(has("not an Avro record"), 1, "{reasons:#?}");
    assert_eq!(has("schema id 2147483393"), 1, "{reasons:#?}");
    assert_eq!(has("expected one of EUR, USD"), gbp, "{reasons:#?}");
    assert_eq!(
        has("the record key: not a schema-registry Avro record"),
        1,
        "{reasons:#?}"
    );
    assert_eq!(dead.len(), 4 + gbp, "{reasons:#?}");
}

#[test]
fn a_subject_the_registry_does_not_have_fails_the_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = topic("avro-none", 1);
    let cfg = d.join("none.toml");
    std::fs::write(
        &cfg,
        format!(
            "[sources.orders]\ntype = \"kafka\"\n{client}topic = \"{input}\"\nstart = \"earliest\"\n\
             stop_at = \"end\"\nformat = \"avro\"\nschema_registry = {{ url = \"{reg}\" }}\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n\n\
             [transforms.all]\ntype = \"filter\"\ninputs = [\"orders\"]\nwhere = \"true\"\n\n\
             [sinks.out]\ntype = \"stdout\"\ninputs = [\"all\"]\n",
            client = client_toml(),
            reg = registry(),
        ),
    )
    .unwrap();
    let r = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN);
    assert!(!r.success);
    assert!(
        r.stderr.contains("source `orders`") && r.stderr.contains(&format!("{input}-value")),
        "{}",
        r.stderr
    );
}
