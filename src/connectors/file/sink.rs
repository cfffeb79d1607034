//! The file sink: result lines appended to one file, and the dead-letter output.
//!
//! Every shard appends whole buffers (whole lines only) with one `write` on a file opened with
//! `O_APPEND`, so shards never share a lock or a buffer and lines never interleave. A file is
//! truncated when a run opens it, and kept when the run resumes from a checkpoint.
//!
//! Guarantee: under `[checkpoint]` a file sink is staged and committed with each checkpoint
//! ([`crate::connectors::staged`]): exactly-once. Without checkpoints lines are written as results
//! are produced and a crash loses the unflushed buffer; results are exact for a run that ends
//! normally. The file is an upsert log: a window re-fired within its allowed lateness writes its
//! row again, and the last row of a key is its result. The dead-letter file is at-least-once
//! (flushed at each checkpoint, replayed after it).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::checkpoint::Manifest;
use crate::connectors::sink::{
    Committer, Guarantee, OpenCx, OpenSink, OutputPath, Sink, SinkError, SinkPart,
};
use crate::connectors::staged;
use crate::record::changelog::ChangelogEncoding;

/// `[sinks.NAME] type = "file"`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSink {
    pub path: PathBuf,
    pub changelog: ChangelogEncoding,
}

impl Sink for FileSink {
    fn kind(&self) -> &'static str {
        "file"
    }

    fn describe(&self) -> String {
        format!("file {}", self.path.display())
    }

    fn outputs(&self) -> Vec<OutputPath<'_>> {
        vec![OutputPath {
            path: &self.path,
            key: "path",
            noun: "a file",
        }]
    }

    fn guarantee(&self, checkpointed: bool) -> Guarantee {
        if checkpointed {
            Guarantee::ExactlyOnce
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

    fn committer(&self, name: &str, _checkpoint_dir: &Path) -> Option<Arc<dyn Committer>> {
        Some(Arc::new(FileCommitter {
            path: self.path.clone(),
            name: name.to_string(),
        }))
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSink>, SinkError> {
        let file = open_output(cx.name, &self.path, cx.resumed)?;
        Ok(match cx.checkpoint_dir {
            // Staged: the output is only ever written by commits.
            Some(_) => Arc::new(StagedFile {
                path: self.path.clone(),
                name: cx.name.to_string(),
            }),
            None => Arc::new(AppendFile {
                file: Arc::new(file),
            }),
        })
    }
}

/// Opens `path` for appending (creating its directory): truncated, or kept when `append` (a run
/// that resumes from a checkpoint).
fn open_output(sink: &str, path: &Path, append: bool) -> Result<File, SinkError> {
    let fail =
        |e: std::io::Error| SinkError::new(sink, format!("cannot open `{}`: {e}", path.display()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(!append)
        .open(path)
        .and_then(|f| {
            drop(f);
            OpenOptions::new().append(true).open(path)
        })
        .map_err(fail)
}

/// `[dead_letter]`: the file malformed input, refused rows and unreadable late records go to,
/// each a JSON line with its reason and where it came from. Appended to by every shard as its
/// buffer fills and at each checkpoint barrier: at-least-once (replayed after a restore).
#[derive(Debug, Clone, PartialEq)]
pub struct DeadLetters {
    pub path: PathBuf,
}

impl Sink for DeadLetters {
    fn kind(&self) -> &'static str {
        "dead_letter"
    }

    fn describe(&self) -> String {
        format!("dead letters {}", self.path.display())
    }

    fn outputs(&self) -> Vec<OutputPath<'_>> {
        vec![OutputPath {
            path: &self.path,
            key: "path",
            noun: "a file",
        }]
    }

    fn guarantee(&self, checkpointed: bool) -> Guarantee {
        if checkpointed {
            Guarantee::AtLeastOnce
        } else {
            Guarantee::BestEffort
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSink>, SinkError> {
        Ok(Arc::new(AppendFile {
            file: Arc::new(open_output(cx.name, &self.path, cx.resumed)?),
        }))
    }
}

/// A file every shard appends its buffers to as they fill.
#[derive(Debug)]
struct AppendFile {
    file: Arc<File>,
}

impl OpenSink for AppendFile {
    fn part(&self, _shard: usize, _first_id: u64) -> Result<Box<dyn SinkPart>, SinkError> {
        Ok(Box::new(AppendPart {
            file: self.file.clone(),
        }))
    }
}

#[derive(Debug)]
struct AppendPart {
    file: Arc<File>,
}

impl SinkPart for AppendPart {
    fn write(&mut self, buf: &mut Vec<u8>, _durable: bool) -> Result<(), String> {
        if buf.is_empty() {
            return Ok(());
        }
        let res = (&*self.file).write_all(buf);
        buf.clear();
        res.map_err(|e| format!("write failed: {e}"))
    }
}

/// A file under checkpoints: each shard stages its lines per checkpoint; the checkpoint writer
/// appends them to the output once the checkpoint is durable.
#[derive(Debug)]
struct StagedFile {
    path: PathBuf,
    name: String,
}

impl OpenSink for StagedFile {
    fn part(&self, shard: usize, first_id: u64) -> Result<Box<dyn SinkPart>, SinkError> {
        Ok(Box::new(staged::StagePart::new(
            staged::Stage::new(self.path.clone(), shard, first_id),
            None,
        )))
    }

    fn committer(&self) -> Option<Arc<dyn Committer>> {
        Some(Arc::new(FileCommitter {
            path: self.path.clone(),
            name: self.name.clone(),
        }))
    }
}

/// Appends each checkpoint's staged lines to the output; the manifest records the output's length
/// before and after, so recovery can roll a cut-short commit forward or cut later output back.
struct FileCommitter {
    path: PathBuf,
    name: String,
}

impl FileCommitter {
    fn key(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }
}

impl Committer for FileCommitter {
    fn name(&self) -> &str {
        &self.name
    }

    fn recover(&self, newest: Option<&Manifest>) -> Result<(), String> {
        let committed = newest.map(|m| {
            let c = &m.sources["commit"][self.key().as_str()];
            staged::Committed {
                id: m.id,
                from: c["from"].as_u64().unwrap_or(0),
                to: c["to"].as_u64().unwrap_or(0),
            }
        });
        let missing = staged::recover(&self.path, committed)
            .map_err(|e| format!("recovering output {}: {e}", self.path.display()))?;
        if missing > 0 {
            tracing::warn!(
                output = %self.path.display(),
                missing_bytes = missing,
                "output is shorter than the state restored covers; lines from before that point are not written again"
            );
        }
        Ok(())
    }

    fn prepare(
        &self,
        id: u64,
    ) -> Result<Option<(&'static str, String, serde_json::Value)>, String> {
        let io = |e: std::io::Error| format!("{}: {e}", self.path.display());
        let from = staged::output_len(&self.path).map_err(io)?;
        let to = from + staged::staged_len(&self.path, id).map_err(io)?;
        Ok(Some((
            "commit",
            self.key(),
            serde_json::json!({ "from": from, "to": to }),
        )))
    }

    fn commit(&self, id: u64, recorded: Option<&serde_json::Value>) -> Result<(), String> {
        let from = recorded.and_then(|r| r["from"].as_u64()).unwrap_or(0);
        staged::commit(&self.path, id, from)
            .map_err(|e| format!("committing output {}: {e}", self.path.display()))
    }
}
