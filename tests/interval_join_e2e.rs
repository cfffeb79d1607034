//! The interval join through the real binary against a nested loop in this test: impressions and
//! clicks generated out of order within the watermark bound; clicks 0-10 s after their impression
//! match, 10-20 s after do not; clicks with no impression and impressions with no click appear
//! only in the outer kinds, once each; a late click goes to the side output and is counted. Over a
//! run four times as long at the same rate the peak of buffered rows stays the same: state is
//! bounded by rate x bound, not by run length.

mod common;

use common::{read_lines, sluice, toml_str};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// (imp_id, ts, n) rows of one side.
type Rows = Vec<(String, i64, u64)>;

/// `seconds` of impressions (10 a second) and their clicks, written out of order within 2 s. With
/// `aligned`, every impression has exactly one click line (0-20 s later) and lines have one length,
/// so both files cover the same event time per chunk (see the state test).
fn write_data(dir: &Path, seconds: i64, seed: u64, aligned: bool) -> (Rows, Rows) {
    let mut rng = Rng(seed);
    let (mut imps, mut clicks) = (Vec::new(), Vec::new());
    let mut n = 0;
    for i in 0..seconds * 10 {
        let ts = i * 100 + rng.below(100) as i64;
        let id = format!("i-{i}");
        imps.push((id.clone(), ts, i as u64));
        // 0-2 clicks, 0-20 s later: about half inside the 10 s bound.
        let count = if aligned { 1 } else { rng.below(3) };
        for _ in 0..count {
            let delay = rng.below(20_001) as i64;
            clicks.push((id.clone(), ts + delay, n));
            n += 1;
        }
        if !aligned && rng.below(10) == 0 {
            clicks.push((format!("x-{i}"), ts, n)); // no impression
            n += 1;
        }
    }
    let write = |name: &str, rows: &Rows, rng: &mut Rng| {
        let mut keyed: Vec<(i64, String)> = rows
            .iter()
            .map(|(id, ts, n)| {
                let line = format!(r#"{{"imp_id":"{id}","ts":{ts},"n":{n}"#);
                let pad = " ".repeat(60usize.saturating_sub(line.len()));
                (ts + rng.below(2_000) as i64, format!("{line}{pad}}}"))
            })
            .collect();
        keyed.sort();
        let text: String = keyed.into_iter().map(|(_, l)| l + "\n").collect();
        std::fs::write(dir.join(name), text).unwrap();
    };
    write("impressions.ndjson", &imps, &mut rng);
    write("clicks.ndjson", &clicks, &mut rng);
    (imps, clicks)
}

fn config(dir: &Path, name: &str, kind: &str, shards: usize, extra: &str) -> String {
    let file = |f: &str| toml_str(&dir.join(f).to_string_lossy());
    let toml = format!(
        r#"[runtime]
shards = {shards}
chunk_bytes = 8192

[sources.impressions]
type = "file"
path = {imps}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "3s" }}

[sources.clicks]
type = "file"
path = {clicks}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "3s" }}

[transforms.matched]
type = "interval_join"
left = "impressions"
right = "clicks"
on = ["imp_id"]
between = ["0s", "10s"]
kind = "{kind}"
{extra}
[sinks.out]
type = "file"
inputs = ["matched"]
path = {out}
"#,
        imps = file("impressions.ndjson"),
        clicks = file("clicks.ndjson"),
        out = file(&format!("{name}.ndjson")),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

/// (imp_id, left n, right n) of every output line; `None` for a null side.
type Pair = (String, Option<u64>, Option<u64>);

fn pairs(path: &Path) -> Vec<Pair> {
    read_lines(path)
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let n = |side: &str| v[side].get("n").and_then(Value::as_u64);
            (
                v["imp_id"].as_str().unwrap().to_string(),
                n("left"),
                n("right"),
            )
        })
        .collect()
}

