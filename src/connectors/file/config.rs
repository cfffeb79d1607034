//! `[sources.NAME] type = "file"` and `[sinks.NAME] type = "file"`, as a user writes them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{EventTimeConfig, WatermarkConfig};
use crate::connectors::changelog_rows::SourceChangelog;
use crate::connectors::csv::{CsvConfig, Format};
use crate::connectors::sink::ChangelogOption;

/// `[sources.NAME] type = "file"`: a file or a glob of NDJSON or CSV lines.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileSourceConfig {
    /// A file or a glob; each matching file is one partition.
    pub path: String,
    #[serde(default)]
    pub format: Format,
    /// The CSV layout of `format = "csv"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csv: Option<CsvConfig>,
    /// Where each record's event time is; left out, the records have none (Flink's table
    /// without a WATERMARK): they feed filters, selects and sinks, and an operator that needs
    /// event time refuses them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<EventTimeConfig>,
    #[serde(default)]
    pub watermark: WatermarkConfig,
    /// Backfill: records per second this source is read at, at most (`"50000/s"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<String>,
    /// Backfill: skip records that start before this byte offset of each file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_offset: Option<u64>,
    /// Backfill: skip records with an event time before this (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// The lines are a changelog (`"debezium-json"`: Debezium's envelope, as Flink's format):
    /// each inserts, updates or deletes rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changelog: Option<SourceChangelog>,
}

/// `[sinks.NAME] type = "file"`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileSinkConfig {
    pub inputs: Vec<String>,
    pub path: PathBuf,
    /// How an updating result is written: `"append"` (inserts only, the default) or
    /// `"debezium-json"`.
    #[serde(default, skip_serializing_if = "ChangelogOption::is_append")]
    pub changelog: ChangelogOption,
}
