//! Top-N over a whole stream (Flink's Rank, `ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) <= N`
//! without a window): per partition key, the `n` best rows among all the input holds now, kept
//! up to date as rows arrive and, over an updating input, as they are retracted.
//!
//! Rows are ordered as the window Top-N orders them (`top_n::order`): field by field, a NULL
//! below every value. Rows of an append-only input equal on every order field are ranked by
//! their source positions (a file's line order, a partition's offsets): the earlier first, as
//! Flink ranks them in arrival order, or the later first for keep-last deduplication, where
//! Flink's last arrival replaces; the same for one ordered input, and unlike arrival order, the
//! same on any number of shards. Over an updating input (whose retractions come from other
//! positions than their rows) ties are broken by the row's bytes, and equal rows are one entry
//! with a count of copies. Over an append-only input only the top `n` rows are kept (a row that
//! falls below them can never rise again); over an updating input every row is kept, since a
//! retraction may lift one into the top `n`, as Flink's retractable Top-N keeps them.
//!
//! Each change emits what changed in the partition's top `n`, comparing it before and after:
//! with a rank field, every rank whose row changed (`+I` for a rank filled, `-D` for one
//! emptied, `-U`/`+U` for a rank that now holds another row, as Flink's Top-N with row number);
//! without one, the row that entered and the row that left (`-U`/`+U` when one replaces the
//! other, as Flink's keep-last deduplication emits, else `+I` or `-D`). A retraction of a row
//! not held is counted and ignored. Output rows carry no event time, as in Flink.

pub mod config;
pub mod plan;

use super::keys::Keys;
use super::rows::{trim, RowId, RowStore};
use super::top_n::order::{rank_prefix, write_ranked, RowOrder, SortVal};
use super::{Counters, Emitter, Operator, Output};
use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::{JoinStats, OperatorReport};
use crate::record::event::{Event, Rec, RowKind, RETRACT};
use plan::RankPlan;

/// Where a row was read (partition, position, sub-position): the order of ties.
type Tie = (u16, u64, u64);

struct Entry {
    sort: Vec<SortVal>,
    /// Its source position over an append-only input; zero over an updating one.
    at: Tie,
    row: RowId,
    copies: u64,
}

/// A partition's rows, best first, and how many it holds (copies counted).
#[derive(Default)]
struct Part {
    rows: Vec<Entry>,
    held: u64,
}

pub struct Rank {
    n: usize,
    order: RowOrder,
    rank_prefix: Option<Vec<u8>>,
    keep_all: bool,
    later_first: bool,
    /// Partition keys; a key's index is its partition's in `parts`.
    keys: Keys,
    parts: Vec<Part>,
    store: RowStore,
    counters: Counters,
    /// `buffered[0]`: rows held (copies counted); `cleaned[0]`: rows dropped below the top `n`.
    join: JoinStats,
    /// Retractions of rows not held, ignored.
    unknown: u64,
    line: Vec<u8>,
    /// The partition's top `n` positions before and after a change.
    before: Vec<RowId>,
    after: Vec<RowId>,
    /// Rows no longer held, freed once the change is emitted.
    dropped: Vec<RowId>,
}

impl Rank {
    pub fn new(plan: &RankPlan) -> Rank {
        Rank {
            n: plan.n.max(1),
            order: RowOrder::new(&plan.order),
            rank_prefix: plan.rank_field.as_deref().map(rank_prefix),
            keep_all: plan.keep_all,
            later_first: plan.later_first,
            keys: Keys::default(),
            parts: Vec::new(),
            store: RowStore::default(),
            counters: Counters::default(),
            join: JoinStats::default(),
            unknown: 0,
            line: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            dropped: Vec::new(),
        }
    }

    /// Partition `k`'s top `n` positions (a row once per copy) into `out`.
    fn positions(&self, k: usize, out: &mut Vec<RowId>) {
        out.clear();
        for e in &self.parts[k].rows {
            for _ in 0..e.copies.min((self.n - out.len()) as u64) {
                out.push(e.row);
            }
            if out.len() >= self.n {
                break;
            }
        }
    }

