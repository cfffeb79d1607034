//! The `file` source: a file or a glob, one partition per file, NDJSON or CSV lines, read in
//! chunks ([`super::chunks`]): chunk `k` of a file is the lines whose first byte lies in
//! `[k * chunk_bytes, (k+1) * chunk_bytes)`, so any shard can read any chunk. A record's position
//! is its line's byte offset, by which a late record is read back for a side output. Backfill
//! options skip lines before a byte offset or an event time.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use super::chunks::{self, ChunkReader};
use super::config::FileSourceConfig;
use crate::connectors::changelog_rows::{ChangelogRows, Decoded};
use crate::connectors::check::Check;
use crate::connectors::csv::check::csv_plan;
use crate::connectors::csv::{header_columns, CsvPlan, CsvShape, Format};
use crate::connectors::source::{
    parse_rate, wall_clock_ms, ChunkSpec, Extent, Found, OpenCx, OpenSource, Partition, Read,
    ReaderCx, Recall, Source, SourceError, SourceReader,
};
use crate::connectors::SourceTable;
use crate::record::bind::{Malformed, RecordParser};
use crate::record::event::{Event, PayloadBuf};
use crate::record::json::Span;

/// `[sources.NAME] type = "file"`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSource {
    /// A file or a glob, expanded when the run opens the source.
    pub path: String,
    /// `format = "csv"`: how each line becomes a JSON record (`None`: lines are JSON).
    pub csv: Option<CsvPlan>,
    pub rate_per_s: Option<f64>,
    /// Records starting before this byte offset of each file are skipped.
    pub start_offset: u64,
    /// Records with an event time before this (epoch ms) are skipped.
    pub start_ms: Option<i64>,
    /// The lines are Debezium changes, each read as the rows it changes.
    pub changelog: bool,
}

impl SourceTable for FileSourceConfig {
    fn flink_notes(&self) -> Vec<&'static str> {
        super::sql::FLINK_SOURCE_NOTES.to_vec()
    }

    fn event_time(&self) -> Option<std::borrow::Cow<'_, crate::config::EventTimeConfig>> {
        self.event_time.as_ref().map(std::borrow::Cow::Borrowed)
    }

    fn watermark(&self) -> &crate::config::WatermarkConfig {
        &self.watermark
    }

    fn changelog(&self) -> bool {
        self.changelog.is_some()
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Source> {
        let f = self;
        if f.changelog.is_some() && f.format != Format::Json {
            cx.err(cx.key("changelog"), "a changelog is read from JSON lines (Debezium's envelope): leave format as \"json\"".into());
        }
        if f.path.is_empty() {
            cx.err(cx.key("path"), "the path cannot be empty".into());
        } else if let Err(e) = glob::Pattern::new(&f.path) {
            cx.err(
                cx.key("path"),
                format!("`{}` is not a valid file name or glob: {e}", f.path),
            );
        }
        let rate_per_s = f.rate_limit.as_deref().and_then(|r| match parse_rate(r) {
            Ok(n) => Some(n),
            Err(m) => {
                cx.err(cx.key("rate_limit"), m);
                None
            }
        });
        let start_ms = f.start_time.as_ref().and_then(|t| {
            let ms = crate::record::json::parse_rfc3339_ms(t.as_bytes());
            if ms.is_none() {
                cx.err(
                    cx.key("start_time"),
                    format!("`{t}` is not an RFC 3339 time, e.g. \"2026-11-01T00:00:00Z\""),
                );
            }
            ms
        });
        if f.format == Format::Avro {
            cx.err(cx.key("format"), "Avro is read from Kafka with a schema registry; a file source reads \"json\" or \"csv\"".into());
        }
        let csv = csv_plan(cx, f.format, f.csv.as_ref(), true);
        Arc::new(FileSource {
            path: f.path.clone(),
            csv,
            rate_per_s,
            start_offset: f.start_offset.unwrap_or(0),
            start_ms,
            changelog: f.changelog.is_some(),
        })
    }
}

