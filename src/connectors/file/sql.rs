//! Flink's `filesystem` connector as the file source and sink: `path` and a `json` or `csv`
//! format, or `debezium-json` (a source read as a changelog, a sink writing one); `parquet` is
//! the Parquet sink's (`connectors::parquet::sql`). A sink's `path` is a directory, as in Flink;
//! sluice writes its one file `part-0.json` there.

use crate::connectors::changelog_rows::SourceChangelog;
use crate::connectors::csv::{self, Format};
use crate::connectors::file::{FileSinkConfig, FileSourceConfig};
use crate::connectors::sink::ChangelogOption;
use crate::connectors::{SinkConfig, SourceConfig};
use crate::sql::ddl::Table;
use crate::sql::options::{
    check_format, check_json_options, format_options, refuse_unknown, required, time_tables,
    unsupported_format, EventTime, ALIGNMENT,
};
use crate::sql::SqlError;

/// A `filesystem` table read by a query.
pub fn source(
    t: &Table,
    time: Option<&EventTime>,
    idle_ms: Option<i64>,
) -> Result<SourceConfig, SqlError> {
    let known: Vec<&str> = ["connector", "format", "path"]
        .iter()
        .chain(&ALIGNMENT)
        .chain(format_options(t))
        .copied()
        .collect();
    refuse_unknown(t, &known, None)?;
    let path = required(t, "path")?.to_string();
    let mut changelog = None;
    let (format, csv) = match t.option("format") {
        Some("json") => {
            check_json_options(t)?;
            (Format::Json, None)
        }
        Some("debezium-json") => {
            changelog = Some(SourceChangelog::DebeziumJson);
            (Format::Json, None)
        }
        Some("csv") => csv::sql::format(t)?,
        _ => return Err(unsupported_format(t, "'json', 'csv', 'debezium-json'")),
    };
    let (event_time, watermark) = time_tables(t, time, idle_ms)?;
    Ok(SourceConfig::File(FileSourceConfig {
        path,
        format,
        csv,
        event_time,
        watermark,
        changelog,
        ..FileSourceConfig::default()
    }))
}

/// A `filesystem` table written by `INSERT INTO`, as JSON lines (`'format' = 'json'`) or as
/// Flink's changelog envelope (`'format' = 'debezium-json'`).
pub fn sink(t: &Table) -> Result<SinkConfig, SqlError> {
    let changelog = match t.option("format") {
        Some("debezium-json") => ChangelogOption::DebeziumJson,
        _ => {
            check_format(t)?;
            ChangelogOption::Append
        }
    };
    refuse_unknown(t, &["connector", "format", "path"], None)?;
    let dir = required(t, "path")?.trim_end_matches('/');
    Ok(SinkConfig::File(FileSinkConfig {
        inputs: Vec::new(),
        path: format!("{dir}/part-0.json").into(),
        changelog,
    }))
}

/// What `sluice export flink` notes for a `filesystem` source.
pub const FLINK_SOURCE_NOTES: [&str; 1] =
    ["A filesystem source must be readable by every task manager (shared storage on a cluster)."];

/// What `sluice export flink` notes for a `filesystem` sink (Parquet's too).
pub const FLINK_SINK_NOTES: [&str; 1] = ["A filesystem sink writes `part-*` files into its directory, committed on each checkpoint (sluice writes `part-0.json`)."];
