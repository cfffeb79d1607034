//! Every pair A -> B of operator kinds (window, interval join, temporal join, dedupe,
//! filter/select) end to end through the binary, each against the reference engine in
//! `common::graph_model` (written from the semantics, not from engine code).
//!
//! Why pairs: an operator reading another operator's output sees records whose event time the
//! upstream chose (`window_end - 1`, the later row of a pair, the input's), arriving when the
//! upstream's watermark let them go, possibly behind its own watermark (a temporal join answers a
//! late row at once; a late side output is late by definition). Each pair is where one of those
//! hand-offs can go wrong. Every pipeline reads ONE file (kinds of records routed by filters), so
//! the file order is the global order and the model is exact; the data is out of order within the
//! bound, has records behind the watermark (within and beyond a window's allowed lateness), exact
//! duplicates, retries (same id, later time) and null keys. Each pipeline must write exactly the
//! model's lines on 1, 2 and 3 shards with 200-byte chunks and 16-slot rings, and with the
//! defaults; window results are compared in order per (group, window_start), the rest as
//! multisets. A join or dedupe over a re-firing window is refused by `validate` with its reason
//! and runs once the window's allowed lateness is 0.
//!
//! Two engine bugs this suite found are pinned by tests with their smallest inputs at the end of
//! this file: a window over a re-firing window must subtract the retractions, and a temporal join
//! must call a late row late when a newer version valid at the watermark replaced its version
//! (whatever `chunk_bytes`). The pairs they hit also run on data without those rows
//! (`_undisputed`), so a failure says which it is.

mod common;

use common::graph_data::{mix, records, Mix, MIX, OOO};
use common::graph_model::{get_path, JoinKind, ModelRun, Pipeline, SOURCE};
use common::graph_run::{
    check_pipeline, covers, routed, validate, without_late_after_newer_version, PAIR_VARIANTS,
};
use common::{Agg, Win};
use serde_json::{json, Value};

fn i(v: &Value, path: &str) -> i64 {
    get_path(v, path).as_i64().unwrap_or(0)
}

const WIN_KEY: &[&str] = &["k", "window_start"];

/// `n = count()`, `total = sum(v)`.
fn counts() -> [(&'static str, Agg); 2] {
    [("n", Agg::Count), ("total", Agg::Sum("v".into()))]
}

/// Asserts `validate` refuses `p` at `key` because its input carries updates.
fn refused_over_updates(p: &Pipeline, key: &str) {
    let err = validate(p).expect_err("a join or dedupe over a re-firing window must be refused");
    assert!(
        err.contains(key)
            && err.contains("needs an append-only input")
            && err.contains("allowed_lateness = \"0s\""),
        "{err}"
    );
}

// ----- window -> B ----------------------------------------------------------------------------

/// Two tumbling windows, per `k`: 2 s (allowed lateness `lateness_ms`) rolled up into 10 s.
fn window_to_window(lateness_ms: i64, seed: u64) -> ModelRun {
    let p = Pipeline::new(OOO)
        .window(
            "w1",
            &[SOURCE],
            &["k"],
            Win::Tumbling { size: 2_000 },
            lateness_ms,
            Some("w1_late"),
            &counts(),
        )
        .window(
            "w2",
            &["w1"],
            &["k"],
            Win::Tumbling { size: 10_000 },
            4_000,
            Some("w2_late"),
            &[
                ("windows", Agg::Count),
                ("n", Agg::Sum("n".into())),
                ("total", Agg::Sum("total".into())),
                ("mean", Agg::Avg("total".into())),
            ],
        )
        .sink(&["w1", "w1_late", "w2", "w2_late"]);
    let data = records(seed, &MIX);
    check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[("w1", WIN_KEY), ("w2", WIN_KEY)],
        "window -> window",
    )
}

#[test]
fn window_to_window_subtracts_the_retractions_of_re_fired_results() {
    let m = window_to_window(3_000, 1);
    covers(&m, &["w1.refires", "w1.late", "w2.refires"]);
}

#[test]
fn window_to_window_without_upstream_lateness_rolls_up_final_results() {
    let m = window_to_window(0, 1);
    covers(&m, &["w1.late"]);
    assert_eq!(
        m.stat("w2.late") + m.stat("w2.refires"),
        0,
        "append-only input is never late"
    );
}

