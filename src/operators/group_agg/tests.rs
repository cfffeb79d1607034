//! The group aggregate against hand-computed changelogs and against a reference model written
//! here (a plain in-memory table of each group's live rows, recomputed from scratch after every
//! change), over inserts, retractions before and after their inserts, NULL values and keys, long
//! keys, unchanged rows and a snapshot taken mid-stream and restored split over two operators.

use super::plan::GroupAggPlan;
use super::GroupAggregate;
use crate::checkpoint::codec::Enc;
use crate::expr::FieldPath;
use crate::operators::testing::{long_token, Collect, Owned};
use crate::operators::Operator;
use crate::plan::{AggFunc, AggPlan};
use crate::record::event::{RowKind, Value};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn agg(name: &str, func: AggFunc, slot: Option<usize>) -> AggPlan {
    AggPlan {
        name: name.into(),
        func,
        field: slot.map(|_| FieldPath::parse("v").unwrap()),
        slot,
    }
}

/// `GROUP BY k`: `n = count()`, `s = sum(v)`, plus `extra`.
fn op(extra: Vec<AggPlan>) -> GroupAggregate {
    let mut aggregates = vec![
        agg("n", AggFunc::Count, None),
        agg("s", AggFunc::Sum, Some(0)),
    ];
    aggregates.extend(extra);
    GroupAggregate::new(&GroupAggPlan {
        group_by: vec![FieldPath::parse("k").unwrap()],
        aggregates,
        values: Vec::new(),
        retracts: true,
        hot_keys: crate::plan::HotKeysPlan::OFF,
    })
}

/// `m = min(v)`, `x = max(v)`, `d = count_distinct(v)`: over an updating input they keep every
/// value (the distinct count with its rows).
fn extremes() -> Vec<AggPlan> {
    vec![
        agg("m", AggFunc::Min, Some(0)),
        agg("x", AggFunc::Max, Some(0)),
        agg("d", AggFunc::CountDistinct, Some(0)),
    ]
}

/// A record of key token `key` with value `v` (`None`: NULL) and kind `kind`.
fn rec(key: &str, v: Option<i64>, kind: RowKind) -> Owned {
    let value = v.map_or(Value::Null, Value::Int);
    let mut o = Owned::new(0, key.as_bytes(), 1, &[value], None);
    o.ev.flags |= kind.flags();
    o
}

fn feed(op: &mut GroupAggregate, input: &[Owned]) -> Vec<(RowKind, String)> {
    let mut out = Collect::default();
    for r in input {
        op.on_event(&r.rec(), i64::MIN, &mut out);
    }
    out.emitted
        .iter()
        .map(|e| (e.kind, e.line.clone()))
        .collect()
}

use RowKind::{Delete as D, Insert as I, UpdateAfter as UA, UpdateBefore as UB};

#[test]
fn inserts_give_an_insert_then_update_pairs() {
    let mut g = op(vec![
        agg("lo", AggFunc::Min, Some(0)),
        agg("avg", AggFunc::Avg, Some(0)),
    ]);
    let got = feed(
        &mut g,
        &[
            rec("\"a\"", Some(5), I),
            rec("\"b\"", Some(7), I),
            rec("\"a\"", Some(2), I),
            rec("\"a\"", None, I),
        ],
    );
    let row = |k: &str, n: u32, s: i64, lo: i64, avg: &str| {
        format!("{{\"k\":\"{k}\",\"n\":{n},\"s\":{s},\"lo\":{lo},\"avg\":{avg}}}")
    };
    assert_eq!(
        got,
        [
            (I, row("a", 1, 5, 5, "5.0")),
            (I, row("b", 1, 7, 7, "7.0")),
            (UB, row("a", 1, 5, 5, "5.0")),
            (UA, row("a", 2, 7, 2, "3.5")),
            // A NULL value counts as a row (count()) and is skipped by sum, min and avg.
            (UB, row("a", 2, 7, 2, "3.5")),
            (UA, row("a", 3, 7, 2, "3.5")),
        ]
    );
}

#[test]
fn an_unchanged_row_emits_nothing() {
    // max(v) alone: a smaller value leaves the row as it was.
    let mut g = GroupAggregate::new(&GroupAggPlan {
        group_by: vec![FieldPath::parse("k").unwrap()],
        aggregates: vec![agg("hi", AggFunc::Max, Some(0))],
        values: Vec::new(),
        retracts: false,
        hot_keys: crate::plan::HotKeysPlan::OFF,
    });
    let got = feed(
        &mut g,
        &[
            rec("\"a\"", Some(5), I),
            rec("\"a\"", Some(3), I),
            rec("\"a\"", Some(9), I),
        ],
    );
    assert_eq!(
        got,
        [
            (I, "{\"k\":\"a\",\"hi\":5}".to_string()),
            (UB, "{\"k\":\"a\",\"hi\":5}".to_string()),
            (UA, "{\"k\":\"a\",\"hi\":9}".to_string()),
        ]
    );
}

