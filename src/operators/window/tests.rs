//! Hand-computed cases for the window operators, driven directly (no runtime).

use super::build;
use crate::event::{hash_key, Event, Value};
use crate::operators::{Emitter, Operator};
use crate::plan::{AggFunc, AggPlan, WindowKind, WindowPlan};

#[derive(Default)]
struct Collect {
    lines: Vec<String>,
    late: Vec<i64>,
}

impl Emitter for Collect {
    fn result(&mut self, line: &[u8]) {
        self.lines.push(
            String::from_utf8(line.to_vec())
                .unwrap()
                .trim_end()
                .to_string(),
        );
    }
    fn late(&mut self, e: &Event) {
        self.late.push(e.ts);
    }
}

fn op(window: WindowKind, lateness: i64) -> Box<dyn Operator> {
    let plan = WindowPlan {
        name: "w".into(),
        inputs: vec![0],
        via: vec![],
        group_by: vec!["k".into()],
        window,
        allowed_lateness_ms: lateness,
        late_events: None,
        aggregates: vec![
            AggPlan {
                name: "n".into(),
                func: AggFunc::Count,
                field: None,
            },
            AggPlan {
                name: "s".into(),
                func: AggFunc::Sum,
                field: Some("v".into()),
            },
        ],
        hot_keys: crate::plan::HotKeysPlan::OFF,
    };
    build(&plan, &[None, Some(0)])
}

fn ev(key: &str, ts: i64, v: i64) -> Event {
    let mut e = Event::EMPTY;
    let k = format!("\"{key}\"");
    e.set_key(k.as_bytes());
    e.hash = hash_key(k.as_bytes());
    e.ts = ts;
    e.set_value(0, Value::Int(v));
    e
}

/// Feeds (event, watermark-before-it) pairs, then the end of input.
fn drive(op: &mut dyn Operator, input: &[(Event, i64)]) -> Collect {
    let mut out = Collect::default();
    let mut wm = i64::MIN;
    for (e, w) in input {
        if *w > wm {
            wm = *w;
            if wm >= op.next_action() {
                op.on_watermark(wm, &mut out);
            }
        }
        op.on_event(e, wm, &mut out);
    }
    op.on_watermark(i64::MAX, &mut out);
    out
}

#[test]
fn tumbling_fires_at_last_millisecond_and_refires_within_lateness() {
    let mut w = op(WindowKind::Tumbling { size_ms: 10 }, 5);
    let out = drive(
        &mut *w,
        &[
            (ev("a", 1, 1), i64::MIN),
            (ev("a", 9, 2), 0),
            (ev("a", 12, 4), 8),  // wm 8 < 9: window [0,10) still open
            (ev("a", 3, 8), 9),   // wm 9 fires [0,10) first; this one re-fires it
            (ev("a", 4, 16), 14), // 14 >= 9 + 5: too late for [0,10)
        ],
    );
    assert_eq!(
        out.lines,
        vec![
            r#"{"k":"a","window_start":0,"window_end":10,"n":2,"s":3}"#,
            r#"{"k":"a","window_start":0,"window_end":10,"n":3,"s":11}"#,
            r#"{"k":"a","window_start":10,"window_end":20,"n":1,"s":4}"#,
        ]
    );
    assert_eq!(out.late, vec![4]);
    assert_eq!(w.open_windows(), 0);
}

#[test]
fn sliding_windows_merge_panes_per_key() {
    let mut w = op(
        WindowKind::Sliding {
            size_ms: 10,
            slide_ms: 5,
        },
        0,
    );
    let out = drive(
        &mut *w,
        &[
            (ev("a", 2, 1), i64::MIN),
            (ev("a", 7, 2), 0),
            (ev("b", 7, 4), 0),
        ],
    );
    let mut lines = out.lines.clone();
    lines.sort();
    assert_eq!(
        lines,
        vec![
            r#"{"k":"a","window_start":-5,"window_end":5,"n":1,"s":1}"#,
            r#"{"k":"a","window_start":0,"window_end":10,"n":2,"s":3}"#,
            r#"{"k":"a","window_start":5,"window_end":15,"n":1,"s":2}"#,
            r#"{"k":"b","window_start":0,"window_end":10,"n":1,"s":4}"#,
            r#"{"k":"b","window_start":5,"window_end":15,"n":1,"s":4}"#,
        ]
    );
}

