//! The Kafka source as the runtime reads it: each partition a log one shard owns (partition `i`
//! of the run belongs to shard `i % shards`), read through that shard's consumer ([`super::read`]).
//! A chunk of a partition is the offset range it covers when the partition is bounded (`stop_at
//! = "end"`), else whatever has arrived, up to the same number of records, waiting at most
//! `OPEN_WAIT` for a first one. A chunk's end carries the partition's next offset, which the
//! receivers keep for checkpoints. A shard that has had no credit for `PAUSE_AFTER` pauses its
//! partitions, so librdkafka stops fetching and the lag stays in Kafka. Never blocks: a poll that
//! finds nothing returns, and the shard goes on receiving.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::config::KafkaSourceConfig;
use super::read::{Avro, Fetch, HighWatch, KafkaReader};
use super::source_plan::{kafka_plan, KafkaPlan};
use crate::config::{EventTimeConfig, WatermarkConfig};
use crate::connectors::check::Check;
use crate::connectors::csv::check::csv_plan;
use crate::connectors::csv::{CsvPlan, CsvShape};
use crate::connectors::source::{
    log_records_per_chunk, parse_rate, wall_clock_ms, ChunkSpec, Extent, Found, LogChunkEnd,
    OpenCx, OpenSource, Partition, Read, ReaderCx, Recall, Source, SourceError, SourceReader,
};
use crate::connectors::SourceTable;
use crate::record::bind::RecordParser;
use crate::record::event::{Event, PayloadBuf};
use crate::record::json::Span;

/// How long an unbounded partition's chunk waits for its first record before it ends empty; it
/// doubles with each empty chunk in a row, up to `OPEN_WAIT_MAX`, so a quiet partition does not
/// keep its shard busy making empty chunks (a record that arrives ends the wait at once, but the
/// chunks after this one in the order wait with it).
const OPEN_WAIT: Duration = Duration::from_millis(1);
const OPEN_WAIT_MAX: Duration = Duration::from_millis(16);
/// How long a shard goes without credit before it pauses its partitions.
const PAUSE_AFTER: Duration = Duration::from_secs(1);
/// How often a shard serves its consumers' events between chunks.
const SERVICE_EVERY: Duration = Duration::from_millis(50);
/// How often read positions are committed to the group (for monitoring tools only).
const COMMIT_EVERY: Duration = Duration::from_secs(1);

/// `[sources.NAME] type = "kafka"`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaSource {
    pub plan: KafkaPlan,
    /// `format = "csv"`: how each record's value becomes a JSON record.
    pub csv: Option<CsvPlan>,
    pub rate_per_s: Option<f64>,
}

impl SourceTable for KafkaSourceConfig {
    fn event_time(&self) -> std::borrow::Cow<'_, EventTimeConfig> {
        std::borrow::Cow::Borrowed(&self.event_time)
    }

    fn watermark(&self) -> &WatermarkConfig {
        &self.watermark
    }

    fn record_timestamps(&self) -> bool {
        true
    }

    fn flink_notes(&self) -> Vec<&'static str> {
        super::sql::flink_source_notes(self)
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Source> {
        let plan = kafka_plan(cx, self);
        let rate_per_s = self
            .rate_limit
            .as_deref()
            .and_then(|r| match parse_rate(r) {
                Ok(n) => Some(n),
                Err(m) => {
                    cx.err(cx.key("rate_limit"), m);
                    None
                }
            });
        let csv = csv_plan(cx, self.format, self.csv.as_ref(), false);
        Arc::new(KafkaSource {
            plan,
            csv,
            rate_per_s,
        })
    }
}

impl Source for KafkaSource {
    fn kind(&self) -> &'static str {
        "kafka"
    }

    fn describe(&self) -> String {
        format!(
            "kafka {} at {}",
            self.plan.topics.join(", "),
            self.plan.brokers
        )
    }

    fn rate_limit(&self) -> Option<f64> {
        self.rate_per_s
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSource>, SourceError> {
        let parts = super::discover::discover(cx.name, &self.plan)
            .map_err(|e| SourceError::Other(e.to_string()))?;
        let found = parts
            .iter()
            .map(|p| Found {
                name: format!("{}/{}", p.topic, p.partition),
                extent: Extent::Log {
                    start: p.start,
                    end: p.end,
                },
            })
            .collect();
        Ok(Arc::new(OpenKafka {
            plan: self.plan.clone(),
            topics: parts.into_iter().map(|p| (p.topic, p.partition)).collect(),
            found,
            avro: avro_schemas(cx, &self.plan)?,
            csv: self
                .csv
                .as_ref()
                .map(|c| Arc::new(CsvShape::new(&c.columns, c.delimiter))),
            event_time: cx.event_time.clone(),
            idle: Duration::from_millis(cx.idle_timeout_ms.max(0) as u64),
        }))
    }
}

