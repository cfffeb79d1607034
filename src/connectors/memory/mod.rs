//! In-memory partitions of events already parsed: benchmarks and tests of the engine without a
//! parser hand these to a run in place of a plan's sources (`RunOptions::sources`). Each event
//! must carry its key, hash, `op`, values and `ts`; the runtime stamps the rest (its partition,
//! its position, the chunk's running maximum). A chunk is `per_chunk` consecutive events.

use std::sync::Arc;

use crate::connectors::source::{
    ChunkSpec, Extent, Found, OpenSource, Partition, Read, ReaderCx, Recall, SourceReader,
};
use crate::record::event::{Event, PayloadBuf};

/// One partition of events, cut into chunks of `per_chunk`.
pub struct MemorySource {
    events: Arc<[Event]>,
    per_chunk: u64,
    found: Vec<Found>,
}

impl MemorySource {
    pub fn new(name: &str, events: Arc<[Event]>, per_chunk: u64) -> MemorySource {
        let per_chunk = per_chunk.max(1);
        MemorySource {
            found: vec![Found {
                name: name.to_string(),
                extent: Extent::Ranges {
                    chunks: Some((events.len() as u64).div_ceil(per_chunk)),
                },
            }],
            events,
            per_chunk,
        }
    }
}

impl OpenSource for MemorySource {
    fn partitions(&self) -> &[Found] {
        &self.found
    }

    fn reader(&self, _cx: &ReaderCx<'_>) -> Result<Box<dyn SourceReader>, String> {
        Ok(Box::new(MemoryReader {
            events: self.events.clone(),
            per_chunk: self.per_chunk,
            next: 0,
            end: 0,
        }))
    }

    fn recaller(&self) -> Box<dyn Recall> {
        Box::new(MemoryRecall)
    }
}

struct MemoryReader {
    events: Arc<[Event]>,
    per_chunk: u64,
    next: usize,
    end: usize,
}

impl SourceReader for MemoryReader {
    fn open_chunk(&mut self, spec: ChunkSpec) -> Result<(), String> {
        let len = self.events.len() as u64;
        self.next = (spec.k * self.per_chunk).min(len) as usize;
        self.end = ((spec.k + 1) * self.per_chunk).min(len) as usize;
        Ok(())
    }

    fn next(&mut self) -> Read {
        if self.next >= self.end {
            return Read::End;
        }
        Read::Run {
            first: self.next as u64,
        }
    }

    fn run(&self) -> &[Event] {
        &self.events[self.next..self.end]
    }

    fn advance(&mut self, taken: usize) {
        self.next = (self.next + taken).min(self.end);
    }

    fn line(&self) -> &[u8] {
        &[]
    }

    fn events(&self) -> (&[Event], &[PayloadBuf]) {
        (&[], &[])
    }

    fn outputs(&self) -> usize {
        1
    }
}

/// A late in-memory event has no record: its time stands for it.
struct MemoryRecall;

impl Recall for MemoryRecall {
    fn recall(&mut self, _part: &Partition, e: &Event, out: &mut Vec<u8>) -> Result<(), String> {
        out.extend_from_slice(format!("{{\"ts\":{}}}", e.ts).as_bytes());
        Ok(())
    }
}