    /// Where (`sort`, `at`, `row`) is or would be in partition `k`.
    fn find(&self, k: usize, sort: &[SortVal], at: Tie, row: &[u8]) -> Result<usize, usize> {
        self.parts[k].rows.binary_search_by(|e| {
            let tie = if self.later_first {
                at.cmp(&e.at)
            } else {
                e.at.cmp(&at)
            };
            (self.order.cmp_values(&e.sort, sort))
                .then(tie)
                .then_with(|| trim(self.store.get(e.row)).cmp(trim(row)))
        })
    }

    /// The tie order of `e`'s row: its source position over an append-only input.
    fn tie_of(&self, e: &Event) -> Tie {
        if self.keep_all {
            (0, 0, 0)
        } else {
            (e.part, e.pos, e.sub)
        }
    }

    /// Positions before entry `i` of partition `k` (copies counted), up to `n`.
    fn ranks_before(&self, k: usize, i: usize) -> u64 {
        let mut r = 0u64;
        for e in &self.parts[k].rows[..i] {
            r = r.saturating_add(e.copies);
            if r >= self.n as u64 {
                break;
            }
        }
        r
    }

    /// Adds `copies` of `row` to partition `k`; the position of its last new copy, or `None`
    /// when it is not kept (below the top `n` of an append-only input).
    fn put(
        &mut self,
        k: usize,
        sort: Vec<SortVal>,
        tie: Tie,
        row: &[u8],
        copies: u64,
    ) -> Option<u64> {
        let at = self.find(k, &sort, tie, row);
        let i = match at {
            Ok(i) | Err(i) => i,
        };
        let mut rank = self.ranks_before(k, i);
        if let Ok(i) = at {
            rank = rank.saturating_add(self.parts[k].rows[i].copies);
        }
        if !self.keep_all && rank >= self.n as u64 {
            self.join.cleaned[0] += copies;
            return None;
        }
        match at {
            Ok(i) => self.parts[k].rows[i].copies += copies,
            Err(i) => {
                let row = self.store.put(row);
                let e = Entry {
                    sort,
                    at: tie,
                    row,
                    copies,
                };
                self.parts[k].rows.insert(i, e);
            }
        }
        self.parts[k].held += copies;
        self.join.buffered[0] = self.join.buffered[0].saturating_add(copies);
        self.join.peak[0] = self.join.peak[0].max(self.join.buffered[0]);
        if !self.keep_all {
            self.trim(k);
        }
        Some(rank + copies - 1)
    }

    /// Drops partition `k`'s rows below its top `n` (an append-only input's cannot rise).
    fn trim(&mut self, k: usize) {
        let p = &mut self.parts[k];
        while p.held > self.n as u64 {
            let Some(last) = p.rows.last_mut() else {
                break;
            };
            let extra = (p.held - self.n as u64).min(last.copies);
            last.copies -= extra;
            p.held -= extra;
            self.join.buffered[0] -= extra;
            self.join.cleaned[0] += extra;
            if last.copies == 0 {
                if let Some(e) = p.rows.pop() {
                    self.dropped.push(e.row);
                }
            }
        }
    }

    /// Takes one copy of `row` back from partition `k`; the position it had, or `None` when
    /// it is not held.
    fn take(&mut self, k: usize, sort: &[SortVal], row: &[u8]) -> Option<u64> {
        let Ok(i) = self.find(k, sort, (0, 0, 0), row) else {
            self.unknown += 1;
            return None;
        };
        let rank = self.ranks_before(k, i) + self.parts[k].rows[i].copies - 1;
        let p = &mut self.parts[k];
        p.rows[i].copies -= 1;
        p.held -= 1;
        self.join.buffered[0] -= 1;
        if p.rows[i].copies == 0 {
            let e = p.rows.remove(i);
            self.dropped.push(e.row);
        }
        Some(rank)
    }

