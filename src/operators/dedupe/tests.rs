//! Dedupe against a reference: records decided in event-time order, a key passing when its last
//! passed occurrence is `horizon` or more earlier; whatever the arrival order within the bound,
//! and across a snapshot split by key hash. Records travel in the events' payload and wait by
//! value; some keys are 200 bytes long.

use super::*;
use crate::expr::FieldPath;
use crate::operators::testing::{long_token, Collect, Owned};
use proptest::prelude::*;

/// (id, time); the record's position is its index.
type Row = (u8, i64);

/// The key's JSON token: ids from 4 up are 200 bytes long.
fn key_token(id: u8) -> String {
    if id < 4 {
        format!("\"c-{id}\"")
    } else {
        long_token(&format!("c-{id}"), 200)
    }
}

fn record(r: &Row, i: usize) -> String {
    format!(r#"{{"click_id":{},"ts":{},"n":{i}}}"#, key_token(r.0), r.1)
}

fn event(r: &Row, i: usize) -> Owned {
    Owned::new(
        0,
        key_token(r.0).as_bytes(),
        r.1,
        &[],
        Some(record(r, i).as_bytes()),
    )
}

fn dedupe(horizon: i64) -> Dedupe {
    Dedupe::new(&DedupePlan {
        key: vec![FieldPath::parse("click_id").unwrap()],
        horizon_ms: horizon,
    })
}

fn rows_of(d: &Dedupe) -> JoinStats {
    let mut r = OperatorReport::default();
    d.report(&mut r);
    r.rows.expect("dedupe reports its rows")
}

fn run(rows: &[Row], ooo: i64, horizon: i64) -> (Vec<String>, Dedupe) {
    let mut d = dedupe(horizon);
    let mut out = Collect::default();
    let (mut max, mut wm) = (i64::MIN, i64::MIN);
    for (i, r) in rows.iter().enumerate() {
        if max > i64::MIN && max - ooo > wm {
            wm = max - ooo;
            d.on_watermark(wm, &mut out);
        }
        d.on_event(&event(r, i).rec(), wm, &mut out);
        max = max.max(r.1);
    }
    d.on_watermark(i64::MAX, &mut out);
    (out.sorted(), d)
}

/// In event-time order (then input order), the first of each key passes, then each one at least
/// `horizon` after the last that passed.
fn reference(rows: &[Row], horizon: i64) -> Vec<String> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (rows[i].1, i));
    let mut last: std::collections::HashMap<u8, i64> = Default::default();
    let mut lines = Vec::new();
    for i in order {
        let (id, t) = rows[i];
        if last.get(&id).is_none_or(|&l| t - l >= horizon) {
            last.insert(id, t);
            lines.push(record(&rows[i], i));
        }
    }
    lines.sort();
    lines
}

#[test]
fn duplicates_within_the_horizon_only_are_removed_and_state_is_forgotten() {
    let rows = [
        (1, 1_000),
        (1, 5_000),
        (2, 6_000),
        (1, 600_999),
        (1, 601_000),
        (1, 700_000),
    ];
    let (got, d) = run(&rows, 1_000, 600_000);
    // c-1 at 1 s passes; at 5 s and 600.999 s are within 10 min of it; at 601 s passes (a new
    // horizon); at 700 s is within that one.
    assert_eq!(got, reference(&rows, 600_000));
    assert_eq!(got.len(), 3);
    let s = rows_of(&d);
    assert_eq!(s.cleaned[0], 3, "three duplicates dropped");
    assert_eq!(
        s.buffered,
        [0, 0],
        "nothing waits and no key is remembered at the end"
    );
    assert!(d.keys.is_empty());
    assert_eq!(d.store.bytes().0, 0);
}

