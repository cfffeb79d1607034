//! End-to-end window tests: the real `sluice` binary on generated and hand-written NDJSON files,
//! every emitted line compared with the reference model in `common`, whose own behaviour is pinned
//! by hand-worked examples first.

mod common;

use common::*;
use serde_json::{json, Value};

const K: &str = "k";

fn kv(ts: i64, k: &str, v: i64) -> String {
    format!("{{\"ts\":{ts},\"k\":\"{k}\",\"v\":{v}}}")
}

fn kv_job(window: Win, ooo_ms: i64, lateness_ms: i64, with_stats: bool) -> Job {
    let mut aggs = vec![
        ("c".to_string(), Agg::Count),
        ("s".to_string(), Agg::Sum("v".into())),
    ];
    if with_stats {
        aggs.push(("lo".into(), Agg::Min("v".into())));
        aggs.push(("hi".into(), Agg::Max("v".into())));
        aggs.push(("mean".into(), Agg::Avg("v".into())));
    }
    Job {
        window,
        group_by: vec![K.into()],
        aggs,
        ts_field: "ts".into(),
        ooo_ms,
        lateness_ms,
    }
}

fn r(k: Value, start: i64, end: i64, vals: &[(&str, AggVal)]) -> Row {
    Row {
        group: vec![k],
        start,
        end,
        aggs: vals
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
    }
}

fn stats(c: i64, s: i64, lo: i64, hi: i64, mean: f64) -> Vec<(&'static str, AggVal)> {
    use AggVal::*;
    vec![
        ("c", Int(c)),
        ("s", Int(s)),
        ("lo", Int(lo)),
        ("hi", Int(hi)),
        ("mean", Float(mean)),
    ]
}

/// Tumbling 10 s, bound 2 s, lateness 3 s. The comment on each event is its watermark on arrival.
fn boundary_events() -> Vec<String> {
    vec![
        kv(0, "a", 1),         // -inf
        kv(9_999, "a", 2),     // -2000
        kv(11_998, "a", 4),    // 7999
        kv(11_999, "a", 0),    // 9998: one short of [0,10s)'s last ms, nothing fires
        kv(12_000, "a", 8),    // 9999 = end-1: [0,10s) fires with c=2 s=3 before this event
        kv(9_999, "a", 16),    // 10000: late but within lateness, re-fires c=3
        kv(14_998, "a", 32),   // 10000
        kv(5_000, "a", 64),    // 12998 = end-1+lateness-1: last chance, re-fires c=4
        kv(14_999, "a", 128),  // 12998
        kv(0, "a", 256),       // 12999 = end-1+lateness: beyond lateness -> late output
        kv(-1, "a", 512),      // 12999: window [-10s,0) long gone -> late output
        kv(22_001, "a", 1024), // 12999
    ]
}

fn boundary_expected() -> Vec<Row> {
    let a = json!("a");
    vec![
        r(a.clone(), 0, 10_000, &stats(2, 3, 1, 2, 1.5)),
        r(a.clone(), 0, 10_000, &stats(3, 19, 1, 16, 19.0 / 3.0)),
        r(a.clone(), 0, 10_000, &stats(4, 83, 1, 64, 20.75)),
        r(a.clone(), 10_000, 20_000, &stats(5, 172, 0, 128, 34.4)),
        r(a, 20_000, 30_000, &stats(1, 1024, 1024, 1024, 1024.0)),
    ]
}

#[test]
fn model_matches_hand_worked_boundary_example() {
    let lines = boundary_events();
    let m = model(
        &kv_job(Win::Tumbling { size: 10_000 }, 2_000, 3_000, true),
        &[&file_of(&lines)],
    );
    assert_eq!(m.rows, boundary_expected());
    assert_eq!(m.late, vec![lines[9].clone(), lines[10].clone()]);
    assert_eq!((m.refires, m.valid_events), (2, 12));
    assert!(m.malformed.is_empty());
}

