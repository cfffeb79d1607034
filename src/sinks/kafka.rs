//! Kafka sinks, and the guarantee each gives:
//! - `at_least_once`: each shard has its own producer and sends result lines as its buffer flushes
//!   (and at every checkpoint barrier). A replay after a crash sends the lines since the last
//!   checkpoint again; records are keyed (`key` fields), so a consumer that upserts by key ends
//!   with the same state.
//! - `exactly_once` (needs `[checkpoint]`): a write-ahead two-phase commit. Shards stage their lines
//!   per checkpoint like the file sink (`sinks::staged`, under the checkpoint directory); once a
//!   checkpoint's manifest is durable, the checkpoint writer sends its staged lines (and those of
//!   any earlier failed checkpoint) in ONE Kafka transaction together with a marker: the
//!   checkpoint id as the committed offset of group `<prefix>.checkpoints` on the output topic's
//!   partition 0, committed atomically with the records. Recovery reads the marker: a checkpoint
//!   whose transaction did not commit is committed again from its staging (roll forward), one that
//!   did is not; so a `read_committed` consumer sees every result exactly once. Results become
//!   visible once per checkpoint; the transaction is open only while the writer sends them, so
//!   `transaction.timeout.ms` need only exceed one commit, not the checkpoint interval.
//!
//!
//! `format = "avro"` writes each line as Confluent wire-format Avro with the schema registered at
//! start ([`open_avro`]); a line the schema cannot hold goes to the dead letters with the reason
//! (for `exactly_once`, the shards check each line before staging it, so a commit never meets one).
//!
//! Never on the event path: lines arrive in flushed buffers, never one per event.

use crate::avro::AvroEncoder;
use crate::plan::KafkaSinkPlan;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientContext;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(60);
/// Attempts at reading the marker group's committed offset when they time out.
const COMMITTED_TRIES: u32 = 3;

