//! The sink side of a connector, as the plan and the runtime see it: a validated [`Sink`] says
//! what it writes and which guarantee it gives, and opens for a run into an [`OpenSink`] whose
//! per-shard [`SinkPart`]s take whole buffers of result lines, and whose [`Committer`] (if it
//! has one) takes part in each checkpoint's two-phase commit. [`SinkWriter`] is the buffer every
//! shard keeps per sink in front of its part; the runtime writes through it and names no sink.
//!
//! Shards never share a buffer or a lock: each appends whole lines to its own buffer and hands
//! the buffer over once it holds [`FLUSH_BYTES`], at a checkpoint barrier (durably) and at the end
//! of the run. A part is never called per line.

use std::fmt;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::checkpoint::Manifest;
use crate::record::changelog::ChangelogEncoding;
use crate::record::columns::{ColumnType, KnownColumn};
use crate::record::event::RowKind;

/// Buffered bytes per shard and sink before they are handed to the sink's part.
pub const FLUSH_BYTES: usize = 256 * 1024;

/// A sink failed to open, write or commit; the message names the sink.
#[derive(Debug, thiserror::Error)]
#[error("sink `{sink}`: {message}")]
pub struct SinkError {
    pub sink: String,
    pub message: String,
}

impl SinkError {
    pub fn new(sink: &str, message: impl Into<String>) -> SinkError {
        SinkError {
            sink: sink.to_string(),
            message: message.into(),
        }
    }
}

/// What a sink's output holds after a crash and a restore from the last checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guarantee {
    /// Every result exactly once: output is staged and published with each checkpoint (or sent
    /// in a transaction committed with it).
    ExactlyOnce,
    /// The output ends as an uninterrupted run leaves it: results replayed after a restore
    /// overwrite the same keys (an upsert by key), though readers may see a replayed value again.
    Idempotent,
    /// Results since the last checkpoint may be written again.
    AtLeastOnce,
    /// Nothing survives a crash but what was already written; no checkpoints to replay from.
    BestEffort,
}

impl fmt::Display for Guarantee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Guarantee::ExactlyOnce => "exactly-once",
            Guarantee::Idempotent => "exactly-once by idempotent upserts",
            Guarantee::AtLeastOnce => "at-least-once",
            Guarantee::BestEffort => "best effort (no checkpoints)",
        })
    }
}

/// `changelog = "..."` on a sink: how it writes an updating result (a group aggregate's rows
/// with their kinds). Each sink kind takes some of these; the default writes inserts only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangelogOption {
    /// Rows as they are (JSON lines): inserts only, or a re-fired window's new value.
    #[default]
    Append,
    /// Flink's `print` rows: `+I[..]`, `-U[..]`, `+U[..]`, `-D[..]`.
    Print,
    /// Flink's `debezium-json`: `{"before":..,"after":..,"op":"c"|"d"}`.
    DebeziumJson,
    /// Applied by key (upserts and deletes): what a keyed table sink does by itself.
    Upsert,
}

impl ChangelogOption {
    pub fn is_append(&self) -> bool {
        *self == ChangelogOption::Append
    }

    /// As a config writes it.
    pub fn name(self) -> &'static str {
        match self {
            ChangelogOption::Append => "append",
            ChangelogOption::Print => "print",
            ChangelogOption::DebeziumJson => "debezium-json",
            ChangelogOption::Upsert => "upsert",
        }
    }

    /// The encoding it asks for, if `kind`'s sink takes it (`allowed`); else reports why at
    /// `changelog` and writes appends.
    pub fn check(
        self,
        cx: &mut crate::connectors::check::Check<'_>,
        kind: &str,
        allowed: &[ChangelogOption],
    ) -> ChangelogEncoding {
        if !allowed.contains(&self) {
            let names: Vec<String> = allowed
                .iter()
                .map(|o| format!("\"{}\"", o.name()))
                .collect();
            cx.err(
                cx.key("changelog"),
                format!(
                    "a {kind} sink cannot write changelog = \"{}\" (it takes {})",
                    self.name(),
                    names.join(", ")
                ),
            );
            return ChangelogEncoding::Append;
        }
        match self {
            ChangelogOption::Append => ChangelogEncoding::Append,
            ChangelogOption::Print => ChangelogEncoding::Print,
            ChangelogOption::DebeziumJson => ChangelogEncoding::Debezium,
            ChangelogOption::Upsert => ChangelogEncoding::ByKey,
        }
    }
}

