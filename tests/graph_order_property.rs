//! Property: for a three-operator chain (dedupe -> interval join -> window, the shape of the
//! ad-spend pipeline), any arrival order within the out-of-orderness bound gives the same
//! result, and the engine writes exactly what the reference engine in `common::graph_model`
//! says for that order, on any shard count and chunk size.
//!
//! Why it holds: a record within the bound is never behind a watermark, so dedupe decides in
//! event-time order, the join holds every row until no pair can still come, and the window never
//! re-fires; only when things happen changes with the order, not what. Records have distinct
//! times except exact copies (a tie between different records of one key would be decided by
//! arrival). Few cases (16) and small inputs keep this fast on 2 cores.

mod common;

use common::graph_model::{JoinKind, Pipeline, SOURCE};
use common::graph_run::{canon, check_pipeline, PAIR_VARIANTS};
use common::{Agg, Rng, Win, BASE};
use proptest::prelude::*;
use serde_json::{json, Value};

const OOO: i64 = 2_000;

/// One generated record before it gets a time: kind `a` (else `b`), key (None: null), value,
/// and whether it is an exact copy of the previous `a` or a retry of it (same id, later).
type Spec = (bool, Option<u8>, u8, u8);

/// Records in event-time order (times 20..200 ms apart; a copy shares its original's time, at
/// most 1 s back, so every record is within the bound).
fn events(specs: &[Spec], gaps: &[i64]) -> Vec<(i64, String)> {
    let mut out: Vec<(i64, String)> = Vec::new();
    let mut last_a: Option<Value> = None;
    let mut ts = BASE + 10_000;
    for (i, (&(is_a, key, v, how), gap)) in specs.iter().zip(gaps.iter().cycle()).enumerate() {
        ts += gap;
        let k = key.map_or(Value::Null, |k| json!(format!("k{k}")));
        let recent = |prev: &Value| prev["ts"].as_i64().is_some_and(|t| ts - t < OOO / 2);
        let r = match (&last_a, how % 4) {
            (Some(prev), 0) if is_a && recent(prev) => {
                out.push((prev["ts"].as_i64().unwrap_or(ts), prev.to_string()));
                continue;
            }
            (Some(prev), 1) if is_a => {
                json!({"kind": "a", "id": prev["id"], "k": prev["k"], "ts": ts, "v": v})
            }
            _ if is_a => json!({"kind": "a", "id": format!("a{i}"), "k": k, "ts": ts, "v": v}),
            _ => json!({"kind": "b", "id": format!("b{i}"), "k": k, "ts": ts, "v": v}),
        };
        if is_a {
            last_a = Some(r.clone());
        }
        out.push((ts, r.to_string()));
    }
    out
}

/// Swaps neighbours at random wherever every record stays within the bound of all before it.
fn shuffle_within_bound(events: &mut [(i64, String)], seed: u64) {
    let mut rng = Rng::new(seed);
    for _ in 0..6 {
        let mut max_before = i64::MIN;
        for i in 0..events.len().saturating_sub(1) {
            let (a, b) = (events[i].0, events[i + 1].0);
            if rng.chance(500) && max_before.max(b) - a < OOO {
                events.swap(i, i + 1);
            }
            max_before = max_before.max(events[i].0);
        }
    }
}

fn in_bound(events: &[(i64, String)]) -> bool {
    let mut max = i64::MIN;
    events.iter().all(|(ts, _)| {
        let ok = max == i64::MIN || max - ts < OOO;
        max = max.max(*ts);
        ok
    })
}

fn pipeline(kind: JoinKind, bounds: (i64, i64), horizon_ms: i64, lateness_ms: i64) -> Pipeline {
    Pipeline::new(OOO)
        .filter("fa", SOURCE, "kind == 'a'", |r| r["kind"] == "a")
        .filter("fb", SOURCE, "kind == 'b'", |r| r["kind"] == "b")
        .dedupe("d", &["fa"], &["id"], horizon_ms, Some("d_late"))
        .interval_join("j", "d", "fb", &["k"], bounds, kind, Some("j_late"))
        .window(
            "w",
            &["j"],
            &["k"],
            Win::Tumbling { size: 2_000 },
            lateness_ms,
            Some("w_late"),
            &[("n", Agg::Count), ("total", Agg::Sum("left.v".into()))],
        )
        .sink(&["d", "d_late", "j", "j_late", "w", "w_late"])
}

fn text(lines: &[(i64, String)]) -> String {
    lines.iter().map(|(_, l)| format!("{l}\n")).collect()
}

/// Every sunk stream's records as sorted canonical JSON.
fn sorted(m: &common::graph_model::ModelRun) -> Vec<(String, Vec<String>)> {
    m.out
        .iter()
        .map(|(s, v)| {
            let mut v: Vec<String> = v.iter().map(|x| canon(x).to_string()).collect();
            v.sort();
            (s.clone(), v)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn arrival_order_within_the_bound_does_not_change_a_three_operator_chain(
        specs in proptest::collection::vec((any::<bool>(), proptest::option::weighted(0.9, 0u8..3), 1u8..10, 0u8..8), 40..160),
        gaps in proptest::collection::vec(20i64..200, 1..16),
        seeds in (any::<u64>(), any::<u64>()),
        variants in (0usize..4, 0usize..4),
        outer in any::<bool>(),
        bounds in prop_oneof![Just((0i64, 3_000i64)), Just((-1_000, 1_000)), Just((-2_000, 4_000))],
        horizon_ms in prop_oneof![Just(1_000i64), Just(5_000)],
        lateness_ms in prop_oneof![Just(0i64), Just(2_000)],
    ) {
        let kind = if outer { JoinKind::Left } else { JoinKind::Inner };
        let p = pipeline(kind, bounds, horizon_ms, lateness_ms);
        let ordered = events(&specs, &gaps);
        let mut first = ordered.clone();
        let mut second = ordered;
        shuffle_within_bound(&mut first, seeds.0);
        shuffle_within_bound(&mut second, seeds.1);
        prop_assert!(in_bound(&first) && in_bound(&second));
        let runs = [(&first, variants.0), (&second, variants.1)];
        let models: Vec<_> = runs
            .iter()
            .map(|(lines, v)| {
                let rt = PAIR_VARIANTS[*v];
                check_pipeline(&p, &text(lines), &[rt], &[("w", &["k", "window_start"])], "order property")
            })
            .collect();
        for m in &models {
            for late in ["d_late", "j_late", "w_late"] {
                prop_assert!(m.lines(late).is_empty(), "{late} within the bound: {:?}", m.lines(late));
            }
        }
        prop_assert_eq!(sorted(&models[0]), sorted(&models[1]), "the model depends on the order");
    }
}