/// The source's Avro reader schema and registry, fetched once for all shards, and its keys'
/// registry (`key_format = "avro"`). A missing subject or an unreachable registry fails the
/// start, naming the source.
fn avro_schemas(cx: &OpenCx<'_>, k: &KafkaPlan) -> Result<Avro, SourceError> {
    use super::avro::AvroSource;
    let key = k
        .avro_key
        .as_ref()
        .map(|r| Arc::new(AvroSource::keys(r, cx.max_line_bytes)));
    let Some(a) = &k.avro else {
        return Ok(Avro { value: None, key });
    };
    let s = AvroSource::open(a, cx.max_line_bytes)
        .map_err(|m| SourceError::Other(format!("source `{}`: {m}", cx.name)))?;
    tracing::info!(source = %cx.name, subject = %a.subject, version = s.version, "avro reader schema");
    Ok(Avro {
        value: Some(Arc::new(s)),
        key,
    })
}

/// A Kafka source opened for a run: its partitions and what every shard's consumer shares.
struct OpenKafka {
    plan: KafkaPlan,
    /// Each partition's (topic, partition), by index.
    topics: Vec<(String, i32)>,
    found: Vec<Found>,
    avro: Avro,
    csv: Option<Arc<CsvShape>>,
    event_time: crate::plan::EventTimePlan,
    idle: Duration,
}

impl OpenSource for OpenKafka {
    fn partitions(&self) -> &[Found] {
        &self.found
    }

    fn reader(&self, cx: &ReaderCx<'_>) -> Result<Box<dyn SourceReader>, String> {
        // Shard `id` owns the partitions at run indices `i` with `i % shards == id` (the padded
        // chunk order gives their chunks to this shard alone).
        let mine: Vec<(u16, &Partition)> = cx
            .parts
            .iter()
            .enumerate()
            .filter(|(i, p)| p.source == cx.source && i % cx.shards == cx.shard)
            .map(|(i, p)| (i as u16, p))
            .collect();
        let mut reader = KafkaReader::default();
        let owned: Vec<_> = mine
            .iter()
            .map(|(i, p)| {
                let (topic, partition) = &self.topics[p.index];
                (*i, topic.as_str(), *partition, start_of(p))
            })
            .collect();
        if !owned.is_empty() {
            reader.add(&self.plan, &owned, &self.avro)?;
        }
        let et = &self.event_time;
        let parser = if self.plan.kafka_timestamp {
            RecordParser::keyed(cx.bindings)?
        } else {
            RecordParser::new(&et.field, et.unit, cx.bindings)?
        }
        .with_guard(et.max_future_ms, et.allow_negative);
        Ok(Box::new(KafkaChunks {
            reader,
            parser,
            csv: self.csv.clone(),
            kafka_timestamp: self.plan.kafka_timestamp,
            idle: self.idle,
            shard: cx.shard,
            per_chunk: log_records_per_chunk(cx.chunk_bytes),
            max_line_bytes: cx.max_line_bytes,
            first: cx.parts.iter().map(start_of).collect(),
            ends: cx
                .parts
                .iter()
                .map(|p| match p.extent {
                    Extent::Log { end, .. } => end,
                    Extent::Ranges { .. } => None,
                })
                .collect(),
            cur: None,
            buf: Vec::new(),
            csv_line: Vec::new(),
            converted: false,
            bytes_read: 0,
            committed: Instant::now(),
            serviced: Instant::now(),
            stalled_since: None,
        }))
    }

    fn recaller(&self) -> Box<dyn Recall> {
        Box::new(KafkaRecall(self.topics.clone()))
    }

    fn log_ends(
        &self,
        parts: &[(u16, &Partition)],
    ) -> Result<Option<Box<dyn crate::metrics::LogEnds>>, String> {
        let watched: Vec<_> = parts
            .iter()
            .map(|(i, p)| {
                let (topic, partition) = &self.topics[p.index];
                (*i, topic.clone(), *partition, start_of(p))
            })
            .collect();
        Ok(Some(Box::new(HighWatch::new(&self.plan, &watched)?)))
    }
}

/// Where a log partition starts this run (the offset a checkpoint restored, else discovery's).
fn start_of(p: &Partition) -> i64 {
    match p.extent {
        Extent::Log { start, .. } => start,
        Extent::Ranges { .. } => -1,
    }
}

