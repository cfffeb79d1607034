//! `sluice export flink` through the real binary: the exported `job.sql` is the job's own SQL with
//! only the documented changes (SET statements from the TOML in front, relative paths made
//! absolute), `run.sh` is executable, and a TOML-transform job or a non-empty directory is refused.

use std::path::Path;
use std::process::Command;

/// The outcome of one `sluice` run.
struct Exit {
    success: bool,
    stderr: String,
}

/// Runs the binary in `dir`: the job's relative paths (its `.sql`, its data) are read from there.
fn sluice(dir: &Path, args: &[&str]) -> Exit {
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run sluice");
    Exit {
        success: out.status.success(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn copy_config(dir: &Path, name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    std::fs::create_dir_all(dir.join("config")).unwrap();
    std::fs::copy(root.join(name), dir.join("config").join(name)).unwrap();
}

#[test]
fn export_writes_the_jobs_own_sql_with_settings_and_absolute_paths() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    for f in ["sql_ad_spend.toml", "ad_spend.sql", "ad_spend.toml"] {
        copy_config(dir, f);
    }
    let toml = std::fs::read_to_string(dir.join("config/sql_ad_spend.toml")).unwrap();
    std::fs::write(
        dir.join("config/sql_ad_spend.toml"),
        toml.replace(
            "[pipeline]",
            "[checkpoint]\ndir = \"state\"\ninterval = \"3s\"\n\n[pipeline]",
        ),
    )
    .unwrap();
    let exit = sluice(
        dir,
        &[
            "export",
            "flink",
            "--config",
            "config/sql_ad_spend.toml",
            "--out",
            "flink",
        ],
    );
    assert!(exit.success, "{}", exit.stderr);
    let job = std::fs::read_to_string(dir.join("flink/job.sql")).unwrap();
    let original = std::fs::read_to_string(dir.join("config/ad_spend.sql")).unwrap();
    // canonicalize: the binary sees the temp dir through its real path.
    let abs = dir.canonicalize().unwrap();
    let want_body = original
        .replace("'data/", &format!("'{}/data/", abs.display()))
        .replace("'out/", &format!("'{}/out/", abs.display()));
    assert!(
        job.ends_with(&want_body),
        "the job's own SQL is not the tail of:\n{job}"
    );
    let head = &job[..job.len() - want_body.len()];
    for want in [
        "SET 'parallelism.default' = '2';",
        "SET 'table.exec.source.idle-timeout' = '30000 ms';",
        "SET 'execution.checkpointing.interval' = '3000 ms';",
        "SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';",
        &format!(
            "SET 'execution.checkpointing.dir' = 'file://{}/state';",
            abs.display()
        ),
    ] {
        assert!(head.contains(want), "{want} not in\n{head}");
    }
    assert_eq!(
        head.lines().filter(|l| l.starts_with("SET ")).count(),
        5,
        "{head}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("flink/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "run.sh is not executable");
    }
    assert!(std::fs::read_to_string(dir.join("flink/run_local.py"))
        .unwrap()
        .contains("pyflink"));
    let readme = std::fs::read_to_string(dir.join("flink/README.md")).unwrap();
    assert!(
        readme.contains("path 'data/flow_clicks.ndjson' ->"),
        "{readme}"
    );
    // What the cluster needs is said for the job's own connectors (files), not for others.
    assert!(
        readme.contains("- A filesystem source must be readable by every task manager"),
        "{readme}"
    );
    assert!(
        !readme.contains("flink-sql-connector-kafka") && !readme.contains("flink-connector-jdbc"),
        "{readme}"
    );

    // Into the same, now non-empty, directory: refused, and nothing is overwritten.
    let again = sluice(
        dir,
        &[
            "export",
            "flink",
            "--config",
            "config/sql_ad_spend.toml",
            "--out",
            "flink",
        ],
    );
    assert!(!again.success);
    assert!(
        again.stderr.contains("exists and is not empty"),
        "{}",
        again.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("flink/job.sql")).unwrap(),
        job
    );

    let toml_job = sluice(
        dir,
        &[
            "export",
            "flink",
            "--config",
            "config/ad_spend.toml",
            "--out",
            "other",
        ],
    );
    assert!(!toml_job.success);
    assert!(
        toml_job.stderr.contains("has no [pipeline] sql"),
        "{}",
        toml_job.stderr
    );
    assert!(!dir.join("other").exists());
}

#[test]
fn export_removes_sluice_hints_and_lists_them() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let sql = "CREATE TABLE clicks (ad_id STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt)
  WITH ('connector' = 'filesystem', 'path' = '/data/clicks.ndjson', 'format' = 'json');
CREATE TABLE o (ad_id STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks /*+ OPTIONS('sluice.hot_keys'='auto') */, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY ad_id, window_start, window_end;
";
    std::fs::write(dir.join("job.sql"), sql).unwrap();
    std::fs::write(
        dir.join("job.toml"),
        "[runtime]\nshards = 1\n\n[pipeline]\nsql = \"job.sql\"\n",
    )
    .unwrap();
    let exit = sluice(
        dir,
        &["export", "flink", "--config", "job.toml", "--out", "f"],
    );
    assert!(exit.success, "{}", exit.stderr);
    let job = std::fs::read_to_string(dir.join("f/job.sql")).unwrap();
    assert!(
        job.ends_with(&sql.replace(" /*+ OPTIONS('sluice.hot_keys'='auto') */", "")),
        "{job}"
    );
    let readme = std::fs::read_to_string(dir.join("f/README.md")).unwrap();
    assert!(
        readme.contains("removed the sluice-only hint /*+ OPTIONS('sluice.hot_keys'='auto') */"),
        "{readme}"
    );
}
