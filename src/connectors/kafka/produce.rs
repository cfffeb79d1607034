//! Producing result lines into a Kafka topic: the client settings of a sink, the start-up check,
//! the Avro encoder, each line's key and headers, and the at-least-once part of a shard (its own
//! producer, sending as its buffer flushes and waiting for the broker at every barrier).
//! Never on the event path: lines arrive in flushed buffers, never one per event.

use super::avro::AvroEncoder;
use super::sink::KafkaSinkPlan;
use crate::connectors::sink::SinkPart;
use crate::record::changelog::{split_kind, ChangelogEncoding};
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::ClientContext;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(super) const TIMEOUT: Duration = Duration::from_secs(60);
/// How long the start-up check waits for the brokers.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(15);

/// Counts failed deliveries and keeps the first reason.
#[derive(Default)]
pub struct Deliveries {
    failed: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, _)) = result {
            self.failed.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut f) = self.first_error.lock() {
                f.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

impl Deliveries {
    /// An error if any delivery failed since the last call.
    pub(super) fn check(&self) -> Result<(), String> {
        let n = self.failed.swap(0, Ordering::Relaxed);
        if n == 0 {
            return Ok(());
        }
        let why = self
            .first_error
            .lock()
            .ok()
            .and_then(|mut f| f.take())
            .unwrap_or_default();
        Err(format!("{n} records were not delivered: {why}"))
    }
}

pub(super) fn producer_config(plan: &KafkaSinkPlan) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &plan.brokers)
        // Java clients' partitioner: a key lands where a Java producer would put it.
        .set("partitioner", "murmur2_random")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("compression.type", "lz4")
        .set("client.id", "sluice");
    for (k, v) in &plan.options {
        c.set(k, v);
    }
    c
}

/// Reaches the sink's brokers with its settings and finds its topic, before the job runs: wrong
/// credentials or an untrusted certificate fail the start with the broker's reason, not a
/// delivery timeout later.
pub fn preflight(plan: &KafkaSinkPlan) -> Result<(), String> {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &plan.brokers)
        .set("group.id", "sluice-preflight")
        .set("client.id", "sluice");
    for (k, v) in &plan.options {
        c.set(k, v);
    }
    let consumer = super::client::consumer(&c)?;
    // A missing topic is left to the broker: one that creates topics on first write may be meant.
    super::client::metadata(&consumer, &plan.topic, PREFLIGHT_TIMEOUT)
        .map(|_| ())
        .map_err(|e| format!("cannot reach the brokers for topic `{}`: {e}", plan.topic))
}

/// The sink's Avro encoder with its schema registered (or its subject's latest looked up); at
/// start, so a refused schema fails the run before anything is read. `None` for JSON.
pub fn open_avro(plan: &KafkaSinkPlan) -> Result<Option<Arc<AvroEncoder>>, String> {
    let Some(a) = &plan.avro else {
        return Ok(None);
    };
    let enc = AvroEncoder::open(a).map_err(|e| format!("subject `{}`: {e}", a.subject))?;
    tracing::info!(topic = %plan.topic, subject = %a.subject, id = enc.id, "avro writer schema");
    Ok(Some(Arc::new(enc)))
}

/// Lines refused by a sink's format, with why: for the dead letters.
pub type Rejected = Vec<(String, Vec<u8>)>;

/// The record key of a result line: a JSON object of the `key` fields (missing ones null).
fn record_key(v: &serde_json::Value, fields: &[String], out: &mut Vec<u8>) {
    out.clear();
    if fields.is_empty() {
        return;
    }
    let mut m = serde_json::Map::new();
    for f in fields {
        m.insert(
            f.clone(),
            v.get(f).cloned().unwrap_or(serde_json::Value::Null),
        );
    }
    // Writing a map of JSON values into a Vec cannot fail.
    let _ = serde_json::to_writer(out, &m);
}

