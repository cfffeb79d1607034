//! The CLI end to end: `validate` accepts the issue's example config and rejects each kind of bad
//! config with file, line and key; `run` on a bounded generator exits 0, writes windows and stats.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

/// The example config of issue 2, with its paths moved under `dir`.
fn example(dir: &Path) -> String {
    let p = |rel: &str| toml_str(&dir.join(rel).to_string_lossy());
    format!(
        r#"[runtime]
shards = 2                 # worker threads, one pinned per core; default: every available core
key_groups = 720           # key -> key group -> shard; fixed for the life of the state

[sources.clicks]
type = "file"              # file | generator   (kafka comes in its own issue)
path = {}                  # a file or a glob; each file is one partition
format = "json"                              # one JSON object per line
event_time = {{ field = "ts", unit = "ms" }}   # unit: ms | s | us | rfc3339
watermark = {{ max_out_of_orderness = "5s", idle_timeout = "30s" }}

[transforms.clicks_per_minute]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1m" }}
allowed_lateness = "1m"
late_events = "late_clicks"                  # optional side output, usable as a sink input
aggregates = {{ clicks = "count()", spend = "sum(bid)", top_bid = "max(bid)", users = "count_distinct(user_id)" }}

[sinks.counts]
type = "file"              # file | stdout
inputs = ["clicks_per_minute"]
path = {}

[sinks.late]
type = "file"
inputs = ["late_clicks"]
path = {}

[dead_letter]
path = {}
"#,
        p("data/clicks.ndjson"),
        p("out/clicks_per_minute.ndjson"),
        p("out/late_clicks.ndjson"),
        p("out/dead_letter.ndjson"),
    )
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines: Vec<String> = (0..50)
        .map(|i| click_line(BASE + i * 1_000, i % 3, 0, i % 7, Some(Some(100 + i))))
        .collect();
    input_file(dir.path(), "data/clicks.ndjson", &file_of(&lines));
    dir
}

fn write_cfg(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write config");
    p.to_string_lossy().into_owned()
}

/// 1-based line of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}"))
        + 1
}

/// Whether `stderr` names line `line` as `:LINE` (file:line[:col]) or `line LINE`.
fn names_line(stderr: &str, line: usize) -> bool {
    let n = line.to_string();
    let bytes = stderr.as_bytes();
    stderr.match_indices(&n).any(|(i, _)| {
        let after_ok = bytes.get(i + n.len()).is_none_or(|b| !b.is_ascii_digit());
        let before_ok = stderr[..i].ends_with(':') || stderr[..i].ends_with("line ");
        after_ok && before_ok
    })
}

/// `validate` must fail on `text`, naming the file, one of `lines` and `key`; returns stderr.
fn rejected(dir: &Path, name: &str, text: &str, lines: &[usize], key: &str) -> String {
    let cfg = write_cfg(dir, name, text);
    let exit = sluice(dir, &["validate", "--config", &cfg], T);
    assert!(!exit.success, "{name}: validate accepted a bad config");
    let err = exit.stderr;
    assert!(
        err.contains(name),
        "{name}: stderr does not name the file:\n{err}"
    );
    assert!(
        lines.iter().any(|&l| names_line(&err, l)),
        "{name}: stderr names none of lines {lines:?}:\n{err}"
    );
    assert!(
        err.contains(key),
        "{name}: stderr does not name `{key}`:\n{err}"
    );
    err
}

#[test]
fn validate_accepts_the_issue_example_and_changes_nothing() {
    let dir = setup();
    let text = example(dir.path());
    let cfg = write_cfg(dir.path(), "example.toml", &text);
    let exit = sluice(dir.path(), &["validate", "--config", &cfg], T);
    assert!(
        exit.success,
        "validate rejected the issue's example:\n{}",
        exit.stderr
    );
    assert!(
        !dir.path().join("out").exists(),
        "validate must not create outputs"
    );
    // The generator can replace the file source unchanged.
    let start = line_of(&text, "type = \"file\"              # file | generator");
    let gen: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| !(start - 1..start + 4).contains(i))
        .map(|(_, l)| l)
        .collect();
    let gen_text = gen
        .join("\n")
        .replace("[sources.clicks]", "[sources.clicks]\ntype = \"generator\"");
    let cfg = write_cfg(dir.path(), "generator.toml", &gen_text);
    let exit = sluice(dir.path(), &["validate", "--config", &cfg], T);
    assert!(
        exit.success,
        "validate rejected a bare generator source:\n{}\n{gen_text}",
        exit.stderr
    );
}

