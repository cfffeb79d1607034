//! Filters and selects on the shard that reads a source record: each [`SourceChain`] runs a record
//! through its chain of steps and hands the result to the ports that read that chain (as events,
//! keyed like any other) and to the sinks that write it (as lines). Lines for sinks wait in
//! [`RecordOut`] until this shard has received the end of the chunk they came from, so they land
//! in the sink in the global chunk order, on the right side of every checkpoint barrier: a replay
//! from a checkpoint writes them once more only if the checkpoint did not cover them.

use super::Shard;
use crate::operators::steps::{Outcome, StepChain};
use crate::record::bind::RecordParser;
use crate::record::event::RowKind;
use crate::record::json::Span;
use std::collections::VecDeque;

/// One chain of steps from a source, and who reads its records.
pub struct SourceChain {
    pub chain: StepChain,
    /// The ports reading this chain, as one parser with a binding per port.
    pub parser: Option<RecordParser>,
    /// Sink indices writing this chain's records.
    pub sinks: Vec<usize>,
    /// The last record kept through the chain and bound: its events are in `parser`.
    pub bound: bool,
    /// `parser` binds the chain's input line, not its output (`runtime::pushdown`).
    pub direct: bool,
}

/// Record lines of one chunk for one sink: `n` lines, each after its kind's code byte
/// (`RowKind::code`) when `kinded` (a changelog source's rows).
struct Pending {
    seq: u64,
    sink: usize,
    buf: Vec<u8>,
    n: u64,
    kinded: bool,
}

/// Record lines per (chunk, sink), oldest chunk first.
#[derive(Default)]
pub struct RecordOut {
    chunks: VecDeque<Pending>,
    /// Bytes held in `chunks`.
    bytes: usize,
    /// Buffers already written to their sink, kept for the next chunks: a fresh buffer per chunk
    /// grew by copies into freshly zeroed pages for every line it held.
    spare: Vec<Vec<u8>>,
}

/// How many written buffers [`RecordOut`] keeps for reuse (a chunk's lines per sink each).
const SPARE_BUFFERS: usize = 8;

impl RecordOut {
    fn push(&mut self, seq: u64, sink: usize, line: &[u8], kind: Option<RowKind>) {
        let kinded = kind.is_some();
        let grow = matches!(self.chunks.back(), Some(p) if p.seq == seq && p.sink == sink && p.kinded == kinded);
        if !grow {
            let buf = self.spare.pop().unwrap_or_default();
            self.chunks.push_back(Pending {
                seq,
                sink,
                buf,
                n: 0,
                kinded,
            });
        }
        if let Some(p) = self.chunks.back_mut() {
            if let Some(k) = kind {
                p.buf.push(k.code());
                self.bytes += 1;
            }
            p.buf.extend_from_slice(line);
            p.buf.push(b'\n');
            p.n += 1;
        }
        self.bytes += line.len() + 1;
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

/// What running one record through a source's chains gave.
pub struct Applied {
    pub dropped: u64,
    /// Dead-letter reasons (one per chain the record failed on).
    pub failed: Vec<String>,
}

/// Runs `line` (read at event time `ts`, in chunk `seq`; `kind`: the change it is, for a
/// changelog source's row) through every chain: events stay in each chain's parser (`bound`),
/// stamped with that kind; lines go to `out` with it. `kept`: where the source's parser found
/// the fields of this line ([`StepChain::read_first_from`]).
pub fn apply(
    chains: &mut [SourceChain],
    line: &[u8],
    kept: Option<&[Option<Span>]>,
    ts: i64,
    (seq, kind): (u64, Option<RowKind>),
    out: &mut RecordOut,
) -> Applied {
    let mut a = Applied {
        dropped: 0,
        failed: Vec::new(),
    };
    for r in chains {
        r.bound = false;
        match r.chain.apply(line, kept) {
            Ok(Outcome::Kept(rec)) => {
                if let Some(p) = &mut r.parser {
                    p.kind_flags = kind.map_or(0, RowKind::flags);
                    let bound = match r.direct {
                        true => p.parse_kept(line, kept, ts),
                        false => p.parse_at(rec, ts),
                    };
                    match bound {
                        Ok(()) => r.bound = true,
                        Err(m) => a.failed.push(m.0),
                    }
                }
                for &s in &r.sinks {
                    out.push(seq, s, rec, kind);
                }
            }
            Ok(Outcome::Dropped) => a.dropped += 1,
            // Two chains sharing a failing step fail alike: one dead letter for the record.
            Err(why) if a.failed.contains(&why) => {}
            Err(why) => a.failed.push(why),
        }
    }
    a
}

impl Shard {
    /// Operator output a filter, select or binding could not take goes to the dead letters, with
    /// the operator's name as its source; so do rows a sink refused (a value that does
    /// not fit its column), with the sink's name.
    #[cold]
    pub(super) fn dead_results(&mut self) {
        for i in 0..self.emitter.sinks.len() {
            if !self.emitter.sinks[i].has_rejected() {
                continue;
            }
            let name = self.emitter.sinks[i].name().to_string();
            for (why, line) in self.emitter.sinks[i].take_rejected() {
                self.stats.dead_letters += 1;
                self.stats.dead_by_reason[crate::metrics::live::dead_reason_class(&why)] += 1;
                if let Some(d) = self.dead.as_mut() {
                    let l = super::emit::dead_letter_line(&why, &name, "sink", 0, &line);
                    if let Err(e) = d.line(&l) {
                        self.emitter.error.get_or_insert(e);
                    }
                }
            }
        }
        for (op, why, line) in std::mem::take(&mut self.emitter.failed) {
            self.stats.dead_letters += 1;
            self.stats.dead_by_reason[crate::metrics::live::dead_reason_class(&why)] += 1;
            if let Some(d) = self.dead.as_mut() {
                let name = &self.setup.op_names[op];
                let l = super::emit::dead_letter_line(&why, name, "results", 0, &line);
                if let Err(e) = d.line(&l) {
                    self.emitter.error.get_or_insert(e);
                }
            }
        }
    }

    /// This shard has received every event of chunk `seq`: record lines of that chunk and before
    /// go to their sinks.
    #[cold]
    pub(super) fn flush_records(&mut self, seq: u64) {
        while self.record_out.chunks.front().is_some_and(|c| c.seq <= seq) {
            let Some(p) = self.record_out.chunks.pop_front() else {
                break;
            };
            self.record_out.bytes -= p.buf.len();
            self.stats.records_written += p.n;
            let sink = &mut self.emitter.sinks[p.sink];
            let written = if p.kinded {
                p.buf
                    .split_inclusive(|&b| b == b'\n')
                    .filter_map(|l| Some((RowKind::of_code(*l.first()?)?, &l[1..])))
                    .try_for_each(|(kind, line)| sink.row(kind, line))
            } else {
                sink.lines(&p.buf, p.n)
            };
            if let Err(e) = written {
                self.emitter.error.get_or_insert(e);
            }
            if self.record_out.spare.len() < SPARE_BUFFERS {
                let mut buf = p.buf;
                buf.clear();
                self.record_out.spare.push(buf);
            }
        }
    }
}
