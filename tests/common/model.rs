//! The job description (window, aggregates, lateness) and the reference model of the window
//! operator: a sequential replay of the input files that yields every line the engine should emit,
//! the late side output and the malformed lines (assumptions A3..A9 in `common`'s module doc).

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug)]
pub enum Win {
    Tumbling { size: i64 },
    Sliding { size: i64, slide: i64 },
    Cumulative { step: i64, max_size: i64 },
    Session { gap: i64 },
}

impl Win {
    /// The [start, end) windows holding `ts`, by the definitions in the brief (not for sessions).
    pub fn assign(&self, ts: i64) -> Vec<(i64, i64)> {
        match *self {
            Win::Tumbling { size } => {
                let s = ts.div_euclid(size) * size;
                vec![(s, s + size)]
            }
            Win::Sliding { size, slide } => {
                let mut out = Vec::new();
                let mut s = ts.div_euclid(slide) * slide;
                while s > ts - size {
                    out.push((s, s + size));
                    s -= slide;
                }
                out.reverse();
                out
            }
            Win::Cumulative { step, max_size } => {
                let b = ts.div_euclid(max_size) * max_size;
                (1..=max_size / step)
                    .map(|k| (b, b + k * step))
                    .filter(|&(_, e)| ts < e)
                    .collect()
            }
            Win::Session { .. } => panic!("sessions are assigned by merging, not by assign()"),
        }
    }

    pub(super) fn toml(&self) -> String {
        match *self {
            Win::Tumbling { size } => {
                format!("{{ type = \"tumbling\", size = \"{}\" }}", dur(size))
            }
            Win::Sliding { size, slide } => {
                format!(
                    "{{ type = \"sliding\", size = \"{}\", slide = \"{}\" }}",
                    dur(size),
                    dur(slide)
                )
            }
            Win::Cumulative { step, max_size } => format!(
                "{{ type = \"cumulative\", step = \"{}\", max_size = \"{}\" }}",
                dur(step),
                dur(max_size)
            ),
            Win::Session { gap } => format!("{{ type = \"session\", gap = \"{}\" }}", dur(gap)),
        }
    }
}

/// Milliseconds as a config duration in the largest exact unit.
pub fn dur(ms: i64) -> String {
    for (unit, name) in [(3_600_000, "h"), (60_000, "m"), (1_000, "s")] {
        if ms != 0 && ms % unit == 0 {
            return format!("{}{name}", ms / unit);
        }
    }
    if ms == 0 {
        "0s".to_string()
    } else {
        format!("{ms}ms")
    }
}

#[derive(Clone, Debug)]
pub enum Agg {
    Count,
    Sum(String),
    Min(String),
    Max(String),
    Avg(String),
    CountDistinct(String),
}