#[test]
fn cumulative_windows_grow_by_step_within_max_size() {
    let mut w = op(
        WindowKind::Cumulative {
            step_ms: 10,
            max_size_ms: 30,
        },
        0,
    );
    let out = drive(
        &mut *w,
        &[
            (ev("a", 5, 1), i64::MIN),
            (ev("a", 25, 2), 0),
            (ev("a", 31, 4), 0),
        ],
    );
    assert_eq!(
        out.lines,
        vec![
            r#"{"k":"a","window_start":0,"window_end":10,"n":1,"s":1}"#,
            r#"{"k":"a","window_start":0,"window_end":20,"n":1,"s":1}"#,
            r#"{"k":"a","window_start":0,"window_end":30,"n":2,"s":3}"#,
            r#"{"k":"a","window_start":30,"window_end":40,"n":1,"s":4}"#,
            r#"{"k":"a","window_start":30,"window_end":50,"n":1,"s":4}"#,
            r#"{"k":"a","window_start":30,"window_end":60,"n":1,"s":4}"#,
        ]
    );
}

#[test]
fn sessions_merge_when_touching_and_late_events_extend_open_sessions() {
    let mut w = op(WindowKind::Session { gap_ms: 10 }, 0);
    let out = drive(
        &mut *w,
        &[
            (ev("a", 0, 1), i64::MIN),
            (ev("a", 20, 2), 0),   // separate session [20,30)
            (ev("a", 10, 4), 5),   // [10,20) touches both: one session [0,30)
            (ev("a", 100, 8), 15), // new session
        ],
    );
    assert_eq!(
        out.lines,
        vec![
            r#"{"k":"a","window_start":0,"window_end":30,"n":3,"s":7}"#,
            r#"{"k":"a","window_start":100,"window_end":110,"n":1,"s":8}"#,
        ]
    );
}

