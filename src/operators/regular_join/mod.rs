//! Flink's regular join without a state TTL: rows of `left` and `right` with equal `on` fields
//! match whenever both are held, whatever their times, and every row is held until a retraction
//! takes it back, so state grows with the rows ever inserted, as Flink's does.
//!
//! Both inputs may be updating (a group aggregate's result, another join's): a `-U`/`-D` row
//! takes back one copy of an equal row held on its side and the pairs it made. Output kinds are
//! Flink's `StreamingJoinOperator`'s: a pair made by an insert is `+I` (or the input's `+U` where
//! neither side is outer), a pair taken back by a retraction is `-D` (or the input's `-U`). In an
//! outer kind a row of the preserved side with no match is emitted NULL-padded (`+I`), and that
//! padded row is taken back (`-D`) when its first match arrives and emitted again when its last
//! match is retracted. With equality conditions only, whether a row has a match is whether the
//! other side holds any row of its key, so the state counts rows per key and side instead of
//! Flink's per-row association counts. A row whose key is missing or null never matches (SQL
//! NULL) and is not held: an outer side emits it padded, and its retraction takes that back.
//!
//! One difference from Flink: a retraction of a row this join does not hold (its insert never
//! arrived) is counted and ignored, where Flink would emit retractions of pairs it never made.
//!
//! With a `condition` (an outer join's ON condition reading both sides), rows match per row
//! instead, with per-row match counts as Flink keeps them (`matched`).
//!
//! Output: the `on` fields, then both records, an absent side `null`, as the interval join's:
//! `{"id":7,"left":{...},"right":null}`.

mod condition;
pub mod config;
mod matched;
pub mod plan;
mod state;

use super::rows::write_pair;
use super::{BuildCtx, Counters, Emitter, Operator, Output};
use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::{JoinStats, OperatorReport};
use crate::record::event::{Event, Rec, RowKind, NULL_KEY, RETRACT};
use condition::Condition;
use plan::RegularJoinPlan;
use state::{Bags, Slot, LEFT, RIGHT};

pub struct RegularJoin {
    on: Vec<String>,
    /// Emit unmatched rows of (left, right), NULL-padded.
    outer: [bool; 2],
    /// A condition beyond the key equality: rows then match per row (`matched`).
    condition: Option<Condition>,
    first_port: u16,
    bags: Bags,
    counters: Counters,
    join: JoinStats,
    /// Retractions of rows not held, ignored.
    unknown: u64,
    line: Vec<u8>,
    /// The other side's rows of a key, copied out so pairs can be written while state changes.
    others: Vec<(Slot, u64)>,
}

/// What one event does: its side, key, row, whether it retracts, and its kind.
struct Change<'a> {
    side: usize,
    key: &'a [u8],
    row: &'a [u8],
    kind: RowKind,
    ev: &'a Event,
}

impl RegularJoin {
    pub fn new(plan: &RegularJoinPlan, ctx: BuildCtx) -> RegularJoin {
        RegularJoin {
            on: plan.on.iter().map(|p| p.as_str().to_string()).collect(),
            outer: plan.outer,
            condition: plan.condition.as_deref().map(Condition::new),
            first_port: ctx.first_port,
            bags: Bags::default(),
            counters: Counters::default(),
            join: JoinStats::default(),
            unknown: 0,
            line: Vec::new(),
            others: Vec::new(),
        }
    }

    /// Writes and emits `times` times the output row of `c`'s side: `mine` (its own row) and
    /// `theirs` (a held row of the other side), either absent (NULL-padded).
    fn emit(
        &mut self,
        c: &Change<'_>,
        mine: Option<&[u8]>,
        theirs: Option<Slot>,
        kind: RowKind,
        times: u64,
        out: &mut dyn Emitter,
    ) {
        let theirs = theirs.map(|s| self.bags.row(s));
        let (l, r) = if c.side == LEFT {
            (mine, theirs)
        } else {
            (theirs, mine)
        };
        write_pair(&mut self.line, &self.on, c.key, l, r);
        self.send(c.ev, kind, times, out);
    }

    fn send(&mut self, ev: &Event, kind: RowKind, times: u64, out: &mut dyn Emitter) {
        for _ in 0..times {
            self.counters.fired += 1;
            out.emit(Output {
                line: &self.line,
                ts: ev.ts,
                cause: Some(ev),
                key: ev.hash,
                kind,
            });
        }
    }

    /// The kind of a pair `c` makes: `+I`, or the input's own kind (`+U`) where neither side is
    /// outer (Flink's `StreamingJoinOperator`).
    fn made_kind(&self, c: &Change<'_>) -> RowKind {
        if self.outer[LEFT] || self.outer[RIGHT] {
            RowKind::Insert
        } else {
            c.kind
        }
    }

    /// The kind of a pair `c` takes back: `-D` where `c`'s side is outer, else its own (`-U`).
    fn taken_kind(&self, c: &Change<'_>) -> RowKind {
        if self.outer[c.side] {
            RowKind::Delete
        } else {
            c.kind
        }
    }

