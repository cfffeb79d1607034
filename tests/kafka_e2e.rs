//! Kafka in and out against a real Apache Kafka broker (`scripts/kafka-local.sh`, started here if
//! it is not running; `.ci/run` starts and stops it). Generated clicks go into a 4-partition topic
//! with `sluice loadgen --kafka`; a bounded job (`stop_at = "end"`) windows them and writes the
//! results to a topic, read back with `read_committed`, compared with the reference model run over
//! the same records written by `loadgen` to a file. Exactly-once is checked across `kill -9`s; a
//! poison record lands in the dead letters with its partition and offset.

mod common;

use common::flow_job::kill_after_checkpoint;
use common::kafka::{broker, client_toml, read_committed, topic};

use common::{assert_rows_match, model, Job, Win};
use common::{read_lines, sluice, toml_str};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const MIN: Duration = Duration::from_secs(60);

/// The same generated clicks into `topic` and into `file`: 50 ads, 200 a second of event time.
fn loadgen(d: &Path, topic: &str, file: &str, events: u64) {
    loadgen_with(d, topic, file, events, 50, 200);
}

fn loadgen_with(d: &Path, topic: &str, file: &str, events: u64, keys: u64, rate: u64) {
    let (events, keys, rate) = (events.to_string(), keys.to_string(), rate.to_string());
    let common_args = [
        "loadgen", "clicks", "--events", &events, "--users", "200", "--keys", &keys, "--rate",
        &rate,
    ];
    let mut a: Vec<&str> = common_args.to_vec();
    a.extend(["--kafka", broker(), "--topic", topic]);
    let r = sluice(d, &a, MIN * 2);
    assert!(r.success, "{}", r.stderr);
    let path = d.join(file).to_string_lossy().into_owned();
    let mut a: Vec<&str> = common_args.to_vec();
    a.extend(["--out", &path]);
    let r = sluice(d, &a, MIN);
    assert!(r.success, "{}", r.stderr);
}

fn job() -> Job {
    Job::clicks(Win::Tumbling { size: 10_000 }, 5_000, 0)
}

/// A config reading `input` (a topic) into the topic `output`.
fn config(d: &Path, name: &str, input: &str, output: &str, shards: usize, extra: &str) -> String {
    let job = job();
    let aggs: Vec<String> = job
        .aggs
        .iter()
        .map(|(n, a)| format!("{n} = {}", toml_str(&a.expr())))
        .collect();
    let state = toml_str(&d.join(format!("{name}-state")).to_string_lossy());
    let dead = toml_str(&d.join(format!("{name}-dead.ndjson")).to_string_lossy());
    let toml = format!(
        r#"[runtime]
shards = {shards}
chunk_bytes = 65536

[sources.clicks]
type = "kafka"
{b}topic = "{input}"
start = "earliest"
stop_at = "end"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "5s" }}

[transforms.win]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "10s" }}
aggregates = {{ {aggs} }}

[sinks.out]
type = "kafka"
inputs = ["win"]
{b}topic = "{output}"
key = ["ad_id", "window_start"]
delivery = "exactly_once"
transactional_id_prefix = "{name}"

[checkpoint]
dir = {state}
interval = "50ms"

