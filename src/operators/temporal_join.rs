//! The event-time temporal join: each input record joins the version of the table (a changelog
//! stream: every record is a new version for its key, valid from its event time) valid at the
//! input record's event time.
//!
//! Owns, per key, the table's versions ordered by valid-from, and the input records waiting for
//! their answer. An input record at time `t` is answered only once the watermark (the minimum over
//! every input) has passed `t`, so no table version can still arrive that would change the answer;
//! it takes the latest version with valid-from <= `t` (`left`: none -> `"table":null`; `inner`:
//! none -> no output). Versions older than the one valid at the watermark are pruned, so state per
//! key is that version plus later ones. Replaying the same input gives the same output whatever
//! the arrival order within the watermark bound (two versions with the same valid-from: the later
//! arrival wins). Records are held as (partition, offset, length) and read back from the source
//! when joined, so state is a few words per row. Late rows: a table version behind the watermark
//! is dropped (it could change answers already given); an input row behind it is answered at once
//! when the version valid at its time is still held, else dropped; both are counted.
//!
//! Output: the input record with the table record added under `"table"`:
//! `{"order_id":1,"currency":"EUR","amount":19.99,"ts":..,"table":{"currency":"EUR","rate":1.08,..}}`.

use super::rows::{get, put, trim, Keys, RecRef};
use super::{Emitter, JoinStats, Operator, OperatorStats};
use crate::checkpoint::codec::{Dec, Enc};
use crate::event::Event;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
struct KeyState {
    /// (valid-from, record), ascending; equal times in arrival order.
    versions: Vec<(i64, RecRef)>,
    /// Some version older than `versions[0]` was dropped: input rows before it cannot be answered.
    pruned: bool,
}

pub struct TemporalJoin {
    left_outer: bool,
    /// Per partition: whether it belongs to the table's source.
    table_parts: Vec<bool>,
    index: Keys,
    keys: Vec<KeyState>,
    /// Input rows waiting for the watermark: (event time, arrival) -> (key, record).
    waiting: BTreeMap<(i64, u64), (u32, RecRef)>,
    arrivals: u64,
    /// Keys answered in the current watermark step (pruned at its end).
    touched: Vec<u32>,
    wm: i64,
    stats: OperatorStats,
    /// `[input rows waiting, table versions held]`.
    join: JoinStats,
    input_rec: Vec<u8>,
    table_rec: Vec<u8>,
    line: Vec<u8>,
}

impl TemporalJoin {
    /// `table_parts[p]`: partition `p` is read from the table's source (the others from the input).
    pub fn new(left_outer: bool, table_parts: Vec<bool>) -> TemporalJoin {
        TemporalJoin {
            left_outer,
            table_parts,
            index: Keys::default(),
            keys: Vec::new(),
            waiting: BTreeMap::new(),
            arrivals: 0,
            touched: Vec::new(),
            wm: i64::MIN,
            stats: OperatorStats::default(),
            join: JoinStats::default(),
            input_rec: Vec::new(),
            table_rec: Vec::new(),
            line: Vec::new(),
        }
    }

    fn intern(&mut self, hash: u64, key: &[u8]) -> u32 {
        let (i, new) = self.index.intern(hash, key);
        if new && self.keys.len() <= i as usize {
            self.keys.push(KeyState::default());
        }
        i
    }

    /// The version valid at `t` for key `k`, if any.
    fn version_at(&self, k: u32, t: i64) -> Option<RecRef> {
        let v = &self.keys[k as usize].versions;
        let n = v.partition_point(|(from, _)| *from <= t);
        n.checked_sub(1).map(|i| v[i].1)
    }

    /// Keeps the version valid at the watermark and later ones. Only between watermark steps: every
    /// waiting row is then later than the watermark, so none needs an older version.
    fn prune(&mut self, k: u32) {
        let wm = self.wm;
        let s = &mut self.keys[k as usize];
        let n = s.versions.partition_point(|(from, _)| *from <= wm);
        if n > 1 {
            s.versions.drain(..n - 1);
            s.pruned = true;
            self.join.buffered[1] -= (n - 1) as u64;
            self.join.cleaned[1] += (n - 1) as u64;
        }
    }

    fn answer(&mut self, k: u32, t: i64, rec: RecRef, out: &mut dyn Emitter) {
        let version = self.version_at(k, t);
        if version.is_none() && !self.left_outer {
            return;
        }
        self.input_rec.clear();
        out.recall(rec.part, rec.pos, rec.len, &mut self.input_rec);
        let input = trim(&self.input_rec);
        let Some(body) = input.strip_suffix(b"}") else {
            return;
        };
        self.line.clear();
        self.line.extend_from_slice(body);
        if trim(&body[1..]).is_empty() {
            self.line.extend_from_slice(b"\"table\":");
        } else {
            self.line.extend_from_slice(b",\"table\":");
        }
        match version {
            Some(v) => {
                self.table_rec.clear();
                out.recall(v.part, v.pos, v.len, &mut self.table_rec);
                self.line.extend_from_slice(trim(&self.table_rec));
            }
            None => self.line.extend_from_slice(b"null"),
        }
        self.line.extend_from_slice(b"}\n");
        self.stats.fired += 1;
        out.result(&self.line);
    }
}