    fn send(
        &mut self,
        row: RowOrBytes<'_>,
        rank: usize,
        kind: RowKind,
        ev: &Event,
        out: &mut dyn Emitter,
    ) {
        let bytes = row.bytes(&self.store);
        write_ranked(&mut self.line, bytes, self.rank_prefix.as_deref(), rank + 1);
        self.counters.fired += 1;
        out.emit(Output {
            line: &self.line,
            ts: ev.ts,
            cause: Some(ev),
            key: ev.hash,
            kind,
        });
    }

    /// Emits every rank whose row differs between `before` and `after`.
    fn emit_ranks(&mut self, ev: &Event, out: &mut dyn Emitter) {
        let (before, after) = (
            std::mem::take(&mut self.before),
            std::mem::take(&mut self.after),
        );
        for j in 0..before.len().max(after.len()) {
            match (before.get(j), after.get(j)) {
                (Some(&b), Some(&a)) if self.store.get(b) != self.store.get(a) => {
                    self.send(RowOrBytes::Held(b), j, RowKind::UpdateBefore, ev, out);
                    self.send(RowOrBytes::Held(a), j, RowKind::UpdateAfter, ev, out);
                }
                (Some(&b), None) => self.send(RowOrBytes::Held(b), j, RowKind::Delete, ev, out),
                (None, Some(&a)) => self.send(RowOrBytes::Held(a), j, RowKind::Insert, ev, out),
                _ => {}
            }
        }
        (self.before, self.after) = (before, after);
    }

    /// Emits the row that left the top `n` and the row that entered it.
    fn emit_rows(
        &mut self,
        left: Option<RowOrBytes<'_>>,
        entered: Option<RowOrBytes<'_>>,
        ev: &Event,
        out: &mut dyn Emitter,
    ) {
        match (left, entered) {
            (Some(l), Some(e)) => {
                if l.bytes(&self.store) != e.bytes(&self.store) {
                    self.send(l, 0, RowKind::UpdateBefore, ev, out);
                    self.send(e, 0, RowKind::UpdateAfter, ev, out);
                }
            }
            (Some(l), None) => self.send(l, 0, RowKind::Delete, ev, out),
            (None, Some(e)) => self.send(e, 0, RowKind::Insert, ev, out),
            (None, None) => {}
        }
    }

    /// Frees the rows dropped by a change, and forgets partition `k` if it holds none.
    fn settle(&mut self, k: usize) {
        for id in self.dropped.drain(..) {
            self.store.drop_row(id);
        }
        if self.parts[k].held == 0 {
            self.parts[k] = Part::default();
            self.keys.remove(k as u32);
        }
    }
}

#[derive(Clone, Copy)]
enum RowOrBytes<'a> {
    Held(RowId),
    Bytes(&'a [u8]),
}

impl<'a> RowOrBytes<'a> {
    /// The row's bytes (a held row's from `store`).
    fn bytes(self, store: &'a RowStore) -> &'a [u8] {
        match self {
            RowOrBytes::Held(id) => store.get(id),
            RowOrBytes::Bytes(b) => b,
        }
    }
}

impl Operator for Rank {
    fn on_event(&mut self, r: &Rec<'_>, _wm: i64, out: &mut dyn Emitter) {
        let e = r.ev;
        let row = trim(r.row().unwrap_or(b"{}"));
        let retracts = e.flags & RETRACT != 0;
        let k = if retracts {
            match self.keys.find(e.hash, r.key()) {
                Some(k) => k as usize,
                None => {
                    self.unknown += 1;
                    return;
                }
            }
        } else {
            self.keys.intern(e.hash, r.key()).0 as usize
        };
        if self.parts.len() <= k {
            self.parts.resize_with(k + 1, Part::default);
        }
        let sort = self.order.key(row);
        let mut before = std::mem::take(&mut self.before);
        self.positions(k, &mut before);
        let was_full = before.len() == self.n;
        let last_before = before.last().copied();
        self.before = before;
        let rank = if retracts {
            self.take(k, &sort, row)
        } else {
            let tie = self.tie_of(e);
            self.put(k, sort, tie, row, 1)
        };
        if rank.is_some_and(|r| r < self.n as u64) {
            let mut after = std::mem::take(&mut self.after);
            self.positions(k, &mut after);
            let full_after = after.len() == self.n;
            let last_after = after.last().copied();
            self.after = after;
            if self.rank_prefix.is_some() {
                self.emit_ranks(e, out);
            } else if retracts {
                let entered = full_after
                    .then_some(())
                    .and(last_after)
                    .map(RowOrBytes::Held);
                self.emit_rows(Some(RowOrBytes::Bytes(row)), entered, e, out);
            } else {
                let left = was_full
                    .then_some(())
                    .and(last_before)
                    .map(RowOrBytes::Held);
                self.emit_rows(left, Some(RowOrBytes::Bytes(row)), e, out);
            }
        }
        self.settle(k);
    }

