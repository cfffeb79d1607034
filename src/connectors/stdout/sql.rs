//! Flink's `print` connector as the stdout sink.

use crate::connectors::sink::ChangelogOption;
use crate::connectors::stdout::StdoutSinkConfig;
use crate::connectors::SinkConfig;
use crate::sql::ddl::Table;
use crate::sql::options::refuse_unknown;
use crate::sql::SqlError;

/// A `print` table written by `INSERT INTO`.
pub fn sink(t: &Table) -> Result<SinkConfig, SqlError> {
    refuse_unknown(t, &["connector"], None)?;
    // Flink's print connector writes every row with its kind: `+I[a, 1]`.
    Ok(SinkConfig::Stdout(StdoutSinkConfig {
        changelog: ChangelogOption::Print,
        ..StdoutSinkConfig::default()
    }))
}
