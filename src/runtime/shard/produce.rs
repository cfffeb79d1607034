//! The producing half of a shard: reads and parses its chunks, stamps each event with its source
//! position and the chunk's running maximum event time, and routes it to the shard owning its key.
//! A full ring is no credit: production stops (the source does not advance) until credit returns.

use super::emit::{dead_letter_line, ShardEmitter};
use super::kafka;
use super::steps;
use super::{ProdChunk, Shard, SourceParser, STEP};
use crate::connectors::sink::SinkWriter;
use crate::metrics::ShardStats;
use crate::record::event::{payload_slots, slot_of, Event, Tag, CHUNK_LAST, CHUNK_PAD, SLOT_BYTES};
use crate::runtime::aligned::Next;
use crate::runtime::kafka_align::Holds;
use crate::runtime::schedule::Schedule;
use crate::sources::PartKind;
use std::fs::File;

/// Chunks' worth of record lines a shard holds for sinks before it stops reading.
const RECORD_CHUNKS_AHEAD: usize = 4;

impl Shard {
    /// Returns (records produced, stalled for credit).
    pub(super) fn produce_step(&mut self) -> (usize, bool) {
        if !self.drain_pending() {
            return (0, true);
        }
        if self.cur.is_none()
            && self.record_out.bytes() >= self.setup.chunk_bytes * RECORD_CHUNKS_AHEAD
        {
            // Record lines wait for their chunk's turn (`steps::RecordOut`); past this many
            // chunks of them, a slow sink stops the source here, not in memory.
            return (0, true);
        }
        if self.cur.is_none() && !self.start_chunk() {
            return (0, false);
        }
        let mut done = 0;
        let budget = self.rate_budget();
        if budget == 0 {
            // Rate-limited: the source waits, like a source without credit.
            return (0, true);
        }
        while done < STEP.min(budget) {
            let Some(cur) = self.cur.as_ref() else { break };
            if self.hot.as_ref().is_some_and(|h| h.due(cur.seen_max)) && !self.hand_off() {
                return (done, false); // waiting for this shard's receiver to reach the chunk
            }
            let Some(cur) = self.cur.as_ref() else { break };
            let n = if cur.pad {
                0
            } else if cur.kafka.is_some() {
                match self.next_kafka() {
                    kafka::Step::Record => 1,
                    kafka::Step::Done => 0,
                    kafka::Step::Wait => return (done, false),
                }
            } else if cur.is_file {
                usize::from(self.next_line())
            } else if let Some(events) = cur.memory.clone() {
                self.memory_run(&events, STEP - done)
            } else {
                usize::from(self.next_indexed())
            };
            if n == 0 {
                if let Some(h) = self.hot.as_mut() {
                    if h.holding() {
                        if !self.hand_off() {
                            return (done, false);
                        }
                    } else {
                        h.refresh();
                    }
                }
                self.end_chunk();
                let ok = self.drain_pending();
                return (done + 1, !ok);
            }
            done += n;
            if !self.drain_pending() {
                return (done, true);
            }
        }
        (done, false)
    }

    /// How many records the current chunk's source may still read now under its `rate_limit`
    /// (this shard's share: the rate over the shard count); `usize::MAX` without one.
    fn rate_budget(&mut self) -> usize {
        let Some(cur) = self.cur.as_ref() else {
            return usize::MAX;
        };
        let src = self.setup.parts[cur.part as usize].source;
        let Some(rate) = self.setup.backfill[src].rate_per_s else {
            return usize::MAX;
        };
        let share = rate / self.rate_readers[src] as f64;
        let allowed = self.rate_start.elapsed().as_secs_f64() * share;
        // Credit unused for over a second is forfeited: a pause (backpressure, a sink retrying, a
        // start skipping records) must not be made up by a burst when the sink is weakest.
        if allowed - self.rate_read[src] as f64 > share {
            self.rate_read[src] = (allowed - share) as u64;
        }
        (allowed as u64).saturating_sub(self.rate_read[src]) as usize
    }