#[test]
fn session_too_late_goes_to_side_output() {
    let mut w = op(WindowKind::Session { gap_ms: 10 }, 0);
    let out = drive(&mut *w, &[(ev("a", 100, 1), i64::MIN), (ev("a", 0, 2), 50)]);
    assert_eq!(out.late, vec![0]);
    assert_eq!(
        out.lines,
        vec![r#"{"k":"a","window_start":100,"window_end":110,"n":1,"s":1}"#]
    );
}

/// Drives one chunk's events as the shard's receive loop does: runs cut where a watermark step may
/// fall (`ChunkTime::seen_below`), handed to `on_run`, the operator stopping where its own events
/// make something due; each event's `seen_max` is the largest time before it.
fn drive_runs(op: &mut dyn Operator, events: &[Event], ooo: i64, run: usize) -> Collect {
    let mut out = Collect::default();
    let time = crate::time::ChunkTime::new(i64::MAX, i64::MIN, ooo);
    let mut evs = events.to_vec();
    let mut seen = i64::MIN;
    for e in &mut evs {
        e.seen_max = seen;
        seen = seen.max(e.ts);
    }
    let mut wm = i64::MIN;
    let mut i = 0;
    while i < evs.len() {
        let below = time.seen_below(op.next_action());
        let end = (i + run).min(evs.len());
        let n = evs[i..end]
            .iter()
            .position(|e| e.seen_max >= below)
            .unwrap_or(end - i);
        if n == 0 {
            let w = time.before(evs[i].seen_max);
            if w > wm {
                wm = w;
                if wm >= op.next_action() {
                    op.on_watermark(wm, &mut out);
                }
            }
            op.on_event(&evs[i], wm, &mut out);
            i += 1;
            continue;
        }
        let done = op.on_run(&evs[i..i + n], &time, &mut out);
        assert!(done >= 1 && done <= n, "on_run took {done} of {n}");
        wm = wm.max(time.before(evs[i + done - 1].seen_max));
        i += done;
    }
    op.on_watermark(i64::MAX, &mut out);
    out
}

/// Every window kind, small enough that a few hundred events cross many windows.
fn window_kinds() -> impl proptest::strategy::Strategy<Value = WindowKind> {
    use proptest::prelude::*;
    prop_oneof![
        Just(WindowKind::Tumbling { size_ms: 10 }),
        Just(WindowKind::Sliding {
            size_ms: 20,
            slide_ms: 5
        }),
        Just(WindowKind::Cumulative {
            step_ms: 5,
            max_size_ms: 20
        }),
        Just(WindowKind::Session { gap_ms: 7 }),
    ]
}

/// Events from (key, time slot, step back, value): times mostly advance, with jitter and
/// occasional far-behind (late) events.
fn jittered_events(raw: &[(u8, i64, i64, i64)]) -> Vec<Event> {
    raw.iter()
        .map(|&(k, slot, back, v)| {
            let back = if back < 0 { back * 2 } else { back };
            ev(&format!("k{k}"), (slot + back).max(0), v)
        })
        .collect()
}

mod runs_equal_events {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the run length, `on_run` gives exactly the lines, late events and order that
        /// `on_event` per event gives, with out-of-order, late (inside and beyond the lateness) and
        /// duplicate events.
        #[test]
        fn on_run_gives_what_on_event_gives(
            kind in window_kinds(),
            lateness in prop_oneof![Just(0i64), Just(6)],
            ooo in 0i64..6,
            run in 1usize..40,
            raw in proptest::collection::vec((0u8..4, 0i64..120, -30i64..3, 0i64..100), 1..200),
        ) {
            let events = jittered_events(&raw);
            let mut by_event = op(kind, lateness);
            let mut input = Vec::new();
            let mut seen = i64::MIN;
            for e in &events {
                let wm = if seen == i64::MIN { i64::MIN } else { seen - ooo };
                input.push((*e, wm));
                seen = seen.max(e.ts);
            }
            let want = drive(by_event.as_mut(), &input);
            let mut by_run = op(kind, lateness);
            let got = drive_runs(by_run.as_mut(), &events, ooo, run);
            prop_assert_eq!(&got.lines, &want.lines);
            prop_assert_eq!(&got.late, &want.late);
        }
    }
}

mod snapshot_restore {
    use super::*;
    use crate::checkpoint::codec::Enc;
    use proptest::prelude::*;

