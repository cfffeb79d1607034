//! Hand-computed cases for the window operators, driven directly (no runtime).

use super::build;
use crate::expr::FieldPath;
use crate::metrics::OperatorReport;
use crate::operators::testing::{long_token, Collect, Owned};
use crate::operators::Operator;
use crate::plan::{AggFunc, AggPlan, WindowKind, WindowPlan};
use crate::record::event::{Event, Value};

fn path(p: &str) -> FieldPath {
    FieldPath::parse(p).unwrap()
}

fn op(window: WindowKind, lateness: i64) -> Box<dyn Operator> {
    let plan = WindowPlan {
        group_by: vec![path("k")],
        window,
        allowed_lateness_ms: lateness,
        aggregates: vec![
            AggPlan {
                name: "n".into(),
                func: AggFunc::Count,
                field: None,
                slot: None,
            },
            AggPlan {
                name: "s".into(),
                func: AggFunc::Sum,
                field: Some(path("v")),
                slot: Some(0),
            },
        ],
        hot_keys: crate::plan::HotKeysPlan::OFF,
    };
    build(&plan)
}

fn report(op: &dyn Operator) -> OperatorReport {
    let mut r = OperatorReport::default();
    op.report(&mut r);
    r
}

/// An event of key `"key"` (a JSON string token) with `v` in slot 0.
fn ev(key: &str, ts: i64, v: i64) -> Owned {
    keyed(&format!("\"{key}\""), ts, v)
}

/// An event whose key is the token `token`, of any length.
fn keyed(token: &str, ts: i64, v: i64) -> Owned {
    Owned::new(0, token.as_bytes(), ts, &[Value::Int(v)], None)
}

/// Feeds (event, watermark-before-it) pairs, then the end of input, into `out`.
fn drive_into(op: &mut dyn Operator, input: &[(Owned, i64)], out: &mut Collect) {
    let mut wm = i64::MIN;
    for (e, w) in input {
        if *w > wm {
            wm = *w;
            if wm >= op.next_action() {
                op.on_watermark(wm, out);
            }
        }
        op.on_event(&e.rec(), wm, out);
    }
    op.on_watermark(i64::MAX, out);
}

