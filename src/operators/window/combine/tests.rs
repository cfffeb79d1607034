//! Phase one against direct aggregation: the same events, combined into partials and merged, must
//! give the same lines as fed one by one (hand-computed action points besides).

use super::Combiner;
use crate::expr::FieldPath;
use crate::operators::testing::Collect;
use crate::operators::window::build;
use crate::plan::{AggFunc, AggPlan, HotKeysPlan, WindowKind, WindowPlan};
use crate::record::event::{hash_key, slot_bytes, Event, PayloadBuf, Rec, Tag, Value};
use crate::time::{WM_MAX, WM_MIN};

fn plan(window: WindowKind, lateness: i64) -> WindowPlan {
    let agg = |name: &str, func, field: Option<(&str, usize)>| AggPlan {
        name: name.into(),
        func,
        field: field.map(|(f, _)| FieldPath::parse(f).unwrap()),
        slot: field.map(|(_, s)| s),
    };
    WindowPlan {
        group_by: vec![FieldPath::parse("k").unwrap()],
        window,
        allowed_lateness_ms: lateness,
        aggregates: vec![
            agg("n", AggFunc::Count, None),
            agg("s", AggFunc::Sum, Some(("v", 0))),
            agg("lo", AggFunc::Min, Some(("v", 0))),
            agg("hi", AggFunc::Max, Some(("f", 1))),
            agg("a", AggFunc::Avg, Some(("v", 0))),
            agg("u", AggFunc::CountDistinct, Some(("u", 2))),
        ],
        hot_keys: HotKeysPlan::OFF,
    }
}

fn ev(key: &str, ts: i64, i: u64) -> Event {
    let mut e = Event::EMPTY;
    let k = format!("\"{key}\"");
    assert!(e.set_key(k.as_bytes()));
    e.hash = hash_key(k.as_bytes());
    e.ts = ts;
    e.set_value(0, Value::Int((i * 7919 % 1000) as i64 - 500));
    // Ties between an integer and an equal float: the first seen must win either way.
    if i.is_multiple_of(3) {
        e.set_value(1, Value::Float((i % 5) as f64));
    } else {
        e.set_value(1, Value::Int((i % 5) as i64));
    }
    e.set_value(2, Value::Hash(hash_key(&(i % 700).to_le_bytes())));
    e
}

/// A hand-off's messages: each `PARTIAL` head with its payload, read back from ring slots.
type Msgs = Vec<(Event, Vec<u8>)>;

fn collect(msgs: &mut Msgs) -> impl FnMut(&Event, &PayloadBuf) + '_ {
    |head, payload| {
        assert_eq!(head.tag, Tag::PARTIAL);
        let slots: Vec<Event> = payload.slots().collect();
        msgs.push((*head, slot_bytes(&slots).to_vec()));
    }
}

/// Adds an event of `key` at `ts` for each id; returns where each was folded (pane, row).
fn add_all(
    c: &mut Combiner,
    key: &str,
    ts: i64,
    ids: impl Iterator<Item = u64>,
) -> Vec<(u32, u32)> {
    ids.map(|i| {
        let (pane, row, _) = c.add(&ev(key, ts, i));
        (pane, row)
    })
    .collect()
}

