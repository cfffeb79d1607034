//! The contract pipeline (`config/ad_spend.toml`) as a job for fault tests: its input files made by
//! `sluice loadgen flow`, its config pointed at a test directory, and its output read sorted.

use super::{read_lines, sluice, toml_str};
use std::path::Path;
use std::time::Duration;

/// Writes the three flow files into `d` (`events` impressions at `rate` per second of event time).
pub fn flow_data(d: &Path, events: u64, rate: u64, seed: u64) {
    let (e, r, s) = (events.to_string(), rate.to_string(), seed.to_string());
    let out = d.to_string_lossy();
    let args = [
        "loadgen", "flow", "--events", &e, "--rate", &r, "--seed", &s, "--out", &out,
    ];
    let exit = sluice(d, &args, Duration::from_secs(60));
    assert!(exit.success, "loadgen failed: {}", exit.stderr);
}

/// `config/ad_spend.toml` reading `d`'s flow files and writing `out`, on 2 shards with 64 KiB
/// chunks, with `extra` appended; written to `d/<name>.toml`, whose path is returned.
pub fn flow_config(d: &Path, name: &str, out: &Path, extra: &str) -> String {
    flow_config_on(d, name, "shards = 2\nchunk_bytes = 65536", out, extra)
}

/// As [`flow_config`], with `runtime` as the body of its `[runtime]` table.
pub fn flow_config_on(d: &Path, name: &str, runtime: &str, out: &Path, extra: &str) -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("config/ad_spend.toml"))
            .unwrap();
    let at = |f: &str| toml_str(&d.join(f).to_string_lossy());
    let text = text
        .replace(
            "\"data/flow_impressions.ndjson\"",
            &at("flow_impressions.ndjson"),
        )
        .replace("\"data/flow_clicks.ndjson\"", &at("flow_clicks.ndjson"))
        .replace("\"data/flow_prices.ndjson\"", &at("flow_prices.ndjson"))
        .replace("\"out/ad_spend.ndjson\"", &toml_str(&out.to_string_lossy()))
        .replace(
            "[runtime]\nshards = 2\n",
            &format!("[runtime]\n{runtime}\n"),
        );
    let path = d.join(format!("{name}.toml"));
    std::fs::write(&path, format!("{text}{extra}")).unwrap();
    path.to_string_lossy().into_owned()
}

/// The lines of `path`, sorted (shards interleave lines of different keys).
pub fn sorted_lines(path: &Path) -> Vec<String> {
    let mut l = read_lines(path);
    l.sort();
    l
}

/// The job's output without checkpoints or interruptions: what every faulted run must end with.
pub fn uninterrupted(d: &Path) -> Vec<String> {
    let out = d.join("plain.ndjson");
    let cfg = flow_config(d, "plain", &out, "");
    let exit = sluice(d, &["run", "--config", &cfg], Duration::from_secs(60));
    assert!(exit.success, "{}", exit.stderr);
    sorted_lines(&out)
}

/// How one killed run went: whether it was still running when killed, and whether it had
/// resumed from a checkpoint.
pub struct Killed {
    pub live: bool,
    pub resumed: bool,
}

/// The id of the newest *complete* checkpoint in `state` (0: none yet). A `chk-N` folder exists
/// from the moment its shards start writing; only its manifest, written last by an atomic rename,
/// makes it usable, so a kill timed from the folder alone can land mid-write and leave the next
/// start nothing to resume from. Retention deletes old folders, so this is not their count.
pub fn newest_checkpoint(state: &Path) -> u64 {
    std::fs::read_dir(state).map_or(0, |r| {
        r.flatten()
            .filter(|e| e.path().join("manifest.json").exists())
            .filter_map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_prefix("chk-")?
                    .parse()
                    .ok()
            })
            .max()
            .unwrap_or(0)
    })
}

/// Runs `cfg` and kills it (`kill -9`) `delay` after its first new complete checkpoint in `state` (or once
/// it has ended by itself); its stderr goes to `err`.
pub fn kill_after_checkpoint(cfg: &str, state: &Path, delay: Duration, err: &Path) -> Killed {
    use std::process::{Command, Stdio};
    let mut child = Command::new(super::BIN)
        .args(["run", "--config", cfg])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(err).unwrap())
        .spawn()
        .unwrap();
    // Killed soon after this run's first checkpoint: its state is then mid-stream.
    let start = std::time::Instant::now();
    let before = newest_checkpoint(state);
    while start.elapsed() < Duration::from_secs(60) {
        if newest_checkpoint(state) > before || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(delay);
    let live = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    Killed {
        live,
        resumed: std::fs::read_to_string(err)
            .unwrap()
            .contains("resuming from"),
    }
}
