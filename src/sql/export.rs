//! `sluice export flink`: a directory that runs a SQL job's own `.sql` on Apache Flink 2.x, for
//! when a job outgrows one machine. The SQL is kept as written (it is Flink SQL: sluice reads
//! the same connectors, options and statements); what sluice takes from the job's TOML becomes
//! Flink `SET` statements in front of it (parallelism from `[runtime] shards`, exactly-once
//! checkpoints from `[checkpoint]`, the sources' idle timeout), and relative file paths become
//! absolute, since a Flink job does not run in the directory sluice was started from; hints of
//! sluice's own options (`/*+ OPTIONS('sluice.hot_keys' = ..) */`) are removed. The
//! directory also holds `run.sh` (the SQL client on a cluster, or `--local` for a PyFlink
//! mini-cluster) and a README of what was changed and what to set on a cluster.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::Config;

/// The PyFlink runner `run.sh --local` uses (the parity script's).
const RUN_LOCAL: &str = include_str!("../../scripts/parity/flink_run.py");

const RUN_SH: &str = r#"#!/usr/bin/env bash
# Runs job.sql on Apache Flink 2.x: with the SQL client of $FLINK_HOME (or sql-client.sh on PATH)
# against the cluster it is configured for, or, with --local, in a PyFlink local mini-cluster
# (pip install apache-flink==2.3.0; Java 17) as a check before submitting.
set -euo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" = "--local" ]; then
    PY="${PYTHON:-python3}"
    "$PY" -c 'import pyflink' 2>/dev/null || { echo "run.sh --local needs PyFlink: pip install apache-flink==2.3.0" >&2; exit 1; }
    exec env TZ=UTC "$PY" run_local.py job.sql
fi
CLIENT="${FLINK_HOME:+$FLINK_HOME/bin/}sql-client.sh"
exec "$CLIENT" -f job.sql
"#;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}: the job has no [pipeline] sql: only SQL jobs export to Flink (a TOML-transform job has no Flink SQL form yet)")]
    NotSql(String),
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{0}: the export directory exists and is not empty")]
    NotEmpty(String),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> ExportError + '_ {
    move |e| ExportError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// What an export wrote and changed, for the CLI to print.
#[derive(Debug)]
pub struct Exported {
    pub dir: PathBuf,
    /// One line per change made to the SQL.
    pub changes: Vec<String>,
}

/// Writes the Flink job for `config` (read from `config_path`, already validated) into `out`.
pub fn export_flink(
    config: &Config,
    config_path: &Path,
    out: &Path,
) -> Result<Exported, ExportError> {
    let Some(pipeline) = &config.pipeline else {
        return Err(ExportError::NotSql(config_path.display().to_string()));
    };
    let sql = if super::job::is_path(&pipeline.sql) {
        let p = Path::new(pipeline.sql.trim());
        std::fs::read_to_string(p).map_err(io(p))?
    } else {
        pipeline.sql.clone()
    };
    let cwd = std::env::current_dir().map_err(io(Path::new(".")))?;
    let mut changes = Vec::new();
    let body = absolute_paths(
        &without_sluice_hints(&sql, &mut changes),
        &cwd,
        &mut changes,
    );
    let head = settings(config, &cwd, &mut changes);
    if out.exists() && std::fs::read_dir(out).map_err(io(out))?.next().is_some() {
        return Err(ExportError::NotEmpty(out.display().to_string()));
    }
    std::fs::create_dir_all(out).map_err(io(out))?;
    let write = |name: &str, text: &str| {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(io(&p))
    };
    write(
        "job.sql",
        &format!(
            "-- Exported by `sluice export flink` from {}; the SQL below the SET statements is the job's own.\n{head}\n{body}",
            config_path.display()
        ),
    )?;
    write("run.sh", RUN_SH)?;
    write("run_local.py", RUN_LOCAL)?;
    write(
        "README.md",
        &readme(config_path, &changes, &connector_notes(config)),
    )?;
    let run = out.join("run.sh");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).map_err(io(&run))?;
    }
    Ok(Exported {
        dir: out.to_path_buf(),
        changes,
    })
}