#[test]
fn combined_partials_merge_to_the_same_lines_as_events_one_by_one() {
    for window in [
        WindowKind::Tumbling { size_ms: 100 },
        WindowKind::Sliding {
            size_ms: 300,
            slide_ms: 100,
        },
        WindowKind::Cumulative {
            step_ms: 100,
            max_size_ms: 400,
        },
    ] {
        let p = plan(window, 0);
        let events: Vec<Event> = (0..3000u64)
            .map(|i| {
                // One key 80%, a few others, timestamps out of order over 5 panes.
                let key = if !i.is_multiple_of(5) {
                    "hot".to_string()
                } else {
                    format!("k{}", i % 13)
                };
                ev(&key, ((i * 37) % 500) as i64, i)
            })
            .collect();
        let mut direct = build(&p);
        let mut out_direct = Collect::default();
        for e in &events {
            direct.on_event(&Rec::of(e), WM_MIN, &mut out_direct);
        }
        direct.on_watermark(WM_MAX, &mut out_direct);

        let mut c = Combiner::new(&p).unwrap();
        let held: Vec<(Event, u32, u32)> = events
            .iter()
            .map(|e| {
                let (pane, row, _) = c.add(e);
                (*e, pane, row)
            })
            .collect();
        let mut msgs = Vec::new();
        let combined = c.hand_off(WM_MIN, &Event::EMPTY, usize::MAX, collect(&mut msgs));
        assert!(combined > 2000, "the hot key's events combine: {combined}");
        let mut merged = build(&p);
        let mut out_merged = Collect::default();
        for (head, payload) in &msgs {
            let rec = Rec::parse(head, payload).unwrap();
            merged.on_partial(&rec, WM_MIN, &mut out_merged).unwrap();
        }
        let mut raw = 0;
        for (e, pane, row) in &held {
            if !c.combined(*pane, *row) {
                merged.on_event(&Rec::of(e), WM_MIN, &mut out_merged);
                raw += 1;
            }
        }
        assert_eq!(raw as u64 + combined, events.len() as u64);
        merged.on_watermark(WM_MAX, &mut out_merged);
        assert!(!out_direct.lines.is_empty());
        assert_eq!(out_merged.sorted(), out_direct.sorted(), "{window:?}");
    }
}

#[test]
fn a_pane_whose_window_fired_is_not_combined() {
    let p = plan(WindowKind::Tumbling { size_ms: 100 }, 50);
    let mut c = Combiner::new(&p).unwrap();
    let a = add_all(&mut c, "hot", 50, 0..10);
    let b = add_all(&mut c, "hot", 150, 0..10);
    let mut msgs = Vec::new();
    // Watermark 99: window [0, 100) has fired; [100, 200) is open.
    let n = c.hand_off(99, &Event::EMPTY, usize::MAX, collect(&mut msgs));
    assert_eq!(n, 10);
    assert!(a.iter().all(|&(p, r)| !c.combined(p, r)), "late: raw");
    assert!(b.iter().all(|&(p, r)| c.combined(p, r)));
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].0.ts, 100);
}

#[test]
fn a_partial_larger_than_the_ring_goes_raw() {
    // 600 events of one key with 600 distinct users: the exact set alone takes ~38 slots.
    let p = plan(WindowKind::Tumbling { size_ms: 100 }, 0);
    let mut c = Combiner::new(&p).unwrap();
    let big = add_all(&mut c, "hot", 5, 0..600);
    // 40 events of another key, all of one user (ids i * 700 hash as i % 700 = 0): a small
    // partial.
    let small = add_all(&mut c, "warm", 6, (0..40).map(|i| i * 700));
    let mut msgs = Vec::new();
    let n = c.hand_off(WM_MIN, &Event::EMPTY, 16, collect(&mut msgs));
    assert_eq!(n, 40, "only the small partial is sent");
    assert!(big.iter().all(|&(p, r)| !c.combined(p, r)), "too big: raw");
    assert!(small.iter().all(|&(p, r)| c.combined(p, r)));
    assert_eq!(msgs.len(), 1);
    assert!(msgs[0].1.len().div_ceil(crate::record::event::SLOT_BYTES) < 16);
    // With room for it, the big one goes as a partial too.
    let mut msgs = Vec::new();
    assert_eq!(
        c.hand_off(WM_MIN, &Event::EMPTY, 64, collect(&mut msgs)),
        640
    );
}