impl Agg {
    pub fn expr(&self) -> String {
        match self {
            Agg::Count => "count()".into(),
            Agg::Sum(f) => format!("sum({f})"),
            Agg::Min(f) => format!("min({f})"),
            Agg::Max(f) => format!("max({f})"),
            Agg::Avg(f) => format!("avg({f})"),
            Agg::CountDistinct(f) => format!("count_distinct({f})"),
        }
    }
    fn numeric_field(&self) -> Option<&str> {
        match self {
            Agg::Sum(f) | Agg::Min(f) | Agg::Max(f) | Agg::Avg(f) => Some(f),
            Agg::Count | Agg::CountDistinct(_) => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Job {
    pub window: Win,
    pub group_by: Vec<String>,
    pub aggs: Vec<(String, Agg)>,
    pub ts_field: String,
    pub ooo_ms: i64,
    pub lateness_ms: i64,
}

impl Job {
    /// The click job of issue 2, grouped by `ad_id`, with every aggregate function.
    pub fn clicks(window: Win, ooo_ms: i64, lateness_ms: i64) -> Job {
        let bid = || "bid".to_string();
        Job {
            window,
            group_by: vec!["ad_id".into()],
            aggs: vec![
                ("clicks".into(), Agg::Count),
                ("spend".into(), Agg::Sum(bid())),
                ("low_bid".into(), Agg::Min(bid())),
                ("top_bid".into(), Agg::Max(bid())),
                ("mean_bid".into(), Agg::Avg(bid())),
                ("users".into(), Agg::CountDistinct("user_id".into())),
            ],
            ts_field: "ts".into(),
            ooo_ms,
            lateness_ms,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum AggVal {
    Int(i64),
    Float(f64),
    /// Not checked (e.g. sum over a window whose field is always null).
    Unchecked,
}

/// One expected output line.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub group: Vec<Value>,
    pub start: i64,
    pub end: i64,
    pub aggs: Vec<(String, AggVal)>,
}

impl Row {
    pub fn key(&self) -> String {
        upsert_key(&self.group, self.start)
    }
}

pub(super) fn upsert_key(group: &[Value], start: i64) -> String {
    format!(
        "{}@{start}",
        serde_json::to_string(group).unwrap_or_default()
    )
}

#[derive(Debug, Default)]
pub struct ModelOut {
    /// Every emitted line, in emission order.
    pub rows: Vec<Row>,
    /// Late-side-output lines, verbatim, in input order.
    pub late: Vec<String>,
    /// (partition index, byte offset, raw line) of every malformed line.
    pub malformed: Vec<(usize, u64, String)>,
    /// Emissions of a window (or session) that had fired before.
    pub refires: usize,
    /// Sessions where one event joined two or more existing sessions.
    pub bridging_merges: usize,
    /// Late merges that moved a fired session's start (behaviour undecided; tests keep this 0).
    pub ambiguous_session_merges: usize,
    pub valid_events: usize,
}

/// A file's lines with the byte offset of each line's first byte (trailing newline not included).
pub fn split_lines(content: &str) -> Vec<(u64, &str)> {
    let mut out = Vec::new();
    let mut off = 0u64;
    for piece in content.split_inclusive('\n') {
        out.push((off, piece.strip_suffix('\n').unwrap_or(piece)));
        off += piece.len() as u64;
    }
    out
}

/// The model's notion of a valid event (A9): its timestamp and fields, or `None` if malformed.
pub fn parse_event(job: &Job, line: &str) -> Option<(i64, Map<String, Value>)> {
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(line) else {
        return None;
    };
    let ts = obj.get(&job.ts_field)?.as_i64()?;
    for (_, agg) in &job.aggs {
        if let Some(f) = agg.numeric_field() {
            match obj.get(f) {
                None | Some(Value::Null) | Some(Value::Number(_)) => {}
                Some(_) => return None,
            }
        }
    }
    Some((ts, obj))
}

struct Pending {
    group: Vec<Value>,
    start: i64,
    end: i64,
    events: Vec<Map<String, Value>>,
    fired: bool,
}

struct Model<'a> {
    job: &'a Job,
    wm: i64,
    /// Time windows keyed by (end, group key, start) so firing walks them in end order.
    windows: BTreeMap<(i64, String, i64), Pending>,
    sessions: BTreeMap<String, Vec<Pending>>,
    out: ModelOut,
}

/// Replays `partitions` (file contents, in path order) one whole file after another.
pub fn model(job: &Job, partitions: &[&str]) -> ModelOut {
    let mut m = Model {
        job,
        wm: i64::MIN,
        windows: BTreeMap::new(),
        sessions: BTreeMap::new(),
        out: ModelOut::default(),
    };
    for (p, content) in partitions.iter().enumerate() {
        let mut max: Option<i64> = None;
        for (off, line) in split_lines(content) {
            let Some((ts, obj)) = parse_event(job, line) else {
                m.out.malformed.push((p, off, line.to_string()));
                continue;
            };
            if let Some(mx) = max {
                m.advance(mx.saturating_sub(job.ooo_ms));
            }
            m.on_event(line, ts, obj);
            max = Some(max.map_or(ts, |mx| mx.max(ts)));
            m.out.valid_events += 1;
        }
        if let Some(mx) = max {
            m.advance(mx.saturating_sub(job.ooo_ms));
        }
    }
    m.advance(i64::MAX);
    m.out
}

impl Model<'_> {
    /// Last moment at which a window ending at `end` still accepts events.
    fn late_bound(&self, end: i64) -> i64 {
        (end - 1).saturating_add(self.job.lateness_ms)
    }

    fn advance(&mut self, wm: i64) {
        if wm <= self.wm {
            return;
        }
        self.wm = wm;
        for w in self.windows.values_mut() {
            if !w.fired && w.end - 1 <= wm {
                w.fired = true;
                self.out.rows.push(row(&self.job.aggs, w));
            }
        }
        // Windows past their lateness can never change again (on_event skips them): forget them,
        // so each step looks only at windows still open (keys are (end, ..): split at the first
        // end whose late bound is still ahead).
        let first_live = (wm - self.job.lateness_ms).saturating_add(2);
        self.windows = self
            .windows
            .split_off(&(first_live, String::new(), i64::MIN));
        let mut fired: Vec<Row> = Vec::new();
        let lateness = self.job.lateness_ms;
        for list in self.sessions.values_mut() {
            for s in list.iter_mut().filter(|s| !s.fired && s.end - 1 <= wm) {
                s.fired = true;
                fired.push(row(&self.job.aggs, s));
            }
            list.retain(|s| (s.end - 1).saturating_add(lateness) > wm);
        }
        fired.sort_by_key(|r| r.end);
        self.out.rows.extend(fired);
    }

    fn on_event(&mut self, line: &str, ts: i64, obj: Map<String, Value>) {
        let group: Vec<Value> = self
            .job
            .group_by
            .iter()
            .map(|f| obj.get(f).cloned().unwrap_or(Value::Null))
            .collect();
        let key = serde_json::to_string(&group).unwrap_or_default();
        if let Win::Session { gap } = self.job.window {
            return self.on_session(line, ts, gap, group, key, obj);
        }
        let mut kept = false;
        for (s, e) in self.job.window.assign(ts) {
            if self.late_bound(e) <= self.wm {
                continue;
            }
            kept = true;
            let wm = self.wm;
            let w = self
                .windows
                .entry((e, key.clone(), s))
                .or_insert_with(|| Pending {
                    group: group.clone(),
                    start: s,
                    end: e,
                    events: Vec::new(),
                    fired: false,
                });
            w.events.push(obj.clone());
            if e - 1 <= wm {
                if w.fired {
                    self.out.refires += 1;
                }
                w.fired = true;
                self.out.rows.push(row(&self.job.aggs, w));
            }
        }
        if !kept {
            self.out.late.push(line.to_string());
        }
    }

    fn on_session(
        &mut self,
        line: &str,
        ts: i64,
        gap: i64,
        group: Vec<Value>,
        key: String,
        obj: Map<String, Value>,
    ) {
        // Flink's MergingWindowSet: merge first, then judge lateness on the merged window, so a
        // late event that joins a session still within its lateness is kept.
        let (mut lo, mut hi) = (ts, ts + gap);
        if let Some(list) = self.sessions.get(&key) {
            loop {
                let before = (lo, hi);
                for x in list {
                    if x.start <= hi && lo <= x.end {
                        lo = lo.min(x.start);
                        hi = hi.max(x.end);
                    }
                }
                if (lo, hi) == before {
                    break;
                }
            }
        }
        if self.late_bound(hi) <= self.wm {
            self.out.late.push(line.to_string());
            return;
        }
        let mut cur = Pending {
            group,
            start: ts,
            end: ts + gap,
            events: vec![obj],
            fired: false,
        };
        let list = self.sessions.entry(key).or_default();
        let (mut merged_any_fired, mut parts) = (false, 0);
        let mut fired_starts = Vec::new();
        // Merge until no remaining session intersects (inclusive, A5).
        while let Some(i) = list
            .iter()
            .position(|x| x.start <= cur.end && cur.start <= x.end)
        {
            let x = list.swap_remove(i);
            parts += 1;
            if x.fired {
                merged_any_fired = true;
                fired_starts.push(x.start);
            }
            cur.start = cur.start.min(x.start);
            cur.end = cur.end.max(x.end);
            cur.events.extend(x.events);
        }
        if parts >= 2 {
            self.out.bridging_merges += 1;
        }
        self.out.ambiguous_session_merges +=
            fired_starts.iter().filter(|&&s| s != cur.start).count();
        if cur.end - 1 <= self.wm {
            if merged_any_fired {
                self.out.refires += 1;
            }
            cur.fired = true;
            self.out.rows.push(row(&self.job.aggs, &cur));
        }
        list.push(cur);
    }
}

fn row(aggs: &[(String, Agg)], w: &Pending) -> Row {
    let nums = |f: &str| -> Vec<i64> {
        w.events
            .iter()
            .filter_map(|e| e.get(f))
            .filter(|v| !v.is_null())
            .map(|v| v.as_i64().expect("test data uses integer numeric fields"))
            .collect()
    };
    let vals = aggs
        .iter()
        .map(|(name, agg)| {
            let v = match agg {
                Agg::Count => AggVal::Int(w.events.len() as i64),
                Agg::Sum(f) => some_or_unchecked(nums(f), |v| AggVal::Int(v.iter().sum())),
                Agg::Min(f) => {
                    some_or_unchecked(nums(f), |v| AggVal::Int(*v.iter().min().unwrap_or(&0)))
                }
                Agg::Max(f) => {
                    some_or_unchecked(nums(f), |v| AggVal::Int(*v.iter().max().unwrap_or(&0)))
                }
                Agg::Avg(f) => some_or_unchecked(nums(f), |v| {
                    AggVal::Float(v.iter().sum::<i64>() as f64 / v.len() as f64)
                }),
                Agg::CountDistinct(f) => {
                    let set: BTreeSet<String> = w
                        .events
                        .iter()
                        .filter_map(|e| e.get(f))
                        .filter(|v| !v.is_null())
                        .map(|v| v.to_string())
                        .collect();
                    AggVal::Int(set.len() as i64)
                }
            };
            (name.clone(), v)
        })
        .collect();
    Row {
        group: w.group.clone(),
        start: w.start,
        end: w.end,
        aggs: vals,
    }
}

fn some_or_unchecked(v: Vec<i64>, f: impl Fn(&[i64]) -> AggVal) -> AggVal {
    if v.is_empty() {
        AggVal::Unchecked
    } else {
        f(&v)
    }
}
