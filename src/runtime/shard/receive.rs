//! The receiving half of a shard at depth 0: source events taken in global chunk order, each with
//! the exact watermark of the operator it is keyed for, handed to the operators that read sources;
//! events for operators deeper in the graph are kept (in order) for that depth's merge. Never
//! reads a source and never blocks.

use super::exchange;
use super::lookahead::AHEAD_SLOTS;
use super::{Shard, RUN, STEP};
use crate::record::event::{Event, Rec, Tag, CHUNK_IDLE, CHUNK_LAST, CHUNK_OFFSET, CHUNK_PAD};

impl Shard {
    pub(super) fn receive_step(&mut self) -> usize {
        let end = self.end_seq();
        let mut done = 0;
        while done < STEP && self.next_seq < end {
            if self.depth == 0
                && !self.chunk.started
                && !self
                    .emitter
                    .next
                    .iter()
                    .all(super::exchange::Outbound::is_idle)
            {
                // What this shard sent deeper waits for credit: take no new chunk until it is
                // out (this bounds those queues by one chunk's output).
                break;
            }
            let n = if self.depth == 0 {
                let ch = (self.next_seq % self.n as u64) as usize;
                self.receive_ring_run(ch, STEP - done)
            } else {
                self.merge_step(STEP - done)
            };
            if n == 0 {
                break;
            }
            done += n;
        }
        for c in self.inbound.iter_mut().flatten() {
            c.release();
        }
        for d in &mut self.xin {
            for c in d.iter_mut().flatten() {
                c.release();
            }
        }
        done
    }

    /// Processes up to `budget` messages of the current chunk from the depth-0 ring of shard `ch`,
    /// in place (no copy out), a run at a time. The consumer is taken out of `self` for the run:
    /// `receive` never touches rings.
    fn receive_ring_run(&mut self, ch: usize, budget: usize) -> usize {
        let Some(mut c) = self.inbound[ch].take() else {
            self.failure = Some(format!("no ring from shard {ch}"));
            return 0;
        };
        let seq = self.next_seq;
        let mut done = 0;
        while done < budget && self.next_seq == seq && self.depth == 0 {
            let run = c.readable((budget - done).min(RUN));
            let Some(first) = run.first() else { break };
            self.chunk.started = true;
            if first.has_payload() && first.tag != Tag::CHUNK_END {
                let mut look = self.look[0][ch];
                look.fill(c.readable(AHEAD_SLOTS), |h, st| self.hint(0, h, st));
                // A message with payload slots: read it whole, wherever the ring wraps.
                let mut scratch = std::mem::take(&mut self.merge.scratch);
                let head = match exchange::peek_message(&mut c, &mut scratch) {
                    Some((head, payload)) => {
                        self.receive_with_payload(&head, payload);
                        Some(head)
                    }
                    None => None,
                };
                self.merge.scratch = scratch;
                let Some(head) = head else {
                    self.failure = Some("a message's payload is missing from its ring".into());
                    break;
                };
                let n = exchange::consume(&mut c, &head);
                look.consumed(n);
                self.look[0][ch] = look;
                done += n;
                continue;
            }
            let n = self.receive_run(run);
            c.advance_by(n);
            self.look[0][ch].consumed(n);
            done += n;
        }
        self.inbound[ch] = Some(c);
        done
    }

    /// Processes a prefix of `evs` (at least one message) and returns its length: one message
    /// handled alone (a chunk end, an event with payload or for a deeper operator, or one at which
    /// a watermark step may be due), or a run of payload-free data events for one node over
    /// which no node of depth 0 has anything due, handed to the node at once with the watermark
    /// as a function of each event's `seen_max` (the node may stop early when its own events make
    /// something due).
    #[inline]
    fn receive_run(&mut self, evs: &[Event]) -> usize {
        let first = &evs[0];
        if first.tag != Tag::DATA {
            self.receive(first);
            return 1;
        }
        self.enter_chunk(first.part);
        let port = first.port;
        let node = self.port_node(port);
        if self.setup.topo.node_depth.get(node).copied() != Some(0) {
            self.stash_one(first, &[]);
            return 1;
        }
        let below = self.due_below(0);
        let n = evs
            .iter()
            .position(|e| {
                e.tag != Tag::DATA || e.port != port || e.seen_max >= below || e.has_payload()
            })
            .unwrap_or(evs.len());
        if n == 0 {
            self.receive(first);
            return 1;
        }
        let time = self.chunk.times[node];
        self.emitter.node = node;
        self.emitter.depth = 0;
        let n = self.ops[node].on_run(&evs[..n], &time, &mut self.emitter);
        // Nothing was due before the node stopped, so firing would only have moved its watermark.
        self.node_wm[node] = self.node_wm[node].max(time.before(evs[n - 1].seen_max));
        self.stats.events_processed += n as u64;
        n
    }

