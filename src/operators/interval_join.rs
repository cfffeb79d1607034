//! The event-time interval join: a left row at `tl` and a right row at `tr` of the same key match
//! when `lower <= tr - tl <= upper`.
//!
//! Owns, per key, the rows of each side that can still match. A row is matched against the other
//! side's held rows when it arrives (every match is emitted then, once), and is held only while a
//! match is still possible: a left row until the watermark (minimum over every input) reaches
//! `tl + upper`, a right row until it reaches `tr - lower` — later rows of the other side would be
//! behind the watermark, which makes them late. At that moment the row is dropped, and in an outer
//! kind emitted unmatched if it never matched, exactly once. A row behind the watermark on arrival
//! is late: counted, and sent to the late side output if there is one. State is therefore bounded
//! by rate x bound per side, whatever the run length; rows are held as (partition, offset,
//! length) and read back from the source when output.
//!
//! Output: the `on` fields, then both records:
//! `{"imp_id":"i-1","left":{...the impression...},"right":{...the click...}}`; an unmatched side is
//! `null`.

use super::rows::{get, put, trim, Keys, RecRef};
use super::{Emitter, JoinStats, Operator, OperatorStats};
use crate::checkpoint::codec::{Dec, Enc};
use crate::event::Event;
use std::collections::BTreeMap;

const LEFT: usize = 0;
const RIGHT: usize = 1;

#[derive(Debug, Clone, Copy)]
struct Row {
    ts: i64,
    rec: RecRef,
    matched: bool,
    id: u64,
}

pub struct IntervalJoin {
    on: Vec<String>,
    lower: i64,
    upper: i64,
    /// Emit unmatched rows of (left, right).
    outer: [bool; 2],
    right_parts: Vec<bool>,
    keys: Keys,
    rows: Vec<[Vec<Row>; 2]>,
    /// (expiry, row id) -> (key, side).
    cleanup: BTreeMap<(i64, u64), (u32, usize)>,
    next_id: u64,
    /// Keys whose last row was cleaned up in this watermark step.
    emptied: Vec<u32>,
    wm: i64,
    stats: OperatorStats,
    join: JoinStats,
    bufs: [Vec<u8>; 3],
}

impl IntervalJoin {
    /// `right_parts[p]`: partition `p` is read from the right side's source.
    pub fn new(
        on: Vec<String>,
        lower: i64,
        upper: i64,
        outer: [bool; 2],
        right_parts: Vec<bool>,
    ) -> IntervalJoin {
        IntervalJoin {
            on,
            lower,
            upper,
            outer,
            right_parts,
            keys: Keys::default(),
            rows: Vec::new(),
            cleanup: BTreeMap::new(),
            next_id: 0,
            emptied: Vec::new(),
            wm: i64::MIN,
            stats: OperatorStats::default(),
            join: JoinStats::default(),
            bufs: [Vec::new(), Vec::new(), Vec::new()],
        }
    }

