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
}
