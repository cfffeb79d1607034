//! A failing sink ends the whole run with an error naming the sink, on every shard count, instead of
//! leaving the other shards waiting for chunks that will never come.
mod common;

use std::time::Duration;

#[test]
fn sink_write_failure_fails_the_run_without_hanging() {
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("job.toml");
        std::fs::write(
            &cfg,
            format!(
                r#"[runtime]
shards = {shards}
[sources.clicks]
type = "generator"
count = 2000000
[transforms.cps]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1s" }}
aggregates = {{ clicks = "count()" }}
[sinks.full]
type = "file"
inputs = ["cps"]
path = "/dev/full"
"#
            ),
        )
        .unwrap();
        // The shared harness kills the run and fails the test if it outlives the timeout.
        let cfg = cfg.to_str().unwrap();
        let exit = common::sluice(
            dir.path(),
            &["run", "--config", cfg],
            Duration::from_secs(30),
        );
        let err = exit.stderr;
        assert!(
            !exit.success,
            "shards={shards}: a failed sink must fail the run"
        );
        assert!(
            err.contains("sink `full`") && err.contains("write failed"),
            "shards={shards}: {err}"
        );
        assert!(
            !err.contains("another shard failed"),
            "the cause is reported, not the echo: {err}"
        );
    }
}

/// A checkpoint directory that cannot be created or written stops the job before any input is
/// read, with a message naming the directory: under a plain file (ENOTDIR), on a read-only file
/// system (/proc, read-only even for root), and one without write permission (only checked when
/// not running as root, whom permissions do not stop).
#[test]
fn an_unusable_checkpoint_dir_is_refused_before_any_input_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = d.join("clicks.ndjson");
    std::fs::write(
        &data,
        "{\"ts\":1000,\"ad_id\":\"a\"}\n{\"ts\":90000,\"ad_id\":\"a\"}\n",
    )
    .unwrap();
    let locked = d.join("locked");
    std::fs::create_dir(&locked).unwrap();
    let mut cases = vec![
        (data.join("ckpt"), "Not a directory"),
        (
            std::path::PathBuf::from("/proc/sluice-no-such-ckpt"),
            "No such file",
        ),
    ];
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
        cases.push((locked.join("ckpt"), "Permission denied"));
    }
    for (i, (ckpt, why)) in cases.into_iter().enumerate() {
        let out = d.join(format!("out-{i}.ndjson"));
        let dead = d.join(format!("dead-{i}.ndjson"));
        let cfg = d.join(format!("job-{i}.toml"));
        std::fs::write(
            &cfg,
            format!(
                "[sources.clicks]\ntype = \"file\"\npath = {:?}\nformat = \"json\"\n\
                 event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
                 watermark = {{ max_out_of_orderness = \"1s\" }}\n\
                 [transforms.w]\ntype = \"window\"\ninputs = [\"clicks\"]\ngroup_by = [\"ad_id\"]\n\
                 window = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ n = \"count()\" }}\n\
                 [sinks.out]\ntype = \"file\"\ninputs = [\"w\"]\npath = {:?}\n\
                 [dead_letter]\npath = {:?}\n[checkpoint]\ndir = {:?}\n",
                data, out, dead, ckpt
            ),
        )
        .unwrap();
        let exit = common::sluice(
            d,
            &["run", "--config", cfg.to_str().unwrap()],
            Duration::from_secs(30),
        );
        assert!(
            !exit.success,
            "{}: ran with an unusable checkpoint dir",
            ckpt.display()
        );
        let err = exit.stderr;
        assert!(
            err.contains(&ckpt.display().to_string()) && err.contains(why),
            "{}: {err}",
            ckpt.display()
        );
        let wrote = std::fs::read_to_string(&out).unwrap_or_default();
        assert!(
            wrote.is_empty(),
            "{}: output written before the refusal: {wrote}",
            ckpt.display()
        );
    }
}
