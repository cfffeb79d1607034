//! The Kafka half of producing: a chunk of a Kafka partition is the offset range it covers when
//! the partition is bounded (`stop_at = "end"`), else whatever has arrived, up to the same number
//! of records, waiting at most `OPEN_WAIT` for a first one. Chunk ends carry the partition's next
//! offset, which receivers keep for checkpoints. A shard that has had no credit for `PAUSE_AFTER`
//! pauses its partitions, so librdkafka stops fetching and the lag stays in Kafka.
//! Never blocks: a poll that finds nothing returns, and the shard goes on receiving.

use super::produce::DeadAt;
use super::steps;
use super::{Shard, SourceParser};
use crate::record::event::{CHUNK_IDLE, CHUNK_LAST, CHUNK_OFFSET};
use crate::runtime::kafka_align::{Decision, Holds};
use crate::sources::kafka::{Fetch, KafkaPart};
use crate::sources::kafka_records_per_chunk;
use crate::sources::PartKind;
use std::time::{Duration, Instant};

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

pub(super) struct KafkaChunk {
    /// Offsets below this belong to the chunk (`i64::MAX`: unbounded).
    limit: i64,
    /// The partition's end offset (`stop_at = "end"`).
    end: Option<i64>,
    records: u64,
    per_chunk: u64,
    opened: Instant,
    /// How long this chunk waits for a first record (unbounded partitions).
    wait: Duration,
    /// Its round (the partition's chunk index) and whether it sits the round out (alignment).
    round: u64,
    sat_out: bool,
}

/// What watermark alignment makes of a chunk slot of the order.
pub(super) enum Slot {
    /// The reports it depends on are not in yet.
    Wait,
    /// An aligned file or generator sits the round out (or is done): an empty slot.
    Pad,
    Chunk(SlotChunk),
}

pub(super) struct SlotChunk {
    /// The partition's chunk index to read (an aligned file's next chunk, not the round).
    pub k: u64,
    pub last: bool,
    /// A Kafka partition reads nothing this round.
    pub sit_out: bool,
    /// The round to report the chunk's end for (aligned files and the generator).
    pub round: Option<u64>,
}

pub(super) enum Step {
    Record,
    Done,
    Wait,
}

impl Shard {
    /// Slot `(part, k)` of the order under watermark alignment (`last`: the order's last chunk
    /// of the partition): a Kafka partition reads or sits out its chunk of round `k`; an aligned
    /// file or generator reads its next chunk or leaves the slot empty.
    pub(super) fn aligned_slot(&mut self, part: u16, k: u64, last: bool) -> Slot {
        let plain = |sit_out| {
            Slot::Chunk(SlotChunk {
                k,
                last,
                sit_out,
                round: None,
            })
        };
        let Some(a) = self.setup.kafka_align.clone() else {
            return plain(false);
        };
        let kafka = matches!(self.setup.parts[part as usize].kind, PartKind::Kafka(_));
        let count = match a.count(part) {
            Some(count) if !kafka => count,
            _ => {
                return match a.decide(part, k, last) {
                    Decision::Read => plain(false),
                    Decision::SitOut => plain(true),
                    Decision::Wait => Slot::Wait,
                }
            }
        };
        let next = self.aligned_read[part as usize];
        let done = count.is_some_and(|c| next >= c);
        let last = count.is_some_and(|c| next + 1 == c);
        let d = if done {
            Decision::SitOut
        } else {
            a.decide(part, k, last)
        };
        match d {
            Decision::Wait => Slot::Wait,
            Decision::SitOut => {
                let holds = if done { Holds::Done } else { Holds::Holding };
                a.report(part, k, i64::MIN, holds);
                Slot::Pad
            }
            Decision::Read => {
                self.aligned_read[part as usize] += 1;
                Slot::Chunk(SlotChunk {
                    k: next,
                    last,
                    sit_out: false,
                    round: Some(k),
                })
            }
        }
    }

