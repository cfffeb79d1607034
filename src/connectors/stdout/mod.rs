//! The `stdout` sink: result lines on the process's standard output, each shard's buffer written
//! whole under the stdout lock, so lines never interleave. At-least-once under checkpoints
//! (flushed at each barrier, replayed after a restore), best effort without. SQL's `print`
//! connector.

pub mod sql;

use std::io::Write;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::connectors::check::Check;
use crate::connectors::sink::{
    ChangelogOption, Guarantee, OpenCx, OpenSink, Sink, SinkError, SinkPart,
};
use crate::connectors::SinkTable;
use crate::record::changelog::ChangelogEncoding;

/// `[sinks.NAME] type = "stdout"`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StdoutSinkConfig {
    pub inputs: Vec<String>,
    /// How an updating result is written: `"append"` (JSON lines, inserts only, the default),
    /// `"print"` (Flink's `+I[..]` rows; SQL's `print` connector) or `"debezium-json"`.
    #[serde(default, skip_serializing_if = "ChangelogOption::is_append")]
    pub changelog: ChangelogOption,
}

impl SinkTable for StdoutSinkConfig {
    fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn changelog(&self) -> ChangelogOption {
        self.changelog
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Sink> {
        use ChangelogOption as C;
        let changelog = self
            .changelog
            .check(cx, "stdout", &[C::Append, C::Print, C::DebeziumJson]);
        Arc::new(StdoutSink { changelog })
    }
}

/// The validated sink: how it writes a changelog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdoutSink {
    pub changelog: ChangelogEncoding,
}

/// The opened sink and each shard's part: nothing to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stdout;

impl Sink for StdoutSink {
    fn kind(&self) -> &'static str {
        "stdout"
    }

    fn describe(&self) -> String {
        "stdout".into()
    }

    fn guarantee(&self, checkpointed: bool) -> Guarantee {
        if checkpointed {
            Guarantee::AtLeastOnce
        } else {
            Guarantee::BestEffort
        }
    }

    fn changelog(&self) -> ChangelogEncoding {
        self.changelog
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn open(&self, _cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSink>, SinkError> {
        Ok(Arc::new(Stdout))
    }
}

impl OpenSink for Stdout {
    fn part(&self, _shard: usize, _first_id: u64) -> Result<Box<dyn SinkPart>, SinkError> {
        Ok(Box::new(Stdout))
    }
}

impl SinkPart for Stdout {
    fn write(&mut self, buf: &mut Vec<u8>, _durable: bool) -> Result<(), String> {
        if buf.is_empty() {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        let res = out.write_all(buf).and_then(|_| out.flush());
        buf.clear();
        res.map_err(|e| format!("write failed: {e}"))
    }
}
