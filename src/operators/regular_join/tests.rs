//! The regular join against changelogs computed by hand from Flink's `StreamingJoinOperator`
//! rules (inner, left, right and full: input kinds kept by an inner join, NULL-padded rows taken
//! back at a first match and emitted again after the last, duplicates, NULL and long keys,
//! retractions of rows never held) and against a reference model written here: the multisets of
//! rows each input holds, joined from scratch after every change and compared with the
//! materialised output, whole or restored from a snapshot split by key hash over two operators.

use super::plan::RegularJoinPlan;
use super::RegularJoin;
use crate::checkpoint::codec::Enc;
use crate::expr::FieldPath;
use crate::metrics::{JoinStats, OperatorReport};
use crate::operators::testing::{long_token, Collect, Owned};
use crate::operators::{BuildCtx, Operator};
use crate::record::event::{hash_key, RowKind};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

use RowKind::{Delete as D, Insert as I, UpdateAfter as UA, UpdateBefore as UB};

/// The join's first port: events on it are left rows, on the next one right rows.
const FIRST: u16 = 3;
pub(super) const INNER: [bool; 2] = [false, false];
pub(super) const LEFT: [bool; 2] = [true, false];
pub(super) const RIGHT: [bool; 2] = [false, true];
pub(super) const FULL: [bool; 2] = [true, true];
pub(super) const KINDS: [[bool; 2]; 4] = [INNER, LEFT, RIGHT, FULL];

pub(super) type Log = Vec<(RowKind, String)>;
pub(super) type Table = BTreeMap<String, usize>;

fn join(outer: [bool; 2]) -> RegularJoin {
    join_where(outer, None)
}

/// A join on `k`, its pairs also meeting `condition` if any.
pub(super) fn join_where(outer: [bool; 2], condition: Option<&str>) -> RegularJoin {
    let on = vec![FieldPath::parse("k").unwrap()];
    RegularJoin::new(
        &RegularJoinPlan {
            on,
            outer,
            condition: condition.map(str::to_string),
        },
        BuildCtx { first_port: FIRST },
    )
}

/// Row `row` of kind `kind` on `side` (0 left, 1 right) with key token `key`; key `null` is a
/// NULL key (as the binding writes a null key field: flagged, its bytes `null`).
pub(super) fn ev(side: usize, key: &str, row: &str, kind: RowKind) -> Owned {
    let port = FIRST + side as u16;
    let mut o = Owned::new(port, key.as_bytes(), 0, &[], Some(row.as_bytes()));
    if key == N {
        o = o.null_key();
    }
    o.ev.flags |= kind.flags();
    o
}

pub(super) fn feed(j: &mut RegularJoin, evs: &[Owned]) -> Log {
    let mut out = Collect::default();
    for e in evs {
        j.on_event(&e.rec(), i64::MIN, &mut out);
    }
    out.emitted.into_iter().map(|e| (e.kind, e.line)).collect()
}

/// An absent row: the line writes a row's bytes as they are, and an absent one as `null`.
pub(super) const N: &str = "null";

