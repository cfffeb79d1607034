//! One shard: a pinned worker thread that reads its share of source chunks, routes each event to the
//! shard owning its key, and runs the operators for the key groups it owns.
//!
//! Two duties alternate in one loop, never blocking:
//! - *produce*: read and parse the chunks `seq ≡ id (mod shards)`, sending each event to its owner
//!   (the own shard directly, others through SPSC rings) and ending each chunk with a `ChunkEnd` marker
//!   to every shard. A full ring is no credit: the shard stops reading its source until credit returns.
//! - *receive*: take events in global chunk order (chunk `seq` comes from shard `seq % shards`), so the
//!   watermark each event sees, and thus every window result, is independent of thread timing.
//!
//! Deadlock freedom: the lowest chunk not yet fully sent is never waiting on a receiver that waits for
//! a later chunk, because receivers only advance past a chunk after its end marker; and every shard
//! keeps receiving while its own production is stalled.

use super::ring::{Consumer, Producer};
use super::setup::{Routes, ShardSetup, StopCoord};
use crate::event::{Event, Tag, CHUNK_IDLE, CHUNK_LAST};
use crate::metrics::{latency_histogram, ShardStats};
use crate::operators::{Emitter, Operator, Prefetch};
use crate::sinks::{SinkError, SinkWriter};
use crate::sources::file::ChunkReader;
use crate::sources::generator::{raw_record, GenParser};
use crate::sources::record::RecordParser;
use crate::sources::{PartKind, Partition};
use crate::time::WatermarkTracker;
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::fs::File;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// Records (or received events) handled per step before the shard turns to its other duty.
const STEP: usize = 1024;
/// How far ahead of the event being processed its state's table slot, then its entry, is prefetched.
const PREFETCH_SLOT: usize = 32;
const PREFETCH_ENTRY: usize = 16;
/// How far ahead ring slots (written by another core) are pulled in before their events are read.
const PREFETCH_RING: usize = 64;

pub enum SourceParser {
    Json(RecordParser),
    Gen(GenParser),
    Memory,
}

/// The chunk this shard is producing.
struct ProdChunk {
    seq: u64,
    part: u16,
    last: bool,
    ingest_ns: i64,
    /// Max event time so far in this chunk (the `seen_max` of the next event).
    seen_max: i64,
    /// File chunks: next line index and limit inside the reader's buffer, file offset of buf[0].
    pos: usize,
    limit: usize,
    base: u64,
    /// Generator and memory chunks: next index and end.
    next: u64,
    end: u64,
    is_file: bool,
}

/// Writes operator output to this shard's sink buffers.
struct ShardEmitter {
    sinks: Vec<SinkWriter>,
    routes: Arc<Routes>,
    parts: Arc<Vec<Partition>>,
    recall_files: Vec<Option<File>>,
    op: usize,
    scratch: Vec<u8>,
    emitted: u64,
    error: Option<SinkError>,
}

impl ShardEmitter {
    fn write(&mut self, sink: usize, line_from_scratch: bool, line: &[u8]) {
        let res = if line_from_scratch {
            self.sinks[sink].line(&self.scratch)
        } else {
            self.sinks[sink].line(line)
        };
        if let Err(e) = res {
            self.error.get_or_insert(e);
        }
    }
}

impl Emitter for ShardEmitter {
    fn result(&mut self, line: &[u8]) {
        self.emitted += 1;
        for i in 0..self.routes.results[self.op].len() {
            let s = self.routes.results[self.op][i];
            self.write(s, false, line);
        }
    }

    fn late(&mut self, ev: &Event) {
        if self.routes.late[self.op].is_empty() {
            return;
        }
        self.scratch.clear();
        match &self.parts[ev.part as usize].kind {
            PartKind::File { path, .. } => {
                let slot = &mut self.recall_files[ev.part as usize];
                if slot.is_none() {
                    *slot = File::open(path).ok();
                }
                if let Some(f) = slot.as_ref() {
                    if crate::sources::file::recall(f, ev.pos, ev.len, &mut self.scratch).is_err() {
                        self.scratch.clear();
                    }
                }
                self.scratch.push(b'\n');
            }
            PartKind::Generator { model, .. } => raw_record(model, ev.pos, &mut self.scratch),
            PartKind::Memory { .. } => {
                self.scratch
                    .extend_from_slice(format!("{{\"ts\":{}}}\n", ev.ts).as_bytes());
            }
        }
        for i in 0..self.routes.late[self.op].len() {
            let s = self.routes.late[self.op][i];
            self.write(s, true, &[]);
        }
    }
}