    fn start_chunk(&mut self) -> bool {
        if self.proposed && self.stop_seq.is_none() {
            return false; // waiting for the other shards to agree where to stop
        }
        let seq = self.next_prod;
        if seq >= self.end_seq() {
            return false;
        }
        let (mut part, mut k, mut pad) = match self.setup.schedule.chunk(seq) {
            Next::Chunk(p, k) => (p, k, false),
            Next::Pad => (0, 0, true),
            Next::Wait | Next::End => return false,
        };
        let mut last = !pad && Schedule::is_last(&self.setup.chunk_counts, part, k);
        let (mut sit_out, mut round) = (false, None);
        if !pad {
            match self.aligned_slot(part, k, last) {
                kafka::Slot::Wait => return false,
                kafka::Slot::Pad => (part, k, pad, last) = (0, 0, true, false),
                kafka::Slot::Chunk(s) => {
                    (k, last, sit_out, round) = (s.k, s.last, s.sit_out, s.round);
                }
            }
        }
        self.maybe_issue_barrier();
        if self.failure.is_some() {
            return false;
        }
        self.next_prod += self.n as u64;
        let ingest_ns = self.now_ns();
        let setup = self.setup.clone();
        let p = &setup.parts[part as usize];
        let mut chunk = ProdChunk {
            seq,
            part,
            last,
            ingest_ns,
            seen_max: i64::MIN,
            last_seen: i64::MIN,
            pos: 0,
            limit: 0,
            base: 0,
            next: 0,
            end: 0,
            is_file: false,
            kafka: None,
            pad,
            memory: None,
            round,
        };
        if pad {
            self.cur = Some(chunk);
            return true;
        }
        match &p.kind {
            PartKind::File { path, size } => {
                chunk.is_file = true;
                // An unreadable input is a failed run, not a dead letter: skipping a chunk would lose
                // every line in it without a trace.
                // A resumed job that reads Kafka numbers chunks afresh: this file's chunk is
                // `first_chunk` further on.
                let k = k + p.first_chunk;
                let offset = k * setup.chunk_bytes as u64;
                if self.files[part as usize].is_none() {
                    match File::open(path) {
                        Ok(f) => self.files[part as usize] = Some(f),
                        Err(e) => {
                            self.failure = Some(format!(
                                "source partition={} offset={offset}: cannot open: {e}",
                                p.name
                            ));
                            return false;
                        }
                    }
                }
                let Some(f) = self.files[part as usize].as_ref() else {
                    return false;
                };
                match self
                    .reader
                    .read_chunk(f, *size, k, setup.chunk_bytes, setup.max_line_bytes)
                {
                    Ok(c) => {
                        chunk.pos = c.first;
                        chunk.limit = c.limit.min(self.reader.buf().len());
                        chunk.base = c.base;
                        self.stats.bytes_read += self.reader.buf().len() as u64;
                        // The clock-skew guard's wall clock, read once per chunk.
                        if let SourceParser::Json(jp) | SourceParser::GenJson(jp) =
                            &mut self.parsers[p.source]
                        {
                            jp.set_clock(
                                std::time::SystemTime::now()
                                    .duration_since(std::time::UNIX_EPOCH)
                                    .map_or(i64::MAX, |d| d.as_millis() as i64),
                            );
                        }
                    }
                    Err(e) => {
                        self.failure = Some(format!(
                            "source partition={} offset={offset}: read failed: {e}",
                            p.name
                        ));
                        return false;
                    }
                }
            }
            PartKind::Generator {
                per_chunk, count, ..
            }
            | PartKind::Nexmark {
                per_chunk, count, ..
            } => {
                let k = k + p.first_chunk;
                chunk.next = k * per_chunk;
                chunk.end = ((k + 1) * per_chunk).min(count.unwrap_or(u64::MAX));
                // A Nexmark record's time is a field, guarded as a file's: the guard's wall clock.
                if let SourceParser::Json(jp) = &mut self.parsers[p.source] {
                    jp.set_clock(super::nexmark::wall_clock_ms());
                }
            }
            PartKind::Memory { events, per_chunk } => {
                chunk.next = k * per_chunk;
                chunk.end = ((k + 1) * per_chunk).min(events.len() as u64);
                chunk.memory = Some(events.clone());
            }
            PartKind::Kafka(kp) => match self.start_kafka_chunk(part, kp, k, sit_out) {
                Ok(c) => chunk.kafka = Some(c),
                Err(e) => {
                    self.failure = Some(e);
                    return false;
                }
            },
        }
        self.stats.chunks_read += 1;
        self.cur = Some(chunk);
        true
    }

