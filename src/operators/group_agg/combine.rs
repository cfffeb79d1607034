//! Phase one of a group aggregate with `hot_keys` (Flink's local-global aggregation): the shard
//! that reads an event of a hot group folds it into that group's partial accumulators instead of
//! sending it to the group's owner, and at each hand-off (`runtime::shard::hot`: a full buffer or
//! a chunk end) sends one partial per group, which the owner merges
//! (`GroupAggregate::on_partial`) and emits as one update. A celebrity key then costs its owner a
//! few partials per chunk, not most of the stream.
//!
//! **What changes and what does not.** A group aggregate has no action point in event time, so a
//! partial may be merged wherever it arrives; the owner's row after it is the row it would have
//! after the partial's events one by one (counts, sums, MIN/MAX and the exact distinct set merge
//! associatively, as the window's do; float sums are added in another grouping and may differ
//! in the last bits). Only the intermediate updates differ: a hand-off's events become one
//! `-U`/`+U` pair instead of one pair each, as Flink's mini-batch and local-global aggregation
//! fold them, so the materialised result is the same and the changelog shorter. Only
//! append-only inputs are combined (the plan refuses the rest): a retraction of a group the
//! owner has no row for is ignored, which a partial that folded it with inserts could not do.
//!
//! Owns one partial table of one group aggregate on one shard between two hand-offs; never
//! sees rings, sources or the watermark tracker.

use super::plan::GroupAggPlan;
use crate::operators::window::acc_table::{AccTable, INITIAL_KEY_BYTES};
use crate::operators::window::aggregate::AggLayout;
use crate::operators::window::combine::PartialOut;
use crate::record::event::{Event, PayloadBuf, Rec, Tag};
use crate::time::WM_MAX;

pub struct GroupCombiner {
    /// The owner's layout: the aggregates, then the hidden row count (here: events folded).
    layout: AggLayout,
    table: AccTable,
    /// Per row: the latest event time folded in, the time of its partial.
    ts: Vec<i64>,
    /// Per row: whether it went in a partial at the last hand-off.
    sent: Vec<bool>,
    out: PartialOut,
}

impl GroupCombiner {
    pub fn new(plan: &GroupAggPlan) -> GroupCombiner {
        let layout = super::layout_with_rows(plan);
        GroupCombiner {
            table: AccTable::with_capacity(&layout, 64, INITIAL_KEY_BYTES),
            layout,
            ts: Vec::new(),
            sent: Vec::new(),
            out: PartialOut::default(),
        }
    }

    /// Row `r` folded an event at `ts` (rows are numbered in order, so a new one is the next).
    fn note_time(&mut self, r: usize, ts: i64) {
        match self.ts.get_mut(r) {
            Some(t) => *t = (*t).max(ts),
            None => self.ts.push(ts),
        }
    }

    /// The words of a row before its hidden count.
    fn count_word(&self) -> usize {
        self.layout.words() - 1
    }
}

impl crate::operators::Combine for GroupCombiner {
    /// Folds `ev` into its group's partial. A group aggregate has one "pane" and nothing that
    /// waits for the watermark, so there is never a first pane to watch.
    fn add(&mut self, ev: &Event) -> (u32, u32, Option<i64>) {
        let r = self.table.add_row(ev, &self.layout);
        self.note_time(r, ev.ts);
        (0, r as u32, None)
    }

    /// Folds a record with wide values or a long key as [`Combine::add`] folds an event.
    fn add_rec(&mut self, rec: &Rec<'_>) -> Option<(u32, u32, Option<i64>)> {
        let r = self.table.add_rec(rec, &self.layout);
        self.note_time(r, rec.ev.ts);
        Some((0, r as u32, None))
    }

    fn next_change_above(&self, _p: i64, _floor: i64) -> i64 {
        WM_MAX
    }

    /// Sends every group that folded more events than its partial takes ring slots (and whose
    /// partial fits the ring whole); the others' events go on raw, which gives the same rows.
    fn hand_off(
        &mut self,
        _wm: i64,
        head: &Event,
        max_slots: usize,
        send: &mut dyn FnMut(&Event, &PayloadBuf),
    ) -> u64 {
        let n_word = self.count_word();
        let mut h = *head;
        h.tag = Tag::PARTIAL;
        self.sent.clear();
        self.sent.resize(self.table.len(), false);
        let mut combined = 0;
        for (r, row) in self.table.rows().enumerate() {
            let n = row.accs[n_word];
            h.ts = self.ts[r];
            let accs = (row.accs, self.table.sketches());
            if self
                .out
                .send(&mut h, &row, accs, &self.layout, n, max_slots, send)
            {
                self.sent[r] = true;
                combined += n;
            }
        }
        combined
    }

    fn combined(&self, _table: u32, row: u32) -> bool {
        self.sent.get(row as usize).copied().unwrap_or(false)
    }

    fn clear(&mut self) {
        self.table.clear();
        self.ts.clear();
        self.sent.clear();
    }
}

#[cfg(test)]
#[path = "combine_tests.rs"]
mod tests;
