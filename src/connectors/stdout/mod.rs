//! The `stdout` sink: result lines on the process's standard output, each shard's buffer written
//! whole under the stdout lock, so lines never interleave. At-least-once under checkpoints
//! (flushed at each barrier, replayed after a restore), best effort without. SQL's `print`
//! connector.

pub mod sql;

use std::io::Write;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::connectors::check::Check;
use crate::connectors::sink::{Guarantee, OpenCx, OpenSink, Sink, SinkError, SinkPart};
use crate::connectors::SinkTable;
use crate::record::event::RowKind;

/// `[sinks.NAME] type = "stdout"`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StdoutSinkConfig {
    pub inputs: Vec<String>,
}

impl SinkTable for StdoutSinkConfig {
    fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn validate(&self, _cx: &mut Check<'_>) -> Arc<dyn Sink> {
        Arc::new(Stdout)
    }
}

/// The validated sink: nothing to configure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stdout;

impl Sink for Stdout {
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

    fn accepts(&self) -> &'static [RowKind] {
        &[RowKind::Insert, RowKind::UpdateAfter]
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
