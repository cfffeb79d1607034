//! The `file` connector: NDJSON or CSV lines read from a file or a glob ([`source`], in chunks
//! through io_uring, [`chunks`] and `uring`), and NDJSON result lines appended to a file
//! ([`sink`]), which also writes the dead-letter output.

pub mod chunks;
pub mod config;
pub mod sink;
pub mod source;
pub mod sql;
mod uring;

use std::sync::Arc;

use crate::connectors::check::Check;
use crate::connectors::sink::ChangelogOption;
use crate::connectors::SinkTable;
pub use config::{FileSinkConfig, FileSourceConfig};
pub use sink::{DeadLetters, FileSink};
pub use source::FileSource;

impl SinkTable for FileSinkConfig {
    fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn changelog(&self) -> ChangelogOption {
        self.changelog
    }

    fn flink_notes(&self) -> Vec<&'static str> {
        sql::FLINK_SINK_NOTES.to_vec()
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn crate::connectors::sink::Sink> {
        if self.path.as_os_str().is_empty() {
            cx.err(cx.key("path"), "the path cannot be empty".into());
        }
        let changelog = self.changelog.check(
            cx,
            "file",
            &[ChangelogOption::Append, ChangelogOption::DebeziumJson],
        );
        Arc::new(FileSink {
            path: self.path.clone(),
            changelog,
        })
    }
}
