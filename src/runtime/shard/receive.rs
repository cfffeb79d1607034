//! The receiving half of a shard: events taken in global chunk order, each with the exact watermark
//! it arrives at, handed to the operators. Never reads a source and never blocks.

use super::{Shard, RUN, STEP};
use crate::event::{unpack_partial, Event, Tag, CHUNK_IDLE, CHUNK_LAST, CHUNK_OFFSET, CHUNK_PAD};
use crate::time::WM_MAX;

impl Shard {
    pub(super) fn receive_step(&mut self) -> usize {
        let end = self.end_seq();
        let mut done = 0;
        while done < STEP && self.next_seq < end {
            let ch = (self.next_seq % self.n as u64) as usize;
            let n = self.receive_ring_run(ch, STEP - done);
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
    /// (no copy out), a run at a time. The consumer is taken out of `self` for the run: `receive`
    /// never touches rings.
    fn receive_ring_run(&mut self, ch: usize, budget: usize) -> usize {
        let mut c = self.inbound[ch].take().expect("a ring from every shard");
        let seq = self.next_seq;
        let mut done = 0;
        while done < budget && self.next_seq == seq {
            let run = c.readable((budget - done).min(RUN));
            if run.is_empty() {
                break;
            }
            let n = self.receive_run(run);
            c.advance_by(n);
            done += n;
        }
        self.inbound[ch] = Some(c);
        done
    }

    /// Processes a prefix of `evs` (at least one event) and returns its length: either one message
    /// handled alone (a chunk end, or an event at which a watermark step may be due), or a run of
    /// data events for one operator over which no operator has anything due, handed to the operator
    /// at once with the watermark as a function of each event's `seen_max` (the operator may stop
    /// early when its own events make something due).
    #[inline]
    fn receive_run(&mut self, evs: &[Event]) -> usize {
        let first = &evs[0];
        if first.tag != Tag::Data {
            self.receive(first);
            return 1;
        }
        let time = self.tracker.chunk_time(first.part);
        let due = self
            .ops
            .iter()
            .map(|o| o.next_action())
            .min()
            .unwrap_or(WM_MAX);
        let below = time.seen_below(due);
        let op = first.op;
        let n = evs
            .iter()
            .position(|e| e.tag != Tag::Data || e.op != op || e.seen_max >= below)
            .unwrap_or(evs.len());
        if n == 0 {
            self.receive(first);
            return 1;
        }
        self.emitter.op = op as usize;
        let n = self.ops[op as usize].on_run(&evs[..n], &time, &mut self.emitter);
        // Nothing was due before the operator stopped, so `advance` would only have moved the
        // watermark.
        self.wm = self.wm.max(time.before(evs[n - 1].seen_max));
        self.stats.events_processed += n as u64;
        n
    }

    #[inline]
    fn receive(&mut self, ev: &Event) {
        match ev.tag {
            Tag::Data => {
                self.arrive(ev);
                self.ops[ev.op as usize].on_event(ev, self.wm, &mut self.emitter);
                self.stats.events_processed += 1;
            }
            Tag::Barrier => self.take_checkpoint(ev.pos),
            Tag::Partial | Tag::PartialMore => self.receive_partial(ev),
            Tag::ChunkEnd => {
                if ev.len & CHUNK_PAD == 0 {
                    let wm = self.tracker.chunk_end(
                        ev.part,
                        ev.ts,
                        ev.len & CHUNK_LAST != 0,
                        ev.len & CHUNK_IDLE != 0,
                    );
                    if wm > self.wm {
                        self.advance(wm);
                    }
                }
                if ev.len & CHUNK_OFFSET != 0 {
                    self.kafka_next[ev.part as usize] = ev.hash as i64;
                }
                self.next_seq += 1;
                self.setup.schedule.received(self.id, self.next_seq);
                if !self.record_out.is_empty() {
                    self.flush_records(ev.pos);
                }
                if !self.emitter.failed.is_empty() {
                    self.dead_results();
                }
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

    /// Moves the watermark to the one `ev` (data or a partial aggregate) arrives at, and points
    /// the emitter at its operator.
    #[inline(always)]
    fn arrive(&mut self, ev: &Event) {
        let wm = self.tracker.before_event(ev.part, ev.seen_max);
        if wm > self.wm {
            self.advance(wm);
        }
        self.emitter.op = ev.op as usize;
    }

    /// Collects a partial aggregate's messages; merges it once complete. Out of line: only
    /// `hot_keys` windows send these, and the common receive path stays small.
    #[cold]
    #[inline(never)]
    fn receive_partial(&mut self, ev: &Event) {
        if ev.tag == Tag::Partial {
            self.partial.0 = *ev;
            self.partial.1.clear();
        }
        let total = self.partial.0.len as usize;
        if unpack_partial(ev, total, &mut self.partial.1) {
            self.apply_partial();
        }
    }

    /// Phase two: merges one partial aggregate, at the watermark where it was sent (its sender
    /// made sure no window of its pane fires or expires between its events and that point).
    fn apply_partial(&mut self) {
        let head = self.partial.0;
        self.arrive(&head);
        if let Err(e) = self.ops[head.op as usize].on_partial(&head, &self.partial.1, self.wm) {
            self.failure = Some(format!("partial aggregate: {e}"));
        }
        self.stats.partials_merged += 1;
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
            // Results fired by watermark `wm` were complete in event time at `wm` (their windows
            // ended within one watermark step of it); read the wall clock only when some fired.
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            let lag = now_ms.saturating_sub(wm).clamp(1, 315_360_000_000) as u64;
            let _ = self.event_hist.record_n(lag, n);
        }
    }
}
