//! FIRST_VALUE, LAST_VALUE and MIN/MAX of strings (`values`) in the group aggregate: against
//! hand-computed changelogs over append-only and updating input, across a snapshot restored split
//! over two operators, and against a reference model written here (each group's live rows in
//! arrival order, the values recomputed from scratch).

use super::plan::GroupAggPlan;
use super::values::{Pick, ValueAggPlan};
use super::GroupAggregate;
use crate::checkpoint::codec::Enc;
use crate::expr::FieldPath;
use crate::operators::testing::{Collect, Owned};
use crate::operators::Operator;
use crate::plan::{AggFunc, AggPlan};
use crate::record::event::RowKind;
use proptest::prelude::*;
use std::collections::BTreeMap;

use Pick::{First, Last, Max, Min};
use RowKind::{Delete as D, Insert as I, UpdateAfter as UA, UpdateBefore as UB};

type Log = Vec<(RowKind, String)>;

/// The value aggregates (name, pick, field).
fn values(list: &[(&str, Pick, &str)]) -> Vec<ValueAggPlan> {
    let plan = |&(name, pick, field): &(&str, Pick, &str)| {
        let (name, field) = (name.into(), field.into());
        ValueAggPlan { name, pick, field }
    };
    list.iter().map(plan).collect()
}

/// `n = count()` (with `count`), then `values`; grouped by `k` (`keyed`) or global.
fn op(keyed: bool, count: bool, values: Vec<ValueAggPlan>, retracts: bool) -> GroupAggregate {
    let (name, func) = ("n".into(), AggFunc::Count);
    let n = AggPlan {
        name,
        func,
        field: None,
        slot: None,
    };
    let k = FieldPath::parse("k").unwrap();
    GroupAggregate::new(&GroupAggPlan {
        group_by: if keyed { vec![k] } else { vec![] },
        aggregates: count.then_some(n).into_iter().collect(),
        values,
        retracts,
        hot_keys: crate::plan::HotKeysPlan::OFF,
    })
}

/// `n`, then `f = first_value(s)`, `l = last_value(s)`, `lo = min_string(s)`, `hi = max_string(s)`.
fn all_four(retracts: bool) -> GroupAggregate {
    let v = [
        ("f", First, "s"),
        ("l", Last, "s"),
        ("lo", Min, "s"),
        ("hi", Max, "s"),
    ];
    op(true, true, values(&v), retracts)
}

/// A record of key token `key` (`""` for the global group), JSON object `row` and kind `kind`.
fn rec(key: &str, row: &str, kind: RowKind) -> Owned {
    let mut o = Owned::new(0, key.as_bytes(), 1, &[], Some(row.as_bytes()));
    o.ev.flags |= kind.flags();
    o
}

/// Inserts of rows `rows` in group `"a"`.
fn inserts(rows: &[&str]) -> Vec<Owned> {
    rows.iter().map(|r| rec("\"a\"", r, I)).collect()
}

fn feed(op: &mut GroupAggregate, input: &[Owned]) -> Log {
    let mut out = Collect::default();
    for r in input {
        op.on_event(&r.rec(), i64::MIN, &mut out);
    }
    out.emitted.into_iter().map(|e| (e.kind, e.line)).collect()
}

/// `{"k":"<k>","s":"<s>"}`, or `"s":null` when `s` is `null`.
fn srow(k: &str, s: &str) -> String {
    let s = serde_json::to_string(&(s != "null").then_some(s)).unwrap();
    format!("{{\"k\":\"{k}\",\"s\":{s}}}")
}

/// An output row of [`all_four`]: `v` are f, l, lo, hi as bare strings (`null`: NULL).
fn out4(k: &str, n: u32, v: [&str; 4]) -> String {
    let [f, l, lo, hi] = v.map(|s| serde_json::to_string(&(s != "null").then_some(s)).unwrap());
    format!("{{\"k\":\"{k}\",\"n\":{n},\"f\":{f},\"l\":{l},\"lo\":{lo},\"hi\":{hi}}}")
}