pub struct Shard {
    id: usize,
    n: usize,
    setup: Arc<ShardSetup>,
    parsers: Vec<SourceParser>,
    out: Vec<Option<Producer<Event>>>,
    inbound: Vec<Option<Consumer<Event>>>,
    local: VecDeque<Event>,
    local_cap: usize,
    // producing
    cur: Option<ProdChunk>,
    next_prod: u64,
    pending: VecDeque<(usize, Event)>,
    pending_seq: u64,
    reader: ChunkReader,
    files: Vec<Option<File>>,
    dead: Option<SinkWriter>,
    evs: Vec<Event>,
    // receiving
    next_seq: u64,
    tracker: WatermarkTracker,
    wm: i64,
    ops: Vec<Box<dyn Operator>>,
    emitter: ShardEmitter,
    emit_marks: Vec<(i64, u64)>,
    // ending
    proposed: bool,
    stop_seq: Option<u64>,
    /// Why this shard must stop (unreadable input, failed write).
    failure: Option<String>,
    pub stats: ShardStats,
    pub hist: Histogram<u64>,
}

pub struct ShardParts {
    pub parsers: Vec<SourceParser>,
    pub out: Vec<Option<Producer<Event>>>,
    pub inbound: Vec<Option<Consumer<Event>>>,
    pub ops: Vec<Box<dyn Operator>>,
    pub sinks: Vec<SinkWriter>,
    pub dead: Option<SinkWriter>,
}

impl Shard {
    pub fn new(id: usize, setup: Arc<ShardSetup>, p: ShardParts) -> (Shard, Option<String>) {
        let n = setup.shards;
        let (reader, uring_refused) = ChunkReader::new(setup.uring);
        let nparts = setup.parts.len();
        let tracker = WatermarkTracker::new(&setup.tracker_init);
        let max_outputs = p
            .parsers
            .iter()
            .map(|s| match s {
                SourceParser::Json(r) => r.outputs(),
                SourceParser::Gen(g) => g.outputs(),
                SourceParser::Memory => 1,
            })
            .max()
            .unwrap_or(1)
            .max(1);
        let emitter = ShardEmitter {
            sinks: p.sinks,
            routes: setup.routes.clone(),
            parts: setup.parts.clone(),
            recall_files: (0..nparts).map(|_| None).collect(),
            op: 0,
            scratch: Vec::new(),
            emitted: 0,
            error: None,
        };
        let shard = Shard {
            id,
            n,
            local: VecDeque::with_capacity(setup.ring_capacity),
            local_cap: setup.ring_capacity,
            parsers: p.parsers,
            out: p.out,
            inbound: p.inbound,
            cur: None,
            next_prod: id as u64,
            pending: VecDeque::with_capacity(max_outputs + n),
            pending_seq: 0,
            reader,
            files: (0..nparts).map(|_| None).collect(),
            dead: p.dead,
            evs: vec![Event::EMPTY; max_outputs],
            next_seq: 0,
            tracker,
            wm: crate::time::WM_MIN,
            ops: p.ops,
            emitter,
            emit_marks: Vec::new(),
            proposed: false,
            stop_seq: None,
            failure: None,
            stats: ShardStats::default(),
            hist: latency_histogram(),
            setup,
        };
        (shard, uring_refused)
    }

    fn now_ns(&self) -> i64 {
        self.setup.epoch.elapsed().as_nanos() as i64
    }

    /// The chunk sequence at which this run ends (exclusive).
    fn end_seq(&self) -> u64 {
        let total = self.setup.schedule.total().unwrap_or(u64::MAX);
        total.min(self.stop_seq.unwrap_or(u64::MAX))
    }

    /// Runs until every chunk before the end has been produced and received.
    pub fn run(&mut self) -> Result<(), String> {
        let mut idle_spins = 0u32;
        let mut last = Instant::now();
        loop {
            self.check_stop();
            let received = self.receive_step();
            let (produced, stalled) = self.produce_step();
            for p in self.out.iter_mut().flatten() {
                p.flush();
            }
            if let Some(e) = self.emitter.error.take() {
                self.failure = Some(e.to_string());
            }
            if let Some(why) = self.failure.take() {
                // Others would wait forever for this shard's chunks: tell them to give up too.
                self.setup.stop.failed.store(true, Ordering::Release);
                return Err(why);
            }
            if self.setup.stop.failed.load(Ordering::Relaxed) {
                return Err(super::SECONDARY_FAILURE.into());
            }
            let now = Instant::now();
            let dt = now - last;
            last = now;
            if received + produced > 0 {
                self.stats.busy += dt;
                idle_spins = 0;
            } else if stalled {
                self.stats.backpressured += dt;
            } else {
                self.stats.idle += dt;
            }
            let end = self.end_seq();
            if self.next_seq >= end
                && self.next_prod >= end
                && self.cur.is_none()
                && self.pending.is_empty()
            {
                break;
            }
            if received + produced == 0 {
                idle_spins += 1;
                if idle_spins < 64 {
                    std::hint::spin_loop();
                } else if idle_spins < 256 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            }
        }
        self.finish()
    }

