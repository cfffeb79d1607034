//! Tests of the rendering: the text parses the way `promtool check metrics` would, shows what the
//! shards published, and is byte for byte what the single `render` function produced before it
//! was split into a function per family (goldens in `golden/`, captured from that code).

use super::*;
use std::time::{SystemTime, UNIX_EPOCH};

/// Checks the text the way `promtool check metrics` would for what we emit: every sample line
/// is `name{labels} value` with a finite number, its family has HELP and TYPE lines before it,
/// counters end in `_total`, and no family is declared twice.
pub fn check_exposition(text: &str) -> Result<usize, String> {
    let mut types: std::collections::HashMap<String, String> = Default::default();
    let mut samples = 0;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').ok_or(format!("bad TYPE: {line}"))?;
            if types.insert(name.to_string(), kind.to_string()).is_some() {
                return Err(format!("{name} declared twice"));
            }
            if kind == "counter" && !name.ends_with("_total") {
                return Err(format!("counter {name} does not end in _total"));
            }
            continue;
        }
        if line.starts_with("# HELP ") || line.is_empty() {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').ok_or(format!("bad sample: {line}"))?;
        let name = series.split('{').next().unwrap_or_default();
        if !types.contains_key(name) {
            return Err(format!("{name} has no TYPE before its samples"));
        }
        let v: f64 = value.parse().map_err(|_| format!("bad value: {line}"))?;
        if !v.is_finite() {
            return Err(format!("not finite: {line}"));
        }
        if series.contains('{') && !series.ends_with('}') {
            return Err(format!("bad labels: {line}"));
        }
        samples += 1;
    }
    Ok(samples)
}