#[test]
fn a_null_key_is_never_a_duplicate_and_passes_in_its_turn() {
    let null = |ts: i64, n: u8| {
        let row = format!(r#"{{"ts":{ts},"n":{n}}}"#);
        Owned::new(0, b"null", ts, &[], Some(row.as_bytes())).null_key()
    };
    let mut d = dedupe(1_000);
    let mut out = Collect::default();
    // Out of order, and equal in every byte to each other: all pass, in event-time order, once
    // the watermark passes them (not on arrival).
    for e in [null(30, 1), null(10, 2), null(30, 3), null(20, 4)] {
        d.on_event(&e.rec(), 0, &mut out);
    }
    assert!(out.lines.is_empty());
    let s = rows_of(&d);
    assert_eq!((s.null_keys, s.buffered), (4, [4, 0]));
    d.on_watermark(25, &mut out);
    assert_eq!(out.lines, [r#"{"ts":10,"n":2}"#, r#"{"ts":20,"n":4}"#]);
    d.on_watermark(i64::MAX, &mut out);
    assert_eq!(out.lines[2..], [r#"{"ts":30,"n":1}"#, r#"{"ts":30,"n":3}"#]);
    assert_eq!(rows_of(&d).buffered, [0, 0], "no null key is remembered");
    assert!(out.emitted.iter().all(|e| e.cause.is_none()));
}

#[test]
fn waiting_rows_and_null_keys_round_trip_through_a_snapshot_by_value() {
    let big = format!(r#"{{"blob":"{}"}}"#, "z".repeat(100_000));
    let odd = r#"{"s":"é \"q\" \\ ✓"}"#.to_string();
    let key = long_token("c", 200);
    let mut a = dedupe(100);
    let mut out = Collect::default();
    for e in [
        Owned::new(0, key.as_bytes(), 10, &[], Some(big.as_bytes())),
        Owned::new(0, key.as_bytes(), 20, &[], Some(b"{\"dup\":1}")),
        Owned::new(0, b"null", 15, &[], Some(odd.as_bytes())).null_key(),
        Owned::new(0, b"null", 16, &[], Some(b" {\"n\":2}\t")).null_key(),
    ] {
        a.on_event(&e.rec(), 0, &mut out);
    }
    let mut state = Enc::default();
    a.snapshot(&mut state);
    drop(a);
    let mut b = dedupe(100);
    b.restore(&state.bytes, &|_| true, 0).unwrap();
    b.on_watermark(i64::MAX, &mut out);
    assert_eq!(out.lines, [big, odd, r#"{"n":2}"#.to_string()]);
}

#[test]
fn states_of_two_shards_restored_into_one_forget_in_time_order() {
    let snap = |rows: &[(u8, i64)]| {
        let mut d = dedupe(1_000);
        let mut out = Collect::default();
        for (i, r) in rows.iter().enumerate() {
            d.on_event(&event(r, i).rec(), 0, &mut out);
        }
        d.on_watermark(500, &mut out);
        let mut state = Enc::default();
        d.snapshot(&mut state);
        state.bytes
    };
    let (a, b) = (snap(&[(1, 100), (3, 300)]), snap(&[(2, 200)]));
    let mut d = dedupe(1_000);
    d.restore(&a, &|_| true, 500).unwrap();
    d.restore(&b, &|_| true, 500).unwrap();
    let mut out = Collect::default();
    for (wm, left) in [(1_099, 3), (1_100, 2), (1_200, 1), (1_300, 0)] {
        d.on_watermark(wm, &mut out);
        assert_eq!(rows_of(&d).buffered[1], left, "keys remembered at {wm}");
    }
    assert!(d.keys.is_empty());
    // Each key passes again once forgotten.
    for (i, r) in [(2u8, 1_400i64), (1, 1_401), (3, 1_402)].iter().enumerate() {
        d.on_event(&event(r, i).rec(), 1_300, &mut out);
    }
    d.on_watermark(i64::MAX, &mut out);
    assert_eq!(out.lines.len(), 3);
}

#[test]
fn a_zero_horizon_passes_every_record_and_remembers_nothing() {
    let rows = [(1u8, 10i64), (1, 10), (1, 11)];
    let mut d = dedupe(0);
    let mut out = Collect::default();
    for (i, r) in rows.iter().enumerate() {
        d.on_event(&event(r, i).rec(), 0, &mut out);
    }
    d.on_watermark(10, &mut out);
    assert_eq!(out.lines.len(), 2, "equal times both pass with no horizon");
    let mut state = Enc::default();
    d.snapshot(&mut state);
    let mut e = dedupe(0);
    e.restore(&state.bytes, &|_| true, 10).unwrap();
    e.on_watermark(i64::MAX, &mut out);
    assert_eq!(out.lines.len(), 3);
    assert!(e.keys.is_empty());
}

proptest! {
    #[test]
    fn order_insensitive_within_the_bound_and_equal_to_the_reference(
        raw in proptest::collection::vec((0u8..6, 0i64..500), 1..80),
        jitter in proptest::collection::vec(0i64..50, 80),
        horizon in 0i64..200,
    ) {
        let mut order: Vec<usize> = (0..raw.len()).collect();
        order.sort_by_key(|&i| (raw[i].1 + jitter[i], i));
        let rows: Vec<Row> = order.iter().map(|&i| raw[i]).collect();
        // Equal (id, time) pairs are decided by arrival: keep them distinct here.
        let mut seen = std::collections::HashSet::new();
        let rows: Vec<Row> = rows.into_iter().filter(|r| seen.insert(*r)).collect();
        prop_assert_eq!(run(&rows, 50, horizon).0, reference(&rows, horizon));
    }

    /// Snapshot mid-way, restore (split in two by key hash), continue: the same output. The
    /// records waiting at the cut come back from the snapshot alone, by value.
    #[test]
    fn restored_state_continues_exactly(
        raw in proptest::collection::vec((0u8..6, 0i64..500), 1..60),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut rows = raw;
        rows.sort_by_key(|r| r.1);
        let cut = cut.index(rows.len() + 1);
        let feed = |d: &mut Dedupe, out: &mut Collect, range: std::ops::Range<usize>, wm: &mut i64, keep: &dyn Fn(u64) -> bool| {
            for (i, r) in rows.iter().enumerate().take(range.end).skip(range.start) {
                let e = event(r, i);
                if keep(e.ev.hash) {
                    d.on_event(&e.rec(), *wm, out);
                }
                if r.1 - 1 > *wm {
                    *wm = r.1 - 1;
                    d.on_watermark(*wm, out);
                }
            }
        };
        let all = |_: u64| true;
        let mut a = dedupe(100);
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
        let mut got = Vec::new();
        for parity in [0u64, 1] {
            let keep = move |h: u64| h & 1 == parity;
            let mut b = dedupe(100);
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
