//! Phase one of two-phase window aggregation (`hot_keys`): the shard that reads an event of a hot
//! key folds it into partial accumulators per (key, pane) instead of sending it to the key's owner;
//! at a hand-off point it sends one partial per (key, pane), which the owner merges (phase two,
//! `PaneWindows::on_partial`). A celebrity key then costs its owner a few partials per chunk, not
//! most of the stream.
//!
//! **Why results do not change.** The owner merges a partial at the watermark of the hand-off
//! point. That equals applying each of its events where it was read as long as no *action point*
//! of its pane lies between the two watermarks: the end of a window of the pane (it fires), a
//! window's end plus the allowed lateness (later events are dropped from it) or the pane's cleanup.
//! Within one chunk the watermark at an event is at most `max(watermark at the chunk's start,
//! seen_max - max_out_of_orderness)`, so the runtime hands off before any event whose `seen_max`
//! could pass the first action point above that of the pane's first held event
//! ([`Combiner::next_change_above`]), and at every chunk end. At the hand-off it knows the exact
//! watermark, and sends a (key, pane) as a partial only if every window of the pane is still open
//! there; otherwise (late events) its held events go on raw, in order, and the owner re-fires or
//! drops them exactly as it would have.
//!
//! Accumulators merge associatively (`AggLayout::merge`): counts, integer sums, min and max
//! (ties keep the first seen, and a key's events keep their order) and `count_distinct` (the
//! sketch of a union is the merge of the sketches) give the same result combined or not. Float
//! sums are added in a different grouping, so they may differ in the last bits.
//!
//! Owns the partial tables of one window operator on one shard between two hand-offs; never sees
//! rings, sources or the watermark tracker.

use super::aggregate::{AggLayout, Sketches};
use super::panes::Geometry;
use crate::checkpoint::codec::Enc;
use crate::operators::window::acc_table::{AccTable, Row, INITIAL_KEY_BYTES};
use crate::plan::{AggFunc, AggPlan, WindowKind, WindowPlan};
use crate::record::event::{payload_slots, Event, PayloadBuf, Tag};
use crate::time::WM_MAX;

pub struct Combiner {
    geo: Geometry,
    lateness: i64,
    /// The window's accumulators, as its owner keeps them.
    layout: AggLayout,
    /// The same with one more `count()` word at the end: events per (key, pane).
    counted: AggLayout,
    /// Pane tables in use since the last hand-off, with their starts, and per row whether it was
    /// sent as a partial.
    panes: Vec<(i64, AccTable, Vec<bool>)>,
    spare: Vec<(i64, AccTable, Vec<bool>)>,
    last: usize,
    out: PartialOut,
}

/// Writes partials: one row's accumulators as a `PARTIAL` message, sent only where it pays.
#[derive(Default)]
pub(crate) struct PartialOut {
    enc: Enc,
    payload: PayloadBuf,
}

impl PartialOut {
    /// Sends the accumulators `accs` (with their sketches) of `row`, which folded `n` events, as
    /// a partial built on `h` (its time and tag set by the caller), unless it would take as many
    /// ring slots as those events (no gain: they go raw) or more than `max_slots` (a message
    /// larger than the ring would wait for credit forever). True when sent.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send(
        &mut self,
        h: &mut Event,
        row: &Row<'_>,
        (accs, sketches): (&[u64], &Sketches),
        layout: &AggLayout,
        n: u64,
        max_slots: usize,
        send: &mut dyn FnMut(&Event, &PayloadBuf),
    ) -> bool {
        if n < 2 {
            return false;
        }
        self.enc.bytes.clear();
        layout.encode(accs, sketches, &mut self.enc);
        if n as usize <= 1 + payload_slots(self.enc.bytes.len() as u32 + 4) {
            return false;
        }
        h.hash = row.hash;
        h.flags = 0;
        self.payload.clear();
        self.payload.set_key(h, row.key());
        self.payload.finish(h, None, Some(&self.enc.bytes));
        if 1 + payload_slots(self.payload.bytes.len() as u32) > max_slots {
            return false;
        }
        send(h, &self.payload);
        true
    }
}

impl Combiner {
    /// Phase one for a pane window; `None` for sessions, which cannot be combined.
    pub fn new(plan: &WindowPlan) -> Option<Combiner> {
        if matches!(plan.window, WindowKind::Session { .. }) {
            return None;
        }
        let mut aggs = plan.aggregates.clone();
        aggs.push(AggPlan {
            name: String::new(),
            func: AggFunc::Count,
            field: None,
            slot: None,
        });
        Some(Combiner {
            geo: Geometry::new(plan.window),
            lateness: plan.allowed_lateness_ms,
            layout: AggLayout::new(&plan.aggregates),
            counted: AggLayout::new(&aggs),
            panes: Vec::new(),
            spare: Vec::new(),
            last: 0,
            out: PartialOut::default(),
        })
    }

