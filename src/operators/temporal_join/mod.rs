//! The event-time temporal join: each input record joins the version of the table (a changelog
//! stream: every record is a new version for its key, valid from its event time) valid at the
//! input record's event time.
//!
//! Owns, per key, the table's versions ordered by valid-from, and the input records waiting for
//! their answer, both by value (`rows::RowStore`), so any stream can be either side. An input
//! record at time `t` is answered only once the watermark (the minimum over this join's own
//! inputs) has passed `t`, so no table version can still arrive that would change the answer; it
//! takes the latest version with valid-from <= `t` (`left`: none -> `"table":null`; `inner`: none ->
//! no output) and keeps its own event time. Versions older than the one valid at the watermark are
//! pruned, so state per key is that version plus later ones. Replaying the same input gives the
//! same output whatever the arrival order within the watermark bound (two versions with the same
//! valid-from: the later arrival wins). Late rows: a table version behind the watermark is dropped
//! (it could change answers already given); an input row behind it is answered at once when the
//! version valid at its time is still held, else (as Flink's) gets `"table":null` in a left join
//! and is dropped in an inner one; all are counted as late, the dropped ones also as dropped. A missing or null key
//! never matches (SQL NULL): such an input row gets `"table":null` in a left join and is dropped in
//! an inner one; such a version is dropped. A version that is a deletion (the tombstone of an
//! upsert changelog, `record::TOMBSTONE`) ends its key's validity: rows after it
//! find no version until the next one. So does a deletion (`-D`) of a changelog table (a
//! Debezium source), at its own time, even behind the watermark (Flink's versioned table puts
//! every row at its time): a `-D` whose before image carries the row's old time takes the row
//! away for every input row not yet answered. An update's `-U` changes nothing (its `+U` is the
//! new version), as Flink drops a versioned table's update-befores.
//!
//! Output: the input record with the table record added under `"table"`:
//! `{"order_id":1,"currency":"EUR","amount":19.99,"ts":..,"table":{"currency":"EUR","rate":1.08,..}}`.

pub mod config;
pub mod plan;

use super::keys::Keys;
use super::rows::{get, put, trim, RowId, RowStore, Slab};
use super::timers::{Timer, Timers};
use super::{BuildCtx, Counters, Emitter, Operator, Output};
use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::{JoinStats, OperatorReport};
use crate::plan::TemporalJoinPlan;
use crate::record::event::{Event, Rec, RowKind, NULL_KEY};

/// The version a retraction leaves: no row (a tombstone, as an upsert changelog's deletion).
const RETRACTED: &[u8] = b"{\"_kafka\":{\"tombstone\":true}}";

#[derive(Debug, Default)]
struct KeyState {
    /// (valid-from, record), ascending; equal times in arrival order.
    versions: Vec<(i64, RowId)>,
    /// Some version older than `versions[0]` was dropped: input rows before it cannot be answered.
    pruned: bool,
}

pub struct TemporalJoin {
    left_outer: bool,
    drop_older_versions: bool,
    first_port: u16,
    index: Keys,
    keys: Vec<KeyState>,
    /// Waiting input rows.
    store: RowStore,
    /// Table versions: they live as long as their key's next version is not yet valid, some
    /// for the whole run, so each pins its page; small pages bound that to 4 KiB per key.
    table: RowStore,
    /// Input rows waiting for the watermark, by slot.
    pending: Slab<RowId>,
    /// When each waiting row is answered: at its event time, in arrival order (`key`: its key,
    /// `tag`: its slot).
    waiting: Timers,
    due: Vec<Timer>,
    arrivals: u64,
    /// Keys answered in the current watermark step (pruned at its end).
    touched: Vec<u32>,
    wm: i64,
    counters: Counters,
    /// `[input rows waiting, table versions held]`.
    join: JoinStats,
    line: Vec<u8>,
}

/// `input` with `"table": <table or null>` added before its closing brace; `false` when `input` is
/// not an object.
fn write(line: &mut Vec<u8>, input: &[u8], table: Option<&[u8]>) -> bool {
    let input = trim(input);
    let Some(body) = input.strip_suffix(b"}") else {
        return false;
    };
    line.clear();
    line.extend_from_slice(body);
    if trim(body.get(1..).unwrap_or_default()).is_empty() {
        line.extend_from_slice(b"\"table\":");
    } else {
        line.extend_from_slice(b",\"table\":");
    }
    match table {
        Some(t) => line.extend_from_slice(trim(t)),
        None => line.extend_from_slice(b"null"),
    }
    line.extend_from_slice(b"}\n");
    true
}

