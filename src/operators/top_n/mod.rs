//! Top-N in event time (Flink's window Top-N): per partition key and event time, the `n` best
//! rows by the order fields, emitted once the watermark (the minimum over this operator's own
//! inputs) has passed that time, best first, each with its rank. After a window, every result of
//! one window carries the same time (`window_end - 1`) and the window emits them all before it
//! forwards the watermark that fired them, so a window's rows are complete when they are ranked.
//!
//! Owns, per (key, time), at most `n` rows by value: a row that cannot make the top `n` is never
//! held. Ties on every order field are broken by the row's bytes, so the ranking is a function
//! of the rows, not of their arrival order (Flink's ROW_NUMBER leaves ties in arrival order). A
//! NULL (or missing) order field sorts below every value. A row behind the watermark on arrival
//! is late: counted and sent to the late side output if there is one. Output: the row as read,
//! with `"<rank_field>":<rank>` added when a rank field is named, at the group's time.

pub mod config;
pub mod order;
pub mod plan;

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::keys::Keys;
use super::rows::{get, put, RowId, RowStore};
use super::{Counters, Emitter, Operator, Output};
use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::{JoinStats, OperatorReport};
use crate::plan::TopNPlan;
use crate::record::event::{Event, Rec, RowKind};
use order::{rank_prefix, write_ranked, RowOrder, SortVal};

struct Entry {
    sort: Vec<SortVal>,
    row: RowId,
}

/// The rows held for one (time, key): best first, at most `n`.
struct Group {
    hash: u64,
    rows: Vec<Entry>,
}

pub struct TopN {
    n: usize,
    order: RowOrder,
    /// `,"<rank_field>":` once rendered, if a rank is written.
    rank_prefix: Option<Vec<u8>>,
    /// Partition keys, with how many groups each has open.
    keys: Keys<u32>,
    groups: BTreeMap<(i64, u32), Group>,
    store: RowStore,
    wm: i64,
    counters: Counters,
    /// `buffered[0]`: rows held; `cleaned[0]`: rows that fell out of a top `n`.
    join: JoinStats,
    line: Vec<u8>,
}

impl TopN {
    pub fn new(plan: &TopNPlan) -> TopN {
        let rank_prefix = plan.rank_field.as_deref().map(rank_prefix);
        TopN {
            n: plan.n.max(1),
            order: RowOrder::new(&plan.order),
            rank_prefix,
            keys: Keys::default(),
            groups: BTreeMap::new(),
            store: RowStore::default(),
            wm: i64::MIN,
            counters: Counters::default(),
            join: JoinStats::default(),
            line: Vec::new(),
        }
    }

    /// Offers `row` of key (`hash`, `key`) at `t` to its group.
    fn offer(&mut self, hash: u64, key: &[u8], t: i64, row: &[u8]) {
        let sort = self.order.key(row);
        let (k, _) = self.keys.intern(hash, key);
        let full = self.groups.get(&(t, k)).map_or(0, |g| g.rows.len()) >= self.n;
        let at = match self.groups.get(&(t, k)) {
            Some(g) => g
                .rows
                .iter()
                .position(|e| {
                    self.order.cmp(&sort, row, &e.sort, self.store.get(e.row)) == Ordering::Less
                })
                .unwrap_or(g.rows.len()),
            None => 0,
        };
        if full && at >= self.n {
            self.join.cleaned[0] += 1;
            if self.keys.value(k) == 0 {
                self.keys.remove(k);
            }
            return;
        }
        let id = self.store.put(row);
        let new_group = !self.groups.contains_key(&(t, k));
        if new_group {
            *self.keys.value_mut(k) += 1;
        }
        let g = self.groups.entry((t, k)).or_insert_with(|| Group {
            hash,
            rows: Vec::with_capacity(self.n.min(16)),
        });
        g.rows.insert(at, Entry { sort, row: id });
        self.join.buffered[0] += 1;
        if g.rows.len() > self.n {
            if let Some(out) = g.rows.pop() {
                self.store.drop_row(out.row);
                self.join.buffered[0] -= 1;
                self.join.cleaned[0] += 1;
            }
        }
        self.join.peak[0] = self.join.peak[0].max(self.join.buffered[0]);
    }

    fn emit_group(&mut self, t: i64, k: u32, g: Group, out: &mut dyn Emitter) {
        for (rank, e) in g.rows.into_iter().enumerate() {
            write_ranked(
                &mut self.line,
                self.store.get(e.row),
                self.rank_prefix.as_deref(),
                rank + 1,
            );
            self.store.drop_row(e.row);
            self.join.buffered[0] -= 1;
            self.counters.fired += 1;
            out.emit(Output {
                line: &self.line,
                ts: t,
                cause: None,
                key: g.hash,
                kind: RowKind::Insert,
            });
        }
        let open = self.keys.value_mut(k);
        *open -= 1;
        if *open == 0 {
            self.keys.remove(k);
        }
    }
}

impl Operator for TopN {
    fn on_event(&mut self, r: &Rec<'_>, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let e = r.ev;
        if e.ts <= self.wm {
            self.counters.late_dropped += 1;
            self.join.late[0] += 1;
            out.late(r);
            return;
        }
        let row = r.row().unwrap_or(b"{}");
        self.offer(e.hash, r.key(), e.ts, row);
    }

    fn prefetch(&self, ev: &Event, stage: u8) {
        self.keys.prefetch(ev.hash, stage);
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        while let Some(entry) = self.groups.first_entry() {
            let (t, k) = *entry.key();
            if t > wm {
                break;
            }
            let g = entry.remove();
            self.emit_group(t, k, g, out);
        }
    }

    fn next_action(&self) -> i64 {
        self.groups.keys().next().map_or(i64::MAX, |(t, _)| *t)
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        let entries = self.join.buffered[0] * (24 + 16 * self.order.len() as u64);
        let state =
            entries + self.groups.len() as u64 * 64 + self.keys.bytes() + self.store.bytes().1;
        r.open += self.groups.len() as u64;
        r.keys += self.join.buffered[0];
        r.state_bytes += state;
        r.rows.get_or_insert_with(Default::default).add(&JoinStats {
            state_bytes: state,
            ..self.join
        });
    }

    fn snapshot(&self, e: &mut Enc) {
        self.counters.encode(e);
        e.u64(self.groups.len() as u64);
        for (&(t, k), g) in &self.groups {
            let (hash, key) = self.keys.get(k).unwrap_or((g.hash, &[]));
            e.u64(hash);
            e.bytes(key);
            e.u64(g.rows.len() as u64);
            for r in &g.rows {
                put(e, t, self.store.get(r.row));
            }
        }
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.wm = self.wm.max(wm);
        self.counters.add_decoded(&mut d)?;
        let groups = d.count(24, "top-n groups")?;
        for _ in 0..groups {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let rows = d.count(16, "top-n rows")?;
            for _ in 0..rows {
                let (t, row) = get(&mut d)?;
                if keep(hash) {
                    self.offer(hash, key, t, row);
                }
            }
        }
        if !d.is_empty() {
            return Err("bytes after the top-n state".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
