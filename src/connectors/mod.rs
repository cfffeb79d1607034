//! Connectors: where events come from and where results go, one folder per connector (`file`,
//! `stdout`, `kafka`, `postgres`, `parquet`, ...), each with its config table, its validation
//! into the plan, its runtime part, its SQL table options and its tests. The runtime knows them
//! only through the [`sink`] traits; the plan builds them through the registry below, the one
//! place that lists every kind (one line each).
//!
//! Shared by several connectors: [`staged`] output (per-checkpoint staging files committed by
//! the checkpoint writer) and [`check`], the context a connector's validation reports into.

pub mod check;
pub mod file;
pub mod kafka;
pub mod parquet;
pub mod postgres;
pub mod sink;
pub mod staged;
pub mod stdout;

use std::sync::Arc;

use serde::Deserialize;

use check::Check;
use sink::Sink;

/// A sink's config table, as each sink kind's config struct implements it.
pub trait SinkTable {
    /// The streams it writes.
    fn inputs(&self) -> &[String];
    /// Validates the table into the plan's sink; problems go to `cx` (the sink returned then is
    /// never run).
    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Sink>;
}

/// The registry of sink kinds: `type = "<kind>"` names the variant, whose table is the
/// connector's config struct.
macro_rules! sink_kinds {
    ($($variant:ident => $table:ty),* $(,)?) => {
        /// `[sinks.NAME]`: one of the sink kinds, by its `type`.
        #[derive(Debug, Clone, PartialEq, Deserialize)]
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
