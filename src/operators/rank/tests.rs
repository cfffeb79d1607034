//! The Top-N over a whole stream (`Rank`) against changelogs computed by hand (a new best row
//! shifting ranks, output with and without a rank field, keep-last deduplication, ties on the
//! row's bytes, NULL order values, retractions of rows not held, a retraction lifting a row into
//! the top n) and against a reference model written here: each partition's multiset of input
//! rows, sorted by its own comparison and cut at n, checked against the operator's materialised
//! changelog after every event. Also a snapshot restored split over two operators, corrupt
//! snapshots, and the rows and keys `report()` counts.

use super::plan::RankPlan;
use super::Rank;
use crate::checkpoint::codec::Enc;
use crate::expr::FieldPath;
use crate::metrics::OperatorReport;
use crate::operators::testing::{Collect, Owned};
use crate::operators::Operator;
use crate::record::event::RowKind;
use proptest::prelude::*;
use std::collections::BTreeMap;

use RowKind::{Delete as D, Insert as I, UpdateAfter as UA, UpdateBefore as UB};

/// Partitioned by `id`, ordered by `field` (descending when `desc`).
fn op(field: &str, desc: bool, n: usize, rank: bool, keep_all: bool) -> Rank {
    Rank::new(&RankPlan {
        key: vec![FieldPath::parse("id").unwrap()],
        order: vec![(FieldPath::parse(field).unwrap(), desc)],
        n,
        rank_field: rank.then(|| "rn".to_string()),
        keep_all,
        later_first: false,
    })
}

/// Top `n` by `price desc`.
fn by_price(n: usize, rank: bool, keep_all: bool) -> Rank {
    op("price", true, n, rank, keep_all)
}

/// An event carrying `row` (whose `id` is `"<id>"`, the partition key token) as a change `kind`.
fn ev(row: &str, kind: RowKind) -> Owned {
    let id = row.split('"').nth(3).expect("a row starts with its id");
    let mut o = Owned::new(
        0,
        format!("\"{id}\"").as_bytes(),
        1,
        &[],
        Some(row.as_bytes()),
    );
    o.ev.flags |= kind.flags();
    o
}

fn feed(r: &mut Rank, input: &[Owned]) -> Vec<(RowKind, String)> {
    let mut out = Collect::default();
    for e in input {
        r.on_event(&e.rec(), i64::MIN, &mut out);
    }
    out.emitted
        .iter()
        .map(|e| (e.kind, e.line.clone()))
        .collect()
}

/// Feeds rows with their kinds.
fn run(r: &mut Rank, input: &[(RowKind, &str)]) -> Vec<(RowKind, String)> {
    feed(
        r,
        &input.iter().map(|(k, row)| ev(row, *k)).collect::<Vec<_>>(),
    )
}

fn log(v: &[(RowKind, &str)]) -> Vec<(RowKind, String)> {
    v.iter().map(|(k, l)| (*k, l.to_string())).collect()
}

/// `{"id":"<id>","price":<p>}` (`p` written as given, e.g. `null`).
fn pr(id: &str, p: &str) -> String {
    format!("{{\"id\":\"{id}\",\"price\":{p}}}")
}

/// The same row with `"rn":<rank>` at its end.
fn ranked(row: &str, rank: usize) -> String {
    format!("{},\"rn\":{rank}}}", &row[..row.len() - 1])
}

fn rows_held(r: &Rank) -> (u64, u64) {
    let mut rep = OperatorReport::default();
    r.report(&mut rep);
    (
        rep.rows.expect("rank reports its rows").buffered[0],
        rep.keys,
    )
}

/// Applies a changelog to `table` (+I/+U add a copy of the line, -U/-D take one back); a `-U`
/// must be followed at once by its `+U`.
fn materialise(table: &mut BTreeMap<String, u64>, log: &[(RowKind, String)]) {
    for (i, (kind, line)) in log.iter().enumerate() {
        if *kind == UB {
            assert_eq!(
                log.get(i + 1).map(|e| e.0),
                Some(UA),
                "-U without +U in {log:?}"
            );
        }
        if kind.is_retraction() {
            let c = table
                .get_mut(line)
                .unwrap_or_else(|| panic!("{line} taken back, not held"));
            *c -= 1;
            if *c == 0 {
                table.remove(line);
            }
        } else {
            *table.entry(line.clone()).or_default() += 1;
        }
    }
}