fn reference(imps: &Rows, clicks: &Rows, kind: &str) -> Vec<Pair> {
    let mut out = Vec::new();
    let mut left_hit = vec![false; imps.len()];
    let mut right_hit = vec![false; clicks.len()];
    for (i, (id, tl, nl)) in imps.iter().enumerate() {
        for (j, (cid, tr, nr)) in clicks.iter().enumerate() {
            if id == cid && (0..=10_000).contains(&(tr - tl)) {
                out.push((id.clone(), Some(*nl), Some(*nr)));
                left_hit[i] = true;
                right_hit[j] = true;
            }
        }
    }
    if kind == "left" || kind == "full" {
        for (i, (id, _, n)) in imps.iter().enumerate().filter(|(i, _)| !left_hit[*i]) {
            let _ = i;
            out.push((id.clone(), Some(*n), None));
        }
    }
    if kind == "right" || kind == "full" {
        for (j, (id, _, n)) in clicks.iter().enumerate().filter(|(j, _)| !right_hit[*j]) {
            let _ = j;
            out.push((id.clone(), None, Some(*n)));
        }
    }
    out.sort();
    out
}

#[test]
fn every_kind_equals_the_nested_loop_on_out_of_order_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (imps, clicks) = write_data(d, 60, 7, false);
    for (kind, shards) in [("inner", 2), ("left", 1), ("right", 3), ("full", 2)] {
        let name = format!("{kind}-{shards}");
        let cfg = config(d, &name, kind, shards, "");
        let run = sluice(d, &["run", "--config", &cfg], MIN);
        assert!(run.success, "{}", run.stderr);
        assert!(run.stderr.contains("0 late dropped"), "{}", run.stderr);
        let mut got = pairs(&d.join(format!("{name}.ndjson")));
        got.sort();
        let want = reference(&imps, &clicks, kind);
        assert!(want.len() > 200);
        assert_eq!(got.len(), want.len(), "{name}: every pair once");
        assert_eq!(got, want, "{name}");
    }
    // Inner output lines carry both records whole.
    let line = &read_lines(&d.join("inner-2.ndjson"))[0];
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["left"]["imp_id"], v["imp_id"], "{line}");
    assert_eq!(v["right"]["imp_id"], v["imp_id"], "{line}");
}

#[test]
fn buffered_state_is_bounded_by_rate_times_bound_not_run_length() {
    let peak = |seconds: i64| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write_data(d, seconds, 11, true);
        let cfg = config(d, "run", "full", 2, "");
        let stats = d.join("stats.json");
        let run = sluice(
            d,
            &["run", "--config", &cfg, "--stats", &stats.to_string_lossy()],
            MIN * 2,
        );
        assert!(run.success, "{}", run.stderr);
        let s: Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
        let j = &s["joins"][0];
        assert_eq!(j["name"], "matched");
        assert_eq!(j["buffered"], serde_json::json!([0, 0]), "{j}");
        let p = |i: usize| j["peak"][i].as_u64().unwrap();
        (p(0), p(1), j["cleaned"][0].as_u64().unwrap())
    };
    let (l1, r1, cleaned1) = peak(100);
    let (l4, r4, cleaned4) = peak(400);
    assert!(cleaned4 > 3 * cleaned1, "four times the rows went through");
    // 10 impressions a second held ~10 s (+ the bound's slack), clicks held ~0 s after their time.
    assert!(
        l4 <= l1 + l1 / 4 && r4 <= r1 + r1 / 4 + 20,
        "peaks {l1},{r1} -> {l4},{r4}"
    );
    assert!(
        l4 < 400,
        "left peak {l4} is about rate x (bound + out-of-orderness)"
    );
}