impl Source for FileSource {
    fn kind(&self) -> &'static str {
        "file"
    }

    fn describe(&self) -> String {
        match self.changelog {
            true => format!("file {} (Debezium JSON changes: updating)", self.path),
            false => format!("file {}", self.path),
        }
    }

    fn rate_limit(&self) -> Option<f64> {
        self.rate_per_s
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSource>, SourceError> {
        let mut files = Vec::new();
        let mut found = Vec::new();
        for p in chunks::expand(cx.name, &self.path)? {
            let size = std::fs::metadata(&p)
                .map_err(|err| SourceError::Open {
                    source_name: cx.name.into(),
                    path: p.clone(),
                    err,
                })?
                .len();
            found.push(Found {
                name: p.display().to_string(),
                extent: Extent::Ranges {
                    chunks: Some(size.div_ceil(cx.chunk_bytes.max(1) as u64)),
                },
            });
            files.push((p, size));
        }
        let csv = match &self.csv {
            Some(c) => Some((Arc::new(csv_shape(cx, c, &files)?), c.header)),
            None => None,
        };
        Ok(Arc::new(OpenFiles {
            plan: self.clone(),
            files,
            found,
            csv,
            event_time: cx.event_time.cloned(),
        }))
    }
}

/// A CSV source's columns, named in the config or by the first line of its first file.
fn csv_shape(
    cx: &OpenCx<'_>,
    c: &CsvPlan,
    files: &[(PathBuf, u64)],
) -> Result<CsvShape, SourceError> {
    let err = |m: String| SourceError::config(cx.name, m);
    let columns = if c.columns.is_empty() {
        let Some((path, _)) = files.first() else {
            return Err(err(
                "a CSV header is read from the first file, and no file matches".into(),
            ));
        };
        let line = first_line(path, cx.max_line_bytes)
            .map_err(|e| err(format!("reading the header of `{}`: {e}", path.display())))?;
        header_columns(&line, c.delimiter)
            .map_err(|e| err(format!("the header of `{}`: {e}", path.display())))?
    } else {
        c.columns.clone()
    };
    Ok(CsvShape::new(&columns, c.delimiter))
}

/// The first line of `path` (without its newline), at most `max` bytes.
fn first_line(path: &std::path::Path, max: usize) -> std::io::Result<Vec<u8>> {
    use std::io::{BufRead, Read};
    let f = File::open(path)?;
    let mut line = Vec::new();
    std::io::BufReader::new(f)
        .take(max as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    Ok(line)
}

/// The files of a run, and what every shard's reader of them shares.
struct OpenFiles {
    plan: FileSource,
    /// Each partition's path and size, by index.
    files: Vec<(PathBuf, u64)>,
    found: Vec<Found>,
    /// The CSV columns, and whether each file's first line is a header to skip.
    csv: Option<(Arc<CsvShape>, bool)>,
    event_time: Option<crate::plan::EventTimePlan>,
}

impl OpenSource for OpenFiles {
    fn partitions(&self) -> &[Found] {
        &self.found
    }

    fn reader(&self, cx: &ReaderCx<'_>) -> Result<Box<dyn SourceReader>, String> {
        let parser =
            crate::connectors::source::record_parser(self.event_time.as_ref(), cx.bindings)?;
        let (reader, refused) = ChunkReader::new(cx.uring);
        if let (Some(why), 0) = (refused, cx.shard) {
            tracing::warn!(reason = %why, "io_uring unavailable; file sources fall back to pread");
        }
        Ok(Box::new(FileReader {
            files: self.files.clone(),
            open: (0..self.files.len()).map(|_| None).collect(),
            csv: self.csv.clone(),
            start_offset: self.plan.start_offset,
            start_ms: self.plan.start_ms,
            parts: cx.parts.to_vec(),
            reader,
            parser,
            chunk_bytes: cx.chunk_bytes,
            max_line_bytes: cx.max_line_bytes,
            cur: Cursor::default(),
            csv_line: Vec::new(),
            changes: self.plan.changelog.then(ChangelogRows::default),
            bytes_read: 0,
        }))
    }

    fn recaller(&self) -> Box<dyn Recall> {
        Box::new(FileRecall {
            files: self.files.iter().map(|(p, _)| p.clone()).collect(),
            open: (0..self.files.len()).map(|_| None).collect(),
        })
    }
}

/// Where the reader is in its chunk's buffer.
#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    /// Next line's index and the limit inside the reader's buffer, file offset of `buf[0]`.
    pos: usize,
    limit: usize,
    base: u64,
    /// The last line read: its place in the buffer (or in `csv_line`, converted).
    line: (usize, usize),
    converted: bool,
}

