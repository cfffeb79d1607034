//! The catalogue against the compiler and README: every form marked supported compiles through
//! the SQL front end (its probe), every status names a documented function, and README's table
//! is the one the catalogue generates.

use super::status::{entries, Status};
use super::{functions, markdown};

const T: &str = "CREATE TABLE t (s STRING, n BIGINT, d DECIMAL(10, 3), ts BIGINT, u STRING,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt
) WITH ('connector' = 'filesystem', 'path' = 'data/t.ndjson', 'format' = 'json');
";

/// The SQL job a probe stands for.
fn job(probe: &str) -> String {
    if let Some(query) = probe.strip_prefix("sql:") {
        return format!("{T}CREATE TABLE o (x STRING) WITH ('connector' = 'print');\n{query}");
    }
    if let Some(agg) = probe.strip_prefix("agg:") {
        return format!("{T}CREATE TABLE o (s STRING, x STRING) WITH ('connector' = 'print');\nINSERT INTO o SELECT s, {agg} AS x FROM t GROUP BY s");
    }
    format!("{T}CREATE TABLE o (x STRING) WITH ('connector' = 'print');\nINSERT INTO o SELECT {probe} AS x FROM t")
}

#[test]
fn every_supported_form_compiles() {
    let mut failed = Vec::new();
    for (name, _, status) in entries() {
        if let Some(probe) = status.probe() {
            if let Err(e) = crate::sql::compile(&job(probe)) {
                failed.push(format!("{name}: `{probe}`: {}", e.message));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn every_status_names_a_documented_form() {
    let all = functions();
    assert!(all.len() > 300, "{}", all.len());
    for (name, start, _) in entries() {
        assert!(
            all.iter()
                .any(|f| f.name == *name && f.syntax.starts_with(start)),
            "{name} {start:?} is not in flink_functions.tsv"
        );
    }
    // Non-deterministic functions are refused, never marked supported.
    for f in all.iter().filter(|f| !f.deterministic) {
        assert!(
            !matches!(
                super::status_of(f),
                Status::Supported { .. } | Status::Differs { .. }
            ),
            "{} is not deterministic",
            f.name
        );
    }
}

#[test]
fn readme_has_the_generated_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .unwrap_or_default();
    assert!(
        readme.contains(&markdown()),
        "README's function table is stale: regenerate it with `sluice functions --markdown`"
    );
}