/// Inserts of p1's 5, 3, 9 (a new best), 4 (not in the top 2), 7, and p2's 1 after 3.
fn price_input(r: &mut Rank) -> Vec<(RowKind, String)> {
    let rows = [
        ("p1", "5"),
        ("p1", "3"),
        ("p2", "1"),
        ("p1", "9"),
        ("p1", "4"),
        ("p1", "7"),
    ];
    let rows = rows.map(|(id, p)| pr(id, p));
    run(r, &rows.each_ref().map(|x| (I, x.as_str())))
}

#[test]
fn a_new_best_row_shifts_every_rank_below_it() {
    let got = price_input(&mut by_price(2, true, false));
    let r = |x: &str, rank| ranked(&pr("p1", x), rank);
    #[rustfmt::skip]
    let want = [
        (I, r("5", 1)), (I, r("3", 2)), (I, ranked(&pr("p2", "1"), 1)),
        // 9 takes rank 1 from 5, which takes rank 2 from 3.
        (UB, r("5", 1)), (UA, r("9", 1)), (UB, r("3", 2)), (UA, r("5", 2)),
        // 4 is below 9 and 5: nothing. 7 takes rank 2 from 5.
        (UB, r("5", 2)), (UA, r("7", 2)),
    ];
    assert_eq!(got, want);
}

#[test]
fn without_a_rank_field_the_entering_row_replaces_the_leaving_one() {
    let got = price_input(&mut by_price(2, false, false));
    let p = |x: &str| pr("p1", x);
    #[rustfmt::skip]
    let want = [(I, p("5")), (I, p("3")), (I, pr("p2", "1")), (UB, p("3")), (UA, p("9")), (UB, p("5")), (UA, p("7"))];
    assert_eq!(got, want);
}

#[test]
fn keep_last_dedupe_ignores_an_older_row_arriving_later() {
    let row = |id: &str, ts: i64, v: &str| format!("{{\"id\":\"{id}\",\"ts\":{ts},\"v\":\"{v}\"}}");
    let (a1, a3, a2) = (row("a", 1, "x"), row("a", 3, "y"), row("a", 2, "z"));
    let (b5, b4, b7, c0) = (
        row("b", 5, "x"),
        row("b", 4, "y"),
        row("b", 7, "z"),
        row("c", 0, "x"),
    );
    let mut r = op("ts", true, 1, false, false);
    // a at 2 after a at 3 and b at 4 after b at 5 are older: nothing; a3 again: nothing.
    let input = [&a1, &b5, &a3, &a2, &b4, &c0, &b7, &a3].map(|x| (I, x.as_str()));
    #[rustfmt::skip]
    let want = log(&[(I, &a1), (I, &b5), (UB, &a1), (UA, &a3), (I, &c0), (UB, &b5), (UA, &b7)]);
    assert_eq!(run(&mut r, &input), want);
    assert_eq!(rows_held(&r), (3, 3), "one row kept per key");
}

#[test]
fn ties_on_the_order_field_are_broken_by_the_row_bytes() {
    let row = |x: &str| format!("{{\"id\":\"p1\",\"price\":5,\"x\":\"{x}\"}}");
    let (a, b, c) = (row("a"), row("b"), row("c"));
    let got = run(&mut by_price(2, true, false), &[(I, &b), (I, &a), (I, &c)]);
    // "a" sorts before "b": it takes rank 1 and pushes "b" to rank 2; "c" comes after both.
    #[rustfmt::skip]
    let want = log(&[(I, &ranked(&b, 1)), (UB, &ranked(&b, 1)), (UA, &ranked(&a, 1)), (I, &ranked(&b, 2))]);
    assert_eq!(got, want);
}

#[test]
fn null_and_missing_order_values_rank_below_every_value() {
    let (null, neg, missing) = (pr("p1", "null"), pr("p1", "-3"), "{\"id\":\"p1\"}");
    let mut r = by_price(2, true, false);
    let got = run(&mut r, &[(I, &null), (I, missing), (I, &neg)]);
    // Both NULL: `{"id":"p1","price":null}` sorts before `{"id":"p1"}` (',' < '}'), and -3
    // is above both.
    #[rustfmt::skip]
    let want = log(&[
        (I, &ranked(&null, 1)), (I, &ranked(missing, 2)),
        (UB, &ranked(&null, 1)), (UA, &ranked(&neg, 1)),
        (UB, &ranked(missing, 2)), (UA, &ranked(&null, 2)),
    ]);
    assert_eq!(got, want);
}