#[test]
fn a_late_click_goes_to_the_side_output_and_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // One 8 KiB line per chunk, so the files interleave line by line: clicks (source 0 by name)
    // x, impressions a, clicks b, impressions b, clicks a. The last click, at 2 s, comes when both
    // files are past 57 s: far behind the watermark.
    let lines = |rows: &[&str]| -> String {
        rows.iter()
            .map(|r| format!("{r}{}}}\n", " ".repeat(8191 - r.len() - 1)))
            .collect()
    };
    std::fs::write(
        d.join("impressions.ndjson"),
        lines(&[
            r#"{"imp_id":"a","ts":1000,"n":0"#,
            r#"{"imp_id":"b","ts":60000,"n":1"#,
        ]),
    )
    .unwrap();
    std::fs::write(
        d.join("clicks.ndjson"),
        lines(&[
            r#"{"imp_id":"x","ts":1000,"n":0"#,
            r#"{"imp_id":"b","ts":61000,"n":1"#,
            r#"{"imp_id":"a","ts":2000,"n":2"#,
        ]),
    )
    .unwrap();
    let late = toml_str(&d.join("late.ndjson").to_string_lossy());
    let extra = format!("late_events = \"late_clicks\"\n\n[sinks.late]\ntype = \"file\"\ninputs = [\"late_clicks\"]\npath = {late}\n");
    let cfg = config(d, "late-job", "inner", 1, &extra);
    let run = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(run.success, "{}", run.stderr);
    assert!(run.stderr.contains("1 late dropped"), "{}", run.stderr);
    let late_lines = read_lines(&d.join("late.ndjson"));
    assert_eq!(late_lines.len(), 1, "{late_lines:?}");
    assert!(late_lines[0].starts_with(r#"{"imp_id":"a","ts":2000,"n":2"#));
    // b matched; a's impression found no click in time.
    assert_eq!(
        pairs(&d.join("late-job.ndjson")),
        vec![("b".to_string(), Some(1), Some(1))]
    );
}

/// Join state is in the checkpoints: `kill -9` three times, each soon after a checkpoint, then a
/// run to the end: the committed output is exactly the uninterrupted run's (a full join, so
/// unmatched rows emitted at cleanup are covered too).
#[test]
fn kill_9_and_restart_gives_exactly_the_uninterrupted_output() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_data(d, 20_000, 3, false);
    let plain = config(d, "plain", "full", 2, "");
    assert!(sluice(d, &["run", "--config", &plain], MIN * 2).success);
    let mut want = read_lines(&d.join("plain.ndjson"));
    want.sort();
    assert!(want.len() > 100_000);

    let state = toml_str(&d.join("state").to_string_lossy());
    let ckpt = format!("\n[checkpoint]\ndir = {state}\ninterval = \"10ms\"\n");
    let mut resumed = 0;
    for (i, delay) in [20u64, 60, 120].into_iter().enumerate() {
        let cfg = config(d, "crash", "full", [2, 1, 3][i], "");
        std::fs::write(&cfg, std::fs::read_to_string(&cfg).unwrap() + &ckpt).unwrap();
        let err = d.join(format!("crash-{i}.txt"));
        let mut child = Command::new(common::BIN)
            .args(["run", "--config", &cfg])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        // Kill soon after this run's first checkpoint: its state is then mid-stream.
        let start = std::time::Instant::now();
        let before = std::fs::read_dir(d.join("state")).map_or(0, |r| r.count());
        while start.elapsed() < MIN {
            let now = std::fs::read_dir(d.join("state")).map_or(0, |r| r.count());
            if now > before || child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        resumed += usize::from(
            std::fs::read_to_string(&err)
                .unwrap()
                .contains("resuming from"),
        );
    }
    let cfg = config(d, "crash", "full", 2, "");
    std::fs::write(&cfg, std::fs::read_to_string(&cfg).unwrap() + &ckpt).unwrap();
    let last = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(last.success, "{}", last.stderr);
    resumed += usize::from(last.stderr.contains("resuming from"));
    assert!(resumed >= 2, "recovery was exercised only {resumed} times");
    let mut got = read_lines(&d.join("crash.ndjson"));
    got.sort();
    assert_eq!(got.len(), want.len(), "no line lost or written twice");
    assert_eq!(got, want);
}
