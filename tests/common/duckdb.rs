//! DuckDB for reading Parquet files back in tests, through `scripts/duckdb-local.sh` (installed with
//! pip once per test binary when missing).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Once;

fn duckdb_ready() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let ok = Command::new("bash")
            .args([&script(), "ensure"])
            .status()
            .expect("run scripts/duckdb-local.sh");
        assert!(ok.success(), "scripts/duckdb-local.sh ensure failed");
    });
}

fn script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/duckdb-local.sh")
        .to_string_lossy()
        .into_owned()
}

/// Runs `sql` in DuckDB: the header and rows, each a vector of fields.
pub fn duckdb(sql: &str) -> Result<Vec<Vec<String>>, String> {
    duckdb_ready();
    let out = Command::new("bash")
        .args([&script(), "query", sql])
        .stdin(Stdio::null())
        .output()
        .expect("run duckdb");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect())
}
