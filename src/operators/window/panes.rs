//! Pane-based windows (tumbling, sliding, cumulative): state is one accumulator set per (key, pane).
//!
//! A pane is the largest time slice every window is a whole number of: the size for tumbling, the
//! slide for sliding, the step for cumulative windows. An event updates exactly one pane; firing a
//! window merges its panes (one pane: no merge). A pane is dropped once the last window containing it
//! is past `end - 1 + allowed_lateness`, which bounds state by the watermark. A result carries the
//! window's last millisecond (`end - 1`) as its event time; a re-fire is preceded by a retraction of
//! the previous result when a consumer aggregates it further.

use super::aggregate::{AggLayout, Sketches};
use super::align;
use super::format::LineFormat;
use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::OperatorReport;
use crate::operators::window::acc_table::{AccTable, INITIAL_KEY_BYTES};
use crate::operators::{Counters, Emitter, Operator, Output};
use crate::plan::WindowKind;
use crate::record::event::{Event, Rec, RowKind};
use crate::time::{ChunkTime, WM_MAX, WM_MIN};

#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    kind: WindowKind,
    pane: i64,
}

impl Geometry {
    pub fn new(kind: WindowKind) -> Self {
        let pane = match kind {
            WindowKind::Tumbling { size_ms } => size_ms,
            WindowKind::Sliding { slide_ms, .. } => slide_ms,
            WindowKind::Cumulative { step_ms, .. } => step_ms,
            WindowKind::Session { .. } => unreachable!("sessions are not pane-based"),
        };
        Geometry { kind, pane }
    }

    /// Length of a pane.
    pub fn pane(&self) -> i64 {
        self.pane
    }

    /// Calls `f(start, end)` for every window containing the pane starting at `p`, by increasing end.
    #[inline]
    pub fn windows_of_pane(&self, p: i64, mut f: impl FnMut(i64, i64)) {
        match self.kind {
            WindowKind::Tumbling { size_ms } => f(p, p.saturating_add(size_ms)),
            WindowKind::Sliding { size_ms, slide_ms } => {
                let n = size_ms / slide_ms;
                for k in (0..n).rev() {
                    let s = p - k * slide_ms;
                    f(s, s.saturating_add(size_ms));
                }
            }
            WindowKind::Cumulative {
                step_ms,
                max_size_ms,
            } => {
                let b = align(p, max_size_ms);
                let first = (p - b) / step_ms + 1;
                for k in first..=max_size_ms / step_ms {
                    f(b, b.saturating_add(k * step_ms));
                }
            }
            WindowKind::Session { .. } => {}
        }
    }

    /// End of the last window containing pane `p`.
    pub fn last_end(&self, p: i64) -> i64 {
        match self.kind {
            WindowKind::Tumbling { size_ms } => p.saturating_add(size_ms),
            WindowKind::Sliding { size_ms, .. } => p.saturating_add(size_ms),
            WindowKind::Cumulative { max_size_ms, .. } => {
                align(p, max_size_ms).saturating_add(max_size_ms)
            }
            WindowKind::Session { .. } => p,
        }
    }
}

struct Pane {
    start: i64,
    table: AccTable,
}

impl Pane {
    /// A pane for `start`, reusing a retired pane's memory when there is one: consecutive panes
    /// usually hold about as many keys, so this avoids regrowing the table every window.
    fn new(
        start: i64,
        recycled: Option<Pane>,
        layout: &AggLayout,
        keys: usize,
        key_bytes: usize,
    ) -> Self {
        match recycled {
            Some(mut p) => {
                p.start = start;
                p.table.clear();
                p
            }
            None => Pane {
                start,
                table: AccTable::with_capacity(layout, keys, key_bytes),
            },
        }
    }

    fn get(&self, hash: u64, key: &[u8]) -> Option<(&[u64], &Sketches)> {
        self.table
            .find_key(hash, key)
            .map(|r| (self.table.accs(r), self.table.sketches()))
    }
}

pub struct PaneWindows {
    geo: Geometry,
    lateness: i64,
    layout: AggLayout,
    format: LineFormat,
    /// Live panes by increasing start.
    panes: Vec<Pane>,
    /// A retired pane kept for its allocations.
    spare: Option<Pane>,
    last_pane: usize,
    /// Windows with `end - 1 <= fired_upto` have fired.
    fired_upto: i64,
    next_action: i64,
    line: Vec<u8>,
    stats: Counters,
    /// A partial aggregate being merged (phase two), decoded here.
    partial: (Vec<u64>, Sketches),
}