impl Operator for TemporalJoin {
    fn on_event(&mut self, e: &Event, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let k = self.intern(e.hash, e.key());
        let rec = RecRef::of(e);
        let is_table = self
            .table_parts
            .get(e.part as usize)
            .copied()
            .unwrap_or(false);
        if is_table {
            if e.ts <= self.wm {
                self.stats.late_dropped += 1;
                self.join.late[1] += 1;
                out.late(e);
                return;
            }
            let v = &mut self.keys[k as usize].versions;
            let at = v.partition_point(|(from, _)| *from <= e.ts);
            v.insert(at, (e.ts, rec));
            self.join.buffered[1] += 1;
            self.join.peak[1] = self.join.peak[1].max(self.join.buffered[1]);
            // A key whose rows never come still holds one version, not its whole history.
            self.prune(k);
            return;
        }
        if e.ts > self.wm {
            self.waiting.insert((e.ts, self.arrivals), (k, rec));
            self.arrivals += 1;
            self.join.buffered[0] += 1;
            self.join.peak[0] = self.join.peak[0].max(self.join.buffered[0]);
            return;
        }
        // Behind the watermark: answerable only while the version valid then is still held.
        let s = &self.keys[k as usize];
        if !s.pruned || s.versions.first().is_some_and(|(from, _)| *from <= e.ts) {
            self.answer(k, e.ts, rec, out);
        } else {
            self.stats.late_dropped += 1;
            self.join.late[0] += 1;
            out.late(e);
        }
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        while let Some(entry) = self.waiting.first_entry() {
            if entry.key().0 > wm {
                break;
            }
            let ((t, _), (k, rec)) = entry.remove_entry();
            self.join.buffered[0] -= 1;
            self.join.cleaned[0] += 1;
            self.answer(k, t, rec, out);
            self.touched.push(k);
        }
        // Rows still to answer in this step may need versions older than the one valid at `wm`:
        // prune only once the step is done.
        let mut touched = std::mem::take(&mut self.touched);
        for &k in &touched {
            self.prune(k);
        }
        touched.clear();
        self.touched = touched;
    }

    fn next_action(&self) -> i64 {
        self.waiting.keys().next().map_or(i64::MAX, |(t, _)| *t)
    }

    fn open_windows(&self) -> usize {
        self.waiting.len()
    }

    fn stats(&self) -> OperatorStats {
        self.stats
    }

    fn join_stats(&self) -> Option<JoinStats> {
        let rows = (self.join.buffered[0] + self.join.buffered[1]) as usize;
        Some(JoinStats {
            state_bytes: (rows * 40) as u64 + self.index.bytes(),
            ..self.join
        })
    }

    fn snapshot(&self, e: &mut Enc) {
        self.stats.encode(e);
        e.u64(self.keys.len() as u64);
        for (k, s) in self.keys.iter().enumerate() {
            let (hash, key) = self
                .index
                .get(k as u32)
                .map_or((0, &[][..]), |(h, b)| (*h, b));
            e.u64(hash);
            e.bytes(key);
            e.u8(u8::from(s.pruned));
            e.u64(s.versions.len() as u64);
            for (t, r) in &s.versions {
                put(e, *t, r);
            }
        }
        e.u64(self.waiting.len() as u64);
        for ((t, _), (k, r)) in &self.waiting {
            e.u64(u64::from(*k));
            put(e, *t, r);
        }
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.wm = self.wm.max(wm);
        self.stats.add_decoded(&mut d)?;
        let n = d.count(18, "join keys")?;
        // Old key index -> new one (None: another shard's key).
        let mut map: Vec<Option<u32>> = Vec::with_capacity(n);
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let pruned = d.u8("pruned")? == 1;
            let versions = d.count(22, "versions")?;
            let mut v = Vec::with_capacity(versions);
            for _ in 0..versions {
                v.push(get(&mut d)?);
            }
            if !keep(hash) {
                map.push(None);
                continue;
            }
            let k = self.intern(hash, key);
            let s = &mut self.keys[k as usize];
            if !s.versions.is_empty() {
                return Err("a join key appears twice".into());
            }
            self.join.buffered[1] += v.len() as u64;
            self.join.peak[1] = self.join.peak[1].max(self.join.buffered[1]);
            s.versions = v;
            s.pruned = pruned;
            map.push(Some(k));
        }
        let w = d.count(30, "waiting rows")?;
        for _ in 0..w {
            let old = d.u64("row key")? as usize;
            let (t, r) = get(&mut d)?;
            let k = map.get(old).ok_or("a waiting row of an unknown key")?;
            if let Some(k) = *k {
                self.waiting.insert((t, self.arrivals), (k, r));
                self.arrivals += 1;
                self.join.buffered[0] += 1;
                self.join.peak[0] = self.join.peak[0].max(self.join.buffered[0]);
            }
        }
        if !d.is_empty() {
            return Err("bytes after the join state".into());
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "temporal_join_tests.rs"]
mod tests;
