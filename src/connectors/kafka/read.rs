//! Kafka topics as source partitions: the client settings, and during the run each shard's reader
//! of the partitions it owns (the partitions and their start and end offsets are found before the
//! run, in [`discover`](super::discover)).
//!
//! A shard owns a fixed set of partitions (the runtime pads the chunk order so that a Kafka
//! partition's chunks always fall to the same shard) and polls each through its own partition
//! queue of one consumer, so no two shards touch one partition and librdkafka's prefetch is the
//! only buffer. A shard without credit stops polling and pauses its partitions: the lag stays in
//! Kafka. Positions a restore uses are the checkpoint's; the group commit is for monitoring tools
//! only. This module never parses records or touches rings.

use super::source_plan::KafkaPlan;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::statistics::Statistics;
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::ClientContext;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The client settings every consumer of `plan` shares; `options` go last, so a user's setting wins.
pub fn client_config(plan: &KafkaPlan) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &plan.brokers)
        .set("group.id", &plan.group_id)
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "true")
        .set("isolation.level", "read_committed")
        // Prefetch per partition (each has its own queue, so librdkafka bounds each): at most
        // 16 MiB waits per partition, fetched up to 8 MiB at a time; the 1 MiB default fetch and
        // 8 MiB queues left shards waiting for records (0.40-0.47 vs 0.70 M records/s here).
        .set("queued.max.messages.kbytes", "16384")
        .set("queued.min.messages", "200000")
        .set("max.partition.fetch.bytes", "8388608")
        .set("client.id", "sluice");
    for (k, v) in &plan.options {
        c.set(k, v);
    }
    c
}

/// The end of each partition's log as librdkafka's statistics last reported it (once a second,
/// served by `KafkaReader::service`): the record lag is this minus the read position.
#[derive(Default)]
pub struct LagContext {
    high: HashMap<(String, i32), AtomicI64>,
}

impl ClientContext for LagContext {
    fn stats(&self, statistics: Statistics) {
        for (topic, t) in &statistics.topics {
            for (p, s) in &t.partitions {
                if let Some(h) = self.high.get(&(topic.clone(), *p)) {
                    if s.hi_offset >= 0 {
                        h.store(s.hi_offset, Ordering::Relaxed);
                    }
                }
            }
        }
    }
}

impl ConsumerContext for LagContext {}

/// What one poll of a partition gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetch {
    /// A record, its payload copied into the caller's buffer.
    Record { offset: i64, timestamp: Option<i64> },
    /// A record whose value could not be decoded (`format = "avro"`), its raw bytes in the
    /// caller's buffer: a dead letter with `reason`.
    Undecodable {
        offset: i64,
        timestamp: Option<i64>,
        reason: String,
    },
    /// Nothing right now.
    Empty,
    /// The partition is read up to its current end.
    Eof,
    /// The next record is at or past the limit asked for: kept for a later call.
    Beyond,
}

/// One source's Avro schemas, shared by its shards: values' and keys'.
#[derive(Debug, Clone, Default)]
pub struct Avro {
    pub value: Option<Arc<crate::connectors::kafka::avro::AvroSource>>,
    pub key: Option<Arc<crate::connectors::kafka::avro::AvroSource>>,
}

/// A record's line, or its raw value and why it could not be decoded.
type RecordLine = Result<Vec<u8>, (Vec<u8>, String)>;

struct Owned {
    consumer: usize,
    part: u16,
    topic: String,
    partition: i32,
    queue: rdkafka::consumer::base_consumer::PartitionQueue<LagContext>,
    /// Offset of the next record this shard has not taken yet.
    next: i64,
    /// A record polled for a later chunk (past the current chunk's range), kept for it: its
    /// offset, timestamp and line, or its raw value and why it could not be decoded.
    held: Option<(i64, Option<i64>, RecordLine)>,
    last_data: Instant,
    /// Read up to the end of the log as of the last end-of-partition event, and nothing since.
    at_eof: bool,
    /// Chunks in a row that ended with no record.
    pub empty_streak: u32,
}