/// A row change: `-U old`, `+U new`.
fn upd(old: String, new: String) -> [(RowKind, String); 2] {
    [(UB, old), (UA, new)]
}

/// `+I old`, then `-U old`, `+U new`.
fn insert_then_update(old: &str, new: &str) -> Log {
    [(I, old), (UB, old), (UA, new)]
        .map(|(k, l)| (k, l.to_string()))
        .to_vec()
}

#[test]
fn append_only_keeps_the_first_last_least_and_greatest_ignoring_nulls() {
    let mut g = all_four(false);
    let (a, b) = (|n, v| out4("a", n, v), |n, v| out4("b", n, v));
    let r = |k: &str, s: &str| rec(&format!("\"{k}\""), &srow(k, s), I);
    let got = feed(
        &mut g,
        &[
            r("a", "m"),
            r("a", "null"),
            rec("\"a\"", r#"{"k":"a"}"#, I),
            r("b", "null"),
            r("a", "c"),
            rec("\"a\"", r#"{"s":"x","k":"a"}"#, I),
            r("b", "q"),
            r("a", "m"),
        ],
    );
    let mut want = vec![(I, a(1, ["m"; 4]))];
    // A NULL and an absent value count as rows and leave the values as they were.
    want.extend(upd(a(1, ["m"; 4]), a(2, ["m"; 4])));
    want.extend(upd(a(2, ["m"; 4]), a(3, ["m"; 4])));
    want.push((I, b(1, ["null"; 4])));
    want.extend(upd(a(3, ["m"; 4]), a(4, ["m", "c", "c", "m"])));
    want.extend(upd(a(4, ["m", "c", "c", "m"]), a(5, ["m", "x", "c", "x"])));
    want.extend(upd(b(1, ["null"; 4]), b(2, ["q"; 4])));
    want.extend(upd(a(5, ["m", "x", "c", "x"]), a(6, ["m", "m", "c", "x"])));
    assert_eq!(got, want);
}

#[test]
fn value_only_plan_two_fields_and_unchanged_rows_emit_nothing() {
    let v = values(&[("f", First, "s"), ("t", Last, "t"), ("lo", Min, "s")]);
    let mut g = op(true, false, v, false);
    let got = feed(
        &mut g,
        &inserts(&[
            r#"{"k":"a","s":"m","t":1}"#,
            r#"{"k":"a","s":"z"}"#,
            r#"{"k":"a","s":null,"t":null}"#,
            r#"{"k":"a","t":1}"#,
            r#"{"k":"a","s":"b","t":"w"}"#,
        ]),
    );
    let old = r#"{"k":"a","f":"m","t":1,"lo":"m"}"#;
    assert_eq!(
        got,
        insert_then_update(old, r#"{"k":"a","f":"m","t":"w","lo":"b"}"#)
    );
}

#[test]
fn a_global_group() {
    let mut g = op(
        false,
        true,
        values(&[("l", Last, "s"), ("hi", Max, "s")]),
        false,
    );
    let got = feed(
        &mut g,
        &[r#"{"s":"p"}"#, r#"{"s":"e"}"#].map(|r| rec("", r, I)),
    );
    let (one, two) = (r#"{"n":1,"l":"p","hi":"p"}"#, r#"{"n":2,"l":"e","hi":"p"}"#);
    assert_eq!(got, insert_then_update(one, two));
    // Value aggregates alone, global: a NULL first row shows null.
    let mut g = op(false, false, values(&[("f", First, "s")]), false);
    let input = ["{\"s\":null}", "{\"s\":\"q\"}", "{\"s\":\"r\"}"].map(|r| rec("", r, I));
    let got = feed(&mut g, &input);
    assert_eq!(got, insert_then_update(r#"{"f":null}"#, r#"{"f":"q"}"#));
}

#[test]
fn strings_compare_unescaped_and_render_canonically_and_false_is_below_true() {
    for retracts in [false, true] {
        let v = values(&[("f", First, "s"), ("lo", Min, "s"), ("hi", Max, "s")]);
        let mut g = op(true, false, v, retracts);
        let got = feed(
            &mut g,
            &inserts(&[
                r#"{"k":"a","s":"\u0062"}"#,
                r#"{"k":"a","s":"a#"}"#,
                // `a"b` is below `a#` ('"' is U+0022), though its text `a\"b` is above.
                r#"{"k":"a","s":"a\"b"}"#,
                r#"{"k":"a","s":"\u00e9"}"#,
                r#"{"k":"a","s":"z"}"#,
                r#"{"k":"a","s":"b"}"#,
            ]),
        );
        let line = |lo: &str, hi: &str| format!(r#"{{"k":"a","f":"b","lo":"{lo}","hi":"{hi}"}}"#);
        let mut want = insert_then_update(&line("b", "b"), &line("a#", "b"));
        want.extend(upd(line("a#", "b"), line(r#"a\"b"#, "b")));
        want.extend(upd(line(r#"a\"b"#, "b"), line(r#"a\"b"#, "\u{e9}")));
        assert_eq!(got, want, "retracts: {retracts}");

        let v = values(&[("lo", Min, "s"), ("hi", Max, "s")]);
        let mut g = op(true, false, v, retracts);
        let got = feed(
            &mut g,
            &inserts(&[r#"{"k":"a","s":true}"#, r#"{"k":"a","s":false}"#]),
        );
        let (t, ft) = (
            r#"{"k":"a","lo":true,"hi":true}"#,
            r#"{"k":"a","lo":false,"hi":true}"#,
        );
        assert_eq!(got, insert_then_update(t, ft));
    }
}

#[test]
fn retractions_fall_back_to_the_next_value_then_delete_and_start_afresh() {
    let mut g = all_four(true);
    let a = |n, v| out4("a", n, v);
    let r = |(s, kind): (&str, RowKind)| rec("\"a\"", &srow("a", s), kind);
    let mut input = [("m", I), ("c", I), ("x", I), ("m", I)].map(r).to_vec();
    // -U "m" takes back the earlier "m", as Flink's FIRST_VALUE with retraction: the first
    // value moves on to "c" though an "m" is still held.
    input.extend([("m", UB), ("c", UB), ("b", UA)].map(r));
    input.extend([("x", D), ("b", D), ("m", D)].map(r));
    // The group has no rows: a retraction of nothing; then it starts afresh.
    input.extend([r(("m", D)), rec("\"a\"", r#"{"k":"a"}"#, I), r(("z", I))]);
    let got = feed(&mut g, &input);
    let s = [
        a(1, ["m"; 4]),
        a(2, ["m", "c", "c", "m"]),
        a(3, ["m", "x", "c", "x"]),
        a(4, ["m", "m", "c", "x"]),
        a(3, ["c", "m", "c", "x"]),
        a(2, ["x", "m", "m", "x"]),
        a(3, ["x", "b", "b", "x"]),
        a(2, ["m", "b", "b", "m"]),
        a(1, ["m"; 4]),
    ];
    let mut want = vec![(I, s[0].clone())];
    for w in s.windows(2) {
        want.extend(upd(w[0].clone(), w[1].clone()));
    }
    want.extend([(D, a(1, ["m"; 4])), (I, a(1, ["null"; 4]))]);
    want.extend(upd(a(1, ["null"; 4]), a(2, ["z"; 4])));
    assert_eq!(got, want);

    // first_value falls back when its value is taken back.
    let mut g = all_four(true);
    let input = [("p", I), ("q", I), ("p", D)].map(|(s, k)| rec("\"b\"", &srow("b", s), k));
    let (one, two) = (out4("b", 1, ["p"; 4]), out4("b", 2, ["p", "q", "p", "q"]));
    let mut want = insert_then_update(&one, &two);
    want.extend(upd(two, out4("b", 1, ["q"; 4])));
    assert_eq!(feed(&mut g, &input), want);
}

#[test]
fn a_retraction_of_a_value_never_added_leaves_the_values() {
    let mut g = op(
        true,
        true,
        values(&[("f", First, "s"), ("hi", Max, "s")]),
        true,
    );
    let r = |(s, kind): (&str, RowKind)| rec("\"a\"", &srow("a", s), kind);
    // Of a group never seen; then of "q", never added: the row count drops (as Flink's does),
    // the values stay; the group's last row taken back forgets its values ("m" still held).
    let input = [("m", D), ("m", I), ("c", I), ("q", UB), ("c", D), ("z", I)].map(r);
    let got = feed(&mut g, &input);
    let line = |n: u32, v: &str| format!(r#"{{"k":"a","n":{n},"f":"{v}","hi":"{v}"}}"#);
    let mut want = insert_then_update(&line(1, "m"), &line(2, "m"));
    want.extend(upd(line(2, "m"), line(1, "m")));
    want.extend([(D, line(1, "m")), (I, line(1, "z"))]);
    assert_eq!(got, want);
}

/// Their tokens' hashes fall in both halves of a split by `hash % 2` (those of k0..k3 do not).
const KEYS: [&str; 3] = ["g0", "g1", "g2"];
const VALUES: [&str; 4] = ["a", "ab", "b", "\u{e9}"];

/// (key, value (`None`: NULL), form (1: every character escaped; 2: a NULL as an absent field),
/// retraction, which live row a retraction takes back).
type Op = (usize, Option<usize>, u8, bool, usize);

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let value = prop::option::weighted(0.8, 0..VALUES.len());
    let op = (
        0..KEYS.len(),
        value,
        0u8..3,
        prop::bool::weighted(0.35),
        any::<usize>(),
    );
    prop::collection::vec(op, 0..60)
}

fn row_of(key: &str, v: Option<&str>, form: u8) -> String {
    let escaped = |s: &str| String::from_iter(s.chars().map(|c| format!("\\u{:04x}", c as u32)));
    let tok = match (v, form) {
        (None, 2) => return format!("{{\"k\":\"{key}\"}}"),
        (None, _) => "null".to_string(),
        (Some(s), 1) => format!("\"{}\"", escaped(s)),
        (Some(s), _) => serde_json::to_string(s).unwrap(),
    };
    format!("{{\"k\":\"{key}\",\"s\":{tok}}}")
}

/// The model: each group's live rows (arrival index, value), by key token.
#[derive(Default)]
struct Model {
    live: BTreeMap<String, Vec<(usize, Option<String>)>>,
    next: usize,
}

impl Model {
    /// An insert adds a row; a retraction removes the earliest live row of its value, if any
    /// (Flink's FIRST_VALUE/LAST_VALUE with retraction take back the value's first order).
    fn apply(&mut self, key: &str, v: &Option<String>, retract: bool) {
        let rows = self.live.entry(key.to_string()).or_default();
        if !retract {
            rows.push((self.next, v.clone()));
            self.next += 1;
        } else if let Some(i) = rows.iter().position(|(_, x)| x == v) {
            rows.remove(i);
        }
        if rows.is_empty() {
            self.live.remove(key);
        }
    }

    /// `GROUP BY k: count(*), first_value(s), last_value(s), min(s), max(s)`, as lines by key.
    fn table(&self) -> BTreeMap<String, String> {
        let tok = |v: Option<&String>| serde_json::to_string(&v).unwrap();
        let mut t = BTreeMap::new();
        for (k, rows) in &self.live {
            let mut rows = rows.clone();
            rows.sort();
            let vals: Vec<&String> = rows.iter().filter_map(|(_, v)| v.as_ref()).collect();
            let (f, l) = (tok(vals.first().copied()), tok(vals.last().copied()));
            let (lo, hi) = (
                tok(vals.iter().min().copied()),
                tok(vals.iter().max().copied()),
            );
            let n = rows.len();
            let line = format!(r#"{{"k":{k},"n":{n},"f":{f},"l":{l},"lo":{lo},"hi":{hi}}}"#);
            t.insert(k.clone(), line);
        }
        t
    }
}

/// The records of `ops` as a changelog writes them (over an updating input, `updating`): a
/// retraction takes back one of its group's live rows; in a group without any it is stray.
fn changelog(ops: &[Op], updating: bool) -> Vec<(String, Option<String>, bool, Owned)> {
    let mut model = Model::default();
    let mut out = Vec::new();
    for &(k, v, form, retract, which) in ops {
        let key = format!("\"{}\"", KEYS[k]);
        let retract = retract && updating;
        let v = match model.live.get(&key) {
            Some(rows) if retract => rows[which % rows.len()].1.clone(),
            _ => v.map(|i| VALUES[i].to_string()),
        };
        model.apply(&key, &v, retract);
        let r = rec(
            &key,
            &row_of(KEYS[k], v.as_deref(), form),
            if retract { D } else { I },
        );
        out.push((key, v, retract, r));
    }
    out
}

fn records(ops: &[Op], updating: bool) -> Vec<Owned> {
    changelog(ops, updating).into_iter().map(|c| c.3).collect()
}

/// Materialises a changelog by key: `+I`/`+U` put the row, `-U`/`-D` remove exactly that row.
fn materialise(into: &mut BTreeMap<String, String>, log: &[(RowKind, String)]) {
    for (kind, line) in log {
        let key = serde_json::from_str::<serde_json::Value>(line).unwrap()["k"].to_string();
        if kind.is_retraction() {
            assert_eq!(
                into.remove(&key).as_ref(),
                Some(line),
                "retracts what it emitted"
            );
        } else {
            assert!(
                *kind == UA || !into.contains_key(&key),
                "{kind:?} {line} over a row"
            );
            into.insert(key, line.clone());
        }
    }
}

/// The output after `cut` records of `input`: of one operator, and of two restored from its
/// snapshot there, each keeping the groups of half the key hashes.
fn split_run(input: &[Owned], cut: usize, retracts: bool) -> (Log, Log) {
    let cut = cut.min(input.len());
    let mut whole = all_four(retracts);
    feed(&mut whole, &input[..cut]);
    let mut e = Enc::default();
    whole.snapshot(&mut e);
    let mut halves = [all_four(retracts), all_four(retracts)];
    for (i, h) in halves.iter_mut().enumerate() {
        let keep = |hash: u64| (hash % 2) as usize == i;
        h.restore(&e.bytes, &keep, i64::MIN).unwrap();
    }
    let mut split = Vec::new();
    for r in &input[cut..] {
        let half = &mut halves[(r.ev.hash % 2) as usize];
        split.extend(feed(half, std::slice::from_ref(r)));
    }
    (feed(&mut whole, &input[cut..]), split)
}

#[test]
fn a_snapshot_mid_stream_restored_split_continues_exactly() {
    // Every key before and after the cut, the retractions of first, last and extreme values.
    let op = |i: usize| {
        (
            i % 3,
            (i % 7 != 3).then_some((i * 5 + i / 3) % 4),
            i as u8 % 3,
        )
    };
    let ops: Vec<Op> = (0..48)
        .map(|i| (op(i).0, op(i).1, op(i).2, i % 4 == 3, i / 2))
        .collect();
    for updating in [true, false] {
        let input = records(&ops, updating);
        let halves: Vec<u64> = input.iter().map(|r| r.ev.hash % 2).collect();
        assert!(
            halves.contains(&0) && halves.contains(&1),
            "both halves own keys"
        );
        let (whole, split) = split_run(&input, 24, updating);
        assert!(whole.len() > 20, "{whole:?}");
        assert_eq!(whole, split, "updating: {updating}");
    }
}

proptest! {
    #[test]
    fn every_step_equals_the_model(input in ops(), updating in any::<bool>()) {
        let mut g = all_four(updating);
        let (mut model, mut table) = (Model::default(), BTreeMap::new());
        for (key, v, retract, r) in changelog(&input, updating) {
            let log = feed(&mut g, std::slice::from_ref(&r));
            model.apply(&key, &v, retract);
            materialise(&mut table, &log);
            prop_assert_eq!(&table, &model.table(), "after {:?} {} {:?}", retract, key, v);
        }
    }

    #[test]
    fn a_snapshot_restored_split_equals_an_uninterrupted_run(
        input in ops(), cut in 0usize..60, updating in any::<bool>()
    ) {
        let (whole, split) = split_run(&records(&input, updating), cut, updating);
        prop_assert_eq!(whole, split);
    }
}
