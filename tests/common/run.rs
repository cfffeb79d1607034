//! Running the real `sluice` binary (config writing, runtime variants, output files) and comparing
//! what it wrote with the reference model.

use super::model::{dur, model, split_lines, upsert_key, AggVal, Job, ModelOut, Row};
use super::BIN;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct Rt {
    pub shards: usize,
    pub ring_capacity: usize,
    pub chunk_bytes: usize,
    /// The window's `hot_keys` table as TOML (empty: not set, i.e. off).
    pub hot_keys: &'static str,
}

pub const fn rt(shards: usize, ring_capacity: usize, chunk_bytes: usize) -> Rt {
    Rt {
        shards,
        ring_capacity,
        chunk_bytes,
        hot_keys: "",
    }
}

impl Rt {
    /// The same settings with `hot_keys = <table>` on the window.
    pub const fn hot(self, table: &'static str) -> Rt {
        Rt {
            hot_keys: table,
            ..self
        }
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
    sluice_env(dir, args, &[], timeout)
}

/// [`sluice`] with extra environment variables for the child.
pub fn sluice_env(dir: &Path, args: &[&str], env: &[(&str, &str)], timeout: Duration) -> Exit {
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let (so, se) = (
        dir.join(format!("stdout-{n}.txt")),
        dir.join(format!("stderr-{n}.txt")),
    );
    let mut child = Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
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
         event_time = {{ field = {}, unit = \"ms\", allow_negative = true }}\n\
         watermark = {{ max_out_of_orderness = \"{}\", idle_timeout = \"30s\" }}\n\n\
         [transforms.win]\ntype = \"window\"\ninputs = [\"ev\"]\ngroup_by = [{}]\nwindow = {}\n\
         allowed_lateness = \"{}\"\nlate_events = \"late_ev\"\naggregates = {{ {} }}\n{}\n\
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
        if rt.hot_keys.is_empty() {
            String::new()
        } else {
            format!("hot_keys = {}\n", rt.hot_keys)
        },
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

/// The late-clicks job the engine-level end-to-end tests share: `events` generated clicks, 1% of
/// them 7.5 s late (some re-fire within the 5 s lateness, some are dropped), 1 s tumbling windows per
/// `ad_id` with the given `aggregates` (a TOML inline table's body), results to `out`. `runtime` is
/// the body of `[runtime]`; `tail` is appended (e.g. a `[checkpoint]` table).
pub fn late_clicks_toml(
    runtime: &str,
    events: u64,
    aggregates: &str,
    out: &Path,
    tail: &str,
) -> String {
    format!(
        r#"[runtime]
{runtime}

[sources.clicks]
type = "generator"
count = {events}
out_of_orderness = "2s"
late_fraction = 0.01
late_by = "7500ms"
watermark = {{ max_out_of_orderness = "2s" }}

[transforms.per_ad]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1s" }}
allowed_lateness = "5s"
aggregates = {{ {aggregates} }}

[sinks.out]
type = "file"
inputs = ["per_ad"]
path = {out:?}

{tail}"#
    )
}
