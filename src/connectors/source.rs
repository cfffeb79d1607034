//! The source side of a connector, as the plan and the runtime see it: a validated [`Source`]
//! says what it reads, and opens for a run into an [`OpenSource`] that knows its partitions and
//! makes each shard a [`SourceReader`]; a reader opens chunks of its partitions and reads them
//! record by record, each bound into events for the ports that read the source as it is (the
//! shard routes them, runs the chains of filters and selects over the record's line, and stamps
//! every event with its position and the chunk's running maximum event time).
//!
//! A partition is read in one of two ways ([`Extent`]): in fixed ranges any shard can read
//! (a file's byte ranges, a generator's index ranges), whose position in a checkpoint is the
//! number of chunks read; or as a log one shard owns, read as records arrive (a Kafka partition),
//! whose position is its next offset and which a restore resumes from there. The runtime knows no
//! more of a source than this.

use std::fmt;
use std::sync::Arc;

use crate::record::event::{Event, PayloadBuf};
use crate::record::json::Span;

/// A source failed to open or to find its partitions; the message names the source.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("source `{source_name}`: invalid path pattern `{pattern}`: {message}")]
    Pattern {
        source_name: String,
        pattern: String,
        message: String,
    },
    #[error("source `{source_name}`: no file matches `{pattern}`")]
    NoMatch {
        source_name: String,
        pattern: String,
    },
    #[error("source `{source_name}`: cannot open `{path}`: {err}")]
    Open {
        source_name: String,
        path: std::path::PathBuf,
        err: std::io::Error,
    },
    #[error("source `{source_name}`: {message}")]
    Config {
        source_name: String,
        message: String,
    },
    #[error("more than {max} partitions in total ({found})")]
    TooManyPartitions { max: usize, found: usize },
    /// A connector's own error, its message naming the source.
    #[error("{0}")]
    Other(String),
}

impl SourceError {
    pub fn config(source: &str, message: impl Into<String>) -> SourceError {
        SourceError::Config {
            source_name: source.to_string(),
            message: message.into(),
        }
    }
}

/// A validated source of one kind, as the plan holds it.
pub trait Source: fmt::Debug + Send + Sync {
    /// Its kind as the config writes it (`file`, `kafka`), for messages.
    fn kind(&self) -> &'static str;
    /// What it reads, for `sluice explain` (never a secret).
    fn describe(&self) -> String;
    /// Records read per second at most, over all its partitions (`rate_limit`).
    fn rate_limit(&self) -> Option<f64> {
        None
    }
    /// Finds its partitions for a run and sets up what every shard shares while reading them (a
    /// CSV header, a schema registry's reader schema): before any thread starts, so a missing file
    /// or an unreachable broker fails the run at once.
    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSource>, SourceError>;
    /// For tests and tools that look into one kind's plan.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// What a source is opened with.
pub struct OpenCx<'a> {
    pub name: &'a str,
    pub shards: usize,
    /// Bytes one chunk of a file covers; other sources size their chunks to match.
    pub chunk_bytes: usize,
    pub max_line_bytes: usize,
    /// `watermark.max_out_of_orderness` of the source, in ms: every partition's.
    pub max_out_of_orderness_ms: i64,
    /// `watermark.idle_timeout`, in ms: a log partition with no record for this long is idle.
    pub idle_timeout_ms: i64,
    /// The event time's field and unit, and the guard against clock skew; `None`: the records
    /// have none.
    pub event_time: Option<&'a crate::plan::EventTimePlan>,
}

/// How a partition is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// In fixed ranges any shard can read: `chunks` of them in all (`None`: unbounded). A
    /// checkpoint records how many were read.
    Ranges { chunks: Option<u64> },
    /// A log one shard owns (shard `partition index % shards`), read as records arrive from
    /// offset `start` up to `end` (`None`: unbounded). A checkpoint records the next offset.
    Log { start: i64, end: Option<i64> },
}

/// Records one chunk of a log covers at most, for a given `chunk_bytes`.
pub fn log_records_per_chunk(chunk_bytes: usize) -> u64 {
    (chunk_bytes as u64 / 128).max(1)
}

/// One partition of a run's input.
#[derive(Debug, Clone)]
pub struct Partition {
    /// Its source, by index in the plan.
    pub source: usize,
    /// Its index among its source's own partitions (the connector's numbering).
    pub index: usize,
    /// A file's path, `topic/partition`, `generator`: in dead letters, metrics and checkpoints.
    pub name: String,
    pub max_out_of_orderness_ms: i64,
    pub extent: Extent,
    /// Chunks of a range partition already read by the run a job resumes (a job that reads logs
    /// numbers its chunks afresh when it resumes; its logs resume at an offset instead).
    pub first_chunk: u64,
}