#[test]
fn retractions_update_delete_and_a_retraction_of_nothing_is_ignored() {
    let mut g = op(Vec::new());
    let got = feed(
        &mut g,
        &[
            // Before any insert of its group: ignored, as Flink ignores it.
            rec("\"a\"", Some(4), D),
            rec("\"a\"", Some(4), I),
            rec("\"a\"", Some(6), I),
            rec("\"a\"", Some(4), UB),
            rec("\"a\"", Some(10), UA),
            rec("\"a\"", Some(6), D),
            rec("\"a\"", Some(10), D),
            // The group is empty: this -U is of nothing.
            rec("\"a\"", Some(10), UB),
            // A new life of the group starts from empty accumulators.
            rec("\"a\"", Some(1), I),
        ],
    );
    let row = |n: u32, s: i64| format!("{{\"k\":\"a\",\"n\":{n},\"s\":{s}}}");
    assert_eq!(
        got,
        [
            (I, row(1, 4)),
            (UB, row(1, 4)),
            (UA, row(2, 10)),
            (UB, row(2, 10)),
            (UA, row(1, 6)),
            (UB, row(1, 6)),
            (UA, row(2, 16)),
            (UB, row(2, 16)),
            (UA, row(1, 10)),
            (D, row(1, 10)),
            (I, row(1, 1)),
        ]
    );
}

#[test]
fn null_and_long_keys_and_a_global_group() {
    let long = long_token("k", 60);
    let mut g = op(Vec::new());
    let got = feed(
        &mut g,
        &[
            rec("null", Some(1), I),
            rec(&long, Some(2), I),
            rec(&long, Some(3), I),
        ],
    );
    assert_eq!(got[0], (I, "{\"k\":null,\"n\":1,\"s\":1}".to_string()));
    assert_eq!(got[3], (UA, format!("{{\"k\":{long},\"n\":2,\"s\":5}}")));
    let mut global = GroupAggregate::new(&GroupAggPlan {
        group_by: Vec::new(),
        aggregates: vec![agg("n", AggFunc::Count, None)],
        values: Vec::new(),
        retracts: false,
        hot_keys: crate::plan::HotKeysPlan::OFF,
    });
    let got = feed(&mut global, &[rec("", None, I), rec("", None, I)]);
    assert_eq!(
        got,
        [
            (I, "{\"n\":1}".to_string()),
            (UB, "{\"n\":1}".to_string()),
            (UA, "{\"n\":2}".to_string()),
        ]
    );
}

/// The model: each group's live values (a multiset), the table recomputed from them.
#[derive(Default)]
struct Model {
    live: BTreeMap<String, Vec<Option<i64>>>,
}

impl Model {
    /// Applies one input change as SQL defines it: an insert adds its row, a retraction removes
    /// one equal row (a retraction in a group without rows is of nothing and changes nothing).
    fn apply(&mut self, key: &str, v: Option<i64>, retract: bool) {
        let rows = self.live.entry(key.to_string()).or_default();
        if retract {
            if let Some(i) = rows.iter().position(|x| *x == v) {
                rows.remove(i);
            }
        } else {
            rows.push(v);
        }
        if rows.is_empty() {
            self.live.remove(key);
        }
    }

    /// `GROUP BY k: count(*), sum(v)` (and `min(v)`, `max(v)`, `count(distinct v)` with
    /// `extremes`) over the live
    /// rows, as JSON lines by key.
    fn table(&self, extremes: bool) -> BTreeMap<String, String> {
        let or_null = |v: Option<i64>| v.map_or("null".to_string(), |v| v.to_string());
        self.live
            .iter()
            .map(|(k, rows)| {
                let vals: Vec<i64> = rows.iter().flatten().copied().collect();
                let sum = (!vals.is_empty()).then(|| vals.iter().sum::<i64>());
                let mut line = format!("{{\"k\":{k},\"n\":{},\"s\":{}", rows.len(), or_null(sum));
                if extremes {
                    let (m, x) = (vals.iter().min().copied(), vals.iter().max().copied());
                    let d = vals.iter().collect::<std::collections::BTreeSet<_>>().len();
                    line.push_str(&format!(
                        ",\"m\":{},\"x\":{},\"d\":{d}",
                        or_null(m),
                        or_null(x)
                    ));
                }
                line.push('}');
                (k.clone(), line)
            })
            .collect()
    }
}