#[test]
fn render_is_valid_exposition_and_shows_what_the_shards_published() {
    let mut live = Live::new(2, vec!["w".into()]);
    live.source_names = vec!["clicks".into()];
    live.partition_names = vec!["data/a.ndjson".into()];
    let mut stats = ShardStats {
        events_in: 42,
        events_processed: 10,
        events_combined: 30,
        partials_merged: 2,
        hot_keys: vec![(0, "\"ad-0\"".into(), 0.8)],
        ..ShardStats::default()
    };
    stats.dead_by_reason[dead_reason_class("invalid JSON: expected a value")] = 2;
    stats.busy = Duration::from_millis(1500);
    live.publish(
        1,
        ShardSnapshot {
            stats,
            watermark_ms: 1_700_000_000_000,
            ring_events: 7,
            latency_us: [100, 200, 300, 400],
            event_latency_ms: [1000, 2000, 3000, 4000],
            op_state: vec![(7, 4096)],
            source_read_ms: vec![1_700_000_000_000],
            partition_wm_ms: Vec::new(),
            alignment_paused: Vec::new(),
            log_lag: vec![(0, 90, 100)],
            at: Some(std::time::Instant::now()),
        },
    );
    live.publish(
        0,
        ShardSnapshot {
            alignment_paused: vec![5],
            ..ShardSnapshot::default()
        },
    );
    *live.checkpoint.lock().unwrap() = Some(CheckpointMetrics {
        completed: 3,
        ..CheckpointMetrics::default()
    });
    let text = live.render();
    let n = check_exposition(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(n > 30, "{text}");
    assert!(
        text.contains("sluice_hot_key_share{operator=\"w\",shard=\"1\",key=\"\\\"ad-0\\\"\"} 0.8"),
        "{text}"
    );
    assert!(
        text.contains("sluice_events_combined_total{shard=\"1\"} 30"),
        "{text}"
    );
    // Shard 1 did all 42 units of work, shard 0 none: twice the mean.
    assert!(text.contains("sluice_load_max_over_avg 2\n"), "{text}");
    assert!(
        text.contains("sluice_events_in_total{shard=\"1\"} 42\n"),
        "{text}"
    );
    assert!(
        text.contains("sluice_busy_seconds_total{shard=\"1\"} 1.5\n"),
        "{text}"
    );
    assert!(text.contains("sluice_ring_events{shard=\"1\"} 7\n"));
    assert!(text.contains("sluice_watermark_seconds{shard=\"1\"} 1700000000\n"));
    assert!(
        !text.contains("sluice_watermark_seconds{shard=\"0\"}"),
        "no watermark yet"
    );
    assert!(text
        .contains("sluice_ingest_to_emit_latency_seconds{shard=\"1\",quantile=\"0.99\"} 0.0003\n"));
    assert!(text.contains("sluice_checkpoints_completed_total 3\n"));
    assert!(
        text.contains(
            "sluice_partition_alignment_paused_rounds_total{partition=\"data/a.ndjson\"} 5\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("sluice_kafka_partition_record_lag{partition=\"data/a.ndjson\"} 10\n"),
        "{text}"
    );
    assert!(
        text.contains("sluice_event_to_emit_latency_seconds{shard=\"1\",quantile=\"0.99\"} 3\n")
    );
    assert!(
        text.contains("sluice_operator_keys{operator=\"w\"} 7\n"),
        "{text}"
    );
    assert!(text.contains("sluice_operator_state_bytes{operator=\"w\"} 4096\n"));
    assert!(
        text.contains(
            "sluice_dead_letters_by_reason_total{shard=\"1\",reason=\"invalid_json\"} 2\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("sluice_source_time_lag_seconds{source=\"clicks\"} "),
        "{text}"
    );
    assert!(
        !text.contains("sluice_partition_watermark_seconds{"),
        "shard 0 published none"
    );
    assert!(text.contains("sluice_ready 0\n"));
    live.ready.store(true, Ordering::Release);
    assert!(live.render().contains("sluice_ready 1\n"));
    live.draining.store(true, Ordering::Release);
    assert!(!live.is_ready(), "draining is not ready");
}

#[test]
fn dead_letter_reasons_fall_into_their_classes() {
    let c = |r: &str| DEAD_REASONS[dead_reason_class(r)];
    assert_eq!(c("invalid JSON: unexpected end"), "invalid_json");
    assert_eq!(c("missing event time field `ts`"), "missing_time");
    assert_eq!(
        c("field `ts` is 7200 s ahead of the wall clock (max_future 3600 s): x"),
        "clock_skew"
    );
    assert_eq!(
        c("field `ts` is before 1970 (-5 ms); set ..."),
        "negative_time"
    );
    assert_eq!(
        c("field `bid` is not a number (aggregates over it need one)"),
        "not_a_number"
    );
    assert_eq!(c("line is 9000 bytes; max_line_bytes is 100"), "too_long");
    assert_eq!(
        c("select `p`, field `x`: `a * b` at column 1: ..."),
        "expression"
    );
    assert_eq!(c("field `ts` must be a number (event time)"), "bad_time");
    assert_eq!(c("something new"), "other");
}

/// A job with three shards, three operators (a window, a join, a dedupe), three sources and
/// four partitions (two of them Kafka), hot keys, dead letters and a checkpoint: every family
/// has rows, and every merge across shards (max, sum, shorter vectors) is exercised.
fn busy_live() -> Live {
    let mut live = Live::new(
        3,
        vec!["clicks_per_ad".into(), "ab".into(), "dedupe".into()],
    );
    live.source_names = vec!["clicks".into(), "impressions".into(), "never_read".into()];
    live.partition_names = vec![
        "data/a.ndjson".into(),
        "kafka:clicks/0".into(),
        "kafka:clicks/1".into(),
        "odd \"name\" \\ here".into(),
    ];
    // No brokers: the logs say where they started and answer for no end, so only `starts` count.
    live.log_ends = vec![Box::new(Starts(vec![(1, 100), (2, 10), (3, 5), (9, 0)]))];
    let join = |buffered: [u64; 2]| crate::metrics::OperatorReport {
        rows: Some(crate::metrics::JoinStats {
            buffered,
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut s0 = ShardStats {
        events_in: 1000,
        events_processed: 900,
        events_combined: 50,
        partials_merged: 5,
        busy: Duration::from_millis(1250),
        backpressured: Duration::from_micros(500_001),
        idle: Duration::from_secs(2),
        dead_letters: 3,
        late_dropped: 4,
        late_to_side_output: 1,
        fired: 17,
        refired: 2,
        records_filtered: 11,
        bytes_read: 123_456,
        checkpoint_time: Duration::from_micros(12_500),
        operators: vec![Default::default(), join([5, 6]), join([0, 9])],
        hot_keys: vec![(0, "ad-7".into(), 0.25), (0, "\"quoted\"".into(), 0.125)],
        ..ShardStats::default()
    };
    s0.dead_by_reason[0] = 2;
    s0.dead_by_reason[6] = 1;
    let mut s1 = ShardStats {
        events_in: 333,
        events_processed: 300,
        partials_merged: 40,
        busy: Duration::from_nanos(1),
        dead_letters: 1,
        late_to_side_output: 7,
        bytes_read: 99,
        operators: vec![Default::default(), join([1, 2])],
        hot_keys: vec![(2, "k".into(), 0.5), (9, "orphan".into(), 0.1)],
        ..ShardStats::default()
    };
    s1.dead_by_reason[8] = 1;
    let now = std::time::Instant::now();
    live.publish(
        0,
        ShardSnapshot {
            stats: s0,
            watermark_ms: 1_700_000_000_000,
            ring_events: 12,
            latency_us: [123, 4567, 89_012, 1_234_567],
            event_latency_ms: [5, 250, 1001, 60_000],
            op_state: vec![(10, 1000), (3, 300), (4, 40)],
            source_read_ms: vec![1_700_000_000_000, i64::MIN, i64::MIN],
            partition_wm_ms: vec![
                1_700_000_000_000,
                1_700_000_001_500,
                i64::MIN,
                1_699_999_999_250,
            ],
            alignment_paused: vec![0, 3, 1, 7],
            log_lag: vec![(1, 120, 200)],
            at: Some(now),
        },
    );
    live.publish(
        1,
        ShardSnapshot {
            stats: s1,
            watermark_ms: 1_700_000_002_345,
            ring_events: 0,
            latency_us: [1, 2, 3, 4],
            event_latency_ms: [0, 0, 0, 7],
            op_state: vec![(5, 500)],
            source_read_ms: vec![1_699_999_000_000, 1_700_000_003_000],
            partition_wm_ms: vec![1, 2, 3, 4],
            alignment_paused: vec![9, 9, 9, 9],
            log_lag: vec![(1, 150, 180), (2, 40, -1)],
            at: Some(now),
        },
    );
    *live.checkpoint.lock().unwrap() = Some(CheckpointMetrics {
        completed: 12,
        failed: 1,
        last_completed_id: 12,
        last_duration_ms: 234.5,
        last_alignment_ms: 12.25,
        last_size_bytes: 987_654,
        last_completed_at: Some(now),
        ..CheckpointMetrics::default()
    });
    live.ready.store(true, Ordering::Release);
    live
}

/// `text` with each listed series' value replaced by `<clock>`, after checking it lies in
/// its range: these values are measured against the clock while rendering, so only a range
/// is known, and the rest of the text can then be compared byte for byte.
fn mask_clock(text: &str, ranges: &[(String, f64, f64)]) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let range = line
            .rsplit_once(' ')
            .and_then(|(series, v)| Some((series, v, ranges.iter().find(|r| r.0 == series)?)));
        match range {
            Some((series, v, (_, lo, hi))) => {
                let v: f64 = v.parse().unwrap_or(f64::NAN);
                assert!(*lo <= v && v <= *hi, "{series} = {v}, not in {lo}..={hi}");
                out.push_str(series);
                out.push_str(" <clock>");
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[test]
fn render_of_a_busy_job_matches_the_golden_text() {
    let live = busy_live();
    let at = live.shards[0].lock().unwrap().at.unwrap();
    let unix_ms = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    };
    let (before, before_ms) = (std::time::Instant::now(), unix_ms());
    let text = live.render();
    let (after, after_ms) = (std::time::Instant::now(), unix_ms());
    check_exposition(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let since = |series: &str| {
        let lo = before.duration_since(at).as_secs_f64();
        (
            series.to_string(),
            lo,
            after.duration_since(at).as_secs_f64(),
        )
    };
    let lag = |series: &str, t: i64| {
        let secs = |now: i64| now.saturating_sub(t) as f64 / 1e3;
        (series.to_string(), secs(before_ms), secs(after_ms))
    };
    let ranges = [
        since("sluice_shard_unresponsive_seconds{shard=\"0\"}"),
        since("sluice_shard_unresponsive_seconds{shard=\"1\"}"),
        since("sluice_checkpoint_age_seconds"),
        lag(
            "sluice_watermark_lag_seconds{shard=\"0\"}",
            1_700_000_000_000,
        ),
        lag(
            "sluice_watermark_lag_seconds{shard=\"1\"}",
            1_700_000_002_345,
        ),
        lag(
            "sluice_source_time_lag_seconds{source=\"clicks\"}",
            1_700_000_000_000,
        ),
        lag(
            "sluice_source_time_lag_seconds{source=\"impressions\"}",
            1_700_000_003_000,
        ),
        lag(
            "sluice_kafka_partition_time_lag_seconds{partition=\"kafka:clicks/0\"}",
            1_700_000_001_500,
        ),
        lag(
            "sluice_kafka_partition_time_lag_seconds{partition=\"odd \\\"name\\\" \\\\ here\"}",
            1_699_999_999_250,
        ),
    ];
    let masked = mask_clock(&text, &ranges);
    assert_eq!(masked.matches("<clock>").count(), ranges.len(), "{masked}");
    if masked != GOLDEN_BUSY {
        panic!("rendering changed:\n{masked}");
    }
}

#[test]
fn render_of_an_idle_job_matches_the_golden_text() {
    let text = Live::new(1, Vec::new()).render();
    check_exposition(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    if text != GOLDEN_IDLE {
        panic!("rendering changed:\n{text}");
    }
}

/// What the single ~440-line `render` produced for `busy_live()` before it was split into a
/// function per family (captured from that code, clock values masked).
const GOLDEN_BUSY: &str = include_str!("golden/busy.txt");

/// What that `render` produced for one shard that has published nothing.
const GOLDEN_IDLE: &str = include_str!("golden/idle.txt");

#[test]
fn the_checker_catches_what_promtool_would() {
    assert!(check_exposition("# TYPE a_total counter\na_total 1\n").is_ok());
    assert!(check_exposition("a_total 1\n").is_err(), "no TYPE");
    assert!(
        check_exposition("# TYPE a counter\na 1\n").is_err(),
        "counter without _total"
    );
    assert!(
        check_exposition("# TYPE a gauge\na x\n").is_err(),
        "not a number"
    );
}

/// Log partitions that started at these offsets and whose ends are unknown.
struct Starts(Vec<(u16, i64)>);

impl crate::metrics::LogEnds for Starts {
    fn starts(&self) -> Vec<(u16, i64)> {
        self.0.clone()
    }

    fn ends(&self) -> Vec<(u16, i64)> {
        Vec::new()
    }
}