fn window_then(lateness_ms: i64) -> Pipeline {
    routed(Pipeline::new(OOO), &["a", "b", "p"]).window(
        "w",
        &["fa"],
        &["k"],
        Win::Tumbling { size: 2_000 },
        lateness_ms,
        Some("w_late"),
        &counts(),
    )
}

#[test]
fn window_to_interval_join_is_refused_over_updates_and_matches_without_lateness() {
    let join = |p: Pipeline| {
        p.interval_join(
            "j",
            "w",
            "fb",
            &["k"],
            (0, 3_000),
            JoinKind::Left,
            Some("j_late"),
        )
    };
    refused_over_updates(&join(window_then(2_000)), "transforms.j.left");
    let p = join(window_then(0)).sink(&["w", "w_late", "j", "j_late"]);
    let data = records(2, &mix(&[("a", 2), ("b", 1)]));
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[("w", WIN_KEY)],
        "window -> interval join",
    );
    covers(&m, &["w.late", "j.pairs", "j.unmatched", "j.late"]);
}

#[test]
fn window_to_temporal_join_is_refused_over_updates_and_prices_results_without_lateness() {
    let join = |p: Pipeline| p.temporal_join("t", "w", "fp", ("k", "k"), true, Some("t_late"));
    refused_over_updates(&join(window_then(2_000)), "transforms.t.input");
    let p = join(window_then(0)).sink(&["w", "w_late", "t", "t_late"]);
    let data = records(3, &mix(&[("a", 3), ("p", 1)]));
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[("w", WIN_KEY)],
        "window -> temporal join",
    );
    covers(&m, &["w.late", "t.joined", "t.no_version", "t.late"]);
}

#[test]
fn window_to_dedupe_is_refused_over_updates_and_thins_results_without_lateness() {
    let dedupe = |lateness| {
        Pipeline::new(OOO)
            .window(
                "w",
                &[SOURCE],
                &["k"],
                Win::Tumbling { size: 1_000 },
                lateness,
                Some("w_late"),
                &counts(),
            )
            .dedupe("d", &["w"], &["k"], 3_000, Some("d_late"))
    };
    refused_over_updates(&dedupe(1_000), "transforms.d.inputs");
    let p = dedupe(0).sink(&["w", "w_late", "d", "d_late"]);
    let m = check_pipeline(
        &p,
        &records(4, &MIX),
        PAIR_VARIANTS,
        &[("w", WIN_KEY)],
        "window -> dedupe",
    );
    covers(&m, &["w.late", "d.dropped"]);
}

#[test]
fn window_to_filter_and_select_sees_every_re_fire() {
    let p = Pipeline::new(OOO)
        .window("w", &[SOURCE], &["k"], Win::Tumbling { size: 2_000 }, 3_000, Some("w_late"), &counts())
        .filter("busy", "w", "n >= 2", |r| i(r, "n") >= 2)
        .select(
            "s",
            "busy",
            &[("key", "k"), ("start", "window_start"), ("above", "total - n")],
            |r| json!({"key": r["k"], "start": r["window_start"], "above": i(r, "total") - i(r, "n")}),
        )
        .sink(&["w", "w_late", "s"]);
    let m = check_pipeline(
        &p,
        &records(5, &MIX),
        PAIR_VARIANTS,
        &[("w", WIN_KEY), ("s", &["key", "start"])],
        "window -> filter -> select",
    );
    covers(&m, &["w.refires", "w.late"]);
}

// ----- interval join -> B ---------------------------------------------------------------------

