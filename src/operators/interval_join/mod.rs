//! The event-time interval join: a left row at `tl` and a right row at `tr` of the same key match
//! when `lower <= tr - tl <= upper`.
//!
//! Owns, per key, the rows of each side that can still match, by value (`rows::RowStore`), so
//! it works on every source kind and on other operators' output. A row is matched against the
//! other side's held rows when it arrives (every match is emitted then, once, with the later of the
//! two times), and is held only while a match is still possible: a left row until the watermark
//! (the minimum over this join's own inputs) reaches `tl + upper`, a right row until it reaches
//! `tr - lower` — later rows of the other side would be behind the watermark, which makes them
//! late. At that moment the row is dropped, and in an outer kind emitted unmatched if it never
//! matched, exactly once, with its own time (the plan holds the watermark this join passes on
//! back by as much, so that row is not late downstream). A row behind the watermark on arrival is
//! late and counted, but still matched against the other side's rows held at that moment, and held
//! itself if a later row could still match it, as Flink's interval join does; one that can be
//! neither held nor matched is counted as dropped and sent to the late side output if there is one
//! (in an outer kind it is also emitted unmatched). A row whose key is missing or
//! null never matches (SQL NULL): an inner join drops it, an outer one emits it unmatched at once.
//! State is therefore bounded by rate x bound per side, whatever the run length.
//!
//! Output: the `on` fields, then both records:
//! `{"imp_id":"i-1","left":{...the impression...},"right":{...the click...}}`; an unmatched side is
//! `null`.

pub mod config;
pub mod plan;

use super::keys::Keys;
use super::rows::{get, put, write_pair, RowId, RowStore, Slab, PREFETCH_AHEAD};
use super::timers::{Timer, Timers};
use super::{BuildCtx, Counters, Emitter, Operator, Output};
use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::{JoinStats, OperatorReport};
use crate::plan::IntervalJoinPlan;
use crate::record::event::{Event, Rec, RowKind, NULL_KEY};

const LEFT: usize = 0;
const RIGHT: usize = 1;

/// No row: the end of a key's list.
const NIL: u32 = u32::MAX;

/// A held row, in a slab slot, linked into its key's list for its side (arrival order).
#[derive(Debug, Clone, Copy)]
struct Row {
    ts: i64,
    row: RowId,
    key: u32,
    next: u32,
    prev: u32,
    side: u8,
    matched: bool,
}

/// A key's rows per side: (first, last) slot of each list; kept in the key's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lists([[u32; 2]; 2]);

const EMPTY: Lists = Lists([[NIL; 2]; 2]);

impl Default for Lists {
    fn default() -> Lists {
        EMPTY
    }
}

pub struct IntervalJoin {
    on: Vec<String>,
    lower: i64,
    upper: i64,
    /// Emit unmatched rows of (left, right).
    outer: [bool; 2],
    first_port: u16,
    /// Per key, its rows' lists.
    keys: Keys<Lists>,
    /// Held rows by slot (a `Vec` per key cost an allocation per new key and a cache miss more
    /// per row).
    slab: Slab<Row>,
    store: RowStore,
    /// Each held row's expiry (`tag` is its slot): rows leave only through it, in its order.
    cleanup: Timers,
    /// The timers due in this watermark step (kept to reuse its buffer).
    due: Vec<Timer>,
    next_id: u64,
    /// Keys whose last row was cleaned up in this watermark step.
    emptied: Vec<u32>,
    wm: i64,
    counters: Counters,
    join: JoinStats,
    line: Vec<u8>,
}

impl IntervalJoin {
    pub fn new(plan: &IntervalJoinPlan, ctx: BuildCtx) -> IntervalJoin {
        IntervalJoin {
            on: plan.on.iter().map(|p| p.as_str().to_string()).collect(),
            lower: plan.lower_ms,
            upper: plan.upper_ms,
            outer: plan.outer,
            first_port: ctx.first_port,
            keys: Keys::default(),
            slab: Slab::default(),
            store: RowStore::default(),
            cleanup: Timers::default(),
            due: Vec::new(),
            next_id: 0,
            emptied: Vec::new(),
            wm: i64::MIN,
            counters: Counters::default(),
            join: JoinStats::default(),
            line: Vec::new(),
        }
    }

    fn intern(&mut self, hash: u64, key: &[u8]) -> u32 {
        self.keys.intern(hash, key).0
    }

    fn is_empty(&self, k: u32) -> bool {
        self.keys.value(k) == EMPTY
    }

