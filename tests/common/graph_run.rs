//! Running a [`Pipeline`] through the real binary and comparing what it wrote with the model:
//! the config is written from the same description the model replays, one file sink per sunk
//! stream, and every stream is compared as a multiset of JSON values, and in order per upsert key
//! for window results (each re-fire is a new line of its key).

use super::graph_model::{JoinKind, ModelRun, Op, Pipeline, SOURCE};
use super::model::dur;
use super::run::{read_lines, sluice, toml_str, Rt};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The runtime variants every pair must give identical output under: 1-3 shards, tiny chunks
/// and rings (many chunk boundaries and full rings), and the defaults.
pub const PAIR_VARIANTS: &[Rt] = &[
    super::run::rt(1, 16, 200),
    super::run::rt(2, 16, 200),
    super::run::rt(3, 16, 200),
    super::run::rt(2, 8192, 1 << 20),
];

fn list(v: &[String]) -> String {
    v.iter().map(|s| toml_str(s)).collect::<Vec<_>>().join(", ")
}

fn signed(ms: i64) -> String {
    if ms < 0 {
        format!("-{}", dur(-ms))
    } else {
        dur(ms)
    }
}

impl Pipeline {
    /// The config the engine runs for this pipeline, reading `input`, writing `<tag>.<stream>`
    /// files in `dir`.
    pub fn toml(&self, rt: Rt, input: &Path, dir: &Path, tag: &str) -> String {
        let path = |s: &str| toml_str(&dir.join(format!("{tag}.{s}.ndjson")).to_string_lossy());
        let mut t = format!(
            "[runtime]\nshards = {}\nring_capacity = {}\nchunk_bytes = {}\n\n\
             [sources.{SOURCE}]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
             watermark = {{ max_out_of_orderness = \"{}\" }}\n\n",
            rt.shards,
            rt.ring_capacity,
            rt.chunk_bytes,
            toml_str(&input.to_string_lossy()),
            dur(self.ooo_ms),
        );
        for tr in &self.transforms {
            t += &format!("[transforms.{}]\n", tr.name);
            t += &match &tr.op {
                Op::Filter { input, cond, .. } => {
                    format!(
                        "type = \"filter\"\ninputs = [{}]\nwhere = {}\n",
                        toml_str(input),
                        toml_str(cond)
                    )
                }
                Op::Select { input, fields, .. } => {
                    let f: Vec<String> = fields
                        .iter()
                        .map(|(n, e)| format!("{n} = {}", toml_str(e)))
                        .collect();
                    format!(
                        "type = \"select\"\ninputs = [{}]\nfields = {{ {} }}\n",
                        toml_str(input),
                        f.join(", ")
                    )
                }
                Op::Window {
                    inputs,
                    group_by,
                    win,
                    lateness_ms,
                    aggs,
                } => {
                    let a: Vec<String> = aggs
                        .iter()
                        .map(|(n, a)| format!("{n} = {}", toml_str(&a.expr())))
                        .collect();
                    format!(
                        "type = \"window\"\ninputs = [{}]\ngroup_by = [{}]\nwindow = {}\n\
                         allowed_lateness = \"{}\"\naggregates = {{ {} }}\n",
                        list(inputs),
                        list(group_by),
                        win.toml(),
                        dur(*lateness_ms),
                        a.join(", ")
                    )
                }
                Op::IntervalJoin {
                    left,
                    right,
                    on,
                    lower,
                    upper,
                    kind,
                } => {
                    let kind = match kind {
                        JoinKind::Inner => "inner",
                        JoinKind::Left => "left",
                        JoinKind::Right => "right",
                        JoinKind::Full => "full",
                    };
                    format!(
                        "type = \"interval_join\"\nleft = {}\nright = {}\non = [{}]\n\
                         between = [\"{}\", \"{}\"]\nkind = \"{kind}\"\n",
                        toml_str(left),
                        toml_str(right),
                        list(on),
                        signed(*lower),
                        signed(*upper)
                    )
                }
                Op::TemporalJoin {
                    input,
                    table,
                    on_input,
                    on_table,
                    left,
                } => format!(
                    "type = \"temporal_join\"\ninput = {}\ntable = {}\n\
                     on = {{ input = {}, table = {} }}\nkind = \"{}\"\n",
                    toml_str(input),
                    toml_str(table),
                    toml_str(on_input),
                    toml_str(on_table),
                    if *left { "left" } else { "inner" }
                ),
                Op::Dedupe {
                    inputs,
                    key,
                    horizon_ms,
                } => format!(
                    "type = \"dedupe\"\ninputs = [{}]\nkey = [{}]\nhorizon = \"{}\"\n",
                    list(inputs),
                    list(key),
                    dur(*horizon_ms)
                ),
            };
            if let Some(late) = &tr.late_events {
                t += &format!("late_events = {}\n", toml_str(late));
            }
            t += "\n";
        }
        for s in &self.sinks {
            t += &format!(
                "[sinks.out_{s}]\ntype = \"file\"\ninputs = [{}]\npath = {}\n\n",
                toml_str(s),
                path(s)
            );
        }
        t += &format!("[dead_letter]\npath = {}\n", path("dead"));
        t
    }
}

/// A JSON value with numbers made comparable: an integral float is the integer (`avg` may print
/// `4.0` where the model computes `4`); objects compare by key (serde_json's map is sorted).
pub fn canon(v: &Value) -> Value {
    match v {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => v.clone(),
        },
        Value::Array(a) => Value::Array(a.iter().map(canon).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), canon(v))).collect()),
        _ => v.clone(),
    }
}