impl PaneWindows {
    pub fn new(geo: Geometry, lateness: i64, layout: AggLayout, format: LineFormat) -> Self {
        PaneWindows {
            geo,
            lateness,
            layout,
            format,
            panes: Vec::new(),
            spare: None,
            last_pane: 0,
            fired_upto: WM_MIN,
            next_action: WM_MAX,
            line: Vec::with_capacity(256),
            stats: Counters::default(),
            partial: (Vec::new(), Sketches::default()),
        }
    }

    /// Adds `rec` to the pane starting at `p` (created if needed).
    #[inline(always)]
    fn add(&mut self, p: i64, rec: &Rec<'_>) {
        let idx = self.pane_index(p);
        if rec.ev.has_payload() {
            self.panes[idx].table.add_rec(rec, &self.layout);
        } else {
            self.panes[idx].table.add(rec.ev, &self.layout);
        }
    }

    /// How many of `evs` come before the first whose watermark may reach `next_action` (a new pane
    /// lowered it): the run must stop there for `on_watermark`.
    fn due_within(&self, evs: &[Event], time: &ChunkTime) -> usize {
        let below = time.seen_below(self.next_action);
        evs.iter()
            .position(|e| e.seen_max >= below)
            .unwrap_or(evs.len())
    }

    /// True when every window containing pane `p` is still open at watermark `wm`. The window of a
    /// pane that ends first ends with the pane (tumbling: the window; sliding: the last window over
    /// it; cumulative: the step ending there), so one comparison decides.
    #[inline(always)]
    fn on_time(&self, p: i64, wm: i64) -> bool {
        p.saturating_add(self.geo.pane) - 1 > wm
    }

    /// Start of the pane holding `ts`; the last pane used is checked first, without a division.
    #[inline(always)]
    fn pane_start(&self, ts: i64) -> i64 {
        if let Some(p) = self.panes.get(self.last_pane) {
            if ts >= p.start && ts - p.start < self.geo.pane {
                return p.start;
            }
        }
        align(ts, self.geo.pane)
    }

    #[inline]
    fn pane_index(&mut self, start: i64) -> usize {
        if let Some(p) = self.panes.get(self.last_pane) {
            if p.start == start {
                return self.last_pane;
            }
        }
        let idx = match self.panes.binary_search_by_key(&start, |p| p.start) {
            Ok(i) => i,
            Err(i) => {
                // Neighbouring panes hold about as many keys, as long.
                let keys = self.panes.iter().map(|p| p.table.len()).max().unwrap_or(0);
                let key_bytes = self
                    .panes
                    .iter()
                    .map(|p| p.table.key_bytes())
                    .max()
                    .unwrap_or(INITIAL_KEY_BYTES);
                let pane = Pane::new(start, self.spare.take(), &self.layout, keys, key_bytes);
                self.panes.insert(i, pane);
                self.note_pane(start);
                i
            }
        };
        self.last_pane = idx;
        idx
    }

    /// Lowers `next_action` for a new pane: its first unfired window end and its cleanup time.
    fn note_pane(&mut self, start: i64) {
        let fired = self.fired_upto;
        let mut first = WM_MAX;
        self.geo.windows_of_pane(start, |_, e| {
            if e - 1 > fired && e - 1 < first {
                first = e - 1;
            }
        });
        let cleanup = (self.geo.last_end(start) - 1).saturating_add(self.lateness);
        self.next_action = self.next_action.min(first).min(cleanup);
    }

    fn recompute_next_action(&mut self) {
        self.next_action = WM_MAX;
        let starts: Vec<i64> = self.panes.iter().map(|p| p.start).collect();
        for s in starts {
            self.note_pane(s);
        }
    }

    /// Writes the result of window `[s, e)` for one key (merging its panes) into `self.line`.
    fn write_key_result(&mut self, hash: u64, key: &[u8], s: i64, e: i64) {
        let mut merged: Option<(Vec<u64>, Sketches)> = None;
        let mut single: Option<usize> = None;
        for (i, p) in self.panes.iter().enumerate() {
            if p.start < s || p.start >= e {
                continue;
            }
            let Some((accs, sketches)) = p.get(hash, key) else {
                continue;
            };
            match (&mut merged, single) {
                (None, None) => single = Some(i),
                (None, Some(first)) => {
                    if let Some((a, sk)) = self.panes[first].get(hash, key) {
                        let mut m = (a.to_vec(), sk.clone());
                        self.layout.merge(&mut m.0, &mut m.1, accs, sketches);
                        merged = Some(m);
                    }
                }
                (Some((m, msk)), _) => self.layout.merge(m, msk, accs, sketches),
            }
        }
        let (accs, sketches): (&[u64], &Sketches) = match (&merged, single) {
            (Some((m, sk)), _) => (m, sk),
            (None, Some(i)) => match self.panes[i].get(hash, key) {
                Some(a) => a,
                None => return,
            },
            (None, None) => return,
        };
        self.format
            .write(key, (s, e), &self.layout, accs, sketches, &mut self.line);
    }

