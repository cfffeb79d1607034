//! The group aggregate: Flink's GROUP BY without a window. One row per group, updated by every
//! record of the group the moment it arrives, emitted as a changelog.
//!
//! As Flink's `GroupAggFunction` (without mini-batch): the first record of a group emits `+I`;
//! a later one emits `-U` of the previous row and `+U` of the new one, or nothing when the row
//! did not change; a retraction (`-U`/`-D` from an updating input) that leaves the group with no
//! rows emits `-D` of its last row and empties its state; a retraction for a group that has no
//! rows is ignored, as Flink ignores it. Each output row carries its cause's time and ordering tag,
//! so the changelog is the same on any number of shards.
//!
//! State is the window's accumulator table (`window::acc_table`): one row per group, the key and
//! the accumulators in one or two cache lines, plus a hidden `count()` of the group's rows that
//! says when it is empty. Rows are never removed (an emptied group's accumulators are zeroed), so
//! state grows with the distinct groups ever seen, as Flink's does without a state TTL. Over an
//! updating input, MIN and MAX also keep each group's values with their row counts (`extrema`),
//! so taking back the extreme falls back to the next one. FIRST_VALUE, LAST_VALUE and MIN/MAX of
//! strings keep input tokens beside the words (`values`), read from each record's row.

mod combine;
pub mod config;
mod distinct_counts;
pub(crate) mod extrema;
pub mod plan;
pub mod values;

use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::OperatorReport;
use crate::operators::window::acc_table::AccTable;
use crate::operators::window::aggregate::{distinct_hash, to_num};
use crate::operators::window::aggregate::{AggLayout, Sketches};
use crate::operators::window::format::LineFormat;
use crate::operators::window::plan::{AggFunc, AggPlan};
use crate::operators::{Counters, Emitter, Operator, Output};
use crate::record::event::{Rec, RowKind, RETRACT};
use distinct_counts::DistinctCounts;
use extrema::Extrema;
use plan::GroupAggPlan;
use values::ValueAggs;

pub struct GroupAggregate {
    /// The aggregates, then the hidden row count.
    layout: AggLayout,
    /// The aggregates alone, as rows show them (a prefix of `layout`'s words).
    shown: AggLayout,
    table: AccTable,
    format: LineFormat,
    old: Vec<u8>,
    new: Vec<u8>,
    /// MIN and MAX over an updating input: every value they hold, to take one back.
    extrema: Extrema,
    /// The value slot each of `extrema`'s aggregates reads.
    extrema_slots: Vec<usize>,
    /// COUNT(DISTINCT) over an updating input: rows per value, to take a value out.
    distinct: DistinctCounts,
    /// The value slot each of `distinct`'s aggregates reads.
    distinct_slots: Vec<usize>,
    /// FIRST_VALUE, LAST_VALUE and MIN/MAX of strings: tokens read from each record's row.
    values: ValueAggs,
    /// `fired`: rows emitted (`+I` and `+U`); `refired`: updates among them.
    counters: Counters,
    /// A partial aggregate being merged (phase two of `hot_keys`), decoded here.
    partial: (Vec<u64>, Sketches),
}

/// The layout of a group's row: the aggregates, then a hidden `count()` of its rows.
fn layout_with_rows(plan: &GroupAggPlan) -> AggLayout {
    let mut with_count = plan.aggregates.clone();
    with_count.push(AggPlan {
        name: String::new(),
        func: AggFunc::Count,
        field: None,
        slot: None,
    });
    AggLayout::new(&with_count)
}

/// Phase one of `hot_keys` for `plan` (see [`combine`]).
pub(crate) fn combiner(plan: &GroupAggPlan) -> Box<dyn crate::operators::Combine> {
    Box::new(combine::GroupCombiner::new(plan))
}