[dead_letter]
path = {dead}
{extra}"#,
        b = client_toml(),
        aggs = aggs.join(", "),
    );
    let path = d.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn a_bounded_job_over_four_partitions_equals_the_reference_model_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = topic("clicks", 4);
    loadgen(d, &input, "clicks.ndjson", 60_000);
    let content = std::fs::read_to_string(d.join("clicks.ndjson")).unwrap();
    // No record is late whatever the partitions' interleaving (jitter 1 s < 5 s bound), so the
    // model over the records in file order gives every window's one result.
    let want = model(&job(), &[&content]);
    assert_eq!(want.refires, 0);
    assert!(want.rows.len() > 1_000, "{}", want.rows.len());
    for shards in [3, 1] {
        let output = topic("counts", 3);
        let cfg = config(d, &format!("eo{shards}"), &input, &output, shards, "");
        let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
        assert!(r.success, "{}", r.stderr);
        let got = read_committed(&output);
        assert_rows_match(&job(), &got, &want.rows, &format!("{shards} shards"));
        assert_eq!(got.len(), want.rows.len(), "each result once");
    }
    // Two-phase aggregation over Kafka: each shard combines what it reads of its partitions;
    // the same rows, and work really moved off the owners.
    for (shards, mode, hot) in [
        (2, "salt", "{ mode = \"salt\" }"),
        (3, "auto", "{ mode = \"auto\", threshold = 0.02 }"),
    ] {
        let output = topic("counts-hot", 2);
        let cfg = config(d, &format!("hot{shards}"), &input, &output, shards, "");
        let text = std::fs::read_to_string(&cfg).unwrap().replace(
            "aggregates = {",
            &format!("hot_keys = {hot}\naggregates = {{"),
        );
        std::fs::write(&cfg, text).unwrap();
        let stats = d.join(format!("hot{shards}.stats.json"));
        let r = sluice(
            d,
            &["run", "--config", &cfg, "--stats", &stats.to_string_lossy()],
            MIN * 2,
        );
        assert!(r.success, "{}", r.stderr);
        let got = read_committed(&output);
        assert_rows_match(&job(), &got, &want.rows, &format!("hot_keys {mode}"));
        assert_eq!(got.len(), want.rows.len(), "each result once");
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        let combined: u64 = s["per_shard"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["events_combined"].as_u64().unwrap())
            .sum();
        assert!(combined > 10_000, "{mode}: {combined} events combined");
    }
    // At least once, without checkpoints: the same records.
    let output = topic("counts-alo", 2);
    let cfg = config(d, "alo", &input, &output, 2, "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let cut = text.find("[checkpoint]").unwrap();
    let text = text[..cut].replace("exactly_once", "at_least_once")
        + &text[text.find("[dead_letter]").unwrap()..];
    std::fs::write(&cfg, text).unwrap();
    let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    assert_rows_match(
        &job(),
        &read_committed(&output),
        &want.rows,
        "at least once",
    );
}

#[test]
fn kill_9_and_restore_give_exactly_the_uninterrupted_results() {
    crash_and_restore(false);
}

/// The same with watermark alignment on: a resumed run numbers its rounds afresh and rebuilds
/// the alignment from them; every result still arrives exactly once.
#[test]
fn kill_9_and_restore_with_alignment_give_exactly_the_uninterrupted_results() {
    crash_and_restore(true);
}

/// A config of [`config`] with `max_drift` on its source when `aligned`.
fn config_aligned(
    d: &Path,
    name: &str,
    input: &str,
    output: &str,
    shards: usize,
    aligned: bool,
) -> String {
    let cfg = config(d, name, input, output, shards, "");
    if aligned {
        let text = std::fs::read_to_string(&cfg).unwrap();
        let text = text.replace(
            "watermark = { max_out_of_orderness = \"5s\" }",
            "watermark = { max_out_of_orderness = \"5s\", max_drift = \"20s\" }",
        );
        assert!(text.contains("max_drift"));
        std::fs::write(&cfg, text).unwrap();
    }
    cfg
}

fn crash_and_restore(aligned: bool) {
    // Also the transactional id prefix: the two tests run at once and must not fence each other.
    let name = if aligned { "crash-aligned" } else { "crash" };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = topic("clicks-crash", 4);
    loadgen(d, &input, "clicks.ndjson", 400_000);
    let content = std::fs::read_to_string(d.join("clicks.ndjson")).unwrap();
    let want = model(&job(), &[&content]);
    let output = topic("counts-crash", 3);
    let state = d.join(format!("{name}-state"));
    let (mut resumed, mut killed) = (0, 0);
    for (i, shards) in [2usize, 1, 3].into_iter().enumerate() {
        let cfg = config_aligned(d, name, &input, &output, shards, aligned);
        let err = d.join(format!("crash-{i}.txt"));
        let delay = Duration::from_millis(30 + 40 * i as u64);
        let k = kill_after_checkpoint(&cfg, &state, delay, &err);
        killed += usize::from(k.live);
        resumed += usize::from(k.resumed);
    }
    assert!(resumed >= 1, "later runs resumed from a checkpoint");
    assert!(killed >= 2, "runs were killed mid-stream ({killed} of 3)");
    let cfg = config_aligned(d, name, &input, &output, 2, aligned);
    let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    let got = read_committed(&output);
    assert_eq!(got.len(), want.rows.len(), "each result exactly once");
    assert_rows_match(&job(), &got, &want.rows, "after kill -9 x3");
}