impl Partition {
    /// Chunks this partition is cut into (from `first_chunk` on); `None` = unbounded.
    pub fn chunks(&self, chunk_bytes: usize) -> Option<u64> {
        match self.extent {
            Extent::Ranges { chunks } => chunks.map(|c| c.saturating_sub(self.first_chunk)),
            Extent::Log { start, end } => end.map(|end| {
                ((end - start).max(0) as u64).div_ceil(log_records_per_chunk(chunk_bytes))
            }),
        }
    }

    pub fn is_log(&self) -> bool {
        matches!(self.extent, Extent::Log { .. })
    }
}

/// A partition as its source found it; the runtime makes it a [`Partition`].
#[derive(Debug, Clone)]
pub struct Found {
    pub name: String,
    pub extent: Extent,
}

/// A source opened for one run, shared by every shard.
pub trait OpenSource: Send + Sync {
    /// Its partitions, in its own order (a partition's `index`).
    fn partitions(&self) -> &[Found];
    /// Shard `cx.shard`'s reader of this source's partitions (`cx.parts`: all of them, as the
    /// run holds them, log partitions at the offsets a checkpoint restored).
    fn reader(&self, cx: &ReaderCx<'_>) -> Result<Box<dyn SourceReader>, String>;
    /// Reads a record back by its position (a late record for a side output), on any shard.
    fn recaller(&self) -> Box<dyn Recall>;
    /// Where each of its log partitions' logs end, asked by the metrics endpoint itself.
    fn log_ends(
        &self,
        _parts: &[(u16, &Partition)],
    ) -> Result<Option<Box<dyn crate::metrics::LogEnds>>, String> {
        Ok(None)
    }
}

/// What a shard's reader is made with.
pub struct ReaderCx<'a> {
    /// The source, by index in the plan (its partitions are those of `parts` with this source).
    pub source: usize,
    pub shard: usize,
    pub shards: usize,
    /// The run's partitions (of every source) by global index.
    pub parts: &'a [Partition],
    /// The ports reading the source as it is, which its records are bound for.
    pub bindings: &'a [crate::record::bind::Binding],
    /// Some chain of filters or selects reads the source's lines.
    pub chains: bool,
    /// Read files through io_uring (falls back to `pread` if the kernel refuses).
    pub uring: bool,
    pub chunk_bytes: usize,
    pub max_line_bytes: usize,
}

/// Which chunk of a partition to read.
#[derive(Debug, Clone, Copy)]
pub struct ChunkSpec {
    /// Global index of the partition.
    pub part: u16,
    /// The partition's chunk index in this run (a range partition's from `first_chunk` on; a
    /// log's round).
    pub k: u64,
    /// A log partition sits this round out (watermark alignment): it reads nothing.
    pub sit_out: bool,
    /// A bounded log partition whose rounds alignment may skip: each chunk reads the next
    /// records up to the chunk size, not the `k`-th range of them.
    pub next_records: bool,
}

/// One step of reading a chunk. The record it read is then in the reader ([`SourceReader::line`],
/// [`SourceReader::raw`], [`SourceReader::events`]) until the next step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// A record, bound into its events. `pos`: its position in the partition (a file offset, an
    /// index, a Kafka offset); `len`: its length where it can be read back by position (a file
    /// line), else 0; `ts`: its event time. `unbound`: why its events could not be made, when
    /// its line could (a dead letter, and the chains of filters and selects still run).
    Record {
        pos: u64,
        len: u32,
        ts: i64,
        unbound: Option<String>,
    },
    /// A record that cannot be read (malformed, too long, undecodable): a dead letter with
    /// `reason` and its raw bytes.
    Dead { pos: u64, reason: String },
    /// A record deliberately not read (a CSV header, before `start_offset` or `start_time`).
    Skipped,
    /// A run of events already made ([`SourceReader::run`]), at positions `first..` (in-memory
    /// partitions).
    Run { first: u64 },
    /// Nothing more yet (a log waiting for records); ask again.
    Wait,
    /// The chunk is done.
    End,
    /// Reading failed (the log is unreadable): the run stops with this reason.
    Failed(String),
}