/// How a source's records become the engine's lines (one per consumer, so the partitions of a
/// source on a shard share their schema caches).
struct Decoding {
    /// Records carry their metadata as `_kafka`, the key decoded so.
    metadata: Option<super::config::KafkaKeyFormat>,
    /// An upsert changelog: tombstones become deletion rows, timed by this field (`None`: the
    /// Kafka timestamp is the event time).
    upsert: Option<Option<String>>,
    /// `format = "avro"`: values are decoded to JSON records here, before metadata joins them.
    avro: Option<crate::connectors::kafka::avro::AvroDecoder>,
    /// `key_format = "avro"`: keys decoded to JSON before they join metadata or tombstones.
    avro_key: Option<crate::connectors::kafka::avro::AvroDecoder>,
}

/// The engine's line for record `m` of partition `o`: a tombstone's deletion row, or the value
/// (decoded from Avro first) with the record's metadata when asked; or the raw value and why it
/// is not one.
/// An outer error: the registry cannot be reached, and the run stops.
fn record_line<M: Message>(m: &M, o: &mut Decoding) -> Result<RecordLine, String> {
    let mut bytes = Vec::new();
    let payload = m.payload();
    let mut key_json = Vec::new();
    let key = match (&mut o.avro_key, m.key()) {
        (Some(dec), Some(k)) => match dec.to_json(k, &mut key_json) {
            Ok(()) => Some(&key_json[..]),
            Err(e) if e.fatal => return Err(format!("the record key: {}", e.message)),
            Err(e) => {
                let raw = payload.unwrap_or_default().to_vec();
                return Ok(Err((raw, format!("the record key: {}", e.message))));
            }
        },
        (_, k) => k,
    };
    if let (Some(ts), None) = (&o.upsert, payload) {
        super::meta::tombstone(m, key, o.metadata, ts.as_deref(), &mut bytes);
        return Ok(Ok(bytes));
    }
    let mut decoded = Vec::new();
    let value = match (&mut o.avro, payload) {
        (Some(dec), Some(raw)) => match dec.to_json(raw, &mut decoded) {
            Ok(()) => &decoded[..],
            Err(e) if e.fatal => return Err(e.message),
            Err(e) => return Ok(Err((raw.to_vec(), e.message))),
        },
        (_, p) => p.unwrap_or_default(),
    };
    match o.metadata {
        Some(f) => super::meta::line_with_metadata(m, key, value, f, &mut bytes),
        None if decoded.is_empty() => bytes.extend_from_slice(value),
        None => return Ok(Ok(decoded)),
    }
    Ok(Ok(bytes))
}

/// One shard's consumers (one per Kafka source) of the partitions it owns.
#[derive(Default)]
pub struct KafkaReader {
    consumers: Vec<(Arc<BaseConsumer<LagContext>>, TopicPartitionList)>,
    /// Per consumer (so per source): how its records become lines.
    decodings: Vec<Decoding>,
    owned: Vec<Owned>,
    paused: bool,
}

impl KafkaReader {
    pub fn is_empty(&self) -> bool {
        self.owned.is_empty()
    }

    /// Assigns one source's `parts` (global partition index, topic, partition, start offset) to
    /// a new consumer.
    pub fn add(
        &mut self,
        plan: &KafkaPlan,
        parts: &[(u16, &str, i32, i64)],
        avro: &Avro,
    ) -> Result<(), String> {
        let high = parts
            .iter()
            .map(|(_, t, p, _)| ((t.to_string(), *p), AtomicI64::new(-1)))
            .collect();
        let consumer: Arc<BaseConsumer<LagContext>> = Arc::new(
            client_config(plan)
                .set("statistics.interval.ms", "1000")
                .create_with_context(LagContext { high })
                .map_err(|e| format!("cannot create a consumer: {e}"))?,
        );
        let mut tpl = TopicPartitionList::new();
        for (_, topic, p, start) in parts {
            tpl.add_partition_offset(topic, *p, Offset::Offset(*start))
                .map_err(|e| e.to_string())?;
        }
        let mut owned = Vec::new();
        let ci = self.consumers.len();
        for (part, topic, p, start) in parts {
            let queue = consumer
                .split_partition_queue(topic, *p)
                .ok_or_else(|| format!("cannot split the queue of {topic}/{p}"))?;
            owned.push(Owned {
                consumer: ci,
                part: *part,
                topic: topic.to_string(),
                partition: *p,
                queue,
                next: *start,
                held: None,
                last_data: Instant::now(),
                at_eof: false,
                empty_streak: 0,
            });
        }
        consumer
            .assign(&tpl)
            .map_err(|e| format!("cannot assign partitions: {e}"))?;
        let mut names = TopicPartitionList::new();
        for (_, topic, p, _) in parts {
            names.add_partition(topic, *p);
        }
        self.consumers.push((consumer, names));
        self.decodings.push(Decoding {
            metadata: plan.metadata,
            upsert: plan.upsert.clone(),
            avro: avro
                .value
                .as_ref()
                .map(|a| crate::connectors::kafka::avro::AvroDecoder::new(a.clone()))
                .transpose()?,
            avro_key: avro
                .key
                .as_ref()
                .map(|a| crate::connectors::kafka::avro::AvroDecoder::new(a.clone()))
                .transpose()?,
        });
        self.owned.extend(owned);
        Ok(())
    }