    pub(super) fn start_kafka_chunk(
        &mut self,
        part: u16,
        kp: &KafkaPart,
        k: u64,
        sit_out: bool,
    ) -> Result<KafkaChunk, String> {
        let name = &self.setup.parts[part as usize].name;
        let Some(reader) = self.kafka.as_mut() else {
            return Err(format!(
                "kafka partition {name} fell to shard {}, which has no consumer for it",
                self.id
            ));
        };
        if reader.next_offset(part).is_none() {
            return Err(format!(
                "kafka partition {name} fell to shard {}, which does not own it",
                self.id
            ));
        }
        reader.service();
        let per_chunk = kafka_records_per_chunk(self.setup.chunk_bytes);
        let first = self.kafka_first[part as usize];
        let next = reader.next_offset(part).unwrap_or(0);
        // An aligned bounded partition has no fixed chunk count: each chunk it reads takes the
        // next `per_chunk` records, so the rounds it sits out do not pile up into one big read.
        let aligned = self.setup.chunk_counts[part as usize].is_none();
        let limit = match kp.end {
            // Sitting out: nothing below the next offset is left to read.
            _ if sit_out => next,
            Some(end) if aligned => end.min(next.saturating_add(per_chunk as i64)),
            Some(end) => end.min(first.saturating_add(((k + 1) * per_chunk) as i64)),
            None => i64::MAX,
        };
        let src = self.setup.parts[part as usize].source;
        if let SourceParser::Json(jp) = &mut self.parsers[src] {
            jp.set_clock(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(i64::MAX, |d| d.as_millis() as i64),
            );
        }
        let streak = reader.empty_streak(part).min(4);
        Ok(KafkaChunk {
            limit,
            end: kp.end,
            records: 0,
            per_chunk,
            opened: Instant::now(),
            wait: if sit_out {
                Duration::ZERO
            } else {
                (OPEN_WAIT * (1 << streak)).min(OPEN_WAIT_MAX)
            },
            round: k,
            sat_out: sit_out,
        })
    }

    /// Takes the next record of the current Kafka chunk, if one has arrived.
    pub(super) fn next_kafka(&mut self) -> Step {
        let Some(cur) = self.cur.as_mut() else {
            return Step::Done;
        };
        let part = cur.part;
        let Some(kc) = cur.kafka.as_mut() else {
            return Step::Done;
        };
        let Some(reader) = self.kafka.as_mut() else {
            return Step::Done;
        };
        if kc.end.is_none() && kc.records >= kc.per_chunk {
            return Step::Done;
        }
        if reader.next_offset(part).is_some_and(|n| n >= kc.limit) {
            return Step::Done;
        }
        let mut buf = std::mem::take(&mut self.kbuf);
        let step = match reader.poll(part, kc.limit, &mut buf) {
            Err(e) => {
                self.failure = Some(e);
                Step::Wait
            }
            Ok(Fetch::Beyond) => Step::Done,
            Ok(Fetch::Eof) => {
                // Everything below the end of the log is taken; a bounded range ends there (its
                // last offsets were transaction markers or compacted away).
                if kc.end.is_some() {
                    reader.skip_to(part, kc.limit);
                }
                Step::Done
            }
            Ok(Fetch::Empty) => {
                if kc.end.is_some() {
                    if reader.at_eof(part) {
                        reader.skip_to(part, kc.limit);
                        Step::Done
                    } else {
                        Step::Wait
                    }
                } else if kc.records > 0 || kc.opened.elapsed() >= kc.wait {
                    Step::Done
                } else {
                    Step::Wait
                }
            }
            Ok(Fetch::Record { offset, timestamp }) => {
                kc.records += 1;
                let src = self.setup.parts[part as usize].source;
                self.rate_read[src] += 1;
                self.kafka_record(part, offset, timestamp, &buf, None);
                Step::Record
            }
            Ok(Fetch::Undecodable {
                offset,
                timestamp,
                reason,
            }) => {
                kc.records += 1;
                let src = self.setup.parts[part as usize].source;
                self.rate_read[src] += 1;
                self.kafka_record(part, offset, timestamp, &buf, Some(reason));
                Step::Record
            }
        };
        self.kbuf = buf;
        step
    }

