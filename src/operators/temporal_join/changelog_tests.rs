//! The temporal join over a changelog table (a Debezium source: `+I`, `-U`, `+U`, `-D`) against a
//! reference written apart: the table as a map from (key, time) to the row or "none", each
//! change but `-U` put at its own time (a later arrival at the same time replaces an earlier
//! one), as Flink's versioned table keeps it (it drops update-befores); an input row takes the
//! entry of its key with the largest time <= its own, and a "none" entry is no version.

use super::*;
use crate::expr::FieldPath;
use crate::operators::testing::{Collect, Owned};
use proptest::prelude::*;

const FIRST: u16 = 2;

/// A table change (key, time, rate, kind) or an input row (key, time, order id, None).
type Row = (u8, i64, u64, Option<RowKind>);

fn line(r: &Row) -> String {
    match r.3 {
        Some(_) => format!(r#"{{"k":"{}","ts":{},"rate":{}}}"#, r.0, r.1, r.2),
        None => format!(r#"{{"k":"{}","ts":{},"order":{}}}"#, r.0, r.1, r.2),
    }
}

fn event(r: &Row) -> Owned {
    let port = FIRST + u16::from(r.3.is_some());
    let key = format!("\"{}\"", r.0);
    let mut o = Owned::new(port, key.as_bytes(), r.1, &[], Some(line(r).as_bytes()));
    if let Some(kind) = r.3 {
        o.ev.flags |= kind.flags();
    }
    o
}

fn join(left: bool) -> TemporalJoin {
    let plan = TemporalJoinPlan {
        on_input: FieldPath::parse("k").unwrap(),
        on_table: FieldPath::parse("k").unwrap(),
        left,
        drop_older_versions: false,
    };
    TemporalJoin::new(&plan, BuildCtx { first_port: FIRST })
}

/// Each row in order, the watermark at the largest time seen minus `ooo`; then the end of input.
fn run(j: &mut TemporalJoin, rows: &[Row], ooo: i64) -> Vec<String> {
    let mut out = Collect::default();
    let mut wm = i64::MIN;
    for r in rows {
        j.on_event(&event(r).rec(), wm, &mut out);
        if r.1 - ooo > wm {
            wm = r.1 - ooo;
            j.on_watermark(wm, &mut out);
        }
    }
    j.on_watermark(i64::MAX, &mut out);
    out.sorted()
}

fn reference(rows: &[Row], left: bool) -> Vec<String> {
    let mut table: std::collections::BTreeMap<(u8, i64), Option<&Row>> = Default::default();
    for r in rows {
        match r.3 {
            Some(RowKind::UpdateBefore) | None => {}
            Some(kind) => {
                table.insert((r.0, r.1), (kind != RowKind::Delete).then_some(r));
            }
        }
    }
    let mut lines = Vec::new();
    for r in rows.iter().filter(|r| r.3.is_none()) {
        let version = table
            .range((r.0, i64::MIN)..=(r.0, r.1))
            .next_back()
            .and_then(|(_, v)| *v);
        let input = line(r);
        let body = &input[..input.len() - 1];
        match version {
            Some(v) => lines.push(format!("{body},\"table\":{}}}", line(v))),
            None if left => lines.push(format!("{body},\"table\":null}}")),
            None => {}
        }
    }
    lines.sort();
    lines
}

const I: Option<RowKind> = Some(RowKind::Insert);
const UB: Option<RowKind> = Some(RowKind::UpdateBefore);
const UA: Option<RowKind> = Some(RowKind::UpdateAfter);
const D: Option<RowKind> = Some(RowKind::Delete);

#[test]
fn updates_and_deletes_of_a_changelog_table_are_versions_and_their_ends() {
    // Key 1: inserted at 100 (rate 10), updated at 200 (its -U carries the old row's time, 100,
    // and changes nothing; +U 20 from 200), deleted at 300, inserted again at 400. Orders at 150,
    // 250, 350, 450 and one exactly at the delete's time.
    let rows: [Row; 10] = [
        (1, 100, 10, I),
        (1, 150, 1, None),
        (1, 100, 10, UB),
        (1, 200, 20, UA),
        (1, 250, 2, None),
        (1, 300, 20, D),
        (1, 300, 3, None),
        (1, 350, 4, None),
        (1, 400, 40, I),
        (1, 450, 5, None),
    ];
    let got = run(&mut join(true), &rows, 0);
    assert_eq!(got, reference(&rows, true));
    let rate = |order: u64| {
        got.iter()
            .find(|l| l.contains(&format!("\"order\":{order},")))
            .and_then(|l| l.split("\"rate\":").nth(1))
            .map(|r| r.trim_end_matches('}').to_string())
    };
    assert_eq!(rate(1).as_deref(), Some("10"));
    assert_eq!(rate(2).as_deref(), Some("20"));
    assert_eq!(
        rate(3),
        None,
        "deleted at 300: the order at 300 finds no row"
    );
    assert_eq!(rate(4), None);
    assert_eq!(rate(5).as_deref(), Some("40"));
    assert_eq!(got.len(), 5, "a LEFT join keeps every order");
    assert_eq!(run(&mut join(false), &rows, 0).len(), 3);
}

#[test]
fn a_delete_behind_the_watermark_still_ends_the_row_for_orders_not_yet_answered() {
    // The delete's before image carries the row's time (100), far behind the watermark (1000):
    // it is not late data to drop but the end of the row, for the orders still waiting (1005).
    // The order at 990, answered before the delete arrived, keeps its answer. A late insert
    // (+I at 500 behind the watermark) is dropped and counted as late, as any late version.
    let mut j = join(true);
    let mut out = Collect::default();
    for r in [(1, 100, 10, I), (1, 990, 1, None)] {
        j.on_event(&event(&r).rec(), 0, &mut out);
    }
    j.on_watermark(1000, &mut out);
    for r in [(1, 1005, 2, None), (1, 100, 10, D), (1, 500, 50, I)] {
        j.on_event(&event(&r).rec(), 1000, &mut out);
    }
    j.on_watermark(i64::MAX, &mut out);
    assert_eq!(
        out.lines,
        [
            r#"{"k":"1","ts":990,"order":1,"table":{"k":"1","ts":100,"rate":10}}"#,
            r#"{"k":"1","ts":1005,"order":2,"table":null}"#,
        ]
    );
    assert_eq!(out.late, [500]);
    let mut r = OperatorReport::default();
    j.report(&mut r);
    assert_eq!(r.late_dropped, 1);
}

#[test]
fn a_retraction_survives_a_snapshot() {
    // Deleted at 200, snapshot before the order at 250 arrives: the restored join knows the row
    // is gone.
    let mut a = join(true);
    let mut out = Collect::default();
    for r in [(1, 100, 10, I), (1, 200, 10, D)] {
        a.on_event(&event(&r).rec(), 0, &mut out);
    }
    let mut state = Enc::default();
    a.snapshot(&mut state);
    let mut b = join(true);
    b.restore(&state.bytes, &|_| true, 0).unwrap();
    b.on_event(&event(&(1, 250, 1, None)).rec(), 0, &mut out);
    b.on_watermark(i64::MAX, &mut out);
    assert_eq!(out.lines, [r#"{"k":"1","ts":250,"order":1,"table":null}"#]);
}

proptest! {
    /// Any arrival order within the watermark bound gives the reference's answer.
    #[test]
    fn equal_to_the_versioned_map_within_the_bound(
        raw in proptest::collection::vec((0u8..3, 0i64..300, 0u64..100, 0u8..5), 1..60),
        jitter in proptest::collection::vec(0i64..40, 60),
        left in any::<bool>(),
    ) {
        let kinds = [None, I, UB, UA, D];
        let mut rows: Vec<Row> =
            raw.iter().map(|&(k, t, v, kind)| (k, t, v, kinds[kind as usize])).collect();
        // Two changes of a key at one time resolve by arrival: keep them distinct here.
        let mut seen = std::collections::HashSet::new();
        rows.retain(|r| r.3.is_none() || seen.insert((r.0, r.1)));
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| (rows[i].1 + jitter[i], i));
        let arrival: Vec<Row> = order.iter().map(|&i| rows[i]).collect();
        prop_assert_eq!(run(&mut join(left), &arrival, 40), reference(&rows, left));
    }
}