#[test]
fn model_assigns_windows_with_floor_division() {
    assert_eq!(Win::Tumbling { size: 7_000 }.assign(-1), vec![(-7_000, 0)]);
    assert_eq!(Win::Tumbling { size: 7_000 }.assign(0), vec![(0, 7_000)]);
    assert_eq!(
        Win::Tumbling { size: 7_000 }.assign(6_999),
        vec![(0, 7_000)]
    );
    let sliding = Win::Sliding {
        size: 10_000,
        slide: 5_000,
    };
    assert_eq!(sliding.assign(7_000), vec![(0, 10_000), (5_000, 15_000)]);
    assert_eq!(sliding.assign(5_000), vec![(0, 10_000), (5_000, 15_000)]);
    assert_eq!(sliding.assign(-3_000), vec![(-10_000, 0), (-5_000, 5_000)]);
    assert_eq!(
        Win::Sliding {
            size: 9_000,
            slide: 3_000
        }
        .assign(0),
        vec![(-6_000, 3_000), (-3_000, 6_000), (0, 9_000)]
    );
    let cumulative = Win::Cumulative {
        step: 10_000,
        max_size: 30_000,
    };
    assert_eq!(
        cumulative.assign(42_000),
        vec![(30_000, 50_000), (30_000, 60_000)]
    );
    assert_eq!(
        cumulative.assign(30_000),
        vec![(30_000, 40_000), (30_000, 50_000), (30_000, 60_000)]
    );
    assert_eq!(cumulative.assign(-1), vec![(-30_000, 0)]);
    assert_eq!(
        split_lines("ab\n\ncd\nx"),
        vec![(0, "ab"), (3, ""), (4, "cd"), (7, "x")]
    );
}

/// Gap 10 s, bound 5 s, lateness 20 s, hand-worked (watermark on arrival in the comments).
fn session_events() -> Vec<String> {
    vec![
        kv(0, "a", 1),       // -inf: [0,10s)
        kv(14_000, "a", 2),  // -5000: [14s,24s), 14 s > gap apart
        kv(9_500, "a", 4),   // 9000: bridges both -> [0,24s), nothing fired yet
        kv(40_000, "a", 8),  // 9000: [40s,50s)
        kv(41_000, "a", 16), // 35000: [0,24s) fires c=3 s=7; -> [40s,51s)
        kv(20_000, "a", 32), // 36000: joins fired [0,24s) -> [0,30s), re-fires at once c=4 s=39
        kv(9_000, "b", 64),  // 36000: new key, [9s,19s) within lateness, fires at once
        kv(1_000, "a", 128), // 36000: [1s,11s) alone is late, but it merges into [0,30s) whose
        //                       29999+20000 > 36000: kept (Flink judges the merged window), re-fires c=5 s=167
        kv(70_000, "a", 256), // 36000: [70s,80s)
    ]
}

fn session_expected() -> Vec<Row> {
    use AggVal::Int;
    let (a, b) = (json!("a"), json!("b"));
    vec![
        r(a.clone(), 0, 24_000, &[("c", Int(3)), ("s", Int(7))]),
        r(a.clone(), 0, 30_000, &[("c", Int(4)), ("s", Int(39))]),
        r(b, 9_000, 19_000, &[("c", Int(1)), ("s", Int(64))]),
        r(a.clone(), 0, 30_000, &[("c", Int(5)), ("s", Int(167))]),
        r(a.clone(), 40_000, 51_000, &[("c", Int(2)), ("s", Int(24))]),
        r(a, 70_000, 80_000, &[("c", Int(1)), ("s", Int(256))]),
    ]
}

#[test]
fn model_matches_hand_worked_sessions() {
    let lines = session_events();
    let m = model(
        &kv_job(Win::Session { gap: 10_000 }, 5_000, 20_000, false),
        &[&file_of(&lines)],
    );
    assert_eq!(m.rows, session_expected());
    assert!(
        m.late.is_empty(),
        "the late event merges into a session within lateness"
    );
    assert_eq!(
        (m.refires, m.bridging_merges, m.ambiguous_session_merges),
        (2, 1, 0)
    );
}