    fn finish(&mut self) -> Result<(), String> {
        for op in &self.ops {
            let s = op.stats();
            self.stats.fired += s.fired;
            self.stats.refired += s.refired;
            self.stats.late_dropped += s.late_dropped;
            self.stats.open_windows += op.open_windows() as u64;
        }
        for s in &mut self.emitter.sinks {
            s.flush().map_err(|e| e.to_string())?;
        }
        if let Some(d) = self.dead.as_mut() {
            d.flush().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Joins the stop protocol once a signal asked for it: all shards agree on the first chunk nobody
    /// has started, finish everything before it, and end there.
    fn check_stop(&mut self) {
        if self.stop_seq.is_some() {
            return;
        }
        let coord: &StopCoord = &self.setup.stop;
        if !coord.requested.load(Ordering::Relaxed) {
            return;
        }
        if !self.proposed {
            coord.proposal.fetch_max(self.next_prod, Ordering::AcqRel);
            coord.arrived.fetch_add(1, Ordering::AcqRel);
            self.proposed = true;
        }
        if coord.arrived.load(Ordering::Acquire) == self.n {
            self.stop_seq = Some(coord.proposal.load(Ordering::Acquire));
        }
    }

    // ---------------------------------------------------------------- receiving

    fn receive_step(&mut self) -> usize {
        let end = self.end_seq();
        let mut done = 0;
        while done < STEP && self.next_seq < end {
            let ch = (self.next_seq % self.n as u64) as usize;
            let seq = self.next_seq;
            // A run of events from the channel of the current chunk, prefetching the state of the
            // events PREFETCH_SLOT and PREFETCH_ENTRY places ahead so their cache misses overlap.
            let mut got_any = false;
            while done < STEP && self.next_seq == seq {
                if ch == self.id {
                    // In place, as for rings: the local queue is taken out of `self` for the call.
                    let mut local = std::mem::take(&mut self.local);
                    for (k, stage) in [
                        (PREFETCH_SLOT, Prefetch::Slot),
                        (PREFETCH_ENTRY, Prefetch::Entry),
                    ] {
                        if let Some(e) = local.get(k) {
                            if e.tag == Tag::Data {
                                self.ops[e.op as usize].prefetch(e.ts, e.hash, stage);
                            }
                        }
                    }
                    let took = match local.front() {
                        Some(e) => {
                            self.receive(e);
                            true
                        }
                        None => false,
                    };
                    if took {
                        local.pop_front();
                    }
                    self.local = local;
                    if !took {
                        break;
                    }
                    got_any = true;
                    done += 1;
                    continue;
                } else {
                    // Events are processed in place in the ring (no copy out): the consumer is taken
                    // out of `self` for the call, since `receive` never touches the rings.
                    let mut c = self.inbound[ch]
                        .take()
                        .expect("a ring from every other shard");
                    let mut took = false;
                    if c.available() > 0 {
                        c.prefetch_at(PREFETCH_RING);
                        for (k, stage) in [
                            (PREFETCH_SLOT, Prefetch::Slot),
                            (PREFETCH_ENTRY, Prefetch::Entry),
                        ] {
                            if let Some(e) = c.peek_at(k) {
                                if e.tag == Tag::Data {
                                    self.ops[e.op as usize].prefetch(e.ts, e.hash, stage);
                                }
                            }
                        }
                        if let Some(e) = c.peek() {
                            self.receive(e);
                            took = true;
                        }
                        if took {
                            c.advance();
                        }
                    }
                    self.inbound[ch] = Some(c);
                    if !took {
                        break;
                    }
                    got_any = true;
                    done += 1;
                }
            }
            if !got_any {
                break;
            }
        }
        for c in self.inbound.iter_mut().flatten() {
            c.release();
        }
        done
    }

    #[inline]
    fn receive(&mut self, ev: &Event) {
        match ev.tag {
            Tag::Data => {
                let wm = self.tracker.before_event(ev.part, ev.seen_max);
                if wm > self.wm {
                    self.advance(wm);
                }
                self.emitter.op = ev.op as usize;
                self.ops[ev.op as usize].on_event(ev, self.wm, &mut self.emitter);
                self.stats.events_processed += 1;
            }
            Tag::ChunkEnd => {
                let wm = self.tracker.chunk_end(
                    ev.part,
                    ev.ts,
                    ev.len & CHUNK_LAST != 0,
                    ev.len & CHUNK_IDLE != 0,
                );
                if wm > self.wm {
                    self.advance(wm);
                }
                self.next_seq += 1;
                if !self.emit_marks.is_empty() {
                    let ingest = ev.seen_max;
                    for &(t, n) in &self.emit_marks {
                        let us = ((t - ingest).max(0) / 1000).max(1) as u64;
                        let _ = self.hist.record_n(us, n);
                    }
                    self.emit_marks.clear();
                }
            }
        }
    }

    fn advance(&mut self, wm: i64) {
        self.wm = wm;
        let before = self.emitter.emitted;
        for (i, op) in self.ops.iter_mut().enumerate() {
            if wm >= op.next_action() {
                self.emitter.op = i;
                op.on_watermark(wm, &mut self.emitter);
            }
        }
        let n = self.emitter.emitted - before;
        if n > 0 {
            let t = self.now_ns();
            self.emit_marks.push((t, n));
        }
    }

    // ---------------------------------------------------------------- producing

    /// Returns (records produced, stalled for credit).
    fn produce_step(&mut self) -> (usize, bool) {
        if !self.drain_pending() {
            return (0, true);
        }
        if self.cur.is_none() && !self.start_chunk() {
            return (0, false);
        }
        let mut done = 0;
        while done < STEP {
            let Some(cur) = self.cur.as_ref() else { break };
            let more = if cur.is_file {
                self.next_line()
            } else {
                self.next_indexed()
            };
            if !more {
                self.end_chunk();
                let ok = self.drain_pending();
                return (done + 1, !ok);
            }
            done += 1;
            if !self.drain_pending() {
                return (done, true);
            }
        }
        (done, false)
    }

    fn start_chunk(&mut self) -> bool {
        if self.proposed && self.stop_seq.is_none() {
            return false; // waiting for the other shards to agree where to stop
        }
        let seq = self.next_prod;
        if seq >= self.end_seq() {
            return false;
        }
        let Some((part, k)) = self.setup.schedule.chunk(seq) else {
            return false;
        };
        self.next_prod += self.n as u64;
        let last = self.setup.chunk_counts[part as usize].is_some_and(|c| k + 1 == c);
        let ingest_ns = self.now_ns();
        let setup = self.setup.clone();
        let p = &setup.parts[part as usize];
        let mut chunk = ProdChunk {
            seq,
            part,
            last,
            ingest_ns,
            seen_max: i64::MIN,
            pos: 0,
            limit: 0,
            base: 0,
            next: 0,
            end: 0,
            is_file: false,
        };
        match &p.kind {
            PartKind::File { path, size } => {
                chunk.is_file = true;
                // An unreadable input is a failed run, not a dead letter: skipping a chunk would lose
                // every line in it without a trace.
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
            } => {
                chunk.next = k * per_chunk;
                chunk.end = ((k + 1) * per_chunk).min(count.unwrap_or(u64::MAX));
            }
            PartKind::Memory { events, per_chunk } => {
                chunk.next = k * per_chunk;
                chunk.end = ((k + 1) * per_chunk).min(events.len() as u64);
            }
        }
        self.stats.chunks_read += 1;
        self.pending_seq = seq;
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
            let res = if line.len() > setup.max_line_bytes {
                Err(format!(
                    "line is {} bytes; max_line_bytes is {}",
                    line.len(),
                    setup.max_line_bytes
                ))
            } else {
                match &mut self.parsers[src] {
                    SourceParser::Json(p) => p.parse(line, &mut self.evs).map_err(|m| m.0),
                    _ => Err("not a file source".to_string()),
                }
            };
            match res {
                Ok(ts) => {
                    let n = match &self.parsers[src] {
                        SourceParser::Json(p) => p.outputs(),
                        _ => 0,
                    };
                    let seen = cur.seen_max;
                    cur.seen_max = seen.max(ts);
                    let len = line.len() as u32;
                    self.stats.events_in += 1;
                    self.route_scratch(n, seen, part, offset, len);
                    return true;
                }
                Err(reason) => {
                    self.stats.dead_letters += 1;
                    if let Some(d) = self.dead.as_mut() {
                        let name = &setup.sources[src];
                        let l = dead_letter_line(
                            &reason,
                            name,
                            &setup.parts[part as usize].name,
                            offset,
                            line,
                        );
                        if let Err(e) = d.line(&l) {
                            self.emitter.error.get_or_insert(e);
                        }
                    }
                    return true;
                }
            }
        }
    }

    /// Makes the next generated or in-memory event; false at the end of the chunk.
    fn next_indexed(&mut self) -> bool {
        let cur = self.cur.as_mut().expect("a current chunk");
        if cur.next >= cur.end {
            return false;
        }
        let i = cur.next;
        cur.next += 1;
        let part = cur.part;
        let setup = &self.setup;
        let src = setup.parts[part as usize].source;
        let n = match (&setup.parts[part as usize].kind, &mut self.parsers[src]) {
            (PartKind::Generator { model, .. }, SourceParser::Gen(g)) => {
                let click = model.click(i);
                g.build(&click, &mut self.evs);
                g.outputs()
            }
            (PartKind::Memory { events, .. }, _) => {
                let ahead = events.as_ptr().wrapping_add(i as usize + 16);
                crate::state::prefetch::prefetch(ahead);
                crate::state::prefetch::prefetch((ahead as *const u8).wrapping_add(64));
                self.evs[0] = events[i as usize];
                1
            }
            _ => 0,
        };
        let seen = cur.seen_max;
        if n > 0 {
            cur.seen_max = seen.max(self.evs[0].ts);
            self.stats.events_in += 1;
        }
        self.route_scratch(n, seen, part, i, 0);
        true
    }

    /// Stamps the first `n` scratch events with their source position and the chunk's running
    /// maximum before them, and routes them. The scratch is taken out of `self` so events are routed
    /// by reference (no extra copy).
    #[inline(always)]
    fn route_scratch(&mut self, n: usize, seen: i64, part: u16, pos: u64, len: u32) {
        let mut evs = std::mem::take(&mut self.evs);
        for ev in &mut evs[..n] {
            ev.tag = Tag::Data;
            ev.seen_max = seen;
            ev.part = part;
            ev.pos = pos;
            ev.len = len;
            self.route(ev);
        }
        self.evs = evs;
    }

    fn end_chunk(&mut self) {
        let Some(cur) = self.cur.take() else { return };
        let mut end = Event::EMPTY;
        end.tag = Tag::ChunkEnd;
        end.ts = cur.seen_max;
        end.pos = cur.seq;
        end.len = if cur.last { CHUNK_LAST } else { 0 };
        end.seen_max = cur.ingest_ns;
        end.part = cur.part;
        for d in 0..self.n {
            self.pending.push_back((d, end));
        }
    }

    #[inline]
    fn shard_of(&self, hash: u64) -> usize {
        let kg = ((hash >> 32) * self.setup.key_groups as u64) >> 32;
        (kg as usize * self.n) / self.setup.key_groups as usize
    }

    #[inline(always)]
    fn route(&mut self, ev: &Event) {
        let d = self.shard_of(ev.hash);
        if self.pending.is_empty() && self.deliver(d, ev) {
            return;
        }
        self.pending.push_back((d, *ev));
    }

    /// Sends one message; false when there is no credit.
    #[inline(always)]
    fn deliver(&mut self, d: usize, ev: &Event) -> bool {
        if d == self.id {
            // Even in order, local events are queued rather than processed at once: the receiver
            // then sees them in runs and can prefetch their state ahead.
            if self.local.len() >= self.local_cap {
                return false;
            }
            self.local.push_back(*ev);
            true
        } else {
            let p = self.out[d].as_mut().expect("a ring to every other shard");
            p.push(*ev).is_ok()
        }
    }

    /// Sends queued messages in order; false if some are still waiting for credit.
    fn drain_pending(&mut self) -> bool {
        while let Some(&(d, ev)) = self.pending.front() {
            if !self.deliver(d, &ev) {
                return false;
            }
            self.pending.pop_front();
        }
        true
    }
}

fn dead_letter_line(
    reason: &str,
    source: &str,
    partition: &str,
    offset: u64,
    raw: &[u8],
) -> Vec<u8> {
    let v = serde_json::json!({
        "reason": reason,
        "source": source,
        "partition": partition,
        "offset": offset,
        "raw": String::from_utf8_lossy(raw),
    });
    let mut out = serde_json::to_vec(&v).unwrap_or_default();
    out.push(b'\n');
    out
}