/// Flink `SET` statements for what the job's TOML says.
fn settings(config: &Config, cwd: &Path, changes: &mut Vec<String>) -> String {
    let mut s = String::new();
    let shards = config.runtime.shards;
    let _ = writeln!(s, "SET 'parallelism.default' = '{shards}';");
    changes.push(format!(
        "parallelism.default = {shards} ([runtime] shards); raise it on a cluster"
    ));
    // sluice's sources go idle after their idle timeout; Flink's only when told to.
    let idle = crate::config::defaults::idle_timeout().as_millis();
    let _ = writeln!(s, "SET 'table.exec.source.idle-timeout' = '{idle} ms';");
    changes.push(format!(
        "table.exec.source.idle-timeout = {idle} ms (sluice's idle timeout for SQL sources)"
    ));
    if let Some(cp) = &config.checkpoint {
        let ms = cp.interval.as_millis();
        let dir = if cp.dir.is_absolute() {
            cp.dir.clone()
        } else {
            cwd.join(&cp.dir)
        };
        let _ = writeln!(s, "SET 'execution.checkpointing.interval' = '{ms} ms';");
        let _ = writeln!(s, "SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';");
        let _ = writeln!(
            s,
            "SET 'execution.checkpointing.dir' = 'file://{}';",
            dir.display().to_string().replace('\'', "''")
        );
        changes.push(format!("checkpoints every {ms} ms, exactly-once, to file://{} ([checkpoint]); on a cluster use shared storage (s3://, hdfs://)", dir.display()));
    } else {
        changes.push("no [checkpoint]: Flink runs without checkpoints; a filesystem or exactly-once Kafka sink commits only on checkpoints, so set execution.checkpointing.interval for an unbounded job".into());
    }
    s
}

/// `sql` without its `/*+ OPTIONS(...) */` hints of sluice's own options (Flink has none of
/// them; sluice refuses every other hint, so these are all there are).
fn without_sluice_hints(sql: &str, changes: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find("/*+") {
        let Some(len) = rest[at..].find("*/") else {
            break;
        };
        let hint = &rest[at..at + len + 2];
        out.push_str(rest[..at].trim_end_matches(' '));
        if hint.contains("'sluice.") {
            changes.push(format!("removed the sluice-only hint {hint}"));
        } else {
            out.push(' ');
            out.push_str(hint);
        }
        rest = &rest[at + len + 2..];
    }
    out.push_str(rest);
    out
}

/// `'path' = 'rel'` options made absolute against `cwd`.
fn absolute_paths(sql: &str, cwd: &Path, changes: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find("'path'") {
        let (before, after) = rest.split_at(at + "'path'".len());
        out.push_str(before);
        rest = after;
        let trimmed = rest.trim_start();
        let Some(value) = trimmed.strip_prefix('=').map(str::trim_start) else {
            continue;
        };
        let Some(inner) = value.strip_prefix('\'') else {
            continue;
        };
        let Some(end) = inner.find('\'') else {
            continue;
        };
        let path = &inner[..end];
        let consumed = rest.len() - inner[end + 1..].len();
        if Path::new(path).is_absolute() || path.contains("://") {
            out.push_str(&rest[..consumed]);
        } else {
            let abs = cwd.join(path);
            let _ = write!(
                out,
                " = '{}'",
                abs.display().to_string().replace('\'', "''")
            );
            changes.push(format!(
                "path '{path}' -> '{}' (a cluster needs shared storage)",
                abs.display()
            ));
        }
        rest = &rest[consumed..];
    }
    out.push_str(rest);
    out
}

/// What the job's connectors need on a cluster ([`SourceTable::flink_notes`]), each once, in
/// the order of their tables.
///
/// [`SourceTable::flink_notes`]: crate::connectors::SourceTable::flink_notes
fn connector_notes(config: &Config) -> Vec<&'static str> {
    let sources = config
        .sources
        .values()
        .flat_map(|s| s.table().flink_notes());
    let sinks = config.sinks.values().flat_map(|s| s.table().flink_notes());
    let mut notes: Vec<&'static str> = Vec::new();
    for n in sources.chain(sinks) {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    notes
}