#[test]
fn a_single_event_goes_raw() {
    let p = plan(WindowKind::Tumbling { size_ms: 100 }, 0);
    let mut c = Combiner::new(&p).unwrap();
    let (pane, row, first) = c.add(&ev("once", 5, 1));
    assert_eq!(first, Some(0));
    let (_, _, again) = c.add(&ev("other", 6, 2));
    assert_eq!(again, None, "the pane is known since the last hand-off");
    let mut msgs = Vec::new();
    assert_eq!(
        c.hand_off(WM_MIN, &Event::EMPTY, usize::MAX, collect(&mut msgs)),
        0
    );
    assert!(msgs.is_empty());
    assert!(!c.combined(pane, row));
    c.clear();
    assert_eq!(
        c.add(&ev("once", 5, 1)).2,
        Some(0),
        "cleared: a new pane again"
    );
}

#[test]
fn action_points_are_window_ends_and_lateness_ends() {
    // Sliding 300/100 with 50 ms lateness: pane [100, 200) is in windows ending 200, 300, 400.
    let p = plan(
        WindowKind::Sliding {
            size_ms: 300,
            slide_ms: 100,
        },
        50,
    );
    let c = Combiner::new(&p).unwrap();
    assert_eq!(c.next_change_above(100, WM_MIN), 199);
    assert_eq!(c.next_change_above(100, 199), 249);
    assert_eq!(c.next_change_above(100, 249), 299);
    assert_eq!(c.next_change_above(100, 300), 349);
    assert_eq!(c.next_change_above(100, 449), WM_MAX);
    let p = plan(WindowKind::Session { gap_ms: 10 }, 0);
    assert!(Combiner::new(&p).is_none(), "sessions do not combine");
}

#[test]
fn a_partial_of_a_long_key_merges_like_its_events() {
    // The combiner holds only events with inline keys, but the owner's side of the protocol takes
    // any key: a partial whose key travels in the payload, beside its accumulators.
    use crate::checkpoint::codec::Enc;
    use crate::operators::testing::{long_token, Owned};
    use crate::operators::window::acc_table::AccTable;
    let p = plan(WindowKind::Tumbling { size_ms: 100 }, 0);
    let key = long_token("hot", 200);
    let events: Vec<Owned> = (0..50u64)
        .map(|i| {
            let e = ev("x", (i * 7 % 100) as i64, i);
            let vals: Vec<Value> = (0..3).map(|s| e.value(s)).collect();
            Owned::new(0, key.as_bytes(), e.ts, &vals, None)
        })
        .collect();
    let mut direct = build(&p);
    let mut want = Collect::default();
    for e in &events {
        direct.on_event(&e.rec(), WM_MIN, &mut want);
    }
    direct.on_watermark(WM_MAX, &mut want);

    // The accumulators of the first 30 as phase one would encode them; the rest go raw.
    let layout = super::AggLayout::new(&p.aggregates);
    let mut t = AccTable::new(&layout);
    for e in &events[..30] {
        t.add_rec(&e.rec(), &layout);
    }
    let row = t.rows().next().unwrap();
    let mut enc = Enc::default();
    layout.encode(row.accs, t.sketches(), &mut enc);
    let mut head = Event::EMPTY;
    head.tag = Tag::PARTIAL;
    head.hash = hash_key(key.as_bytes());
    let mut payload = PayloadBuf::default();
    payload.set_key(&mut head, key.as_bytes());
    payload.finish(&mut head, None, Some(&enc.bytes));
    let mut msgs = Msgs::new();
    collect(&mut msgs)(&head, &payload);

    let mut merged = build(&p);
    let mut got = Collect::default();
    merged
        .on_partial(
            &Rec::parse(&msgs[0].0, &msgs[0].1).unwrap(),
            WM_MIN,
            &mut got,
        )
        .unwrap();
    for e in &events[30..] {
        merged.on_event(&e.rec(), WM_MIN, &mut got);
    }
    merged.on_watermark(WM_MAX, &mut got);
    assert_eq!(got.lines.len(), 1);
    assert!(got.lines[0].starts_with(&format!("{{\"k\":{key},")));
    assert_eq!(got.lines, want.lines);
}
