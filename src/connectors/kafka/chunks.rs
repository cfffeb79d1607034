//! One shard's reader of the Kafka partitions it owns, through its consumer ([`super::read`]).
//! A chunk of a partition is the offset range it covers when the partition is bounded (`stop_at
//! = "end"`), else whatever has arrived, up to the same number of records, waiting at most
//! `OPEN_WAIT` for a first one. A chunk's end carries the partition's next offset, which the
//! receivers keep for checkpoints. A shard that has had no credit for `PAUSE_AFTER` pauses its
//! partitions, so librdkafka stops fetching and the lag stays in Kafka. Never blocks: a poll that
//! finds nothing returns, and the shard goes on receiving.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::read::{Fetch, KafkaReader};
use crate::connectors::changelog_rows::{ChangelogRows, Decoded};
use crate::connectors::csv::CsvShape;
use crate::connectors::source::{
    wall_clock_ms, ChunkSpec, Extent, LogChunkEnd, Partition, Read, Recall, SourceReader,
};
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

/// Where a log partition starts this run (the offset a checkpoint restored, else discovery's).
pub(super) fn start_of(p: &Partition) -> i64 {
    match p.extent {
        Extent::Log { start, .. } => start,
        Extent::Ranges { .. } => -1,
    }
}

/// The chunk being read.
pub(super) struct Chunk {
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
pub(super) struct KafkaChunks {
    pub(super) reader: KafkaReader,
    pub(super) parser: RecordParser,
    pub(super) csv: Option<Arc<CsvShape>>,
    /// The event time is the record's Kafka timestamp.
    pub(super) kafka_timestamp: bool,
    pub(super) idle: Duration,
    pub(super) shard: usize,
    pub(super) per_chunk: u64,
    pub(super) max_line_bytes: usize,
    /// Per run partition: the offset this run started at (chunk ranges count from it), and the
    /// end of a bounded one.
    pub(super) first: Vec<i64>,
    pub(super) ends: Vec<Option<i64>>,
    pub(super) cur: Option<Chunk>,
    /// A record's payload, copied out of librdkafka's buffer (reused, never per-event allocated
    /// once grown), and as a JSON record when the source is CSV.
    pub(super) buf: Vec<u8>,
    pub(super) csv_line: Vec<u8>,
    pub(super) converted: bool,
    /// A Debezium source's rows, and the record whose update's new row waits there.
    pub(super) changes: Option<ChangelogRows>,
    pub(super) last: (i64, Option<i64>),
    pub(super) bytes_read: u64,
    pub(super) committed: Instant,
    pub(super) serviced: Instant,
    pub(super) stalled_since: Option<Instant>,
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
        if let Some(c) = self.changes.as_mut() {
            self.last = (offset, timestamp);
            if self.buf.is_empty() {
                return Read::Skipped;
            }
            match c.decode(&self.buf) {
                Decoded::Skip => return Read::Skipped,
                Decoded::Dead(reason) => return dead(reason),
                Decoded::Row(kind) => self.parser.kind_flags = kind.flags(),
            }
            self.csv_line.clear();
            self.csv_line.extend_from_slice(&c.row);
            self.converted = true;
            return self.bind_line(pos, timestamp);
        }
        if let (Some(shape), false) = (&self.csv, self.buf.is_empty()) {
            if let Err(why) = shape.to_json(&self.buf, &mut self.csv_line) {
                return dead(format!("not a CSV record of this source: {why}"));
            }
            self.converted = true;
        }
        self.bind_line(pos, timestamp)
    }

    /// An update's new row, when one waits: bound as the record it came with.
    fn pending(&mut self) -> Option<Read> {
        let kind = self.changes.as_mut()?.next_pending()?;
        self.parser.kind_flags = kind.flags();
        let c = self.changes.as_ref()?;
        self.csv_line.clear();
        self.csv_line.extend_from_slice(&c.row);
        self.converted = true;
        let (offset, timestamp) = self.last;
        Some(self.bind_line(offset as u64, timestamp))
    }

    /// Binds the record's line (the value, or its JSON form or changelog row when converted).
    fn bind_line(&mut self, pos: u64, timestamp: Option<i64>) -> Read {
        let dead = |reason: String| Read::Dead { pos, reason };
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
        if let Some(read) = self.pending() {
            return read;
        }
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

    fn kind(&self) -> Option<crate::record::event::RowKind> {
        let flags = self.parser.kind_flags;
        self.changes
            .as_ref()
            .map(|_| crate::record::event::RowKind::of_flags(flags))
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
pub(super) struct KafkaRecall(pub(super) Vec<(String, i32)>);

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
