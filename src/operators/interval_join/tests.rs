//! The interval join against a nested-loop reference: every (left, right) pair of one key with
//! `lower <= tr - tl <= upper`, plus, in outer kinds, each row that has no such pair; whatever the
//! arrival order within the watermark bound, whole or split by key hash across a snapshot.

use super::*;
use crate::event::hash_key;
use hashbrown::HashMap;
use proptest::prelude::*;

#[derive(Default)]
struct Out {
    records: HashMap<(u16, u64), String>,
    lines: Vec<String>,
    late: usize,
}

impl Emitter for Out {
    fn result(&mut self, line: &[u8]) {
        self.lines.push(String::from_utf8(line.to_vec()).unwrap());
    }
    fn late(&mut self, _e: &Event) {
        self.late += 1;
    }
    fn recall(&mut self, part: u16, pos: u64, _len: u32, out: &mut Vec<u8>) {
        out.extend_from_slice(self.records[&(part, pos)].as_bytes());
    }
}

/// (is right row, key, time)
type Row = (bool, u8, i64);

fn record(r: &Row, i: usize) -> String {
    format!(r#"{{"k":{},"ts":{},"n":{i}}}"#, r.1, r.2)
}

fn event(r: &Row, pos: u64) -> Event {
    let mut e = Event::EMPTY;
    let key = r.1.to_string();
    e.set_key(key.as_bytes());
    e.hash = hash_key(key.as_bytes());
    e.ts = r.2;
    e.part = u16::from(r.0);
    e.pos = pos;
    e
}

fn join(lower: i64, upper: i64, outer: [bool; 2]) -> IntervalJoin {
    IntervalJoin::new(vec!["k".into()], lower, upper, outer, vec![false, true])
}

fn records(rows: &[Row]) -> HashMap<(u16, u64), String> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| ((u16::from(r.0), i as u64), record(r, i)))
        .collect()
}

/// Feeds rows in order with the watermark = max time seen - `ooo`, then ends input.
fn run(rows: &[Row], ooo: i64, j: &mut IntervalJoin) -> Vec<String> {
    let mut out = Out {
        records: records(rows),
        ..Out::default()
    };
    let (mut max, mut wm) = (i64::MIN, i64::MIN);
    for (i, r) in rows.iter().enumerate() {
        if max > i64::MIN && max - ooo > wm {
            wm = max - ooo;
            j.on_watermark(wm, &mut out);
        }
        j.on_event(&event(r, i as u64), wm, &mut out);
        max = max.max(r.2);
    }
    j.on_watermark(i64::MAX, &mut out);
    assert_eq!(out.late, 0, "no row is late within the bound");
    let mut lines = out.lines;
    lines.sort();
    lines
}

fn reference(rows: &[Row], lower: i64, upper: i64, outer: [bool; 2]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut matched = vec![false; rows.len()];
    for (i, l) in rows.iter().enumerate().filter(|(_, r)| !r.0) {
        for (j, r) in rows.iter().enumerate().filter(|(_, r)| r.0) {
            if l.1 == r.1 && lower <= r.2 - l.2 && r.2 - l.2 <= upper {
                lines.push(format!(
                    "{{\"k\":{},\"left\":{},\"right\":{}}}\n",
                    l.1,
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
            lines.push(format!("{{\"k\":{},\"left\":{a},\"right\":{b}}}\n", r.1));
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
        (true, 2, 5_000),   // a click with no impression
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
    let s = j.join_stats().unwrap();
    assert_eq!(s.buffered, [0, 0], "everything cleaned up at the end");
    assert!(j.keys.is_empty(), "and every key forgotten");
    assert!(
        s.peak[0] <= 13 && s.peak[1] <= 13,
        "peak {:?}: rate x bound, not run length",
        s.peak
    );
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
        let feed = |j: &mut IntervalJoin, out: &mut Out, range: std::ops::Range<usize>, wm: &mut i64, keep: &dyn Fn(u64) -> bool| {
            for (i, r) in rows.iter().enumerate().take(range.end).skip(range.start) {
                let e = event(r, i as u64);
                if keep(e.hash) {
                    j.on_event(&e, *wm, out);
                }
                if r.2 - 1 > *wm {
                    *wm = r.2 - 1;
                    j.on_watermark(*wm, out);
                }
            }
        };
        let all = |_: u64| true;
        let mut a = join(-20, 30, outer);
        let mut out_a = Out { records: records(&rows), ..Out::default() };
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
            let mut b = join(-20, 30, outer);
            b.restore(&state.bytes, &keep, wm).unwrap();
            let mut out_b = Out { records: records(&rows), ..Out::default() };
            let mut wm_b = wm;
            feed(&mut b, &mut out_b, cut..rows.len(), &mut wm_b, &keep);
            b.on_watermark(i64::MAX, &mut out_b);
            got.extend(out_b.lines);
        }
        got.sort();
        prop_assert_eq!(got, want);
    }
}