#[test]
fn interval_join_to_window_over_its_output_and_its_late_rows() {
    // A second window reads the join's late rows: they are behind the join's watermark, and the
    // window's is held 3 s further back (left outer), so some are on time there and some are late
    // for it too; late pairs (a late row meeting a held one) re-fire the first window. (Not the same window as the pairs: a late row can
    // also have met held rows, and its pairs and its late copy would re-fire one pane at once.)
    let p = routed(Pipeline::new(OOO), &["a", "b"])
        .interval_join(
            "j",
            "fa",
            "fb",
            &["k"],
            (-1_000, 3_000),
            JoinKind::Left,
            Some("j_late"),
        )
        .window(
            "w",
            &["j"],
            &["k"],
            Win::Tumbling { size: 2_000 },
            2_000,
            Some("w_late"),
            &[("n", Agg::Count)],
        )
        .window(
            "wl",
            &["j_late"],
            &["k"],
            Win::Tumbling { size: 2_000 },
            2_000,
            Some("wl_late"),
            &[("n", Agg::Count)],
        )
        .sink(&["j", "j_late", "w", "w_late", "wl", "wl_late"]);
    let data = records(
        6,
        &Mix {
            late_by: 10_000,
            late: 90,
            ..mix(&[("a", 1), ("b", 1)])
        },
    );
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[("w", WIN_KEY), ("wl", WIN_KEY)],
        "interval join -> window",
    );
    covers(
        &m,
        &["j.pairs", "j.unmatched", "j.late", "w.refires", "wl.late"],
    );
}

#[test]
fn interval_join_to_interval_join_keys_pairs_again() {
    let p = routed(Pipeline::new(OOO), &["a", "b", "c"])
        .interval_join(
            "j1",
            "fa",
            "fb",
            &["k"],
            (0, 2_000),
            JoinKind::Full,
            Some("j1_late"),
        )
        .interval_join(
            "j2",
            "j1",
            "fc",
            &["k"],
            (-1_000, 2_000),
            JoinKind::Left,
            Some("j2_late"),
        )
        .sink(&["j1", "j1_late", "j2", "j2_late"]);
    let data = records(7, &mix(&[("a", 1), ("b", 1), ("c", 1)]));
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[],
        "interval join -> interval join",
    );
    covers(
        &m,
        &[
            "j1.pairs",
            "j1.unmatched",
            "j1.late",
            "j2.pairs",
            "j2.unmatched",
            "j2.late",
        ],
    );
}

#[test]
fn interval_join_to_temporal_join_prices_pairs_at_their_time() {
    let p = routed(Pipeline::new(OOO), &["a", "b", "p"])
        .interval_join(
            "j",
            "fa",
            "fb",
            &["k"],
            (0, 3_000),
            JoinKind::Inner,
            Some("j_late"),
        )
        .temporal_join("t", "j", "fp", ("k", "k"), false, Some("t_late"))
        .sink(&["j", "j_late", "t", "t_late"]);
    let data = records(8, &mix(&[("a", 2), ("b", 2), ("p", 1)]));
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[],
        "interval join -> temporal join",
    );
    covers(&m, &["j.pairs", "j.late", "t.joined", "t.late"]);
}

#[test]
fn interval_join_to_dedupe_removes_pairs_of_retried_rows() {
    // Pairs of a retried `b` (same id, later) are duplicates on (left.id, right.id); `a` rows
    // are not retried, so no two different pairs of one key share a time (lower bound 0).
    let p = routed(Pipeline::new(OOO), &["a", "b"])
        .interval_join(
            "j",
            "fa",
            "fb",
            &["k"],
            (0, 3_000),
            JoinKind::Full,
            Some("j_late"),
        )
        .dedupe("d", &["j"], &["left.id", "right.id"], 2_000, Some("d_late"))
        .sink(&["j", "j_late", "d", "d_late"]);
    let data = records(
        9,
        &Mix {
            retries: 120,
            retry_kinds: &["b"],
            ..mix(&[("a", 1), ("b", 2)])
        },
    );
    let m = check_pipeline(&p, &data, PAIR_VARIANTS, &[], "interval join -> dedupe");
    covers(&m, &["j.pairs", "j.unmatched", "j.late", "d.dropped"]);
}

#[test]
fn interval_join_to_select_and_filter_reads_both_sides() {
    let p = routed(Pipeline::new(OOO), &["a", "b"])
        .interval_join("j", "fa", "fb", &["k"], (-1_000, 2_000), JoinKind::Right, Some("j_late"))
        .select("s", "j", &[("k", "k"), ("a", "left.id"), ("b", "right.id"), ("v", "right.v")], |r| {
            json!({"k": r["k"], "a": get_path(r, "left.id"), "b": get_path(r, "right.id"), "v": get_path(r, "right.v")})
        })
        .filter("f", "s", "v >= 5", |r| i(r, "v") >= 5)
        .sink(&["j", "j_late", "f"]);
    let data = records(10, &mix(&[("a", 1), ("b", 1)]));
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[],
        "interval join -> select -> filter",
    );
    covers(&m, &["j.pairs", "j.unmatched", "j.late"]);
}