/// A timeout, not a refusal: worth asking again.
fn is_timeout(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(RDKafkaErrorCode::OperationTimedOut | RDKafkaErrorCode::RequestTimedOut)
    )
}

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
    fn check(&self) -> Result<(), String> {
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

fn producer_config(plan: &KafkaSinkPlan) -> ClientConfig {
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
    let consumer = crate::kafka_client::consumer(&c)?;
    // A missing topic is left to the broker: one that creates topics on first write may be meant.
    crate::kafka_client::metadata(&consumer, &plan.topic, PREFLIGHT_TIMEOUT)
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
fn send_lines(
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
        let payload: &[u8] = match avro {
            Some(enc) => match enc.encode(line, value) {
                Ok(()) => value,
                Err(why) => {
                    rejected.push((why, line.to_vec()));
                    continue;
                }
            },
            None => line,
        };
        let v = if parsed {
            serde_json::from_slice(line).unwrap_or(serde_json::Value::Null)
        } else {
            serde_json::Value::Null
        };
        record_key(&v, &plan.key, key);
        let headers = record_headers(&v, &plan.headers);
        loop {
            let mut rec = BaseRecord::<[u8], [u8]>::to(&plan.topic).payload(payload);
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
struct Bufs {
    key: Vec<u8>,
    value: Vec<u8>,
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

/// The exactly-once sink's committer, run by the checkpoint writer thread.
pub struct KafkaCommitter {
    pub name: String,
    plan: KafkaSinkPlan,
    /// Where the shards stage this sink's lines (the staging files of this path).
    pub stage: PathBuf,
    producer: Mutex<Option<BaseProducer<Deliveries>>>,
    /// `format = "avro"`: the encoder the shards checked the staged lines with (see
    /// [`KafkaCommitter::use_avro`]).
    avro: std::sync::OnceLock<Arc<AvroEncoder>>,
}

impl KafkaCommitter {
    pub fn new(name: &str, plan: &KafkaSinkPlan, stage: PathBuf) -> KafkaCommitter {
        KafkaCommitter {
            name: name.into(),
            plan: plan.clone(),
            stage,
            producer: Mutex::new(None),
            avro: std::sync::OnceLock::new(),
        }
    }

    /// Writes with `enc`, the encoder the shards check lines with, so a commit sends them under
    /// the schema id they were checked against.
    pub fn use_avro(&self, enc: Arc<AvroEncoder>) {
        let _ = self.avro.set(enc);
    }

    /// The encoder: the shards' one, or (recovering a previous run's staging before they start)
    /// the subject's as it is now.
    fn avro(&self) -> Result<Option<Arc<AvroEncoder>>, String> {
        if let Some(a) = self.avro.get() {
            return Ok(Some(a.clone()));
        }
        let Some(enc) = open_avro(&self.plan)? else {
            return Ok(None);
        };
        Ok(Some(self.avro.get_or_init(|| enc).clone()))
    }

    fn marker_group(&self) -> String {
        format!("{}.checkpoints", self.plan.transactional_id_prefix)
    }

    fn marker_tpl(&self, id: Option<u64>) -> Result<TopicPartitionList, String> {
        let mut tpl = TopicPartitionList::new();
        match id {
            Some(id) => tpl
                .add_partition_offset(&self.plan.topic, 0, Offset::Offset(id as i64))
                .map_err(|e| e.to_string())?,
            None => {
                tpl.add_partition(&self.plan.topic, 0);
            }
        }
        Ok(tpl)
    }

    fn marker_consumer(&self) -> Result<BaseConsumer, String> {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.plan.brokers)
            .set("group.id", self.marker_group())
            .set("enable.auto.commit", "false");
        for (k, v) in &self.plan.options {
            c.set(k, v);
        }
        c.create()
            .map_err(|e| format!("cannot create a consumer: {e}"))
    }

    /// The newest checkpoint whose lines are committed to Kafka (0: none).
    pub fn committed_id(&self) -> Result<u64, String> {
        let c = self.marker_consumer()?;
        // A broker busy right after a crash (its group coordinator still loading, transactions of
        // the killed run timing out) can let one metadata request time out: ask again, a few
        // times, before giving up on recovery.
        let mut tries = 0;
        let got = loop {
            tries += 1;
            match c.committed_offsets(self.marker_tpl(None)?, TIMEOUT) {
                Err(e) if tries < COMMITTED_TRIES && is_timeout(&e) => {
                    std::thread::sleep(Duration::from_millis(500));
                }
                r => break r,
            }
        }
        .map_err(|e| format!("reading group `{}`: {e}", self.marker_group()))?;
        Ok(
            match got.find_partition(&self.plan.topic, 0).map(|e| e.offset()) {
                Some(Offset::Offset(o)) if o > 0 => o as u64,
                _ => 0,
            },
        )
    }

    /// Sends the lines staged for checkpoint `id` (and earlier failed ones) in one transaction
    /// with the marker, then deletes their staging.
    pub fn commit(&self, id: u64) -> Result<(), String> {
        let files = crate::sinks::staged::staged_upto(&self.stage, id)
            .map_err(|e| format!("listing staged output: {e}"))?;
        if files.is_empty() {
            return Ok(());
        }
        let mut guard = self.producer.lock().map_err(|_| "producer lock poisoned")?;
        if guard.is_none() {
            let p: BaseProducer<Deliveries> = producer_config(&self.plan)
                .set(
                    "transactional.id",
                    format!("{}-{}", self.plan.transactional_id_prefix, self.name),
                )
                .create_with_context(Deliveries::default())
                .map_err(|e| format!("cannot create a transactional producer: {e}"))?;
            // Fences any earlier incarnation of this job and aborts its open transaction.
            p.init_transactions(TIMEOUT)
                .map_err(|e| format!("initialising transactions: {e}"))?;
            *guard = Some(p);
        }
        let Some(p) = guard.as_ref() else {
            return Err("no producer".into());
        };
        let avro = self.avro()?;
        let res = self.send_in_transaction(p, id, &files, avro.as_deref());
        if res.is_err() {
            let _ = p.abort_transaction(TIMEOUT);
            // A fenced or broken producer is made afresh on the next commit.
            *guard = None;
            return res;
        }
        for f in files {
            std::fs::remove_file(&f).map_err(|e| format!("deleting {}: {e}", f.display()))?;
        }
        Ok(())
    }

    fn send_in_transaction(
        &self,
        p: &BaseProducer<Deliveries>,
        id: u64,
        files: &[PathBuf],
        avro: Option<&AvroEncoder>,
    ) -> Result<(), String> {
        p.begin_transaction()
            .map_err(|e| format!("beginning a transaction: {e}"))?;
        let mut bufs = Bufs::default();
        let mut buf = Vec::new();
        let mut rejected = Vec::new();
        for f in files {
            let file = std::fs::File::open(f).map_err(|e| format!("{}: {e}", f.display()))?;
            let mut r = std::io::BufReader::with_capacity(1 << 20, file);
            loop {
                buf.clear();
                let n = r
                    .read_until(b'\n', &mut buf)
                    .map_err(|e| format!("{}: {e}", f.display()))?;
                if n == 0 {
                    break;
                }
                send_lines(p, &self.plan, &buf, &mut bufs, avro, &mut rejected)?;
                // The shards staged only lines the schema holds; one refused now means the
                // subject's latest schema changed under the running job.
                if let Some((why, _)) = rejected.first() {
                    return Err(format!(
                        "a staged line no longer fits the Avro schema: {why}"
                    ));
                }
            }
        }
        let cgm = self
            .marker_consumer()?
            .group_metadata()
            .ok_or("no group metadata for the marker group")?;
        p.send_offsets_to_transaction(&self.marker_tpl(Some(id))?, &cgm, TIMEOUT)
            .map_err(|e| format!("adding the checkpoint marker: {e}"))?;
        p.commit_transaction(TIMEOUT)
            .map_err(|e| format!("committing the transaction of checkpoint {id}: {e}"))?;
        p.context().check()
    }

    /// Recovery to checkpoint `newest`: commits its staged lines if its transaction never did,
    /// then discards all other staging (lines of checkpoints that never completed are produced
    /// again by the replay).
    pub fn recover(&self, newest: Option<u64>) -> Result<(), String> {
        if let Some(id) = newest {
            if self.committed_id()? < id {
                self.commit(id)?;
            }
        }
        crate::sinks::staged::discard(&self.stage).map_err(|e| format!("discarding staging: {e}"))
    }
}