/// The chunk being read.
struct Chunk {
    spec: ChunkSpec,
    /// Offsets below this belong to the chunk (`i64::MAX`: unbounded).
    limit: i64,
    /// The partition's end offset (`stop_at = "end"`).
    end: Option<i64>,
    records: u64,
    opened: Instant,
    /// How long this chunk waits for a first record (unbounded partitions).
    wait: Duration,
}

/// One shard's reader of a Kafka source's partitions it owns.
struct KafkaChunks {
    reader: KafkaReader,
    parser: RecordParser,
    csv: Option<Arc<CsvShape>>,
    /// The event time is the record's Kafka timestamp.
    kafka_timestamp: bool,
    idle: Duration,
    shard: usize,
    per_chunk: u64,
    max_line_bytes: usize,
    /// Per run partition: the offset this run started at (chunk ranges count from it), and the
    /// end of a bounded one.
    first: Vec<i64>,
    ends: Vec<Option<i64>>,
    cur: Option<Chunk>,
    /// A record's payload, copied out of librdkafka's buffer (reused, never per-event allocated
    /// once grown), and as a JSON record when the source is CSV.
    buf: Vec<u8>,
    csv_line: Vec<u8>,
    converted: bool,
    bytes_read: u64,
    committed: Instant,
    serviced: Instant,
    stalled_since: Option<Instant>,
}

impl KafkaChunks {
    /// Binds one record (`undecodable`: why its value could not be decoded at all).
    fn bind(&mut self, offset: i64, timestamp: Option<i64>, undecodable: Option<String>) -> Read {
        let pos = offset as u64;
        self.converted = false;
        let dead = |reason: String| Read::Dead { pos, reason };
        if let Some(why) = undecodable {
            return dead(why);
        }
        if let (Some(shape), false) = (&self.csv, self.buf.is_empty()) {
            if let Err(why) = shape.to_json(&self.buf, &mut self.csv_line) {
                return dead(format!("not a CSV record of this source: {why}"));
            }
            self.converted = true;
        }
        let line: &[u8] = if self.converted {
            &self.csv_line
        } else {
            &self.buf
        };
        if line.is_empty() {
            return dead("an empty record: a tombstone (no value) or an empty value; a table's changelog \
                 reads its tombstones as deletions with changelog = \"upsert\" and a JSON-object key"
                .to_string());
        }
        if line.len() > self.max_line_bytes {
            return dead(format!(
                "record is {} bytes; max_line_bytes is {}",
                line.len(),
                self.max_line_bytes
            ));
        }
        let parsed = if self.kafka_timestamp {
            match timestamp {
                Some(ts) if ts >= 0 => self.parser.parse_at(line, ts).map(|_| ts),
                _ => return dead("the record has no Kafka timestamp".to_string()),
            }
        } else {
            self.parser.parse(line)
        };
        match parsed {
            Ok(ts) => {
                self.bytes_read += line.len() as u64;
                Read::Record {
                    pos,
                    len: line.len() as u32,
                    ts,
                    unbound: None,
                }
            }
            Err(m) => dead(m.0),
        }
    }
}

impl SourceReader for KafkaChunks {
    fn open_chunk(&mut self, spec: ChunkSpec) -> Result<(), String> {
        let part = spec.part;
        let Some(next) = self.reader.next_offset(part) else {
            return Err(format!(
                "kafka partition {part} fell to shard {}, which does not own it",
                self.shard
            ));
        };
        self.reader.service();
        let first = self.first[part as usize];
        let end = self.ends[part as usize];
        let per_chunk = self.per_chunk;
        let limit = match end {
            // Sitting out: nothing below the next offset is left to read.
            _ if spec.sit_out => next,
            // An aligned bounded partition has no fixed chunk count: each chunk it reads takes
            // the next `per_chunk` records, so the rounds it sits out do not pile up.
            Some(end) if spec.next_records => end.min(next.saturating_add(per_chunk as i64)),
            Some(end) => end.min(first.saturating_add(((spec.k + 1) * per_chunk) as i64)),
            None => i64::MAX,
        };
        self.parser.set_clock(wall_clock_ms());
        let streak = self.reader.empty_streak(part).min(4);
        self.cur = Some(Chunk {
            spec,
            limit,
            end,
            records: 0,
            opened: Instant::now(),
            wait: if spec.sit_out {
                Duration::ZERO
            } else {
                (OPEN_WAIT * (1 << streak)).min(OPEN_WAIT_MAX)
            },
        });
        Ok(())
    }