// ----- temporal join -> B ---------------------------------------------------------------------

/// The data of a temporal-join test, whole (`Full`) or without the lines that reach a temporal
/// join behind its watermark after a newer version of their key became valid (`Undisputed`):
/// by the semantics those are late, but the engine answers them with the old version unless
/// something else made it prune that key since (a version added or a row of the key answered).
#[derive(Clone, Copy, PartialEq)]
enum Data {
    Full,
    Undisputed,
}

/// For a temporal-join pair: the test on its whole data, and the same test on the data without
/// the late rows a superseded version would answer.
macro_rules! tj_tests {
    ($body:ident, $full:ident, $undisputed:ident) => {
        #[test]
        fn $full() {
            $body(Data::Full);
        }

        #[test]
        fn $undisputed() {
            $body(Data::Undisputed);
        }
    };
}

fn tj_data(p: &Pipeline, seed: u64, mix: &Mix, d: Data) -> String {
    let data = records(seed, mix);
    match d {
        Data::Full => data,
        Data::Undisputed => without_late_after_newer_version(p, &data),
    }
}

fn temporal_join_to_window(d: Data) {
    let p = routed(Pipeline::new(OOO), &["a", "p"])
        .temporal_join("t", "fa", "fp", ("k", "k"), false, Some("t_late"))
        .window(
            "w",
            &["t"],
            &["k"],
            Win::Tumbling { size: 2_000 },
            3_000,
            Some("w_late"),
            &[("n", Agg::Count), ("spend", Agg::Sum("table.v".into()))],
        )
        .sink(&["t", "t_late", "w", "w_late"]);
    let data = tj_data(
        &p,
        11,
        &Mix {
            late: 150,
            late_by: 12_000,
            ..mix(&[("a", 20), ("p", 1)])
        },
        d,
    );
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[("w", WIN_KEY)],
        "temporal join -> window",
    );
    covers(&m, &["t.joined", "t.late", "w.refires", "w.late"]);
}

tj_tests!(
    temporal_join_to_window,
    temporal_join_to_window_takes_rows_answered_behind_the_watermark,
    temporal_join_to_window_takes_rows_answered_behind_the_watermark_undisputed
);

fn temporal_join_to_interval_join(d: Data) {
    let p = routed(Pipeline::new(OOO), &["a", "b", "p"])
        .temporal_join("t", "fa", "fp", ("k", "k"), true, Some("t_late"))
        .interval_join(
            "j",
            "t",
            "fb",
            &["k"],
            (0, 3_000),
            JoinKind::Inner,
            Some("j_late"),
        )
        .sink(&["t", "t_late", "j", "j_late"]);
    let data = tj_data(
        &p,
        12,
        &Mix {
            late: 100,
            ..mix(&[("a", 2), ("b", 2), ("p", 1)])
        },
        d,
    );
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[],
        "temporal join -> interval join",
    );
    covers(
        &m,
        &["t.joined", "t.no_version", "t.late", "j.pairs", "j.late"],
    );
}

tj_tests!(
    temporal_join_to_interval_join,
    temporal_join_to_interval_join_gets_late_answers_as_late_rows,
    temporal_join_to_interval_join_gets_late_answers_as_late_rows_undisputed
);

fn temporal_join_to_temporal_join(d: Data) {
    let p = routed(Pipeline::new(OOO), &["a", "p", "q"])
        .temporal_join("t1", "fa", "fp", ("k", "k"), false, Some("t1_late"))
        .temporal_join("t2", "t1", "fq", ("k", "k"), true, Some("t2_late"))
        .sink(&["t1", "t1_late", "t2", "t2_late"]);
    let data = tj_data(
        &p,
        13,
        &Mix {
            late: 100,
            ..mix(&[("a", 4), ("p", 1), ("q", 1)])
        },
        d,
    );
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[],
        "temporal join -> temporal join",
    );
    covers(&m, &["t1.joined", "t1.late", "t2.joined", "t2.late"]);
}

tj_tests!(
    temporal_join_to_temporal_join,
    temporal_join_to_temporal_join_replaces_the_table,
    temporal_join_to_temporal_join_replaces_the_table_undisputed
);

