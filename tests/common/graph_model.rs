//! A deliberately naive reference engine for dataflow graphs over ONE input file: windows,
//! interval joins, temporal joins, dedupe, filters and selects, wired by name like a config's
//! `[transforms]`, replayed record by record in file order (the brief's sequential semantics).
//!
//! Written from the semantics as described to the test authors, not from engine code, and never
//! calling into the engine's library. The same [`Pipeline`] also writes the TOML the engine runs
//! (`graph_run`), so the two cannot drift apart; filters and selects carry both their expression
//! text (for the engine) and a Rust closure (for the model).
//!
//! The replay: before record i, every node in declaration order (which must be topological)
//! advances its watermark to `min over its inputs` (the source's `max ts before i - ooo`; a node's
//! output passes its watermark minus its hold, a late side output its watermark as it is) and
//! fires what that allows; then record i enters
//! at the source. Whatever a node emits is delivered at once, depth first, to its readers, which
//! take it at their current watermark. At the end every watermark becomes +infinity.
//!
//! Where the engine may legitimately deliver records of one position in another order (records
//! from other operators arrive from several shards), an outcome that depends on that order is
//! recorded in [`ModelRun::ambiguous`]; tests keep it empty, so every expectation is exact.

use super::model::{Agg, Win};
use serde_json::{Number, Value};
use std::collections::BTreeMap;

mod operators;
use operators::State;

pub const NEG_INF: i64 = i64::MIN;
pub const POS_INF: i64 = i64::MAX;
/// The source's name in every generated config.
pub const SOURCE: &str = "src";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
}

impl JoinKind {
    /// Whether unmatched [left, right] rows are emitted.
    pub fn outer(self) -> [bool; 2] {
        [
            matches!(self, JoinKind::Left | JoinKind::Full),
            matches!(self, JoinKind::Right | JoinKind::Full),
        ]
    }
}

pub enum Op {
    Filter {
        input: String,
        cond: String,
        f: Box<dyn Fn(&Value) -> bool>,
    },
    Select {
        input: String,
        fields: Vec<(String, String)>,
        f: Box<dyn Fn(&Value) -> Value>,
    },
    Window {
        inputs: Vec<String>,
        group_by: Vec<String>,
        win: Win,
        lateness_ms: i64,
        aggs: Vec<(String, Agg)>,
    },
    IntervalJoin {
        left: String,
        right: String,
        on: Vec<String>,
        lower: i64,
        upper: i64,
        kind: JoinKind,
    },
    TemporalJoin {
        input: String,
        table: String,
        on_input: String,
        on_table: String,
        left: bool,
    },
    Dedupe {
        inputs: Vec<String>,
        key: Vec<String>,
        horizon_ms: i64,
    },
}

pub struct Transform {
    pub name: String,
    pub op: Op,
    pub late_events: Option<String>,
}