impl GroupAggregate {
    pub fn new(plan: &GroupAggPlan) -> GroupAggregate {
        let layout = layout_with_rows(plan);
        let keys: Vec<String> = plan
            .group_by
            .iter()
            .map(|f| f.as_str().to_string())
            .collect();
        let mut specs = Vec::new();
        let mut extrema_slots = Vec::new();
        let (mut distinct, mut distinct_slots) = (Vec::new(), Vec::new());
        for (i, a) in plan.aggregates.iter().enumerate() {
            match (plan.retracts, a.func, a.slot) {
                (true, AggFunc::Min | AggFunc::Max, Some(slot)) => {
                    specs.push((i, layout.at(i), a.func == AggFunc::Max));
                    extrema_slots.push(slot);
                }
                (true, AggFunc::CountDistinct, Some(slot)) => {
                    distinct.push(layout.at(i));
                    distinct_slots.push(slot);
                }
                _ => {}
            }
        }
        GroupAggregate {
            table: AccTable::new(&layout),
            layout,
            extrema: Extrema::new(specs),
            extrema_slots,
            distinct: DistinctCounts::new(distinct),
            distinct_slots,
            values: ValueAggs::new(&plan.values, plan.retracts),
            shown: AggLayout::new(&plan.aggregates),
            format: LineFormat::new(&keys),
            old: Vec::new(),
            new: Vec::new(),
            counters: Counters::default(),
            partial: (Vec::new(), Sketches::default()),
        }
    }

    /// Rows of group row `r` (the hidden count, a wrapping word: never below zero here).
    fn rows(&self, r: usize) -> u64 {
        self.table.accs(r)[self.shown.words()]
    }

    /// Writes group row `r` (key `key`) as one JSON line into `out`.
    fn render(&self, r: usize, key: &[u8], out: &mut Vec<u8>) {
        out.clear();
        let accs = &self.table.accs(r)[..self.shown.words()];
        (self.format).write_row(key, None, &self.shown, accs, self.table.sketches(), out);
        if !self.values.is_empty() {
            self.values.write_fields(r, out);
        }
    }

    /// MIN and MAX over an updating input: `rec`'s values added to (or taken back from) group row
    /// `r`'s values, and the row's extremes set from them.
    fn take_extrema(&mut self, r: usize, rec: &Rec<'_>, back: bool) {
        for s in 0..self.extrema_slots.len() {
            let Some(n) = to_num(rec.value(self.extrema_slots[s])) else {
                continue;
            };
            let group = (rec.ev.hash, rec.key());
            self.extrema
                .apply(r, s, group, n, back, self.table.accs_mut(r));
        }
    }

    /// COUNT(DISTINCT) over an updating input: `rec`'s values counted in (or out of) group row
    /// `r`, a value's last row taking it out of the distinct counter.
    fn take_distinct(&mut self, r: usize, rec: &Rec<'_>, back: bool) {
        for s in 0..self.distinct_slots.len() {
            let Some(h) = distinct_hash(rec.value(self.distinct_slots[s])) else {
                continue;
            };
            let counter = self.table.accs(r)[self.distinct.word(s)];
            let group = (rec.ev.hash, rec.key());
            (self.distinct).apply((r, s), group, h, back, (counter, self.table.sketches_mut()));
        }
    }

    /// Emits what became of group row `r` (which held `before` rows and read `old` then) when
    /// `rec` arrived: `+I` for a new row, `-U`/`+U` for a changed one, nothing otherwise.
    fn emit_change(
        &mut self,
        r: usize,
        before: u64,
        old: Vec<u8>,
        rec: &Rec<'_>,
        out: &mut dyn Emitter,
    ) {
        let mut new = std::mem::take(&mut self.new);
        self.render(r, rec.key(), &mut new);
        if before == 0 {
            self.counters.fired += 1;
            self.emit(&new, RowKind::Insert, rec, out);
        } else if new != old {
            self.counters.fired += 1;
            self.counters.refired += 1;
            self.emit(&old, RowKind::UpdateBefore, rec, out);
            self.emit(&new, RowKind::UpdateAfter, rec, out);
        }
        self.old = old;
        self.new = new;
    }

    fn emit(&self, line: &[u8], kind: RowKind, rec: &Rec<'_>, out: &mut dyn Emitter) {
        out.emit(Output {
            line,
            ts: rec.ev.ts,
            cause: Some(rec.ev),
            key: rec.ev.hash,
            kind,
        });
    }
}