fn text(v: &Value) -> String {
    serde_json::to_string(&canon(v)).unwrap()
}

/// How a stream is compared: as a multiset, or in order per upsert key (its `fields`).
#[derive(Clone, Copy)]
pub enum Cmp<'a> {
    Multiset,
    PerKey(&'a [&'a str]),
}

/// Up to 5 lines of `a` that `b` lacks, counting repeats (a multiset difference).
fn minus<'a>(a: &'a [String], b: &[String]) -> Vec<&'a String> {
    let mut left: Vec<&String> = b.iter().collect();
    let mut out = Vec::new();
    for x in a {
        match left.iter().position(|y| *y == x) {
            Some(i) => {
                left.swap_remove(i);
            }
            None => out.push(x),
        }
    }
    out.truncate(5);
    out
}

/// Mismatches between `got` and `want` for one stream, as readable lines.
fn diff(stream: &str, got: &[Value], want: &[Value], cmp: Cmp<'_>) -> Vec<String> {
    let group = |v: &[Value]| -> BTreeMap<String, Vec<String>> {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for x in v {
            let key = match cmp {
                Cmp::Multiset => String::new(),
                Cmp::PerKey(fields) => text(&Value::Array(
                    fields
                        .iter()
                        .map(|f| x.get(*f).cloned().unwrap_or(Value::Null))
                        .collect(),
                )),
            };
            m.entry(key).or_default().push(text(x));
        }
        if matches!(cmp, Cmp::Multiset) {
            m.values_mut().for_each(|v| v.sort());
        }
        m
    };
    let (g, w) = (group(got), group(want));
    let mut errs = Vec::new();
    for k in g
        .keys()
        .chain(w.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (a, b) = (
            g.get(k).cloned().unwrap_or_default(),
            w.get(k).cloned().unwrap_or_default(),
        );
        if a == b {
            continue;
        }
        if matches!(cmp, Cmp::Multiset) {
            let (extra, missing) = (minus(&a, &b), minus(&b, &a));
            errs.push(format!(
                "{stream}: {} lines, model {}; not in the model: {extra:#?}; missing: {missing:#?}",
                a.len(),
                b.len()
            ));
        } else {
            errs.push(format!("{stream} key {k}: got {a:?}, model {b:?}"));
        }
    }
    errs
}

/// The model's run of `p` on `content`; panics if any outcome would depend on arrival order.
pub fn model_of(p: &Pipeline, content: &str) -> ModelRun {
    let m = p.model(content);
    assert!(
        m.ambiguous.is_empty(),
        "test data leaves the model undecided: {:#?}",
        m.ambiguous
    );
    m
}