#[test]
fn model_finished_partition_stops_holding_the_watermark() {
    use AggVal::Int;
    // p0 ends at wm 1000; p1 then drives it alone, so its ts=3000 arrives at wm 29000: late.
    let p0 = file_of(&[kv(0, "a", 1), kv(2_000, "a", 1)]);
    let p1_lines = [
        kv(500, "a", 1),
        kv(12_000, "a", 1),
        kv(30_000, "a", 1),
        kv(3_000, "a", 1),
    ];
    let m = model(
        &kv_job(Win::Tumbling { size: 10_000 }, 1_000, 0, false),
        &[&p0, "", &file_of(&p1_lines)],
    );
    let a = json!("a");
    let c = |n| [("c", Int(n)), ("s", Int(n))];
    assert_eq!(
        m.rows,
        vec![
            r(a.clone(), 0, 10_000, &c(3)),
            r(a.clone(), 10_000, 20_000, &c(1)),
            r(a, 30_000, 40_000, &c(1))
        ]
    );
    assert_eq!(m.late, vec![p1_lines[3].clone()]);
}

#[test]
fn boundary_events_match_hand_worked_output() {
    let lines = boundary_events();
    let job = kv_job(Win::Tumbling { size: 10_000 }, 2_000, 3_000, true);
    let m = check_single_file(&job, &file_of(&lines), VARIANTS);
    assert_eq!(
        m.rows,
        boundary_expected(),
        "the model drifted from the hand-worked example"
    );
}

#[test]
fn sessions_merge_and_refire_as_hand_worked() {
    let job = kv_job(Win::Session { gap: 10_000 }, 5_000, 20_000, false);
    let m = check_single_file(&job, &file_of(&session_events()), VARIANTS);
    assert_eq!(m.rows, session_expected());
}

fn lines_of(g: &[(i64, String)]) -> Vec<String> {
    g.iter().map(|(_, l)| l.clone()).collect()
}

#[test]
fn out_of_order_within_the_bound_loses_nothing() {
    let gen = Gen::new(3_000, 5_000);
    let events = gen_lines(11, &gen);
    let inversions = events.windows(2).filter(|w| w[1].0 < w[0].0).count();
    assert!(
        inversions > 500,
        "input must really be out of order ({inversions} inversions)"
    );
    let job = Job::clicks(Win::Tumbling { size: 60_000 }, 5_000, 0);
    let m = check_single_file(&job, &file_of(&lines_of(&events)), VARIANTS);
    assert!(m.late.is_empty() && m.refires == 0 && m.rows.len() > 40);
}

#[test]
fn late_events_within_and_beyond_lateness() {
    let mut gen = Gen::new(3_000, 5_000);
    gen.late_permille = 40;
    gen.late_extra = 60_000;
    let content = file_of(&lines_of(&gen_lines(12, &gen)));
    let job = Job::clicks(Win::Tumbling { size: 60_000 }, 5_000, 30_000);
    let m = check_single_file(&job, &content, VARIANTS);
    assert!(
        m.late.len() >= 10,
        "want events beyond lateness, got {}",
        m.late.len()
    );
    assert!(
        m.refires >= 10,
        "want re-fires within lateness, got {}",
        m.refires
    );
}

#[test]
fn sliding_windows() {
    let mut gen = Gen::new(2_500, 5_000);
    gen.late_permille = 40;
    gen.late_extra = 100_000;
    let content = file_of(&lines_of(&gen_lines(13, &gen)));
    let job = Job::clicks(
        Win::Sliding {
            size: 60_000,
            slide: 20_000,
        },
        5_000,
        10_000,
    );
    let m = check_single_file(&job, &content, VARIANTS);
    assert!(!m.late.is_empty() && m.refires > 0);
}