fn temporal_join_to_dedupe(d: Data) {
    let p = routed(Pipeline::new(OOO), &["a", "p"])
        .temporal_join("t", "fa", "fp", ("k", "k"), true, Some("t_late"))
        .dedupe("d", &["t"], &["id"], 3_000, Some("d_late"))
        .sink(&["t", "t_late", "d", "d_late"]);
    let data = tj_data(
        &p,
        14,
        &Mix {
            late: 100,
            dups: 80,
            ..mix(&[("a", 3), ("p", 1)])
        },
        d,
    );
    let m = check_pipeline(&p, &data, PAIR_VARIANTS, &[], "temporal join -> dedupe");
    covers(&m, &["t.joined", "t.late", "d.dropped", "d.late"]);
}

tj_tests!(
    temporal_join_to_dedupe,
    temporal_join_to_dedupe_drops_retries_and_late_copies,
    temporal_join_to_dedupe_drops_retries_and_late_copies_undisputed
);

fn temporal_join_to_select_and_filter(d: Data) {
    let p = routed(Pipeline::new(OOO), &["a", "p"])
        .temporal_join("t", "fa", "fp", ("k", "k"), true, Some("t_late"))
        .select(
            "s",
            "t",
            &[
                ("id", "id"),
                ("k", "k"),
                ("cost", "v * coalesce(table.v, 0)"),
            ],
            |r| json!({"id": r["id"], "k": r["k"], "cost": i(r, "v") * i(r, "table.v")}),
        )
        .filter("f", "s", "cost > 20", |r| i(r, "cost") > 20)
        .sink(&["t", "t_late", "s", "f"]);
    let data = tj_data(&p, 15, &mix(&[("a", 3), ("p", 1)]), d);
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[],
        "temporal join -> select -> filter",
    );
    covers(&m, &["t.joined", "t.no_version", "t.late"]);
}

tj_tests!(
    temporal_join_to_select_and_filter,
    temporal_join_to_select_and_filter_prices_from_the_table,
    temporal_join_to_select_and_filter_prices_from_the_table_undisputed
);

// ----- dedupe -> B ----------------------------------------------------------------------------

#[test]
fn dedupe_to_window_over_unique_and_late_records() {
    let p = Pipeline::new(OOO)
        .dedupe("d", &[SOURCE], &["id"], 4_000, Some("d_late"))
        .window(
            "w",
            &["d", "d_late"],
            &["k"],
            Win::Tumbling { size: 2_000 },
            2_000,
            Some("w_late"),
            &counts(),
        )
        .sink(&["d", "d_late", "w", "w_late"]);
    let m = check_pipeline(
        &p,
        &records(16, &MIX),
        PAIR_VARIANTS,
        &[("w", WIN_KEY)],
        "dedupe -> window",
    );
    covers(&m, &["d.dropped", "d.late", "w.refires", "w.late"]);
}

#[test]
fn dedupe_to_interval_join_matches_first_occurrences() {
    let p = routed(Pipeline::new(OOO), &["a", "b"])
        .dedupe("d", &["fa"], &["id"], 5_000, Some("d_late"))
        .interval_join(
            "j",
            "d",
            "fb",
            &["k"],
            (0, 3_000),
            JoinKind::Left,
            Some("j_late"),
        )
        .sink(&["d", "d_late", "j", "j_late"]);
    let data = records(
        17,
        &Mix {
            retries: 100,
            ..mix(&[("a", 1), ("b", 1)])
        },
    );
    let m = check_pipeline(&p, &data, PAIR_VARIANTS, &[], "dedupe -> interval join");
    covers(
        &m,
        &["d.dropped", "d.late", "j.pairs", "j.unmatched", "j.late"],
    );
}

#[test]
fn dedupe_to_temporal_join_prices_first_occurrences() {
    let p = routed(Pipeline::new(OOO), &["a", "p"])
        .dedupe("d", &["fa"], &["id"], 5_000, Some("d_late"))
        .temporal_join("t", "d", "fp", ("k", "k"), false, Some("t_late"))
        .sink(&["d", "d_late", "t", "t_late"]);
    let data = records(
        18,
        &Mix {
            retries: 100,
            ..mix(&[("a", 3), ("p", 1)])
        },
    );
    let m = check_pipeline(&p, &data, PAIR_VARIANTS, &[], "dedupe -> temporal join");
    covers(
        &m,
        &["d.dropped", "d.late", "t.joined", "t.unanswered", "t.late"],
    );
}

