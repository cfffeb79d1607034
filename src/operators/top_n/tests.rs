//! Top-N against a reference: per (key, time), the rows sorted by score descending (ties by the
//! row's text), the first `n`, ranked from 1; whatever the arrival order within the watermark
//! bound, and across a snapshot split by key hash. Plus hand-worked ranks, NULLs and lateness.

use super::*;
use crate::expr::FieldPath;
use crate::operators::testing::{Collect, Owned};
use proptest::prelude::*;

/// (key, time, score (None: a missing field), id)
type Row = (u8, i64, Option<i64>, u32);

fn record(r: &Row) -> String {
    let (k, t, score, id) = *r;
    match score {
        Some(s) => format!(r#"{{"k":"k{k}","t":{t},"score":{s},"id":{id}}}"#),
        None => format!(r#"{{"k":"k{k}","t":{t},"id":{id}}}"#),
    }
}

fn event(r: &Row) -> Owned {
    Owned::new(
        0,
        format!("\"k{}\"", r.0).as_bytes(),
        r.1,
        &[],
        Some(record(r).as_bytes()),
    )
}

fn top_n(n: usize, rank: Option<&str>) -> TopN {
    TopN::new(&TopNPlan {
        key: vec![FieldPath::parse("k").unwrap()],
        order: vec![(FieldPath::parse("score").unwrap(), true)],
        n,
        rank_field: rank.map(str::to_string),
    })
}

fn ranked(line: &str, rank: usize) -> String {
    format!("{},\"rank\":{rank}}}", &line[..line.len() - 1])
}

/// Feeds rows with the watermark = max time seen - `ooo`, then ends input.
fn run(op: &mut TopN, rows: &[Row], ooo: i64) -> Collect {
    let mut out = Collect::default();
    let (mut max, mut wm) = (i64::MIN, i64::MIN);
    for r in rows {
        if max > i64::MIN && max - ooo > wm {
            wm = max - ooo;
            op.on_watermark(wm, &mut out);
        }
        op.on_event(&event(r).rec(), wm, &mut out);
        max = max.max(r.1);
    }
    op.on_watermark(i64::MAX, &mut out);
    out
}

/// The reference: group by (key, time); order by score descending (a missing score lowest), then
/// by the record's text; keep `n`; rank from 1.
fn reference(rows: &[Row], n: usize) -> Vec<String> {
    /// (score, record text) of one (key, time).
    type Group = Vec<(Option<i64>, String)>;
    let mut groups: BTreeMap<(u8, i64), Group> = BTreeMap::new();
    for r in rows {
        groups.entry((r.0, r.1)).or_default().push((r.2, record(r)));
    }
    let mut lines = Vec::new();
    for (_, mut g) in groups {
        g.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        for (i, (_, line)) in g.into_iter().take(n).enumerate() {
            lines.push(ranked(&line, i + 1));
        }
    }
    lines.sort();
    lines
}

#[test]
fn hand_worked_ranks_ties_nulls_and_a_late_row() {
    // Key k1 at t=100: scores 5, 9, 9 (a tie: by text, id 2 before id 3), missing, 7. Top 3.
    let rows = [
        (1, 100, Some(5), 1),
        (1, 100, Some(9), 3),
        (1, 100, Some(9), 2),
        (1, 100, None, 4),
        (1, 100, Some(7), 5),
        (2, 100, None, 6),
        (1, 200, Some(1), 7),
    ];
    let mut op = top_n(3, Some("rank"));
    let mut out = Collect::default();
    for r in &rows {
        op.on_event(&event(r).rec(), 0, &mut out);
    }
    assert!(
        out.lines.is_empty(),
        "nothing before the watermark passes the time"
    );
    op.on_watermark(150, &mut out);
    assert_eq!(
        out.lines,
        [
            ranked(&record(&rows[2]), 1),
            ranked(&record(&rows[1]), 2),
            ranked(&record(&rows[4]), 3),
            ranked(&record(&rows[5]), 1),
        ]
    );
    // At 150, a row for t=120 is still on time; one for t=100 is late.
    op.on_event(&event(&(1, 100, Some(99), 8)).rec(), 150, &mut out);
    assert_eq!(out.late, [100]);
    op.on_watermark(i64::MAX, &mut out);
    assert_eq!(out.lines.last().unwrap(), &ranked(&record(&rows[6]), 1));
    let mut r = OperatorReport::default();
    op.report(&mut r);
    assert_eq!(r.late_dropped, 1);
    assert_eq!(
        r.rows.unwrap().buffered,
        [0, 0],
        "every row left with its group"
    );
}

#[test]
fn without_a_rank_field_rows_are_written_as_read_and_n_bounds_what_is_held() {
    let mut op = top_n(2, None);
    let mut out = Collect::default();
    for i in 0..100u32 {
        op.on_event(
            &event(&(1, 10, Some(i64::from(i % 37)), i)).rec(),
            0,
            &mut out,
        );
    }
    let mut r = OperatorReport::default();
    op.report(&mut r);
    assert_eq!(
        r.rows.unwrap().peak[0],
        2,
        "never more than n rows per group"
    );
    op.on_watermark(i64::MAX, &mut out);
    // Score 36 twice (ids 36 and 73): the tie goes by the text, `"id":36` first.
    assert_eq!(
        out.lines,
        [
            record(&(1, 10, Some(36), 36)),
            record(&(1, 10, Some(36), 73))
        ]
    );
}

proptest! {
    #[test]
    fn equals_the_reference_whatever_the_arrival_order_within_the_bound(
        raw in proptest::collection::vec((0u8..4, 0i64..6, proptest::option::of(0i64..5), 0i64..30), 1..80),
        n in 1usize..4,
    ) {
        // Times are multiples of 10 (window results share their window's time); arrival is
        // shuffled by up to 29 ms, so the bound 30 keeps every row on time.
        let mut rows: Vec<(i64, Row)> = raw.iter().enumerate()
            .map(|(i, &(k, t, s, jitter))| (t * 10 + jitter, (k, t * 10 + 100, s, i as u32)))
            .collect();
        rows.sort_by_key(|(arrive, _)| *arrive);
        let rows: Vec<Row> = rows.into_iter().map(|(_, r)| r).collect();
        let want = reference(&rows, n);
        let mut op = top_n(n, Some("rank"));
        prop_assert_eq!(run(&mut op, &rows, 60).sorted(), want.clone());

        // Half the rows, a snapshot split by key hash into two operators, then the rest.
        let half = rows.len() / 2;
        let mut a = top_n(n, Some("rank"));
        let mut out = Collect::default();
        for r in &rows[..half] {
            a.on_event(&event(r).rec(), 0, &mut out);
        }
        let mut state = Enc::default();
        a.snapshot(&mut state);
        let mut lines = Vec::new();
        for side in [0u64, 1] {
            let mut b = top_n(n, Some("rank"));
            b.restore(&state.bytes, &|h| h % 2 == side, 0).unwrap();
            let mut out = Collect::default();
            for r in &rows[half..] {
                let ev = event(r);
                if ev.rec().ev.hash % 2 == side {
                    b.on_event(&ev.rec(), 0, &mut out);
                }
            }
            b.on_watermark(i64::MAX, &mut out);
            lines.extend(out.lines);
        }
        lines.sort();
        prop_assert_eq!(lines, want);
    }
}