#[test]
fn cumulative_windows() {
    let mut gen = Gen::new(2_500, 5_000);
    gen.late_permille = 40;
    gen.late_extra = 100_000;
    let content = file_of(&lines_of(&gen_lines(14, &gen)));
    let job = Job::clicks(
        Win::Cumulative {
            step: 20_000,
            max_size: 60_000,
        },
        5_000,
        10_000,
    );
    let m = check_single_file(&job, &content, VARIANTS);
    assert!(!m.late.is_empty() && m.refires > 0);
}

#[test]
fn session_windows_merge_out_of_order() {
    // Even timestamps and an odd gap: no two events are exactly `gap` apart (A5).
    let mut gen = Gen::new(3_000, 4_000);
    gen.even_ts = true;
    gen.step_max = 900;
    let content = file_of(&lines_of(&gen_lines(15, &gen)));
    let job = Job::clicks(Win::Session { gap: 3_001 }, 4_000, 0);
    let m = check_single_file(&job, &content, VARIANTS);
    assert!(
        m.bridging_merges >= 5,
        "want sessions bridged by out-of-order events, got {}",
        m.bridging_merges
    );
    assert!(m.rows.len() > 100 && m.late.is_empty());
}

#[test]
fn multi_field_group_by_string_and_number() {
    let mut gen = Gen::new(2_000, 5_000);
    gen.late_permille = 20;
    gen.late_extra = 30_000;
    let content = file_of(&lines_of(&gen_lines(16, &gen)));
    let mut job = Job::clicks(Win::Tumbling { size: 30_000 }, 5_000, 10_000);
    job.group_by = vec!["ad_id".into(), "region".into()];
    let m = check_single_file(&job, &content, VARIANTS);
    let regions: std::collections::BTreeSet<String> =
        m.rows.iter().map(|r| r.group[1].to_string()).collect();
    assert_eq!(
        regions.len(),
        3,
        "every numeric region must appear as its own group"
    );
    assert!(m
        .rows
        .iter()
        .all(|r| r.group[0].is_string() && r.group[1].is_i64()));
}

#[test]
fn negative_and_zero_timestamps() {
    let mut gen = Gen::new(1_500, 2_000);
    gen.base = -100_000;
    gen.step_max = 150;
    gen.late_permille = 30;
    gen.late_extra = 10_000;
    let mut lines = lines_of(&gen_lines(17, &gen));
    lines.insert(400, click_line(0, 1, 0, 1, Some(Some(7))));
    let job = Job::clicks(
        Win::Sliding {
            size: 9_000,
            slide: 3_000,
        },
        2_000,
        3_000,
    );
    let m = check_single_file(&job, &file_of(&lines), VARIANTS);
    assert!(
        m.rows.iter().any(|r| r.start < 0 && r.end > 0),
        "windows must straddle epoch 0"
    );
    let job = Job::clicks(Win::Tumbling { size: 7_000 }, 2_000, 3_000);
    check_single_file(&job, &file_of(&lines), VARIANTS);
}

#[test]
fn malformed_lines_go_to_dead_letter_and_nothing_else_is_lost() {
    let mut gen = Gen::new(2_000, 5_000);
    gen.null_permille = 50;
    gen.late_permille = 20;
    gen.late_extra = 30_000;
    let mut lines = lines_of(&gen_lines(18, &gen));
    let bad = [
        "{\"ts\":1700000000000,\"ad_id\":\"ad-1\"".to_string(), // truncated JSON
        "not json at all".to_string(),
        "{\"ad_id\":\"ad-1\",\"user_id\":\"u1\",\"bid\":5}".to_string(), // no ts
        "{\"ts\":\"1700000000000\",\"ad_id\":\"ad-1\",\"user_id\":\"u1\",\"bid\":5}".to_string(),
        "{\"ts\":null,\"ad_id\":\"ad-1\",\"user_id\":\"u1\",\"bid\":5}".to_string(),
        "[1,2,3]".to_string(),
        format!(
            "{{\"ts\":{},\"ad_id\":\"ad-2\",\"user_id\":\"u2\",\"bid\":\"12\"}}",
            BASE + 100_000
        ), // bid a string
    ];
    let mut rng = Rng::new(99);
    for i in 0..70 {
        let at = 1 + rng.below(lines.len() as i64 - 1) as usize;
        lines.insert(at, bad[i % bad.len()].clone());
    }
    let job = Job::clicks(Win::Tumbling { size: 60_000 }, 5_000, 20_000);
    let m = check_single_file(&job, &file_of(&lines), VARIANTS);
    assert_eq!(m.malformed.len(), 70);
    assert_eq!(m.valid_events, 2_000);
}