    /// Takes row `slot` out of its key's list and frees the slot.
    fn unlink(&mut self, slot: u32) -> Row {
        let r = self.slab.remove(slot);
        let list = &mut self.keys.value_mut(r.key).0[r.side as usize];
        match r.prev {
            NIL => list[0] = r.next,
            p => self.slab.at(p).next = r.next,
        }
        match r.next {
            NIL => list[1] = r.prev,
            n => self.slab.at(n).prev = r.prev,
        }
        r
    }

    /// Key `k`'s rows of `side`, in arrival order.
    fn list(&self, k: u32, side: usize) -> impl Iterator<Item = &Row> + Clone {
        let mut at = self.keys.value(k).0[side][0];
        std::iter::from_fn(move || {
            let r = self.slab.get(at)?;
            at = r.next;
            Some(r)
        })
    }

    /// When a row of `side` at `ts` can no longer match.
    fn expiry(&self, side: usize, ts: i64) -> i64 {
        if side == LEFT {
            ts.saturating_add(self.upper)
        } else {
            ts.saturating_sub(self.lower)
        }
    }

    fn matches(&self, side: usize, ts: i64, other: i64) -> bool {
        let (tl, tr) = if side == LEFT {
            (ts, other)
        } else {
            (other, ts)
        };
        let d = tr.saturating_sub(tl);
        self.lower <= d && d <= self.upper
    }

    fn hold(&mut self, k: u32, side: usize, ts: i64, row: &[u8], matched: bool) {
        let id = self.next_id;
        self.next_id += 1;
        let row = self.store.put(row);
        let last = self.keys.value(k).0[side][1];
        let held = Row {
            ts,
            row,
            key: k,
            next: NIL,
            prev: last,
            side: side as u8,
            matched,
        };
        let slot = self.slab.insert(held);
        match last {
            NIL => self.keys.value_mut(k).0[side][0] = slot,
            l => self.slab.at(l).next = slot,
        }
        self.keys.value_mut(k).0[side][1] = slot;
        self.cleanup.push(Timer {
            at: self.expiry(side, ts),
            id,
            key: k,
            tag: slot,
        });
        self.join.buffered[side] += 1;
        self.join.peak[side] = self.join.peak[side].max(self.join.buffered[side]);
    }

    /// A row that can never match: emitted unmatched in an outer kind.
    #[allow(clippy::too_many_arguments)]
    fn unmatched(
        &mut self,
        side: usize,
        key: &[u8],
        row: &[u8],
        ts: i64,
        cause: Option<&Event>,
        hash: u64,
        out: &mut dyn Emitter,
    ) {
        if !self.outer[side] {
            return;
        }
        let (l, r) = if side == LEFT {
            (Some(row), None)
        } else {
            (None, Some(row))
        };
        write_pair(&mut self.line, &self.on, key, l, r);
        self.send(ts, cause, hash, out);
    }

    fn send(&mut self, ts: i64, cause: Option<&Event>, key: u64, out: &mut dyn Emitter) {
        self.counters.fired += 1;
        out.emit(Output {
            line: &self.line,
            ts,
            cause,
            key,
            kind: RowKind::Insert,
        });
    }
}

impl Operator for IntervalJoin {
    fn on_event(&mut self, r: &Rec<'_>, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let e = r.ev;
        let side = usize::from(e.port.wrapping_sub(self.first_port) == 1);
        // Behind the watermark, a row still meets the other side's rows held now (as in Flink):
        // it can only have missed pairs with rows already dropped.
        let late = e.ts <= self.wm;
        if late {
            self.join.late[side] += 1;
        }
        let row = r.row().unwrap_or(b"{}");
        if e.flags & NULL_KEY != 0 {
            self.join.null_keys += 1;
            self.unmatched(side, r.key(), row, e.ts, Some(e), e.hash, out);
            return;
        }
        let k = self.intern(e.hash, r.key());
        let other = 1 - side;
        let mut matched = false;
        let mut at = self.keys.value(k).0[other][0];
        while at != NIL {
            let o = *self.slab.at(at);
            let this = at;
            at = o.next;
            if !self.matches(side, e.ts, o.ts) {
                continue;
            }
            matched = true;
            self.slab.at(this).matched = true;
            let held = self.store.get(o.row);
            let (l, rr) = if side == LEFT {
                (row, held)
            } else {
                (held, row)
            };
            write_pair(&mut self.line, &self.on, r.key(), Some(l), Some(rr));
            self.send(e.ts.max(o.ts), Some(e), e.hash, out);
        }
        if self.expiry(side, e.ts) <= self.wm {
            // Nothing can match it any more: it is done at once. A late one that met nothing
            // is lost to the join (it may have missed pairs): it goes to the late output. One
            // that matched is in the output already, so it is not sent there too.
            if late && !matched {
                self.counters.late_dropped += 1;
                out.late(r);
            }
            self.join.cleaned[side] += 1;
            if !matched {
                self.unmatched(side, r.key(), row, e.ts, Some(e), e.hash, out);
            }
            if self.is_empty(k) {
                self.keys.remove(k);
            }
            return;
        }
        self.hold(k, side, e.ts, row, matched);
    }