/// A validated sink of one kind, as the plan holds it.
pub trait Sink: fmt::Debug + Send + Sync {
    /// Its kind as the config writes it (`file`, `kafka`), for messages.
    fn kind(&self) -> &'static str;
    /// What it writes, for `sluice explain` (never a secret such as a password in a URL).
    fn describe(&self) -> String;
    /// Files or directories it writes: two outputs never share one (the plan checks).
    fn outputs(&self) -> Vec<OutputPath<'_>> {
        Vec::new()
    }
    /// The guarantee it gives in a job with (`checkpointed`) or without checkpoints.
    fn guarantee(&self, checkpointed: bool) -> Guarantee;
    /// How it writes a changelog: append-only sinks take inserts (and a re-fired window's new
    /// value); an updating result reaches only sinks that take every kind.
    fn changelog(&self) -> ChangelogEncoding {
        ChangelogEncoding::Append
    }
    /// Under checkpoints, its share of the two-phase commit as a restore needs it: made before
    /// anything is opened, so the output is recovered first (what the restored checkpoint covers
    /// published, later output withdrawn). `None`: its output needs no commit.
    fn committer(&self, _name: &str, _checkpoint_dir: &Path) -> Option<Arc<dyn Committer>> {
        None
    }
    /// Opens it for a run: everything that can fail (a file that cannot be created, brokers or a
    /// database that do not answer) fails here, before any thread starts.
    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSink>, SinkError>;
    /// For tests and tools that look into one kind's plan.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A file or directory a sink writes, with the config key naming it and what it is called in
/// messages (`a file`, `a path`).
pub struct OutputPath<'a> {
    pub path: &'a Path,
    pub key: &'static str,
    pub noun: &'static str,
}

/// What a sink is opened with.
pub struct OpenCx<'a> {
    pub name: &'a str,
    pub shards: usize,
    /// The job's checkpoint directory, when it checkpoints.
    pub checkpoint_dir: Option<&'a Path>,
    /// The run resumes from a checkpoint: existing output is kept (and recovered), not truncated.
    pub resumed: bool,
    /// The dead-letter output, for lines a sink refuses on its own threads.
    pub dead: Option<&'a Arc<dyn OpenSink>>,
    /// What the plan knows of the columns of the rows it writes (window results it reads
    /// directly): see `record::columns`.
    pub known: &'a [(String, KnownColumn)],
    /// Per window it reads directly: the fields that make a result's key (its group-by fields and
    /// `window_start`), which an upsert key must hold.
    pub result_keys: &'a [Vec<String>],
}

/// A sink opened for one run, shared by every shard.
pub trait OpenSink: fmt::Debug + Send + Sync {
    /// Shard `shard`'s part; its lines before the first barrier belong to checkpoint `first_id`.
    fn part(&self, shard: usize, first_id: u64) -> Result<Box<dyn SinkPart>, SinkError>;
    /// Its share of each checkpoint's two-phase commit in this run, if its output is published
    /// with them.
    fn committer(&self) -> Option<Arc<dyn Committer>> {
        None
    }
    /// Its counters for `/metrics`, if it keeps any.
    fn counters(&self) -> Option<Arc<crate::metrics::SinkCounters>> {
        None
    }
}

/// One shard's part of an open sink.
pub trait SinkPart: fmt::Debug + Send {
    /// Takes `buf`'s complete lines (it may keep the allocation, and leaves `buf` empty). With
    /// `durable`, returns only once the output holds them (a checkpoint barrier, the end).
    fn write(&mut self, buf: &mut Vec<u8>, durable: bool) -> Result<(), String>;
    /// Whether buffered lines should go now, though the buffer is not full (a table sink's
    /// `max_delay` since its last hand-over).
    fn due(&self, _now: Instant) -> bool {
        false
    }
    /// A failure noticed without a write (a connection lost on its own thread).
    fn failed(&self) -> Option<String> {
        None
    }
    /// At checkpoint `id`'s barrier, after a durable write: the files of `id`'s output, to be
    /// fsynced before `id`'s manifest is written. Later lines belong to `id + 1`.
    fn seal(&mut self, _id: u64) -> Result<Vec<File>, String> {
        Ok(Vec::new())
    }
    /// The end of the run, after a durable write.
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Whether the output refused some lines (a value that fits no column, a record its schema
    /// cannot hold), waiting for [`SinkPart::take_rejected`].
    fn has_rejected(&self) -> bool {
        false
    }
    /// The refused lines, each with why: for the dead letters.
    fn take_rejected(&mut self) -> Vec<(String, Vec<u8>)> {
        Vec::new()
    }
}

/// A sink's share of the checkpoints' two-phase commit, run by the checkpoint writer thread.
pub trait Committer: Send + Sync {
    /// The sink's name, for messages.
    fn name(&self) -> &str;
    /// At start: the output of the checkpoint resumed from (`newest`; `None`: none) is published
    /// if a crash cut its commit short, output of later checkpoints is withdrawn.
    fn recover(&self, newest: Option<&Manifest>) -> Result<(), String>;
    /// Before checkpoint `id`'s manifest (its shards' sealed files are durable by now): makes
    /// anything else its commit will need durable, and returns what the manifest must record
    /// for it as (section, key, value) under the manifest's `sources`.
    fn prepare(
        &self,
        _id: u64,
    ) -> Result<Option<(&'static str, String, serde_json::Value)>, String> {
        Ok(None)
    }
    /// Once checkpoint `id`'s manifest is durable: publishes `id`'s output (and that of any earlier
    /// checkpoint that failed). `recorded`: what `prepare` returned.
    fn commit(&self, id: u64, recorded: Option<&serde_json::Value>) -> Result<(), String>;
}

/// One shard's buffer for one sink, in front of the sink's part.
#[derive(Debug)]
pub struct SinkWriter {
    name: Arc<str>,
    buf: Vec<u8>,
    pub lines: u64,
    part: Box<dyn SinkPart>,
    encoding: ChangelogEncoding,
}

impl SinkWriter {
    /// Shard `shard`'s writer of `sink` (named `name`), writing rows as `encoding` says.
    pub fn open(
        name: &str,
        sink: &dyn OpenSink,
        shard: usize,
        first_id: u64,
        encoding: ChangelogEncoding,
    ) -> Result<SinkWriter, SinkError> {
        Ok(SinkWriter {
            name: name.into(),
            buf: Vec::with_capacity(FLUSH_BYTES + 4096),
            lines: 0,
            part: sink.part(shard, first_id)?,
            encoding,
        })
    }