impl Operator for GroupAggregate {
    fn on_event(&mut self, rec: &Rec<'_>, _wm: i64, out: &mut dyn Emitter) {
        let retracts = rec.ev.flags & RETRACT != 0;
        let key = rec.key();
        let r = match self.table.find_key(rec.ev.hash, key) {
            Some(r) => r,
            // A retraction of a group without rows (its insert is elsewhere or was never seen):
            // ignored, as Flink ignores it.
            None if retracts => return,
            None => self.table.upsert_key(rec.ev.hash, key),
        };
        let before = self.rows(r);
        if before == 0 && retracts {
            return;
        }
        let mut old = std::mem::take(&mut self.old);
        if before > 0 {
            self.render(r, key, &mut old);
        }
        self.table.add_rec(rec, &self.layout);
        if !self.extrema.is_empty() {
            self.take_extrema(r, rec, retracts);
        }
        if !self.distinct.is_empty() {
            self.take_distinct(r, rec, retracts);
        }
        if !self.values.is_empty() {
            self.values.apply(r, rec.row().unwrap_or(b"{}"), retracts);
        }
        if self.rows(r) == 0 {
            self.table.clear_accs(r);
            self.extrema.clear(r);
            self.distinct.clear(r);
            self.values.clear(r);
            self.emit(&old, RowKind::Delete, rec, out);
            self.old = old;
            return;
        }
        self.emit_change(r, before, old, rec, out);
    }

    /// Phase two of `hot_keys`: merges the partial accumulators of a group's events, combined
    /// where they were read, and emits the one change they make together.
    fn on_partial(&mut self, rec: &Rec<'_>, _wm: i64, out: &mut dyn Emitter) -> Result<(), String> {
        if !(self.extrema.is_empty() && self.distinct.is_empty() && self.values.is_empty()) {
            return Err("a partial for a group aggregate over an updating input".into());
        }
        self.layout.decode_partial(rec.blob(), &mut self.partial)?;
        let key = rec.key();
        let r = self.table.upsert_key(rec.ev.hash, key);
        let before = self.rows(r);
        let mut old = std::mem::take(&mut self.old);
        if before > 0 {
            self.render(r, key, &mut old);
        }
        let (accs, sketches) = &self.partial;
        (self.table).merge_into(rec.ev.hash, key, accs, sketches, &self.layout);
        self.emit_change(r, before, old, rec, out);
        Ok(())
    }

    /// Nothing waits for the watermark: every row is emitted when its cause arrives.
    fn next_action(&self) -> i64 {
        crate::time::WM_MAX
    }

    fn snapshot(&self, e: &mut Enc) {
        self.counters.encode(e);
        self.table.encode(&self.layout, e);
        self.extrema.encode(e);
        self.distinct.encode(e);
        // Only with value aggregates: snapshots of jobs without them keep their old form.
        if !self.values.is_empty() {
            self.values.encode(&self.table, e);
        }
    }

    fn restore(
        &mut self,
        state: &[u8],
        keep: &dyn Fn(u64) -> bool,
        _wm: i64,
    ) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.counters.add_decoded(&mut d)?;
        self.table.decode(&self.layout, &mut d, keep)?;
        let table = &mut self.table;
        self.extrema
            .decode(&mut d, keep, &mut |hash, key| table.upsert_key(hash, key))?;
        self.distinct
            .decode(&mut d, keep, &mut |hash, key| table.upsert_key(hash, key))?;
        if !self.values.is_empty() {
            self.values
                .decode(&mut d, keep, &mut |hash, key| table.upsert_key(hash, key))?;
        }
        if !d.is_empty() {
            return Err("bytes after the group aggregate's state".into());
        }
        Ok(())
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        r.keys += self.table.len() as u64;
        r.state_bytes += (self.table.bytes()
            + self.extrema.bytes()
            + self.distinct.bytes()
            + self.values.bytes()) as u64;
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod value_tests;
