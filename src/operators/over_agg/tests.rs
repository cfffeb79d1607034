//! The over aggregate against a reference model written here: rows taken per partition in
//! (time, source position) order once the watermark passes them, each with COUNT(*), COUNT(v),
//! SUM, MIN and MAX of `v` over its ROWS or RANGE frame (bounded or not), late rows sent to the
//! late output; whatever the arrival order within the bound, with NULL values, equal times
//! ordered by position rather than arrival, and across a snapshot split by key hash.

use super::*;
use crate::expr::FieldPath;
use crate::operators::testing::{Collect, Owned};
use crate::operators::window::plan::AggPlan;
use proptest::prelude::*;

/// (partition, time, value, source position).
type Row = (u8, i64, Option<i64>, u64);

fn record(r: &Row) -> String {
    let v = r.2.map_or("null".to_string(), |v| v.to_string());
    format!(r#"{{"k":{},"ts":{},"v":{v},"p":{}}}"#, r.0, r.1, r.3)
}

fn event(r: &Row) -> Owned {
    let v = r.2.map_or(Value::Null, Value::Int);
    let mut o = Owned::new(
        0,
        r.0.to_string().as_bytes(),
        r.1,
        &[v],
        Some(record(r).as_bytes()),
    );
    o.ev.pos = r.3;
    o
}

fn plan(frame: Frame) -> OverAggPlan {
    let agg = |name: &str, func, field: bool| AggPlan {
        name: name.into(),
        func,
        field: field.then(|| FieldPath::parse("v").unwrap()),
        slot: field.then_some(0),
    };
    OverAggPlan {
        partition_by: vec![FieldPath::parse("k").unwrap()],
        frame,
        aggregates: vec![
            agg("n", AggFunc::Count, false),
            agg("c", AggFunc::Count, true),
            agg("s", AggFunc::Sum, true),
            agg("mx", AggFunc::Max, true),
            agg("mn", AggFunc::Min, true),
        ],
    }
}

/// Feeds `rows` in order, the watermark `ooo` behind the largest time seen before each; then
/// the end of input. Returns the sorted lines and the late rows' positions.
fn run(rows: &[Row], ooo: i64, frame: Frame) -> (Vec<String>, Vec<i64>) {
    let mut op = OverAggregate::new(&plan(frame));
    let mut out = Collect::default();
    feed(&mut op, rows, ooo, &mut out, i64::MIN);
    op.on_watermark(i64::MAX, &mut out);
    (out.sorted(), out.late)
}

/// Feeds `rows` from watermark `wm`; returns the last watermark.
fn feed(op: &mut OverAggregate, rows: &[Row], ooo: i64, out: &mut Collect, mut wm: i64) -> i64 {
    let mut max = wm.saturating_add(ooo);
    for r in rows {
        if max > i64::MIN && max - ooo > wm {
            wm = max - ooo;
            op.on_watermark(wm, out);
        }
        op.on_event(&event(r).rec(), wm, out);
        max = max.max(r.1);
    }
    wm
}

/// The rows that are not late, and the times of those that are, decided as Flink decides them:
/// an unbounded frame refuses a row behind the watermark; a bounded one, a row at or behind the
/// last its partition took (rows are taken when the watermark passes them, or, taken in behind
/// it, at its next step).
fn on_time(rows: &[Row], ooo: i64, frame: Frame) -> (Vec<Row>, Vec<i64>) {
    let (mut max, mut wm) = (i64::MIN, i64::MIN);
    let mut last: std::collections::HashMap<u8, i64> = Default::default();
    let mut waiting: Vec<(i64, Row)> = Vec::new();
    let (mut kept, mut late) = (Vec::new(), Vec::new());
    for r in rows {
        if max > i64::MIN && max - ooo > wm {
            wm = max - ooo;
            for (_, x) in waiting.iter().filter(|(at, _)| *at <= wm) {
                let l = last.entry(x.0).or_insert(i64::MIN);
                *l = (*l).max(x.1);
            }
            waiting.retain(|(at, _)| *at > wm);
        }
        let behind = if frame.bounded() {
            r.1 <= last.get(&r.0).copied().unwrap_or(i64::MIN)
        } else {
            r.1 <= wm
        };
        if behind {
            late.push(r.1);
        } else {
            kept.push(*r);
            waiting.push((r.1.max(wm.saturating_add(1)), *r));
        }
        max = max.max(r.1);
    }
    (kept, late)
}

fn opt(v: Option<i64>) -> String {
    v.map_or("null".into(), |v| v.to_string())
}

/// Each on-time row with the aggregates of its frame, computed from scratch.
fn reference(rows: &[Row], ooo: i64, frame: Frame) -> Vec<String> {
    let (kept, _) = on_time(rows, ooo, frame);
    let mut lines = Vec::new();
    for k in 0..=u8::MAX {
        let mut part: Vec<Row> = kept.iter().filter(|r| r.0 == k).copied().collect();
        part.sort_by_key(|r| (r.1, r.3));
        for (i, r) in part.iter().enumerate() {
            let in_frame: Vec<&Row> = match frame {
                Frame::Rows(n) => {
                    let from = n.map_or(0, |n| i.saturating_sub(n as usize));
                    part[from..=i].iter().collect()
                }
                Frame::Range(d) => (part.iter())
                    .filter(|x| x.1 <= r.1 && d.is_none_or(|d| x.1 >= r.1 - d))
                    .collect(),
            };
            let vals: Vec<i64> = in_frame.iter().filter_map(|x| x.2).collect();
            let sum = (!vals.is_empty()).then(|| vals.iter().sum::<i64>());
            let body = record(r);
            lines.push(format!(
                r#"{},"n":{},"c":{},"s":{},"mx":{},"mn":{}}}"#,
                &body[..body.len() - 1],
                in_frame.len(),
                vals.len(),
                opt(sum),
                opt(vals.iter().max().copied()),
                opt(vals.iter().min().copied()),
            ));
        }
    }
    lines.sort();
    lines
}

fn frames() -> impl Strategy<Value = Frame> {
    prop_oneof![
        (0u64..4).prop_map(|n| Frame::Rows(Some(n))),
        Just(Frame::Rows(None)),
        (0i64..40).prop_map(|d| Frame::Range(Some(d))),
        Just(Frame::Range(None)),
    ]
}

/// Rows of 3 partitions, times drifting forward with disorder up to 30, some values NULL; each
/// row's source position is a shuffle of its index, so equal times are not in arrival order.
fn rows() -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec(
        (0u8..3, -20i64..25, prop::option::weighted(0.8, -50i64..50)),
        0..70,
    )
    .prop_flat_map(|raw| {
        let n = raw.len();
        (
            Just(raw),
            Just((0..n as u64).collect::<Vec<_>>()).prop_shuffle(),
        )
    })
    .prop_map(|(raw, pos)| {
        let mut t = 0;
        (raw.iter().zip(pos))
            .map(|(&(k, dt, v), p)| {
                t += dt.max(0) / 4;
                (k, t + dt.min(0) / 2 + dt % 7, v, p)
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn matches_the_reference(rows in rows(), ooo in 0i64..30, frame in frames()) {
        let (got, late) = run(&rows, ooo, frame);
        prop_assert_eq!(got, reference(&rows, ooo, frame));
        prop_assert_eq!(late, on_time(&rows, ooo, frame).1);
    }

    /// A snapshot half way, restored into two operators that each keep half the partitions (by
    /// key hash), gives the same rows as one uninterrupted run.
    #[test]
    fn a_snapshot_split_by_key_hash_resumes(rows in rows(), ooo in 0i64..30, frame in frames(), cut in 0usize..70) {
        let cut = cut.min(rows.len());
        let mut first = OverAggregate::new(&plan(frame));
        let mut out = Collect::default();
        let mut wm = feed(&mut first, &rows[..cut], ooo, &mut out, i64::MIN);
        let mut state = crate::checkpoint::codec::Enc::default();
        first.snapshot(&mut state);
        let mut halves: Vec<OverAggregate> = (0..2u64)
            .map(|half| {
                let mut op = OverAggregate::new(&plan(frame));
                op.restore(&state.bytes, &|h| h % 2 == half, wm).unwrap();
                op
            })
            .collect();
        let mut max = rows[..cut].iter().map(|r| r.1).max().unwrap_or(i64::MIN);
        for r in &rows[cut..] {
            if max > i64::MIN && max - ooo > wm {
                wm = max - ooo;
                halves.iter_mut().for_each(|op| op.on_watermark(wm, &mut out));
            }
            let e = event(r);
            halves[(e.ev.hash % 2) as usize].on_event(&e.rec(), wm, &mut out);
            max = max.max(r.1);
        }
        halves.iter_mut().for_each(|op| op.on_watermark(i64::MAX, &mut out));
        prop_assert_eq!(out.sorted(), reference(&rows, ooo, frame));
    }
}

/// Hand-computed: ROWS 1 PRECEDING and RANGE 10 ms PRECEDING over one partition, two rows at
/// one time (the later position second whatever the arrival), and a late row.
#[test]
fn hand_computed_frames() {
    // (partition, time, value, position), in arrival order.
    let rows: Vec<Row> = vec![
        (0, 100, Some(5), 0),
        (0, 110, Some(7), 2),
        (0, 110, Some(1), 1),
        (0, 125, None, 3),
        (0, 50, Some(100), 4), // behind the watermark (125 - 5): late
        (0, 130, Some(2), 5),
    ];
    let tail = |n, c, s: &str, mx: &str, mn: &str| {
        format!(r#","n":{n},"c":{c},"s":{s},"mx":{mx},"mn":{mn}}}"#)
    };
    let line = |r: usize, t: String| {
        let b = record(&rows[r]);
        format!("{}{t}", &b[..b.len() - 1])
    };
    let (got, late) = run(&rows, 5, Frame::Rows(Some(1)));
    let mut want = vec![
        line(0, tail(1, 1, "5", "5", "5")),
        line(2, tail(2, 2, "6", "5", "1")), // position 1 before position 2
        line(1, tail(2, 2, "8", "7", "1")),
        line(3, tail(2, 1, "7", "7", "7")),
        line(5, tail(2, 1, "2", "2", "2")),
    ];
    want.sort();
    assert_eq!(got, want);
    assert_eq!(late, vec![50]);
    let (got, _) = run(&rows, 5, Frame::Range(Some(10)));
    let mut want = vec![
        line(0, tail(1, 1, "5", "5", "5")),
        line(2, tail(3, 3, "13", "7", "1")), // peers at 110 see each other
        line(1, tail(3, 3, "13", "7", "1")),
        line(3, tail(1, 0, "null", "null", "null")), // 115..125: only itself, NULL
        line(5, tail(2, 1, "2", "2", "2")),
    ];
    want.sort();
    assert_eq!(got, want);
}

/// Flink's two rules for late rows: partition 1's row at 112 arrives behind the watermark (120),
/// but partition 1 has taken no row yet, so a bounded frame takes it (at the watermark's next
/// step, in time order before its partition's 130) while an unbounded frame refuses it.
#[test]
fn a_bounded_frame_takes_a_row_behind_the_watermark_its_partition_has_not_passed() {
    let rows: Vec<Row> = vec![
        (0, 100, Some(1), 0),
        (0, 125, Some(2), 1),
        (1, 112, Some(3), 2),
        (1, 130, Some(4), 3),
        (0, 140, Some(5), 4),
    ];
    let (got, late) = run(&rows, 5, Frame::Rows(Some(1)));
    assert!(late.is_empty(), "{late:?}");
    let of = |k: u8| {
        (got.iter())
            .filter(|l| l.starts_with(&format!(r#"{{"k":{k},"#)))
            .count()
    };
    assert_eq!((of(0), of(1)), (3, 2));
    let body = record(&rows[3]);
    let want = format!(
        r#"{},"n":2,"c":2,"s":7,"mx":4,"mn":3}}"#,
        &body[..body.len() - 1]
    );
    assert!(got.contains(&want), "{got:#?}");
    let (got, late) = run(&rows, 5, Frame::Rows(None));
    assert_eq!(late, vec![112]);
    assert_eq!(got.len(), 4);
}
