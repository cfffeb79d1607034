//! The interval join against a nested-loop reference: every (left, right) pair of one key with
//! `lower <= tr - tl <= upper`, plus, in outer kinds, each row that has no such pair; whatever the
//! arrival order within the watermark bound, whole or split by key hash across a snapshot. Rows
//! travel in the events' payload and are held by value; half the keys are 200 bytes long.

use super::*;
use crate::expr::FieldPath;
use crate::operators::testing::{long_token, Collect, Owned};
use proptest::prelude::*;

/// The join's first port: events on it are left rows, on the next one right rows.
const FIRST: u16 = 5;

/// (is right row, key, time)
type Row = (bool, u8, i64);

/// The key's JSON token: a number for keys 0 and 1, a 200-byte string from 2 up.
fn key_token(k: u8) -> String {
    if k < 2 {
        k.to_string()
    } else {
        long_token(&format!("k{k}"), 200)
    }
}

fn record(r: &Row, i: usize) -> String {
    format!(r#"{{"k":{},"ts":{},"n":{i}}}"#, key_token(r.1), r.2)
}

fn event(r: &Row, i: usize) -> Owned {
    let row = record(r, i);
    Owned::new(
        FIRST + u16::from(r.0),
        key_token(r.1).as_bytes(),
        r.2,
        &[],
        Some(row.as_bytes()),
    )
}

fn join(lower: i64, upper: i64, outer: [bool; 2]) -> IntervalJoin {
    let plan = IntervalJoinPlan {
        on: vec![FieldPath::parse("k").unwrap()],
        lower_ms: lower,
        upper_ms: upper,
        outer,
    };
    IntervalJoin::new(&plan, BuildCtx { first_port: FIRST })
}

fn rows_of(j: &IntervalJoin) -> JoinStats {
    let mut r = OperatorReport::default();
    j.report(&mut r);
    r.rows.expect("a join reports its rows")
}

/// Feeds rows in order with the watermark = max time seen - `ooo`, then ends input.
fn run(rows: &[Row], ooo: i64, j: &mut IntervalJoin) -> Vec<String> {
    let mut out = Collect::default();
    let (mut max, mut wm) = (i64::MIN, i64::MIN);
    for (i, r) in rows.iter().enumerate() {
        if max > i64::MIN && max - ooo > wm {
            wm = max - ooo;
            j.on_watermark(wm, &mut out);
        }
        j.on_event(&event(r, i).rec(), wm, &mut out);
        max = max.max(r.2);
    }
    j.on_watermark(i64::MAX, &mut out);
    assert!(out.late.is_empty(), "no row is late within the bound");
    out.sorted()
}

fn reference(rows: &[Row], lower: i64, upper: i64, outer: [bool; 2]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut matched = vec![false; rows.len()];
    for (i, l) in rows.iter().enumerate().filter(|(_, r)| !r.0) {
        for (j, r) in rows.iter().enumerate().filter(|(_, r)| r.0) {
            if l.1 == r.1 && lower <= r.2 - l.2 && r.2 - l.2 <= upper {
                lines.push(format!(
                    "{{\"k\":{},\"left\":{},\"right\":{}}}",
                    key_token(l.1),
                    record(l, i),
                    record(r, j)
                ));
                matched[i] = true;
                matched[j] = true;
            }
        }
    }
    for (i, r) in rows.iter().enumerate() {
        if !matched[i] && outer[usize::from(r.0)] {
            let (a, b) = if r.0 {
                ("null".to_string(), record(r, i))
            } else {
                (record(r, i), "null".to_string())
            };
            lines.push(format!(
                "{{\"k\":{},\"left\":{a},\"right\":{b}}}",
                key_token(r.1)
            ));
        }
    }
    lines.sort();
    lines
}

#[test]
fn clicks_0_to_10_s_after_their_impression_match_later_ones_do_not() {
    let rows = [
        (false, 1, 1_000),  // impression
        (true, 1, 1_000),   // click at +0 s: match
        (true, 1, 11_000),  // +10 s: match (inclusive)
        (true, 1, 11_001),  // +10.001 s: no
        (true, 0, 5_000),   // a click with no impression
        (false, 3, 20_000), // an impression with no click
    ];
    for outer in [[false, false], [true, false], [false, true], [true, true]] {
        let got = run(&rows, 20_000, &mut join(0, 10_000, outer));
        assert_eq!(got, reference(&rows, 0, 10_000, outer), "{outer:?}");
    }
    let inner = run(&rows, 20_000, &mut join(0, 10_000, [false, false]));
    assert_eq!(inner.len(), 2);
}

#[test]
fn state_is_held_only_while_a_match_is_possible() {
    // One impression and one click per second for 1000 s, each click 3 s after its impression.
    let rows: Vec<Row> = (0..1000i64)
        .flat_map(|s| {
            [
                (false, (s % 7) as u8, s * 1000),
                (true, (s % 7) as u8, s * 1000 + 3000),
            ]
        })
        .collect();
    let mut j = join(0, 10_000, [false, false]);
    run(&rows, 5_000, &mut j);
    let s = rows_of(&j);
    assert_eq!(s.buffered, [0, 0], "everything cleaned up at the end");
    assert!(j.keys.is_empty(), "and every key forgotten");
    assert_eq!(j.store.bytes().0, 0, "and every row let go");
    assert!(
        s.peak[0] <= 13 && s.peak[1] <= 13,
        "peak {:?}: rate x bound, not run length",
        s.peak
    );
}

#[test]
fn long_keys_match_only_when_every_byte_is_equal() {
    let key = long_token("imp", 200);
    let other = format!("{}X\"", &key[..198]);
    let mut j = join(0, 100, [false, false]);
    let mut out = Collect::default();
    for (side, k, ts) in [(0, &key, 10), (1, &other, 20), (1, &key, 30)] {
        let row = format!(r#"{{"ts":{ts}}}"#);
        let e = Owned::new(FIRST + side, k.as_bytes(), ts, &[], Some(row.as_bytes()));
        j.on_event(&e.rec(), i64::MIN, &mut out);
    }
    j.on_watermark(i64::MAX, &mut out);
    assert_eq!(
        out.lines,
        [format!(
            r#"{{"k":{key},"left":{{"ts":10}},"right":{{"ts":30}}}}"#
        )]
    );
}

#[test]
fn a_null_key_never_matches_inner_drops_it_outer_emits_it_at_once() {
    // Both rows' key bytes are `null` (what the binding writes for a missing key field): equal
    // bytes, but SQL NULL never equals anything.
    let left = Owned::new(FIRST, b"null", 1_000, &[], Some(br#"{"ts":1000}"#)).null_key();
    let right = Owned::new(
        FIRST + 1,
        b"null",
        1_000,
        &[],
        Some(br#"{"ts":1000,"r":1}"#),
    )
    .null_key();
    let keyed = Owned::new(FIRST, b"7", 1_000, &[], Some(br#"{"k":7}"#));
    let keyed_r = Owned::new(FIRST + 1, b"7", 1_005, &[], Some(br#"{"k":7,"r":1}"#));
    for outer in [[false, false], [true, false], [false, true], [true, true]] {
        let mut j = join(0, 10, outer);
        let mut out = Collect::default();
        for e in [&left, &right, &keyed, &keyed_r] {
            j.on_event(&e.rec(), 0, &mut out);
        }
        // Unmatched null-key rows leave on arrival, not at the watermark.
        let mut want = Vec::new();
        if outer[0] {
            want.push((r#"{"k":null,"left":{"ts":1000},"right":null}"#, Some(1_000)));
        }
        if outer[1] {
            want.push((
                r#"{"k":null,"left":null,"right":{"ts":1000,"r":1}}"#,
                Some(1_000),
            ));
        }
        want.push((
            r#"{"k":7,"left":{"k":7},"right":{"k":7,"r":1}}"#,
            Some(1_005),
        ));
        let got: Vec<(&str, Option<i64>)> = out
            .emitted
            .iter()
            .map(|e| (e.line.as_str(), e.cause))
            .collect();
        assert_eq!(got, want, "{outer:?}");
        let s = rows_of(&j);
        assert_eq!(s.null_keys, 2);
        assert_eq!(s.buffered, [1, 1], "only the keyed rows are held");
        j.on_watermark(i64::MAX, &mut out);
        assert_eq!(out.lines.len(), want.len(), "nothing more at the end");
    }
}

#[test]
fn held_rows_round_trip_through_a_snapshot_by_value() {
    // A row larger than a row page, one with escapes and non-ASCII text, one with whitespace
    // around it (trimmed on output): exactly these bytes come back from the snapshot.
    let big = format!(r#"{{"blob":"{}"}}"#, "z".repeat(100_000));
    let odd = r#"{"s":"é \"q\" \\ \u0001 ✓","n":[1,2,{"x":null}]}"#.to_string();
    let padded = "  {\"p\":1}\t ".to_string();
    let mut a = join(0, 1_000, [true, false]);
    let mut out = Collect::default();
    let key = long_token("k", 200);
    for (i, row) in [&big, &odd, &padded].into_iter().enumerate() {
        let e = Owned::new(
            FIRST,
            key.as_bytes(),
            10 + i as i64,
            &[],
            Some(row.as_bytes()),
        );
        a.on_event(&e.rec(), 0, &mut out);
    }
    let mut state = Enc::default();
    a.snapshot(&mut state);
    drop(a);
    let mut b = join(0, 1_000, [true, false]);
    b.restore(&state.bytes, &|_| true, 0).unwrap();
    let click = Owned::new(FIRST + 1, key.as_bytes(), 12, &[], Some(b"{}"));
    b.on_event(&click.rec(), 0, &mut out);
    b.on_watermark(i64::MAX, &mut out);
    let mut want: Vec<String> = [&big, &odd, &padded]
        .iter()
        .map(|r| format!(r#"{{"k":{key},"left":{},"right":{{}}}}"#, r.trim()))
        .collect();
    want.sort();
    assert_eq!(out.sorted(), want);
}

proptest! {
    #[test]
    fn order_insensitive_within_the_bound_and_equal_to_the_nested_loop(
        raw in proptest::collection::vec((any::<bool>(), 0u8..4, 0i64..400), 1..80),
        jitter in proptest::collection::vec(0i64..50, 80),
        lower in -60i64..60,
        width in 0i64..80,
        outer in any::<[bool; 2]>(),
    ) {
        let mut order: Vec<usize> = (0..raw.len()).collect();
        order.sort_by_key(|&i| (raw[i].2 + jitter[i], i));
        let rows: Vec<Row> = order.iter().map(|&i| raw[i]).collect();
        let upper = lower + width;
        prop_assert_eq!(
            run(&rows, 50, &mut join(lower, upper, outer)),
            reference(&rows, lower, upper, outer)
        );
    }

    #[test]
    fn restored_state_continues_exactly(
        raw in proptest::collection::vec((any::<bool>(), 0u8..4, 0i64..400), 1..60),
        cut in any::<prop::sample::Index>(),
        outer in any::<[bool; 2]>(),
    ) {
        let mut rows = raw;
        rows.sort_by_key(|r| r.2);
        let cut = cut.index(rows.len() + 1);
        let feed = |j: &mut IntervalJoin, out: &mut Collect, range: std::ops::Range<usize>, wm: &mut i64, keep: &dyn Fn(u64) -> bool| {
            for (i, r) in rows.iter().enumerate().take(range.end).skip(range.start) {
                let e = event(r, i);
                if keep(e.ev.hash) {
                    j.on_event(&e.rec(), *wm, out);
                }
                if r.2 - 1 > *wm {
                    *wm = r.2 - 1;
                    j.on_watermark(*wm, out);
                }
            }
        };
        let all = |_: u64| true;
        let mut a = join(-20, 30, outer);
        let mut out_a = Collect::default();
        let mut wm = i64::MIN;
        feed(&mut a, &mut out_a, 0..cut, &mut wm, &all);
        let mut state = Enc::default();
        a.snapshot(&mut state);
        let before = out_a.lines.len();
        let mut wm_a = wm;
        feed(&mut a, &mut out_a, cut..rows.len(), &mut wm_a, &all);
        a.on_watermark(i64::MAX, &mut out_a);
        let mut want = out_a.lines[before..].to_vec();
        want.sort();
        // The rows held at the cut come back from the snapshot alone, by value.
        let mut got = Vec::new();
        for parity in [0u64, 1] {
            let keep = move |h: u64| h & 1 == parity;
            let mut b = join(-20, 30, outer);
            b.restore(&state.bytes, &keep, wm).unwrap();
            let mut out_b = Collect::default();
            let mut wm_b = wm;
            feed(&mut b, &mut out_b, cut..rows.len(), &mut wm_b, &keep);
            b.on_watermark(i64::MAX, &mut out_b);
            got.extend(out_b.lines);
        }
        got.sort();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn a_late_row_meets_the_rows_still_held_and_is_held_while_it_can_match() {
    // [0, 10]: a left row at 100 is held until the watermark reaches 110.
    let rows: [Row; 4] = [
        (false, 0, 100),
        (true, 0, 103),
        (false, 0, 98),
        (true, 0, 106),
    ];
    for outer in [[false, false], [true, true]] {
        let mut j = join(0, 10, outer);
        let mut out = Collect::default();
        j.on_event(&event(&rows[0], 0).rec(), 0, &mut out);
        j.on_watermark(105, &mut out);
        // Right at 103, behind 105: still meets the left row at 100; it can match no later left
        // row (those would be behind 105 too), so it is not held; having matched, it is not sent
        // to the late output. A right row at 90 meets nothing and cannot be held: late.
        j.on_event(&event(&rows[1], 1).rec(), 105, &mut out);
        // Left at 98, behind 105: held, since a right row up to 108 can still come.
        j.on_event(&event(&rows[2], 2).rec(), 105, &mut out);
        j.on_event(&event(&rows[3], 3).rec(), 105, &mut out);
        let lost: Row = (true, 0, 90);
        j.on_event(&event(&lost, 4).rec(), 105, &mut out);
        j.on_watermark(i64::MAX, &mut out);
        let pair = |l: usize, r: usize| {
            format!(
                r#"{{"k":0,"left":{},"right":{}}}"#,
                record(&rows[l], l),
                record(&rows[r], r)
            )
        };
        let mut want = vec![pair(0, 1), pair(0, 3), pair(2, 3)];
        if outer[1] {
            want.push(format!(
                r#"{{"k":0,"left":null,"right":{}}}"#,
                record(&lost, 4)
            ));
        }
        want.sort();
        assert_eq!(out.sorted(), want, "outer {outer:?}");
        assert_eq!(out.late, [90]);
        let stats = rows_of(&j);
        assert_eq!(stats.late, [1, 2]);
        let mut r = OperatorReport::default();
        j.report(&mut r);
        assert_eq!(r.late_dropped, 1);
    }
}