#[test]
fn a_retraction_of_a_row_not_held_is_ignored() {
    let (p5, p6, q1) = (pr("p1", "5"), pr("p1", "6"), pr("p9", "1"));
    let mut r = by_price(2, true, true);
    // 6 is not held, p9 never seen, 5 is taken back twice but held once.
    let input = [(I, &p5), (D, &p6), (UB, &q1), (UB, &p5), (D, &p5)];
    let got = run(&mut r, &input.map(|(k, x)| (k, x.as_str())));
    assert_eq!(got, log(&[(I, &ranked(&p5, 1)), (D, &ranked(&p5, 1))]));
    assert_eq!(rows_held(&r), (0, 0));
}

#[test]
fn retracting_the_top_row_lifts_the_third_into_the_top_two() {
    let (p9, p7, p5) = (pr("p1", "9"), pr("p1", "7"), pr("p1", "5"));
    let input = [(I, &p9), (I, &p7), (I, &p5), (UB, &p9), (D, &p7)].map(|(k, x)| (k, x.as_str()));
    let got = run(&mut by_price(2, true, true), &input);
    let r = ranked;
    #[rustfmt::skip]
    let want = log(&[
        (I, &r(&p9, 1)), (I, &r(&p7, 2)), // 5 third: nothing
        (UB, &r(&p9, 1)), (UA, &r(&p7, 1)), (UB, &r(&p7, 2)), (UA, &r(&p5, 2)), // 9 taken back
        (UB, &r(&p7, 1)), (UA, &r(&p5, 1)), (D, &r(&p5, 2)), // 7 taken back
    ]);
    assert_eq!(got, want);
    let want = log(&[(I, &p9), (I, &p7), (UB, &p9), (UA, &p5), (D, &p7)]);
    assert_eq!(run(&mut by_price(2, false, true), &input), want);
}

#[test]
fn report_counts_the_rows_held_and_forgets_emptied_partitions() {
    let mut r = by_price(2, false, true);
    let (a5, a3, b1) = (pr("a", "5"), pr("a", "3"), pr("b", "1"));
    run(&mut r, &[(I, &a5), (I, &a5), (I, &a3), (I, &b1)]);
    assert_eq!(rows_held(&r), (4, 2), "every copy held");
    run(&mut r, &[(D, &a5), (UB, &a3), (D, &a3)]);
    assert_eq!(rows_held(&r), (2, 2));
    run(&mut r, &[(D, &b1)]);
    assert_eq!(rows_held(&r), (1, 1), "b emptied: forgotten");
    run(&mut r, &[(D, &a5)]);
    assert_eq!(rows_held(&r), (0, 0));
    // A key forgotten comes back as a new partition.
    assert_eq!(run(&mut r, &[(I, &a3)]), log(&[(I, &a3)]));
    assert_eq!(rows_held(&r), (1, 1));
    // Over an append-only input only the top n are kept.
    let mut r = by_price(2, false, false);
    let rows = [0, 1, 2, 3, 4].map(|p| pr("a", &p.to_string()));
    run(&mut r, &rows.each_ref().map(|x| (I, x.as_str())));
    assert_eq!(rows_held(&r), (2, 1));
}

/// A random change: partition `key`, row `price` (0: missing, 1: NULL, else `price - 4`) and
/// `tag`, and `act` (what to do, see `apply`).
type Change = (u8, u8, u8, u8);

fn changes(len: usize) -> impl Strategy<Value = Vec<Change>> {
    prop::collection::vec((0u8..3, 0u8..7, 0u8..2, 0u8..10), 0..len)
}

/// The row and its order value as the model reads it (NULL or missing: `None`).
fn model_row(key: u8, price: u8, tag: u8) -> (Option<i64>, String) {
    let v = (price > 1).then(|| i64::from(price) - 4);
    let p = match (price, v) {
        (0, _) => String::new(),
        (_, None) => ",\"price\":null".to_string(),
        (_, Some(v)) => format!(",\"price\":{v}"),
    };
    (v, format!("{{\"id\":\"p{key}\"{p},\"n\":{tag}}}"))
}