    fn prefetch(&self, ev: &Event, stage: u8) {
        if ev.flags & NULL_KEY == 0 {
            self.keys.prefetch(ev.hash, stage);
        }
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.cleanup.take_due(wm, &mut due);
        for (i, &Timer { key: k, tag, .. }) in due.iter().enumerate() {
            // The rows and keys due are known ahead: overlap their cache misses.
            if let Some(a) = due.get(i + PREFETCH_AHEAD) {
                self.slab.prefetch(a.tag);
                self.keys.prefetch_slot(a.key);
            }
            if let Some(a) = due.get(i + PREFETCH_AHEAD / 2) {
                self.keys.prefetch_removal(a.key);
            }
            let row = self.unlink(tag);
            let side = usize::from(row.side);
            if self.is_empty(k) {
                // Its key index is emitted below and then reused.
                self.emptied.push(k);
            }
            self.join.buffered[side] -= 1;
            self.join.cleaned[side] += 1;
            if !row.matched && self.outer[side] {
                let (hash, key) = self.keys.get(k).unwrap_or((0, &[]));
                let bytes = self.store.get(row.row);
                let (l, r) = if side == LEFT {
                    (Some(bytes), None)
                } else {
                    (None, Some(bytes))
                };
                write_pair(&mut self.line, &self.on, key, l, r);
                self.send(row.ts, None, hash, out);
            }
            self.store.drop_row(row.row);
        }
        self.due = due;
        // A key with no rows left is forgotten, so the key index is bounded like the rows are.
        for k in std::mem::take(&mut self.emptied) {
            if self.is_empty(k) {
                self.keys.remove(k);
            }
        }
    }

    fn next_action(&self) -> i64 {
        self.cleanup.next()
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        let rows = self.join.buffered[0] + self.join.buffered[1];
        // Allocated, not live: none of these shrink, so this is the high-water mark.
        let state =
            self.slab.bytes() + self.cleanup.bytes() + self.keys.bytes() + self.store.bytes().1;
        r.open += self.cleanup.len() as u64;
        r.keys += rows;
        r.state_bytes += state;
        r.rows.get_or_insert_with(Default::default).add(&JoinStats {
            state_bytes: state,
            ..self.join
        });
    }

    fn snapshot(&self, e: &mut Enc) {
        self.counters.encode(e);
        let held: Vec<u32> = (0..self.keys.slots())
            .filter(|&k| self.keys.get(k).is_some() && !self.is_empty(k))
            .collect();
        e.u64(held.len() as u64);
        for k in held {
            let Some((hash, key)) = self.keys.get(k) else {
                continue;
            };
            e.u64(hash);
            e.bytes(key);
            for side in [LEFT, RIGHT] {
                let rows = self.list(k, side);
                e.u64(rows.clone().count() as u64);
                for r in rows {
                    put(e, r.ts, self.store.get(r.row));
                    e.u8(u8::from(r.matched));
                }
            }
        }
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.wm = self.wm.max(wm);
        self.counters.add_decoded(&mut d)?;
        let n = d.count(33, "join keys")?;
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?.to_vec();
            let mut sides: [Vec<(i64, &[u8], bool)>; 2] = [Vec::new(), Vec::new()];
            for rows in &mut sides {
                let m = d.count(17, "rows")?;
                for _ in 0..m {
                    let (t, r) = get(&mut d)?;
                    rows.push((t, r, d.u8("matched")? == 1));
                }
            }
            if !keep(hash) {
                continue;
            }
            let k = self.intern(hash, &key);
            if !self.is_empty(k) {
                return Err("a join key appears twice".into());
            }
            for (side, rows) in sides.into_iter().enumerate() {
                for (t, r, matched) in rows {
                    self.hold(k, side, t, r, matched);
                }
            }
        }
        if !d.is_empty() {
            return Err("bytes after the join state".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