/// An output line: the key token, then both rows.
pub(super) fn line(key: &str, l: &str, r: &str) -> String {
    format!(r#"{{"k":{key},"left":{l},"right":{r}}}"#)
}

/// The outputs (kind, left row, right row) of key `key`.
pub(super) fn out(key: &str, v: &[(RowKind, &str, &str)]) -> Log {
    v.iter()
        .map(|&(kind, l, r)| (kind, line(key, l, r)))
        .collect()
}

/// Applies a changelog to a table: `+I`/`+U` add a copy of the line, `-U`/`-D` take one back,
/// which must be there (the join never retracts what it did not emit).
pub(super) fn materialise(t: &mut Table, log: &Log) {
    for (kind, l) in log {
        if !kind.is_retraction() {
            *t.entry(l.clone()).or_default() += 1;
            continue;
        }
        let n = t
            .get_mut(l)
            .unwrap_or_else(|| panic!("{kind:?} of a line not in the output: {l}"));
        *n -= 1;
        if *n == 0 {
            t.remove(l);
        }
    }
}

/// (keys held, the join's row counts)
pub(super) fn stats(j: &RegularJoin) -> (u64, JoinStats) {
    let mut r = OperatorReport::default();
    j.report(&mut r);
    (r.keys, r.rows.expect("a join reports its rows"))
}

/// A join and its output so far, materialised.
pub(super) struct Run {
    pub(super) j: RegularJoin,
    pub(super) t: Table,
}

impl Run {
    fn new(outer: [bool; 2]) -> Run {
        Run {
            j: join(outer),
            t: Table::new(),
        }
    }

    /// Feeds each event, checks what it emits, in order, and materialises it.
    pub(super) fn steps(&mut self, steps: Vec<(Owned, Log)>) {
        for (i, (e, want)) in steps.into_iter().enumerate() {
            let got = feed(&mut self.j, &[e]);
            assert_eq!(got, want, "step {i}");
            materialise(&mut self.t, &got);
        }
    }
}

/// Rows: `A`, `B` mostly left, `X`, `Y`, `Z` mostly right (rows need not hold their key).
pub(super) const A: &str = r#"{"v":"a"}"#;
pub(super) const B: &str = r#"{"v":"b"}"#;
pub(super) const X: &str = r#"{"r":"x"}"#;
pub(super) const Y: &str = r#"{"r":"y"}"#;
pub(super) const Z: &str = r#"{"r":"z"}"#;

#[test]
fn inner_join_pairs_carry_the_kinds_of_the_change_that_made_them() {
    let mut r = Run::new(INNER);
    r.steps(vec![
        (ev(0, "1", A, I), vec![]),
        (ev(1, "1", X, I), out("1", &[(I, A, X)])),
        (ev(0, "1", A, UB), out("1", &[(UB, A, X)])),
        (ev(0, "1", B, UA), out("1", &[(UA, B, X)])),
        (ev(1, "1", X, UB), out("1", &[(UB, B, X)])),
        (ev(1, "1", X, UA), out("1", &[(UA, B, X)])),
        (ev(1, "1", X, D), out("1", &[(D, B, X)])),
        (ev(0, "1", B, D), vec![]),
    ]);
    assert_eq!(
        (r.t.len(), stats(&r.j).0),
        (0, 0),
        "nothing left, every key forgotten"
    );
}

#[test]
fn left_join_pads_takes_the_padding_back_at_the_first_match_and_restores_it_after_the_last() {
    let mut r = Run::new(LEFT);
    r.steps(vec![
        (ev(1, "2", Z, I), vec![]), // an unmatched right row: the right side is inner
        (ev(0, "1", A, I), out("1", &[(I, A, N)])),
        (ev(1, "1", X, I), out("1", &[(D, A, N), (I, A, X)])),
        (ev(1, "1", Y, I), out("1", &[(I, A, Y)])),
        // A +U on the outer side pairs as +I; the right side is inner: no padding to take back.
        (ev(0, "1", B, UA), out("1", &[(I, B, X), (I, B, Y)])),
        // A retraction on the inner side keeps its kind; the last one restores the padding.
        (ev(1, "1", X, D), out("1", &[(D, A, X), (D, B, X)])),
        (
            ev(1, "1", Y, UB),
            out("1", &[(UB, A, Y), (UB, B, Y), (I, A, N), (I, B, N)]),
        ),
        // A retraction on the outer side is a -D, whatever its kind.
        (ev(0, "1", A, UB), out("1", &[(D, A, N)])),
        (ev(0, "1", B, D), out("1", &[(D, B, N)])),
        (ev(1, "2", Z, D), vec![]),
    ]);
    assert_eq!((r.t.len(), stats(&r.j).0), (0, 0));
}

#[test]
fn right_join_is_the_mirror() {
    let mut r = Run::new(RIGHT);
    r.steps(vec![
        (ev(1, "1", X, I), out("1", &[(I, N, X)])),
        (ev(0, "1", A, I), out("1", &[(D, N, X), (I, A, X)])),
        (ev(0, "1", A, UB), out("1", &[(UB, A, X), (I, N, X)])),
        // The other side is outer: +I, not the input's +U.
        (ev(0, "1", B, UA), out("1", &[(D, N, X), (I, B, X)])),
        (ev(1, "1", X, UB), out("1", &[(D, B, X)])),
        (ev(1, "1", Y, UA), out("1", &[(I, B, Y)])),
        (ev(0, "1", B, D), out("1", &[(D, B, Y), (I, N, Y)])),
    ]);
    assert_eq!(r.t, Table::from([(line("1", N, Y), 1)]));
}

#[test]
fn full_join_emits_and_retracts_every_copy_of_duplicate_rows() {
    let mut r = Run::new(FULL);
    r.steps(vec![
        (ev(0, "2", A, I), out("2", &[(I, A, N)])),
        (ev(0, "2", A, I), out("2", &[(I, A, N)])),
        // The first right row: both padded copies taken back, then a pair per copy.
        (
            ev(1, "2", X, I),
            out("2", &[(D, A, N), (D, A, N), (I, A, X), (I, A, X)]),
        ),
        (ev(1, "2", X, I), out("2", &[(I, A, X), (I, A, X)])),
    ]);
    assert_eq!(r.t, Table::from([(line("2", A, X), 4)]));
    r.steps(vec![
        // One copy of `A` taken back: its pairs with both copies of `X`, which still match.
        (ev(0, "2", A, D), out("2", &[(D, A, X), (D, A, X)])),
        (
            ev(0, "2", A, UB),
            out("2", &[(D, A, X), (D, A, X), (I, N, X), (I, N, X)]),
        ),
        (ev(1, "2", X, UB), out("2", &[(D, N, X)])),
    ]);
    assert_eq!(r.t, Table::from([(line("2", N, X), 1)]));
    assert_eq!(stats(&r.j).1.buffered, [0, 1]);
}

#[test]
fn a_retraction_of_a_row_not_held_is_ignored() {
    for outer in KINDS {
        let pad = |kind| out("3", &[(kind, A, N)][..usize::from(outer[0])]);
        let mut r = Run::new(outer);
        r.steps(vec![
            (ev(0, "3", A, I), pad(I)),
            (ev(0, "9", A, D), vec![]),  // a key never seen
            (ev(0, "3", B, UB), vec![]), // a row the key does not hold
            (ev(1, "3", A, D), vec![]),  // held, but on the other side
            (ev(0, "4", A, D), vec![]),  // held, but under another key
            (ev(0, "3", &format!(" \t{A}\n "), D), pad(D)), // equal once trimmed
            (ev(0, "3", A, D), vec![]),  // already taken back
        ]);
        let (keys, s) = stats(&r.j);
        assert_eq!(
            (keys, s.buffered, s.peak, r.t.len()),
            (0, [0, 0], [1, 0], 0),
            "{outer:?}"
        );
    }
}

#[test]
fn null_keys_never_match_and_are_not_held() {
    for outer in KINDS {
        // What an outer `side` emits, nothing on an inner one.
        let on = |side: usize, key: &str, o: (RowKind, &str, &str)| {
            out(key, &[o][..usize::from(outer[side])])
        };
        let mut r = Run::new(outer);
        r.steps(vec![
            (ev(0, N, A, I), on(0, "null", (I, A, N))),
            (ev(1, N, X, UA), on(1, "null", (I, N, X))),
            (ev(0, "7", B, I), on(0, "7", (I, B, N))),
            (ev(1, N, X, UB), on(1, "null", (D, N, X))),
            (ev(0, N, A, D), on(0, "null", (D, A, N))),
        ]);
        let (keys, s) = stats(&r.j);
        assert_eq!((keys, s.buffered, s.null_keys), (1, [1, 0], 4), "{outer:?}");
    }
}

#[test]
fn long_keys_match_only_when_every_byte_is_equal() {
    let a = long_token("k", 200);
    let b = format!("{}X\"", &a[..198]);
    let mut r = Run::new(FULL);
    r.steps(vec![
        (ev(0, &a, A, I), out(&a, &[(I, A, N)])),
        (ev(1, &b, Y, I), out(&b, &[(I, N, Y)])),
        (ev(1, &a, X, I), out(&a, &[(D, A, N), (I, A, X)])),
        (ev(0, &a, A, D), out(&a, &[(D, A, X), (I, N, X)])),
    ]);
    assert_eq!(stats(&r.j).0, 2);
}

#[test]
fn report_counts_the_rows_held_and_forgets_empty_keys() {
    /// Feeds `evs`, then (keys, rows per side) held.
    fn held(j: &mut RegularJoin, evs: &[Owned]) -> (u64, [u64; 2]) {
        feed(j, evs);
        (stats(j).0, stats(j).1.buffered)
    }
    let mut r = Run::new(LEFT);
    let j = &mut r.j;
    let some = [ev(0, "1", A, I), ev(0, "1", A, I), ev(1, "1", X, I)];
    assert_eq!(held(j, &some), (1, [2, 1]));
    assert_eq!(
        held(j, &[ev(0, "2", B, I), ev(0, N, A, I)]),
        (2, [3, 1]),
        "NULL: not held"
    );
    assert_eq!(held(j, &[ev(0, "1", A, D)]), (2, [2, 1]));
    let unknown = [ev(1, "1", X, UB), ev(0, "1", B, D), ev(1, "2", X, D)];
    assert_eq!(
        held(j, &unknown),
        (2, [2, 0]),
        "retractions of rows not held: nothing"
    );
    assert_eq!(held(j, &[ev(0, "2", B, D)]), (1, [1, 0]));
    assert!(stats(j).1.state_bytes > 0);
    assert_eq!(held(j, &[ev(0, "1", A, UB)]), (0, [0, 0]));
    assert_eq!(stats(j).1.peak, [3, 1]);
    // A forgotten key comes back as a new one.
    r.steps(vec![
        (ev(0, "2", B, I), out("2", &[(I, B, N)])),
        (ev(1, "2", Y, I), out("2", &[(D, B, N), (I, B, Y)])),
    ]);
    assert_eq!(stats(&r.j).0, 1);
}

/// State written by hand in the join's snapshot format: no counters, `keys` times key `1` whose
/// left side holds a row per entry of `copies`, that many copies of it.
fn crafted(copies: &[u64], keys: u64) -> Vec<u8> {
    let mut e = Enc::default();
    (0..4).for_each(|_| e.u64(0)); // fired, refired, late_dropped, unknown retractions
    e.u64(keys);
    for _ in 0..keys {
        e.u64(hash_key(b"1"));
        e.bytes(b"1");
        e.u64(copies.len() as u64);
        for (i, &c) in copies.iter().enumerate() {
            e.u64(c);
            e.bytes(format!(r#"{{"v":{i}}}"#).as_bytes());
        }
        e.u64(0);
    }
    e.bytes
}

/// Whether a fresh join refuses `state`, `None` if it panics.
fn refuses(state: &[u8]) -> Option<bool> {
    std::panic::catch_unwind(|| join(FULL).restore(state, &|_| true, 0).is_err()).ok()
}

#[test]
fn a_truncated_or_corrupt_snapshot_is_refused_without_panicking() {
    let mut j = join(FULL);
    for (side, key, row) in [(0, "1", A), (0, "1", A), (1, "1", X), (1, "2", X)] {
        feed(&mut j, &[ev(side, key, row, I)]);
    }
    let mut e = Enc::default();
    j.snapshot(&mut e);
    for n in 0..e.bytes.len() {
        assert_eq!(refuses(&e.bytes[..n]), Some(true), "cut at {n}");
    }
    let longer = [&e.bytes[..], &[0]].concat();
    assert_eq!(refuses(&longer), Some(true), "a byte after the state");
    let mut whole = join(FULL);
    whole.restore(&e.bytes, &|_| true, 0).unwrap();
    assert_eq!((stats(&whole).0, stats(&whole).1.buffered), (2, [2, 2]));
    // The hand-written format is right where it is valid.
    let mut ok = join(FULL);
    ok.restore(&crafted(&[2, 1], 1), &|_| true, 0).unwrap();
    assert_eq!(stats(&ok).1.buffered, [3, 0]);
    let many_keys = [&crafted(&[], 0)[..32], &u64::MAX.to_le_bytes()].concat();
    for (what, state) in [
        ("a row with no copies", crafted(&[1, 0], 1)),
        ("a key twice", crafted(&[1], 2)),
        ("more keys than the bytes can hold", many_keys),
    ] {
        assert_eq!(refuses(&state), Some(true), "{what}");
    }
}

#[test]
fn a_snapshot_whose_copies_overflow_is_refused_without_panicking() {
    // Two rows of one key and side whose copies add up past u64::MAX: corrupt, as a row count.
    assert_eq!(refuses(&crafted(&[u64::MAX, 1], 1)), Some(true));
}

/// Keys 0 and 1 (numbers), 2 (a 200-byte string) and [`NULL`].
const NULL: u8 = 3;

pub(super) fn token(k: u8) -> String {
    match k {
        0 | 1 => k.to_string(),
        2 => long_token("k2", 200),
        _ => "null".into(),
    }
}

pub(super) fn row(k: u8, v: u8) -> String {
    format!(r#"{{"k":{},"v":{v}}}"#, token(k))
}

/// An input change: side, key, value, kind, and whether its row is padded with whitespace.
#[derive(Clone, Debug)]
pub(super) struct Change(pub(super) usize, u8, u8, RowKind, bool);

impl Change {
    pub(super) fn event(&self) -> Owned {
        let Change(side, k, v, kind, pad) = *self;
        let pad = if pad { " \t" } else { "" };
        ev(side, &token(k), &format!("{pad}{}{pad}", row(k, v)), kind)
    }
}

/// The reference: each input's rows, (key, value) -> copies, NULL keys included.
#[derive(Default)]
pub(super) struct Model {
    held: [BTreeMap<(u8, u8), usize>; 2],
}

impl Model {
    /// An input table takes a change: a retraction of a row it does not hold changes nothing.
    pub(super) fn apply(&mut self, c: &Change) {
        let bag = &mut self.held[c.0];
        if !c.3.is_retraction() {
            *bag.entry((c.1, c.2)).or_default() += 1;
        } else if let Some(n) = bag.get_mut(&(c.1, c.2)) {
            *n -= 1;
            if *n == 0 {
                bag.remove(&(c.1, c.2));
            }
        }
    }

    /// Whether row (k, v) of `side` has a partner: a row of the other side with its key and
    /// (left value, right value) meeting `cond`.
    fn matched(&self, side: usize, (k, v): (u8, u8), cond: &dyn Fn(u8, u8) -> bool) -> bool {
        let pair = |w: u8| if side == 0 { cond(v, w) } else { cond(w, v) };
        k != NULL && self.held[1 - side].keys().any(|&(o, w)| o == k && pair(w))
    }

    fn table(&self, outer: [bool; 2]) -> Table {
        self.table_where(outer, &|_, _| true)
    }

    /// The join's result from scratch: the pairs of equal non-NULL keys whose (left value, right
    /// value) meet `cond`, then, on an outer side, each row without one NULL-padded.
    pub(super) fn table_where(&self, outer: [bool; 2], cond: &dyn Fn(u8, u8) -> bool) -> Table {
        let mut t = Table::new();
        let mut add = |k, l: &str, r: &str, n| *t.entry(line(&token(k), l, r)).or_default() += n;
        for (&(k, v), &n) in &self.held[0] {
            for (&(o, w), &m) in &self.held[1] {
                if k != NULL && k == o && cond(v, w) {
                    add(k, &row(k, v), &row(o, w), n * m);
                }
            }
        }
        for (side, bag) in self.held.iter().enumerate().filter(|&(s, _)| outer[s]) {
            for (&(k, v), &n) in bag.iter().filter(|e| !self.matched(side, *e.0, cond)) {
                let r = row(k, v);
                let [a, b] = if side == 0 { [&*r, N] } else { [N, &*r] };
                add(k, a, b, n);
            }
        }
        t
    }

    /// (keys, rows per side) the join holds: the non-NULL ones.
    pub(super) fn held(&self) -> (u64, [u64; 2]) {
        let keyed = |s: usize| self.held[s].iter().filter(|e| e.0 .0 != NULL);
        let keys: BTreeSet<u8> = (0..2).flat_map(|s| keyed(s).map(|e| e.0 .0)).collect();
        let rows = [0, 1].map(|s| keyed(s).map(|e| *e.1 as u64).sum());
        (keys.len() as u64, rows)
    }
}

/// (right side, key, value, kind, padded, which held row a retraction takes back if any)
pub(super) type Raw = (bool, u8, u8, RowKind, bool, Option<prop::sample::Index>);

pub(super) fn raws() -> impl Strategy<Value = Vec<Raw>> {
    let kind = prop_oneof![3 => Just(I), 3 => Just(UA), 2 => Just(UB), 2 => Just(D)];
    let pick = prop::option::weighted(0.8, any::<prop::sample::Index>());
    let pad = prop::bool::weighted(0.2);
    let raw = (any::<bool>(), 0u8..4, 0u8..3, kind, pad, pick);
    prop::collection::vec(raw, 1..60)
}

/// Input changes from raw draws: most retractions take back a row their side holds, the others
/// name a random row, held or not. NULL-key rows are not held by the join, which cannot tell
/// whether one was inserted: their retractions are kept only where the row is held.
pub(super) fn resolve(raws: &[Raw]) -> Vec<Change> {
    let mut m = Model::default();
    let mut out = Vec::new();
    for &(right, mut k, mut v, kind, pad, pick) in raws {
        let (side, retract) = (usize::from(right), kind.is_retraction());
        let bag = &m.held[side];
        if let Some(i) = pick.filter(|_| retract && !bag.is_empty()) {
            (k, v) = *bag.keys().nth(i.index(bag.len())).unwrap();
        }
        if retract && k == NULL && !bag.contains_key(&(k, v)) {
            continue;
        }
        let c = Change(side, k, v, kind, pad);
        m.apply(&c);
        out.push(c);
    }
    out
}

proptest! {
    #[test]
    fn the_materialised_output_is_the_join_of_the_held_rows_after_every_change(raw in raws()) {
        let changes = resolve(&raw);
        for outer in KINDS {
            let (mut j, mut model, mut t) = (join(outer), Model::default(), Table::new());
            for (i, c) in changes.iter().enumerate() {
                materialise(&mut t, &feed(&mut j, &[c.event()]));
                model.apply(c);
                prop_assert_eq!(&t, &model.table(outer), "{:?} after change {}: {:?}", outer, i, c);
                let (keys, s) = stats(&j);
                prop_assert_eq!((keys, s.buffered), model.held(), "{:?} after change {}", outer, i);
            }
        }
    }

    #[test]
    fn a_snapshot_restored_split_by_key_hash_continues_exactly(
        raw in raws(),
        cut in any::<prop::sample::Index>(),
    ) {
        // Both halves get keys: the tokens' hashes are not all even or all odd.
        let parity: BTreeSet<u64> = (0..=NULL).map(|k| hash_key(token(k).as_bytes()) % 2).collect();
        prop_assert_eq!(parity.len(), 2);
        let changes = resolve(&raw);
        let (before, after) = changes.split_at(cut.index(changes.len() + 1));
        let mut model = Model::default();
        changes.iter().for_each(|c| model.apply(c));
        for outer in KINDS {
            let (mut whole, mut t) = (join(outer), Table::new());
            before.iter().for_each(|c| materialise(&mut t, &feed(&mut whole, &[c.event()])));
            let mut e = Enc::default();
            whole.snapshot(&mut e);
            let mut split = t.clone();
            after.iter().for_each(|c| materialise(&mut t, &feed(&mut whole, &[c.event()])));
            prop_assert_eq!(&t, &model.table(outer));
            let keeps: [fn(u64) -> bool; 2] = [|h| h % 2 == 0, |h| h % 2 != 0];
            let mut halves = [join(outer), join(outer)];
            for (h, keep) in halves.iter_mut().zip(keeps) {
                h.restore(&e.bytes, &keep, i64::MIN).unwrap();
            }
            for c in after {
                let ev = c.event();
                let half = &mut halves[usize::from(!keeps[0](ev.ev.hash))];
                materialise(&mut split, &feed(half, &[ev]));
            }
            prop_assert_eq!(&split, &t, "{:?} cut at {}", outer, before.len());
            let [(k0, s0), (k1, s1)] = [stats(&halves[0]), stats(&halves[1])];
            let (k, s) = stats(&whole);
            prop_assert_eq!((k0 + k1, [0, 1].map(|i| s0.buffered[i] + s1.buffered[i])), (k, s.buffered));
        }
    }
}
