//! Hints to operators about the records a few messages ahead of the one being processed, so an
//! operator bound by cache misses on its keyed state (the joins' and dedupe's key indices, which
//! outgrow the cache) fetches the lines it will read while it works on earlier records.
//!
//! Records with payload (rows held by value) are processed one message at a time, so the operator
//! cannot see ahead itself, as the window does within a run. Each input the shard reads messages
//! from (a ring, a kept run) has a [`Cursor`]: how far past the read position hints have been
//! given. Hints never change what an operator does, only when its memory arrives.

use super::exchange::payload_of;
use super::Shard;
use crate::record::event::{Event, Tag};

/// Slots (headers and payloads) ahead of the read position that get hints: at 2-3 slots per
/// record with a row, about 8-12 records, far enough to cover a miss and near enough that the
/// lines are still cached when the record comes.
pub(super) const AHEAD_SLOTS: usize = 24;

/// Where the next record to hint starts at each stage, in slots from an input's read position
/// (always at a message's header). Stage `s` hints up to `AHEAD_SLOTS >> s` slots ahead: stage 0
/// what the event alone locates (an index line), stage 1, nearer, what that line points to
/// (cached by then). A third stage (the joined row behind the key) measured 2-3% slower: the
/// hints' own loads began to wait.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Cursor([usize; STAGES]);

/// Hint stages (see [`crate::operators::Operator::prefetch`]).
const STAGES: usize = 2;

impl Cursor {
    /// The reader consumed `slots` slots (whole messages) from the read position.
    #[inline]
    pub(super) fn consumed(&mut self, slots: usize) {
        // Fewer hinted than consumed (messages taken on another path): start again at the read
        // position; hinting a record twice is harmless.
        for at in &mut self.0 {
            *at = at.saturating_sub(slots);
        }
    }

    /// Walks `ahead` (the slots from the read position, as far as they are readable in one
    /// piece), calling `hint(header, stage)` with each data record not yet hinted at that stage.
    #[inline]
    pub(super) fn fill(&mut self, ahead: &[Event], mut hint: impl FnMut(&Event, u8)) {
        for (stage, at) in self.0.iter_mut().enumerate() {
            walk(at, AHEAD_SLOTS >> stage, ahead, |h| hint(h, stage as u8));
        }
    }
}

#[inline]
fn walk(at: &mut usize, upto: usize, ahead: &[Event], mut hint: impl FnMut(&Event)) {
    while *at < upto {
        let Some(h) = ahead.get(*at) else {
            return;
        };
        if h.tag == Tag::DATA {
            hint(h);
        }
        *at += 1 + payload_of(h);
    }
}

impl Shard {
    /// Hints the record `head` to its node if that node runs at depth `d` (a record for a deeper
    /// node is only kept here).
    #[inline]
    pub(super) fn hint(&self, d: usize, head: &Event, stage: u8) {
        let topo = &self.setup.topo;
        let Some(&node) = topo.port_node.get(head.port as usize) else {
            return;
        };
        if topo.node_depth.get(node).copied() == Some(d) {
            if let Some(op) = self.ops.get(node) {
                op.prefetch(head, stage);
            }
        }
    }
}