    fn next(&mut self) -> Read {
        let Some(kc) = self.cur.as_mut() else {
            return Read::End;
        };
        let part = kc.spec.part;
        if kc.end.is_none() && kc.records >= self.per_chunk {
            return Read::End;
        }
        if self.reader.next_offset(part).is_some_and(|n| n >= kc.limit) {
            return Read::End;
        }
        match self.reader.poll(part, kc.limit, &mut self.buf) {
            Err(e) => Read::Failed(e),
            Ok(Fetch::Beyond) => Read::End,
            Ok(Fetch::Eof) => {
                // Everything below the end of the log is taken; a bounded range ends there (its
                // last offsets were transaction markers or compacted away).
                if kc.end.is_some() {
                    self.reader.skip_to(part, kc.limit);
                }
                Read::End
            }
            Ok(Fetch::Empty) => {
                if kc.end.is_some() {
                    if self.reader.at_eof(part) {
                        self.reader.skip_to(part, kc.limit);
                        Read::End
                    } else {
                        Read::Wait
                    }
                } else if kc.records > 0 || kc.opened.elapsed() >= kc.wait {
                    Read::End
                } else {
                    Read::Wait
                }
            }
            Ok(Fetch::Record { offset, timestamp }) => {
                kc.records += 1;
                self.bind(offset, timestamp, None)
            }
            Ok(Fetch::Undecodable {
                offset,
                timestamp,
                reason,
            }) => {
                kc.records += 1;
                self.bind(offset, timestamp, Some(reason))
            }
        }
    }

    fn line(&self) -> &[u8] {
        if self.converted {
            &self.csv_line
        } else {
            &self.buf
        }
    }

    fn raw(&self) -> &[u8] {
        &self.buf
    }

    fn events(&self) -> (&[Event], &[PayloadBuf]) {
        (&self.parser.events, &self.parser.payloads)
    }

    fn end_log_chunk(&mut self, spec: ChunkSpec) -> LogChunkEnd {
        let part = spec.part;
        let (records, end, sat_out) = match self.cur.take() {
            Some(kc) => (kc.records, kc.end, kc.spec.sit_out),
            None => (0, self.ends[part as usize], spec.sit_out),
        };
        let next = self.reader.next_offset(part).unwrap_or(0);
        // A round sat out says nothing about how quiet the partition is.
        if !sat_out {
            self.reader.chunk_ended(part, records);
        }
        if self.committed.elapsed() >= COMMIT_EVERY {
            self.reader.commit_positions(false);
            self.committed = Instant::now();
        }
        LogChunkEnd {
            next,
            last: end.is_some_and(|end| next >= end),
            // A partition sitting out is quiet by our choice, not idle: its records wait in Kafka.
            idle: end.is_none()
                && records == 0
                && !sat_out
                && self.reader.quiet_for(part) >= self.idle,
        }
    }

    fn outputs(&self) -> usize {
        self.parser.outputs()
    }

    fn take_bytes_read(&mut self) -> u64 {
        std::mem::take(&mut self.bytes_read)
    }

    fn keep_fields(&mut self, wanted: &[String]) -> Option<Vec<usize>> {
        self.parser.keep_fields(wanted)
    }

    fn kept(&self) -> Option<&[Option<Span>]> {
        self.parser.kept()
    }

    /// Pauses this shard's partitions once it has had no credit for a while; resumes them when
    /// credit returns. Logged once per change.
    fn tick(&mut self, stalled: bool) {
        if self.reader.is_empty() {
            return;
        }
        // The consumers' own events (statistics with the log ends for the lag metric, errors)
        // are served here too, so a shard that waits for credit mid-chunk still reports its lag.
        if self.serviced.elapsed() >= SERVICE_EVERY {
            self.reader.service();
            self.serviced = Instant::now();
        }
        if stalled {
            let since = *self.stalled_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= PAUSE_AFTER && self.reader.set_paused(true) {
                tracing::info!(
                    shard = self.shard,
                    "no credit: pausing this shard's Kafka partitions"
                );
            }
        } else {
            self.stalled_since = None;
            if self.reader.set_paused(false) {
                tracing::info!(
                    shard = self.shard,
                    "credit back: resuming this shard's Kafka partitions"
                );
            }
        }
    }

    fn commit_positions(&mut self, last: bool) {
        if !self.reader.is_empty() {
            self.reader.commit_positions(last);
        }
    }

    fn lag(&self) -> Vec<(u16, i64, i64)> {
        self.reader.lag()
    }
}

/// A late Kafka record stays in Kafka: a reference to it.
struct KafkaRecall(Vec<(String, i32)>);

impl Recall for KafkaRecall {
    fn recall(&mut self, part: &Partition, e: &Event, out: &mut Vec<u8>) -> Result<(), String> {
        let (topic, partition) = &self.0[part.index];
        let v = serde_json::json!({
            "kafka_topic": topic,
            "kafka_partition": partition,
            "kafka_offset": e.pos,
        });
        out.extend_from_slice(v.to_string().as_bytes());
        Ok(())
    }
}