    #[inline]
    fn port_node(&self, port: u16) -> usize {
        self.setup
            .topo
            .port_node
            .get(port as usize)
            .copied()
            .unwrap_or(0)
    }

    /// One data event with its payload (a long key, wide values, the row).
    fn receive_with_payload(&mut self, head: &Event, payload: &[u8]) {
        if head.tag == Tag::PARTIAL {
            return self.apply_partial(head, payload);
        }
        self.enter_chunk(head.part);
        let node = self.port_node(head.port);
        if self.setup.topo.node_depth.get(node).copied() != Some(0) {
            self.stash_one(head, payload);
            return;
        }
        match Rec::parse(head, payload) {
            Ok(rec) => self.process(0, node, &rec),
            Err(e) => self.failure = Some(format!("depth 0: {e}")),
        }
    }

    #[inline]
    fn receive(&mut self, ev: &Event) {
        match ev.tag {
            Tag::DATA => {
                self.enter_chunk(ev.part);
                let node = self.port_node(ev.port);
                if self.setup.topo.node_depth.get(node).copied() != Some(0) {
                    self.stash_one(ev, &[]);
                    return;
                }
                self.process(0, node, &Rec::of(ev));
            }
            Tag::BARRIER => self.take_checkpoint(ev.pos, false),
            Tag::PARTIAL => self.apply_partial(ev, &[]),
            Tag::CHUNK_END => self.chunk_end(ev),
            _ => self.failure = Some(format!("unknown message tag {}", ev.tag.0)),
        }
    }

    /// Processes one data event (depth 0: a source event) for `node`: the node's watermark steps
    /// due before it first, then the event at the watermark it arrives at.
    pub(super) fn process(&mut self, depth: usize, node: usize, rec: &Rec<'_>) {
        let ev = rec.ev;
        let fired = ev.flags & crate::record::event::FIRED != 0;
        self.fire_upto(depth, ev.seen_max, !fired);
        let time = self.chunk.times[node];
        // Fired records arrive before the node's own step at their position.
        let at = if fired {
            ev.seen_max.saturating_sub(1).min(self.chunk.last_seen)
        } else {
            ev.seen_max
        };
        let wm = time.before(at).max(self.node_wm[node]);
        self.node_wm[node] = wm;
        self.emitter.node = node;
        self.emitter.depth = depth;
        self.ops[node].on_event(rec, wm, &mut self.emitter);
        self.stats.events_processed += 1;
    }

    /// Depth 0 met the end marker of the current chunk.
    fn chunk_end(&mut self, ev: &Event) {
        if ev.len & CHUNK_PAD == 0 {
            self.enter_chunk(ev.part);
            self.chunk.last_seen = ev.sub as i64;
            self.chunk.max_ts = ev.ts;
            self.tracker_end.copy_from(&self.tracker);
            self.tracker_end.chunk_end(
                ev.part,
                ev.ts,
                ev.len & CHUNK_LAST != 0,
                ev.len & CHUNK_IDLE != 0,
            );
        } else {
            self.tracker_end.copy_from(&self.tracker);
        }
        if ev.len & CHUNK_OFFSET != 0 {
            self.positions[ev.part as usize] = ev.hash as i64;
        } else if ev.len & CHUNK_PAD == 0 && self.setup.log_job {
            // A range partition's position in a job that reads logs: chunks done.
            self.positions[ev.part as usize] += 1;
        }
        self.chunk.ingest_ns = ev.seen_max;
        self.finish_depth();
    }

    /// Phase two of a two-phase operator: merges one partial result, at the watermark where it was
    /// sent (its sender made sure no window of its pane fires or expires between its events and
    /// that point). Out of line: only `hot_keys` windows send these.
    #[cold]
    #[inline(never)]
    fn apply_partial(&mut self, head: &Event, payload: &[u8]) {
        self.enter_chunk(head.part);
        let node = self.port_node(head.port);
        self.fire_upto(0, head.seen_max, true);
        let wm = self.chunk.times[node]
            .before(head.seen_max)
            .max(self.node_wm[node]);
        self.node_wm[node] = wm;
        self.emitter.node = node;
        self.emitter.depth = 0;
        let (ops, emitter) = (&mut self.ops, &mut self.emitter);
        let res = Rec::parse(head, payload)
            .map_err(|e| e.to_string())
            .and_then(|rec| ops[node].on_partial(&rec, wm, emitter));
        if let Err(e) = res {
            self.failure = Some(format!("partial aggregate: {e}"));
        }
        self.stats.partials_merged += 1;
    }

    /// Keeps an event of the current chunk for the deeper node it is keyed for.
    fn stash_one(&mut self, head: &Event, payload: &[u8]) {
        let node = self.port_node(head.port);
        let depth = self.setup.topo.node_depth.get(node).copied().unwrap_or(0);
        self.merge.stash(depth, self.depth, head, payload);
    }
}