/// The record headers of a result: each header's field (a path, `a.b`), a string as its text,
/// another value as its JSON text; a missing or null field sends no header.
fn record_headers(v: &serde_json::Value, headers: &[(String, String)]) -> Option<OwnedHeaders> {
    let mut out = OwnedHeaders::new_with_capacity(headers.len());
    let mut any = false;
    for (name, path) in headers {
        let field = path.split('.').try_fold(v, |v, step| v.get(step));
        let text = match field {
            None | Some(serde_json::Value::Null) => continue,
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        out = out.insert(Header {
            key: name,
            value: Some(&text),
        });
        any = true;
    }
    any.then_some(out)
}

/// Sends every line of `lines` (each ending in `\n`) to the plan's topic, waiting for queue space;
/// with `avro`, a line its schema cannot hold goes to `rejected` instead.
pub(super) fn send_lines(
    producer: &BaseProducer<Deliveries>,
    plan: &KafkaSinkPlan,
    lines: &[u8],
    bufs: &mut Bufs,
    avro: Option<&AvroEncoder>,
    rejected: &mut Rejected,
) -> Result<u64, String> {
    let mut n = 0;
    let parsed = !plan.key.is_empty() || !plan.headers.is_empty();
    let Bufs { key, value } = bufs;
    for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        // By key, a -U or -D is a tombstone: the key's row is gone, as Flink's upsert-kafka
        // writes it.
        let (tombstone, line) = match plan.changelog {
            ChangelogEncoding::ByKey => {
                let (kind, row) = split_kind(line);
                (kind.is_retraction(), row)
            }
            _ => (false, line),
        };
        let payload: Option<&[u8]> = match avro {
            _ if tombstone => None,
            Some(enc) => match enc.encode(line, value) {
                Ok(()) => Some(value),
                Err(why) => {
                    rejected.push((why, line.to_vec()));
                    continue;
                }
            },
            None => Some(line),
        };
        let mut v = if parsed {
            serde_json::from_slice(line).unwrap_or(serde_json::Value::Null)
        } else {
            serde_json::Value::Null
        };
        if plan.changelog == ChangelogEncoding::Debezium {
            // Key and headers come from the row the change carries.
            v = match v["after"].take() {
                serde_json::Value::Null => v["before"].take(),
                after => after,
            };
        }
        record_key(&v, &plan.key, key);
        let headers = record_headers(&v, &plan.headers);
        loop {
            let mut rec = BaseRecord::<[u8], [u8]>::to(&plan.topic);
            if let Some(p) = payload {
                rec = rec.payload(p);
            }
            if !plan.key.is_empty() {
                rec = rec.key(&key[..]);
            }
            if let Some(h) = &headers {
                rec = rec.headers(h.clone());
            }
            match producer.send(rec) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                    producer.poll(Duration::from_millis(10));
                }
                Err((e, _)) => return Err(format!("sending to topic `{}`: {e}", plan.topic)),
            }
        }
        n += 1;
    }
    producer.poll(Duration::ZERO);
    Ok(n)
}

/// A record's key and value, reused from record to record.
#[derive(Default)]
pub(super) struct Bufs {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

/// One shard's at-least-once producer.
pub struct KafkaOut {
    plan: KafkaSinkPlan,
    producer: BaseProducer<Deliveries>,
    bufs: Bufs,
    avro: Option<Arc<AvroEncoder>>,
    /// Lines the Avro schema could not hold, waiting for the dead letters.
    pub rejected: Rejected,
}

impl std::fmt::Debug for KafkaOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KafkaOut({})", self.plan.topic)
    }
}

impl KafkaOut {
    pub fn new(plan: &KafkaSinkPlan, avro: Option<Arc<AvroEncoder>>) -> Result<KafkaOut, String> {
        Ok(KafkaOut {
            plan: plan.clone(),
            producer: producer_config(plan)
                .create_with_context(Deliveries::default())
                .map_err(|e| format!("cannot create a producer: {e}"))?,
            bufs: Bufs::default(),
            avro,
            rejected: Vec::new(),
        })
    }

    /// Sends a buffer of whole lines; `durable` waits until the broker has them all (at a
    /// checkpoint barrier or the end of the run).
    pub fn write(&mut self, lines: &[u8], durable: bool) -> Result<(), String> {
        send_lines(
            &self.producer,
            &self.plan,
            lines,
            &mut self.bufs,
            self.avro.as_deref(),
            &mut self.rejected,
        )?;
        if durable {
            self.producer
                .flush(TIMEOUT)
                .map_err(|e| format!("flushing to topic `{}`: {e}", self.plan.topic))?;
        }
        self.producer.context().check()
    }
}

impl SinkPart for KafkaOut {
    fn write(&mut self, buf: &mut Vec<u8>, durable: bool) -> Result<(), String> {
        let res = KafkaOut::write(self, buf, durable);
        buf.clear();
        res
    }

    fn has_rejected(&self) -> bool {
        !self.rejected.is_empty()
    }

    fn take_rejected(&mut self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut self.rejected)
    }
}

/// A shard whose producer was taken already (one part per shard is made).
#[derive(Debug)]
pub(super) struct NoProducer;

impl SinkPart for NoProducer {
    fn write(&mut self, buf: &mut Vec<u8>, _durable: bool) -> Result<(), String> {
        if buf.is_empty() {
            return Ok(());
        }
        buf.clear();
        Err("write failed: no Kafka producer for this shard".into())
    }
}
