//! Phase one of the group aggregate against the aggregate fed one event at a time: any split of
//! the stream into hand-offs and any set of hot keys must materialise to the same table (the
//! changelog may only get shorter), plus a hand-computed partial.

use super::GroupCombiner;
use crate::expr::FieldPath;
use crate::operators::group_agg::plan::GroupAggPlan;
use crate::operators::group_agg::GroupAggregate;
use crate::operators::testing::Collect;
use crate::operators::{Combine, Operator};
use crate::plan::{AggFunc, AggPlan, HotKeysPlan};
use crate::record::event::{hash_key, slot_bytes, Event, PayloadBuf, Rec, RowKind, Tag, Value};
use crate::time::WM_MIN;
use proptest::prelude::*;
use std::collections::BTreeMap;

fn plan() -> GroupAggPlan {
    let agg = |name: &str, func, field: Option<(&str, usize)>| AggPlan {
        name: name.into(),
        func,
        field: field.map(|(f, _)| FieldPath::parse(f).unwrap()),
        slot: field.map(|(_, s)| s),
    };
    GroupAggPlan {
        group_by: vec![FieldPath::parse("k").unwrap()],
        aggregates: vec![
            agg("n", AggFunc::Count, None),
            agg("s", AggFunc::Sum, Some(("v", 0))),
            agg("lo", AggFunc::Min, Some(("v", 0))),
            agg("hi", AggFunc::Max, Some(("v", 0))),
            agg("a", AggFunc::Avg, Some(("v", 0))),
            agg("u", AggFunc::CountDistinct, Some(("u", 1))),
        ],
        values: Vec::new(),
        retracts: false,
        hot_keys: HotKeysPlan::OFF,
    }
}

/// An event of key `"k<key>"` with value `v` and distinct value `u`.
fn ev(key: u8, v: i64, u: u64, ts: i64) -> Event {
    let mut e = Event::EMPTY;
    let k = format!("\"k{key}\"");
    assert!(e.set_key(k.as_bytes()));
    e.hash = hash_key(k.as_bytes());
    e.ts = ts;
    e.set_value(0, Value::Int(v));
    e.set_value(1, Value::Hash(hash_key(&u.to_le_bytes())));
    e
}

/// A `PARTIAL` message read back from ring slots, as the owner receives it.
fn through_ring(head: &Event, payload: &PayloadBuf) -> (Event, Vec<u8>) {
    assert_eq!(head.tag, Tag::PARTIAL);
    let slots: Vec<Event> = payload.slots().collect();
    (*head, slot_bytes(&slots).to_vec())
}

/// Applies a changelog to a multiset of rows; a retraction must find its row.
fn materialise(out: &Collect) -> BTreeMap<String, i64> {
    let mut rows = BTreeMap::new();
    for e in &out.emitted {
        let n = rows.entry(e.line.clone()).or_insert(0i64);
        match e.kind {
            RowKind::Insert | RowKind::UpdateAfter => *n += 1,
            RowKind::UpdateBefore | RowKind::Delete => {
                *n -= 1;
                assert!(*n >= 0, "a retraction of a row not there: {}", e.line);
            }
        }
    }
    rows.retain(|_, n| *n != 0);
    rows
}

/// Runs `events` as the runtime does with phase one on: a hot key's events are held and folded,
/// the others go to the owner at once; at each hand-off (after the events `ends` names) the
/// partials go first, then the held events no partial took, in their order.
fn two_phase(events: &[Event], hot: &[u8], ends: &[usize]) -> (Collect, u64) {
    let p = plan();
    let mut owner = GroupAggregate::new(&p);
    let mut c = GroupCombiner::new(&p);
    let mut out = Collect::default();
    let mut held = Vec::new();
    let mut combined = 0;
    for (i, e) in events.iter().enumerate() {
        let key = e.key[2] - b'0';
        if hot.contains(&key) {
            let (_, row, _) = c.add(e);
            held.push((*e, row));
        } else {
            owner.on_event(&Rec::of(e), WM_MIN, &mut out);
        }
        if ends.contains(&i) || i + 1 == events.len() {
            let mut msgs = Vec::new();
            combined += c.hand_off(WM_MIN, &Event::EMPTY, usize::MAX, &mut |h, pl| {
                msgs.push(through_ring(h, pl))
            });
            for (head, payload) in &msgs {
                let rec = Rec::parse(head, payload).unwrap();
                owner.on_partial(&rec, WM_MIN, &mut out).unwrap();
            }
            for (e, row) in held.drain(..) {
                if !c.combined(0, row) {
                    owner.on_event(&Rec::of(&e), WM_MIN, &mut out);
                }
            }
            c.clear();
        }
    }
    (out, combined)
}

fn one_by_one(events: &[Event]) -> Collect {
    let mut owner = GroupAggregate::new(&plan());
    let mut out = Collect::default();
    for e in events {
        owner.on_event(&Rec::of(e), WM_MIN, &mut out);
    }
    out
}