    /// The sink's name in the config.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn err(&self, message: String) -> SinkError {
        SinkError::new(&self.name, message)
    }

    /// Appends one complete line (ending in `\n`).
    #[inline]
    pub fn line(&mut self, line: &[u8]) -> Result<(), SinkError> {
        self.lines(line, 1)
    }

    /// Appends one row of kind `kind` (a complete line), encoded as the sink writes a changelog.
    #[inline]
    pub fn row(&mut self, kind: RowKind, line: &[u8]) -> Result<(), SinkError> {
        if self.encoding == ChangelogEncoding::Append && kind == RowKind::Insert {
            return self.lines(line, 1);
        }
        if !self.encoding.encode(kind, line, &mut self.buf) {
            return Ok(());
        }
        self.lines += 1;
        if self.buf.len() >= FLUSH_BYTES {
            return self.flush();
        }
        Ok(())
    }

    /// Appends `n` complete lines (inserts) at once.
    #[inline]
    pub fn lines(&mut self, lines: &[u8], n: u64) -> Result<(), SinkError> {
        if self.encoding != ChangelogEncoding::Append {
            for line in lines.split_inclusive(|&b| b == b'\n') {
                self.encoding.encode(RowKind::Insert, line, &mut self.buf);
            }
        } else {
            self.buf.extend_from_slice(lines);
        }
        self.lines += n;
        if self.buf.len() >= FLUSH_BYTES {
            return self.flush();
        }
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), SinkError> {
        self.hand_over(false)
    }

    /// Flushes and waits until the output holds every line: at a checkpoint barrier and at the
    /// end of the run.
    pub fn flush_durable(&mut self) -> Result<(), SinkError> {
        self.hand_over(true)
    }

    fn hand_over(&mut self, durable: bool) -> Result<(), SinkError> {
        let res = self.part.write(&mut self.buf, durable);
        self.buf.clear();
        res.map_err(|m| self.err(m))
    }

    /// Hands lines over once they have waited long enough for the sink (a table sink's
    /// `max_delay`), and reports a failure noticed off the shard without waiting for the next
    /// write: called every shard loop turn.
    #[inline]
    pub fn tick(&mut self, now: Instant) -> Result<(), SinkError> {
        if !self.buf.is_empty() && self.part.due(now) {
            return self.flush();
        }
        match self.part.failed() {
            Some(m) => Err(self.err(m)),
            None => Ok(()),
        }
    }

    /// At checkpoint `id`'s barrier: everything so far written durably; hands back the files of
    /// `id`'s output, to be fsynced before `id`'s manifest is written.
    pub fn seal(&mut self, id: u64) -> Result<Vec<File>, SinkError> {
        self.flush_durable()?;
        self.part.seal(id).map_err(|m| self.err(m))
    }

    /// The end of the run: flushed as at a barrier, then finished (an open part file closed).
    pub fn finish(&mut self) -> Result<(), SinkError> {
        self.flush_durable()?;
        self.part.finish().map_err(|m| self.err(m))
    }

    /// Whether some lines were refused by the output, waiting for [`SinkWriter::take_rejected`].
    pub fn has_rejected(&self) -> bool {
        self.part.has_rejected()
    }

    /// The refused lines, with why: for the dead letters.
    pub fn take_rejected(&mut self) -> Vec<(String, Vec<u8>)> {
        self.part.take_rejected()
    }
}

/// Column types for a table-shaped sink: the pinned ones first, then what the plan knows of the
/// rows (`known`), with sums typed `sum` (`None`: as the first rows imply) and averages `avg`.
pub fn known_types(
    pinned: &[(String, ColumnType)],
    known: &[(String, KnownColumn)],
    sum: Option<ColumnType>,
    avg: ColumnType,
) -> Vec<(String, ColumnType)> {
    let mut out = pinned.to_vec();
    for (name, k) in known {
        if out.iter().any(|(n, _)| n == name) {
            continue;
        }
        let ty = match k {
            KnownColumn::Integer => Some(ColumnType::BigInt),
            KnownColumn::Sum => sum,
            KnownColumn::Avg => Some(avg),
        };
        if let Some(ty) = ty {
            out.push((name.clone(), ty));
        }
    }
    out
}