impl TemporalJoin {
    pub fn new(plan: &TemporalJoinPlan, ctx: BuildCtx) -> TemporalJoin {
        TemporalJoin {
            left_outer: plan.left,
            drop_older_versions: plan.drop_older_versions,
            first_port: ctx.first_port,
            index: Keys::default(),
            keys: Vec::new(),
            store: RowStore::default(),
            table: RowStore::with_page_size(4096),
            pending: Slab::default(),
            waiting: Timers::default(),
            due: Vec::new(),
            arrivals: 0,
            touched: Vec::new(),
            wm: i64::MIN,
            counters: Counters::default(),
            join: JoinStats::default(),
            line: Vec::new(),
        }
    }

    fn intern(&mut self, hash: u64, key: &[u8]) -> u32 {
        let (i, _) = self.index.intern(hash, key);
        while self.keys.len() <= i as usize {
            self.keys.push(KeyState::default());
        }
        i
    }

    /// Holds input row `row` of key `k` at `t` until the watermark passes `t`.
    fn wait(&mut self, k: u32, t: i64, row: &[u8]) {
        let row = self.store.put(row);
        let slot = self.pending.insert(row);
        self.waiting.push(Timer {
            at: t,
            id: self.arrivals,
            key: k,
            tag: slot,
        });
        self.arrivals += 1;
        self.join.buffered[0] += 1;
        self.join.peak[0] = self.join.peak[0].max(self.join.buffered[0]);
    }

    /// The version valid at `t` for key `k`, if any.
    fn version_at(&self, k: u32, t: i64) -> Option<RowId> {
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
            for (_, r) in s.versions.drain(..n - 1) {
                self.table.drop_row(r);
            }
            s.pruned = true;
            self.join.buffered[1] -= (n - 1) as u64;
            self.join.cleaned[1] += (n - 1) as u64;
        }
    }

    /// Answers the input row (bytes, or held as `held`) of key `k` at time `t`.
    #[allow(clippy::too_many_arguments)]
    fn answer(
        &mut self,
        k: Option<u32>,
        t: i64,
        input: Result<&[u8], RowId>,
        cause: Option<&Event>,
        hash: u64,
        out: &mut dyn Emitter,
    ) {
        // A deletion (an upsert changelog's tombstone) ends its key's validity: no version.
        let table = k
            .and_then(|k| self.version_at(k, t))
            .map(|v| self.table.get(v))
            .filter(|row| !row.starts_with(crate::record::TOMBSTONE));
        if table.is_none() && !self.left_outer {
            return;
        }
        let input = match input {
            Ok(b) => b,
            Err(held) => self.store.get(held),
        };
        if !write(&mut self.line, input, table) {
            return;
        }
        self.counters.fired += 1;
        out.emit(Output {
            line: &self.line,
            ts: t,
            cause,
            key: hash,
            kind: RowKind::Insert,
        });
    }

    fn add_version(&mut self, r: &Rec<'_>, out: &mut dyn Emitter) {
        let e = r.ev;
        // A changelog table's `-U` changes nothing: its `+U` is the new version, from its own
        // time (Flink drops a versioned table's update-befores). A `-D` ends its key's validity
        // at its time, as Flink's versioned table puts a retraction at its time; it applies
        // behind the watermark too (a deletion's before image carries the row's old time), to
        // every row not yet answered.
        let kind = RowKind::of_flags(e.flags);
        if kind == RowKind::UpdateBefore {
            return;
        }
        let retraction = kind == RowKind::Delete;
        if e.ts <= self.wm && !retraction {
            self.counters.late_dropped += 1;
            self.join.late[1] += 1;
            out.late(r);
            return;
        }
        if e.flags & NULL_KEY != 0 {
            self.join.null_keys += 1;
            return;
        }
        let k = self.intern(e.hash, r.key());
        // The last version is never pruned, so it is the latest the key has had.
        let latest = self.keys[k as usize].versions.last().map(|(from, _)| *from);
        if self.drop_older_versions && latest.is_some_and(|from| from > e.ts) {
            self.join.superseded += 1;
            return;
        }
        let row = if retraction {
            self.table.put(RETRACTED)
        } else {
            self.table.put(r.row().unwrap_or(b"{}"))
        };
        let v = &mut self.keys[k as usize].versions;
        let at = v.partition_point(|(from, _)| *from <= e.ts);
        v.insert(at, (e.ts, row));
        self.join.buffered[1] += 1;
        self.join.peak[1] = self.join.peak[1].max(self.join.buffered[1]);
        // A key whose rows never come still holds one version, not its whole history.
        self.prune(k);
    }
}