fn readme(config_path: &Path, changes: &[String], notes: &[&str]) -> String {
    let mut s = format!(
        "# Flink job exported from {}\n\n`job.sql` is the job's SQL, unchanged but for:\n\n",
        config_path.display()
    );
    for c in changes {
        let _ = writeln!(s, "- {c}");
    }
    s.push_str(
        "
Run it with `./run.sh` (the SQL client of `$FLINK_HOME`, submitting to the cluster its
`conf/config.yaml` names) or `./run.sh --local` (a PyFlink mini-cluster, for a check).

On a cluster:
",
    );
    for n in notes {
        let _ = writeln!(s, "- {n}");
    }
    s.push_str(
        "- `table.exec.state.ttl` applies in Flink to every stateful operator, in processing time since a
  key was last seen: a deduplication (sluice: in event time since its first row) and also a
  temporal join's versions, so a price unchanged for longer than the TTL is forgotten there
  (inner rows dropped, LEFT rows NULL), which sluice never does.
- A `SET 'table.exec.source.idle-timeout'` in the SQL comes after the one exported here and wins,
  in Flink as in sluice.
- Flink's JSON format fails the job on a malformed line unless the table sets
  `'json.ignore-parse-errors' = 'true'` (then it skips the line); sluice sends it to the dead
  letters either way.
",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The connector notes of the job written in `sql` (loaded as `sluice export` loads it).
    fn notes_of(sql: &str) -> Vec<&'static str> {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("job.sql"), sql).unwrap();
        let toml = format!(
            "[pipeline]\nsql = \"{}\"\n",
            d.path().join("job.sql").display()
        );
        std::fs::write(d.path().join("job.toml"), toml).unwrap();
        let job = crate::plan::load_job(&d.path().join("job.toml")).expect("compiles");
        connector_notes(&job.config)
    }

    const KAFKA: &str =
        "'connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092'";

    #[test]
    fn a_cluster_is_told_what_the_jobs_own_connectors_need_each_once() {
        let files = notes_of(
            "CREATE TABLE a (x STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt) WITH ('connector' = 'filesystem', 'path' = 'a', 'format' = 'json');
CREATE TABLE b (x STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt) WITH ('connector' = 'filesystem', 'path' = 'b', 'format' = 'json');
CREATE TABLE o (x STRING) WITH ('connector' = 'filesystem', 'path' = 'o', 'format' = 'json');
INSERT INTO o SELECT x FROM a;
INSERT INTO o SELECT x FROM b;",
        );
        assert_eq!(files.len(), 2, "{files:?}");
        assert!(files[0].starts_with("A filesystem source must be readable"));
        assert!(files[1].starts_with("A filesystem sink writes `part-*` files"));

        let kafka = notes_of(&format!(
            "CREATE TABLE k (x STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt) WITH ({KAFKA}, 'format' = 'avro-confluent', 'avro-confluent.url' = 'http://127.0.0.1:8081');
CREATE TABLE o (x STRING) WITH ({KAFKA}, 'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'p');
CREATE TABLE p (x STRING) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://h/db', 'table-name' = 'p');
INSERT INTO o SELECT x FROM k;
INSERT INTO p SELECT x FROM k;"
        ));
        let has = |text: &str| kafka.iter().filter(|n| n.contains(text)).count();
        assert_eq!(has("flink-sql-connector-kafka"), 1, "{kafka:?}");
        assert_eq!(has("flink-sql-avro-confluent-registry"), 1, "{kafka:?}");
        assert_eq!(has("sink.transactional-id-prefix"), 1, "{kafka:?}");
        assert_eq!(has("flink-connector-jdbc"), 1, "{kafka:?}");
        assert_eq!(has("filesystem"), 0, "{kafka:?}");
    }

    #[test]
    fn sluice_hints_are_removed_and_listed() {
        let mut changes = Vec::new();
        let sql = "FROM TABLE(TUMBLE(TABLE clicks /*+ OPTIONS('sluice.hot_keys'='auto') */, DESCRIPTOR(rt), x))";
        let got = without_sluice_hints(sql, &mut changes);
        assert_eq!(got, "FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), x))");
        assert_eq!(
            changes,
            ["removed the sluice-only hint /*+ OPTIONS('sluice.hot_keys'='auto') */"]
        );
    }

    #[test]
    fn relative_paths_become_absolute_and_others_stay() {
        let mut changes = Vec::new();
        let sql = "WITH ('connector' = 'filesystem', 'path' = 'data/a.ndjson');\nWITH ('path'='/abs/b', 'x' = 'path');\nWITH ('path' = 's3://bucket/c')";
        let got = absolute_paths(sql, Path::new("/work"), &mut changes);
        assert_eq!(
            got,
            "WITH ('connector' = 'filesystem', 'path' = '/work/data/a.ndjson');\nWITH ('path'='/abs/b', 'x' = 'path');\nWITH ('path' = 's3://bucket/c')"
        );
        assert_eq!(changes.len(), 1, "{changes:?}");
    }
}