#[test]
fn dedupe_to_dedupe_by_id_then_by_key() {
    let p = Pipeline::new(OOO)
        .dedupe("d1", &[SOURCE], &["id"], 5_000, Some("d1_late"))
        .dedupe("d2", &["d1"], &["k"], 1_500, Some("d2_late"))
        .sink(&["d1", "d1_late", "d2", "d2_late"]);
    let m = check_pipeline(
        &p,
        &records(19, &MIX),
        PAIR_VARIANTS,
        &[],
        "dedupe -> dedupe",
    );
    covers(&m, &["d1.dropped", "d1.late", "d2.dropped"]);
}

#[test]
fn dedupe_to_filter_and_select() {
    let p = Pipeline::new(OOO)
        .dedupe("d", &[SOURCE], &["id"], 5_000, Some("d_late"))
        .filter("even", "d", "v % 2 == 0", |r| i(r, "v") % 2 == 0)
        .select(
            "s",
            "even",
            &[("id", "id"), ("k", "k"), ("twice", "v * 2")],
            |r| json!({"id": r["id"], "k": r["k"], "twice": i(r, "v") * 2}),
        )
        .sink(&["d", "d_late", "s"]);
    let m = check_pipeline(
        &p,
        &records(20, &MIX),
        PAIR_VARIANTS,
        &[],
        "dedupe -> filter -> select",
    );
    covers(&m, &["d.dropped", "d.late"]);
}

// ----- filter/select -> B ---------------------------------------------------------------------

#[test]
fn filter_to_sliding_window_with_every_aggregate() {
    let p = Pipeline::new(OOO)
        .filter("f", SOURCE, "kind == 'a' && v > 3", |r| {
            r["kind"] == "a" && i(r, "v") > 3
        })
        .window(
            "w",
            &["f"],
            &["k"],
            Win::Sliding {
                size: 4_000,
                slide: 2_000,
            },
            2_000,
            Some("w_late"),
            &[
                ("n", Agg::Count),
                ("total", Agg::Sum("v".into())),
                ("lo", Agg::Min("v".into())),
                ("hi", Agg::Max("v".into())),
                ("mean", Agg::Avg("v".into())),
            ],
        )
        .sink(&["f", "w", "w_late"]);
    let data = records(21, &mix(&[("a", 3), ("b", 1)]));
    let m = check_pipeline(
        &p,
        &data,
        PAIR_VARIANTS,
        &[("w", WIN_KEY)],
        "filter -> window",
    );
    covers(&m, &["w.refires", "w.late"]);
}

#[test]
fn filter_to_interval_join_full() {
    let p = routed(Pipeline::new(OOO), &["a", "b"])
        .interval_join(
            "j",
            "fa",
            "fb",
            &["k"],
            (-2_000, 1_000),
            JoinKind::Full,
            Some("j_late"),
        )
        .sink(&["j", "j_late"]);
    let m = check_pipeline(
        &p,
        &records(22, &mix(&[("a", 1), ("b", 1)])),
        PAIR_VARIANTS,
        &[],
        "filter -> interval join",
    );
    covers(&m, &["j.pairs", "j.unmatched", "j.late"]);
}

fn filter_to_temporal_join(d: Data) {
    let p = routed(Pipeline::new(OOO), &["a", "p"])
        .temporal_join("t", "fa", "fp", ("k", "k"), true, Some("t_late"))
        .sink(&["t", "t_late"]);
    let data = tj_data(
        &p,
        23,
        &Mix {
            late: 100,
            ..mix(&[("a", 3), ("p", 1)])
        },
        d,
    );
    let m = check_pipeline(&p, &data, PAIR_VARIANTS, &[], "filter -> temporal join");
    covers(&m, &["t.joined", "t.no_version", "t.late"]);
}

tj_tests!(
    filter_to_temporal_join,
    filter_to_temporal_join_left,
    filter_to_temporal_join_left_undisputed
);

