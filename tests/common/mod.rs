//! Shared harness for the end-to-end tests: a deliberately naive reference model of the window
//! operator (a sequential replay of the input files), a seeded input generator, and helpers that
//! write a config, run the real `sluice` binary and compare what it wrote with the model.
//! It must never call into the engine's library: the model is the independent check.
//!
//! Engine-contract assumptions made here (for the lead to reconcile with the engine):
//! - A1 `sluice run --config F [--stats S]` exits 0 once bounded inputs end; `validate` exits 0 on a
//!   good config; errors exit non-zero and print `file:line:col` plus the key/name on stderr.
//! - A2 `[runtime]` accepts `shards`, `key_groups`, `ring_capacity`, `chunk_bytes`. Durations are
//!   written with the largest exact unit ("1m", "5s", "3001ms"); a zero lateness is written "0s".
//! - A3 Watermark before an event = max ts of the partition's earlier valid events minus
//!   max_out_of_orderness (no extra -1): an event at ts == wm == window_end-1 is late.
//! - A4 A window [s,e) fires when wm >= e-1 (checked before each event and at end of input), is
//!   dropped when wm >= e-1+lateness; an event is late for a window when wm >= e-1+lateness and goes
//!   verbatim (input bytes, no newline) to `late_events` only when it is late for ALL its windows.
//!   An accepted event for a window with e-1 <= wm (re-)fires it at once, even if that window had
//!   no earlier data.
//! - A5 Sessions: a new event is [ts, ts+gap); it merges first and is late when the MERGED window's
//!   end-1+lateness <= wm (Flink's MergingWindowSet); sessions merge
//!   when they intersect inclusively (Flink's TimeWindow.intersects). Tests never put two events of
//!   a key exactly `gap` apart, so an exclusive rule passes too. A session is dropped from state when
//!   wm >= end-1+lateness. Tests avoid late merges that move a fired session's window_start.
//! - A6 Several files: the operator's watermark is monotone: max(previous, min over partitions
//!   that have seen an event and have not finished of (max - ooo)); it stays put when none is
//!   active. The model reads whole files one after another (sorted by path), so multi-file tests
//!   only assert what the engine's round-robin chunk interleaving cannot change.
//! - A7 Output line keys are exactly group_by + window_start + window_end + aggregate names;
//!   group-by values are the input JSON values; count/sum/min/max/count_distinct print integers
//!   (integer inputs), avg any JSON number. Sum/min/max/avg over a window whose field is always
//!   null/missing are not checked.
//! - A8 Lines of one (group-by, window_start) appear in the output file in emission order (the last
//!   one is the current value), whatever the shard count; lines of different keys may interleave.
//! - A9 Malformed = not a JSON object, ts missing or not an integer, or a sum/min/max/avg field
//!   present and neither a number nor null. Such a line changes nothing (not even the watermark)
//!   and goes to the dead-letter file as {reason, source, partition (path ending in the file
//!   name), offset (byte offset of its first byte), raw (the line)}.
//! - A10 A sink or dead-letter file that received nothing may be absent (read as empty).
//! - A11 `--stats` JSON has numbers `events_per_second`, `latency_p50_us`, `latency_p99_us`,
//!   `latency_p999_us`.
#![allow(dead_code)]

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_sluice");
/// A minute-aligned epoch-ms base near 2023, so windows start on it.
pub const BASE: i64 = 1_699_999_980_000;