    /// An insert (`+I`/`+U`) of `c.row` on its side of key `k`.
    fn accumulate(&mut self, k: u32, c: &Change<'_>, out: &mut dyn Emitter) {
        let (side, other) = (c.side, 1 - c.side);
        let held = self.bags.rows(k);
        self.bags.add(k, side, c.row);
        self.join.buffered[side] += 1;
        self.join.peak[side] = self.join.peak[side].max(self.join.buffered[side]);
        if held[other] == 0 {
            if self.outer[side] {
                self.emit(c, Some(c.row), None, RowKind::Insert, 1, out);
            }
            return;
        }
        self.bags.entries(k, other, &mut self.others);
        let others = std::mem::take(&mut self.others);
        // The other side's rows lose their NULL-padded rows when they get their first match.
        if self.outer[other] && held[side] == 0 {
            for &(slot, n) in &others {
                self.emit(c, None, Some(slot), RowKind::Delete, n, out);
            }
        }
        let kind = self.made_kind(c);
        for &(slot, n) in &others {
            self.emit(c, Some(c.row), Some(slot), kind, n, out);
        }
        self.others = others;
    }

    /// A retraction (`-U`/`-D`) of `c.row` on its side of key `k`.
    fn retract(&mut self, k: u32, c: &Change<'_>, out: &mut dyn Emitter) {
        let (side, other) = (c.side, 1 - c.side);
        if !self.bags.remove(k, side, c.row) {
            self.unknown += 1;
            return;
        }
        self.join.buffered[side] -= 1;
        let held = self.bags.rows(k);
        if held[other] == 0 {
            if self.outer[side] {
                self.emit(c, Some(c.row), None, RowKind::Delete, 1, out);
            }
            self.bags.forget_if_empty(k);
            return;
        }
        self.bags.entries(k, other, &mut self.others);
        let others = std::mem::take(&mut self.others);
        let kind = self.taken_kind(c);
        for &(slot, n) in &others {
            self.emit(c, Some(c.row), Some(slot), kind, n, out);
        }
        // The other side's rows get their NULL-padded rows back when they lose their last match.
        if self.outer[other] && held[side] == 0 {
            for &(slot, n) in &others {
                self.emit(c, None, Some(slot), RowKind::Insert, n, out);
            }
        }
        self.others = others;
    }
}

impl Operator for RegularJoin {
    fn on_event(&mut self, r: &Rec<'_>, _wm: i64, out: &mut dyn Emitter) {
        let e = r.ev;
        let c = Change {
            side: usize::from(e.port.wrapping_sub(self.first_port) == 1),
            key: r.key(),
            row: super::rows::trim(r.row().unwrap_or(b"{}")),
            kind: RowKind::of_flags(e.flags),
            ev: e,
        };
        let retracts = e.flags & RETRACT != 0;
        if e.flags & NULL_KEY != 0 {
            self.join.null_keys += 1;
            if self.outer[c.side] {
                let kind = if retracts {
                    RowKind::Delete
                } else {
                    RowKind::Insert
                };
                self.emit(&c, Some(c.row), None, kind, 1, out);
            }
            return;
        }
        let matched = self.condition.is_some();
        if retracts {
            match self.bags.find_key(e.hash, c.key) {
                Some(k) if matched => self.retract_matched(k, &c, out),
                Some(k) => self.retract(k, &c, out),
                None => self.unknown += 1,
            }
        } else {
            let k = self.bags.intern(e.hash, c.key);
            if matched {
                self.accumulate_matched(k, &c, out);
            } else {
                self.accumulate(k, &c, out);
            }
        }
    }

    fn prefetch(&self, ev: &Event, stage: u8) {
        if ev.flags & NULL_KEY == 0 {
            self.bags.prefetch(ev.hash, stage);
        }
    }

    /// Nothing waits for the watermark: every pair is emitted when its later row arrives.
    fn next_action(&self) -> i64 {
        crate::time::WM_MAX
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        let state = self.bags.bytes();
        r.keys += self.bags.keys() as u64;
        r.state_bytes += state;
        r.rows.get_or_insert_with(Default::default).add(&JoinStats {
            state_bytes: state,
            ..self.join
        });
    }

    fn snapshot(&self, e: &mut Enc) {
        self.counters.encode(e);
        e.u64(self.unknown);
        self.bags.encode(e);
    }

    fn restore(
        &mut self,
        state: &[u8],
        keep: &dyn Fn(u64) -> bool,
        _wm: i64,
    ) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.counters.add_decoded(&mut d)?;
        self.unknown += d.u64("unknown retractions")?;
        let added = self.bags.decode(&mut d, keep)?;
        for side in [LEFT, RIGHT] {
            self.join.buffered[side] = self.join.buffered[side].saturating_add(added[side]);
            self.join.peak[side] = self.join.peak[side].max(self.join.buffered[side]);
        }
        if !d.is_empty() {
            return Err("bytes after the join state".into());
        }
        self.recount();
        Ok(())
    }
}

#[cfg(test)]
mod condition_tests;
#[cfg(test)]
mod tests;
