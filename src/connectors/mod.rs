//! Connectors: where events come from and where results go, one folder per connector (`file`,
//! `generator`, `kafka`, `memory`, `stdout`, `postgres`, `parquet`), each with its config table,
//! its validation into the plan, its runtime part, its SQL table options and its tests. The
//! runtime knows them only through the [`source`] and [`sink`] traits; the plan builds them
//! through the registry below, the one place that lists every kind (one line each).
//!
//! Shared by several connectors: the [`csv`] format (files and Kafka), [`staged`] output
//! (per-checkpoint staging files committed by the checkpoint writer) and [`check`], the context
//! a connector's validation reports into.

pub mod changelog_rows;
pub mod check;
pub mod csv;
pub mod file;
pub mod generator;
pub mod kafka;
pub mod memory;
pub mod parquet;
pub mod postgres;
pub mod sink;
pub mod source;
pub mod staged;
pub mod stdout;

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::{EventTimeConfig, WatermarkConfig};
use crate::sql::ddl::Table;
use crate::sql::options::{option_error, required, EventTime};
use crate::sql::SqlError;
use check::Check;
use sink::Sink;
use source::Source;

/// A source's config table, as each source kind's config struct implements it.
pub trait SourceTable {
    /// The event time as written, or the kind's default; `None`: its records have no event
    /// time (only operators that need none may read them).
    fn event_time(&self) -> Option<Cow<'_, EventTimeConfig>>;
    fn watermark(&self) -> &WatermarkConfig;
    /// Its records carry a timestamp of their own (`event_time.kafka_timestamp`).
    fn record_timestamps(&self) -> bool {
        false
    }
    /// The fields its records are known to have, exactly (`None`: any may be there).
    fn fields(&self) -> Option<&'static [&'static str]> {
        None
    }
    /// Its records are a changelog (`changelog = "debezium-json"`): rows inserted, updated and
    /// deleted, an updating input to what reads it.
    fn changelog(&self) -> bool {
        false
    }
    /// Validates the table into the plan's source; problems go to `cx` (the source returned
    /// then is never run).
    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Source>;
    /// What `sluice export flink` tells a cluster's operator about this table (jars to add,
    /// what must hold on a cluster), one Markdown bullet's text each.
    fn flink_notes(&self) -> Vec<&'static str> {
        Vec::new()
    }
}

impl<T: SourceTable> SourceTable for Box<T> {
    fn event_time(&self) -> Option<Cow<'_, EventTimeConfig>> {
        (**self).event_time()
    }
    fn watermark(&self) -> &WatermarkConfig {
        (**self).watermark()
    }
    fn record_timestamps(&self) -> bool {
        (**self).record_timestamps()
    }
    fn fields(&self) -> Option<&'static [&'static str]> {
        (**self).fields()
    }
    fn changelog(&self) -> bool {
        (**self).changelog()
    }
    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Source> {
        (**self).validate(cx)
    }
    fn flink_notes(&self) -> Vec<&'static str> {
        (**self).flink_notes()
    }
}

/// The registry of source kinds: `type = "<kind>"` names the variant, whose table is the
/// connector's config struct.
macro_rules! source_kinds {
    ($($variant:ident ($kind:literal) => $table:ty),* $(,)?) => {
        /// `[sources.NAME]`: one of the source kinds, by its `type`.
        #[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum SourceConfig {
            $($variant($table),)*
        }

        impl SourceConfig {
            /// The table of whichever kind this is.
            pub fn table(&self) -> &dyn SourceTable {
                match self {
                    $(SourceConfig::$variant(t) => t,)*
                }
            }

            /// Its `type`.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(SourceConfig::$variant(_) => $kind,)*
                }
            }

            pub fn watermark(&self) -> &WatermarkConfig {
                self.table().watermark()
            }

            pub fn event_time(&self) -> Option<Cow<'_, EventTimeConfig>> {
                self.table().event_time()
            }
        }
    };
}

source_kinds! {
    File("file") => file::FileSourceConfig,
    Generator("generator") => generator::GeneratorSourceConfig,
    // Boxed: its many options would make every source config as large.
    Kafka("kafka") => Box<kafka::KafkaSourceConfig>,
}

