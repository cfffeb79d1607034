//! The exchange between shards at depths below the sources: one ring per (depth, sender,
//! receiver) carrying the records operators emit for operators that read them, keyed for their
//! owners, with per-destination queues for what finds no credit.
//!
//! A message is a header and its payload slots, pushed whole or not at all, so a receiver never
//! sees half of one. A full ring leaves the message in that destination's queue (never blocking:
//! an operator's output from one step must go somewhere); the shard drains the queues every turn
//! and starts no new chunk while any holds something, so what waits is bounded by one chunk's
//! output. Queues are per destination so one slow receiver never holds back the others.

use crate::record::event::{payload_slots, Event, Tag};
use crate::runtime::ring::{Consumer, Producer};
use std::collections::VecDeque;

/// The payload slots that follow a message's header in a ring (a chunk end's `extra` is not a
/// payload length).
#[inline]
pub fn payload_of(head: &Event) -> usize {
    if head.tag == Tag::CHUNK_END {
        0
    } else {
        payload_slots(head.extra)
    }
}

/// Pushes `head` and its `payload` slots into `p` if all fit; false (nothing pushed) otherwise.
#[inline]
pub fn push_message(p: &mut Producer<Event>, head: &Event, payload: &[Event]) -> bool {
    if p.free() < 1 + payload.len() && p.free_fresh() < 1 + payload.len() {
        return false;
    }
    // Checked above: every push finds a free slot.
    let _ = p.push(*head);
    for s in payload {
        let _ = p.push(*s);
    }
    true
}

/// Pushes `head` and the payload `bytes` (as slots) into `p` if all fit; false (nothing pushed)
/// otherwise.
#[inline]
pub fn push_bytes(p: &mut Producer<Event>, head: &Event, bytes: &[u8]) -> bool {
    let n = payload_slots(bytes.len() as u32);
    if p.free() < 1 + n && p.free_fresh() < 1 + n {
        return false;
    }
    let _ = p.push(*head);
    for chunk in bytes.chunks(crate::record::event::SLOT_BYTES) {
        let _ = p.push(crate::record::event::slot_of(chunk));
    }
    true
}

/// One depth's outgoing rings and queues.
pub struct Outbound {
    pub rings: Vec<Producer<Event>>,
    /// Slots waiting for credit, per destination, whole messages in order.
    pub queued: Vec<VecDeque<Event>>,
}

impl Outbound {
    pub fn new(rings: Vec<Producer<Event>>) -> Outbound {
        let queued = (0..rings.len()).map(|_| VecDeque::new()).collect();
        Outbound { rings, queued }
    }

    /// Sends a message to `dest`, or queues it behind what already waits there.
    pub fn send(&mut self, dest: usize, head: &Event, payload: &[Event]) {
        if self.queued[dest].is_empty() && push_message(&mut self.rings[dest], head, payload) {
            return;
        }
        self.queued[dest].push_back(*head);
        self.queued[dest].extend(payload.iter().copied());
    }

    /// Moves queued messages into their rings while credit lasts; true when nothing waits.
    pub fn drain(&mut self) -> bool {
        let mut empty = true;
        for (q, ring) in self.queued.iter_mut().zip(&mut self.rings) {
            while let Some(head) = q.front() {
                let n = payload_of(head);
                if ring.free() < 1 + n && ring.free_fresh() < 1 + n {
                    break;
                }
                for _ in 0..=n {
                    if let Some(s) = q.pop_front() {
                        let _ = ring.push(s);
                    }
                }
            }
            empty &= q.is_empty();
        }
        empty
    }

    pub fn flush(&mut self) {
        for r in &mut self.rings {
            r.flush();
        }
    }

    pub fn is_idle(&self) -> bool {
        self.queued.iter().all(VecDeque::is_empty)
    }
}

/// Reads one whole message from the front of `c`: the header and its payload bytes (copied into
/// `scratch` when the payload wraps around the ring's end, borrowed otherwise). `None` when the
/// ring is empty. The message stays in the ring until [`consume`].
pub fn peek_message<'a>(
    c: &'a mut Consumer<Event>,
    scratch: &'a mut Vec<u8>,
) -> Option<(Event, &'a [u8])> {
    let head = *c.peek()?;
    let n = payload_of(&head);
    if n == 0 {
        return Some((head, &[]));
    }
    // The sender pushes a message whole before publishing, so all of it is there; `None` only
    // if a sender broke that rule.
    let first = c.readable(1 + n).len();
    if first == 1 + n {
        let all = c.readable(1 + n);
        return Some((head, crate::record::event::slot_bytes(&all[1..])));
    }
    scratch.clear();
    scratch.extend_from_slice(crate::record::event::slot_bytes(&c.readable(first)[1..]));
    let rest = c.readable_from(first, 1 + n - first);
    if first + rest.len() != 1 + n {
        return None;
    }
    scratch.extend_from_slice(crate::record::event::slot_bytes(rest));
    Some((head, &scratch[..]))
}

/// Consumes the message [`peek_message`] returned last; returns the slots it took.
pub fn consume(c: &mut Consumer<Event>, head: &Event) -> usize {
    let n = 1 + payload_of(head);
    c.advance_by(n);
    n
}