/// A job: one file source `src`, transforms in topological order, and the streams written to a
/// file each (transform outputs or late side outputs).
pub struct Pipeline {
    pub ooo_ms: i64,
    pub transforms: Vec<Transform>,
    pub sinks: Vec<String>,
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

impl Pipeline {
    pub fn new(ooo_ms: i64) -> Pipeline {
        Pipeline {
            ooo_ms,
            transforms: Vec::new(),
            sinks: Vec::new(),
        }
    }
    fn add(mut self, name: &str, op: Op, late: Option<&str>) -> Self {
        self.transforms.push(Transform {
            name: name.into(),
            op,
            late_events: late.map(str::to_string),
        });
        self
    }
    pub fn filter(
        self,
        name: &str,
        input: &str,
        cond: &str,
        f: impl Fn(&Value) -> bool + 'static,
    ) -> Self {
        let (input, cond, f) = (input.into(), cond.into(), Box::new(f));
        self.add(name, Op::Filter { input, cond, f }, None)
    }
    pub fn select(
        self,
        name: &str,
        input: &str,
        fields: &[(&str, &str)],
        f: impl Fn(&Value) -> Value + 'static,
    ) -> Self {
        let fields = fields
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let (input, f) = (input.into(), Box::new(f));
        self.add(name, Op::Select { input, fields, f }, None)
    }
    #[allow(clippy::too_many_arguments)]
    pub fn window(
        self,
        name: &str,
        inputs: &[&str],
        group_by: &[&str],
        win: Win,
        lateness_ms: i64,
        late: Option<&str>,
        aggs: &[(&str, Agg)],
    ) -> Self {
        let aggs = aggs
            .iter()
            .map(|(n, a)| (n.to_string(), a.clone()))
            .collect();
        let (inputs, group_by) = (names(inputs), names(group_by));
        let op = Op::Window {
            inputs,
            group_by,
            win,
            lateness_ms,
            aggs,
        };
        self.add(name, op, late)
    }
    #[allow(clippy::too_many_arguments)]
    pub fn interval_join(
        self,
        name: &str,
        left: &str,
        right: &str,
        on: &[&str],
        (lower, upper): (i64, i64),
        kind: JoinKind,
        late: Option<&str>,
    ) -> Self {
        let (left, right, on) = (left.into(), right.into(), names(on));
        let op = Op::IntervalJoin {
            left,
            right,
            on,
            lower,
            upper,
            kind,
        };
        self.add(name, op, late)
    }
    pub fn temporal_join(
        self,
        name: &str,
        input: &str,
        table: &str,
        (on_input, on_table): (&str, &str),
        left: bool,
        late: Option<&str>,
    ) -> Self {
        let (input, table) = (input.into(), table.into());
        let (on_input, on_table) = (on_input.into(), on_table.into());
        let op = Op::TemporalJoin {
            input,
            table,
            on_input,
            on_table,
            left,
        };
        self.add(name, op, late)
    }
    pub fn dedupe(
        self,
        name: &str,
        inputs: &[&str],
        key: &[&str],
        horizon_ms: i64,
        late: Option<&str>,
    ) -> Self {
        let op = Op::Dedupe {
            inputs: names(inputs),
            key: names(key),
            horizon_ms,
        };
        self.add(name, op, late)
    }
    pub fn sink(mut self, streams: &[&str]) -> Self {
        self.sinks.extend(names(streams));
        self
    }

    /// The streams transform `t` reads, by port (a join's two sides are ports 0 and 1).
    pub fn inputs_of(t: &Transform) -> Vec<(usize, &str)> {
        match &t.op {
            Op::Filter { input, .. } | Op::Select { input, .. } => vec![(0, input.as_str())],
            Op::Window { inputs, .. } | Op::Dedupe { inputs, .. } => {
                inputs.iter().map(|i| (0, i.as_str())).collect()
            }
            Op::IntervalJoin { left, right, .. } => vec![(0, left.as_str()), (1, right.as_str())],
            Op::TemporalJoin { input, table, .. } => vec![(0, input.as_str()), (1, table.as_str())],
        }
    }

    /// How far an outer interval join holds the watermark it passes on behind its own.
    fn hold(t: &Transform) -> i64 {
        match &t.op {
            Op::IntervalJoin {
                lower, upper, kind, ..
            } => {
                let [left_outer, right_outer] = kind.outer();
                let left = if left_outer { *upper } else { 0 };
                let right = if right_outer { -lower } else { 0 };
                left.max(right).max(0)
            }
            _ => 0,
        }
    }