/// One shard's reader of a file source's chunks.
struct FileReader {
    files: Vec<(PathBuf, u64)>,
    open: Vec<Option<File>>,
    csv: Option<(Arc<CsvShape>, bool)>,
    start_offset: u64,
    start_ms: Option<i64>,
    parts: Vec<Partition>,
    reader: ChunkReader,
    parser: RecordParser,
    chunk_bytes: usize,
    max_line_bytes: usize,
    cur: Cursor,
    /// A CSV line as its JSON record (reused).
    csv_line: Vec<u8>,
    /// A changelog source's rows: the row of the change being read (`line()`).
    changes: Option<ChangelogRows>,
    bytes_read: u64,
}

impl FileReader {
    /// The last line as read (the raw CSV line for a CSV source).
    fn raw_line(&self) -> &[u8] {
        let (a, b) = self.cur.line;
        self.reader.buf().get(a..b).unwrap_or(&[])
    }

    /// Reads one line that is not blank: its offset, or `None` at the chunk's end.
    fn next_line(&mut self) -> Option<u64> {
        let buf = self.reader.buf();
        loop {
            if self.cur.pos >= self.cur.limit || self.cur.pos >= buf.len() {
                return None;
            }
            let start = self.cur.pos;
            let nl = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |i| start + i);
            self.cur.pos = nl + 1;
            if buf[start..nl].iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            self.cur.line = (start, nl);
            self.cur.converted = false;
            return Some(self.cur.base + start as u64);
        }
    }

    /// Binds the line just read at `offset`.
    fn bind(&mut self, offset: u64) -> Read {
        if offset < self.start_offset {
            return Read::Skipped;
        }
        if let Some((shape, header)) = &self.csv {
            if *header && offset == 0 {
                // The file's header line.
                return Read::Skipped;
            }
            let (a, b) = self.cur.line;
            let raw = &self.reader.buf()[a..b];
            if let Err(why) = shape.to_json(raw, &mut self.csv_line) {
                return Read::Dead {
                    pos: offset,
                    reason: format!("not a CSV record of this source: {why}"),
                };
            }
            self.cur.converted = true;
        }
        let line: &[u8] = if self.cur.converted {
            &self.csv_line
        } else {
            let (a, b) = self.cur.line;
            &self.reader.buf()[a..b]
        };
        if line.len() > self.max_line_bytes {
            return Read::Dead {
                pos: offset,
                reason: format!(
                    "line is {} bytes; max_line_bytes is {}",
                    line.len(),
                    self.max_line_bytes
                ),
            };
        }
        let len = line.len() as u32;
        if let Some(c) = self.changes.as_mut() {
            match c.decode(line) {
                Decoded::Skip => return Read::Skipped,
                Decoded::Dead(reason) => {
                    return Read::Dead {
                        pos: offset,
                        reason,
                    }
                }
                Decoded::Row(kind) => self.parser.kind_flags = kind.flags(),
            }
            return self.parse_row(offset, len);
        }
        let parsed = self.parser.parse(line);
        self.read(parsed, offset, len)
    }
}

impl FileReader {
    /// Binds the changelog row just decoded (of the line at `offset`, `len` bytes).
    fn parse_row(&mut self, offset: u64, len: u32) -> Read {
        let Some(c) = self.changes.as_ref() else {
            return Read::Skipped;
        };
        let parsed = self.parser.parse(&c.row);
        self.read(parsed, offset, len)
    }

    /// What binding the record at `offset` (`len` bytes) gave: a record, one before
    /// `start_time` skipped, or a dead letter.
    fn read(&self, parsed: Result<i64, Malformed>, offset: u64, len: u32) -> Read {
        match parsed {
            Ok(ts) if self.start_ms.is_some_and(|s| ts < s) => Read::Skipped,
            Ok(ts) => Read::Record {
                pos: offset,
                len,
                ts,
                unbound: None,
            },
            Err(m) => Read::Dead {
                pos: offset,
                reason: m.0,
            },
        }
    }
}