    /// Parses the next line of the current file chunk; false at the end of the chunk.
    fn next_line(&mut self) -> bool {
        let cur = self.cur.as_mut().expect("a current chunk");
        let buf = self.reader.buf();
        loop {
            if cur.pos >= cur.limit || cur.pos >= buf.len() {
                return false;
            }
            let start = cur.pos;
            let nl = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
            cur.pos = nl + 1;
            let line = &buf[start..nl];
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let offset = cur.base + start as u64;
            let part = cur.part;
            let setup = &self.setup;
            let src = setup.parts[part as usize].source;
            let backfill = &setup.backfill[src];
            if offset < backfill.start_offset {
                self.stats.records_skipped += 1;
                continue;
            }
            let raw = line;
            let mut csv_err = None;
            let line: &[u8] = match &setup.csv[src] {
                None => raw,
                Some((_, true)) if offset == 0 => {
                    // The file's header line.
                    self.stats.records_skipped += 1;
                    continue;
                }
                Some((shape, _)) => match shape.to_json(raw, &mut self.csv_line) {
                    Ok(()) => &self.csv_line,
                    Err(why) => {
                        csv_err = Some(format!("not a CSV record of this source: {why}"));
                        raw
                    }
                },
            };
            let res = if let Some(why) = csv_err {
                Err(why)
            } else if line.len() > setup.max_line_bytes {
                Err(format!(
                    "line is {} bytes; max_line_bytes is {}",
                    line.len(),
                    setup.max_line_bytes
                ))
            } else {
                match &mut self.parsers[src] {
                    SourceParser::Json(p) => p.parse(line).map_err(|m| m.0),
                    _ => Err("not a file source".to_string()),
                }
            };
            let at = DeadAt {
                source: &setup.sources[src],
                partition: &setup.parts[part as usize].name,
                offset,
                line: raw,
            };
            if !matches!(res, Ok(ts) if backfill.start_ms.is_some_and(|s| ts < s)) {
                // Only what is read counts against the rate limit, not what a start skips.
                self.rate_read[src] += 1;
            }
            match res {
                Ok(ts) if backfill.start_ms.is_some_and(|s| ts < s) => {
                    self.stats.records_skipped += 1;
                    continue;
                }
                Ok(ts) => {
                    let seen = cur.seen_max;
                    cur.seen_max = seen.max(ts);
                    cur.last_seen = seen;
                    let seq = cur.seq;
                    let len = line.len() as u32;
                    self.stats.events_in += 1;
                    if !self.routes[src].is_empty() {
                        let a = steps::apply(
                            &mut self.routes[src],
                            line,
                            self.parsers[src].kept(),
                            ts,
                            seq,
                            &mut self.record_out,
                        );
                        at.account(&a, &mut self.dead, &mut self.emitter, &mut self.stats);
                    }
                    self.route_parsed(src, seen, part, offset, len);
                    return true;
                }
                Err(reason) => {
                    at.write(&reason, &mut self.dead, &mut self.emitter, &mut self.stats);
                    return true;
                }
            }
        }
    }

