//! The operators of the reference engine, each by its rules as the brief states them (Flink's):
//! what a record does on arrival and what a watermark step fires. They run inside the replay
//! of `graph_model` (its `Replay`), which delivers what they emit.

use super::{emitted, get_path, key_of, num, Agg, Emit, Op, Rec, Replay};
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;

/// One window pane of one group: its accumulators and what it last emitted.
pub(super) struct Pane {
    group: Vec<Value>,
    count: i64,
    /// Per aggregate: (sum, values counted, min, max) over non-null numbers.
    acc: Vec<(f64, i64, Option<f64>, Option<f64>)>,
    fired: bool,
    last: Option<Value>,
    last_refire: Option<(usize, u64)>,
}

pub(super) struct JoinRow {
    ts: i64,
    v: Value,
    key: Option<Vec<Value>>,
    matched: bool,
}

#[derive(Default)]
pub(super) struct State {
    /// Window: (end, group as JSON, start) -> pane.
    panes: BTreeMap<(i64, String, i64), Pane>,
    /// Interval join: held rows per side.
    rows: [Vec<JoinRow>; 2],
    /// Temporal join: versions (valid-from, arrival, key, record); input rows waiting.
    versions: Vec<(i64, u64, Value, Value)>,
    /// Dedupe and temporal join: records waiting for the watermark (arrival, record).
    waiting: Vec<(u64, Rec)>,
    /// Dedupe: per key, the time of the occurrence that passed last, and its record.
    seen: BTreeMap<String, (i64, Value)>,
}