/// xorshift64*: seeded, reproducible, no `rand` dependency.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in 0..n (0 when n <= 0).
    pub fn below(&mut self, n: i64) -> i64 {
        if n <= 0 {
            0
        } else {
            (self.next_u64() % n as u64) as i64
        }
    }
    pub fn chance(&mut self, permille: i64) -> bool {
        self.below(1000) < permille
    }
}

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

    fn toml(&self) -> String {
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

fn upsert_key(group: &[Value], start: i64) -> String {
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

// ---------------------------------------------------------------------------------------------
// Input generation.

/// Shape of a generated click file: event i sits at slot BASE-relative time, arrives jittered.
#[derive(Clone, Debug)]
pub struct Gen {
    pub n: usize,
    pub base: i64,
    /// Slot i+1 = slot i + 1..=step_max ms.
    pub step_max: i64,
    /// In-bound jitter: ts = slot - below(jitter); keep jitter <= ooo so every event is in bound.
    pub jitter: i64,
    pub keys: i64,
    pub regions: i64,
    pub users: i64,
    /// Per-mille of events sent back beyond the bound by jitter + below(late_extra) ms.
    pub late_permille: i64,
    pub late_extra: i64,
    /// Late events only from this event index on.
    pub late_from: usize,
    /// Per-mille of events whose bid is null or missing.
    pub null_permille: i64,
    /// All timestamps even (with odd session gaps, no two events are exactly `gap` apart).
    pub even_ts: bool,
}

impl Gen {
    pub fn new(n: usize, jitter: i64) -> Gen {
        Gen {
            n,
            base: BASE,
            step_max: 400,
            jitter,
            keys: 8,
            regions: 3,
            users: 40,
            late_permille: 0,
            late_extra: 0,
            late_from: 0,
            null_permille: 0,
            even_ts: false,
        }
    }
}

pub fn click_line(ts: i64, ad: i64, region: i64, user: i64, bid: Option<Option<i64>>) -> String {
    let bid = match bid {
        Some(Some(b)) => format!(",\"bid\":{b}"),
        Some(None) => ",\"bid\":null".to_string(),
        None => String::new(),
    };
    format!(
        "{{\"ts\":{ts},\"ad_id\":\"ad-{ad}\",\"region\":{region},\"user_id\":\"u{user}\"{bid}}}"
    )
}

/// Generated click lines (no trailing newlines), in arrival order.
pub fn gen_lines(seed: u64, g: &Gen) -> Vec<(i64, String)> {
    let mut rng = Rng::new(seed);
    let mut slot = g.base;
    let mut out = Vec::with_capacity(g.n);
    for i in 0..g.n {
        let (mut ts, k) = if g.even_ts {
            slot += 2 * (1 + rng.below(g.step_max / 2));
            (slot - 2 * rng.below(g.jitter / 2), 2)
        } else {
            slot += 1 + rng.below(g.step_max);
            (slot - rng.below(g.jitter), 1)
        };
        if i >= g.late_from && rng.chance(g.late_permille) {
            ts = slot - g.jitter - rng.below(g.late_extra);
            ts -= ts.rem_euclid(k);
        }
        // Skew: low ad ids are more frequent.
        let a = rng.below(g.keys);
        let ad = a * rng.below(g.keys) / g.keys.max(1);
        let bid = if rng.chance(g.null_permille) {
            if rng.chance(500) {
                Some(None)
            } else {
                None
            }
        } else {
            Some(Some(rng.below(10_000)))
        };
        out.push((
            ts,
            click_line(ts, ad, rng.below(g.regions), rng.below(g.users), bid),
        ));
    }
    out
}

/// Joins lines into file content, one per line, each ending in '\n'.
pub fn file_of<S: AsRef<str>>(lines: &[S]) -> String {
    lines.iter().map(|l| format!("{}\n", l.as_ref())).collect()
}

// ---------------------------------------------------------------------------------------------
// Running the binary.

#[derive(Clone, Copy, Debug)]
pub struct Rt {
    pub shards: usize,
    pub ring_capacity: usize,
    pub chunk_bytes: usize,
}

pub const fn rt(shards: usize, ring_capacity: usize, chunk_bytes: usize) -> Rt {
    Rt {
        shards,
        ring_capacity,
        chunk_bytes,
    }
}

/// Runtime settings every single-file test must give identical output under.
pub const VARIANTS: &[Rt] = &[
    rt(1, 16, 64),
    rt(2, 16, 4096),
    rt(3, 1024, 200),
    rt(2, 8192, 1 << 20),
    rt(3, 16, 65_536),
    rt(1, 8192, 1 << 20),
];

#[derive(Debug)]
pub struct Outputs {
    pub out: Vec<String>,
    pub late: Vec<String>,
    pub dead: Vec<String>,
}

#[derive(Debug)]
pub struct Exit {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Runs the binary with `args`, killing it after `timeout`; stdout/stderr go through files in `dir`.
pub fn sluice(dir: &Path, args: &[&str], timeout: Duration) -> Exit {
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let (so, se) = (
        dir.join(format!("stdout-{n}.txt")),
        dir.join(format!("stderr-{n}.txt")),
    );
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&so).expect("create stdout file"))
        .stderr(std::fs::File::create(&se).expect("create stderr file"))
        .spawn()
        .expect("spawn the sluice binary");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for sluice") {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "sluice {args:?} ran past {timeout:?}; stderr:\n{}",
                read(&se)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Exit {
        success: status.success(),
        stdout: read(&so),
        stderr: read(&se),
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Lines of a file (absent file = no lines, A10).
pub fn read_lines(p: &Path) -> Vec<String> {
    let text = read(p);
    split_lines(&text)
        .into_iter()
        .map(|(_, l)| l.to_string())
        .collect()
}

pub fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A config for `job` reading `input` (file or glob) into out/late/dead files named by `tag`.
pub fn job_toml(job: &Job, rt: Rt, input: &str, dir: &Path, tag: &str) -> String {
    let p = |suffix: &str| toml_str(&dir.join(format!("{tag}.{suffix}.ndjson")).to_string_lossy());
    let group_by: Vec<String> = job.group_by.iter().map(|g| toml_str(g)).collect();
    let aggs: Vec<String> = job
        .aggs
        .iter()
        .map(|(n, a)| format!("{n} = {}", toml_str(&a.expr())))
        .collect();
    format!(
        "[runtime]\nshards = {}\nkey_groups = 720\nring_capacity = {}\nchunk_bytes = {}\n\n\
         [sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
         event_time = {{ field = {}, unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"{}\", idle_timeout = \"30s\" }}\n\n\
         [transforms.win]\ntype = \"window\"\ninputs = [\"ev\"]\ngroup_by = [{}]\nwindow = {}\n\
         allowed_lateness = \"{}\"\nlate_events = \"late_ev\"\naggregates = {{ {} }}\n\n\
         [sinks.out]\ntype = \"file\"\ninputs = [\"win\"]\npath = {}\n\n\
         [sinks.late]\ntype = \"file\"\ninputs = [\"late_ev\"]\npath = {}\n\n\
         [dead_letter]\npath = {}\n",
        rt.shards,
        rt.ring_capacity,
        rt.chunk_bytes,
        toml_str(input),
        toml_str(&job.ts_field),
        dur(job.ooo_ms),
        group_by.join(", "),
        job.window.toml(),
        dur(job.lateness_ms),
        aggs.join(", "),
        p("out"),
        p("late"),
        p("dead"),
    )
}

/// Writes a config for `job` and runs `sluice run` on `input`; panics unless it exits 0.
pub fn run_job(dir: &Path, job: &Job, rt: Rt, input: &str) -> Outputs {
    let tag = format!("job{}", RUNS.fetch_add(1, Ordering::Relaxed));
    let cfg = dir.join(format!("{tag}.toml"));
    std::fs::write(&cfg, job_toml(job, rt, input, dir, &tag)).expect("write config");
    let exit = sluice(
        dir,
        &["run", "--config", &cfg.to_string_lossy()],
        Duration::from_secs(120),
    );
    assert!(
        exit.success,
        "sluice run failed for {rt:?}; stderr:\n{}",
        exit.stderr
    );
    let f = |s: &str| read_lines(&dir.join(format!("{tag}.{s}.ndjson")));
    Outputs {
        out: f("out"),
        late: f("late"),
        dead: f("dead"),
    }
}

pub fn sorted(v: &[String]) -> Vec<String> {
    let mut v = v.to_vec();
    v.sort();
    v
}

// ---------------------------------------------------------------------------------------------
// Comparing.

fn check_line(job: &Job, exp: &Row, act: &Map<String, Value>) -> Result<(), String> {
    let want: BTreeSet<&str> = job
        .group_by
        .iter()
        .map(String::as_str)
        .chain(["window_start", "window_end"])
        .chain(job.aggs.iter().map(|(n, _)| n.as_str()))
        .collect();
    let got: BTreeSet<&str> = act.keys().map(String::as_str).collect();
    if want != got {
        return Err(format!("keys {got:?}, want {want:?}"));
    }
    if act["window_end"].as_i64() != Some(exp.end) {
        return Err(format!(
            "window_end {}, want {}",
            act["window_end"], exp.end
        ));
    }
    for (name, v) in &exp.aggs {
        let a = &act[name.as_str()];
        let ok = match v {
            AggVal::Int(i) => a.as_i64() == Some(*i),
            AggVal::Float(f) => a
                .as_f64()
                .is_some_and(|x| (x - f).abs() <= 1e-9 * f.abs().max(1.0)),
            AggVal::Unchecked => true,
        };
        if !ok {
            return Err(format!("{name} = {a}, want {v:?}"));
        }
    }
    Ok(())
}

/// Output lines grouped by upsert key, each group in file order.
pub fn group_actual(job: &Job, lines: &[String]) -> BTreeMap<String, Vec<Map<String, Value>>> {
    let mut by_key: BTreeMap<String, Vec<Map<String, Value>>> = BTreeMap::new();
    for line in lines {
        let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(line) else {
            panic!("output line is not a JSON object: {line}");
        };
        let group: Vec<Value> = job
            .group_by
            .iter()
            .map(|g| obj.get(g).cloned().unwrap_or(Value::Null))
            .collect();
        let start = obj
            .get("window_start")
            .and_then(Value::as_i64)
            .unwrap_or_else(|| panic!("no integer window_start: {line}"));
        by_key
            .entry(upsert_key(&group, start))
            .or_default()
            .push(obj);
    }
    by_key
}

fn compare(
    job: &Job,
    act: &BTreeMap<String, Vec<Map<String, Value>>>,
    exp: &BTreeMap<String, Vec<Row>>,
    ctx: &str,
) {
    let mut errs = Vec::new();
    let keys: BTreeSet<&String> = act.keys().chain(exp.keys()).collect();
    for k in keys {
        let (a, e) = (
            act.get(k).map_or(&[][..], |v| &v[..]),
            exp.get(k).map_or(&[][..], |v| &v[..]),
        );
        if a.len() != e.len() {
            errs.push(format!(
                "{k}: {} lines, model says {} ({:?} vs {:?})",
                a.len(),
                e.len(),
                a.last(),
                e.last()
            ));
            continue;
        }
        for (i, (a, e)) in a.iter().zip(e).enumerate() {
            if let Err(msg) = check_line(job, e, a) {
                errs.push(format!(
                    "{k} line #{i}: {msg}; got {}",
                    Value::Object(a.clone())
                ));
            }
        }
    }
    if !errs.is_empty() {
        let n = errs.len();
        errs.truncate(12);
        panic!(
            "{ctx}: {n} mismatches with the model, first ones:\n{}",
            errs.join("\n")
        );
    }
}

/// Every output line, per (group-by, window_start) in order, must be what the model emitted.
pub fn assert_rows_match(job: &Job, lines: &[String], rows: &[Row], ctx: &str) {
    let mut exp: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for r in rows {
        exp.entry(r.key()).or_default().push(r.clone());
    }
    compare(job, &group_actual(job, lines), &exp, ctx);
}

/// The last line per (group-by, window_start) — the upsert log's final state.
pub fn final_rows(rows: &[Row]) -> BTreeMap<String, Row> {
    rows.iter().map(|r| (r.key(), r.clone())).collect()
}

pub fn assert_final_match(job: &Job, lines: &[String], rows: &[Row], ctx: &str) {
    let act = group_actual(job, lines)
        .into_iter()
        .map(|(k, mut v)| (k, v.split_off(v.len() - 1)))
        .collect();
    let exp = final_rows(rows)
        .into_iter()
        .map(|(k, r)| (k, vec![r]))
        .collect();
    compare(job, &act, &exp, ctx);
}

/// Dead letters must be exactly `expected` (file name, offset, raw), with a reason and source.
pub fn assert_dead_letters(
    dead: &[String],
    expected: &[(String, u64, String)],
    source: &str,
    ctx: &str,
) {
    let mut got = Vec::new();
    for line in dead {
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line) else {
            panic!("{ctx}: dead letter is not a JSON object: {line}");
        };
        let reason = o.get("reason").and_then(Value::as_str).unwrap_or_default();
        assert!(
            !reason.is_empty(),
            "{ctx}: dead letter without a reason: {line}"
        );
        assert_eq!(
            o.get("source").and_then(Value::as_str),
            Some(source),
            "{ctx}: source of {line}"
        );
        let part = o
            .get("partition")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{ctx}: no partition: {line}"));
        let name = Path::new(part)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let off = o
            .get("offset")
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("{ctx}: no integer offset: {line}"));
        let raw = o
            .get("raw")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{ctx}: no string raw: {line}"));
        got.push((name, off, raw.to_string()));
    }
    got.sort();
    let mut want = expected.to_vec();
    want.sort();
    assert_eq!(got, want, "{ctx}: dead letters (file, offset, raw)");
}

/// A fresh temp dir with an input file written into it.
pub fn input_file(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("create input dir");
    }
    std::fs::write(&p, content).expect("write input file");
    p
}

/// Runs `job` on one file under every runtime variant: each run must match the model (all lines,
/// late file, dead letters) and all runs must write the same multiset of lines.
pub fn check_single_file(job: &Job, content: &str, variants: &[Rt]) -> ModelOut {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = input_file(dir.path(), "input.ndjson", content);
    let m = model(job, &[content]);
    assert_eq!(
        m.ambiguous_session_merges, 0,
        "test data must avoid undecided session merges"
    );
    let dead: Vec<(String, u64, String)> = m
        .malformed
        .iter()
        .map(|(_, o, r)| ("input.ndjson".into(), *o, r.clone()))
        .collect();
    let mut first: Option<Outputs> = None;
    for &v in variants {
        let o = run_job(dir.path(), job, v, &input.to_string_lossy());
        let ctx = format!("{:?} {v:?}", job.window);
        assert_rows_match(job, &o.out, &m.rows, &ctx);
        assert_eq!(sorted(&o.late), sorted(&m.late), "{ctx}: late side output");
        assert_dead_letters(&o.dead, &dead, "ev", &ctx);
        if let Some(f) = &first {
            assert_eq!(
                sorted(&o.out),
                sorted(&f.out),
                "{ctx}: output differs from {:?}",
                variants[0]
            );
            assert_eq!(
                sorted(&o.late),
                sorted(&f.late),
                "{ctx}: late output differs"
            );
        } else {
            first = Some(o);
        }
    }
    m
}
