//! The producing half of a shard: opens its chunks of the chunk order, reads them through their
//! sources' readers (`read`), and routes each event to the shard owning its key; ends each chunk
//! with a marker to every shard. A full ring is no credit: production stops (the source does not
//! advance) until credit returns.

use super::align::Slot;
use super::{ProdChunk, Shard, STEP};
use crate::connectors::source::ChunkSpec;
use crate::record::event::{
    payload_slots, slot_of, Event, Tag, CHUNK_IDLE, CHUNK_LAST, CHUNK_OFFSET, CHUNK_PAD, SLOT_BYTES,
};
use crate::runtime::aligned::Next;
use crate::runtime::log_align::Holds;
use crate::runtime::schedule::Schedule;

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
            } else {
                match self.read_step(STEP - done) {
                    Some(n) => n,
                    None => return (done, false),
                }
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
        let Some(rate) = self.setup.rates[src] else {
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
                Slot::Wait => return false,
                Slot::Pad => (part, k, pad, last) = (0, 0, true, false),
                Slot::Chunk(s) => {
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
        let spec = ChunkSpec {
            part,
            k,
            sit_out,
            // Under alignment a bounded log has no fixed chunk count: each chunk reads on.
            next_records: p.is_log() && setup.chunk_counts[part as usize].is_none(),
        };
        let chunk = ProdChunk {
            seq,
            part,
            last,
            ingest_ns,
            seen_max: i64::MIN,
            last_seen: i64::MIN,
            spec,
            pad,
            round,
        };
        if !pad {
            // An unreadable input is a failed run, not a dead letter: skipping a chunk would
            // lose every record in it without a trace.
            let opened = match self.readers[p.source].as_mut() {
                Some(r) => r.open_chunk(spec),
                None => Err(format!("source partition={}: no reader", p.name)),
            };
            if let Err(e) = opened {
                self.failure = Some(e);
                return false;
            }
            self.stats.chunks_read += 1;
        }
        self.cur = Some(chunk);
        true
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
        if let (Some(a), Some(round)) = (&self.setup.log_align, cur.round) {
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
        } else if self.setup.parts[cur.part as usize].is_log() {
            end.len |= self.end_log_chunk(&cur, &mut end.hash);
        }
        for d in 0..self.n {
            self.pending.push_back((d, end));
        }
    }

    /// The chunk-end flags of a log partition's chunk; `offset` gets the partition's next offset.
    /// Reports the chunk to the alignment.
    fn end_log_chunk(&mut self, cur: &ProdChunk, offset: &mut u64) -> u32 {
        let src = self.setup.parts[cur.part as usize].source;
        let Some(r) = self.readers[src].as_mut() else {
            return 0;
        };
        let e = r.end_log_chunk(cur.spec);
        *offset = e.next as u64;
        let mut flags = CHUNK_OFFSET;
        if e.last {
            flags |= CHUNK_LAST;
        }
        if e.idle {
            flags |= CHUNK_IDLE;
        }
        if let Some(a) = &self.setup.log_align {
            let holds = if e.last {
                Holds::Done
            } else if e.idle {
                Holds::Idle
            } else {
                Holds::Holding
            };
            a.report(cur.part, cur.spec.k, cur.seen_max, holds);
        }
        flags
    }

    #[inline]
    pub(super) fn shard_of(&self, hash: u64) -> usize {
        self.emitter.owners.of(hash)
    }

    /// Routes an event with a payload; phase one may hold it as [`Shard::route`] holds others.
    pub(super) fn route_wide(&mut self, ev: &Event, payload: &[u8]) {
        if let Some(h) = self.hot.as_mut() {
            let ooo = self.setup.tracker_init[ev.part as usize].0;
            if h.take_with_payload(ev, payload, ooo) {
                return;
            }
        }
        self.route_with_payload(ev, payload);
    }

    #[inline(always)]
    pub(super) fn route(&mut self, ev: &Event) {
        if let Some(h) = self.hot.as_mut() {
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
    pub(super) fn deliver(&mut self, d: usize, ev: &Event) -> bool {
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