/// Materialises a changelog by key: `+I`/`+U` put the row, `-U`/`-D` remove exactly that row.
fn materialise(into: &mut BTreeMap<String, String>, log: &[(RowKind, String)]) {
    for (kind, line) in log {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = v["k"].to_string();
        if kind.is_retraction() {
            assert_eq!(
                into.remove(&key).as_ref(),
                Some(line),
                "retracts what it emitted"
            );
        } else {
            assert!(
                *kind == I || into.contains_key(&key) || *kind == UA,
                "{kind:?} {line}"
            );
            into.insert(key, line.clone());
        }
    }
}

/// Changes over three keys: inserts of small values (NULL among them) and retractions, some of
/// rows never inserted (arriving before their insert, or of nothing at all).
fn changes() -> impl Strategy<Value = Vec<(u8, Option<i64>, bool)>> {
    prop::collection::vec(
        (
            0u8..3,
            prop::option::weighted(0.8, -3i64..4),
            prop::bool::weighted(0.35),
        ),
        0..60,
    )
}

proptest! {
    #[test]
    fn every_step_equals_the_model(input in changes(), with_extremes in any::<bool>()) {
        let mut g = op(if with_extremes { extremes() } else { Vec::new() });
        let mut model = Model::default();
        let mut table = BTreeMap::new();
        for (k, v, retract) in input {
            let key = format!("\"k{k}\"");
            let kind = if retract { D } else { I };
            // A changelog takes back only rows it inserted (its own -U follows its +I on one
            // path), so a retraction names one of the group's live rows; a group without any
            // gets one anyway, which must change nothing.
            let v = match model.live.get(&key) {
                Some(rows) if retract => rows[v.unwrap_or(0).unsigned_abs() as usize % rows.len()],
                _ => v,
            };
            let log = feed(&mut g, &[rec(&key, v, kind)]);
            model.apply(&key, v, retract);
            materialise(&mut table, &log);
            prop_assert_eq!(&table, &model.table(with_extremes));
        }
    }

    #[test]
    fn a_snapshot_restored_split_over_two_operators_continues_exactly(
        before in changes(), after in changes()
    ) {
        let mut whole = op(extremes());
        let as_rec = |(k, v, r): &(u8, Option<i64>, bool)| rec(&format!("\"k{k}\""), *v, if *r { D } else { I });
        let before: Vec<Owned> = before.iter().map(as_rec).collect();
        let after: Vec<Owned> = after.iter().map(as_rec).collect();
        feed(&mut whole, &before);
        let mut e = Enc::default();
        whole.snapshot(&mut e);
        let state = e.bytes;
        // Two new owners, each keeping half of the key hashes.
        let mut halves = [op(extremes()), op(extremes())];
        for (i, h) in halves.iter_mut().enumerate() {
            h.restore(&state, &|hash| (hash % 2) as usize == i, i64::MIN).unwrap();
        }
        let mut split = Vec::new();
        for r in &after {
            let log = feed(&mut halves[(r.ev.hash % 2) as usize], std::slice::from_ref(r));
            split.extend(log);
        }
        prop_assert_eq!(feed(&mut whole, &after), split);
    }
}

/// COUNT(DISTINCT) over an updating input past the exact counter's small form (300 values, then
/// 120 taken back, some of them twice held): a value leaves the count with its last row, and a
/// snapshot restores the rows per value.
#[test]
fn a_distinct_count_takes_values_back_by_their_last_row() {
    let mut g = op(vec![agg("d", AggFunc::CountDistinct, Some(0))]);
    let mut input: Vec<Owned> = (0..300).map(|v| rec("1", Some(v), I)).collect();
    input.extend((0..10).map(|v| rec("1", Some(v), I)));
    feed(&mut g, &input);
    let back: Vec<Owned> = (0..120).map(|v| rec("1", Some(v), D)).collect();
    let log = feed(&mut g, &back);
    let last = &log.last().expect("updates").1;
    // 0..10 are still held once more; 10..120 are gone.
    assert!(last.ends_with(r#""d":190}"#), "{last}");
    let mut e = Enc::default();
    g.snapshot(&mut e);
    let mut restored = op(vec![agg("d", AggFunc::CountDistinct, Some(0))]);
    restored.restore(&e.bytes, &|_| true, i64::MIN).unwrap();
    let log = feed(
        &mut restored,
        &(0..10).map(|v| rec("1", Some(v), D)).collect::<Vec<_>>(),
    );
    assert!(
        log.last().expect("updates").1.ends_with(r#""d":180}"#),
        "{log:?}"
    );
}
