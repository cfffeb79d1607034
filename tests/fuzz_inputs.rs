//! Seeded fuzzing of what users hand sluice: NDJSON lines through the record binding, TOML configs
//! through the loader and the planner, and random operator graphs through validation. No input may
//! panic; every line is either bound to the values serde_json reads from it or refused with a
//! reason (a dead letter); every config either plans or gets messages.
//!
//! About 1.06 M cases in all by default (850 000 lines, 200 000 configs, 10 000 graphs), seeded, so
//! a failure reproduces; `SLUICE_FUZZ_SCALE=10` multiplies every count (the long variant).

mod common;

use common::SplitMix as Rng;
use serde_json::{Map, Value as Json};
use sluice::config;
use sluice::expr::FieldPath;
use sluice::plan::{self, SlotUse, TimeUnit};
use sluice::record::bind::{Binding, RecordParser};
use sluice::record::event::{hash_key, Rec, Value, NULL_KEY};

fn scale() -> usize {
    std::env::var("SLUICE_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Bytes that matter to a JSON or TOML scanner, plus any byte at all half the time.
const INTERESTING: &[u8] =
    b"{}[],:\"\\0123456789-+.eEtrufalsn dD8u \t\r\n\x00\x1f\x7f\x80\xbf\xc3\xe2\xed\xf0\xff/=#'";

/// One to four byte edits: replace, delete, insert, or cut the rest.
fn mutate(rng: &mut Rng, text: &[u8]) -> Vec<u8> {
    let mut out = text.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        let byte = if rng.below(2) == 0 {
            *rng.pick(INTERESTING)
        } else {
            rng.next() as u8
        };
        match rng.below(7) {
            0 | 1 if at < out.len() => out[at] = byte,
            2 | 3 if at < out.len() => {
                out.remove(at);
            }
            4 => out.truncate(at),
            _ => out.insert(at.min(out.len()), byte),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// NDJSON lines through the record binding.

const LINES: &[&str] = &[
    r#"{"ts":1700000000000,"ad_id":"ad-7","bid":12,"user":{"country":"de","id":5}}"#,
    r#"{"ad_id":"a\u0062\"c","ts":1700000000123,"bid":1.2345,"user":{"country":"fr"}}"#,
    r#"{ "ts" : 5 , "ad_id" : null , "bid" : -3.5e2 , "extra" : [1, {"a": [true, false, null]}] }"#,
    r#"{"ts":0,"bid":null,"user":null,"ad_id":"\u00e9\ud83d\ude00"}"#,
    r#"{"ts":99,"ad_id":"x","bid":18446744073709551616,"user":{"country":"\n"}}"#,
    r#"{"ad_id":"long-key-0123456789012345678901234567890123456789012345678901234567890123456789","ts":1,"bid":0.000000000000000000000000001}"#,
    r#"{"ts":1700000000000,"ad_id":7,"bid":7,"user":{"country":7}}"#,
    r#"{"ts":-5,"ad_id":"neg","bid":1}"#,
    r#"{"ts":1.5,"ad_id":"f","bid":1e400}"#,
    r#"{"ad_id":"no-time","bid":1}"#,
    r#"{"ts":1,"ad_id":"dup","ad_id":"twice","bid":2}"#,
    r#"{"ts":1,"ad_id":"s","bid":"12"}"#,
];

fn path(p: &str) -> FieldPath {
    FieldPath::parse(p).unwrap()
}

fn line_parser() -> RecordParser {
    RecordParser::new(
        "ts",
        TimeUnit::Millis,
        &[Binding {
            port: 0,
            key: vec![path("ad_id")],
            values: vec![
                (path("bid"), SlotUse::Number),
                (path("user.country"), SlotUse::Hash),
            ],
            row: true,
        }],
    )
    .unwrap()
}

/// The value serde reads at `user.country`, as the binding should hash it.
fn country(map: &Map<String, Json>) -> Option<&Json> {
    match map.get("user") {
        Some(Json::Object(u)) => u.get("country").filter(|c| !c.is_null()),
        _ => None,
    }
}

/// A bound record agrees with what serde reads from the same line.
fn check_bound(line: &[u8], ts: i64, r: &Rec<'_>, map: &Map<String, Json>) -> Result<(), String> {
    match map.get("ts").and_then(Json::as_i64) {
        Some(t) if t == ts => {}
        Some(t) => return Err(format!("ts {ts}, serde {t}")),
        None => match map.get("ts").and_then(Json::as_f64) {
            Some(f) if (f - ts as f64).abs() <= 1.0 => {}
            other => return Err(format!("ts {ts}, serde {other:?}")),
        },
    }
    match map.get("ad_id") {
        None | Some(Json::Null) => {
            if r.key() != b"null" || r.ev.flags & NULL_KEY == 0 {
                return Err("a missing key is not the NULL key".into());
            }
        }
        Some(Json::String(s)) => {
            if r.key() != serde_json::to_vec(s).unwrap().as_slice() {
                return Err(format!(
                    "key {:?} for {s:?}",
                    String::from_utf8_lossy(r.key())
                ));
            }
        }
        Some(_) => {
            if r.key().is_empty() || r.ev.flags & NULL_KEY != 0 {
                return Err("a present key is empty or NULL".into());
            }
        }
    }
    match (map.get("bid"), r.value(0)) {
        (None | Some(Json::Null), Value::Null) => {}
        (Some(Json::Number(n)), v) => {
            let want = n.as_f64().unwrap_or(f64::NAN);
            let got = match v {
                Value::Int(i) if n.as_i64() == Some(i) => want,
                Value::Int(i) => return Err(format!("bid {i}, serde {n}")),
                Value::Dec(d) => d.to_string().parse::<f64>().unwrap_or(f64::NAN),
                Value::Float(f) => f,
                other => return Err(format!("bid {other:?}, serde {n}")),
            };
            if (got - want).abs() > want.abs() * 1e-12 {
                return Err(format!("bid {got}, serde {want}"));
            }
        }
        (j, v) => return Err(format!("bid {v:?}, serde {j:?}")),
    }
    match (country(map), r.value(1)) {
        (None, Value::Null) => {}
        (Some(Json::String(s)), Value::Hash(h))
            if h == hash_key(&serde_json::to_vec(s).unwrap()) => {}
        (Some(Json::String(s)), v) => return Err(format!("country {v:?} for {s:?}")),
        (Some(_), Value::Hash(_)) => {}
        (c, v) => return Err(format!("country {v:?}, serde {c:?}")),
    }
    let trimmed = std::str::from_utf8(line).map(str::trim).unwrap_or("");
    if r.row() != Some(trimmed.as_bytes()) {
        return Err("the row is not the line".into());
    }
    Ok(())
}

/// Whether refusing a line serde reads as `map` with `reason` is one of the documented refusals.
fn refusal_is_documented(map: &Map<String, Json>, reason: &str) -> bool {
    let names = |f: &str| reason.contains(&format!("`{f}`"));
    let ts_ok = map
        .get("ts")
        .and_then(Json::as_f64)
        .is_some_and(|t| (0.0..1e15).contains(&t));
    let bid_bad = matches!(map.get("bid"), Some(j) if !j.is_null() && !j.is_number());
    reason.contains("twice")
        || reason.contains("deep")
        || (!ts_ok && names("ts"))
        || (bid_bad && names("bid"))
}

#[test]
fn lines_bind_to_serde_s_values_or_are_dead_lettered_with_a_reason() {
    let cases = 850_000 * scale();
    let mut rng = Rng(0x0051_1CE0);
    let mut parser = line_parser();
    let (mut bound, mut refused) = (0usize, 0usize);
    for case in 0..cases {
        let base = *rng.pick(LINES);
        let line = match case % 16 {
            0 => base.as_bytes().to_vec(),
            _ => mutate(&mut rng, base.as_bytes()),
        };
        let shown = String::from_utf8_lossy(&line).into_owned();
        let serde = serde_json::from_slice::<Json>(&line);
        match parser.parse(&line) {
            Ok(ts) => {
                bound += 1;
                let Ok(Json::Object(map)) = &serde else {
                    panic!("case {case}: bound {shown:?}, but serde says {serde:?}");
                };
                let r = Rec::parse(&parser.events[0], &parser.payloads[0].bytes)
                    .unwrap_or_else(|e| panic!("case {case}: {shown:?}: payload {e}"));
                if let Err(why) = check_bound(&line, ts, &r, map) {
                    panic!("case {case}: {shown:?}: {why}");
                }
            }
            Err(m) => {
                refused += 1;
                assert!(!m.0.is_empty(), "case {case}: empty reason for {shown:?}");
                if let Ok(Json::Object(map)) = &serde {
                    assert!(
                        refusal_is_documented(map, &m.0),
                        "case {case}: refused {shown:?} ({}) though serde reads it",
                        m.0
                    );
                }
            }
        }
    }
    // Both outcomes must be exercised, or the mutations are too weak (or too strong) to test much.
    assert!(
        bound > cases / 50 && refused > cases / 50,
        "bound {bound}, refused {refused}"
    );
}

// ---------------------------------------------------------------------------------------------
// Configs through the loader and the planner.

const CONFIGS: &[&str] = &[
    include_str!("../config/example.toml"),
    include_str!("../config/reference.toml"),
    include_str!("../config/ad_spend.toml"),
    include_str!("../config/ad_spend_kafka.toml"),
    include_str!("../config/fx_pricing.toml"),
    include_str!("../config/orders.toml"),
    include_str!("../config/quickstart.toml"),
    include_str!("../config/kafka.toml"),
];

/// Values a user might put anywhere.
const VALUES: &[&str] = &[
    "\"5s\"",
    "\"-1s\"",
    "\"0s\"",
    "-1",
    "0",
    "1",
    "65536",
    "18446744073709551616",
    "1e400",
    "nan",
    "\"\"",
    "[]",
    "{}",
    "[\"\"]",
    "\"a.b.c\"",
    "\"user..x\"",
    "\"count()\"",
    "\"sum(\"",
    "true",
    "\"clicks\"",
    "[\"clicks\", \"clicks\"]",
    "\"window\"",
    "{ type = \"tumbling\" }",
    "[\"0s\", \"-10s\"]",
    "\"x > \"",
    "\"\\u0000\"",
    "\"9223372036854775807ms\"",
];

/// A line-level edit: delete, duplicate or swap lines, or give a key another value.
fn edit_lines(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for _ in 0..1 + rng.below(3) {
        let n = lines.len().max(1);
        let (i, j) = (rng.below(n), rng.below(n));
        match rng.below(4) {
            0 if !lines.is_empty() => {
                lines.remove(i);
            }
            1 if !lines.is_empty() => {
                let l = lines[i].clone();
                lines.insert(j.min(lines.len()), l);
            }
            2 if i < lines.len() && j < lines.len() => lines.swap(i, j),
            _ => {
                if let Some(l) = lines.get_mut(i) {
                    if let Some((key, _)) = l.split_once('=') {
                        *l = format!("{key}= {}", rng.pick(VALUES));
                    }
                }
            }
        }
    }
    lines.join("\n")
}

/// Parses and plans `text`: never a panic, and every refusal says something.
fn load(text: &str) -> Result<(), String> {
    let (config, src) = config::parse(text, "fuzz.toml").map_err(|e| e.to_string())?;
    plan::build(&config, &src)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn mutated_configs_plan_or_are_refused_with_a_message() {
    let cases = 200_000 * scale();
    let mut rng = Rng(0x000C_0F16);
    let (mut planned, mut refused) = (0usize, 0usize);
    for case in 0..cases {
        let base = *rng.pick(CONFIGS);
        let text = match case % 3 {
            0 => String::from_utf8_lossy(&mutate(&mut rng, base.as_bytes())).into_owned(),
            1 => edit_lines(&mut rng, base),
            _ => {
                let once = edit_lines(&mut rng, base);
                String::from_utf8_lossy(&mutate(&mut rng, once.as_bytes())).into_owned()
            }
        };
        match load(&text) {
            Ok(()) => planned += 1,
            Err(msg) => {
                refused += 1;
                assert!(!msg.trim().is_empty(), "case {case}: an empty message");
            }
        }
    }
    assert!(
        planned > 0 && refused > cases / 10,
        "planned {planned}, refused {refused}"
    );
}

// ---------------------------------------------------------------------------------------------
// Random operator graphs through validation.

const SOURCE_NAMES: [&str; 3] = ["imps", "clicks", "prices"];

fn source_toml(name: &str) -> String {
    format!(
        "[sources.{name}]\ntype = \"file\"\npath = \"{name}.ndjson\"\nformat = \"json\"\n\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\nwatermark = {{ max_out_of_orderness = \"5s\" }}\n\n"
    )
}

/// A transform of a random kind named `name`, reading from `pick()`ed streams.
fn transform_toml(
    rng: &mut Rng,
    name: &str,
    mut pick: impl FnMut(&mut Rng) -> String,
) -> (String, Vec<String>) {
    let (a, b) = (pick(rng), pick(rng));
    let (body, reads) = match rng.below(6) {
        0 => (format!("type = \"window\"\ninputs = [\"{a}\"]\ngroup_by = [\"id\"]\nwindow = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ n = \"count()\" }}\nlate_events = \"{name}_late\""), vec![a]),
        1 => (format!("type = \"interval_join\"\nleft = \"{a}\"\nright = \"{b}\"\non = [\"id\"]\nbetween = [\"0s\", \"10s\"]\nkind = \"inner\""), vec![a, b]),
        2 => (format!("type = \"temporal_join\"\ninput = \"{a}\"\ntable = \"{b}\"\non = {{ input = \"id\", table = \"id\" }}\nkind = \"left\""), vec![a, b]),
        3 => (format!("type = \"dedupe\"\ninputs = [\"{a}\"]\nkey = [\"id\"]\nhorizon = \"1m\""), vec![a]),
        4 => (format!("type = \"select\"\ninputs = [\"{a}\"]\nfields = {{ id = \"id\", ts = \"ts\" }}"), vec![a]),
        _ => (format!("type = \"filter\"\ninputs = [\"{a}\", \"{b}\"]\nwhere = \"id != null\""), vec![a, b]),
    };
    (format!("[transforms.{name}]\n{body}\n\n"), reads)
}

/// Whether the read graph (transform -> the transforms it reads) has a cycle: plain DFS.
/// `X_late` is a read of X only where X is a window (the one kind with `late_events` here).
fn has_cycle(reads: &[(String, Vec<String>)], windows: &[String]) -> bool {
    fn visit(
        n: &str,
        reads: &[(String, Vec<String>)],
        windows: &[String],
        state: &mut std::collections::HashMap<String, u8>,
    ) -> bool {
        match state.get(n) {
            Some(1) => return true,
            Some(2) => return false,
            _ => {}
        }
        state.insert(n.to_string(), 1);
        let next = reads
            .iter()
            .find(|(t, _)| t == n)
            .map(|(_, r)| r.clone())
            .unwrap_or_default();
        for r in next {
            let r = match r.strip_suffix("_late") {
                Some(w) if windows.iter().any(|x| x == w) => w.to_string(),
                Some(_) => continue,
                None => r,
            };
            if reads.iter().any(|(t, _)| *t == r) && visit(&r, reads, windows, state) {
                return true;
            }
        }
        state.insert(n.to_string(), 2);
        false
    }
    let mut state = std::collections::HashMap::new();
    reads
        .iter()
        .any(|(t, _)| visit(t, reads, windows, &mut state))
}

#[test]
fn random_graphs_validate_or_report_their_cycles_never_panic() {
    let cases = 10_000 * scale();
    let mut rng = Rng(0x0006_07A9);
    let (mut cyclic, mut planned) = (0usize, 0usize);
    for case in 0..cases {
        let n = 1 + rng.below(7);
        let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
        let mut text = String::from("[runtime]\nshards = 2\n\n");
        SOURCE_NAMES.iter().for_each(|s| text += &source_toml(s));
        let mut reads = Vec::new();
        let mut kinds = Vec::new();
        for name in &names {
            let (t, r) = transform_toml(&mut rng, name, |rng| match rng.below(10) {
                0..=3 => rng.pick(&SOURCE_NAMES).to_string(),
                4 => "nowhere".to_string(),
                5 => format!("{}_late", rng.pick(&names)),
                _ => rng.pick(&names).clone(),
            });
            kinds.push(t.contains("type = \"window\""));
            text += &t;
            reads.push((name.clone(), r));
        }
        text += &format!(
            "[sinks.out]\ntype = \"file\"\ninputs = [\"{}\"]\npath = \"out.ndjson\"\n",
            names[n - 1]
        );
        let result = load(&text);
        let windows: Vec<String> = reads
            .iter()
            .zip(&kinds)
            .filter(|(_, w)| **w)
            .map(|((t, _), _)| t.clone())
            .collect();
        if has_cycle(&reads, &windows) {
            cyclic += 1;
            let msg = result.expect_err(&format!("case {case}: a cycle planned:\n{text}"));
            assert!(msg.contains("cycle"), "case {case}: {msg}\n{text}");
        } else if result.is_ok() {
            planned += 1;
        }
    }
    assert!(
        cyclic > cases / 20 && planned > 0,
        "cyclic {cyclic}, planned {planned}"
    );
}

/// The config of the filed defect (dedupe -> interval join -> select -> temporal join), which
/// panicked in `reachable` before the graph was one operator list.
#[test]
fn the_chain_that_panicked_validate_plans() {
    let mut text = String::from("[runtime]\nshards = 2\n\n");
    SOURCE_NAMES.iter().for_each(|s| text += &source_toml(s));
    text += "[transforms.d]\ntype = \"dedupe\"\ninputs = [\"clicks\"]\nkey = [\"id\"]\nhorizon = \"1m\"\n\n\
             [transforms.j]\ntype = \"interval_join\"\nleft = \"imps\"\nright = \"d\"\non = [\"id\"]\nbetween = [\"0s\", \"10s\"]\nkind = \"inner\"\n\n\
             [transforms.s]\ntype = \"select\"\ninputs = [\"j\"]\nfields = { id = \"left.id\", ts = \"right.ts\" }\n\n\
             [transforms.t]\ntype = \"temporal_join\"\ninput = \"s\"\ntable = \"prices\"\non = { input = \"id\", table = \"id\" }\nkind = \"inner\"\n\n\
             [sinks.o]\ntype = \"file\"\ninputs = [\"t\"]\npath = \"out.ndjson\"\n";
    assert_eq!(load(&text), Ok(()));
}