#[test]
fn validate_rejects_an_unknown_key() {
    let dir = setup();
    let text =
        example(dir.path()).replace("format = \"json\"", "format = \"json\"\ncolour = \"red\"");
    rejected(
        dir.path(),
        "unknown_key.toml",
        &text,
        &[line_of(&text, "colour")],
        "colour",
    );
}

#[test]
fn validate_rejects_a_missing_field() {
    let dir = setup();
    let text = example(dir.path());
    let path_line = line_of(&text, "data/clicks.ndjson");
    let text: String = text
        .lines()
        .enumerate()
        .filter(|(i, _)| i + 1 != path_line)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    // A missing key has no line of its own: accept any line of its table.
    let table = line_of(&text, "[sources.clicks]");
    let lines: Vec<usize> = (table..table + 5).collect();
    rejected(dir.path(), "missing_field.toml", &text, &lines, "path");
}

#[test]
fn validate_rejects_an_unknown_aggregate_function() {
    let dir = setup();
    let text = example(dir.path()).replace("count_distinct(user_id)", "median(user_id)");
    rejected(
        dir.path(),
        "unknown_agg.toml",
        &text,
        &[line_of(&text, "median")],
        "median",
    );
}

#[test]
fn validate_rejects_an_input_that_names_no_stream() {
    let dir = setup();
    let text = example(dir.path()).replace(
        "inputs = [\"clicks_per_minute\"]",
        "inputs = [\"clicks_per_hour\"]",
    );
    rejected(
        dir.path(),
        "unknown_input.toml",
        &text,
        &[line_of(&text, "clicks_per_hour")],
        "clicks_per_hour",
    );
}

#[test]
fn validate_rejects_a_cycle() {
    let dir = setup();
    let window = |name: &str, input: &str| {
        format!(
            "\n[transforms.{name}]\ntype = \"window\"\ninputs = [\"{input}\"]\ngroup_by = [\"ad_id\"]\n\
             window = {{ type = \"tumbling\", size = \"1m\" }}\nallowed_lateness = \"0s\"\n\
             aggregates = {{ n = \"count()\" }}\n"
        )
    };
    let text = format!(
        "{}{}{}",
        example(dir.path()),
        window("loop_left", "loop_right"),
        window("loop_right", "loop_left")
    );
    let (l, r) = (
        line_of(&text, "[transforms.loop_left]"),
        line_of(&text, "[transforms.loop_right]"),
    );
    let lines: Vec<usize> = (l..l + 8).chain(r..r + 8).collect();
    let err = rejected(dir.path(), "cycle.toml", &text, &lines, "loop_");
    assert!(
        err.to_lowercase().contains("cycle"),
        "a cycle must be called one:\n{err}"
    );
}

#[test]
fn run_rejects_a_bad_config_before_starting() {
    let dir = setup();
    let text =
        example(dir.path()).replace("format = \"json\"", "format = \"json\"\ncolour = \"red\"");
    let cfg = write_cfg(dir.path(), "bad_run.toml", &text);
    let exit = sluice(dir.path(), &["run", "--config", &cfg], T);
    assert!(
        !exit.success && exit.stderr.contains("colour"),
        "run must reject it:\n{}",
        exit.stderr
    );
    assert!(
        names_line(&exit.stderr, line_of(&text, "colour")),
        "{}",
        exit.stderr
    );
    assert!(
        !dir.path().join("out/clicks_per_minute.ndjson").exists(),
        "nothing may run"
    );
    let missing = dir.path().join("nope.toml");
    assert!(
        !sluice(
            dir.path(),
            &["validate", "--config", &missing.to_string_lossy()],
            T
        )
        .success
    );
}

