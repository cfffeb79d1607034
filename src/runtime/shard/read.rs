//! Reading the current chunk through its source's reader: each record it binds is counted, run
//! through the source's chains of filters and selects, and its events stamped with their source
//! position and the chunk's running maximum event time and routed; a record it cannot read is a
//! dead letter with its reason and position. In-memory runs of events already made are routed in
//! a tight loop of their own.

use super::emit::{dead_letter_line, ShardEmitter};
use super::steps;
use super::Shard;
use crate::connectors::sink::SinkWriter;
use crate::connectors::source::{Read, SourceReader};
use crate::metrics::ShardStats;
use crate::record::event::{Event, Tag};

impl Shard {
    /// Reads the next record (or in-memory run) of the current chunk: how many events of the
    /// chunk it took (0: the chunk is done), or `None` when nothing is there yet (a log waiting
    /// for records) or reading failed (`failure` says why).
    pub(super) fn read_step(&mut self, budget: usize) -> Option<usize> {
        let part = self.cur.as_ref()?.part;
        let src = self.setup.parts[part as usize].source;
        let Some(mut reader) = self.readers[src].take() else {
            self.failure = Some(format!("source {src} has no reader on this shard"));
            return None;
        };
        let res = loop {
            match reader.next() {
                Read::Skipped => self.stats.records_skipped += 1,
                Read::Record {
                    pos,
                    len,
                    ts,
                    unbound,
                } => {
                    self.on_record(&*reader, src, pos, len, ts, unbound);
                    break Some(1);
                }
                Read::Dead { pos, reason } => {
                    // Only what is read counts against the rate limit, not what a start skips.
                    self.rate_read[src] += 1;
                    self.dead_at(&*reader, src, pos, &reason);
                    break Some(1);
                }
                Read::Run { first } => break Some(self.memory_run(&mut *reader, first, budget)),
                Read::Wait => break None,
                Read::End => break Some(0),
                Read::Failed(why) => {
                    self.failure = Some(why);
                    break None;
                }
            }
        };
        self.stats.bytes_read += reader.take_bytes_read();
        self.readers[src] = Some(reader);
        res
    }

    /// A record the reader bound: counted, run through the source's chains, its events routed
    /// (or, when its events could not be made, a dead letter).
    fn on_record(
        &mut self,
        reader: &dyn SourceReader,
        src: usize,
        pos: u64,
        len: u32,
        ts: i64,
        unbound: Option<String>,
    ) {
        let Some(cur) = self.cur.as_mut() else {
            return;
        };
        let (part, seq) = (cur.part, cur.seq);
        let seen = cur.seen_max;
        cur.seen_max = seen.max(ts);
        cur.last_seen = seen;
        self.rate_read[src] += 1;
        self.stats.events_in += 1;
        let applied = (!self.chains[src].is_empty()).then(|| {
            steps::apply(
                &mut self.chains[src],
                reader.line(),
                reader.kept(),
                ts,
                (seq, reader.kind()),
                &mut self.record_out,
            )
        });
        if let Some(a) = &applied {
            self.stats.records_filtered += a.dropped;
        }
        let failed = applied.as_ref().map_or(&[][..], |a| &a.failed[..]);
        if !failed.is_empty() || unbound.is_some() {
            // Only a record with something to report pays for its position's names (the setup
            // is shared by every shard: no reference count is touched per record).
            let setup = self.setup.clone();
            let at = DeadAt {
                source: &setup.sources[src],
                partition: &setup.parts[part as usize].name,
                offset: pos,
                line: reader.raw(),
            };
            for why in failed.iter().chain(&unbound) {
                at.write(why, &mut self.dead, &mut self.emitter, &mut self.stats);
            }
        }
        if unbound.is_none() {
            self.route_bound(reader, src, seen, part, pos, len);
        }
    }

    /// A record the reader could not read: a dead letter with its raw bytes and position.
    fn dead_at(&mut self, reader: &dyn SourceReader, src: usize, pos: u64, reason: &str) {
        let Some(part) = self.cur.as_ref().map(|c| c.part) else {
            return;
        };
        let setup = self.setup.clone();
        let at = DeadAt {
            source: &setup.sources[src],
            partition: &setup.parts[part as usize].name,
            offset: pos,
            line: reader.raw(),
        };
        at.write(reason, &mut self.dead, &mut self.emitter, &mut self.stats);
    }

