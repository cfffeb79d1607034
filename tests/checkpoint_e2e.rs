//! Checkpoints through the real binary: taking them changes no result; a finished run's final
//! checkpoint leaves nothing to replay; `kill -9` at random points and restarting, with another
//! shard count each time (state moves by key group), gives exactly the lines of an uninterrupted
//! run — none lost, none twice (the file sink commits with checkpoints) — and those lines are what
//! the independent reference model computes from the same events; links planted in the checkpoint
//! directory are not followed, and what sluice creates there is owner-only.

mod common;

use common::flow_job::kill_after_checkpoint;
use common::{
    assert_rows_match, late_clicks_toml, model, read_lines, sluice, Agg, AggVal, Job, Win,
};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

fn config(dir: &Path, name: &str, events: u64, checkpoint: Option<(&str, u32)>) -> String {
    config_on(dir, name, events, checkpoint, 2)
}

/// The job with `shards` shards; `name` picks output, state and config file.
fn config_on(
    dir: &Path,
    name: &str,
    events: u64,
    checkpoint: Option<(&str, u32)>,
    shards: usize,
) -> String {
    let out = dir.join(format!("{name}.ndjson"));
    let ckpt = checkpoint.map_or(String::new(), |(interval, retain)| {
        format!(
            "[checkpoint]\ndir = {:?}\ninterval = \"{interval}\"\nretain = {retain}\n",
            dir.join(format!("{name}-state"))
        )
    });
    let toml = late_clicks_toml(
        &format!("shards = {shards}\nchunk_bytes = 65536"),
        events,
        r#"clicks = "count()", spend = "sum(bid)", users = "count_distinct(user_id)""#,
        &out,
        &ckpt,
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

fn lines_of(dir: &Path, name: &str) -> Vec<String> {
    let mut v = read_lines(&dir.join(format!("{name}.ndjson")));
    v.sort();
    v
}

fn checkpoint_ids(state: &Path) -> Vec<u64> {
    let mut ids: Vec<u64> = std::fs::read_dir(state)
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix("chk-")?
                .parse()
                .ok()
        })
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn checkpoints_change_no_result_and_a_finished_run_leaves_nothing_to_replay() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plain = config(d, "plain", 1_600_000, None);
    assert!(sluice(d, &["run", "--config", &plain], Duration::from_secs(60)).success);
    let with = config(d, "ckpt", 1_600_000, Some(("1ms", 2)));
    let first = sluice(d, &["run", "--config", &with], Duration::from_secs(60));
    assert!(first.success, "{}", first.stderr);
    assert!(!first.stderr.contains("resuming"), "{}", first.stderr);
    assert!(first.stderr.contains("checkpoints: "), "{}", first.stderr);
    let want = lines_of(d, "plain");
    assert!(want.len() > 1000);
    assert_eq!(lines_of(d, "ckpt"), want);
    // Several checkpoints were taken; only the newest `retain` are kept. (The input is long
    // enough that even a fast run takes at least three at a 1 ms interval.)
    let ids = checkpoint_ids(&d.join("ckpt-state"));
    assert!(
        ids.len() <= 2 && ids.last().copied().unwrap_or(0) >= 3,
        "{ids:?}"
    );
    // Run again: it resumes from the final checkpoint, which has nothing left to do.
    let again = sluice(d, &["run", "--config", &with], Duration::from_secs(60));
    assert!(
        again.success && again.stderr.contains("resuming from checkpoint"),
        "{}",
        again.stderr
    );
    assert_eq!(
        lines_of(d, "ckpt"),
        want,
        "a resumed finished run adds nothing"
    );
    // Tear the newest (final) checkpoint: the next run says so, falls back to the one before,
    // cuts the output back to that checkpoint's commit and replays the rest: still every line once.
    let state = d.join("ckpt-state");
    let ids = checkpoint_ids(&state);
    let newest = state.join(format!("chk-{:020}", ids[ids.len() - 1]));
    let snap = newest.join("shard-1.snap");
    let bytes = std::fs::read(&snap).unwrap();
    std::fs::write(&snap, &bytes[..bytes.len() / 2]).unwrap();
    let state_arg = state.to_string_lossy().into_owned();
    let listed = sluice(d, &["inspect", &state_arg], Duration::from_secs(30));
    assert!(listed.success, "{}", listed.stderr);
    assert!(
        listed
            .stdout
            .contains(&format!("checkpoint {}: not usable", ids[1]))
            && listed.stdout.contains("torn")
            && listed
                .stdout
                .contains(&format!("checkpoint {}: complete", ids[0]))
            && listed.stdout.contains("shard 1: key groups 360..720"),
        "{}",
        listed.stdout
    );
    let fallback = sluice(d, &["run", "--config", &with], Duration::from_secs(60));
    assert!(fallback.success, "{}", fallback.stderr);
    assert!(
        fallback.stderr.contains("torn")
            && fallback
                .stderr
                .contains(&format!("resuming from checkpoint {}", ids[0])),
        "{}",
        fallback.stderr
    );
    assert_eq!(
        lines_of(d, "ckpt"),
        want,
        "falling back replays exactly the lost part"
    );
}