/// A partition with nothing to read is finished from the start, as Flink's finished split, so it
/// never holds the watermark back: the same records (some of them late on purpose) in a
/// 1-partition topic and in a 2-partition topic whose partition 1 is empty give the same
/// results, the batch answer, with the late records dropped as late in both. (The empty
/// partition used to count as live until its first chunk ended, so the late records read before
/// it were counted.)
#[test]
fn an_empty_partition_holds_no_watermark_and_late_records_are_dropped_as_in_one_partition() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("late.ndjson").to_string_lossy().into_owned();
    let r = sluice(
        d,
        &[
            "loadgen",
            "clicks",
            "--events",
            "20000",
            "--users",
            "200",
            "--keys",
            "20",
            "--rate",
            "200",
            "--late-fraction",
            "0.02",
            "--late-by-ms",
            "90000",
            "--out",
            &file,
        ],
        MIN,
    );
    assert!(r.success, "{}", r.stderr);
    let content = std::fs::read_to_string(&file).unwrap();
    let want = model(&job(), &[&content]);
    assert!(want.late.len() > 100, "late records: {}", want.late.len());
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    for partitions in [1, 2] {
        let input = topic("late-in", partitions);
        for l in content.lines() {
            let mut rec = BaseRecord::<(), str>::to(&input).payload(l).partition(0);
            while let Err((e, back)) = p.send(rec) {
                let full = Some(rdkafka::types::RDKafkaErrorCode::QueueFull);
                assert_eq!(e.rdkafka_error_code(), full, "{e}");
                p.poll(Duration::from_millis(10));
                rec = back;
            }
        }
        p.flush(Duration::from_secs(30)).unwrap();
        for shards in [2, 1] {
            let output = topic("late-out", 1);
            let name = format!("late{partitions}-{shards}");
            let cfg = config(d, &name, &input, &output, shards, "");
            let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
            assert!(r.success, "{}", r.stderr);
            let got = read_committed(&output);
            let what = format!("{partitions} partition(s), {shards} shard(s)");
            assert_rows_match(&job(), &got, &want.rows, &what);
            assert_eq!(
                got.len(),
                want.rows.len(),
                "{what}: each result once, no more"
            );
        }
    }
}

