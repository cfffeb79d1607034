//! The `file` connector: NDJSON result lines appended to a file ([`sink`]), and the dead-letter
//! output.

pub mod sink;

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use crate::connectors::check::Check;
use crate::connectors::SinkTable;
pub use sink::{dead_letters, FileSink};

/// `[sinks.NAME] type = "file"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSinkConfig {
    pub inputs: Vec<String>,
    pub path: PathBuf,
}

impl SinkTable for FileSinkConfig {
    fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn crate::connectors::sink::Sink> {
        if self.path.as_os_str().is_empty() {
            cx.err(cx.key("path"), "the path cannot be empty".into());
        }
        Arc::new(FileSink {
            path: self.path.clone(),
        })
    }
}