impl SourceReader for FileReader {
    fn open_chunk(&mut self, spec: ChunkSpec) -> Result<(), String> {
        let p = &self.parts[spec.part as usize];
        let (path, size) = &self.files[p.index];
        // A resumed job that reads logs numbers its chunks afresh: this file's chunk is
        // `first_chunk` further on.
        let k = spec.k + p.first_chunk;
        let offset = k * self.chunk_bytes as u64;
        // An unreadable input is a failed run, not a dead letter: skipping a chunk would lose
        // every line in it without a trace.
        if self.open[p.index].is_none() {
            let f = File::open(path).map_err(|e| {
                format!(
                    "source partition={} offset={offset}: cannot open: {e}",
                    p.name
                )
            })?;
            self.open[p.index] = Some(f);
        }
        let Some(f) = self.open[p.index].as_ref() else {
            return Err(format!("source partition={}: not open", p.name));
        };
        let c = self
            .reader
            .read_chunk(f, *size, k, self.chunk_bytes, self.max_line_bytes)
            .map_err(|e| {
                format!(
                    "source partition={} offset={offset}: read failed: {e}",
                    p.name
                )
            })?;
        self.cur = Cursor {
            pos: c.first,
            limit: c.limit.min(self.reader.buf().len()),
            base: c.base,
            ..Cursor::default()
        };
        self.bytes_read += self.reader.buf().len() as u64;
        // The clock-skew guard's wall clock, read once per chunk.
        self.parser.set_clock(wall_clock_ms());
        Ok(())
    }

    fn next(&mut self) -> Read {
        if let Some(kind) = self.changes.as_mut().and_then(ChangelogRows::next_pending) {
            self.parser.kind_flags = kind.flags();
            let (a, b) = self.cur.line;
            let offset = self.cur.base + a as u64;
            return self.parse_row(offset, (b - a) as u32);
        }
        match self.next_line() {
            Some(offset) => self.bind(offset),
            None => Read::End,
        }
    }

    fn line(&self) -> &[u8] {
        if let Some(c) = &self.changes {
            return &c.row;
        }
        if self.cur.converted {
            &self.csv_line
        } else {
            self.raw_line()
        }
    }

    fn raw(&self) -> &[u8] {
        self.raw_line()
    }

    fn kind(&self) -> Option<crate::record::event::RowKind> {
        let flags = self.parser.kind_flags;
        self.changes
            .as_ref()
            .map(|_| crate::record::event::RowKind::of_flags(flags))
    }

    fn events(&self) -> (&[Event], &[PayloadBuf]) {
        (&self.parser.events, &self.parser.payloads)
    }

    fn outputs(&self) -> usize {
        self.parser.outputs()
    }

    fn take_bytes_read(&mut self) -> u64 {
        std::mem::take(&mut self.bytes_read)
    }

    fn keep_fields(&mut self, wanted: &[String]) -> Option<Vec<usize>> {
        self.parser.keep_fields(wanted)
    }

    fn kept(&self) -> Option<&[Option<Span>]> {
        self.parser.kept()
    }
}

/// Reads a late record back from its file by offset and length.
struct FileRecall {
    files: Vec<PathBuf>,
    open: Vec<Option<File>>,
}

impl Recall for FileRecall {
    fn recall(&mut self, part: &Partition, e: &Event, out: &mut Vec<u8>) -> Result<(), String> {
        let path = &self.files[part.index];
        let slot = &mut self.open[part.index];
        if slot.is_none() {
            *slot = Some(File::open(path).map_err(|err| {
                format!(
                    "late record at offset {} of {}: cannot reopen the file to read it back: {err}",
                    e.pos,
                    path.display()
                )
            })?);
        }
        if let Some(f) = slot.as_ref() {
            chunks::recall(f, e.pos, e.len, out).map_err(|err| {
                format!(
                    "late record at offset {} of {}: cannot read it back: {err}",
                    e.pos,
                    path.display()
                )
            })?;
        }
        Ok(())
    }
}
