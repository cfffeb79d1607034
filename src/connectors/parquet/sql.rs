//! Flink's `filesystem` connector with `'format' = 'parquet'` as the Parquet sink. It takes its
//! column types from the table's DDL (pinned, not inferred from the first rows) and its time
//! columns as epoch milliseconds typed `timestamp`, not as Flink's JSON text.

use super::config::ParquetSinkConfig;
use crate::connectors::SinkConfig;
use crate::sql::ddl::Table;
use crate::sql::options::{column_types, refuse_unknown, required};
use crate::sql::SqlError;

/// `'connector' = 'filesystem', 'format' = 'parquet'`: part files in the directory `path`,
/// finished at every checkpoint (exactly-once, as Flink's bulk formats roll on checkpoint).
pub fn sink(t: &Table) -> Result<SinkConfig, SqlError> {
    refuse_unknown(t, &["connector", "format", "path"], None)?;
    let dir = required(t, "path")?;
    Ok(SinkConfig::Parquet(ParquetSinkConfig {
        path: dir.into(),
        columns: column_types(t),
        ..ParquetSinkConfig::default()
    }))
}

/// What `sluice export flink` notes for a Parquet table (besides a filesystem sink's).
pub const FLINK_NOTES: [&str; 1] =
    ["`parquet` tables need `flink-sql-parquet` on the cluster's class path."];