/// a_empty (nothing), b_short (40 events, done early), c_long (2000 events, late events only in its
/// second half, so far past the chunks where b_short could still be unfinished), d_empty.
fn partition_files(late: bool) -> Vec<(&'static str, String)> {
    let mut short = Gen::new(40, 5_000);
    short.base = BASE + 5_000;
    short.step_max = 200;
    let mut long = Gen::new(2_000, 5_000);
    long.base = BASE + 5_000;
    long.step_max = 600;
    if late {
        long.late_permille = 60;
        long.late_extra = 40_000;
        long.late_from = 1_000;
    }
    vec![
        ("a_empty.ndjson", String::new()),
        ("b_short.ndjson", file_of(&lines_of(&gen_lines(21, &short)))),
        ("c_long.ndjson", file_of(&lines_of(&gen_lines(22, &long)))),
        ("d_empty.ndjson", String::new()),
    ]
}

#[test]
fn finished_and_empty_partitions_do_not_hold_the_watermark() {
    let files = partition_files(true);
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, content) in &files {
        input_file(dir.path(), &format!("parts/{name}"), content);
    }
    assert!(files[1].1.len() < 4_096 && files[2].1.len() > 30 * 4_096);
    let job = Job::clicks(Win::Tumbling { size: 60_000 }, 5_000, 10_000);
    let contents: Vec<&str> = files.iter().map(|(_, c)| c.as_str()).collect();
    let m = model(&job, &contents);
    assert!(
        m.late.len() >= 5 && m.refires >= 5,
        "late {} refires {}",
        m.late.len(),
        m.refires
    );
    let glob = dir.path().join("parts/*.ndjson");
    // One shard reads every file, round-robin in path order; b_short fits one chunk.
    for v in [rt(1, 16, 4_096), rt(1, 1_024, 16_384)] {
        let o = run_job(dir.path(), &job, v, &glob.to_string_lossy());
        let ctx = format!("partitions {v:?}");
        assert_rows_match(&job, &o.out, &m.rows, &ctx);
        assert_eq!(
            sorted(&o.late),
            sorted(&m.late),
            "{ctx}: late events (held watermark?)"
        );
        assert!(o.dead.is_empty(), "{ctx}: dead letters {:?}", o.dead);
    }
}

#[test]
fn several_files_on_several_shards_lose_nothing() {
    let files = partition_files(false);
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, content) in &files {
        input_file(dir.path(), &format!("parts/{name}"), content);
    }
    let job = Job::clicks(Win::Tumbling { size: 60_000 }, 5_000, 0);
    let contents: Vec<&str> = files.iter().map(|(_, c)| c.as_str()).collect();
    let m = model(&job, &contents);
    assert!(m.late.is_empty() && m.refires == 0);
    let glob = dir.path().join("parts/*.ndjson");
    for v in [rt(2, 16, 4_096), rt(3, 64, 200), rt(2, 8_192, 1 << 20)] {
        let o = run_job(dir.path(), &job, v, &glob.to_string_lossy());
        let ctx = format!("several files {v:?}");
        assert_final_match(&job, &o.out, &m.rows, &ctx);
        assert!(
            o.late.is_empty() && o.dead.is_empty(),
            "{ctx}: late {:?} dead {:?}",
            o.late,
            o.dead
        );
    }
}
