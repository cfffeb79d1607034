//! Phase one against direct aggregation: the same events, combined into partials and merged, must
//! give the same lines as fed one by one (hand-computed action points besides).

use super::Combiner;
use crate::event::{hash_key, unpack_partial, Event, Tag, Value};
use crate::operators::window::build;
use crate::operators::Emitter;
use crate::plan::{AggFunc, AggPlan, HotKeysPlan, WindowKind, WindowPlan};
use crate::time::{WM_MAX, WM_MIN};

#[derive(Default)]
struct Lines(Vec<String>);

impl Emitter for Lines {
    fn result(&mut self, line: &[u8]) {
        self.0
            .push(String::from_utf8_lossy(line).trim_end().to_string());
    }
    fn late(&mut self, _: &Event) {}
}

fn plan(window: WindowKind, lateness: i64) -> (WindowPlan, Vec<Option<usize>>) {
    let agg = |name: &str, func, field: Option<&str>| AggPlan {
        name: name.into(),
        func,
        field: field.map(String::from),
    };
    let p = WindowPlan {
        name: "w".into(),
        inputs: vec![0],
        via: vec![],
        group_by: vec!["k".into()],
        window,
        allowed_lateness_ms: lateness,
        late_events: None,
        aggregates: vec![
            agg("n", AggFunc::Count, None),
            agg("s", AggFunc::Sum, Some("v")),
            agg("lo", AggFunc::Min, Some("v")),
            agg("hi", AggFunc::Max, Some("f")),
            agg("a", AggFunc::Avg, Some("v")),
            agg("u", AggFunc::CountDistinct, Some("u")),
        ],
        hot_keys: HotKeysPlan::OFF,
    };
    (p, vec![None, Some(0), Some(0), Some(1), Some(0), Some(2)])
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

/// Splits hand-off messages into (head, payload) partials.
fn partials(msgs: &[Event]) -> Vec<(Event, Vec<u8>)> {
    let mut out: Vec<(Event, Vec<u8>)> = Vec::new();
    for m in msgs {
        if m.tag == Tag::PARTIAL {
            out.push((*m, Vec::new()));
        }
        let (head, buf) = out.last_mut().expect("a head first");
        unpack_partial(m, head.len as usize, buf);
    }
    out
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
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
        let (p, slots) = plan(window, 0);
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
        let mut direct = build(&p, &slots);
        let mut out_direct = Lines::default();
        for e in &events {
            direct.on_event(e, WM_MIN, &mut out_direct);
        }
        direct.on_watermark(WM_MAX, &mut out_direct);

        let mut c = Combiner::new(&p, &slots).unwrap();
        let held: Vec<(Event, u32, u32)> = events
            .iter()
            .map(|e| {
                let (pane, row, _) = c.add(e);
                (*e, pane, row)
            })
            .collect();
        let mut msgs = Vec::new();
        let combined = c.hand_off(WM_MIN, &Event::EMPTY, |m| msgs.push(*m));
        assert!(combined > 2000, "the hot key's events combine: {combined}");
        let mut merged = build(&p, &slots);
        let mut out_merged = Lines::default();
        for (head, payload) in partials(&msgs) {
            merged.on_partial(&head, &payload, WM_MIN).unwrap();
        }
        let mut raw = 0;
        for (e, pane, row) in &held {
            if !c.combined(*pane, *row) {
                merged.on_event(e, WM_MIN, &mut out_merged);
                raw += 1;
            }
        }
        assert_eq!(raw as u64 + combined, events.len() as u64);
        merged.on_watermark(WM_MAX, &mut out_merged);
        assert!(!out_direct.0.is_empty());
        assert_eq!(sorted(out_merged.0), sorted(out_direct.0), "{window:?}");
    }
}

#[test]
fn a_pane_whose_window_fired_is_not_combined() {
    let (p, slots) = plan(WindowKind::Tumbling { size_ms: 100 }, 50);
    let mut c = Combiner::new(&p, &slots).unwrap();
    let a: Vec<(u32, u32)> = (0..10)
        .map(|i| {
            let (pane, row, _) = c.add(&ev("hot", 50, i));
            (pane, row)
        })
        .collect();
    let b: Vec<(u32, u32)> = (0..10)
        .map(|i| {
            let (pane, row, _) = c.add(&ev("hot", 150, i));
            (pane, row)
        })
        .collect();
    let mut msgs = Vec::new();
    // Watermark 99: window [0, 100) has fired; [100, 200) is open.
    let n = c.hand_off(99, &Event::EMPTY, |m| msgs.push(*m));
    assert_eq!(n, 10);
    assert!(a.iter().all(|&(p, r)| !c.combined(p, r)), "late: raw");
    assert!(b.iter().all(|&(p, r)| c.combined(p, r)));
    assert_eq!(partials(&msgs).len(), 1);
    assert_eq!(partials(&msgs)[0].0.ts, 100);
}

#[test]
fn a_single_event_goes_raw() {
    let (p, slots) = plan(WindowKind::Tumbling { size_ms: 100 }, 0);
    let mut c = Combiner::new(&p, &slots).unwrap();
    let (pane, row, first) = c.add(&ev("once", 5, 1));
    assert_eq!(first, Some(0));
    let (_, _, again) = c.add(&ev("other", 6, 2));
    assert_eq!(again, None, "the pane is known since the last hand-off");
    let mut msgs = Vec::new();
    assert_eq!(c.hand_off(WM_MIN, &Event::EMPTY, |m| msgs.push(*m)), 0);
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
    let (p, slots) = plan(
        WindowKind::Sliding {
            size_ms: 300,
            slide_ms: 100,
        },
        50,
    );
    let c = Combiner::new(&p, &slots).unwrap();
    assert_eq!(c.next_change_above(100, WM_MIN), 199);
    assert_eq!(c.next_change_above(100, 199), 249);
    assert_eq!(c.next_change_above(100, 249), 299);
    assert_eq!(c.next_change_above(100, 300), 349);
    assert_eq!(c.next_change_above(100, 449), WM_MAX);
    let (p, slots) = plan(WindowKind::Session { gap_ms: 10 }, 0);
    assert!(
        Combiner::new(&p, &slots).is_none(),
        "sessions do not combine"
    );
}