    fn prefetch(&self, ev: &Event, stage: u8) {
        self.keys.prefetch(ev.hash, stage);
    }

    /// Nothing waits for the watermark: every change is emitted when its cause arrives.
    fn next_action(&self) -> i64 {
        crate::time::WM_MAX
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        let entries: usize = self.parts.iter().map(|p| p.rows.capacity()).sum();
        let per_entry = std::mem::size_of::<Entry>() + 40 * self.order.len();
        let state = (entries * per_entry + self.parts.capacity() * std::mem::size_of::<Part>())
            as u64
            + self.keys.bytes()
            + self.store.bytes().1;
        r.keys += self.keys.len() as u64;
        r.state_bytes += state;
        r.rows.get_or_insert_with(Default::default).add(&JoinStats {
            state_bytes: state,
            ..self.join
        });
    }

    fn snapshot(&self, e: &mut Enc) {
        self.counters.encode(e);
        e.u64(self.unknown);
        let held: Vec<u32> = (0..self.keys.slots())
            .filter(|&k| {
                self.keys.get(k).is_some() && self.parts.get(k as usize).is_some_and(|p| p.held > 0)
            })
            .collect();
        e.u64(held.len() as u64);
        for k in held {
            let Some((hash, key)) = self.keys.get(k) else {
                continue;
            };
            e.u64(hash);
            e.bytes(key);
            let rows = &self.parts[k as usize].rows;
            e.u64(rows.len() as u64);
            for r in rows {
                e.u64(r.copies);
                e.u32(u32::from(r.at.0));
                e.u64(r.at.1);
                e.u64(r.at.2);
                e.bytes(self.store.get(r.row));
            }
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
        self.unknown = self.unknown.saturating_add(d.u64("unknown retractions")?);
        let n = d.count(24, "rank partitions")?;
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let rows = d.count(36, "rank rows")?;
            let k = keep(hash).then(|| self.keys.intern(hash, key).0 as usize);
            if let Some(k) = k {
                if self.parts.len() <= k {
                    self.parts.resize_with(k + 1, Part::default);
                }
                if self.parts[k].held > 0 {
                    return Err("a rank partition appears twice".into());
                }
            }
            for _ in 0..rows {
                let copies = d.u64("copies")?;
                let part = u16::try_from(d.u32("partition")?).map_err(|_| "partition index")?;
                let tie = (part, d.u64("position")?, d.u64("position")?);
                let row = d.bytes("row")?;
                if copies == 0 || copies > u64::MAX / 4 {
                    return Err("a ranked row with no copies or too many".into());
                }
                if let Some(k) = k {
                    if self.parts[k].held.checked_add(copies).is_none() {
                        return Err("a rank partition holds more rows than can be counted".into());
                    }
                    let sort = self.order.key(row);
                    self.put(k, sort, tie, row, copies);
                }
            }
            if let Some(k) = k {
                self.settle(k);
            }
        }
        if !d.is_empty() {
            return Err("bytes after the rank state".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