fn drive(op: &mut dyn Operator, input: &[(Owned, i64)]) -> Collect {
    let mut out = Collect::default();
    drive_into(op, input, &mut out);
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
    assert_eq!(report(&*w).open, 0);
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
fn drive_runs(op: &mut dyn Operator, events: &[Owned], ooo: i64, run: usize) -> Collect {
    let mut out = Collect::default();
    let time = crate::time::ChunkTime::new(i64::MAX, i64::MIN, ooo);
    // Runs hold payload-free events only (the runtime hands the others over one by one).
    assert!(events.iter().all(|e| !e.ev.has_payload()));
    let mut evs: Vec<Event> = events.iter().map(|e| e.ev).collect();
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
            op.on_event(&crate::record::event::Rec::of(&evs[i]), wm, &mut out);
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
/// occasional far-behind (late) events. With `long`, keys from 3 up are 200 bytes (in the payload).
fn jittered_events(raw: &[(u8, i64, i64, i64)], long: bool) -> Vec<Owned> {
    raw.iter()
        .map(|&(k, slot, back, v)| {
            let back = if back < 0 { back * 2 } else { back };
            let ts = (slot + back).max(0);
            if long && k >= 3 {
                keyed(&long_token(&format!("k{k}"), 200), ts, v)
            } else {
                ev(&format!("k{k}"), ts, v)
            }
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
            let events = jittered_events(&raw, false);
            let mut by_event = op(kind, lateness);
            let mut input = Vec::new();
            let mut seen = i64::MIN;
            for e in &events {
                let wm = if seen == i64::MIN { i64::MIN } else { seen - ooo };
                input.push((e.clone(), wm));
                seen = seen.max(e.ev.ts);
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
            field: field.map(path),
            slot: field.map(|_| 0),
        };
        let plan = WindowPlan {
            group_by: vec![path("k")],
            window,
            allowed_lateness_ms: lateness,
            aggregates: vec![
                agg("n", AggFunc::Count, None),
                agg("s", AggFunc::Sum, Some("v")),
                agg("d", d, Some("v")),
                agg("lo", AggFunc::Min, Some("v")),
            ],
            hot_keys: crate::plan::HotKeysPlan::OFF,
        };
        build(&plan)
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
        fn feed(&mut self, op: &mut dyn Operator, events: &[Owned], out: &mut Collect) {
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
                op.on_event(&e.rec(), self.wm, out);
                self.seen = self.seen.max(e.ev.ts);
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
        /// uninterrupted operator produces from that point on. Half the keys are 200 bytes long
        /// (kept beside the rows, and written row by row even without sketches).
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
            let events = jittered_events(&raw, true);
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
                    if keep(e.ev.hash) {
                        fc.feed(c.as_mut(), std::slice::from_ref(e), &mut out);
                    } else {
                        // Its time still moves the watermark, as another shard's event would.
                        fc.seen = fc.seen.max(e.ev.ts);
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
        let evs: Vec<Owned> = (0..300).map(|i| ev(&format!("k{}", i % 3), 5, i)).collect();
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

mod retractions {
    use super::*;
    use crate::operators::testing::Emitted;

    /// A result as a window emits it: fired by the watermark (`+I`), or caused by a late event
    /// (a re-fire: `-U` of the previous value, `+U` of the new one).
    fn out(line: &str, ts: i64, cause: Option<i64>, retract: bool) -> Emitted {
        use crate::record::event::RowKind;
        let kind = match (retract, cause) {
            (true, _) => RowKind::UpdateBefore,
            (false, Some(_)) => RowKind::UpdateAfter,
            (false, None) => RowKind::Insert,
        };
        Emitted {
            line: line.into(),
            ts,
            cause,
            key: crate::record::event::hash_key(b"\"a\""),
            retract,
            kind,
        }
    }

    /// The input of `tumbling_fires_at_last_millisecond_and_refires_within_lateness`.
    fn late_within_lateness() -> Vec<(Owned, i64)> {
        vec![
            (ev("a", 1, 1), i64::MIN),
            (ev("a", 9, 2), 0),
            (ev("a", 12, 4), 8),
            (ev("a", 3, 8), 9),   // re-fires [0,10)
            (ev("a", 4, 16), 14), // too late
        ]
    }

    #[test]
    fn a_refire_retracts_the_previous_result_first_when_asked_to() {
        let first = r#"{"k":"a","window_start":0,"window_end":10,"n":2,"s":3}"#;
        let again = r#"{"k":"a","window_start":0,"window_end":10,"n":3,"s":11}"#;
        let next = r#"{"k":"a","window_start":10,"window_end":20,"n":1,"s":4}"#;
        let mut w = op(WindowKind::Tumbling { size_ms: 10 }, 5);
        let mut got = Collect::wanting_retractions();
        drive_into(&mut *w, &late_within_lateness(), &mut got);
        assert_eq!(
            got.emitted,
            vec![
                out(first, 9, None, false),
                // Caused by the late event, carrying the window's last millisecond as its time.
                out(first, 9, Some(3), true),
                out(again, 9, Some(3), false),
                out(next, 19, None, false),
            ]
        );
        let r = report(&*w);
        assert_eq!((r.fired, r.refired, r.late_dropped), (2, 1, 1));

        // Nobody consumes retractions: only the new result.
        let mut w = op(WindowKind::Tumbling { size_ms: 10 }, 5);
        let got = drive(&mut *w, &late_within_lateness());
        assert_eq!(
            got.emitted,
            vec![
                out(first, 9, None, false),
                out(again, 9, Some(3), false),
                out(next, 19, None, false),
            ]
        );
    }

    #[test]
    fn an_event_refiring_two_sliding_windows_retracts_both_before_the_new_results() {
        let input = [
            (ev("a", 7, 1), i64::MIN),
            (ev("b", 30, 0), 16), // wm 16 fires [0,10) and [5,15) for "a"
            (ev("a", 8, 2), 16),  // re-fires both (lateness 10)
        ];
        let kind = WindowKind::Sliding {
            size_ms: 10,
            slide_ms: 5,
        };
        let w0 = r#"{"k":"a","window_start":0,"window_end":10,"n":1,"s":1}"#;
        let w5 = r#"{"k":"a","window_start":5,"window_end":15,"n":1,"s":1}"#;
        let w0b = r#"{"k":"a","window_start":0,"window_end":10,"n":2,"s":3}"#;
        let w5b = r#"{"k":"a","window_start":5,"window_end":15,"n":2,"s":3}"#;
        let mut w = op(kind, 10);
        let mut got = Collect::wanting_retractions();
        drive_into(&mut *w, &input, &mut got);
        let a: Vec<Emitted> = got
            .emitted
            .into_iter()
            .filter(|e| e.line.contains(r#""k":"a""#))
            .collect();
        assert_eq!(
            a,
            vec![
                out(w0, 9, None, false),
                out(w5, 14, None, false),
                out(w0, 9, Some(8), true),
                out(w5, 14, Some(8), true),
                out(w0b, 9, Some(8), false),
                out(w5b, 14, Some(8), false),
            ]
        );
        let mut w = op(kind, 10);
        let got = drive(&mut *w, &input);
        assert!(got.emitted.iter().all(|e| !e.retract));
        assert_eq!(
            got.lines
                .iter()
                .filter(|l| l.contains(r#""k":"a""#))
                .count(),
            4
        );
    }

    #[test]
    fn a_late_event_of_a_new_key_has_nothing_to_retract() {
        let mut w = op(WindowKind::Tumbling { size_ms: 10 }, 5);
        let mut got = Collect::wanting_retractions();
        drive_into(
            &mut *w,
            &[(ev("a", 1, 1), i64::MIN), (ev("b", 2, 5), 9)],
            &mut got,
        );
        assert_eq!(
            got.emitted,
            vec![
                out(
                    r#"{"k":"a","window_start":0,"window_end":10,"n":1,"s":1}"#,
                    9,
                    None,
                    false
                ),
                Emitted {
                    key: crate::record::event::hash_key(b"\"b\""),
                    ..out(
                        r#"{"k":"b","window_start":0,"window_end":10,"n":1,"s":5}"#,
                        9,
                        Some(2),
                        false
                    )
                },
            ]
        );
    }
}

mod long_keys {
    use super::*;

    fn kinds() -> [WindowKind; 4] {
        [
            WindowKind::Tumbling { size_ms: 10 },
            WindowKind::Sliding {
                size_ms: 20,
                slide_ms: 5,
            },
            WindowKind::Cumulative {
                step_ms: 5,
                max_size_ms: 20,
            },
            WindowKind::Session { gap_ms: 7 },
        ]
    }

    #[test]
    fn a_200_byte_key_is_one_group() {
        let key = long_token("ad", 200);
        let mut w = op(WindowKind::Tumbling { size_ms: 10 }, 0);
        let got = drive(
            &mut *w,
            &[
                (keyed(&key, 1, 1), i64::MIN),
                (ev("short", 2, 10), i64::MIN),
                (keyed(&key, 9, 2), i64::MIN),
                // Same 200 bytes but the last one: another group.
                (keyed(&format!("{}x\"", &key[..198]), 5, 100), i64::MIN),
            ],
        );
        assert_eq!(
            got.sorted(),
            vec![
                format!(r#"{{"k":{key},"window_start":0,"window_end":10,"n":2,"s":3}}"#),
                format!(
                    r#"{{"k":{}x","window_start":0,"window_end":10,"n":1,"s":100}}"#,
                    &key[..198]
                ),
                r#"{"k":"short","window_start":0,"window_end":10,"n":1,"s":10}"#.to_string(),
            ]
        );
    }

    /// The same events with keys of 200 bytes (and of 39 and 40 bytes, either side of the inline
    /// limit) give the lines their short twins give, for every window kind, with late events
    /// inside and beyond the lateness.
    #[test]
    fn long_keys_aggregate_like_short_ones() {
        let raw: Vec<(u8, i64, i64, i64)> = (0..400i64)
            .map(|i| ((i * 7 % 5) as u8, i / 3, -((i * 13) % 23) + 2, i % 17))
            .collect();
        let long_of = |k: u8| match k {
            0 => long_token("k0", 39),
            1 => long_token("k1", 40),
            k => long_token(&format!("k{k}"), 200),
        };
        for kind in kinds() {
            let mut feeds: Vec<Vec<(Owned, i64)>> = Vec::new();
            for long in [false, true] {
                let mut seen = i64::MIN;
                let mut input = Vec::new();
                for &(k, slot, back, v) in &raw {
                    let ts = (slot + back).max(0);
                    let e = if long {
                        keyed(&long_of(k), ts, v)
                    } else {
                        ev(&format!("k{k}"), ts, v)
                    };
                    input.push((e, if seen == i64::MIN { seen } else { seen - 3 }));
                    seen = seen.max(ts);
                }
                feeds.push(input);
            }
            let short = drive(&mut *op(kind, 6), &feeds[0]);
            let long = drive(&mut *op(kind, 6), &feeds[1]);
            let mut renamed: Vec<String> = long
                .lines
                .iter()
                .map(|l| {
                    (0..5u8).fold(l.clone(), |l, k| {
                        l.replace(&long_of(k), &format!("\"k{k}\""))
                    })
                })
                .collect();
            renamed.sort();
            assert!(!short.lines.is_empty());
            assert_eq!(renamed, short.sorted(), "{kind:?}");
            assert_eq!(long.late, short.late, "{kind:?}");
        }
    }
}

mod wide_values {
    use super::*;
    use crate::checkpoint::codec::Enc;
    use crate::record::event::{hash_key, WIDE};
    use rust_decimal::Decimal;
    use std::str::FromStr;

    /// 8 aggregates over 6 fields `f0`..`f5`, in slots 0..6: slots 4 and 5 travel in the
    /// payload's WIDE section (past the 4 inline ones), and so does a decimal too wide for one
    /// word in an inline slot.
    fn op8(window: WindowKind) -> Box<dyn Operator> {
        let agg = |name: &str, func, slot: Option<usize>| AggPlan {
            name: name.into(),
            func,
            field: slot.map(|s| path(&format!("f{s}"))),
            slot,
        };
        build(&WindowPlan {
            group_by: vec![path("k")],
            window,
            allowed_lateness_ms: 0,
            aggregates: vec![
                agg("n", AggFunc::Count, None),
                agg("s0", AggFunc::Sum, Some(0)),
                agg("a1", AggFunc::Avg, Some(1)),
                agg("lo2", AggFunc::Min, Some(2)),
                agg("hi3", AggFunc::Max, Some(3)),
                agg("s4", AggFunc::Sum, Some(4)),
                agg("hi4", AggFunc::Max, Some(4)),
                agg("d5", AggFunc::CountDistinct, Some(5)),
            ],
            hot_keys: crate::plan::HotKeysPlan::OFF,
        })
    }

    fn dec(s: &str) -> Value {
        Value::Dec(Decimal::from_str(s).unwrap())
    }

    fn events(key: &str) -> Vec<Owned> {
        let h = |s: &str| Value::Hash(hash_key(s.as_bytes()));
        let rows = [
            (
                1,
                [
                    Value::Int(1),
                    dec("1.00"),
                    dec("2.50"),
                    Value::Int(7),
                    dec("0.0001"),
                    h("x"),
                ],
            ),
            (
                4,
                [
                    dec("0.25"),
                    dec("123456789012345678.9012"), // a 70-bit mantissa: wide
                    Value::Int(2),
                    dec("7.5"),
                    Value::Int(3),
                    h("y"),
                ],
            ),
            (
                8,
                [
                    Value::Null,
                    dec("2.00"),
                    dec("2.5"),
                    Value::Float(7.25),
                    Value::Null,
                    h("x"),
                ],
            ),
        ];
        rows.iter()
            .map(|(ts, vals)| Owned::new(0, key.as_bytes(), *ts, vals, None))
            .collect()
    }

    fn expected(key: &str, (start, end): (i64, i64)) -> String {
        let avg =
            (Decimal::from_str("123456789012345681.9012").unwrap() / Decimal::from(3)).normalize();
        format!(
            r#"{{"k":{key},"window_start":{start},"window_end":{end},"n":3,"s0":1.25,"a1":{avg},"lo2":2,"hi3":7.5,"s4":3.0001,"hi4":3,"d5":2}}"#
        )
    }

    #[test]
    fn values_past_the_inline_slots_are_read_from_the_payload() {
        let long = long_token("b", 200);
        for key in [r#""a""#.to_string(), long] {
            let evs = events(&key);
            assert!(evs.iter().all(|e| e.ev.flags & WIDE != 0));
            for (kind, window) in [
                (WindowKind::Tumbling { size_ms: 10 }, (0, 10)),
                (
                    WindowKind::Sliding {
                        size_ms: 10,
                        slide_ms: 5,
                    },
                    (0, 10),
                ),
                (WindowKind::Session { gap_ms: 5 }, (1, 13)),
            ] {
                let input: Vec<(Owned, i64)> = evs.iter().map(|e| (e.clone(), i64::MIN)).collect();
                let got = drive(&mut *op8(kind), &input);
                let want = expected(&key, window);
                assert!(got.lines.contains(&want), "{kind:?}: {:?}", got.lines);
            }
        }
    }

    #[test]
    fn wide_values_and_decimals_survive_a_snapshot() {
        for kind in [
            WindowKind::Tumbling { size_ms: 10 },
            WindowKind::Session { gap_ms: 5 },
        ] {
            let evs = events(r#""a""#);
            let mut a = op8(kind);
            let mut out = Collect::default();
            for e in &evs[..2] {
                a.on_event(&e.rec(), i64::MIN, &mut out);
            }
            let mut state = Enc::default();
            a.snapshot(&mut state);
            let mut b = op8(kind);
            b.restore(&state.bytes, &|_| true, i64::MIN).unwrap();
            b.on_event(&evs[2].rec(), i64::MIN, &mut out);
            b.on_watermark(i64::MAX, &mut out);
            let window = match kind {
                WindowKind::Session { .. } => (1, 13),
                _ => (0, 10),
            };
            assert_eq!(out.lines, [expected(r#""a""#, window)], "{kind:?}");
        }
    }
}

mod consuming_retractions {
    use super::*;
    use crate::record::event::RETRACT;

    /// `ev` marked as a retraction of an earlier record of the same stream (an upstream window's
    /// previous result), as the emitter routes it to a window that reads that stream.
    fn retraction(key: &str, ts: i64, v: i64) -> Owned {
        let mut e = ev(key, ts, v);
        e.ev.flags |= RETRACT;
        e
    }

    fn count_sum_avg(window: WindowKind) -> Box<dyn Operator> {
        let agg = |name: &str, func, slot: Option<usize>| AggPlan {
            name: name.into(),
            func,
            field: slot.map(|_| path("v")),
            slot,
        };
        build(&WindowPlan {
            group_by: vec![path("k")],
            window,
            allowed_lateness_ms: 0,
            aggregates: vec![
                agg("n", AggFunc::Count, None),
                agg("c", AggFunc::Count, Some(0)),
                agg("s", AggFunc::Sum, Some(0)),
                agg("a", AggFunc::Avg, Some(0)),
            ],
            hot_keys: crate::plan::HotKeysPlan::OFF,
        })
    }

    #[test]
    fn a_retraction_takes_its_record_back_out_of_count_sum_and_avg() {
        for kind in [
            WindowKind::Tumbling { size_ms: 10 },
            WindowKind::Sliding {
                size_ms: 10,
                slide_ms: 5,
            },
        ] {
            // Upstream re-fired a result: 5 was its first value, 7 the new one.
            let input = [
                (ev("a", 1, 5), i64::MIN),
                (ev("a", 2, 3), i64::MIN),
                (retraction("a", 1, 5), i64::MIN),
                (ev("a", 1, 7), i64::MIN),
            ];
            let got = drive(&mut *count_sum_avg(kind), &input);
            let want = r#"{"k":"a","window_start":0,"window_end":10,"n":2,"c":2,"s":10,"a":5.0}"#;
            assert!(
                got.lines.contains(&want.to_string()),
                "{kind:?}: {:?}",
                got.lines
            );
            // The same through runs (payload-free events are handed over in runs).
            let events: Vec<Owned> = input.iter().map(|(e, _)| e.clone()).collect();
            let got = drive_runs(&mut *count_sum_avg(kind), &events, 0, 8);
            assert!(
                got.lines.contains(&want.to_string()),
                "{kind:?} runs: {:?}",
                got.lines
            );
        }
    }

    #[test]
    fn a_retraction_of_a_decimal_result_leaves_the_exact_rest() {
        use rust_decimal::Decimal;
        use std::str::FromStr;
        let dec = |s: &str| Value::Dec(Decimal::from_str(s).unwrap());
        let e = |v: Value, back: bool| {
            let mut o = Owned::new(0, b"\"a\"", 3, &[v], None);
            if back {
                o.ev.flags |= RETRACT;
            }
            (o, i64::MIN)
        };
        let got = drive(
            &mut *count_sum_avg(WindowKind::Tumbling { size_ms: 10 }),
            &[
                e(dec("0.10"), false),
                e(dec("1.2345"), false),
                e(dec("0.10"), true),
                e(dec("0.20"), false),
            ],
        );
        assert_eq!(
            got.lines,
            [r#"{"k":"a","window_start":0,"window_end":10,"n":2,"c":2,"s":1.4345,"a":0.71725}"#]
        );
    }

    #[test]
    fn a_session_that_re_fires_or_merges_away_retracts_what_it_emitted() {
        // gap 10, lateness 100: [0,10) fires at 9 and [20,30) at 29; the late event at 10 merges
        // both into [0,30), which fires at once: both earlier results are taken back first.
        let input = [
            (ev("a", 0, 1), i64::MIN),
            (ev("a", 20, 2), 9),
            (ev("a", 40, 0), 35),
            (ev("a", 10, 4), 35),
        ];
        let s0 = r#"{"k":"a","window_start":0,"window_end":10,"n":1,"s":1}"#;
        let s20 = r#"{"k":"a","window_start":20,"window_end":30,"n":1,"s":2}"#;
        let merged = r#"{"k":"a","window_start":0,"window_end":30,"n":3,"s":7}"#;
        let mut w = op(WindowKind::Session { gap_ms: 10 }, 100);
        let mut got = Collect::wanting_retractions();
        drive_into(&mut *w, &input, &mut got);
        let seq: Vec<(&str, bool)> = got
            .emitted
            .iter()
            .filter(|e| !e.line.contains("\"window_start\":40"))
            .map(|e| (e.line.as_str(), e.retract))
            .collect();
        let retracted: Vec<&str> = seq.iter().filter(|s| s.1).map(|s| s.0).collect();
        assert_eq!(seq.first(), Some(&(s0, false)));
        assert_eq!(seq.last(), Some(&(merged, false)));
        assert_eq!(seq.len(), 5, "{seq:?}");
        let mut retracted = retracted;
        retracted.sort();
        assert_eq!(retracted, [s0, s20]);
        // Nobody consumes retractions: only results.
        let got = drive(&mut *op(WindowKind::Session { gap_ms: 10 }, 100), &input);
        assert!(got.emitted.iter().all(|e| !e.retract));
        assert_eq!(
            got.lines
                .iter()
                .filter(|l| l.contains("\"k\":\"a\""))
                .count(),
            4
        );
    }

    #[test]
    fn a_session_extended_past_the_watermark_retracts_now_and_fires_later() {
        // [0,10) fired at 9; an event at 8 (late, within lateness) extends it to [0,18), which is
        // still open at watermark 12: the old result is withdrawn now, the new one fires at 17.
        let mut w = op(WindowKind::Session { gap_ms: 10 }, 100);
        let mut got = Collect::wanting_retractions();
        drive_into(
            &mut *w,
            &[(ev("a", 0, 1), i64::MIN), (ev("a", 8, 2), 12)],
            &mut got,
        );
        let seq: Vec<(&str, bool, Option<i64>)> = got
            .emitted
            .iter()
            .map(|e| (e.line.as_str(), e.retract, e.cause))
            .collect();
        assert_eq!(
            seq,
            [
                (
                    r#"{"k":"a","window_start":0,"window_end":10,"n":1,"s":1}"#,
                    false,
                    None
                ),
                (
                    r#"{"k":"a","window_start":0,"window_end":10,"n":1,"s":1}"#,
                    true,
                    Some(8)
                ),
                (
                    r#"{"k":"a","window_start":0,"window_end":18,"n":2,"s":3}"#,
                    false,
                    None
                ),
            ]
        );
    }
}