#[test]
fn run_bounded_generator_writes_windows_and_stats() {
    let dir = setup();
    let out = |f: &str| dir.path().join("out").join(f);
    let text = example(dir.path()).replace(
        "type = \"file\"              # file | generator",
        "type = \"generator\"\ncount = 20000\n#",
    );
    let text: String = text
        .lines()
        .filter(|l| {
            let file_source_key = (l.starts_with("path = ") && l.contains("data/clicks"))
                || ["format =", "event_time =", "watermark ="]
                    .iter()
                    .any(|k| l.starts_with(k));
            !file_source_key
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let cfg = write_cfg(dir.path(), "gen_run.toml", &text);
    let stats = dir.path().join("stats.json");
    let exit = sluice(
        dir.path(),
        &["run", "--config", &cfg, "--stats", &stats.to_string_lossy()],
        Duration::from_secs(120),
    );
    assert!(exit.success, "run failed:\n{}\n{text}", exit.stderr);

    let lines = read_lines(&out("clicks_per_minute.ndjson"));
    assert!(!lines.is_empty(), "no windows written");
    let mut last: BTreeMap<(String, i64), i64> = BTreeMap::new();
    for line in &lines {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("bad output line {line}: {e}"));
        let (start, end) = (
            v["window_start"].as_i64().unwrap_or(1),
            v["window_end"].as_i64().unwrap_or(0),
        );
        assert!(
            start.rem_euclid(60_000) == 0 && end - start == 60_000,
            "not a 1m tumbling window: {line}"
        );
        let clicks = v["clicks"].as_i64().unwrap_or(0);
        assert!(
            clicks >= 1
                && v["spend"].is_i64()
                && v["top_bid"].is_i64()
                && v["users"].as_i64() >= Some(1),
            "{line}"
        );
        last.insert((v["ad_id"].to_string(), start), clicks);
    }
    let late = read_lines(&out("late_clicks.ndjson")).len() as i64;
    assert_eq!(
        last.values().sum::<i64>() + late,
        20_000,
        "every generated event is counted once or is late"
    );

    let s: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap_or_default())
        .unwrap_or_else(|e| panic!("--stats did not write JSON: {e}"));
    let num = |k: &str| {
        s[k].as_f64()
            .unwrap_or_else(|| panic!("stats lack a number `{k}`: {s}"))
    };
    assert!(num("events_per_second") > 0.0);
    let (p50, p99, p999) = (
        num("latency_p50_us"),
        num("latency_p99_us"),
        num("latency_p999_us"),
    );
    assert!(
        0.0 <= p50 && p50 <= p99 && p99 <= p999,
        "percentiles out of order: {s}"
    );
}

#[test]
fn every_shipped_config_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        root.join("config/quickstart.toml").is_file(),
        "config/quickstart.toml is required by the issue"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(root.join("config")).expect("read config/") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let exit = sluice(
                dir.path(),
                &["validate", "--config", &path.to_string_lossy()],
                T,
            );
            assert!(
                exit.success,
                "{} does not validate:\n{}",
                path.display(),
                exit.stderr
            );
        }
    }
}

#[test]
fn validate_refuses_hot_keys_where_results_could_change() {
    let dir = setup();
    let base = example(dir.path());
    // A session's events cannot be combined before the whole key is seen.
    let text = base.replace(
        "window = { type = \"tumbling\", size = \"1m\" }",
        "window = { type = \"session\", gap = \"30s\" }\nhot_keys = { mode = \"salt\", salt = 8 }",
    );
    let err = rejected(
        dir.path(),
        "hot_session.toml",
        &text,
        &[line_of(&text, "hot_keys")],
        "hot_keys",
    );
    assert!(err.contains("session windows cannot be salted"), "{err}");
    // Dedupe keeps rows, one by one: nothing to combine.
    let text = format!(
        "{base}\n[transforms.first_clicks]\ntype = \"dedupe\"\ninputs = [\"clicks\"]\nkey = [\"user_id\"]\nhorizon = \"1m\"\nhot_keys = {{ mode = \"auto\" }}\n"
    );
    let err = rejected(
        dir.path(),
        "hot_dedupe.toml",
        &text,
        &[line_of(&text, "mode = \"auto\"")],
        "hot_keys",
    );
    assert!(err.contains("dedupe cannot be salted"), "{err}");
    // `salt` belongs to the salt mode; a share is in (0, 1].
    let text = base.replace(
        "window = { type = \"tumbling\", size = \"1m\" }",
        "window = { type = \"tumbling\", size = \"1m\" }\nhot_keys = { mode = \"auto\", threshold = 1.5 }",
    );
    let err = rejected(
        dir.path(),
        "hot_threshold.toml",
        &text,
        &[line_of(&text, "hot_keys")],
        "threshold",
    );
    assert!(err.contains("expected a number in (0, 1]"), "{err}");
    // And the issue's own example is accepted as written.
    let text = base.replace(
        "window = { type = \"tumbling\", size = \"1m\" }",
        "window = { type = \"tumbling\", size = \"1m\" }\nhot_keys = { mode = \"salt\", salt = 8 }      # off | salt | auto",
    );
    let cfg = write_cfg(dir.path(), "hot_ok.toml", &text);
    let exit = sluice(dir.path(), &["validate", "--config", &cfg], T);
    assert!(
        exit.success,
        "the issue's hot_keys example is refused:\n{}",
        exit.stderr
    );
}
