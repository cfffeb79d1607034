//! The generator sources as the runtime reads them: one partition each, cut into chunks of event
//! indices (`chunk_bytes / 64` clicks, `chunk_bytes / 190` Nexmark event numbers, so a chunk is
//! about as large as a file's), any of which any shard can make. A record's position is its
//! index, which makes it again for a late side output.

use std::sync::Arc;

use super::bind::GenParser;
use super::model::{write_ndjson, ClickModel};
use super::nexmark::{NexmarkSource, NEXMARK_EVENT_BYTES};
use super::{GeneratorPlan, NexmarkSourcePlan};
use crate::connectors::source::{
    wall_clock_ms, ChunkSpec, Extent, Found, OpenCx, OpenSource, Partition, Read, ReaderCx, Recall,
    Source, SourceError, SourceReader,
};
use crate::record::bind::RecordParser;
use crate::record::event::{Event, PayloadBuf};
use crate::record::json::Span;

/// Bytes of one generated click, for sizing generator chunks like file chunks.
pub const GENERATED_EVENT_BYTES: usize = 64;

/// `type = "generator"`, `model = "clicks"`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ClickSource {
    pub model: GeneratorPlan,
    pub rate_per_s: Option<f64>,
}

/// `type = "generator"`, `model = "nexmark"`, validated: one of Nexmark's tables.
#[derive(Debug, Clone, PartialEq)]
pub struct NexmarkTableSource {
    pub table: NexmarkSourcePlan,
    pub rate_per_s: Option<f64>,
}

/// The one partition of a generated stream of `count` events (`None`: unbounded).
fn partition(name: String, count: Option<u64>, per_chunk: u64) -> Found {
    Found {
        name,
        extent: Extent::Ranges {
            chunks: count.map(|c| c.div_ceil(per_chunk)),
        },
    }
}

/// The index range of chunk `spec` of a stream cut into `per_chunk` events, of `count` in all.
fn range(parts: &[Partition], spec: ChunkSpec, per_chunk: u64, count: Option<u64>) -> (u64, u64) {
    let k = spec.k + parts[spec.part as usize].first_chunk;
    let end = ((k + 1) * per_chunk).min(count.unwrap_or(u64::MAX));
    (k * per_chunk, end)
}

impl Source for ClickSource {
    fn kind(&self) -> &'static str {
        "generator"
    }

    fn describe(&self) -> String {
        format!(
            "generator ({} keys, seed {})",
            self.model.keys, self.model.seed
        )
    }

    fn rate_limit(&self) -> Option<f64> {
        self.rate_per_s
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSource>, SourceError> {
        let per_chunk = (cx.chunk_bytes / GENERATED_EVENT_BYTES).max(1) as u64;
        Ok(Arc::new(OpenClicks {
            model: Arc::new(ClickModel::new(&self.model)),
            found: vec![partition("generator".into(), self.model.count, per_chunk)],
            per_chunk,
            count: self.model.count,
        }))
    }
}

struct OpenClicks {
    model: Arc<ClickModel>,
    found: Vec<Found>,
    per_chunk: u64,
    count: Option<u64>,
}

/// How a click becomes the events of the ports reading it: straight from the click (the common
/// case), or from its JSON line where a binding needs more (rows, nested paths).
enum Binder {
    Direct(GenParser, Vec<Event>),
    Json(Box<RecordParser>),
}

impl OpenSource for OpenClicks {
    fn partitions(&self) -> &[Found] {
        &self.found
    }

    fn reader(&self, cx: &ReaderCx<'_>) -> Result<Box<dyn SourceReader>, String> {
        let binder = match GenParser::new(cx.bindings) {
            Ok(g) => {
                let evs = vec![Event::EMPTY; g.outputs()];
                Binder::Direct(g, evs)
            }
            Err(_) => Binder::Json(Box::new(RecordParser::keyed(cx.bindings)?)),
        };
        Ok(Box::new(ClickReader {
            model: self.model.clone(),
            per_chunk: self.per_chunk,
            count: self.count,
            parts: cx.parts.to_vec(),
            // Filters, selects and rows read records: the click as the line loadgen writes.
            needs_line: cx.chains || matches!(binder, Binder::Json(_)),
            binder,
            line: Vec::new(),
            next: 0,
            end: 0,
        }))
    }

    fn recaller(&self) -> Box<dyn Recall> {
        Box::new(ClickRecall(self.model.clone()))
    }
}

struct ClickReader {
    model: Arc<ClickModel>,
    per_chunk: u64,
    count: Option<u64>,
    parts: Vec<Partition>,
    binder: Binder,
    needs_line: bool,
    /// The last click as its JSON line, when anything reads it.
    line: Vec<u8>,
    next: u64,
    end: u64,
}

impl SourceReader for ClickReader {
    fn open_chunk(&mut self, spec: ChunkSpec) -> Result<(), String> {
        (self.next, self.end) = range(&self.parts, spec, self.per_chunk, self.count);
        Ok(())
    }

    fn next(&mut self) -> Read {
        if self.next >= self.end {
            return Read::End;
        }
        let i = self.next;
        self.next += 1;
        let click = self.model.click(i);
        if self.needs_line {
            self.line.clear();
            write_ndjson(&click, &mut self.line);
            while self.line.last() == Some(&b'\n') {
                self.line.pop();
            }
        }
        let unbound = match &mut self.binder {
            Binder::Direct(g, evs) => {
                g.build(&click, evs);
                None
            }
            Binder::Json(p) => p.parse_at(&self.line, click.ts).err().map(|m| m.0),
        };
        Read::Record {
            pos: i,
            len: 0,
            ts: click.ts,
            unbound,
        }
    }

