//! Watermark alignment (`watermark.max_drift`) through the real binary. Clicks cover ten times as
//! much event time per byte as impressions, so read chunk for chunk the clicks file runs far ahead
//! and every click waits in the interval join for the impressions' watermark. With alignment the
//! clicks file pauses instead: the join's peak of buffered clicks is bounded by the drift, not by
//! the run, and the output is the same pairs a nested loop in this test finds. Kill -9 and restore
//! mid-run continues the same aligned order.

mod common;

use common::{read_lines, sluice, toml_str};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
const SECONDS: i64 = 2_000;

/// (imp_id, ts) of impressions (10 a second) and (imp_id, ts, n) of clicks (1 a second, each for
/// the impression 5 s earlier, or, every seventh, for one 15 s earlier: outside the 10 s bound).
/// Every line is padded to one length, so a chunk holds the same number of lines of either file.
type Imps = Vec<(String, i64)>;
type Clicks = Vec<(String, i64, u64)>;

fn write_data(dir: &Path) -> (Imps, Clicks) {
    let imps: Imps = (0..SECONDS * 10)
        .map(|i| (format!("i-{i}"), i * 100 + 7))
        .collect();
    let clicks: Clicks = (5..SECONDS)
        .map(|s| {
            let back = if s % 7 == 0 { 15_000 } else { 5_000 };
            let ts = s * 1000 + 500;
            let target = ((ts - back - 7) / 100).max(0);
            (format!("i-{target}"), ts, s as u64)
        })
        .collect();
    let pad = |l: String| format!("{l}{}}}\n", " ".repeat(60usize.saturating_sub(l.len())));
    let text: String = imps
        .iter()
        .map(|(id, ts)| pad(format!(r#"{{"imp_id":"{id}","ts":{ts}"#)))
        .collect();
    std::fs::write(dir.join("impressions.ndjson"), text).unwrap();
    let text: String = clicks
        .iter()
        .map(|(id, ts, n)| pad(format!(r#"{{"imp_id":"{id}","ts":{ts},"n":{n}"#)))
        .collect();
    std::fs::write(dir.join("clicks.ndjson"), text).unwrap();
    (imps, clicks)
}

fn config(dir: &Path, name: &str, shards: usize, drift: Option<&str>, extra: &str) -> String {
    let file = |f: &str| toml_str(&dir.join(f).to_string_lossy());
    let drift = drift.map_or(String::new(), |d| format!(", max_drift = \"{d}\""));
    let toml = format!(
        r#"[runtime]
shards = {shards}
chunk_bytes = 1024

[sources.impressions]
type = "file"
path = {imps}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "1s"{drift} }}

[sources.clicks]
type = "file"
path = {clicks}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "1s"{drift} }}

[transforms.matched]
type = "interval_join"
left = "impressions"
right = "clicks"
on = ["imp_id"]
between = ["0s", "10s"]
kind = "inner"

[sinks.out]
type = "file"
inputs = ["matched"]
path = {out}
{extra}"#,
        imps = file("impressions.ndjson"),
        clicks = file("clicks.ndjson"),
        out = file(&format!("{name}.ndjson")),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

/// (imp_id, click n) pairs a nested loop finds: same id, click 0-10 s after the impression.
fn expected(imps: &Imps, clicks: &Clicks) -> BTreeSet<(String, u64)> {
    let mut out = BTreeSet::new();
    for (cid, cts, n) in clicks {
        for (iid, its) in imps {
            if iid == cid && (0..=10_000).contains(&(cts - its)) {
                out.insert((cid.clone(), *n));
            }
        }
    }
    out
}

fn pairs(path: &Path) -> Vec<(String, u64)> {
    read_lines(path)
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["imp_id"].as_str().unwrap().to_string(),
                v["right"]["n"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Runs job `name` from `cfg` and returns its output pairs and its `--stats` summary.
fn run_stats(d: &Path, name: &str, cfg: &str) -> (Vec<(String, u64)>, Value) {
    let stats = d.join(format!("{name}-stats.json"));
    let r = sluice(
        d,
        &["run", "--config", cfg, "--stats", &stats.to_string_lossy()],
        MIN * 2,
    );
    assert!(r.success, "{}", r.stderr);
    let s: Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    (pairs(&d.join(format!("{name}.ndjson"))), s)
}

/// Runs and returns the output pairs and the join's peak of buffered clicks (right rows).
fn run(d: &Path, name: &str, shards: usize, drift: Option<&str>) -> (Vec<(String, u64)>, u64) {
    let cfg = config(d, name, shards, drift, "");
    let (got, s) = run_stats(d, name, &cfg);
    let peak = s["joins"][0]["peak"][1].as_u64().unwrap();
    // Partitions are in source-name order: clicks, impressions. Only the fast clicks file pauses.
    let paused = &s["alignment_paused_rounds"];
    match drift {
        None => assert!(paused.is_null(), "{paused}"),
        Some(_) => {
            assert!(paused[0].as_u64().unwrap() > 100, "{paused}");
            assert_eq!(paused[1], 0, "{paused}");
        }
    }
    (got, peak)
}

#[test]
fn alignment_bounds_the_state_a_fast_file_builds_and_changes_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (imps, clicks) = write_data(d);
    let want = expected(&imps, &clicks);
    assert!(want.len() > 1_500, "{}", want.len());

    let (free, free_peak) = run(d, "free", 2, None);
    let free_set: BTreeSet<_> = free.iter().cloned().collect();
    assert_eq!(free.len(), free_set.len(), "no pair twice");
    assert_eq!(free_set, want);
    // Unaligned, the clicks file ends when impressions are a tenth of the way: most clicks wait.
    assert!(free_peak > 1_500, "unaligned peak {free_peak}");

    for shards in [1, 2, 3] {
        let (got, peak) = run(d, &format!("aligned-{shards}"), shards, Some("10s"));
        let set: BTreeSet<_> = got.iter().cloned().collect();
        assert_eq!(got.len(), set.len(), "no pair twice ({shards} shards)");
        assert_eq!(set, want, "{shards} shards");
        // Clicks are held about 10 s (the bound) plus 10 s of drift plus the chunks decided ahead
        // (LAG = 4 rounds of 17 lines, 17 s of clicks each): about 110 clicks at 1 a second.
        assert!(
            peak < 150,
            "aligned peak {peak} ({shards} shards), unaligned {free_peak}"
        );
    }
}

#[test]
fn kill_9_and_restore_continue_the_aligned_order() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (imps, clicks) = write_data(d);
    let want = expected(&imps, &clicks);
    let state = toml_str(&d.join("state").to_string_lossy());
    // Slowed so the kills land mid-run; checkpoints every 20 ms.
    let slow = format!("\n[checkpoint]\ndir = {state}\ninterval = \"20ms\"\n");
    let mut resumed = 0;
    for (i, shards) in [2usize, 1, 3].into_iter().enumerate() {
        let cfg = config(d, "crash", shards, Some("10s"), &slow);
        let text = std::fs::read_to_string(&cfg).unwrap().replace(
            "format = \"json\"",
            "format = \"json\"\nrate_limit = \"20000/s\"",
        );
        std::fs::write(&cfg, text).unwrap();
        let err = d.join(format!("crash-{i}.txt"));
        let mut child = Command::new(common::BIN)
            .args(["run", "--config", &cfg])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(250));
        let _ = child.kill();
        let _ = child.wait();
        resumed += usize::from(
            std::fs::read_to_string(&err)
                .unwrap()
                .contains("resuming from"),
        );
    }
    assert!(resumed >= 1, "later runs resumed from a checkpoint");
    let cfg = config(d, "crash", 2, Some("10s"), &slow);
    let r = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(r.success, "{}", r.stderr);
    let got = pairs(&d.join("crash.ndjson"));
    let set: BTreeSet<_> = got.iter().cloned().collect();
    assert_eq!(got.len(), set.len(), "no pair twice across crashes");
    assert_eq!(set, want);
}

#[test]
fn a_checkpoint_resumes_only_into_the_same_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_data(d);
    let state = toml_str(&d.join("state").to_string_lossy());
    let ck = format!("\n[checkpoint]\ndir = {state}\ninterval = \"1s\"\n");
    let cfg = config(d, "one", 2, None, &ck);
    assert!(sluice(d, &["run", "--config", &cfg], MIN).success);
    let cfg = config(d, "one", 2, Some("10s"), &ck);
    let r = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(!r.success);
    assert!(
        r.stderr.contains("without watermark alignment") && r.stderr.contains("max_drift"),
        "{}",
        r.stderr
    );
}

/// Writes the impressions and clicks files into topics of their own (one partition each).
fn to_topics(d: &Path) -> (String, String) {
    use common::kafka::{broker, topic};
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let (ti, tc) = (topic("align-imps", 1), topic("align-clicks", 1));
    let p: BaseProducer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    for (t, file) in [(&ti, "impressions.ndjson"), (&tc, "clicks.ndjson")] {
        for line in read_lines(&d.join(file)) {
            while let Err((e, _)) = p.send(BaseRecord::<(), str>::to(t).payload(line.trim_end())) {
                assert!(format!("{e}").contains("Queue full"), "{e}");
                p.poll(Duration::from_millis(10));
            }
            p.poll(Duration::ZERO);
        }
    }
    p.flush(Duration::from_secs(30)).unwrap();
    (ti, tc)
}

/// Runs the join with the sources named in `from_kafka` read from their topics (`topics`:
/// impressions, clicks) and the others from their files; checks the pairs against `want` and
/// returns the join's peak of buffered clicks and the rounds each partition sat out.
fn run_with_kafka(
    d: &Path,
    name: &str,
    drift: Option<&str>,
    topics: &(String, String),
    from_kafka: &[&str],
    want: &BTreeSet<(String, u64)>,
) -> (u64, Value) {
    use common::kafka::client_toml;
    let cfg = config(d, name, 2, drift, "");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    for (source, t) in [("impressions", &topics.0), ("clicks", &topics.1)] {
        if !from_kafka.contains(&source) {
            continue;
        }
        let file = toml_str(&d.join(format!("{source}.ndjson")).to_string_lossy());
        let kafka = format!(
            "type = \"kafka\"\n{}topic = \"{t}\"\nstart = \"earliest\"\nstop_at = \"end\"\n",
            client_toml()
        );
        let before = text.clone();
        text = text.replacen(&format!("type = \"file\"\npath = {file}\n"), &kafka, 1);
        assert_ne!(before, text, "{source} moved to Kafka");
    }
    std::fs::write(&cfg, text).unwrap();
    let (got, s) = run_stats(d, name, &cfg);
    let set: BTreeSet<_> = got.iter().cloned().collect();
    assert_eq!(got.len(), set.len(), "no pair twice ({name})");
    assert_eq!(&set, want, "{name}");
    (
        s["joins"][0]["peak"][1].as_u64().unwrap(),
        s["alignment_paused_rounds"].clone(),
    )
}

/// The same pairs through Kafka: impressions and clicks in topics of their own, read to their
/// ends. Unaligned, the clicks topic is read to its end while impressions are a tenth of the way
/// and nearly every click waits in the join; with `max_drift` the clicks partition sits rounds
/// out, the join's peak stays bounded, and the pairs are the same. Then the clicks from their file
/// beside impressions from Kafka: the file sits rounds out the same way.
#[test]
fn alignment_bounds_the_state_a_fast_kafka_partition_builds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (imps, clicks) = write_data(d);
    let want = expected(&imps, &clicks);
    let topics = to_topics(d);
    let both = ["impressions", "clicks"];
    let (free_peak, free_paused) = run_with_kafka(d, "kafka-free", None, &topics, &both, &want);
    assert!(free_paused.is_null(), "{free_paused}");
    assert!(free_peak > 1_500, "unaligned peak {free_peak}");
    let (peak, paused) = run_with_kafka(d, "kafka-aligned", Some("10s"), &topics, &both, &want);
    eprintln!("kafka alignment: join peak {peak} aligned vs {free_peak} unaligned; rounds sat out {paused}");
    // Partitions in source-name order: clicks, impressions. Only the clicks partition sits out.
    assert!(paused[0].as_u64().unwrap() > 100, "{paused}");
    assert_eq!(paused[1], 0, "{paused}");
    // Clicks are held about the 10 s bound plus 10 s of drift plus the rounds decided ahead (LAG
    // = 4 rounds of 8 records, 8 s of clicks each), as for files.
    assert!(peak < 150, "aligned peak {peak}, unaligned {free_peak}");

    let imps_only = ["impressions"];
    let (free_peak, _) = run_with_kafka(d, "mixed-free", None, &topics, &imps_only, &want);
    assert!(
        free_peak > 1_500,
        "unaligned peak {free_peak} (clicks from the file)"
    );
    let (peak, paused) =
        run_with_kafka(d, "mixed-aligned", Some("10s"), &topics, &imps_only, &want);
    eprintln!("file beside kafka: join peak {peak} aligned vs {free_peak} unaligned; rounds sat out {paused}");
    assert!(paused[0].as_u64().unwrap() > 100, "{paused}");
    assert_eq!(paused[1], 0, "{paused}");
    // A file chunk holds 1024 bytes (16 clicks): LAG rounds of it are 64 s of clicks.
    assert!(peak < 200, "aligned peak {peak}, unaligned {free_peak}");
}