#[test]
fn a_hot_groups_events_become_one_update_with_their_sum() {
    // Key 1: 40 events, values 1..=40 (sum 820, 10 distinct u); key 2: one event.
    let mut events: Vec<Event> = (1..=40).map(|i| ev(1, i, i as u64 % 10, i)).collect();
    events.push(ev(2, -5, 0, 41));
    let (out, combined) = two_phase(&events, &[1], &[]);
    assert_eq!(combined, 40);
    let lines: Vec<(RowKind, &str)> = (out.emitted.iter())
        .map(|e| (e.kind, e.line.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (
                RowKind::Insert,
                r#"{"k":"k2","n":1,"s":-5,"lo":-5,"hi":-5,"a":-5.0,"u":1}"#
            ),
            (
                RowKind::Insert,
                r#"{"k":"k1","n":40,"s":820,"lo":1,"hi":40,"a":20.5,"u":10}"#
            ),
        ]
    );
    // The partial carries its latest event's time.
    assert_eq!(out.emitted[1].ts, 40);
    // A second hand-off of the same key updates the row once.
    let more: Vec<Event> = (41..=60).map(|i| ev(1, 1, 99, i)).collect();
    let all: Vec<Event> = events.iter().chain(&more).copied().collect();
    let (out, _) = two_phase(&all, &[1], &[40]);
    let last: Vec<(RowKind, &str)> = (out.emitted[2..].iter())
        .map(|e| (e.kind, e.line.as_str()))
        .collect();
    assert_eq!(
        last,
        [
            (
                RowKind::UpdateBefore,
                r#"{"k":"k1","n":40,"s":820,"lo":1,"hi":40,"a":20.5,"u":10}"#
            ),
            (
                RowKind::UpdateAfter,
                r#"{"k":"k1","n":60,"s":840,"lo":1,"hi":40,"a":14.0,"u":11}"#
            ),
        ]
    );
}

#[test]
fn a_group_with_few_events_goes_on_raw() {
    // Two events take fewer ring slots raw than their partial: sent as they are.
    let events = [ev(3, 1, 1, 1), ev(3, 2, 2, 2)];
    let (out, combined) = two_phase(&events, &[3], &[]);
    assert_eq!(combined, 0);
    assert_eq!(out.emitted.len(), 3, "+I, then -U/+U: {:?}", out.lines);
    assert_eq!(materialise(&out), materialise(&one_by_one(&events)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any hot set and any hand-off points: the same table as one by one, never a longer
    /// changelog.
    #[test]
    fn combining_never_changes_the_materialised_table(
        raw in prop::collection::vec((0u8..6, -50i64..50, 0u64..20), 1..400),
        hot in prop::collection::vec(0u8..6, 0..4),
        ends in prop::collection::vec(0usize..400, 0..6),
    ) {
        // Key 0 is most of the stream, as a celebrity's.
        let events: Vec<Event> = raw.iter().enumerate().map(|(i, &(k, v, u))| {
            let key = if i % 3 == 0 { k } else { 0 };
            ev(key, v, u, i as i64)
        }).collect();
        let direct = one_by_one(&events);
        let (combined, _) = two_phase(&events, &hot, &ends);
        prop_assert_eq!(materialise(&combined), materialise(&direct));
        prop_assert!(combined.emitted.len() <= direct.emitted.len());
    }
}

/// Records with wide values (more than an event header holds) and a long key are folded from
/// their payload (`add_rec`): one partial, the same table as one by one.
#[test]
fn wide_records_and_long_keys_combine_from_their_payload() {
    use crate::operators::testing::Owned;
    let field = |f: &str, s: usize| AggPlan {
        name: f.into(),
        func: AggFunc::Sum,
        field: Some(FieldPath::parse(f).unwrap()),
        slot: Some(s),
    };
    let p = GroupAggPlan {
        group_by: vec![FieldPath::parse("k").unwrap()],
        aggregates: (0..6).map(|s| field(&format!("v{s}"), s)).collect(),
        values: Vec::new(),
        retracts: false,
        hot_keys: HotKeysPlan::OFF,
    };
    let long = format!("\"{}\"", "x".repeat(60));
    let records: Vec<Owned> = (0..50i64)
        .map(|i| {
            let key = if i % 5 == 0 {
                "\"short\""
            } else {
                long.as_str()
            };
            let values: Vec<Value> = (0..6).map(|s| Value::Int(i * 10 + s)).collect();
            Owned::new(0, key.as_bytes(), i, &values, None)
        })
        .collect();
    assert!(records.iter().all(|r| r.ev.has_payload()));
    let mut direct = GroupAggregate::new(&p);
    let mut want = Collect::default();
    for r in &records {
        direct.on_event(&r.rec(), WM_MIN, &mut want);
    }
    let mut c = GroupCombiner::new(&p);
    let rows: Vec<u32> = (records.iter())
        .map(|r| c.add_rec(&r.rec()).expect("folds wide records").1)
        .collect();
    let mut msgs = Vec::new();
    let combined = c.hand_off(WM_MIN, &Event::EMPTY, usize::MAX, &mut |h, pl| {
        msgs.push(through_ring(h, pl))
    });
    let (mut owner, mut got) = (GroupAggregate::new(&p), Collect::default());
    for (head, payload) in &msgs {
        owner
            .on_partial(&Rec::parse(head, payload).unwrap(), WM_MIN, &mut got)
            .unwrap();
    }
    for (r, row) in records.iter().zip(rows) {
        if !c.combined(0, row) {
            owner.on_event(&r.rec(), WM_MIN, &mut got);
        }
    }
    assert_eq!(combined, 50, "both keys fold into one partial each");
    assert_eq!(got.emitted.len(), 2, "{:?}", got.lines);
    assert_eq!(materialise(&got), materialise(&want));
}