/// Runs `p` on `content` under every runtime in `variants`; each run must write exactly what
/// the model says (streams in `per_key` compared in order per key), and all runs the same
/// multiset of lines. Returns the model's run, for the test's own coverage checks.
pub fn check_pipeline(
    p: &Pipeline,
    content: &str,
    variants: &[Rt],
    per_key: &[(&str, &[&str])],
    ctx: &str,
) -> ModelRun {
    let m = model_of(p, content);
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("input.ndjson");
    std::fs::write(&input, content).expect("write input");
    let mut first: Option<BTreeMap<String, Vec<String>>> = None;
    for (i, &rt) in variants.iter().enumerate() {
        let got = run_pipeline(p, rt, &input, dir.path(), &format!("run{i}"));
        let mut errs = Vec::new();
        for s in &p.sinks {
            let cmp = per_key
                .iter()
                .find(|(n, _)| n == s)
                .map_or(Cmp::Multiset, |(_, f)| Cmp::PerKey(f));
            let values: Vec<Value> = got[s]
                .iter()
                .map(|l| {
                    serde_json::from_str(l).unwrap_or_else(|e| {
                        panic!("{ctx} {rt:?}: `{s}` wrote a line that is not JSON ({e}): {l}")
                    })
                })
                .collect();
            errs.extend(diff(s, &values, m.lines(s), cmp));
        }
        assert!(
            errs.is_empty(),
            "{ctx}, {rt:?}: the engine disagrees with the model:\n{}",
            errs.join("\n")
        );
        assert!(
            got["dead"].is_empty(),
            "{ctx}, {rt:?}: dead letters {:?}",
            got["dead"]
        );
        let mut sorted = got;
        sorted.values_mut().for_each(|v| v.sort());
        match &first {
            None => first = Some(sorted),
            Some(f) => assert_eq!(
                f, &sorted,
                "{ctx}, {rt:?}: not the same lines as {:?}",
                variants[0]
            ),
        }
    }
    m
}

/// Writes the config, runs `sluice run` (must exit 0) and reads every sunk stream's file, and
/// the dead letters under `dead`.
pub fn run_pipeline(
    p: &Pipeline,
    rt: Rt,
    input: &Path,
    dir: &Path,
    tag: &str,
) -> BTreeMap<String, Vec<String>> {
    let cfg = dir.join(format!("{tag}.toml"));
    std::fs::write(&cfg, p.toml(rt, input, dir, tag)).expect("write config");
    let exit = sluice(
        dir,
        &["run", "--config", &cfg.to_string_lossy()],
        Duration::from_secs(60),
    );
    assert!(
        exit.success,
        "sluice run failed for {rt:?}; config:\n{}\nstderr:\n{}",
        p.toml(rt, input, dir, tag),
        exit.stderr
    );
    p.sinks
        .iter()
        .map(String::as_str)
        .chain(["dead"])
        .map(|s| {
            (
                s.to_string(),
                read_lines(&dir.join(format!("{tag}.{s}.ndjson"))),
            )
        })
        .collect()
}

/// `content` without the lines the model says reach a temporal join behind its watermark after
/// a newer version became valid (repeated until none is left: each line removed is behind the
/// source's watermark, so no other record's watermark changes).
pub fn without_late_after_newer_version(p: &Pipeline, content: &str) -> String {
    let mut lines: Vec<&str> = content.lines().collect();
    loop {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let drop = p.model(&text).late_after_newer_version;
        if drop.is_empty() {
            return text;
        }
        let mut at = 0;
        lines.retain(|_| {
            at += 1;
            !drop.contains(&(at - 1))
        });
    }
}

/// `sluice validate` on `p`'s config: `Ok(())` when it passes, else `Err(stderr)`.
pub fn validate(p: &Pipeline) -> Result<(), String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("input.ndjson");
    std::fs::write(&input, "").expect("write input");
    let cfg = dir.path().join("job.toml");
    std::fs::write(&cfg, p.toml(PAIR_VARIANTS[0], &input, dir.path(), "v")).expect("write config");
    let exit = sluice(
        dir.path(),
        &["validate", "--config", &cfg.to_string_lossy()],
        Duration::from_secs(30),
    );
    if exit.success {
        Ok(())
    } else {
        Err(exit.stderr)
    }
}

/// `p` with a filter `f<kind>` (`kind == '<kind>'`) on the source for each kind.
pub fn routed(mut p: Pipeline, kinds: &[&'static str]) -> Pipeline {
    for &kind in kinds {
        p = p.filter(
            &format!("f{kind}"),
            SOURCE,
            &format!("kind == '{kind}'"),
            move |r| r["kind"] == kind,
        );
    }
    p
}

/// Asserts the test's data reaches each named model counter (`node.what`) at least once.
pub fn covers(m: &ModelRun, keys: &[&str]) {
    for k in keys {
        assert!(
            m.stat(k) > 0,
            "the data never exercises {k}; counters: {:?}",
            m.stats
        );
    }
}