    fn slot(&mut self, part: u16) -> Option<&mut Owned> {
        self.owned.iter_mut().find(|o| o.part == part)
    }

    /// Per owned partition: (global partition index, next offset to read, end of the log as last
    /// reported, -1 until then). For the record-lag metric.
    pub fn lag(&self) -> Vec<(u16, i64, i64)> {
        self.owned
            .iter()
            .map(|o| {
                let high = self.consumers[o.consumer]
                    .0
                    .context()
                    .high
                    .get(&(o.topic.clone(), o.partition))
                    .map_or(-1, |h| h.load(Ordering::Relaxed));
                (o.part, o.next, high)
            })
            .collect()
    }

    /// Offset of the next record of `part` not taken yet.
    pub fn next_offset(&self, part: u16) -> Option<i64> {
        self.owned.iter().find(|o| o.part == part).map(|o| o.next)
    }

    /// True when everything `part` had at its last end-of-partition event has been taken.
    pub fn at_eof(&self, part: u16) -> bool {
        self.owned
            .iter()
            .any(|o| o.part == part && o.at_eof && o.held.is_none())
    }

    /// Counts a chunk of `part` that ended with `records` records (for `empty_streak`).
    pub fn chunk_ended(&mut self, part: u16, records: u64) {
        if let Some(o) = self.slot(part) {
            o.empty_streak = if records == 0 {
                o.empty_streak.saturating_add(1)
            } else {
                0
            };
        }
    }

    /// Empty chunks in a row `part` has had.
    pub fn empty_streak(&self, part: u16) -> u32 {
        self.owned
            .iter()
            .find(|o| o.part == part)
            .map_or(0, |o| o.empty_streak)
    }

    /// Time since `part` last had a record.
    pub fn quiet_for(&self, part: u16) -> Duration {
        self.owned
            .iter()
            .find(|o| o.part == part)
            .map_or(Duration::ZERO, |o| o.last_data.elapsed())
    }

    /// Takes the next record of `part` below offset `limit` into `buf`. A record at or past
    /// `limit` is kept for the next call with a higher limit, and reported as the range's end
    /// (`Eof`), like the end of the log.
    pub fn poll(&mut self, part: u16, limit: i64, buf: &mut Vec<u8>) -> Result<Fetch, String> {
        let Some(o) = self.owned.iter_mut().find(|o| o.part == part) else {
            return Err(format!("partition {part} is not this shard's"));
        };
        if o.held.is_none() {
            match o.queue.poll(Duration::ZERO) {
                None => return Ok(Fetch::Empty),
                Some(Err(KafkaError::PartitionEOF(_))) => {
                    o.at_eof = true;
                    return Ok(Fetch::Eof);
                }
                Some(Err(e)) => {
                    return Err(format!("reading {}/{}: {e}", o.topic, o.partition));
                }
                Some(Ok(m)) => {
                    o.at_eof = false;
                    let ts = m.timestamp().to_millis();
                    let Some(decoding) = self.decodings.get_mut(o.consumer) else {
                        return Err(format!("partition {part} has no decoding"));
                    };
                    let line = record_line(&m, decoding)
                        .map_err(|e| format!("reading {}/{}: {e}", o.topic, o.partition))?;
                    o.held = Some((m.offset(), ts, line));
                }
            }
        }
        let Some((offset, ts, bytes)) = o.held.as_mut() else {
            return Ok(Fetch::Empty);
        };
        if *offset >= limit {
            return Ok(Fetch::Beyond);
        }
        let (offset, timestamp) = (*offset, *ts);
        buf.clear();
        let fetch = match bytes {
            Ok(line) => {
                buf.extend_from_slice(line);
                Fetch::Record { offset, timestamp }
            }
            Err((raw, reason)) => {
                buf.extend_from_slice(raw);
                Fetch::Undecodable {
                    offset,
                    timestamp,
                    reason: std::mem::take(reason),
                }
            }
        };
        o.held = None;
        o.next = offset + 1;
        o.last_data = Instant::now();
        Ok(fetch)
    }