    /// Parses one Kafka record and routes its events, or writes it to the dead letters (with
    /// `undecodable`'s reason when its value could not be decoded at all).
    fn kafka_record(
        &mut self,
        part: u16,
        offset: i64,
        timestamp: Option<i64>,
        raw: &[u8],
        undecodable: Option<String>,
    ) {
        let setup = self.setup.clone();
        let src = setup.parts[part as usize].source;
        let mut csv_line = std::mem::take(&mut self.csv_line);
        let mut csv_err = undecodable;
        let line: &[u8] = match &setup.csv[src] {
            Some((shape, _)) if !raw.is_empty() && csv_err.is_none() => {
                match shape.to_json(raw, &mut csv_line) {
                    Ok(()) => &csv_line,
                    Err(why) => {
                        csv_err = Some(format!("not a CSV record of this source: {why}"));
                        raw
                    }
                }
            }
            _ => raw,
        };
        let res = if let Some(why) = csv_err {
            Err(why)
        } else if line.is_empty() {
            Err("an empty record: a tombstone (no value) or an empty value; a table's changelog \
                 reads its tombstones as deletions with changelog = \"upsert\" and a JSON-object key"
                .to_string())
        } else if line.len() > setup.max_line_bytes {
            Err(format!(
                "record is {} bytes; max_line_bytes is {}",
                line.len(),
                setup.max_line_bytes
            ))
        } else {
            match (&mut self.parsers[src], setup.kafka_timestamp[src]) {
                (SourceParser::Json(p), false) => p.parse(line).map_err(|m| m.0),
                (SourceParser::Json(p), true) => match timestamp {
                    Some(ts) if ts >= 0 => p.parse_at(line, ts).map(|_| ts).map_err(|m| m.0),
                    _ => Err("the record has no Kafka timestamp".to_string()),
                },
                _ => Err("not a Kafka source".to_string()),
            }
        };
        let at = DeadAt {
            source: &setup.sources[src],
            partition: &setup.parts[part as usize].name,
            offset: offset as u64,
            line: raw,
        };
        let Some(cur) = self.cur.as_mut() else {
            self.csv_line = csv_line;
            return;
        };
        match res {
            Ok(ts) => {
                let seen = cur.seen_max;
                cur.seen_max = seen.max(ts);
                cur.last_seen = seen;
                let seq = cur.seq;
                if !self.routes[src].is_empty() {
                    let kept = self.parsers[src].kept();
                    let a = steps::apply(
                        &mut self.routes[src],
                        line,
                        kept,
                        ts,
                        seq,
                        &mut self.record_out,
                    );
                    at.account(&a, &mut self.dead, &mut self.emitter, &mut self.stats);
                }
                self.stats.events_in += 1;
                self.stats.bytes_read += line.len() as u64;
                self.route_parsed(src, seen, part, offset as u64, line.len() as u32);
            }
            Err(reason) => at.write(&reason, &mut self.dead, &mut self.emitter, &mut self.stats),
        }
        self.csv_line = csv_line;
    }

    /// The chunk-end flags of a Kafka chunk whose largest event time is `max_ts`; `offset` gets
    /// the partition's next offset. Reports the chunk to the alignment.
    pub(super) fn end_kafka_chunk(
        &mut self,
        part: u16,
        kc: &KafkaChunk,
        max_ts: i64,
        offset: &mut u64,
    ) -> u32 {
        let Some(reader) = self.kafka.as_mut() else {
            return 0;
        };
        let next = reader.next_offset(part).unwrap_or(0);
        *offset = next as u64;
        // A round sat out says nothing about how quiet the partition is.
        if !kc.sat_out {
            reader.chunk_ended(part, kc.records);
        }
        let mut flags = CHUNK_OFFSET;
        if kc.end.is_some_and(|end| next >= end) {
            flags |= CHUNK_LAST;
        }
        let src = self.setup.parts[part as usize].source;
        let idle = Duration::from_millis(self.setup.idle_ms[src].max(0) as u64);
        // A partition sitting out is quiet by our choice, not idle: its records wait in Kafka.
        if kc.end.is_none() && kc.records == 0 && !kc.sat_out && reader.quiet_for(part) >= idle {
            flags |= CHUNK_IDLE;
        }
        if let Some(a) = &self.setup.kafka_align {
            let holds = if flags & CHUNK_LAST != 0 {
                Holds::Done
            } else if flags & CHUNK_IDLE != 0 {
                Holds::Idle
            } else {
                Holds::Holding
            };
            a.report(part, kc.round, max_ts, holds);
        }
        if self.kafka_committed.elapsed() >= COMMIT_EVERY {
            reader.commit_positions(false);
            self.kafka_committed = Instant::now();
        }
        flags
    }

    /// Pauses this shard's partitions once it has had no credit for a while; resumes them when
    /// credit returns. Logged once per change.
    pub(super) fn kafka_credit(&mut self, stalled: bool) {
        let Some(reader) = self.kafka.as_mut() else {
            return;
        };
        // The consumers' own events (statistics with the log ends for the lag metric, errors) are
        // served here too, so a shard that waits for credit mid-chunk still reports its lag.
        if self.kafka_serviced.elapsed() >= SERVICE_EVERY {
            reader.service();
            self.kafka_serviced = Instant::now();
        }
        if stalled {
            let since = *self.stalled_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= PAUSE_AFTER && reader.set_paused(true) {
                tracing::info!(
                    shard = self.id,
                    "no credit: pausing this shard's Kafka partitions"
                );
            }
        } else {
            self.stalled_since = None;
            if reader.set_paused(false) {
                tracing::info!(
                    shard = self.id,
                    "credit back: resuming this shard's Kafka partitions"
                );
            }
        }
    }
}
