//! The receiving half of a shard: events taken in global chunk order, each with the exact watermark
//! it arrives at, handed to the operators. Never reads a source and never blocks.

use super::{Shard, PREFETCH_ENTRY, PREFETCH_RING, PREFETCH_SLOT, STEP};
use crate::event::{Event, Tag, CHUNK_IDLE, CHUNK_LAST};
use crate::operators::Prefetch;

impl Shard {
    pub(super) fn receive_step(&mut self) -> usize {
        let end = self.end_seq();
        let mut done = 0;
        while done < STEP && self.next_seq < end {
            let ch = (self.next_seq % self.n as u64) as usize;
            let n = if ch == self.id {
                self.receive_local_run(STEP - done)
            } else {
                self.receive_ring_run(ch, STEP - done)
            };
            if n == 0 {
                break;
            }
            done += n;
        }
        for c in self.inbound.iter_mut().flatten() {
            c.release();
        }
        done
    }

    /// Processes up to `budget` events of the current chunk from the ring of shard `ch`, in place
    /// (no copy out), prefetching ring slots and the state of the events ahead so their cache
    /// misses overlap. The consumer is taken out of `self` for the run: `receive` never touches rings.
    fn receive_ring_run(&mut self, ch: usize, budget: usize) -> usize {
        let mut c = self.inbound[ch]
            .take()
            .expect("a ring from every other shard");
        let seq = self.next_seq;
        let mut done = 0;
        while done < budget && self.next_seq == seq && c.available() > 0 {
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
            let Some(e) = c.peek() else { break };
            self.receive(e);
            c.advance();
            done += 1;
        }
        self.inbound[ch] = Some(c);
        done
    }

    /// As [`Self::receive_ring_run`], for the events this shard routed to itself.
    fn receive_local_run(&mut self, budget: usize) -> usize {
        let mut local = std::mem::take(&mut self.local);
        let seq = self.next_seq;
        let mut done = 0;
        while done < budget && self.next_seq == seq {
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
            let Some(e) = local.front() else { break };
            self.receive(e);
            local.pop_front();
            done += 1;
        }
        self.local = local;
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
}
