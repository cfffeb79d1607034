//! The regular join with a condition beyond the key equality (`left.v < right.v`), as an outer
//! join's ON evaluates it: a changelog computed by hand from Flink's per-row association rules,
//! and the reference model of `tests` (the rows each input holds, joined from scratch) with the
//! condition on every pair, after every change and across a snapshot restored split by key hash
//! (the match counts are not in the snapshot: a restore recounts them).

use super::tests::{
    ev, feed, join_where, materialise, out, raws, resolve, stats, Model, Run, Table, FULL, KINDS,
    LEFT, N,
};
use crate::checkpoint::codec::Enc;
use crate::operators::Operator;
use crate::record::event::RowKind::{Delete as D, Insert as I, UpdateBefore as UB};
use proptest::prelude::*;

const COND: &str = "left.v < right.v";

fn less(v: u8, w: u8) -> bool {
    v < w
}

fn run(outer: [bool; 2]) -> Run {
    Run {
        j: join_where(outer, Some(COND)),
        t: Table::new(),
    }
}

const L1: &str = r#"{"v":1}"#;
const L5: &str = r#"{"v":5}"#;
const R0: &str = r#"{"v":0}"#;
const R3: &str = r#"{"v":3}"#;

#[test]
fn a_left_row_is_padded_until_a_row_meeting_the_condition_arrives_and_after_it_goes() {
    let mut r = run(LEFT);
    r.steps(vec![
        (ev(0, "1", L1, I), out("1", &[(I, L1, N)])),
        // Same key, but 1 < 0 is false: no match, the padding stays.
        (ev(1, "1", R0, I), vec![]),
        (ev(1, "1", R3, I), out("1", &[(D, L1, N), (I, L1, R3)])),
        // 5 < 0 and 5 < 3 are false: padded although its key has right rows.
        (ev(0, "1", L5, I), out("1", &[(I, L5, N)])),
        // R3 was L1's only partner: the pair goes (its kind, the right side is inner) and the
        // padding comes back; L5 never matched it, so nothing changes for L5.
        (ev(1, "1", R3, D), out("1", &[(D, L1, R3), (I, L1, N)])),
        (ev(0, "1", L1, UB), out("1", &[(D, L1, N)])),
    ]);
    assert_eq!(
        r.t,
        Table::from([(super::tests::line("1", L5, N), 1)]),
        "L5 padded, alone"
    );
}

#[test]
fn a_full_join_pads_each_side_by_its_own_matches() {
    let mut r = run(FULL);
    r.steps(vec![
        (ev(1, "1", R0, I), out("1", &[(I, N, R0)])),
        (ev(0, "1", L1, I), out("1", &[(I, L1, N)])),
        // R3 matches L1 (1 < 3): L1's padding goes; R3 itself had none.
        (ev(1, "1", R3, I), out("1", &[(D, L1, N), (I, L1, R3)])),
        (ev(0, "1", L1, D), out("1", &[(D, L1, R3), (I, N, R3)])),
    ]);
    assert_eq!(stats(&r.j).1.buffered, [0, 2]);
}

proptest! {
    #[test]
    fn the_materialised_output_is_the_conditional_join_after_every_change(raw in raws()) {
        let changes = resolve(&raw);
        for outer in KINDS {
            let (mut j, mut model, mut t) = (join_where(outer, Some(COND)), Model::default(), Table::new());
            for (i, c) in changes.iter().enumerate() {
                materialise(&mut t, &feed(&mut j, &[c.event()]));
                model.apply(c);
                prop_assert_eq!(&t, &model.table_where(outer, &less), "{:?} after change {}: {:?}", outer, i, c);
                prop_assert_eq!((stats(&j).0, stats(&j).1.buffered), model.held());
            }
        }
    }

    #[test]
    fn a_restore_split_by_key_hash_recounts_the_matches(
        raw in raws(),
        cut in any::<prop::sample::Index>(),
    ) {
        let changes = resolve(&raw);
        let (before, after) = changes.split_at(cut.index(changes.len() + 1));
        let mut model = Model::default();
        changes.iter().for_each(|c| model.apply(c));
        for outer in KINDS {
            let mut whole = join_where(outer, Some(COND));
            let mut t = Table::new();
            before.iter().for_each(|c| materialise(&mut t, &feed(&mut whole, &[c.event()])));
            let mut e = Enc::default();
            whole.snapshot(&mut e);
            let keeps: [fn(u64) -> bool; 2] = [|h| h % 2 == 0, |h| h % 2 != 0];
            let mut halves = [join_where(outer, Some(COND)), join_where(outer, Some(COND))];
            for (h, keep) in halves.iter_mut().zip(keeps) {
                h.restore(&e.bytes, &keep, i64::MIN).unwrap();
            }
            for c in after {
                let ev = c.event();
                let half = &mut halves[usize::from(!keeps[0](ev.ev.hash))];
                materialise(&mut t, &feed(half, &[ev]));
            }
            prop_assert_eq!(&t, &model.table_where(outer, &less), "{:?} cut at {}", outer, before.len());
        }
    }
}