    /// Routes up to `budget` events of the current in-memory chunk straight from the shared array
    /// (no parse, no scratch copy); returns how many, 0 at the end of the chunk. Stops early when a
    /// ring has no credit (the event that found none waits in `pending`).
    fn memory_run(&mut self, events: &[Event], budget: usize) -> usize {
        /// Events ahead of the one routed whose lines are pulled in from memory.
        const AHEAD: usize = 32;
        if self.hot.is_some() {
            return self.memory_run_hot(events, budget);
        }
        let cur = self.cur.as_mut().expect("a current chunk");
        let (start, part) = (cur.next as usize, cur.part);
        let end = (cur.end as usize).min(start + budget);
        let mut seen = cur.seen_max;
        let mut last = cur.last_seen;
        let mut i = start;
        while i < end {
            let ahead = events.as_ptr().wrapping_add(i + AHEAD);
            crate::state::prefetch::prefetch(ahead);
            crate::state::prefetch::prefetch(ahead.cast::<u8>().wrapping_add(64));
            let ev = memory_event(events, i, seen, part);
            last = seen;
            seen = seen.max(ev.ts);
            i += 1;
            let d = self.shard_of(ev.hash);
            if !self.pending.is_empty() || !self.deliver(d, &ev) {
                self.pending.push_back((d, ev));
                break;
            }
        }
        self.memory_run_end(start, i, seen, last)
    }

    /// Records how far a memory run got: the chunk's next index and running maximum, and the events
    /// read (`start..end`); returns their count.
    #[inline(always)]
    fn memory_run_end(&mut self, start: usize, end: usize, seen: i64, last: i64) -> usize {
        let cur = self.cur.as_mut().expect("a current chunk");
        cur.next = end as u64;
        cur.seen_max = seen;
        cur.last_seen = last;
        self.stats.events_in += (end - start) as u64;
        end - start
    }

    /// `memory_run` with phase one of `hot_keys`: every event goes through `route` (it may be
    /// held), and the run stops before an event a hand-off is due ahead of. Kept apart so the
    /// plain loop stays as tight as it was.
    fn memory_run_hot(&mut self, events: &[Event], budget: usize) -> usize {
        let cur = self.cur.as_mut().expect("a current chunk");
        let (start, part) = (cur.next as usize, cur.part);
        let end = (cur.end as usize).min(start + budget);
        let mut seen = cur.seen_max;
        let mut last = cur.last_seen;
        let mut i = start;
        while i < end {
            if self.hot.as_ref().is_some_and(|h| h.due(seen)) {
                break;
            }
            let ev = memory_event(events, i, seen, part);
            last = seen;
            seen = seen.max(ev.ts);
            i += 1;
            self.route(&ev);
            if !self.pending.is_empty() {
                break;
            }
        }
        self.memory_run_end(start, i, seen, last)
    }

    /// Makes the next generated event; false at the end of the chunk.
    fn next_indexed(&mut self) -> bool {
        let cur = self.cur.as_mut().expect("a current chunk");
        if cur.next >= cur.end {
            return false;
        }
        let (part, seq) = (cur.part, cur.seq);
        let setup = self.setup.clone();
        let model = match &setup.parts[part as usize].kind {
            PartKind::Generator { model, .. } => model,
            PartKind::Nexmark { source, .. } => return self.next_nexmark(source),
            _ => return false,
        };
        let i = cur.next;
        cur.next += 1;
        let src = setup.parts[part as usize].source;
        self.rate_read[src] += 1;
        let click = model.click(i);
        let needs_line =
            !self.routes[src].is_empty() || matches!(self.parsers[src], SourceParser::GenJson(_));
        if needs_line {
            // Filters, selects and rows read records: the click as the line loadgen writes.
            self.line.clear();
            crate::sources::generator::model::write_ndjson(&click, &mut self.line);
            while self.line.last() == Some(&b'\n') {
                self.line.pop();
            }
        }
        let mut failed = None;
        match &mut self.parsers[src] {
            SourceParser::Gen(g) => g.build(&click, &mut self.evs),
            SourceParser::GenJson(p) => {
                if let Err(m) = p.parse_at(&self.line, click.ts) {
                    failed = Some(m.0);
                }
            }
            _ => {}
        }
        if !self.routes[src].is_empty() {
            let line = std::mem::take(&mut self.line);
            let a = steps::apply(
                &mut self.routes[src],
                &line,
                self.parsers[src].kept(),
                click.ts,
                seq,
                &mut self.record_out,
            );
            let at = DeadAt {
                source: &setup.sources[src],
                partition: &setup.parts[part as usize].name,
                offset: i,
                line: &line,
            };
            at.account(&a, &mut self.dead, &mut self.emitter, &mut self.stats);
            if let Some(why) = &failed {
                at.write(why, &mut self.dead, &mut self.emitter, &mut self.stats);
            }
            self.line = line;
        }
        let Some(cur) = self.cur.as_mut() else {
            return true;
        };
        let seen = cur.seen_max;
        cur.seen_max = seen.max(click.ts);
        cur.last_seen = seen;
        self.stats.events_in += 1;
        if failed.is_none() {
            self.route_parsed(src, seen, part, i, 0);
        }
        true
    }