/// What the end of a chunk of a log partition says.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogChunkEnd {
    /// The partition's next offset after the chunk.
    pub next: i64,
    /// It reached its end (a bounded log).
    pub last: bool,
    /// It had no record for its idle timeout.
    pub idle: bool,
}

/// One shard's reader of one source's partitions.
pub trait SourceReader: Send {
    /// Opens a chunk; a failure stops the run (an unreadable input is never skipped).
    fn open_chunk(&mut self, spec: ChunkSpec) -> Result<(), String>;
    /// The next step of the open chunk.
    fn next(&mut self) -> Read;
    /// The JSON line of the last [`Read::Record`] (what the chains of filters and selects read).
    /// The change the record just read is, for a changelog source (`None`: the source appends),
    /// for the chains of filters and selects that bind it again and the sinks they write to.
    fn kind(&self) -> Option<crate::record::event::RowKind> {
        None
    }
    fn line(&self) -> &[u8];
    /// The last record as it was read (a CSV line, an undecodable value): for dead letters.
    fn raw(&self) -> &[u8] {
        self.line()
    }
    /// The events the last [`Read::Record`] was bound into, with their payloads (fewer payloads
    /// than events: the rest have none).
    fn events(&self) -> (&[Event], &[PayloadBuf]);
    /// The events of the last [`Read::Run`].
    fn run(&self) -> &[Event] {
        &[]
    }
    /// After a [`Read::Run`]: how many of its events were taken.
    fn advance(&mut self, _taken: usize) {}
    /// Ends the open chunk of a log partition.
    fn end_log_chunk(&mut self, _spec: ChunkSpec) -> LogChunkEnd {
        LogChunkEnd::default()
    }
    /// The most events one record becomes.
    fn outputs(&self) -> usize;
    /// Bytes read since the last call (for the metrics).
    fn take_bytes_read(&mut self) -> u64 {
        0
    }
    /// See `RecordParser::keep_fields`: the chains of filters and selects over the source take
    /// these fields from the same pass over the line; `None` when the reader scans no line.
    fn keep_fields(&mut self, _wanted: &[String]) -> Option<Vec<usize>> {
        None
    }
    /// Where the kept fields of the last record lie.
    fn kept(&self) -> Option<&[Option<Span>]> {
        None
    }
    /// Called every shard loop turn: serves a client's own events, and pauses reading after a
    /// while without credit (`stalled`), resuming once credit is back.
    fn tick(&mut self, _stalled: bool) {}
    /// Records the read positions where monitoring tools look (a Kafka group's offsets);
    /// `last`: the end of the run (waits for it).
    fn commit_positions(&mut self, _last: bool) {}
    /// Per log partition it reads: (global index, next offset, end of the log as last reported
    /// or -1), for the record-lag metric.
    fn lag(&self) -> Vec<(u16, i64, i64)> {
        Vec::new()
    }
}

/// Reads records back by position, for a late side output.
pub trait Recall: Send {
    /// Appends the raw record of event `e` (its partition `part`, its source's own index) to
    /// `out`; `Err` says why it cannot be read back, and nothing is appended then.
    fn recall(&mut self, part: &Partition, e: &Event, out: &mut Vec<u8>) -> Result<(), String>;
}

/// `rate_limit = "N/s"` of any source kind: records per second, over all its partitions.
pub fn parse_rate(r: &str) -> Result<f64, String> {
    let n = r
        .trim()
        .strip_suffix("/s")
        .and_then(|n| n.trim().parse::<f64>().ok());
    match n {
        Some(n) if n.is_finite() && n > 0.0 => Ok(n),
        _ => Err(format!(
            "`{r}` is not a rate: expected records per second, e.g. \"50000/s\""
        )),
    }
}

/// The wall clock in epoch ms, for the clock-skew guard (`i64::MAX` if the clock is before 1970,
/// which turns the guard off rather than refusing everything).
/// The parser of a source's records: their event time read as the plan says, with its guard
/// against clock skew, or none (each record gets `record::bind::NO_EVENT_TIME`).
pub fn record_parser(
    event_time: Option<&crate::plan::EventTimePlan>,
    bindings: &[crate::record::bind::Binding],
) -> Result<crate::record::bind::RecordParser, String> {
    use crate::record::bind::RecordParser;
    match event_time {
        Some(et) => Ok(RecordParser::new(&et.field, et.unit, bindings)?
            .with_guard(et.max_future_ms, et.allow_negative)),
        None => RecordParser::untimed(bindings),
    }
}

pub fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(i64::MAX, |d| d.as_millis() as i64)
}
