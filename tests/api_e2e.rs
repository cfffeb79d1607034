//! The metrics endpoint through the real binary: while a job runs, `/health` answers, `/ready` is
//! 200, `/metrics` is valid Prometheus text whose event counters grow between scrapes, and
//! `sluice top` shows one line per shard; SIGTERM still drains and exits 0.

mod common;

use common::{free_addr, get, sluice, sum, wait_healthy, BIN};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Every sample has a TYPE before it and a numeric value; counters end in _total.
fn valid(text: &str) -> bool {
    let mut typed = std::collections::HashSet::new();
    text.lines().all(|l| {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            let mut w = rest.split(' ');
            let (name, kind) = (w.next().unwrap_or(""), w.next().unwrap_or(""));
            typed.insert(name.to_string());
            return kind != "counter" || name.ends_with("_total");
        }
        if l.starts_with('#') || l.is_empty() {
            return true;
        }
        let Some((series, v)) = l.rsplit_once(' ') else {
            return false;
        };
        typed.contains(series.split('{').next().unwrap_or("")) && v.parse::<f64>().is_ok()
    })
}

#[test]
fn metrics_health_readiness_and_top_while_a_job_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let addr = free_addr();
    let cfg = d.join("job.toml");
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 2\n\n[sources.clicks]\ntype = \"generator\"\nevents_per_second = 1000\n\n\
             [transforms.cps]\ntype = \"window\"\ninputs = [\"clicks\"]\ngroup_by = [\"ad_id\"]\n\
             window = {{ type = \"tumbling\", size = \"1s\" }}\naggregates = {{ n = \"count()\" }}\n\n\
             [sinks.out]\ntype = \"file\"\ninputs = [\"cps\"]\npath = {:?}\n\n[api]\naddress = \"{addr}\"\n",
            d.join("out.ndjson")
        ),
    )
    .unwrap();
    let mut child = Command::new(BIN)
        .args(["run", "--config"])
        .arg(&cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_healthy(&addr);
    assert_eq!(get(&addr, "/ready").unwrap().0, 200);
    std::thread::sleep(Duration::from_millis(300));
    let (code, first) = get(&addr, "/metrics").unwrap();
    assert_eq!(code, 200);
    assert!(valid(&first), "{first}");
    std::thread::sleep(Duration::from_millis(500));
    let (_, second) = get(&addr, "/metrics").unwrap();
    let (a, b) = (
        sum(&first, "sluice_events_in_total"),
        sum(&second, "sluice_events_in_total"),
    );
    assert!(b > a && a > 0.0, "events counted grow: {a} -> {b}");
    assert!(
        sum(&second, "sluice_busy_seconds_total") + sum(&second, "sluice_idle_seconds_total") > 0.0
    );
    assert!(
        second.contains("sluice_watermark_lag_seconds{shard=\"0\"}"),
        "{second}"
    );
    assert!(
        second.contains("sluice_source_time_lag_seconds{source=\"clicks\"}")
            && second.contains("sluice_partition_watermark_seconds{partition="),
        "{second}"
    );
    let top = sluice(
        d,
        &[
            "top",
            "--address",
            &addr,
            "--every",
            "0.2",
            "--iterations",
            "1",
        ],
        Duration::from_secs(30),
    );
    assert!(top.success, "{}", top.stderr);
    assert!(
        top.stdout.contains("events/s") && top.stdout.contains("ready true"),
        "{}",
        top.stdout
    );
    assert_eq!(
        top.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(['0', '1']))
            .count(),
        2,
        "{}",
        top.stdout
    );
    // SAFETY: signals the child we spawned and have not waited for.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// A sink that stops taking output (stdout into a pipe nobody reads) backs the job up: the shards
/// block in the write, which `sluice_shard_unresponsive_seconds` shows, the watermark stops, and
/// reading all but stops — the lag stays in the source instead of in memory.
#[test]
fn a_stalled_sink_shows_as_unresponsive_shards_and_reading_stops() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let addr = free_addr();
    let cfg = d.join("job.toml");
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 2\nring_capacity = 1024\n\n[sources.clicks]\ntype = \"generator\"\n\n\
             [transforms.cps]\ntype = \"window\"\ninputs = [\"clicks\"]\ngroup_by = [\"ad_id\"]\n\
             window = {{ type = \"tumbling\", size = \"1s\" }}\naggregates = {{ n = \"count()\" }}\n\n\
             [sinks.out]\ntype = \"stdout\"\ninputs = [\"cps\"]\n\n[api]\naddress = \"{addr}\"\n"
        ),
    )
    .unwrap();
    // stdout is a pipe this test never reads: once its buffer is full, writes block.
    let mut child = Command::new(BIN)
        .args(["run", "--config"])
        .arg(&cfg)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_healthy(&addr);
    // Let the pipe fill, then watch for a second.
    std::thread::sleep(Duration::from_millis(1500));
    let (_, a) = get(&addr, "/metrics").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let (_, b) = get(&addr, "/metrics").unwrap();
    let _ = child.kill();
    let _ = child.wait();
    // The shards are stuck writing to the sink: their loops stop turning, which the
    // unresponsive gauge shows, and the watermark stops with them (its lag grows by the second).
    let stuck = |t: &str| -> f64 {
        t.lines()
            .filter(|l| l.starts_with("sluice_shard_unresponsive_seconds{"))
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
            .fold(0.0, f64::max)
    };
    assert!(
        stuck(&b) > 1.0,
        "a shard blocked on the sink: {:.2} s",
        stuck(&b)
    );
    let lag = |t: &str| sum(t, "sluice_watermark_lag_seconds");
    assert!(
        lag(&b) - lag(&a) > 1.5,
        "watermark lag grows: {} -> {}",
        lag(&a),
        lag(&b)
    );
    let (ra, rb) = (
        sum(&a, "sluice_events_in_total"),
        sum(&b, "sluice_events_in_total"),
    );
    assert!(rb - ra < 100_000.0, "reading all but stops: {ra} -> {rb}");
}