    /// Routes the events the record just read became: those of the source's own bindings, then
    /// those of each chain that kept and bound it. Each is stamped with its source position and
    /// the chunk's running maximum before it.
    #[inline(always)]
    fn route_bound(
        &mut self,
        reader: &dyn SourceReader,
        src: usize,
        seen: i64,
        part: u16,
        pos: u64,
        len: u32,
    ) {
        let (events, payloads) = reader.events();
        for (i, ev) in events.iter().enumerate() {
            let payload = payloads.get(i).map_or(&[][..], |p| &p.bytes[..]);
            self.stamp_and_route(ev, payload, seen, part, pos, len);
        }
        if self.chains[src].is_empty() {
            return;
        }
        let mut chains = std::mem::take(&mut self.chains);
        for r in &chains[src] {
            let Some(p) = r.parser.as_ref().filter(|_| r.bound) else {
                continue;
            };
            for (ev, payload) in p.events.iter().zip(&p.payloads) {
                self.stamp_and_route(ev, &payload.bytes, seen, part, pos, len);
            }
        }
        chains[src].iter_mut().for_each(|r| r.bound = false);
        self.chains = chains;
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
            self.route_wide(&ev, payload);
        }
    }

    /// Routes up to `budget` events of an in-memory run (at positions `first..`) straight from
    /// the reader's array (no parse, no scratch copy); returns how many. Stops early when a ring
    /// has no credit (the event that found none waits in `pending`).
    fn memory_run(&mut self, reader: &mut dyn SourceReader, first: u64, budget: usize) -> usize {
        let n = if self.hot.is_some() {
            self.memory_run_hot(reader.run(), first, budget)
        } else {
            self.memory_run_plain(reader.run(), first, budget)
        };
        reader.advance(n);
        n
    }

    fn memory_run_plain(&mut self, events: &[Event], first: u64, budget: usize) -> usize {
        /// Events ahead of the one routed whose lines are pulled in from memory.
        const AHEAD: usize = 32;
        let Some(cur) = self.cur.as_ref() else {
            return 0;
        };
        let part = cur.part;
        let end = events.len().min(budget);
        let mut seen = cur.seen_max;
        let mut last = cur.last_seen;
        let mut i = 0;
        while i < end {
            let ahead = events.as_ptr().wrapping_add(i + AHEAD);
            crate::state::prefetch::prefetch(ahead);
            crate::state::prefetch::prefetch(ahead.cast::<u8>().wrapping_add(64));
            let ev = memory_event(events, i, first, seen, part);
            last = seen;
            seen = seen.max(ev.ts);
            i += 1;
            let d = self.shard_of(ev.hash);
            if !self.pending.is_empty() || !self.deliver(d, &ev) {
                self.pending.push_back((d, ev));
                break;
            }
        }
        self.memory_run_end(i, seen, last)
    }

    /// Records how far a memory run got: the chunk's running maximum, and the events read; returns
    /// their count.
    #[inline(always)]
    fn memory_run_end(&mut self, taken: usize, seen: i64, last: i64) -> usize {
        if let Some(cur) = self.cur.as_mut() {
            cur.seen_max = seen;
            cur.last_seen = last;
        }
        self.stats.events_in += taken as u64;
        taken
    }

    /// `memory_run` with phase one of `hot_keys`: every event goes through `route` (it may be
    /// held), and the run stops before an event a hand-off is due ahead of. Kept apart so the
    /// plain loop stays as tight as it was.
    fn memory_run_hot(&mut self, events: &[Event], first: u64, budget: usize) -> usize {
        let Some(cur) = self.cur.as_ref() else {
            return 0;
        };
        let part = cur.part;
        let end = events.len().min(budget);
        let mut seen = cur.seen_max;
        let mut last = cur.last_seen;
        let mut i = 0;
        while i < end {
            if self.hot.as_ref().is_some_and(|h| h.due(seen)) {
                break;
            }
            let ev = memory_event(events, i, first, seen, part);
            last = seen;
            seen = seen.max(ev.ts);
            i += 1;
            self.route(&ev);
            if !self.pending.is_empty() {
                break;
            }
        }
        self.memory_run_end(i, seen, last)
    }
}

/// Event `i` of an in-memory run starting at position `first` as routed: a data event of
/// partition `part`, stamped with the chunk's running maximum before it.
#[inline(always)]
fn memory_event(events: &[Event], i: usize, first: u64, seen: i64, part: u16) -> Event {
    let mut ev = events[i];
    ev.tag = Tag::DATA;
    ev.seen_max = seen;
    ev.part = part;
    ev.pos = first + i as u64;
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