#[test]
fn kill_9_at_random_points_then_restart_with_other_shard_counts_gives_exactly_the_lines_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let events = 1_000_000;
    let plain = config(d, "plain", events, None);
    assert!(sluice(d, &["run", "--config", &plain], Duration::from_secs(120)).success);
    let want = lines_of(d, "plain");
    assert!(want.len() > 10_000);

    let mut resumed = 0;
    let state = d.join("crash-state");
    // Kill at growing delays after each start's first new checkpoint (a fixed delay alone lets a
    // fast machine finish the job before the kill), rescaling between starts; then let the last
    // start finish.
    for (i, delay_ms) in [0u64, 5, 15, 30, 60].into_iter().enumerate() {
        let with = config_on(d, "crash", events, Some(("10ms", 3)), [2, 1, 3, 2, 1][i]);
        let err = d.join(format!("crash-stderr-{i}.txt"));
        let killed = kill_after_checkpoint(&with, &state, Duration::from_millis(delay_ms), &err);
        resumed += usize::from(killed.resumed);
    }
    let with = config_on(d, "crash", events, Some(("10ms", 3)), 3);
    let last = sluice(d, &["run", "--config", &with], Duration::from_secs(120));
    assert!(last.success, "{}", last.stderr);
    resumed += usize::from(last.stderr.contains("resuming from checkpoint"));
    assert!(resumed >= 2, "recovery was exercised only {resumed} times");
    let got = lines_of(d, "crash");
    let (w, g): (BTreeSet<&String>, BTreeSet<&String>) =
        (want.iter().collect(), got.iter().collect());
    let missing: Vec<&&String> = w.difference(&g).take(3).collect();
    let extra: Vec<&&String> = g.difference(&w).take(3).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, never in an uninterrupted run {extra:?}"
    );
    assert_eq!(got.len(), want.len(), "some lines were written twice");
    assert_eq!(got, want);
    // And they are the reference model's, line by line per window in emission order: the same
    // events written out by `sluice loadgen`, replayed by the model.
    let events_file = d.join("events.ndjson");
    let n = events.to_string();
    let gen = sluice(
        d,
        &[
            "loadgen",
            "clicks",
            "--events",
            &n,
            "--out",
            &events_file.to_string_lossy(),
            "--out-of-orderness-ms",
            "2000",
            "--late-fraction",
            "0.01",
            "--late-by-ms",
            "7500",
        ],
        Duration::from_secs(120),
    );
    assert!(gen.success, "{}", gen.stderr);
    let job = Job {
        window: Win::Tumbling { size: 1000 },
        group_by: vec!["ad_id".into()],
        aggs: vec![
            ("clicks".into(), Agg::Count),
            ("spend".into(), Agg::Sum("bid".into())),
            ("users".into(), Agg::CountDistinct("user_id".into())),
        ],
        ts_field: "ts".into(),
        ooo_ms: 2000,
        lateness_ms: 5000,
    };
    let content = std::fs::read_to_string(&events_file).unwrap();
    let expected = model(&job, &[&content]);
    assert_eq!(expected.valid_events as u64, events);
    assert!(expected.refires > 0, "late events re-fire windows");
    // `count_distinct` is exact (SQL's COUNT(DISTINCT)): windows past the 256 values where the
    // counter leaves its small sorted vector for a hash set restore and merge exactly too.
    let past_small = expected
        .rows
        .iter()
        .flat_map(|r| &r.aggs)
        .filter(|(name, v)| name == "users" && matches!(v, AggVal::Int(n) if *n > 256))
        .count();
    assert!(past_small > 0, "some windows go past the small set");
    let in_file_order = read_lines(&d.join("crash.ndjson"));
    assert_rows_match(&job, &in_file_order, &expected.rows, "crash-restarted run");
    // Nothing is left staged.
    let staging = d.join("crash.ndjson.staging");
    assert!(std::fs::read_dir(&staging).map_or(true, |mut r| r.next().is_none()));
}

#[test]
fn links_planted_in_the_checkpoint_dir_are_not_followed_and_its_files_are_owner_only() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (state, outside, victim) = (d.join("links-state"), d.join("outside"), d.join("victim"));
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(&victim, b"precious").unwrap();
    symlink(&victim, state.join("sluice.pid")).unwrap();
    symlink(&victim, state.join(".sluice.pid.tmp")).unwrap();
    symlink(&outside, state.join(format!("chk-{:020}", 1))).unwrap();
    let with = config(d, "links", 100_000, Some(("1ms", 2)));
    let r = sluice(d, &["run", "--config", &with], Duration::from_secs(60));
    assert!(r.success, "{}", r.stderr);
    assert!(
        r.stderr.contains("checkpoint 1 skipped") && r.stderr.contains("symbolic link"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("resuming"), "{}", r.stderr);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    let mode = |p: &Path| p.symlink_metadata().unwrap().permissions().mode() & 0o777;
    let ids = checkpoint_ids(&state);
    assert!(!ids.is_empty() && !ids.contains(&1), "{ids:?}");
    for id in ids {
        let f = state.join(format!("chk-{id:020}"));
        assert_eq!(mode(&f), 0o700, "{}", f.display());
        for e in std::fs::read_dir(&f).unwrap() {
            let p = e.unwrap().path();
            assert_eq!(mode(&p), 0o600, "{}", p.display());
        }
    }
    assert!(
        state.join("sluice.pid").symlink_metadata().is_err(),
        "the pid file (which replaced the link) is removed at the end"
    );
}