    /// Marks `part` as read up to `offset` (the range ended there without a record at it).
    pub fn skip_to(&mut self, part: u16, offset: i64) {
        if let Some(o) = self.slot(part) {
            o.next = o.next.max(offset);
        }
    }

    /// Serves the consumer's own events (errors, statistics); no records arrive here because every
    /// partition has its own queue.
    pub fn service(&mut self) {
        for (c, _) in &self.consumers {
            // Nothing but events and errors arrive here; a record would mean a partition without
            // its own queue, which `add` never makes.
            let _ = c.poll(Duration::ZERO);
        }
    }

    /// Pauses (no credit) or resumes fetching for every owned partition; true if that changed.
    pub fn set_paused(&mut self, pause: bool) -> bool {
        if self.paused == pause || self.owned.is_empty() {
            return false;
        }
        let ok = self.consumers.iter().all(|(c, tpl)| {
            if pause {
                c.pause(tpl).is_ok()
            } else {
                c.resume(tpl).is_ok()
            }
        });
        if ok {
            self.paused = pause;
        }
        ok
    }

    /// Commits the read positions to the group for lag monitoring and `start = "committed"`
    /// (asynchronous and best effort while running; `wait` at the end of the run).
    pub fn commit_positions(&self, wait: bool) {
        let mode = if wait {
            rdkafka::consumer::CommitMode::Sync
        } else {
            rdkafka::consumer::CommitMode::Async
        };
        for (ci, (c, _)) in self.consumers.iter().enumerate() {
            let mut tpl = TopicPartitionList::new();
            for o in self.owned.iter().filter(|o| o.consumer == ci) {
                let _ = tpl.add_partition_offset(&o.topic, o.partition, Offset::Offset(o.next));
            }
            if let Err(e) = c.commit(&tpl, mode) {
                if wait {
                    tracing::warn!("committing read positions to the Kafka group failed: {e}");
                }
            }
        }
    }
}

/// (when asked, (global partition index, end of log) per partition).
type Highs = (Option<Instant>, Vec<(u16, i64)>);

/// The end of every Kafka partition's log of one source, asked of the brokers by the metrics
/// endpoint itself (at most once a second, cached), so record lag stays visible when every shard
/// is blocked, e.g. in a stalled sink write, and cannot publish.
pub struct HighWatch {
    consumer: BaseConsumer,
    /// (global partition index, topic, partition, where it started this run).
    parts: Vec<(u16, String, i32, i64)>,
    /// When the brokers were last asked, and what they said.
    cache: std::sync::Mutex<Highs>,
}

impl HighWatch {
    pub fn new(plan: &KafkaPlan, parts: &[(u16, String, i32, i64)]) -> Result<HighWatch, String> {
        Ok(HighWatch {
            consumer: client_config(plan)
                .create()
                .map_err(|e| format!("cannot create a consumer: {e}"))?,
            parts: parts.to_vec(),
            cache: std::sync::Mutex::new((None, Vec::new())),
        })
    }
}

impl crate::metrics::LogEnds for HighWatch {
    fn starts(&self) -> Vec<(u16, i64)> {
        self.parts.iter().map(|(i, _, _, s)| (*i, *s)).collect()
    }

    /// (global partition index, end of its log) for every partition the brokers answered for.
    fn ends(&self) -> Vec<(u16, i64)> {
        let Ok(mut c) = self.cache.lock() else {
            return Vec::new();
        };
        if c.0.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
            return c.1.clone();
        }
        let mut out = Vec::new();
        for (i, topic, p, _) in &self.parts {
            if let Ok((_, high)) =
                self.consumer
                    .fetch_watermarks(topic, *p, Duration::from_millis(500))
            {
                out.push((*i, high));
            }
        }
        *c = (Some(Instant::now()), out.clone());
        out
    }
}
