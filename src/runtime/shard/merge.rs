//! Receiving at depths below the sources: the records every shard's shallower operators emitted
//! for this shard's operators from the current chunk, merged in tag order (see `event`), with the
//! records kept for this depth while receiving shallower ones.
//!
//! Every input is sorted by tag: a ring holds one sender's output of one depth, emitted while it
//! went through its own input in tag order (each record inherits its cause's position, a step's
//! records carry the step's); a kept run holds what one shallower depth passed on, in order. So
//! taking the smallest head among them gives the order a single thread would have produced, and a
//! record is taken only once every sender has shown its next one (or its end marker of the chunk):
//! the merge waits rather than guess. Records for operators deeper still are kept again.

use super::exchange;
use super::lookahead::{Cursor, AHEAD_SLOTS};
use super::Shard;
use crate::record::event::{
    payload_slots, slot_bytes, slot_of, Event, Rec, Tag, FIRED, SLOT_BYTES,
};

/// Records kept for a depth: runs, each in tag order, one per shallower depth they came through.
#[derive(Default)]
struct Run {
    from: usize,
    slots: Vec<Event>,
    at: usize,
    look: Cursor,
}

pub(super) struct Merge {
    /// Per depth: the runs kept for it in the current chunk (the first `used[d]`; the others keep
    /// their memory for the next chunk).
    stash: Vec<Vec<Run>>,
    used: Vec<usize>,
    /// Per sender: its end marker of the current chunk at the current depth has arrived.
    ended: Vec<bool>,
    pub(super) scratch: Vec<u8>,
}

/// What a head is ordered by: position, fired before data, origin, tie-break, input.
type Key = (i64, u8, u64, u64, usize);

#[inline]
fn key_of(e: &Event, input: usize) -> Key {
    let phase = u8::from(e.flags & FIRED == 0);
    (e.seen_max, phase, e.pos, e.sub, input)
}

impl Merge {
    pub(super) fn new(depths: usize, shards: usize) -> Merge {
        Merge {
            stash: (0..depths.max(1)).map(|_| Vec::new()).collect(),
            used: vec![0; depths.max(1)],
            ended: vec![false; shards],
            scratch: Vec::new(),
        }
    }

    /// Keeps a record (header and payload bytes) for depth `to`, met while receiving depth `at`.
    pub(super) fn stash(&mut self, to: usize, at: usize, head: &Event, payload: &[u8]) {
        let (Some(runs), Some(used)) = (self.stash.get_mut(to), self.used.get_mut(to)) else {
            return;
        };
        if *used == 0 || runs[*used - 1].from != at {
            if *used == runs.len() {
                runs.push(Run::default());
            }
            let r = &mut runs[*used];
            r.from = at;
            r.at = 0;
            r.look = Cursor::default();
            r.slots.clear();
            *used += 1;
        }
        let r = &mut runs[*used - 1];
        r.slots.push(*head);
        r.slots.extend(payload.chunks(SLOT_BYTES).map(slot_of));
    }

    /// Everything kept for depth `d` is taken: its runs' memory stays for the next chunk.
    fn finish(&mut self, d: usize) {
        if let Some(used) = self.used.get_mut(d) {
            *used = 0;
        }
    }

    pub(super) fn begin_depth(&mut self) {
        self.ended.iter_mut().for_each(|e| *e = false);
    }
}

/// Where the smallest head is.
enum From {
    Ring(usize),
    Run(usize),
}

impl Shard {
    /// Takes up to `budget` records of the current chunk at the current depth (>= 1), in tag
    /// order; 0 when some sender's next record has not arrived yet.
    pub(super) fn merge_step(&mut self, budget: usize) -> usize {
        let d = self.depth;
        let mut done = 0;
        while done < budget {
            let Some(from) = self.smallest_head(d) else {
                return done;
            };
            match from {
                None => {
                    // Every sender ended the chunk and every kept run is read.
                    self.merge.finish(d);
                    self.finish_depth();
                    return done + 1;
                }
                Some(From::Ring(s)) => self.take_from_ring(d, s),
                Some(From::Run(r)) => self.take_from_run(d, r),
            }
            if self.failure.is_some() {
                return done;
            }
            done += 1;
        }
        done
    }