#[test]
fn filter_to_dedupe() {
    let p = routed(Pipeline::new(OOO), &["a"])
        .dedupe("d", &["fa"], &["id"], 3_000, Some("d_late"))
        .sink(&["d", "d_late"]);
    let m = check_pipeline(
        &p,
        &records(24, &mix(&[("a", 2), ("b", 1)])),
        PAIR_VARIANTS,
        &[],
        "filter -> dedupe",
    );
    covers(&m, &["d.dropped", "d.late"]);
}

#[test]
fn select_to_filter_keeps_late_records_and_their_time() {
    let p = Pipeline::new(OOO)
        .select(
            "s",
            SOURCE,
            &[("id", "id"), ("kind", "kind"), ("w", "v * 10")],
            |r| json!({"id": r["id"], "kind": r["kind"], "w": i(r, "v") * 10}),
        )
        .filter("f", "s", "w >= 50 && kind != 'b'", |r| {
            i(r, "w") >= 50 && r["kind"] != "b"
        })
        .sink(&["s", "f"]);
    check_pipeline(
        &p,
        &records(25, &mix(&[("a", 1), ("b", 1)])),
        PAIR_VARIANTS,
        &[],
        "select -> filter",
    );
}

// ----- the engine disagreements, smallest inputs ----------------------------------------------

/// Five records: versions of `x` from 1000 and 5000, a row of `x` at 4500 that waits, a row of
/// `y` that moves the watermark to 5800, then a row of `x` at 4200. The version valid at 4200
/// (from 1000) was replaced by one valid at the watermark (from 5000): the row is late. The
/// engine answers it with the old version when no chunk ends between the third and fifth line
/// (it steps the join at 4500, the waiting row's time, and prunes there), late otherwise.
#[test]
fn temporal_join_late_row_after_a_newer_version_is_late_whatever_the_chunking() {
    let p = routed(Pipeline::new(OOO), &["a", "p"])
        .temporal_join("t", "fa", "fp", ("k", "k"), false, Some("t_late"))
        .sink(&["t", "t_late"]);
    let data = [
        r#"{"kind":"p","k":"x","ts":1000,"v":1}"#,
        r#"{"kind":"p","k":"x","ts":5000,"v":2}"#,
        r#"{"kind":"a","k":"x","ts":4500}"#,
        r#"{"kind":"a","k":"y","ts":7800}"#,
        r#"{"kind":"a","k":"x","ts":4200}"#,
    ]
    .map(|l| format!("{l}\n"))
    .concat();
    let m = check_pipeline(
        &p,
        &data,
        &[common::rt(1, 16, 130), common::rt(1, 16, 1 << 20)],
        &[],
        "temporal join, late row after a newer version",
    );
    assert_eq!(m.lines("t_late").len(), 1);
}

/// Three records into a 1 s window (lateness 5 s) rolled up into 10 s: [0, 1000) fires with
/// one event, re-fires with two (a retraction of `n = 1`, then `n = 2`), [2000, 3000) fires
/// with one. The roll-up must end at `windows = 2, n = 3`; the engine adds the retraction and
/// writes `windows = 4, n = 5`.
#[test]
fn window_over_a_re_firing_window_subtracts_the_retraction() {
    let p = Pipeline::new(1_000)
        .window(
            "w1",
            &[SOURCE],
            &["k"],
            Win::Tumbling { size: 1_000 },
            5_000,
            None,
            &[("n", Agg::Count)],
        )
        .window(
            "w2",
            &["w1"],
            &["k"],
            Win::Tumbling { size: 10_000 },
            5_000,
            None,
            &[("windows", Agg::Count), ("n", Agg::Sum("n".into()))],
        )
        .sink(&["w1", "w2"]);
    let data = [
        r#"{"k":"x","ts":100}"#,
        r#"{"k":"x","ts":2500}"#,
        r#"{"k":"x","ts":200}"#,
    ]
    .map(|l| format!("{l}\n"))
    .concat();
    let m = check_pipeline(
        &p,
        &data,
        &[common::rt(1, 16, 1 << 20)],
        &[("w2", WIN_KEY)],
        "window over window",
    );
    assert_eq!(
        m.lines("w2"),
        [json!({"k": "x", "window_start": 0, "window_end": 10_000, "windows": 2, "n": 3})]
    );
}
