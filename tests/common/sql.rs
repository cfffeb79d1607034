//! What SQL jobs' tests share: Flink's JSON text of a timestamp, to compare output rows with
//! models that work in epoch milliseconds.

/// Epoch ms as Flink's JSON writes a TIMESTAMP(3) in UTC: `2023-11-14 22:13:20`, then the
/// milliseconds without trailing zeros when there are any (`.5`, `.14`, `.123`).
pub fn flink_ts(ms: i64) -> String {
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let s = rem / 1000;
    // Flink's SQL timestamp text: the fraction without trailing zeros (`.5`, `.14`), none at .000.
    let frac = match rem % 1000 {
        0 => String::new(),
        f => format!(".{f:03}").trim_end_matches('0').to_string(),
    };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}{frac}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Writes `sql` as `dir/job.sql` and a `dir/job.toml` that runs it on 2 shards, its dead letters
/// in `dir/dead.ndjson`, with `extra` (more TOML tables, e.g. a `[checkpoint]`) before them;
/// returns the TOML file's path.
pub fn sql_job(dir: &std::path::Path, sql: &str, extra: &str) -> String {
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    std::fs::write(dir.join("job.sql"), sql).unwrap();
    let toml = format!(
        "[runtime]\nshards = 2\n\n{extra}[pipeline]\nsql = {}\n\n[dead_letter]\npath = {}\n",
        super::toml_str(&path(&dir.join("job.sql"))),
        super::toml_str(&path(&dir.join("dead.ndjson")))
    );
    let cfg = dir.join("job.toml");
    std::fs::write(&cfg, toml).unwrap();
    path(&cfg)
}

/// Runs `sql` in `dir` as [`sql_job`] writes it (no extra TOML); the run must succeed.
pub fn run_sql(dir: &std::path::Path, sql: &str) -> super::Exit {
    run_job(dir, &sql_job(dir, sql, ""))
}

/// Runs `sluice run --config cfg` in `dir` (two minutes at most); it must succeed.
pub fn run_job(dir: &std::path::Path, cfg: &str) -> super::Exit {
    let exit = super::sluice(
        dir,
        &["run", "--config", cfg],
        std::time::Duration::from_secs(120),
    );
    assert!(exit.success, "{}", exit.stderr);
    exit
}

/// The WITH clause of a filesystem table in `debezium-json` at `path`.
pub fn debezium_file(path: &std::path::Path) -> String {
    format!(
        "WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json')",
        path.to_string_lossy()
    )
}
