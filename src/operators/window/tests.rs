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