/// A sink's config table, as each sink kind's config struct implements it.
pub trait SinkTable {
    /// The streams it writes.
    fn inputs(&self) -> &[String];
    /// Validates the table into the plan's sink; problems go to `cx` (the sink returned then is
    /// never run).
    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Sink>;
    /// SQL: rows written into it carry time columns as epoch milliseconds, which it types itself
    /// (from the table's DDL), rather than as the `yyyy-MM-dd HH:mm:ss.SSS` text of Flink's JSON
    /// format.
    fn epoch_time_columns(&self) -> bool {
        false
    }
    /// What `sluice export flink` tells a cluster's operator about this table, as
    /// [`SourceTable::flink_notes`].
    fn flink_notes(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// How it writes an updating result, as its table says (`changelog = ...`); SQL refuses an
    /// updating query into a table that appends only.
    fn changelog(&self) -> sink::ChangelogOption {
        sink::ChangelogOption::Append
    }
}

/// The registry of sink kinds: `type = "<kind>"` names the variant, whose table is the
/// connector's config struct.
macro_rules! sink_kinds {
    ($($variant:ident => $table:ty),* $(,)?) => {
        /// `[sinks.NAME]`: one of the sink kinds, by its `type`.
        #[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum SinkConfig {
            $($variant($table),)*
        }

        impl SinkConfig {
            /// The table of whichever kind this is.
            pub fn table(&self) -> &dyn SinkTable {
                match self {
                    $(SinkConfig::$variant(t) => t,)*
                }
            }

            pub fn inputs(&self) -> &[String] {
                self.table().inputs()
            }

            /// The streams it writes, to set (a SQL `INSERT INTO` names them after the table).
            pub fn inputs_mut(&mut self) -> &mut Vec<String> {
                match self {
                    $(SinkConfig::$variant(t) => &mut t.inputs,)*
                }
            }
        }
    };
}

sink_kinds! {
    File => file::FileSinkConfig,
    Stdout => stdout::StdoutSinkConfig,
    Kafka => kafka::KafkaSinkConfig,
    Postgres => postgres::PostgresSinkConfig,
    Parquet => parquet::ParquetSinkConfig,
}

/// SQL: the source a table read by a query becomes, by its `'connector'` (each connector's
/// `sql` module maps its own options).
pub fn sql_source(
    t: &Table,
    time: Option<&EventTime>,
    idle_ms: Option<i64>,
) -> Result<SourceConfig, SqlError> {
    match required(t, "connector")? {
        "filesystem" => file::sql::source(t, time, idle_ms),
        "kafka" => kafka::sql::source(t, time, idle_ms),
        "upsert-kafka" => kafka::sql::upsert_source(t, time, idle_ms),
        "datagen" => generator::sql::datagen(t, time, idle_ms),
        "nexmark" => generator::sql::nexmark(t, time, idle_ms),
        other => Err(option_error(t, "connector", format!("connector '{other}' is not supported as a source yet (supported: 'filesystem', 'kafka', 'upsert-kafka', 'datagen', 'nexmark')"))),
    }
}

/// SQL: the sink a table written by `INSERT INTO` becomes, by its `'connector'` and `'format'`
/// (its `inputs` are set by the caller).
pub fn sql_sink(t: &Table) -> Result<SinkConfig, SqlError> {
    match (required(t, "connector")?, t.option("format")) {
        ("filesystem", Some("parquet")) => parquet::sql::sink(t),
        ("filesystem", _) => file::sql::sink(t),
        ("jdbc", _) => postgres::sql::sink(t),
        ("print", _) => stdout::sql::sink(t),
        ("kafka", _) => kafka::sql::sink(t),
        ("upsert-kafka", _) => kafka::sql::upsert_sink(t),
        (other, _) => Err(option_error(t, "connector", format!("connector '{other}' is not supported as a sink yet (supported: 'filesystem' (json or parquet), 'kafka', 'upsert-kafka', 'jdbc' (PostgreSQL), 'print')"))),
    }
}

/// The sink `[dead_letter]` writes through: each malformed or late record's line, reason and
/// position, as NDJSON appended to `path` ([`file::DeadLetters`]).
pub fn dead_letters(path: &std::path::Path) -> std::sync::Arc<dyn sink::Sink> {
    std::sync::Arc::new(file::DeadLetters {
        path: path.to_path_buf(),
    })
}
