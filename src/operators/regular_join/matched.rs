//! The regular join with a condition beyond the key equality: a row matches the rows of its key
//! on the other side for which the condition holds, so whether a row of an outer side is
//! NULL-padded depends on the row, not on its key. Each held row counts its matches (Flink's
//! `StreamingJoinOperator` association counts, `OuterJoinRecordStateViews`): a row whose count
//! goes from 0 to 1 has its padded row taken back (`-D`), one whose count returns to 0 gets it
//! back (`+I`). The counts are not in checkpoints: a restore recounts them from the rows.

use super::state::{Slot, LEFT, RIGHT};
use super::{Change, RegularJoin};
use crate::operators::rows::write_pair;
use crate::operators::Emitter;
use crate::record::event::RowKind;

impl RegularJoin {
    /// Writes the pair of `c`'s row with the other side's row in `theirs` into `self.line`.
    fn write_with(&mut self, c: &Change<'_>, theirs: Slot) {
        let theirs = Some(self.bags.row(theirs));
        let (l, r) = if c.side == LEFT {
            (Some(c.row), theirs)
        } else {
            (theirs, Some(c.row))
        };
        write_pair(&mut self.line, &self.on, c.key, l, r);
    }

    /// Whether the condition holds for the pair in `self.line`.
    fn line_holds(&self) -> bool {
        self.condition.as_ref().is_some_and(|p| p.holds(&self.line))
    }

    /// Writes the pair of `c`'s row with `theirs` into `self.line`; whether the condition holds.
    fn pair_holds(&mut self, c: &Change<'_>, theirs: Slot) -> bool {
        self.write_with(c, theirs);
        self.line_holds()
    }

    /// An insert (`+I`/`+U`) of `c.row` on its side of key `k`, under the condition.
    pub(super) fn accumulate_matched(&mut self, k: u32, c: &Change<'_>, out: &mut dyn Emitter) {
        let (side, other) = (c.side, 1 - c.side);
        let (slot, new) = self.bags.add(k, side, c.row);
        self.join.buffered[side] += 1;
        self.join.peak[side] = self.join.peak[side].max(self.join.buffered[side]);
        self.bags.entries(k, other, &mut self.others);
        let others = std::mem::take(&mut self.others);
        let kind = self.made_kind(c);
        let mut found = 0;
        for &(theirs, n) in &others {
            if !self.pair_holds(c, theirs) {
                continue;
            }
            found += n;
            let had = self.bags.matches(theirs);
            self.bags.set_matches(theirs, had + 1);
            if self.outer[other] && had == 0 {
                self.emit(c, None, Some(theirs), RowKind::Delete, n, out);
                // The padded row took `self.line`: the pair again, to send it.
                self.write_with(c, theirs);
            }
            self.send(c.ev, kind, n, out);
        }
        self.others = others;
        if new {
            self.bags.set_matches(slot, found);
        }
        if self.outer[side] && found == 0 {
            self.emit(c, Some(c.row), None, RowKind::Insert, 1, out);
        }
    }

    /// A retraction (`-U`/`-D`) of `c.row` on its side of key `k`, under the condition.
    pub(super) fn retract_matched(&mut self, k: u32, c: &Change<'_>, out: &mut dyn Emitter) {
        let (side, other) = (c.side, 1 - c.side);
        if !self.bags.remove(k, side, c.row) {
            self.unknown += 1;
            return;
        }
        self.join.buffered[side] -= 1;
        self.bags.entries(k, other, &mut self.others);
        let others = std::mem::take(&mut self.others);
        let kind = self.taken_kind(c);
        let mut found = 0;
        for &(theirs, n) in &others {
            if !self.pair_holds(c, theirs) {
                continue;
            }
            found += n;
            self.send(c.ev, kind, n, out);
            let left = self.bags.matches(theirs).saturating_sub(1);
            self.bags.set_matches(theirs, left);
            if self.outer[other] && left == 0 {
                self.emit(c, None, Some(theirs), RowKind::Insert, n, out);
            }
        }
        self.others = others;
        if self.outer[side] && found == 0 {
            self.emit(c, Some(c.row), None, RowKind::Delete, 1, out);
        }
        self.bags.forget_if_empty(k);
    }

    /// Counts every held row's matches again (after a restore, which brings rows only).
    pub(super) fn recount(&mut self) {
        if self.condition.is_none() {
            return;
        }
        let mut rows = [Vec::new(), Vec::new()];
        for k in self.bags.held_keys() {
            self.bags.entries(k, LEFT, &mut rows[LEFT]);
            self.bags.entries(k, RIGHT, &mut rows[RIGHT]);
            let mut counts = [vec![0u64; rows[LEFT].len()], vec![0u64; rows[RIGHT].len()]];
            let key = self.bags.key(k).to_vec();
            for (i, &(l, ln)) in rows[LEFT].iter().enumerate() {
                for (j, &(r, rn)) in rows[RIGHT].iter().enumerate() {
                    let (lrow, rrow) = (self.bags.row(l), self.bags.row(r));
                    write_pair(&mut self.line, &self.on, &key, Some(lrow), Some(rrow));
                    if self.line_holds() {
                        counts[LEFT][i] += rn;
                        counts[RIGHT][j] += ln;
                    }
                }
            }
            for side in [LEFT, RIGHT] {
                for (&(slot, _), &n) in rows[side].iter().zip(&counts[side]) {
                    self.bags.set_matches(slot, n);
                }
            }
        }
    }
}
