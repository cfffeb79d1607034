//! Dedupe against a reference: records decided in event-time order, a key passing when its last
//! passed occurrence is `horizon` or more earlier; whatever the arrival order within the bound,
//! and across a snapshot split by key hash.

use super::*;
use crate::event::hash_key;
use hashbrown::HashMap;
use proptest::prelude::*;

#[derive(Default)]
struct Out {
    records: HashMap<u64, String>,
    lines: Vec<String>,
}

impl Emitter for Out {
    fn result(&mut self, line: &[u8]) {
        self.lines.push(String::from_utf8(line.to_vec()).unwrap());
    }
    fn late(&mut self, _e: &Event) {}
    fn recall(&mut self, _part: u16, pos: u64, _len: u32, out: &mut Vec<u8>) {
        out.extend_from_slice(self.records[&pos].as_bytes());
    }
}

/// (id, time); the record's position is its index.
type Row = (u8, i64);

fn event(r: &Row, pos: u64) -> Event {
    let mut e = Event::EMPTY;
    let key = format!("\"c-{}\"", r.0);
    e.set_key(key.as_bytes());
    e.hash = hash_key(key.as_bytes());
    e.ts = r.1;
    e.pos = pos;
    e
}

fn record(r: &Row, i: usize) -> String {
    format!(r#"{{"click_id":"c-{}","ts":{},"n":{i}}}"#, r.0, r.1)
}

fn run(rows: &[Row], ooo: i64, horizon: i64) -> (Vec<String>, Dedupe) {
    let mut d = Dedupe::new(horizon);
    let mut out = Out {
        records: rows
            .iter()
            .enumerate()
            .map(|(i, r)| (i as u64, record(r, i)))
            .collect(),
        ..Out::default()
    };
    let (mut max, mut wm) = (i64::MIN, i64::MIN);
    for (i, r) in rows.iter().enumerate() {
        if max > i64::MIN && max - ooo > wm {
            wm = max - ooo;
            d.on_watermark(wm, &mut out);
        }
        d.on_event(&event(r, i as u64), wm, &mut out);
        max = max.max(r.1);
    }
    d.on_watermark(i64::MAX, &mut out);
    let mut lines = out.lines;
    lines.sort();
    (lines, d)
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
            lines.push(record(&rows[i], i) + "\n");
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
    let s = d.join_stats().unwrap();
    assert_eq!(s.cleaned[0], 3, "three duplicates dropped");
    assert_eq!(
        s.buffered,
        [0, 0],
        "nothing waits and no key is remembered at the end"
    );
    assert!(d.keys.is_empty());
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

    #[test]
    fn restored_state_continues_exactly(
        raw in proptest::collection::vec((0u8..6, 0i64..500), 1..60),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut rows = raw;
        rows.sort_by_key(|r| r.1);
        let cut = cut.index(rows.len() + 1);
        let records: HashMap<u64, String> =
            rows.iter().enumerate().map(|(i, r)| (i as u64, record(r, i))).collect();
        let feed = |d: &mut Dedupe, out: &mut Out, range: std::ops::Range<usize>, wm: &mut i64, keep: &dyn Fn(u64) -> bool| {
            for (i, r) in rows.iter().enumerate().take(range.end).skip(range.start) {
                let e = event(r, i as u64);
                if keep(e.hash) {
                    d.on_event(&e, *wm, out);
                }
                if r.1 - 1 > *wm {
                    *wm = r.1 - 1;
                    d.on_watermark(*wm, out);
                }
            }
        };
        let all = |_: u64| true;
        let mut a = Dedupe::new(100);
        let mut out_a = Out { records: records.clone(), ..Out::default() };
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
            let mut b = Dedupe::new(100);
            b.restore(&state.bytes, &keep, wm).unwrap();
            let mut out_b = Out { records: records.clone(), ..Out::default() };
            let mut wm_b = wm;
            feed(&mut b, &mut out_b, cut..rows.len(), &mut wm_b, &keep);
            b.on_watermark(i64::MAX, &mut out_b);
            got.extend(out_b.lines);
        }
        got.sort();
        prop_assert_eq!(got, want);
    }
}