    fn intern(&mut self, hash: u64, key: &[u8]) -> u32 {
        let (k, _) = self.keys.intern(hash, key);
        if self.rows.len() <= k as usize {
            self.rows.push([Vec::new(), Vec::new()]);
        }
        k
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

    fn hold(&mut self, k: u32, side: usize, ts: i64, rec: RecRef, matched: bool) {
        let id = self.next_id;
        self.next_id += 1;
        self.rows[k as usize][side].push(Row {
            ts,
            rec,
            matched,
            id,
        });
        self.cleanup.insert((self.expiry(side, ts), id), (k, side));
        self.join.buffered[side] += 1;
        self.join.peak[side] = self.join.peak[side].max(self.join.buffered[side]);
    }

    /// `{"<on fields>", "left": .., "right": ..}` for key `k`.
    fn emit(&mut self, k: u32, left: Option<RecRef>, right: Option<RecRef>, out: &mut dyn Emitter) {
        let [line, l, r] = &mut self.bufs;
        line.clear();
        line.push(b'{');
        let key: &[u8] = self.keys.get(k).map_or(&[], |(_, key)| key);
        for (i, (name, token)) in self.on.iter().zip(key.split(|&b| b == 0)).enumerate() {
            if i > 0 {
                line.push(b',');
            }
            crate::expr::write_json_string(name, line);
            line.push(b':');
            line.extend_from_slice(token);
        }
        for (name, rec, buf) in [("left", left, l), ("right", right, r)] {
            line.extend_from_slice(if line.len() > 1 { b"," } else { b"" });
            crate::expr::write_json_string(name, line);
            line.push(b':');
            match rec {
                Some(rr) => {
                    buf.clear();
                    out.recall(rr.part, rr.pos, rr.len, buf);
                    line.extend_from_slice(trim(buf));
                }
                None => line.extend_from_slice(b"null"),
            }
        }
        line.extend_from_slice(b"}\n");
        self.stats.fired += 1;
        out.result(line);
    }
}

impl Operator for IntervalJoin {
    fn on_event(&mut self, e: &Event, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let side = usize::from(
            self.right_parts
                .get(e.part as usize)
                .copied()
                .unwrap_or(false),
        );
        if e.ts <= self.wm {
            self.stats.late_dropped += 1;
            self.join.late[side] += 1;
            out.late(e);
            return;
        }
        let k = self.intern(e.hash, e.key());
        let rec = RecRef::of(e);
        let other = 1 - side;
        let mut matched = false;
        for i in 0..self.rows[k as usize][other].len() {
            let o = self.rows[k as usize][other][i];
            if self.matches(side, e.ts, o.ts) {
                matched = true;
                self.rows[k as usize][other][i].matched = true;
                let (l, r) = if side == LEFT {
                    (rec, o.rec)
                } else {
                    (o.rec, rec)
                };
                self.emit(k, Some(l), Some(r), out);
            }
        }
        if self.expiry(side, e.ts) <= self.wm {
            // Nothing can match it any more: it is done at once.
            self.join.cleaned[side] += 1;
            if !matched && self.outer[side] {
                let (l, r) = if side == LEFT {
                    (Some(rec), None)
                } else {
                    (None, Some(rec))
                };
                self.emit(k, l, r, out);
            }
            if self.rows[k as usize].iter().all(Vec::is_empty) {
                self.keys.remove(k);
            }
            return;
        }
        self.hold(k, side, e.ts, rec, matched);
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        while let Some(entry) = self.cleanup.first_entry() {
            if entry.key().0 > wm {
                break;
            }
            let ((_, id), (k, side)) = entry.remove_entry();
            let held = &mut self.rows[k as usize][side];
            let Some(at) = held.iter().position(|r| r.id == id) else {
                continue;
            };
            let row = held.swap_remove(at);
            if self.rows[k as usize].iter().all(Vec::is_empty) {
                // Its key index is emitted below and then reused.
                self.emptied.push(k);
            }
            self.join.buffered[side] -= 1;
            self.join.cleaned[side] += 1;
            if !row.matched && self.outer[side] {
                let (l, r) = if side == LEFT {
                    (Some(row.rec), None)
                } else {
                    (None, Some(row.rec))
                };
                self.emit(k, l, r, out);
            }
        }
        // A key with no rows left is forgotten, so the key index is bounded like the rows are.
        for k in std::mem::take(&mut self.emptied) {
            if self.rows[k as usize].iter().all(Vec::is_empty) {
                self.keys.remove(k);
            }
        }
    }

    fn next_action(&self) -> i64 {
        self.cleanup.keys().next().map_or(i64::MAX, |(t, _)| *t)
    }

    fn open_windows(&self) -> usize {
        self.cleanup.len()
    }

    fn stats(&self) -> OperatorStats {
        self.stats
    }

    fn join_stats(&self) -> Option<JoinStats> {
        let rows = (self.join.buffered[0] + self.join.buffered[1]) as usize;
        let per_row = std::mem::size_of::<Row>() + 32; // the row and its cleanup timer
        Some(JoinStats {
            state_bytes: (rows * per_row) as u64 + self.keys.bytes(),
            ..self.join
        })
    }

    fn snapshot(&self, e: &mut Enc) {
        self.stats.encode(e);
        let held: Vec<u32> = (0..self.rows.len() as u32)
            .filter(|&k| self.rows[k as usize].iter().any(|s| !s.is_empty()))
            .collect();
        e.u64(held.len() as u64);
        for k in held {
            let Some((hash, key)) = self.keys.get(k) else {
                continue;
            };
            e.u64(*hash);
            e.bytes(key);
            for side in [LEFT, RIGHT] {
                let rows = &self.rows[k as usize][side];
                e.u64(rows.len() as u64);
                for r in rows {
                    put(e, r.ts, &r.rec);
                    e.u8(u8::from(r.matched));
                }
            }
        }
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.wm = self.wm.max(wm);
        self.stats.add_decoded(&mut d)?;
        let n = d.count(33, "join keys")?;
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?.to_vec();
            let mut sides: [Vec<(i64, RecRef, bool)>; 2] = [Vec::new(), Vec::new()];
            for rows in &mut sides {
                let m = d.count(23, "rows")?;
                for _ in 0..m {
                    let (t, r) = get(&mut d)?;
                    rows.push((t, r, d.u8("matched")? == 1));
                }
            }
            if !keep(hash) {
                continue;
            }
            let k = self.intern(hash, &key);
            if self.rows[k as usize].iter().any(|s| !s.is_empty()) {
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
#[path = "interval_join_tests.rs"]
mod tests;