impl Replay<'_> {
    // ----- window -------------------------------------------------------------------------

    pub(super) fn window_record(&mut self, node: usize, rec: Rec) -> Vec<Emit> {
        let Op::Window {
            group_by,
            win,
            lateness_ms,
            aggs,
            ..
        } = &self.p.transforms[node].op
        else {
            unreachable!()
        };
        let wm = self.wm[node];
        let group: Vec<Value> = group_by.iter().map(|g| get_path(&rec.v, g)).collect();
        let gkey = serde_json::to_string(&group).unwrap();
        let accepted: Vec<(i64, i64)> = win
            .assign(rec.ts)
            .into_iter()
            .filter(|&(_, e)| wm < e - 1 + lateness_ms)
            .collect();
        if accepted.is_empty() {
            if rec.retract {
                self.ambiguous(
                    node,
                    "a retraction is late (behaviour not specified)".into(),
                );
            }
            return vec![Emit::Late(rec)];
        }
        let sign = if rec.retract { -1.0 } else { 1.0 };
        let mut out = Vec::new();
        for (s, e) in accepted {
            let pane = self.state[node]
                .panes
                .entry((e, gkey.clone(), s))
                .or_insert_with(|| Pane {
                    group: group.clone(),
                    count: 0,
                    acc: vec![(0.0, 0, None, None); aggs.len()],
                    fired: false,
                    last: None,
                    last_refire: None,
                });
            pane.count += sign as i64;
            for ((_, agg), acc) in aggs.iter().zip(pane.acc.iter_mut()) {
                let field = match agg {
                    Agg::Sum(f) | Agg::Min(f) | Agg::Max(f) | Agg::Avg(f) => f,
                    Agg::Count => continue,
                    Agg::CountDistinct(_) => panic!("model: count_distinct is not modelled"),
                };
                if let Some(x) = get_path(&rec.v, field).as_f64() {
                    acc.0 += sign * x;
                    acc.1 += sign as i64;
                    acc.2 = Some(acc.2.map_or(x, |m| m.min(x)));
                    acc.3 = Some(acc.3.map_or(x, |m| m.max(x)));
                }
            }
            if e - 1 <= wm {
                let prev = pane.last_refire.replace((self.pos, rec.origin));
                let clash =
                    rec.derived && prev.is_some_and(|(p, o)| p == self.pos && o != rec.origin);
                let prev_line = pane.last.take();
                let line = line(group_by, aggs, pane, s, e);
                let empty = no_values(aggs, pane);
                pane.last = Some(line.clone());
                pane.fired = true;
                if clash {
                    self.ambiguous(node, format!("two updates re-fire {gkey}@{s} at once"));
                }
                if empty {
                    self.ambiguous(node, format!("an aggregate of {gkey}@{s} over no values"));
                }
                self.count(node, "refires");
                let origin = self.fresh();
                if let Some(v) = prev_line {
                    out.push(Emit::Out(Rec {
                        ts: e - 1,
                        v,
                        retract: true,
                        derived: true,
                        origin,
                    }));
                }
                out.push(emitted(e - 1, line, origin));
            }
        }
        out
    }

    pub(super) fn window_fire(&mut self, node: usize) -> Vec<Emit> {
        let Op::Window {
            group_by,
            lateness_ms,
            aggs,
            ..
        } = &self.p.transforms[node].op
        else {
            unreachable!()
        };
        let wm = self.wm[node];
        let mut out = Vec::new();
        let mut lines = Vec::new();
        let mut empty = Vec::new();
        for ((e, g, s), pane) in self.state[node].panes.iter_mut() {
            if e - 1 <= wm && !pane.fired {
                if no_values(aggs, pane) {
                    empty.push(format!("an aggregate of {g}@{s} over no values"));
                }
                let l = line(group_by, aggs, pane, *s, *e);
                pane.fired = true;
                pane.last = Some(l.clone());
                lines.push((*e, l));
            }
        }
        for why in empty {
            self.ambiguous(node, why);
        }
        for (e, v) in lines {
            let origin = self.fresh();
            out.push(emitted(e - 1, v, origin));
        }
        self.state[node]
            .panes
            .retain(|(e, _, _), _| wm < e - 1 + lateness_ms);
        out
    }

    // ----- interval join ------------------------------------------------------------------

    pub(super) fn join_record(&mut self, node: usize, side: usize, rec: Rec) -> Vec<Emit> {
        let Op::IntervalJoin {
            on,
            lower,
            upper,
            kind,
            ..
        } = &self.p.transforms[node].op
        else {
            unreachable!()
        };
        // Behind the watermark, a row still meets the rows held now; it is late (to the side
        // output) only when it met none and no later row could match it, so it is not held.
        let wm = self.wm[node];
        let late = rec.ts <= wm;
        let key = key_of(&rec.v, on);
        if key.is_none() && !kind.outer()[side] {
            return Vec::new();
        }
        let expiry = if side == 0 {
            rec.ts + upper
        } else {
            rec.ts - lower
        };
        let mut pairs = Vec::new();
        if key.is_some() {
            for row in self.state[node].rows[1 - side].iter_mut() {
                let (tl, tr) = if side == 0 {
                    (rec.ts, row.ts)
                } else {
                    (row.ts, rec.ts)
                };
                if row.key == key && *lower <= tr - tl && tr - tl <= *upper {
                    row.matched = true;
                    let (l, r) = if side == 0 {
                        (&rec.v, &row.v)
                    } else {
                        (&row.v, &rec.v)
                    };
                    pairs.push((tl.max(tr), pair(on, &rec.v, Some(l), Some(r))));
                }
            }
        }
        let matched = !pairs.is_empty();
        let mut out = Vec::new();
        for (ts, v) in pairs {
            self.count(node, "pairs");
            let origin = self.fresh();
            out.push(emitted(ts, v, origin));
        }
        if late && key.is_some() && expiry <= wm {
            if !matched {
                out.push(Emit::Late(rec.clone()));
            }
            if !matched && kind.outer()[side] {
                let v = if side == 0 {
                    pair(on, &rec.v, Some(&rec.v), None)
                } else {
                    pair(on, &rec.v, None, Some(&rec.v))
                };
                self.count(node, "unmatched");
                let origin = self.fresh();
                out.push(emitted(rec.ts, v, origin));
            }
            return out;
        }
        self.state[node].rows[side].push(JoinRow {
            ts: rec.ts,
            v: rec.v,
            key,
            matched,
        });
        out
    }

    pub(super) fn join_expire(&mut self, node: usize) -> Vec<Emit> {
        let Op::IntervalJoin {
            on,
            lower,
            upper,
            kind,
            ..
        } = &self.p.transforms[node].op
        else {
            unreachable!()
        };
        let wm = self.wm[node];
        let outer = kind.outer();
        let mut gone = Vec::new();
        for (side, outer) in outer.into_iter().enumerate() {
            let rows = std::mem::take(&mut self.state[node].rows[side]);
            let (keep, expired): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| {
                wm < if side == 0 {
                    r.ts + upper
                } else {
                    r.ts - lower
                }
            });
            self.state[node].rows[side] = keep;
            for r in expired.into_iter().filter(|r| !r.matched && outer) {
                let v = if side == 0 {
                    pair(on, &r.v, Some(&r.v), None)
                } else {
                    pair(on, &r.v, None, Some(&r.v))
                };
                gone.push((r.ts, v));
            }
        }
        let mut out = Vec::new();
        for (ts, v) in gone {
            self.count(node, "unmatched");
            let origin = self.fresh();
            out.push(emitted(ts, v, origin));
        }
        out
    }

    // ----- temporal join ------------------------------------------------------------------

    pub(super) fn temporal_record(&mut self, node: usize, port: usize, rec: Rec) -> Vec<Emit> {
        let Op::TemporalJoin {
            on_input, on_table, ..
        } = &self.p.transforms[node].op
        else {
            unreachable!()
        };
        let wm = self.wm[node];
        if port == 1 {
            if rec.ts <= wm {
                return vec![Emit::Late(rec)];
            }
            let k = get_path(&rec.v, on_table);
            if k.is_null() {
                return Vec::new();
            }
            let tie = self.state[node]
                .versions
                .iter()
                .any(|(vf, _, vk, v)| *vf == rec.ts && *vk == k && *v != rec.v);
            if tie && rec.derived {
                self.ambiguous(node, format!("two versions of {k} valid from {}", rec.ts));
            }
            self.seq += 1;
            self.state[node].versions.push((rec.ts, self.seq, k, rec.v));
            return Vec::new();
        }
        if rec.ts > wm {
            self.seq += 1;
            self.state[node].waiting.push((self.seq, rec));
            return Vec::new();
        }
        // Behind the watermark: answered now if the version valid at its time is still held,
        // i.e. no version valid from (ts, wm] replaced it; else late.
        let k = get_path(&rec.v, on_input);
        let replaced = self.state[node]
            .versions
            .iter()
            .any(|(vf, _, vk, _)| *vk == k && rec.ts < *vf && *vf <= wm);
        if replaced && !k.is_null() {
            self.run.late_after_newer_version.push(self.pos);
        }
        if k.is_null() || replaced {
            let Op::TemporalJoin { left, .. } = &self.p.transforms[node].op else {
                unreachable!()
            };
            // A left join keeps every input row: one whose version is gone gets a NULL table.
            if *left {
                self.count(node, "no_version");
                let mut v = rec.v.clone();
                if let Value::Object(m) = &mut v {
                    m.insert("table".into(), Value::Null);
                }
                let origin = self.fresh();
                return vec![Emit::Out(Rec { v, origin, ..rec })];
            }
            return vec![Emit::Late(rec)];
        }
        if self.version_at(node, &k, rec.ts).is_none() {
            self.ambiguous(
                node,
                format!("a late input row of {k} before any version (not specified)"),
            );
        }
        self.answer(node, rec).into_iter().collect()
    }

    /// The latest version of `k` valid from at most `ts` (equal valid-from: the later arrival).
    fn version_at(&self, node: usize, k: &Value, ts: i64) -> Option<Value> {
        let vs = &self.state[node].versions;
        vs.iter()
            .filter(|(vf, _, vk, _)| vk == k && *vf <= ts)
            .max_by_key(|(vf, seq, _, _)| (*vf, *seq))
            .map(|(_, _, _, v)| v.clone())
    }

    fn answer(&mut self, node: usize, rec: Rec) -> Option<Emit> {
        let Op::TemporalJoin { on_input, left, .. } = &self.p.transforms[node].op else {
            unreachable!()
        };
        let k = get_path(&rec.v, on_input);
        let version = if k.is_null() {
            None
        } else {
            self.version_at(node, &k, rec.ts)
        };
        if version.is_none() && !left {
            self.count(node, "unanswered");
            return None;
        }
        self.count(
            node,
            if version.is_some() {
                "joined"
            } else {
                "no_version"
            },
        );
        let mut v = rec.v.clone();
        if let Value::Object(m) = &mut v {
            m.insert("table".into(), version.unwrap_or(Value::Null));
        }
        let origin = self.fresh();
        Some(Emit::Out(Rec { v, origin, ..rec }))
    }

    pub(super) fn temporal_answer(&mut self, node: usize) -> Vec<Emit> {
        let ready = self.take_ready(node);
        ready
            .into_iter()
            .filter_map(|rec| self.answer(node, rec))
            .collect()
    }

    /// Waiting records with `ts <= wm`, in (ts, arrival) order.
    fn take_ready(&mut self, node: usize) -> Vec<Rec> {
        let wm = self.wm[node];
        let waiting = std::mem::take(&mut self.state[node].waiting);
        let (mut ready, keep): (Vec<_>, Vec<_>) =
            waiting.into_iter().partition(|(_, r)| r.ts <= wm);
        self.state[node].waiting = keep;
        ready.sort_by_key(|(seq, r)| (r.ts, *seq));
        ready.into_iter().map(|(_, r)| r).collect()
    }

    // ----- dedupe -------------------------------------------------------------------------

    pub(super) fn dedupe_record(&mut self, node: usize, rec: Rec) -> Vec<Emit> {
        if rec.ts <= self.wm[node] {
            return vec![Emit::Late(rec)];
        }
        self.seq += 1;
        self.state[node].waiting.push((self.seq, rec));
        Vec::new()
    }

    pub(super) fn dedupe_decide(&mut self, node: usize) -> Vec<Emit> {
        let Op::Dedupe {
            key, horizon_ms, ..
        } = &self.p.transforms[node].op
        else {
            unreachable!()
        };
        let mut out = Vec::new();
        for rec in self.take_ready(node) {
            let Some(k) = key_of(&rec.v, key) else {
                out.push(Emit::Out(rec));
                continue;
            };
            let k = serde_json::to_string(&k).unwrap();
            match self.state[node].seen.get(&k) {
                Some((first, v)) if rec.ts - first < *horizon_ms => {
                    if *first == rec.ts && *v != rec.v && rec.derived {
                        self.ambiguous(node, format!("two different records of {k} at {first}"));
                    }
                    self.count(node, "dropped");
                }
                _ => {
                    self.state[node].seen.insert(k, (rec.ts, rec.v.clone()));
                    out.push(Emit::Out(rec));
                }
            }
        }
        out
    }
}

