//! Flink's `print` connector as the stdout sink.

use crate::connectors::stdout::StdoutSinkConfig;
use crate::connectors::SinkConfig;
use crate::sql::ddl::Table;
use crate::sql::options::refuse_unknown;
use crate::sql::SqlError;

/// A `print` table written by `INSERT INTO`.
pub fn sink(t: &Table) -> Result<SinkConfig, SqlError> {
    refuse_unknown(t, &["connector"], None)?;
    Ok(SinkConfig::Stdout(StdoutSinkConfig::default()))
}