    /// Emits every key of window `[s, e)`.
    fn fire_window(&mut self, s: i64, e: i64, out: &mut dyn Emitter) {
        let in_window: Vec<usize> = (0..self.panes.len())
            .filter(|&i| self.panes[i].start >= s && self.panes[i].start < e)
            .collect();
        match in_window.as_slice() {
            [] => {}
            [only] => {
                let t = &self.panes[*only].table;
                for row in t.rows() {
                    self.line.clear();
                    self.format.write(
                        row.key(),
                        (s, e),
                        &self.layout,
                        row.accs,
                        t.sketches(),
                        &mut self.line,
                    );
                    out.emit(fired(&self.line, e, row.hash));
                    self.stats.fired += 1;
                }
            }
            many => {
                let mut merged = AccTable::new(&self.layout);
                for &i in many {
                    let t = &self.panes[i].table;
                    for row in t.rows() {
                        merged.merge_into(
                            row.hash,
                            row.key(),
                            row.accs,
                            t.sketches(),
                            &self.layout,
                        );
                    }
                }
                for row in merged.rows() {
                    self.line.clear();
                    self.format.write(
                        row.key(),
                        (s, e),
                        &self.layout,
                        row.accs,
                        merged.sketches(),
                        &mut self.line,
                    );
                    out.emit(fired(&self.line, e, row.hash));
                    self.stats.fired += 1;
                }
            }
        }
    }
}

/// A result fired by the watermark: window `[.., end)`, state key `key`.
fn fired(line: &[u8], end: i64, key: u64) -> Output<'_> {
    Output {
        line,
        ts: end - 1,
        cause: None,
        key,
        kind: RowKind::Insert,
    }
}

impl Operator for PaneWindows {
    #[inline]
    fn on_event(&mut self, rec: &Rec<'_>, wm: i64, out: &mut dyn Emitter) {
        let ev = rec.ev;
        // The runtime skips `on_watermark` below `next_action`, where nothing is due; a pane created
        // now must still count windows up to `wm` as fired.
        self.fired_upto = self.fired_upto.max(wm);
        let p = self.pane_start(ev.ts);
        if self.on_time(p, wm) {
            // The common case, without the per-window classification.
            self.add(p, rec);
            return;
        }
        let lateness = self.lateness;
        // Classify the event against each of its windows: on time, late but allowed (re-fire), dropped.
        // `Vec::new` does not allocate; only an event late within the lateness pushes to it.
        let mut accepted = false;
        let mut refire: Vec<(i64, i64)> = Vec::new();
        self.geo.windows_of_pane(p, |s, e| {
            let last = e - 1;
            if last > wm {
                accepted = true;
            } else if wm < last.saturating_add(lateness) {
                accepted = true;
                refire.push((s, e));
            }
        });
        if !accepted {
            self.stats.late_dropped += 1;
            out.late(rec);
            return;
        }
        if out.wants_retractions() {
            // The previous value of each re-fired window goes first, so a consumer that sums
            // these results can take it back.
            for &(s, e) in &refire {
                self.line.clear();
                self.write_key_result(ev.hash, rec.key(), s, e);
                if !self.line.is_empty() {
                    out.emit(Output {
                        line: &self.line,
                        ts: e - 1,
                        cause: Some(ev),
                        key: ev.hash,
                        kind: RowKind::UpdateBefore,
                    });
                }
            }
        }
        self.add(p, rec);
        for (s, e) in refire {
            self.line.clear();
            self.write_key_result(ev.hash, rec.key(), s, e);
            if !self.line.is_empty() {
                out.emit(Output {
                    line: &self.line,
                    ts: e - 1,
                    cause: Some(ev),
                    key: ev.hash,
                    kind: RowKind::UpdateAfter,
                });
                self.stats.refired += 1;
            }
        }
    }