    /// Folds `ev` into its (key, pane); returns (pane table, row) — where [`Combiner::combined`]
    /// finds it at the hand-off — and the pane's start if this is its first event since the last
    /// hand-off.
    #[inline]
    pub fn add(&mut self, ev: &Event) -> (u32, u32, Option<i64>) {
        let p = super::align(ev.ts, self.geo.pane());
        let mut first = None;
        let idx = match self.panes.get(self.last) {
            Some(t) if t.0 == p => self.last,
            _ => match self.panes.iter().position(|t| t.0 == p) {
                Some(i) => i,
                None => {
                    let mut t = self.spare.pop().unwrap_or_else(|| {
                        (
                            p,
                            AccTable::with_capacity(&self.counted, 64, INITIAL_KEY_BYTES),
                            Vec::new(),
                        )
                    });
                    t.0 = p;
                    self.panes.push(t);
                    first = Some(p);
                    self.panes.len() - 1
                }
            },
        };
        self.last = idx;
        let row = self.panes[idx].1.add_row(ev, &self.counted);
        (idx as u32, row as u32, first)
    }

    /// The first watermark above `floor` at which something changes for pane `p`: one of its
    /// windows fires, stops taking late events, or the pane is cleaned up. `WM_MAX` if none.
    pub fn next_change_above(&self, p: i64, floor: i64) -> i64 {
        let mut next = WM_MAX;
        let lateness = self.lateness;
        self.geo.windows_of_pane(p, |_, e| {
            for a in [e - 1, (e - 1).saturating_add(lateness)] {
                if a > floor && a < next {
                    next = a;
                }
            }
        });
        next
    }

    /// The hand-off at watermark `wm`: sends (through `send`, as `PARTIAL` messages built on
    /// `head`, which carries the port, partition and `seen_max`, with the accumulators as their
    /// payload) every (key, pane) whose windows are all open at `wm` and that holds more events
    /// than its partial takes ring slots. Returns the events so combined; the others' held events
    /// must go on raw (see [`Combiner::combined`]).
    ///
    /// A partial must also fit the ring whole (`max_slots`, header included): a message is pushed
    /// whole or not at all, so a larger one would wait for credit forever. An exact
    /// `count_distinct` set grows with its events, so a busy pane's partial can pass that; its
    /// events then go on raw, which gives the same result.
    pub fn hand_off(
        &mut self,
        wm: i64,
        head: &Event,
        max_slots: usize,
        mut send: impl FnMut(&Event, &PayloadBuf),
    ) -> u64 {
        let mut combined = 0;
        let words = self.layout.words();
        let pane_len = self.geo.pane();
        let mut h = *head;
        h.tag = Tag::PARTIAL;
        for (p, table, sent) in &mut self.panes {
            sent.clear();
            sent.resize(table.len(), false);
            if p.saturating_add(pane_len) - 1 <= wm {
                continue; // a window of the pane has fired: its events are late, and go raw
            }
            h.ts = *p;
            for (r, row) in table.rows().enumerate() {
                let n = row.accs[words];
                let accs = (&row.accs[..words], table.sketches());
                if self
                    .out
                    .send(&mut h, &row, accs, &self.layout, n, max_slots, &mut send)
                {
                    sent[r] = true;
                    combined += n;
                }
            }
        }
        combined
    }

    /// Whether the events held at (pane table, row) went in a partial at the last hand-off.
    #[inline]
    pub fn combined(&self, pane: u32, row: u32) -> bool {
        self.panes
            .get(pane as usize)
            .and_then(|t| t.2.get(row as usize))
            .copied()
            .unwrap_or(false)
    }

    /// Forgets everything since the last hand-off, keeping the tables' memory.
    pub fn clear(&mut self) {
        while let Some(mut t) = self.panes.pop() {
            t.1.clear();
            t.2.clear();
            self.spare.push(t);
        }
        self.last = 0;
    }
}

impl crate::operators::Combine for Combiner {
    fn add(&mut self, ev: &Event) -> (u32, u32, Option<i64>) {
        Combiner::add(self, ev)
    }
    fn next_change_above(&self, p: i64, floor: i64) -> i64 {
        Combiner::next_change_above(self, p, floor)
    }
    fn hand_off(
        &mut self,
        wm: i64,
        head: &Event,
        max_slots: usize,
        send: &mut dyn FnMut(&Event, &PayloadBuf),
    ) -> u64 {
        Combiner::hand_off(self, wm, head, max_slots, send)
    }
    fn combined(&self, table: u32, row: u32) -> bool {
        Combiner::combined(self, table, row)
    }
    fn clear(&mut self) {
        Combiner::clear(self)
    }
}

#[cfg(test)]
mod tests;