#[test]
fn a_poison_record_goes_to_the_dead_letters_with_its_offset_and_the_rest_flows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = topic("poison", 1);
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    let mut lines: Vec<String> = (0..20)
        .map(|i| {
            format!(
                r#"{{"ad_id":"ad-{}","user_id":"u-{i}","ts":{},"bid":{}}}"#,
                i % 3,
                1_700_000_000_000i64 + i * 1000,
                10 + i
            )
        })
        .collect();
    lines.insert(10, "{not json".into());
    lines.insert(15, r#"{"ad_id":"ad-1","bid":5}"#.into());
    for l in &lines {
        p.send(BaseRecord::<(), str>::to(&input).payload(l.as_str()))
            .unwrap();
    }
    p.flush(Duration::from_secs(30)).unwrap();
    let output = topic("poison-out", 1);
    let cfg = config(d, "poison", &input, &output, 2, "");
    let r = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(r.success, "{}", r.stderr);
    let dead: Vec<serde_json::Value> = read_lines(&d.join("poison-dead.ndjson"))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(dead.len(), 2, "{dead:?}");
    let want_part = format!("{input}/0");
    assert_eq!(dead[0]["partition"], want_part.as_str());
    assert_eq!(dead[0]["offset"], 10);
    assert_eq!(dead[0]["raw"], "{not json");
    assert!(dead[0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("invalid JSON"));
    assert_eq!(dead[1]["offset"], 15);
    assert!(
        dead[1]["reason"].as_str().unwrap().contains("ts"),
        "{dead:?}"
    );
    // The 20 good records all counted: 20 clicks over the windows.
    let clicks: u64 = read_committed(&output)
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["clicks"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(clicks, 20);
}

/// Backpressure, lag and idleness on an unbounded job: its results go to stdout, which this test
/// leaves unread at first. One ad only, so one shard owns every key and emits every result: it
/// blocks writing, and the other shard, whose records all go to it, has no credit: backpressured,
/// it pauses its partition (logged) and the record lag in `/metrics` stays up. Once stdout is
/// drained the job catches up: resumed (logged), record lag 0. Then no record arrives: every
/// partition is idle and the watermark lag grows with the wall clock.
#[test]
fn a_held_back_job_pauses_its_partitions_lag_shows_and_drains_and_idle_time_shows() {
    use common::{free_addr, get, sum, wait_healthy};
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = topic("held", 2);
    // 300 000 s of event time: 30 000 results of ~150 bytes; the pipe fills after a tenth.
    loadgen_with(d, &input, "clicks.ndjson", 300_000, 1, 1);
    let addr = free_addr();
    let cfg = config(d, "held", &input, "unused", 2, "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text[..text.find("[sinks.out]").unwrap()].replace("stop_at = \"end\"\n", "")
        + &format!(
            "[sinks.out]\ntype = \"stdout\"\ninputs = [\"win\"]\n\n[api]\naddress = \"{addr}\"\n"
        )
        + "[runtime.x]\n";
    // (the [runtime] table above already exists: drop the marker line again)
    let text = text.replace("[runtime.x]\n", "");
    let text = text.replace(
        "watermark = { max_out_of_orderness = \"5s\" }",
        "watermark = { max_out_of_orderness = \"5s\", idle_timeout = \"1s\" }",
    );
    std::fs::write(&cfg, &text).unwrap();
    let mut child = Command::new(common::BIN)
        .args(["run", "--config", &cfg])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_healthy(&addr);
    // Held back: results fill the pipe, the shards block, reading stops with records unread, and
    // memory stays flat: nothing buffers beyond the rings and librdkafka's bounded prefetch.
    let rss_mb = |pid: u32| -> f64 {
        let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    std::thread::sleep(Duration::from_secs(1));
    let rss_1s = rss_mb(child.id());
    std::thread::sleep(Duration::from_secs(2));
    let rss_3s = rss_mb(child.id());
    assert!(
        rss_3s - rss_1s < 32.0 && rss_3s < 512.0,
        "memory while held back: {rss_1s:.0} MB -> {rss_3s:.0} MB"
    );
    let metrics = |addr: &str| get(addr, "/metrics").map(|r| r.1).unwrap_or_default();
    let held = metrics(&addr);
    let lag_held = sum(&held, "sluice_kafka_partition_record_lag");
    let read_held = sum(&held, "sluice_events_in_total");
    assert!(
        lag_held > 1_000.0 && read_held < 300_000.0,
        "record lag {lag_held} with {read_held} of 300 000 read while held back\n{held}"
    );
    // The shard still turning waits for credit to the blocked one: backpressured time grows.
    let bp = sum(&held, "sluice_backpressured_seconds_total");
    assert!(
        bp > 1.0,
        "backpressured seconds while held back: {bp}\n{held}"
    );
    // Drain stdout from now on; the job catches up.
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v.len()
    });
    let start = Instant::now();
    loop {
        let m = metrics(&addr);
        if m.contains("sluice_kafka_partition_record_lag{")
            && sum(&m, "sluice_kafka_partition_record_lag") == 0.0
        {
            break;
        }
        assert!(start.elapsed() < MIN, "lag never drained:\n{m}");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Caught up and no more input: idle partitions, and the watermark stays where it is while the
    // wall clock moves on.
    std::thread::sleep(Duration::from_millis(1500));
    let lag = |m: &str| {
        m.lines()
            .filter(|l| l.starts_with("sluice_watermark_lag_seconds{"))
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
            .fold(f64::MIN, f64::max)
    };
    let a = lag(&metrics(&addr));
    std::thread::sleep(Duration::from_millis(2000));
    let b = lag(&metrics(&addr));
    assert!(b - a > 1.5, "watermark lag {a} -> {b} over 2 s of idleness");
    // SIGTERM drains and exits 0; the logs show the pause and the resume.
    // SAFETY: signalling our own child by its pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    assert!(err.contains("no credit: pausing"), "{err}");
    assert!(err.contains("credit back: resuming"), "{err}");
    assert!(reader.join().unwrap() > 100_000, "results were written");
}

/// `start`: `{ timestamp = ... }` begins at the first record whose Kafka timestamp is at or after
/// it (with `kafka_timestamp` as event time); `"committed"` continues where the group's last run
/// stopped; `"latest"` reads only what comes after the start.
#[test]
fn start_positions_timestamp_committed_and_latest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = topic("starts", 1);
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    let t0 = 1_700_000_000_000i64;
    let send = |from: i64, to: i64| {
        for i in from..to {
            let line = format!(r#"{{"ad_id":"ad-{}","user_id":"u-{i}","bid":{i}}}"#, i % 2);
            p.send(
                BaseRecord::<(), str>::to(&input)
                    .payload(line.as_str())
                    .timestamp(t0 + i * 1000),
            )
            .unwrap();
        }
        p.flush(Duration::from_secs(30)).unwrap();
    };
    send(0, 20);
    // Counts clicks read by a run with `start` and a file sink.
    let run = |name: &str, start: &str| -> u64 {
        let out = d.join(format!("{name}.ndjson"));
        let toml = format!(
            r#"[sources.s]
type = "kafka"
{b}topic = "{input}"
group_id = "starts-group"
start = {start}
stop_at = "end"
event_time = {{ kafka_timestamp = true }}

[transforms.w]
type = "window"
inputs = ["s"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1h" }}
aggregates = {{ clicks = "count()" }}

[sinks.out]
type = "file"
inputs = ["w"]
path = {out}
"#,
            b = client_toml(),
            out = toml_str(&out.to_string_lossy()),
        );
        let cfg = d.join(format!("{name}.toml"));
        std::fs::write(&cfg, toml).unwrap();
        let r = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN);
        assert!(r.success, "{}", r.stderr);
        read_lines(&out)
            .iter()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["clicks"]
                    .as_u64()
                    .unwrap()
            })
            .sum()
    };
    assert_eq!(run("ts", r#"{ timestamp = "2023-11-14T22:13:30Z" }"#), 10);
    assert_eq!(run("all", r#""earliest""#), 20);
    send(20, 25);
    // The broker must show the five before the next run takes its end offsets.
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    let start = Instant::now();
    while c
        .fetch_watermarks(&input, 0, Duration::from_secs(5))
        .map_or(true, |(_, high)| high < 25)
    {
        assert!(
            start.elapsed() < MIN,
            "the five records never became visible"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        run("rest", r#""committed""#),
        5,
        "only what came after the last run"
    );
    assert_eq!(run("none", r#""latest""#), 0);
}

/// `rate_limit` on a Kafka source (one partition, so one of the two shards reads it all at the
/// whole rate): a replay of 30 000 records at 10 000/s takes about 3 s, the
/// rest waiting in the topic; the job reads them all, near the set rate (asserted loosely: the
/// consumer's start-up counts against the run's average).
#[test]
fn a_rate_limited_kafka_replay_holds_its_rate() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = topic("rated", 1);
    loadgen(d, &input, "rated.ndjson", 30_000);
    let output = topic("rated-out", 1);
    let cfg = config(d, "rated", &input, &output, 2, "");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "stop_at = \"end\"\n",
        "stop_at = \"end\"\nrate_limit = \"10000/s\"\n",
    );
    std::fs::write(&cfg, text).unwrap();
    let stats = d.join("rated.json");
    let run = sluice(
        d,
        &["run", "--config", &cfg, "--stats", &stats.to_string_lossy()],
        Duration::from_secs(120),
    );
    assert!(run.success, "{}", run.stderr);
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(s["events"].as_u64(), Some(30_000), "{s}");
    let rate = s["events_per_second"].as_f64().unwrap();
    assert!(
        (6_000.0..=11_000.0).contains(&rate),
        "read at {rate:.0} records/s with rate_limit 10000/s"
    );
}