    fn on_run(&mut self, evs: &[Event], time: &ChunkTime, out: &mut dyn Emitter) -> usize {
        let Some(last) = evs.last() else { return 0 };
        // Every event's watermark is at most the last one's (`seen_max` never decreases in a chunk),
        // so an event on time against it is on time against its own.
        let hi = time.before(last.seen_max);
        let mut limit = evs.len();
        let mut i = 0;
        while i < limit {
            let before = self.next_action;
            let e = &evs[i];
            let p = self.pane_start(e.ts);
            if !self.on_time(p, hi) {
                self.on_event(&Rec::of(e), time.before(e.seen_max), out);
                i += 1;
            } else {
                // A pane created here must count windows up to this event's watermark as fired.
                self.fired_upto = self.fired_upto.max(time.before(e.seen_max));
                let idx = self.pane_index(p);
                if self.next_action < before {
                    // This event is before the new action (its pane's windows are open at its
                    // watermark); the ones after it may not be.
                    limit = i + 1 + self.due_within(&evs[i + 1..limit], time);
                }
                let end = p.saturating_add(self.geo.pane);
                i += self.panes[idx]
                    .table
                    .add_run(&evs[i..limit], p, end, &self.layout);
                continue;
            }
            if self.next_action < before {
                limit = i + self.due_within(&evs[i..limit], time);
            }
        }
        self.fired_upto = self.fired_upto.max(time.before(evs[limit - 1].seen_max));
        limit
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        if wm < self.next_action {
            self.fired_upto = self.fired_upto.max(wm);
            return;
        }
        let fired = self.fired_upto;
        let mut due: Vec<(i64, i64)> = Vec::new();
        for p in &self.panes {
            self.geo.windows_of_pane(p.start, |s, e| {
                if e - 1 > fired && e - 1 <= wm {
                    due.push((e, s));
                }
            });
        }
        due.sort_unstable();
        due.dedup();
        for (e, s) in due {
            self.fire_window(s, e, out);
        }
        self.fired_upto = wm;
        let (geo, lateness) = (self.geo, self.lateness);
        let mut i = 0;
        while i < self.panes.len() {
            let p = &self.panes[i];
            if wm < (geo.last_end(p.start) - 1).saturating_add(lateness) {
                i += 1;
                continue;
            }
            let retired = self.panes.remove(i);
            if self
                .spare
                .as_ref()
                .is_none_or(|s| s.table.capacity() < retired.table.capacity())
            {
                self.spare = Some(retired);
            }
        }
        self.last_pane = 0;
        self.recompute_next_action();
    }

    fn next_action(&self) -> i64 {
        self.next_action
    }

    fn on_partial(&mut self, rec: &Rec<'_>, wm: i64, _out: &mut dyn Emitter) -> Result<(), String> {
        let (head, payload) = (rec.ev, rec.blob());
        self.fired_upto = self.fired_upto.max(wm);
        let p = align(head.ts, self.geo.pane);
        if !self.on_time(p, wm) {
            // The sender holds back only events whose windows are open where it sends them.
            return Err(format!(
                "pane {p} arrived at watermark {wm}, after one of its windows fired"
            ));
        }
        self.layout.decode_partial(payload, &mut self.partial)?;
        let idx = self.pane_index(p);
        let (accs, sketches) = &self.partial;
        self.panes[idx]
            .table
            .merge_into(head.hash, rec.key(), accs, sketches, &self.layout);
        Ok(())
    }

    fn snapshot(&self, e: &mut Enc) {
        e.i64(self.fired_upto);
        self.stats.encode(e);
        e.u64(self.panes.len() as u64);
        for p in &self.panes {
            e.i64(p.start);
            p.table.encode(&self.layout, e);
        }
    }

    fn restore(
        &mut self,
        state: &[u8],
        keep: &dyn Fn(u64) -> bool,
        _wm: i64,
    ) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.fired_upto = self.fired_upto.max(d.i64("fired_upto")?);
        self.stats.add_decoded(&mut d)?;
        let panes = d.count(16, "panes")?;
        for _ in 0..panes {
            let start = d.i64("pane start")?;
            let i = match self.panes.binary_search_by_key(&start, |p| p.start) {
                Ok(i) => i,
                Err(i) => {
                    let pane = Pane::new(start, None, &self.layout, 0, INITIAL_KEY_BYTES);
                    self.panes.insert(i, pane);
                    i
                }
            };
            self.panes[i].table.decode(&self.layout, &mut d, keep)?;
        }
        if !d.is_empty() {
            return Err("bytes after the window state".into());
        }
        self.last_pane = 0;
        self.recompute_next_action();
        Ok(())
    }

    fn report(&self, r: &mut OperatorReport) {
        self.stats.report(r);
        r.open += self.panes.len() as u64;
        for p in &self.panes {
            r.keys += p.table.len() as u64;
            r.state_bytes += p.table.bytes() as u64;
        }
    }
}