/// Each partition's input rows, copies counted.
#[derive(Default)]
struct Model {
    parts: BTreeMap<u8, Vec<(Option<i64>, String)>>,
}

impl Model {
    /// The event for change `c`, applying it to the model: `act` < 6 (or any, inserts only)
    /// inserts; 6..9 retracts a row held where there is one; 9 retracts the row drawn.
    fn apply(&mut self, c: Change, inserts_only: bool) -> Owned {
        let (key, price, tag, act) = c;
        let mut row = model_row(key, price, tag);
        let part = self.parts.entry(key).or_default();
        let kind = if inserts_only || act < 6 {
            part.push(row.clone());
            [I, UA][usize::from(tag)]
        } else {
            if act < 9 && !part.is_empty() {
                row = part[usize::from(price * 2 + tag) % part.len()].clone();
            }
            if let Some(i) = part.iter().position(|r| *r == row) {
                part.remove(i);
            }
            [D, UB][usize::from(tag)]
        };
        ev(&row.1, kind)
    }

    /// The output table expected: each partition's top `n` by the order value (NULL lowest),
    /// then the row's bytes; with a rank field each line carries its rank.
    fn table(&self, n: usize, desc: bool, rank: bool) -> BTreeMap<String, u64> {
        let mut t = BTreeMap::new();
        for rows in self.parts.values() {
            let mut v = rows.clone();
            v.sort_by(|a, b| {
                let o = if desc { b.0.cmp(&a.0) } else { a.0.cmp(&b.0) };
                o.then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
            });
            for (j, (_, row)) in v.iter().take(n).enumerate() {
                let line = if rank {
                    ranked(row, j + 1)
                } else {
                    row.clone()
                };
                *t.entry(line).or_default() += 1;
            }
        }
        t
    }

    /// Rows the operator holds (all, or each partition's top `n`) and partitions with rows.
    fn held(&self, n: usize, keep_all: bool) -> (u64, u64) {
        let parts = self.parts.values().filter(|p| !p.is_empty());
        let rows = parts
            .clone()
            .map(|p| if keep_all { p.len() } else { p.len().min(n) });
        (rows.sum::<usize>() as u64, parts.count() as u64)
    }
}