    /// `None` when a sender's next record is still to come; `Some(None)` when everything of the
    /// chunk is taken; else where the smallest head is. End markers met on the way are consumed.
    fn smallest_head(&mut self, d: usize) -> Option<Option<From>> {
        let seq = self.next_seq;
        let mut best: Option<(Key, usize, bool)> = None;
        for s in 0..self.n {
            if self.merge.ended[s] {
                continue;
            }
            let c = self.xin.get_mut(d - 1)?.get_mut(s)?.as_mut()?;
            let head = *c.peek()?;
            if head.tag == Tag::CHUNK_END {
                if head.pos != seq {
                    self.failure = Some(format!(
                        "depth {d}: shard {s} ended chunk {} while chunk {seq} was expected",
                        head.pos
                    ));
                    return None;
                }
                c.advance();
                self.look[d][s].consumed(1);
                self.merge.ended[s] = true;
                continue;
            }
            let k = key_of(&head, s);
            if best.is_none_or(|b| k < b.0) {
                best = Some((k, s, true));
            }
        }
        let used = self.merge.used[d];
        for (r, run) in self.merge.stash[d][..used].iter().enumerate() {
            if let Some(head) = run.slots.get(run.at) {
                let k = key_of(head, self.n + r);
                if best.is_none_or(|b| k < b.0) {
                    best = Some((k, r, false));
                }
            }
        }
        Some(best.map(|(_, i, ring)| if ring { From::Ring(i) } else { From::Run(i) }))
    }

    fn take_from_ring(&mut self, d: usize, s: usize) {
        let Some(mut c) = self.xin[d - 1][s].take() else {
            return;
        };
        let mut look = self.look[d][s];
        look.fill(c.readable(AHEAD_SLOTS), |h, st| self.hint(d, h, st));
        let mut scratch = std::mem::take(&mut self.merge.scratch);
        let head = match exchange::peek_message(&mut c, &mut scratch) {
            Some((head, payload)) => {
                self.merged(d, &head, payload);
                Some(head)
            }
            None => None,
        };
        self.merge.scratch = scratch;
        match head {
            Some(head) => {
                look.consumed(exchange::consume(&mut c, &head));
                self.look[d][s] = look;
            }
            None => {
                self.failure = Some(format!("depth {d}: a message from shard {s} is cut short"))
            }
        }
        self.xin[d - 1][s] = Some(c);
    }

    fn take_from_run(&mut self, d: usize, r: usize) {
        let mut run = std::mem::take(&mut self.merge.stash[d][r]);
        if let Some(head) = run.slots.get(run.at).copied() {
            run.look
                .fill(&run.slots[run.at..], |h, st| self.hint(d, h, st));
            let n = payload_slots(head.extra);
            let end = (run.at + 1 + n).min(run.slots.len());
            self.merged(d, &head, slot_bytes(&run.slots[run.at + 1..end]));
            run.look.consumed(end - run.at);
            run.at = end;
        }
        self.merge.stash[d][r] = run;
    }

    /// One merged record: processed by its node here, or kept for a deeper one.
    fn merged(&mut self, d: usize, head: &Event, payload: &[u8]) {
        let node = self
            .setup
            .topo
            .port_node
            .get(head.port as usize)
            .copied()
            .unwrap_or(0);
        let depth = self.setup.topo.node_depth.get(node).copied().unwrap_or(0);
        if depth != d {
            self.merge.stash(depth, d, head, payload);
            return;
        }
        match Rec::parse(head, payload) {
            Ok(rec) => self.process(d, node, &rec),
            Err(e) => self.failure = Some(format!("depth {d}: {e}")),
        }
    }
}