/// Whether an aggregate other than `count()` has no value to show (its output is not specified).
fn no_values(aggs: &[(String, Agg)], pane: &Pane) -> bool {
    aggs.iter()
        .zip(&pane.acc)
        .any(|((_, a), acc)| !matches!(a, Agg::Count) && acc.1 == 0)
}

/// A window result: group-by fields, `window_start`, `window_end`, aggregates.
fn line(group_by: &[String], aggs: &[(String, Agg)], pane: &Pane, s: i64, e: i64) -> Value {
    let mut m = Map::new();
    for (g, v) in group_by.iter().zip(&pane.group) {
        m.insert(g.clone(), v.clone());
    }
    m.insert("window_start".into(), Value::from(s));
    m.insert("window_end".into(), Value::from(e));
    for ((name, agg), &(sum, n, lo, hi)) in aggs.iter().zip(&pane.acc) {
        let v = match agg {
            Agg::Count => Value::from(pane.count),
            _ if n == 0 => Value::Null,
            Agg::Sum(_) => num(sum),
            Agg::Avg(_) => Number::from_f64(sum / n as f64).map_or(Value::Null, Value::Number),
            Agg::Min(_) => num(lo.unwrap_or_default()),
            Agg::Max(_) => num(hi.unwrap_or_default()),
            Agg::CountDistinct(_) => unreachable!(),
        };
        m.insert(name.clone(), v);
    }
    Value::Object(m)
}

/// An interval join's output: the `on` fields (from `keyed`), then both records (`null` if absent).
fn pair(on: &[String], keyed: &Value, l: Option<&Value>, r: Option<&Value>) -> Value {
    let mut m = Map::new();
    for f in on {
        m.insert(f.clone(), get_path(keyed, f));
    }
    m.insert("left".into(), l.cloned().unwrap_or(Value::Null));
    m.insert("right".into(), r.cloned().unwrap_or(Value::Null));
    Value::Object(m)
}