    /// Routes the events the record just parsed became: those of the source's own bindings, then
    /// those of each chain that kept and bound it. Each is stamped with its source position and
    /// the chunk's running maximum before it. The parsers are taken out of `self` meanwhile, so
    /// events are routed by reference (no extra copy).
    #[inline(always)]
    pub(super) fn route_parsed(&mut self, src: usize, seen: i64, part: u16, pos: u64, len: u32) {
        let parsers = std::mem::take(&mut self.parsers);
        match &parsers[src] {
            SourceParser::Json(p) | SourceParser::GenJson(p) => {
                for (ev, payload) in p.events.iter().zip(&p.payloads) {
                    self.stamp_and_route(ev, &payload.bytes, seen, part, pos, len);
                }
            }
            SourceParser::Gen(g) => {
                let evs = std::mem::take(&mut self.evs);
                for ev in &evs[..g.outputs()] {
                    self.stamp_and_route(ev, &[], seen, part, pos, len);
                }
                self.evs = evs;
            }
            SourceParser::Memory => {}
        }
        self.parsers = parsers;
        if self.routes[src].is_empty() {
            return;
        }
        let mut routes = std::mem::take(&mut self.routes);
        for r in &routes[src] {
            let Some(p) = r.parser.as_ref().filter(|_| r.bound) else {
                continue;
            };
            for (ev, payload) in p.events.iter().zip(&p.payloads) {
                self.stamp_and_route(ev, &payload.bytes, seen, part, pos, len);
            }
        }
        routes[src].iter_mut().for_each(|r| r.bound = false);
        self.routes = routes;
    }

    #[inline(always)]
    fn stamp_and_route(
        &mut self,
        ev: &Event,
        payload: &[u8],
        seen: i64,
        part: u16,
        pos: u64,
        len: u32,
    ) {
        let mut ev = *ev;
        ev.tag = Tag::DATA;
        ev.seen_max = seen;
        ev.part = part;
        ev.pos = pos;
        ev.len = len;
        if payload.is_empty() {
            self.route(&ev);
        } else {
            self.route_with_payload(&ev, payload);
        }
    }

    /// Sends an event with payload slots to its key's owner (whole, or queued whole).
    pub(super) fn route_with_payload(&mut self, ev: &Event, payload: &[u8]) {
        let d = self.shard_of(ev.hash);
        if self.pending.is_empty() {
            if let Some(p) = self.out[d].as_mut() {
                if super::exchange::push_bytes(p, ev, payload) {
                    return;
                }
            }
        }
        self.pending.push_back((d, *ev));
        for chunk in payload.chunks(SLOT_BYTES) {
            self.pending.push_back((d, slot_of(chunk)));
        }
    }

    fn end_chunk(&mut self) {
        let Some(cur) = self.cur.take() else { return };
        let src = self.setup.parts[cur.part as usize].source;
        self.source_read[src] = self.source_read[src].max(cur.seen_max);
        self.setup.schedule.finished(cur.seq, cur.seen_max);
        if let (Some(a), Some(round)) = (&self.setup.kafka_align, cur.round) {
            let holds = if cur.last {
                Holds::Done
            } else {
                Holds::Holding
            };
            a.report(cur.part, round, cur.seen_max, holds);
        }
        let mut end = Event::EMPTY;
        end.tag = Tag::CHUNK_END;
        end.ts = cur.seen_max;
        end.pos = cur.seq;
        end.len = if cur.last { CHUNK_LAST } else { 0 };
        end.seen_max = cur.ingest_ns;
        // The last position inside the chunk (the running maximum before its last record).
        end.sub = cur.last_seen as u64;
        end.part = cur.part;
        if cur.pad {
            end.len = CHUNK_PAD;
        } else if let Some(kc) = &cur.kafka {
            end.len |= self.end_kafka_chunk(cur.part, kc, cur.seen_max, &mut end.hash);
        }
        for d in 0..self.n {
            self.pending.push_back((d, end));
        }
    }