    /// count, sum, count_distinct and min over `v`: every kind of accumulator word, and sketches.
    /// With `distinct`, every kind of accumulator (state goes row by row); without, only plain
    /// words (state goes as one copy of the rows).
    fn op_with(window: WindowKind, lateness: i64, distinct: bool) -> Box<dyn Operator> {
        let d = if distinct {
            AggFunc::CountDistinct
        } else {
            AggFunc::Max
        };
        let agg = |name: &str, func, field: Option<&str>| AggPlan {
            name: name.into(),
            func,
            field: field.map(Into::into),
        };
        let plan = WindowPlan {
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
                agg("d", d, Some("v")),
                agg("lo", AggFunc::Min, Some("v")),
            ],
            hot_keys: crate::plan::HotKeysPlan::OFF,
        };
        build(&plan, &[None, Some(0), Some(0), Some(0)])
    }

    /// Feeds events with the watermark rule (largest earlier time minus `ooo`), as `drive` does,
    /// but in pieces, so a run can be cut, snapshotted and continued elsewhere.
    #[derive(Clone, Copy)]
    struct Feeder {
        ooo: i64,
        seen: i64,
        wm: i64,
    }

    impl Feeder {
        fn feed(&mut self, op: &mut dyn Operator, events: &[Event], out: &mut Collect) {
            for e in events {
                let w = if self.seen == i64::MIN {
                    i64::MIN
                } else {
                    self.seen - self.ooo
                };
                if w > self.wm {
                    self.wm = w;
                    if w >= op.next_action() {
                        op.on_watermark(w, out);
                    }
                }
                op.on_event(e, self.wm, out);
                self.seen = self.seen.max(e.ts);
            }
        }
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    proptest! {
        /// Snapshot at any point, restore into a fresh operator (or split by key hash into two, as a
        /// rescale does), continue with the same input: exactly the lines and late events the
        /// uninterrupted operator produces from that point on.
        #[test]
        fn restored_state_continues_exactly(
            kind in window_kinds(),
            lateness in prop_oneof![Just(0i64), Just(6)],
            ooo in 0i64..6,
            cut in any::<prop::sample::Index>(),
            raw in proptest::collection::vec((0u8..6, 0i64..120, -30i64..3, 0i64..400), 1..200),
            distinct in any::<bool>(),
        ) {
            let op_all = |k, l| op_with(k, l, distinct);
            let events = jittered_events(&raw);
            let cut = cut.index(events.len() + 1);
            let (before, after) = events.split_at(cut);
            let mut a = op_all(kind, lateness);
            let mut feeder = Feeder { ooo, seen: i64::MIN, wm: i64::MIN };
            feeder.feed(a.as_mut(), before, &mut Collect::default());
            let mut state = Enc::default();
            a.snapshot(&mut state);

            let mut want = Collect::default();
            let mut fa = feeder;
            fa.feed(a.as_mut(), after, &mut want);
            a.on_watermark(i64::MAX, &mut want);

            let mut b = op_all(kind, lateness);
            b.restore(&state.bytes, &|_| true, feeder.wm).unwrap();
            let mut got = Collect::default();
            let mut fb = feeder;
            fb.feed(b.as_mut(), after, &mut got);
            b.on_watermark(i64::MAX, &mut got);
            prop_assert_eq!(sorted(got.lines), sorted(want.lines.clone()));
            prop_assert_eq!(got.late, want.late.clone());

            // Rescale: two operators each keep half the keys and see only their keys' events, with
            // the same watermarks (in the engine every shard sees every chunk's time).
            let mut lines = Vec::new();
            let mut late = Vec::new();
            for parity in [0, 1] {
                let keep = move |h: u64| h & 1 == parity;
                let mut c = op_all(kind, lateness);
                c.restore(&state.bytes, &keep, feeder.wm).unwrap();
                let mut out = Collect::default();
                let mut fc = feeder;
                for e in after {
                    if keep(e.hash) {
                        fc.feed(c.as_mut(), std::slice::from_ref(e), &mut out);
                    } else {
                        // Its time still moves the watermark, as another shard's event would.
                        fc.seen = fc.seen.max(e.ts);
                    }
                }
                c.on_watermark(i64::MAX, &mut out);
                lines.extend(out.lines);
                late.extend(out.late);
            }
            late.sort();
            let mut want_late = want.late;
            want_late.sort();
            prop_assert_eq!(sorted(lines), sorted(want.lines));
            prop_assert_eq!(late, want_late);
        }
    }

    #[test]
    fn damaged_state_is_refused() {
        for distinct in [true, false] {
            damaged_state_is_refused_with(distinct);
        }
    }

    fn damaged_state_is_refused_with(distinct: bool) {
        let op_all = |k, l| op_with(k, l, distinct);
        let mut a = op_all(WindowKind::Tumbling { size_ms: 10 }, 0);
        let mut f = Feeder {
            ooo: 0,
            seen: i64::MIN,
            wm: i64::MIN,
        };
        let evs: Vec<Event> = (0..300).map(|i| ev(&format!("k{}", i % 3), 5, i)).collect();
        f.feed(a.as_mut(), &evs, &mut Collect::default());
        let mut state = Enc::default();
        a.snapshot(&mut state);
        for cut in [0, 7, state.bytes.len() / 2, state.bytes.len() - 1] {
            let mut b = op_all(WindowKind::Tumbling { size_ms: 10 }, 0);
            assert!(
                b.restore(&state.bytes[..cut], &|_| true, f.wm).is_err(),
                "cut at {cut}"
            );
        }
        let mut twice = op_all(WindowKind::Tumbling { size_ms: 10 }, 0);
        twice.restore(&state.bytes, &|_| true, f.wm).unwrap();
        let e = twice.restore(&state.bytes, &|_| true, f.wm).unwrap_err();
        assert!(e.contains("twice"), "{e}");
    }
}