    fn line(&self) -> &[u8] {
        &self.line
    }

    fn events(&self) -> (&[Event], &[PayloadBuf]) {
        match &self.binder {
            Binder::Direct(g, evs) => (&evs[..g.outputs()], &[]),
            Binder::Json(p) => (&p.events, &p.payloads),
        }
    }

    fn outputs(&self) -> usize {
        match &self.binder {
            Binder::Direct(g, _) => g.outputs(),
            Binder::Json(p) => p.outputs(),
        }
    }

    fn keep_fields(&mut self, wanted: &[String]) -> Option<Vec<usize>> {
        match &mut self.binder {
            Binder::Json(p) => p.keep_fields(wanted),
            Binder::Direct(..) => None,
        }
    }

    fn kept(&self) -> Option<&[Option<Span>]> {
        match &self.binder {
            Binder::Json(p) => p.kept(),
            Binder::Direct(..) => None,
        }
    }
}

/// Makes a late click again from its index.
struct ClickRecall(Arc<ClickModel>);

impl Recall for ClickRecall {
    fn recall(&mut self, _part: &Partition, e: &Event, out: &mut Vec<u8>) -> Result<(), String> {
        write_ndjson(&self.0.click(e.pos), out);
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        Ok(())
    }
}

impl Source for NexmarkTableSource {
    fn kind(&self) -> &'static str {
        "generator"
    }

    fn describe(&self) -> String {
        format!(
            "generator (nexmark {}, seed {}, {} events/s)",
            self.table.table.name(),
            self.table.seed,
            self.table.first_event_rate
        )
    }

    fn rate_limit(&self) -> Option<f64> {
        self.rate_per_s
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSource>, SourceError> {
        let per_chunk = (cx.chunk_bytes / NEXMARK_EVENT_BYTES).max(1) as u64;
        let name = format!("nexmark/{}", self.table.table.name());
        Ok(Arc::new(OpenNexmark {
            source: Arc::new(NexmarkSource::new(&self.table)),
            found: vec![partition(name, self.table.count, per_chunk)],
            per_chunk,
            count: self.table.count,
            event_time: cx.event_time.cloned(),
        }))
    }
}

struct OpenNexmark {
    source: Arc<NexmarkSource>,
    found: Vec<Found>,
    per_chunk: u64,
    count: Option<u64>,
    event_time: Option<crate::plan::EventTimePlan>,
}

impl OpenSource for OpenNexmark {
    fn partitions(&self) -> &[Found] {
        &self.found
    }

    fn reader(&self, cx: &ReaderCx<'_>) -> Result<Box<dyn SourceReader>, String> {
        // Nexmark records are JSON lines, bound like a file's (their event time a field).
        let parser =
            crate::connectors::source::record_parser(self.event_time.as_ref(), cx.bindings)?;
        Ok(Box::new(NexmarkReader {
            source: self.source.clone(),
            per_chunk: self.per_chunk,
            count: self.count,
            parts: cx.parts.to_vec(),
            parser,
            line: Vec::new(),
            next: 0,
            end: 0,
        }))
    }

    fn recaller(&self) -> Box<dyn Recall> {
        Box::new(NexmarkRecall(self.source.clone()))
    }
}

/// Makes a Nexmark chunk: its range of event numbers, of which only the table's own become
/// records, each its `loadgen nexmark` line, parsed as a file's line is.
struct NexmarkReader {
    source: Arc<NexmarkSource>,
    per_chunk: u64,
    count: Option<u64>,
    parts: Vec<Partition>,
    parser: RecordParser,
    line: Vec<u8>,
    next: u64,
    end: u64,
}

impl SourceReader for NexmarkReader {
    fn open_chunk(&mut self, spec: ChunkSpec) -> Result<(), String> {
        (self.next, self.end) = range(&self.parts, spec, self.per_chunk, self.count);
        // A Nexmark record's time is a field, guarded as a file's: the guard's wall clock.
        self.parser.set_clock(wall_clock_ms());
        Ok(())
    }

    fn next(&mut self) -> Read {
        let n = loop {
            if self.next >= self.end {
                return Read::End;
            }
            let n = self.next;
            self.next += 1;
            self.line.clear();
            if self.source.record(n, &mut self.line).is_some() {
                break n;
            }
        };
        match self.parser.parse(&self.line) {
            Ok(ts) => Read::Record {
                pos: n,
                len: 0,
                ts,
                unbound: None,
            },
            Err(m) => Read::Dead {
                pos: n,
                reason: m.0,
            },
        }
    }

    fn line(&self) -> &[u8] {
        &self.line
    }

    fn events(&self) -> (&[Event], &[PayloadBuf]) {
        (&self.parser.events, &self.parser.payloads)
    }

    fn outputs(&self) -> usize {
        self.parser.outputs()
    }

    fn keep_fields(&mut self, wanted: &[String]) -> Option<Vec<usize>> {
        self.parser.keep_fields(wanted)
    }

    fn kept(&self) -> Option<&[Option<Span>]> {
        self.parser.kept()
    }
}

/// Makes a late Nexmark record again from its event number.
struct NexmarkRecall(Arc<NexmarkSource>);

impl Recall for NexmarkRecall {
    fn recall(&mut self, part: &Partition, e: &Event, out: &mut Vec<u8>) -> Result<(), String> {
        match self.0.record(e.pos, out) {
            Some(_) => Ok(()),
            None => Err(format!(
                "late record at event {} of {}: not a record of this table",
                e.pos, part.name
            )),
        }
    }
}