    #[inline]
    fn shard_of(&self, hash: u64) -> usize {
        self.emitter.owners.of(hash)
    }

    #[inline(always)]
    fn route(&mut self, ev: &Event) {
        if let Some(h) = self.hot.as_mut() {
            h.stamp = ev.seen_max;
            let ooo = self.setup.tracker_init[ev.part as usize].0;
            if h.take(ev, ooo) {
                return;
            }
        }
        self.route_on(ev);
    }

    /// Sends `ev` to its key's owner (or queues it while there is no credit).
    #[inline(always)]
    pub(super) fn route_on(&mut self, ev: &Event) {
        let d = self.shard_of(ev.hash);
        if self.pending.is_empty() && self.deliver(d, ev) {
            return;
        }
        self.pending.push_back((d, *ev));
    }

    /// Sends one message; false when there is no credit.
    #[inline(always)]
    fn deliver(&mut self, d: usize, ev: &Event) -> bool {
        // Events for this shard go through its ring to itself too, even when their chunk's turn has
        // come: the receiver then sees them in runs, like any other.
        match self.out[d].as_mut() {
            Some(p) => p.push(*ev).is_ok(),
            None => false,
        }
    }

    /// Sends queued messages in order, each whole (a header and its payload slots); false if some
    /// are still waiting for credit.
    fn drain_pending(&mut self) -> bool {
        while let Some(&(d, head)) = self.pending.front() {
            let n = payload_slots(head.extra);
            if n == 0 {
                if !self.deliver(d, &head) {
                    return false;
                }
                self.pending.pop_front();
                continue;
            }
            let Some(p) = self.out[d].as_mut() else {
                return false;
            };
            if p.free() < 1 + n && p.free_fresh() < 1 + n {
                return false;
            }
            for _ in 0..=n {
                if let Some((_, s)) = self.pending.pop_front() {
                    let _ = p.push(s);
                }
            }
        }
        true
    }
}

/// Event `i` of an in-memory partition as routed: a data event of partition `part` at position
/// `i`, stamped with the chunk's running maximum before it.
#[inline(always)]
fn memory_event(events: &[Event], i: usize, seen: i64, part: u16) -> Event {
    let mut ev = events[i];
    ev.tag = Tag::DATA;
    ev.seen_max = seen;
    ev.part = part;
    ev.pos = i as u64;
    ev.len = 0;
    ev
}

/// Where a dead letter came from.
pub(super) struct DeadAt<'a> {
    pub source: &'a str,
    pub partition: &'a str,
    pub offset: u64,
    pub line: &'a [u8],
}

impl DeadAt<'_> {
    /// Counts what a record's filters and selects did and writes a dead letter for each chain it
    /// failed on.
    pub(super) fn account(
        &self,
        a: &steps::Applied,
        dead: &mut Option<SinkWriter>,
        emitter: &mut ShardEmitter,
        stats: &mut ShardStats,
    ) {
        stats.records_filtered += a.dropped;
        for why in &a.failed {
            self.write(why, dead, emitter, stats);
        }
    }

    /// Counts one dead letter and writes it, with `reason`, to the dead-letter output if any.
    pub(super) fn write(
        &self,
        reason: &str,
        dead: &mut Option<SinkWriter>,
        emitter: &mut ShardEmitter,
        stats: &mut ShardStats,
    ) {
        stats.dead_letters += 1;
        stats.dead_by_reason[crate::metrics::live::dead_reason_class(reason)] += 1;
        if let Some(d) = dead.as_mut() {
            let l = dead_letter_line(reason, self.source, self.partition, self.offset, self.line);
            if let Err(e) = d.line(&l) {
                emitter.error.get_or_insert(e);
            }
        }
    }
}