/// An uninterrupted run's changelog, event by event.
fn run_all(r: &mut Rank, input: &[Owned]) -> Vec<Vec<(RowKind, String)>> {
    input
        .iter()
        .map(|e| feed(r, std::slice::from_ref(e)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_materialised_output_is_the_models_top_n_after_every_event(
        input in changes(60), n in 1usize..=3, rank: bool, keep_all: bool, desc: bool
    ) {
        let mut r = op("price", desc, n, rank, keep_all);
        let mut model = Model::default();
        let mut table = BTreeMap::new();
        for (i, c) in input.into_iter().enumerate() {
            let e = model.apply(c, !keep_all);
            let log = feed(&mut r, std::slice::from_ref(&e));
            materialise(&mut table, &log);
            prop_assert_eq!(&table, &model.table(n, desc, rank), "after event {} {:?}", i, c);
            prop_assert_eq!(rows_held(&r), model.held(n, keep_all), "held after event {}", i);
        }
    }

    #[test]
    fn a_snapshot_restored_split_over_two_operators_continues_exactly(
        before in changes(40), after in changes(40), n in 1usize..=3, rank: bool, keep_all: bool
    ) {
        let mut model = Model::default();
        let before: Vec<Owned> = before.into_iter().map(|c| model.apply(c, !keep_all)).collect();
        let after: Vec<Owned> = after.into_iter().map(|c| model.apply(c, !keep_all)).collect();
        let mut whole = by_price(n, rank, keep_all);
        let mut table = BTreeMap::new();
        materialise(&mut table, &feed(&mut whole, &before));
        let mut e = Enc::default();
        whole.snapshot(&mut e);
        let mut halves = [by_price(n, rank, keep_all), by_price(n, rank, keep_all)];
        halves[0].restore(&e.bytes, &|h| h % 2 == 0, i64::MIN).unwrap();
        halves[1].restore(&e.bytes, &|h| h % 2 != 0, i64::MIN).unwrap();
        let (h0, h1, w) = (rows_held(&halves[0]), rows_held(&halves[1]), rows_held(&whole));
        prop_assert_eq!((h0.0 + h1.0, h0.1 + h1.1), w, "rows and keys shared out");
        let mut split_table = table.clone();
        let mut split = Vec::new();
        for ev in &after {
            let log = feed(&mut halves[(ev.ev.hash % 2) as usize], std::slice::from_ref(ev));
            materialise(&mut split_table, &log);
            split.push(log);
        }
        let whole_logs = run_all(&mut whole, &after);
        for log in &whole_logs {
            materialise(&mut table, log);
        }
        prop_assert_eq!(&split_table, &table);
        prop_assert_eq!(split, whole_logs);
    }
}

/// Whether a fresh operator restores `state` (keeping every key).
fn restores(state: &[u8]) -> bool {
    by_price(2, true, true)
        .restore(state, &|_| true, i64::MIN)
        .is_ok()
}

#[test]
fn a_truncated_or_corrupt_snapshot_is_refused() {
    let mut e = Enc::default();
    by_price(2, true, true).snapshot(&mut e);
    let header = e.bytes.len(); // counters, unknown retractions, partition count
    let mut r = by_price(2, true, true);
    let (a5, a3) = (pr("a", "5"), pr("a", "3"));
    run(&mut r, &[(I, &a5), (I, &a5), (I, &a3)]);
    let mut e = Enc::default();
    r.snapshot(&mut e);
    let good = e.bytes;
    assert!(restores(&good));
    for len in 0..good.len() {
        assert!(!restores(&good[..len]), "cut at {len}");
    }
    assert!(
        !restores(&[&good[..], &[0]].concat()),
        "a byte after the state"
    );
    // Partition a: hash (8), key length (8) and key, row count (8), then its first row's copies.
    let (key_len, copies) = (header + 8, header + 8 + 8 + 3 + 8);
    assert_eq!(
        good[copies..copies + 8],
        2u64.to_le_bytes(),
        "a5 held twice, first"
    );
    // Huge partition count, key length and row count; no copies.
    let bad = [
        (header - 1, 0x40),
        (key_len + 7, 0x80),
        (key_len + 11 + 7, 0x10),
        (copies, 0),
    ];
    for (at, v) in bad {
        let mut bad = good.clone();
        bad[at] = v;
        assert!(!restores(&bad), "byte {at} set to {v}");
    }
    let part = &good[header..];
    let twice = [&good[..header - 8], &2u64.to_le_bytes(), part, part].concat();
    assert!(!restores(&twice), "the same partition twice");
    // Any byte flipped: an answer, not a panic (a flipped row byte may still be a valid state).
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0xFF;
        let _ = restores(&bad);
    }
}

/// Rows equal on the order field of an append-only input rank by source position, not by their
/// bytes: the earlier first (Flink's Top-N, arrival order), or for keep-last deduplication the
/// later (Flink's last arrival replaces); whatever order they arrive in.
#[test]
fn ties_of_an_append_only_input_rank_by_source_position() {
    // (row, position): equal times, the bytes in the opposite order of the positions.
    let rows = [
        (r#"{"id":1,"t":5,"v":"b"}"#, 10u64),
        (r#"{"id":1,"t":5,"v":"a"}"#, 20),
    ];
    for (later_first, want) in [(false, "b"), (true, "a")] {
        for arrival in [[0, 1], [1, 0]] {
            let mut r = Rank::new(&RankPlan {
                key: vec![FieldPath::parse("id").unwrap()],
                order: vec![(FieldPath::parse("t").unwrap(), true)],
                n: 1,
                rank_field: None,
                keep_all: false,
                later_first,
            });
            let mut out = Collect::default();
            for i in arrival {
                let mut e = Owned::new(0, b"1", 0, &[], Some(rows[i].0.as_bytes()));
                e.ev.pos = rows[i].1;
                r.on_event(&e.rec(), 0, &mut out);
            }
            let mut table = std::collections::BTreeMap::<String, i64>::new();
            for e in &out.emitted {
                *table.entry(e.line.clone()).or_default() += if e.retract { -1 } else { 1 };
            }
            let kept: Vec<&String> = table
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(l, _)| l)
                .collect();
            let want_line = format!(r#"{{"id":1,"t":5,"v":"{want}"}}"#);
            assert_eq!(
                kept,
                [&want_line],
                "later_first {later_first}, arrival {arrival:?}"
            );
        }
    }
}
