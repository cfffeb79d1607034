//! The metrics endpoint through the real binary: while a job runs, `/health` answers, `/ready` is
//! 200, `/metrics` is valid Prometheus text whose event counters grow between scrapes, and
//! `sluice top` shows one line per shard; SIGTERM still drains and exits 0. Other clients cannot
//! hold a probe up: half-sent requests, a client that stops reading a large `/metrics` body and
//! connections past `max_connections` each leave `/health` answering within a second, and a
//! non-loopback address needs `allow_remote`.

mod common;

use common::{
    closed_within, free_addr, get, half_request, non_reader, peer_closed, sluice, sum, timed_get,
    wait_healthy, BIN,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    // The shards are stuck writing to the sink: their loops stop turning, which the
    // unresponsive gauge shows, and the watermark stops with them (its lag grows by the second).
    let stuck = |t: &str| -> f64 {
        t.lines()
            .filter(|l| l.starts_with("sluice_shard_unresponsive_seconds{"))
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
            .fold(0.0, f64::max)
    };
    // Let the pipe fill (however long a busy machine takes), then watch for a second.
    let start = std::time::Instant::now();
    let a = loop {
        let (_, a) = get(&addr, "/metrics").unwrap();
        if stuck(&a) > 0.5 || start.elapsed() > Duration::from_secs(30) {
            break a;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(1000));
    let (_, b) = get(&addr, "/metrics").unwrap();
    let _ = child.kill();
    let _ = child.wait();
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

/// What a probe may take on a busy 2-core machine; the old one-at-a-time server took 2 s per
/// stalled client ahead of it, or for ever.
const PROBE: Duration = Duration::from_millis(1500);

/// A job that runs until stopped (an unbounded generator on one shard), with `api` as the body of
/// its `[api]` table and `windows` windows whose names are `name_len` long (each name is in a few
/// `/metrics` lines, so this sizes the body). Killed when dropped.
struct Running {
    child: Child,
    stderr: PathBuf,
}

impl Running {
    fn start(d: &Path, api: &str, windows: usize, name_len: usize) -> Running {
        let cfg = d.join("job.toml");
        std::fs::write(&cfg, job_text(d, api, windows, name_len)).unwrap();
        let stderr = d.join("stderr.txt");
        let child = Command::new(BIN)
            .args(["run", "--config"])
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Running { child, stderr }
    }

    /// Waits until `/health` answers at `addr`; fails at once if the job ended instead.
    fn wait_up(&mut self, addr: &str) {
        let start = Instant::now();
        while get(addr, "/health").map(|r| r.0) != Some(200) {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the job ended ({status}):\n{}", self.stderr());
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no /health");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn job_text(d: &Path, api: &str, windows: usize, name_len: usize) -> String {
    let names: Vec<String> = (0..windows)
        .map(|i| format!("w{i}_{}", "x".repeat(name_len)))
        .collect();
    let mut t = "[runtime]\nshards = 1\n\n[sources.clicks]\ntype = \"generator\"\n\n".to_string();
    for n in &names {
        t += &format!(
            "[transforms.{n}]\ntype = \"window\"\ninputs = [\"clicks\"]\ngroup_by = [\"ad_id\"]\n\
             window = {{ type = \"tumbling\", size = \"1s\" }}\naggregates = {{ n = \"count()\" }}\n\n"
        );
    }
    let inputs: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    t + &format!(
        "[sinks.out]\ntype = \"file\"\ninputs = [{}]\npath = {:?}\n\n[api]\n{api}",
        inputs.join(", "),
        d.join("out.ndjson")
    )
}

/// Answers `/health` `times` times, each within [`PROBE`].
fn probes_answer(addr: &str, times: usize, while_: &str) {
    for _ in 0..times {
        let (code, took) = timed_get(addr, "/health");
        assert_eq!(code, Some(200), "/health after {took:?} {while_}");
        assert!(took < PROBE, "/health took {took:?} {while_}");
    }
}

#[test]
fn health_answers_within_a_second_while_clients_hold_half_sent_requests() {
    let dir = tempfile::tempdir().unwrap();
    let addr = free_addr();
    let mut job = Running::start(dir.path(), &format!("address = \"{addr}\"\n"), 1, 2);
    job.wait_up(&addr);
    let mut held: Vec<_> = (0..6).map(|_| half_request(&addr)).collect();
    probes_answer(&addr, 3, "while 6 clients hold half-sent requests");
    // The read timeout is a deadline for the whole request head: a client that trickles a byte
    // at a time is cut off like the silent ones.
    let start = Instant::now();
    let trickled = loop {
        use std::io::Write;
        if held[0].write_all(b"X").is_err() || closed_within(&held[0], Duration::from_millis(250)) {
            break true;
        }
        if start.elapsed() > Duration::from_secs(15) {
            break false;
        }
    };
    assert!(
        trickled,
        "a client trickling its request head was never cut off"
    );
    for c in &held[1..] {
        assert!(
            closed_within(c, Duration::from_secs(15)),
            "a half-sent request was never timed out"
        );
    }
    probes_answer(&addr, 1, "after the half-sent requests");
}

#[test]
fn health_answers_while_a_client_does_not_read_a_large_metrics_body() {
    let dir = tempfile::tempdir().unwrap();
    let addr = free_addr();
    // Ten windows with 300 000-character names: a /metrics body of about 6 MB, more than a
    // connection's buffers hold (Linux grows a loopback send buffer to 4 MiB at once).
    let mut job = Running::start(dir.path(), &format!("address = \"{addr}\"\n"), 10, 300_000);
    job.wait_up(&addr);
    let (code, full) = get(&addr, "/metrics").unwrap();
    assert_eq!(code, 200);
    assert!(full.len() > 5 << 20, "/metrics has {} bytes", full.len());
    let stalled = non_reader(&addr, "/metrics");
    std::thread::sleep(Duration::from_millis(300));
    probes_answer(&addr, 3, "while a client does not read /metrics");
    assert_eq!(get(&addr, "/metrics").map(|r| r.0), Some(200));
    // The write timeout ends the stalled response: the server resets the connection (a FIN
    // would wait behind the unsent body for ever).
    assert!(
        closed_within(&stalled, Duration::from_secs(20)),
        "a client that does not read kept its connection"
    );
    probes_answer(&addr, 1, "after the stalled client");
}

#[test]
fn past_max_connections_the_oldest_connection_makes_way() {
    let dir = tempfile::tempdir().unwrap();
    let addr = free_addr();
    // Timeouts far off, so only the limit can end a connection here.
    let api = format!("address = \"{addr}\"\nmax_connections = 2\nread_timeout = \"60s\"\n");
    let mut job = Running::start(dir.path(), &api, 1, 2);
    job.wait_up(&addr);
    // Accepted in connect order: `oldest` first.
    let oldest = half_request(&addr);
    let newer = half_request(&addr);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!peer_closed(&oldest) && !peer_closed(&newer), "both served");
    probes_answer(&addr, 1, "with both connections in use");
    assert!(
        closed_within(&oldest, Duration::from_secs(2)),
        "the oldest connection was not shut to make way for the probe"
    );
    // Below the limit again (one held): probes need not shut anything.
    probes_answer(&addr, 3, "with one connection held");
    assert!(
        !peer_closed(&newer),
        "a connection was shut below the limit"
    );
}

#[test]
fn a_non_loopback_address_needs_allow_remote_and_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_addr().rsplit_once(':').unwrap().1.to_string();
    let remote = format!("address = \"0.0.0.0:{port}\"\n");
    let text = job_text(d, &remote, 1, 2);
    let line = text.lines().position(|l| l.starts_with("address")).unwrap() + 1;
    std::fs::write(d.join("job.toml"), &text).unwrap();
    let cfg = d.join("job.toml").to_string_lossy().to_string();
    for cmd in ["validate", "run"] {
        let exit = sluice(d, &[cmd, "--config", &cfg], Duration::from_secs(30));
        assert!(!exit.success, "{cmd} accepted 0.0.0.0 without allow_remote");
        assert!(
            exit.stderr.contains(&format!("job.toml:{line}:"))
                && exit.stderr.contains("api.address")
                && exit.stderr.contains("allow_remote"),
            "{cmd}: {}",
            exit.stderr
        );
    }
    assert!(
        !d.join("out.ndjson").exists(),
        "the rejected run wrote output"
    );
    let mut job = Running::start(d, &format!("{remote}allow_remote = true\n"), 1, 2);
    job.wait_up(&format!("127.0.0.1:{port}"));
    // SAFETY: signals the child we spawned and have not waited for.
    unsafe { libc::kill(job.child.id() as libc::pid_t, libc::SIGTERM) };
    assert!(job.child.wait().unwrap().success());
    let err = job.stderr();
    assert!(
        err.lines()
            .any(|l| l.contains("WARN") && l.contains(&format!("0.0.0.0:{port}"))),
        "no warning about the remote address:\n{err}"
    );
}