    /// Replays `content` (NDJSON, one partition) through the graph.
    pub fn model(&self, content: &str) -> ModelRun {
        let mut r = Replay::new(self);
        let mut max_ts: Option<i64> = None;
        for (pos, line) in content.lines().enumerate() {
            let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Some(ts) = v.get("ts").and_then(Value::as_i64) else {
                continue;
            };
            r.pos = pos;
            r.advance(max_ts.map_or(NEG_INF, |m| m - self.ooo_ms));
            r.seq += 1;
            let rec = Rec {
                ts,
                v,
                retract: false,
                derived: false,
                origin: r.fresh(),
            };
            r.deliver(SOURCE, rec);
            max_ts = Some(max_ts.map_or(ts, |m| m.max(ts)));
        }
        r.pos = usize::MAX;
        r.advance(POS_INF);
        r.run
    }
}

/// What the model says the job writes.
#[derive(Debug, Default)]
pub struct ModelRun {
    /// Records written to each sunk stream, in emission order.
    pub out: BTreeMap<String, Vec<Value>>,
    /// Counters by `node.what` (`late`, `refires`, `pairs`, `unmatched`, `dropped`, ...).
    pub stats: BTreeMap<String, usize>,
    /// Outcomes that would depend on an arrival order the engine does not fix.
    pub ambiguous: Vec<String>,
    /// Lines whose record reached a temporal join behind its watermark after a newer version
    /// of its key had become valid (valid from a time in (ts, watermark]): late by the semantics.
    pub late_after_newer_version: Vec<usize>,
}

impl ModelRun {
    pub fn stat(&self, key: &str) -> usize {
        self.stats.get(key).copied().unwrap_or(0)
    }
    pub fn lines(&self, stream: &str) -> &[Value] {
        self.out.get(stream).map_or(&[], |v| &v[..])
    }
}

/// A record on its way: its event time, value, whether it takes back an earlier window result,
/// whether it came from an operator (not straight from the source), and the emission it is part of.
#[derive(Clone, Debug)]
struct Rec {
    ts: i64,
    v: Value,
    retract: bool,
    derived: bool,
    origin: u64,
}

/// A field path (`left.v`) in a record; missing = null.
pub fn get_path(v: &Value, path: &str) -> Value {
    let mut at = v;
    for seg in path.split('.') {
        match at.get(seg) {
            Some(x) => at = x,
            None => return Value::Null,
        }
    }
    at.clone()
}

/// The key of a join or dedupe: `None` when any field is missing or null (it never matches).
fn key_of(v: &Value, fields: &[String]) -> Option<Vec<Value>> {
    let k: Vec<Value> = fields.iter().map(|f| get_path(v, f)).collect();
    (!k.iter().any(Value::is_null)).then_some(k)
}

fn num(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

fn sub_hold(wm: i64, hold: i64) -> i64 {
    if wm == NEG_INF || wm == POS_INF {
        wm
    } else {
        wm - hold
    }
}

enum Emit {
    Out(Rec),
    Late(Rec),
}

/// A record an operator emits at time `ts`, part of emission `origin`.
fn emitted(ts: i64, v: Value, origin: u64) -> Emit {
    Emit::Out(Rec {
        ts,
        v,
        retract: false,
        derived: true,
        origin,
    })
}

struct Replay<'p> {
    p: &'p Pipeline,
    wm: Vec<i64>,
    state: Vec<State>,
    run: ModelRun,
    /// Position (line index) of the record being replayed; `usize::MAX` at the end.
    pos: usize,
    seq: u64,
    origins: u64,
}

impl<'p> Replay<'p> {
    fn new(p: &'p Pipeline) -> Replay<'p> {
        let n = p.transforms.len();
        Replay {
            p,
            wm: vec![NEG_INF; n],
            state: (0..n).map(|_| State::default()).collect(),
            run: ModelRun::default(),
            pos: 0,
            seq: 0,
            origins: 0,
        }
    }

    fn fresh(&mut self) -> u64 {
        self.origins += 1;
        self.origins
    }

    fn count(&mut self, node: usize, what: &str) {
        let key = format!("{}.{what}", self.p.transforms[node].name);
        *self.run.stats.entry(key).or_default() += 1;
    }

    fn ambiguous(&mut self, node: usize, why: String) {
        let name = &self.p.transforms[node].name;
        self.run
            .ambiguous
            .push(format!("{name} at line {}: {why}", self.pos));
    }

    /// The watermark of stream `s` as its readers see it.
    fn stream_wm(&self, s: &str, src_wm: i64) -> i64 {
        if s == SOURCE {
            return src_wm;
        }
        for (i, t) in self.p.transforms.iter().enumerate() {
            if t.name == s {
                return match &t.op {
                    Op::Filter { input, .. } | Op::Select { input, .. } => {
                        self.stream_wm(input, src_wm)
                    }
                    _ => sub_hold(self.wm[i], Pipeline::hold(t)),
                };
            }
            if t.late_events.as_deref() == Some(s) {
                return self.wm[i];
            }
        }
        panic!("model: no stream `{s}`")
    }

    fn advance(&mut self, src_wm: i64) {
        let p = self.p;
        for (i, t) in p.transforms.iter().enumerate() {
            if matches!(t.op, Op::Filter { .. } | Op::Select { .. }) {
                continue;
            }
            let new = Pipeline::inputs_of(t)
                .iter()
                .map(|(_, s)| self.stream_wm(s, src_wm))
                .min()
                .unwrap_or(NEG_INF);
            if new > self.wm[i] {
                self.wm[i] = new;
                let emits = self.on_watermark(i);
                self.emit(i, emits);
            }
        }
    }

    fn emit(&mut self, node: usize, emits: Vec<Emit>) {
        let t = &self.p.transforms[node];
        for e in emits {
            match e {
                Emit::Out(rec) => self.deliver(
                    &t.name,
                    Rec {
                        derived: true,
                        ..rec
                    },
                ),
                Emit::Late(rec) => {
                    self.count(node, "late");
                    if let Some(late) = &t.late_events {
                        let origin = self.fresh();
                        self.deliver(
                            late,
                            Rec {
                                derived: true,
                                origin,
                                ..rec
                            },
                        );
                    }
                }
            }
        }
    }

    /// Hands `rec` to everything that reads `stream` (sinks, steps, node ports), depth first.
    fn deliver(&mut self, stream: &str, rec: Rec) {
        let p = self.p;
        if !rec.retract && p.sinks.iter().any(|s| s == stream) {
            self.run
                .out
                .entry(stream.to_string())
                .or_default()
                .push(rec.v.clone());
        }
        for (i, t) in p.transforms.iter().enumerate() {
            for (port, s) in Pipeline::inputs_of(t) {
                if s != stream {
                    continue;
                }
                match &t.op {
                    Op::Filter { f, .. } => {
                        if f(&rec.v) {
                            self.deliver(&t.name, rec.clone());
                        }
                    }
                    Op::Select { f, .. } => {
                        let v = f(&rec.v);
                        self.deliver(&t.name, Rec { v, ..rec.clone() });
                    }
                    _ => {
                        let emits = self.on_record(i, port, rec.clone());
                        self.emit(i, emits);
                    }
                }
            }
        }
    }

    fn on_record(&mut self, node: usize, port: usize, rec: Rec) -> Vec<Emit> {
        let t = &self.p.transforms[node];
        if rec.retract && !matches!(t.op, Op::Window { .. }) {
            panic!(
                "model: `{}` cannot take a retraction (the plan refuses this graph)",
                t.name
            );
        }
        match &t.op {
            Op::Window { .. } => self.window_record(node, rec),
            Op::IntervalJoin { .. } => self.join_record(node, port, rec),
            Op::TemporalJoin { .. } => self.temporal_record(node, port, rec),
            Op::Dedupe { .. } => self.dedupe_record(node, rec),
            Op::Filter { .. } | Op::Select { .. } => unreachable!("steps are applied in deliver"),
        }
    }

    fn on_watermark(&mut self, node: usize) -> Vec<Emit> {
        match &self.p.transforms[node].op {
            Op::Window { .. } => self.window_fire(node),
            Op::IntervalJoin { .. } => self.join_expire(node),
            Op::TemporalJoin { .. } => self.temporal_answer(node),
            Op::Dedupe { .. } => self.dedupe_decide(node),
            Op::Filter { .. } | Op::Select { .. } => Vec::new(),
        }
    }
}