impl Operator for TemporalJoin {
    fn on_event(&mut self, r: &Rec<'_>, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let e = r.ev;
        if e.port.wrapping_sub(self.first_port) == 1 {
            return self.add_version(r, out);
        }
        let input = r.row().unwrap_or(b"{}");
        if e.flags & NULL_KEY != 0 {
            self.join.null_keys += 1;
            if e.ts <= self.wm {
                self.join.late[0] += 1;
            }
            if e.ts > self.wm || self.left_outer {
                self.answer(None, e.ts, Ok(input), Some(e), e.hash, out);
            } else {
                self.counters.late_dropped += 1;
                out.late(r);
            }
            return;
        }
        let k = self.intern(e.hash, r.key());
        if e.ts > self.wm {
            self.wait(k, e.ts, input);
            return;
        }
        // Behind the watermark: answerable only while the version valid then is still held. What
        // is held is decided at this watermark (as if pruned at every step), not by when a step
        // last touched the key, so the answer is a function of the input alone.
        self.prune(k);
        let s = &self.keys[k as usize];
        self.join.late[0] += 1;
        if !s.pruned || s.versions.first().is_some_and(|(from, _)| *from <= e.ts) {
            self.answer(Some(k), e.ts, Ok(input), Some(e), e.hash, out);
        } else if self.left_outer {
            // Flink's LEFT temporal join keeps every input row: one whose version is gone gets
            // the table as NULL, as one before the key's first version does.
            self.answer(None, e.ts, Ok(input), Some(e), e.hash, out);
        } else {
            self.counters.late_dropped += 1;
            out.late(r);
        }
    }

    fn prefetch(&self, ev: &Event, stage: u8) {
        if ev.flags & NULL_KEY == 0 {
            self.index.prefetch(ev.hash, stage);
        }
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.waiting.take_due(wm, &mut due);
        for &Timer {
            at: t, key: k, tag, ..
        } in &due
        {
            let row = self.pending.remove(tag);
            self.join.buffered[0] -= 1;
            self.join.cleaned[0] += 1;
            let hash = self.index.get(k).map_or(0, |(h, _)| h);
            self.answer(Some(k), t, Err(row), None, hash, out);
            self.store.drop_row(row);
            self.touched.push(k);
        }
        self.due = due;
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
        self.waiting.next()
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        let rows = self.join.buffered[0] + self.join.buffered[1];
        // Allocated, not live: none of these shrink, so this is the high-water mark.
        let versions: usize = self.keys.iter().map(|k| k.versions.capacity() * 16).sum();
        let state = self.pending.bytes()
            + self.waiting.bytes()
            + versions as u64
            + self.index.bytes()
            + self.store.bytes().1
            + self.table.bytes().1;
        r.open += self.waiting.len() as u64;
        r.keys += rows;
        r.state_bytes += state;
        r.rows.get_or_insert_with(Default::default).add(&JoinStats {
            state_bytes: state,
            ..self.join
        });
    }

    fn snapshot(&self, e: &mut Enc) {
        self.counters.encode(e);
        e.u64(self.keys.len() as u64);
        for (k, s) in self.keys.iter().enumerate() {
            let (hash, key) = self.index.get(k as u32).unwrap_or((0, &[]));
            e.u64(hash);
            e.bytes(key);
            e.u8(u8::from(s.pruned));
            e.u64(s.versions.len() as u64);
            for (t, r) in &s.versions {
                put(e, *t, self.table.get(*r));
            }
        }
        let waiting = self.waiting.sorted();
        e.u64(waiting.len() as u64);
        for t in waiting {
            e.u64(u64::from(t.key));
            let row = self.pending.get(t.tag).copied().unwrap_or_default();
            put(e, t.at, self.store.get(row));
        }
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.wm = self.wm.max(wm);
        self.counters.add_decoded(&mut d)?;
        let n = d.count(18, "join keys")?;
        // Old key index -> new one (None: another shard's key).
        let mut map: Vec<Option<u32>> = Vec::with_capacity(n);
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let pruned = d.u8("pruned")? == 1;
            let versions = d.count(16, "versions")?;
            let mut v = Vec::with_capacity(versions);
            for _ in 0..versions {
                v.push(get(&mut d)?);
            }
            if !keep(hash) {
                map.push(None);
                continue;
            }
            let k = self.intern(hash, key);
            if !self.keys[k as usize].versions.is_empty() {
                return Err("a join key appears twice".into());
            }
            self.join.buffered[1] += v.len() as u64;
            self.join.peak[1] = self.join.peak[1].max(self.join.buffered[1]);
            let stored: Vec<(i64, RowId)> =
                v.into_iter().map(|(t, r)| (t, self.table.put(r))).collect();
            let s = &mut self.keys[k as usize];
            s.versions = stored;
            s.pruned = pruned;
            map.push(Some(k));
        }
        let w = d.count(24, "waiting rows")?;
        for _ in 0..w {
            let old = d.u64("row key")? as usize;
            let (t, r) = get(&mut d)?;
            let k = map.get(old).ok_or("a waiting row of an unknown key")?;
            if let Some(k) = *k {
                self.wait(k, t, r);
            }
        }
        if !d.is_empty() {
            return Err("bytes after the join state".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod changelog_tests;
#[cfg(test)]
mod tests;
