//! Where a shard's operator output goes: its own buffers for each sink reading the node (whole
//! lines, appended to the shared output in large writes), chains of filters and selects over it,
//! and the ports of the nodes that read it, as events keyed for their owners on the next depth's
//! rings. Late records go the same ways from a node's late side output; dead letters to theirs.
//!
//! Every event sent on carries its ordering tag (see `event`): the cause's position for output of
//! a record's arrival, the watermark step's position for fired output. A step's fired records are
//! collected and sent in (state key, emission) order, so each ring stays sorted by tag and the
//! receivers' merge never depends on how keys are spread over shards.

use super::exchange::Outbound;
use super::owners::Owners;
use crate::connectors::sink::{SinkError, SinkWriter};
use crate::connectors::source::{Partition, Recall};
use crate::operators::steps::{Outcome, StepChain};
use crate::operators::{Emitter, Output};
use crate::record::bind::RecordParser;
use crate::record::event::{slot_of, Event, Rec, RowKind, Tag, FIRED, SLOT_BYTES};
use std::sync::Arc;

/// Who reads one stream, compiled for this shard.
#[derive(Default)]
pub struct Outlet {
    pub sinks: Vec<usize>,
    /// Binds the records for the ports reading the stream as it is.
    pub parser: Option<RecordParser>,
    /// Chains of steps, each with the ports (one parser) and sinks at its end.
    pub chains: Vec<(StepChain, Option<RecordParser>, Vec<usize>)>,
    /// A reader aggregates retractions.
    pub retractions: bool,
}

impl Outlet {
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty() && self.parser.is_none() && self.chains.is_empty()
    }
}

/// The watermark step being fired, if any: its position and depth.
#[derive(Debug, Clone, Copy, Default)]
struct Firing {
    at: Option<i64>,
}

/// A fired record waiting for its step to end: (origin, emission, destination, header, payload
/// slots in `batch_slots`).
type Batched = (u64, u64, usize, Event, std::ops::Range<usize>);

/// Writes operator output to this shard's sinks and to the next depth's rings.
pub(super) struct ShardEmitter {
    pub(super) sinks: Vec<SinkWriter>,
    pub(super) parts: Arc<Vec<Partition>>,
    /// Per source: reads a late record back by its position.
    recallers: Vec<Box<dyn Recall>>,
    /// Per node: readers of its output and of its late side output.
    pub(super) outputs: Vec<Outlet>,
    pub(super) lates: Vec<Outlet>,
    /// Per depth `d`: the rings to depth `d + 1` (empty past the deepest).
    pub(super) next: Vec<Outbound>,
    /// Each key's owner, for records re-keyed to another operator.
    pub(super) owners: Owners,
    /// The node emitting now, its depth and the partition of the chunk being processed.
    pub(super) node: usize,
    pub(super) depth: usize,
    pub(super) part: u16,
    firing: Firing,
    /// Records emitted by the current step so far (their tie-break within one state key).
    fired_seq: u64,
    /// Outputs of the current cause so far (their tie-break), and which cause that is.
    cause_seen: (u64, u64, i64, u32),
    batch: Vec<Batched>,
    /// The batch's send order: (state key, emission, index in `batch`), kept between steps.
    /// A stable sort of the batch itself took a fresh scratch buffer of half its size each
    /// step (freshly zeroed pages for every large firing).
    batch_order: Vec<(u64, u64, usize)>,
    batch_slots: Vec<Event>,
    pub(super) scratch: Vec<u8>,
    late_line: Vec<u8>,
    /// Records emitted (results, joined rows, ...), for the latency marks.
    pub(super) emitted: u64,
    pub(super) error: Option<SinkError>,
    /// Records a chain dropped, and (node, reason, record) of those a chain or a binding could not
    /// take: the shard writes them to the dead letters.
    pub(super) results_filtered: u64,
    pub(super) late_to_side: u64,
    pub(super) failed: Vec<(usize, String, Vec<u8>)>,
}

/// A 64-bit mix of a cause's tie-break with the emitting node and the output's index: equal only
/// for the same lineage (ties between different lineages are then broken by it, not by shards).
#[inline]
fn lineage(sub: u64, node: usize, k: u32) -> u64 {
    let mut z = sub ^ ((node as u64) << 40) ^ u64::from(k) ^ 0x9e37_79b9_7f4a_7c15;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl ShardEmitter {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        sinks: Vec<SinkWriter>,
        parts: Arc<Vec<Partition>>,
        recallers: Vec<Box<dyn Recall>>,
        outputs: Vec<Outlet>,
        lates: Vec<Outlet>,
        next: Vec<Outbound>,
        owners: Owners,
    ) -> ShardEmitter {
        ShardEmitter {
            sinks,
            parts,
            recallers,
            outputs,
            lates,
            next,
            owners,
            node: 0,
            depth: 0,
            part: 0,
            firing: Firing::default(),
            fired_seq: 0,
            cause_seen: (u64::MAX, 0, 0, 0),
            batch: Vec::new(),
            batch_order: Vec::new(),
            batch_slots: Vec::new(),
            scratch: Vec::new(),
            late_line: Vec::new(),
            emitted: 0,
            error: None,
            results_filtered: 0,
            late_to_side: 0,
            failed: Vec::new(),
        }
    }

    /// What follows is fired by node `node`'s watermark step at position `at`.
    pub(super) fn begin_firing(&mut self, node: usize, at: i64) {
        self.node = node;
        self.firing.at = Some(at);
        self.fired_seq = 0;
    }

    /// The step is over: its records go out in (state key, emission) order.
    pub(super) fn end_firing(&mut self) {
        self.firing.at = None;
        if self.batch.is_empty() {
            return;
        }
        // The index breaks ties, so the in-place sort gives the stable order: one key's records
        // keep their emission order.
        let order = &mut self.batch_order;
        order.clear();
        order.extend(self.batch.iter().enumerate().map(|(i, b)| (b.0, b.1, i)));
        order.sort_unstable();
        if let Some(out) = self.next.get_mut(self.depth) {
            for &(_, _, i) in order.iter() {
                let (_, _, dest, head, slots) = &self.batch[i];
                out.send(*dest, head, &self.batch_slots[slots.clone()]);
            }
        }
        self.batch.clear();
        self.batch_slots.clear();
    }

    fn write(&mut self, sink: usize, kind: RowKind, line: &[u8]) {
        if let Err(e) = self.sinks[sink].row(kind, line) {
            self.error.get_or_insert(e);
        }
    }

    /// The ordering tag of the record being emitted now: (seen_max, flags, pos, sub).
    fn tag(&mut self, out: &Output<'_>) -> (i64, u8, u64, u64) {
        match out.cause {
            Some(e) => {
                let me = (e.pos, e.sub, e.seen_max);
                let k = if (self.cause_seen.0, self.cause_seen.1, self.cause_seen.2) == me {
                    self.cause_seen.3 += 1;
                    self.cause_seen.3
                } else {
                    self.cause_seen = (me.0, me.1, me.2, 0);
                    0
                };
                (
                    e.seen_max,
                    e.flags & FIRED,
                    e.pos,
                    lineage(e.sub, self.node, k),
                )
            }
            None => {
                let at = self.firing.at.unwrap_or(i64::MAX);
                let origin = ((self.depth as u64) << 60)
                    | ((self.node as u64 & 0xff) << 52)
                    | (out.key >> 12);
                self.fired_seq += 1;
                (at, FIRED, origin, self.fired_seq)
            }
        }
    }

    /// Sends the events `parser` made of one record to their owners (or into the step's batch);
    /// `Err` (nothing sent) when one is larger than the ring it must cross, which it could never
    /// enter (a joined row of two large rows): the record is then a dead letter with that reason.
    fn route(
        &mut self,
        parser: &mut RecordParser,
        tag: (i64, u8, u64, u64),
        kind: RowKind,
    ) -> Result<(), String> {
        if let Some(out) = self.next.get(self.depth) {
            for i in 0..parser.outputs() {
                let slots = 1 + parser.payloads[i].bytes.len().div_ceil(SLOT_BYTES);
                let dest = self.owners.of(parser.events[i].hash);
                let cap = out.rings.get(dest).map_or(usize::MAX, |r| r.capacity());
                if slots > cap {
                    return Err(format!("this result needs {slots} ring slots of {SLOT_BYTES} bytes to reach the next operator, more than a ring holds ([runtime] ring_capacity = {cap}): raise ring_capacity"));
                }
            }
        }
        for i in 0..parser.outputs() {
            let mut ev = parser.events[i];
            ev.tag = Tag::DATA;
            ev.seen_max = tag.0;
            ev.flags |= tag.1 | kind.flags();
            ev.pos = tag.2;
            ev.sub = tag.3;
            ev.part = self.part;
            let dest = self.owners.of(ev.hash);
            let start = self.batch_slots.len();
            self.batch_slots
                .extend(parser.payloads[i].bytes.chunks(SLOT_BYTES).map(slot_of));
            let end = self.batch_slots.len();
            if self.firing.at.is_some() {
                self.batch.push((tag.2, tag.3, dest, ev, start..end));
            } else {
                if let Some(out) = self.next.get_mut(self.depth) {
                    out.send(dest, &ev, &self.batch_slots[start..end]);
                }
                self.batch_slots.truncate(start);
            }
        }
        Ok(())
    }

    /// Sends one record of node `self.node`'s output (or late side output) to every reader.
    fn deliver(
        &mut self,
        line: &[u8],
        ts: i64,
        tag: (i64, u8, u64, u64),
        kind: RowKind,
        late: bool,
    ) {
        let node = self.node;
        let mut outlet = std::mem::take(if late {
            &mut self.lates[node]
        } else {
            &mut self.outputs[node]
        });
        self.deliver_to(&mut outlet, line, ts, tag, kind);
        *(if late {
            &mut self.lates[node]
        } else {
            &mut self.outputs[node]
        }) = outlet;
    }

    fn deliver_to(
        &mut self,
        outlet: &mut Outlet,
        line: &[u8],
        ts: i64,
        tag: (i64, u8, u64, u64),
        kind: RowKind,
    ) {
        let bare = line.strip_suffix(b"\n").unwrap_or(line);
        // Each sink writes the kinds it takes (an append-only one skips `-U` and `-D`).
        for &s in &outlet.sinks {
            self.write(s, kind, line);
        }
        if let Some(p) = outlet.parser.as_mut() {
            let routed = match p.parse_at(bare, ts) {
                Ok(()) => self.route(p, tag, kind),
                Err(m) => Err(m.0),
            };
            if let Err(why) = routed {
                self.failed.push((self.node, why, bare.to_vec()));
            }
        }
        for (chain, parser, sinks) in &mut outlet.chains {
            match chain.apply(bare, None) {
                Ok(Outcome::Kept(rec)) => {
                    if !sinks.is_empty() {
                        self.scratch.clear();
                        self.scratch.extend_from_slice(rec);
                        self.scratch.push(b'\n');
                        let l = std::mem::take(&mut self.scratch);
                        for &s in sinks.iter() {
                            self.write(s, kind, &l);
                        }
                        self.scratch = l;
                    }
                    if let Some(p) = parser.as_mut() {
                        let routed = match p.parse_at(rec, ts) {
                            Ok(()) => self.route(p, tag, kind),
                            Err(m) => Err(m.0),
                        };
                        if let Err(why) = routed {
                            self.failed.push((self.node, why, rec.to_vec()));
                        }
                    }
                }
                Ok(Outcome::Dropped) => self.results_filtered += 1,
                // Two chains sharing a failing step fail alike: one dead letter for the record.
                Err(why) => {
                    if !self
                        .failed
                        .iter()
                        .any(|(n, w, _)| *n == self.node && *w == why)
                    {
                        self.failed.push((self.node, why, bare.to_vec()));
                    }
                }
            }
        }
    }

    /// Reads back the raw source record of `e` (a late record) through its source; `Err` says
    /// why it cannot be (the file is gone or shrank), and nothing is written to `out` then.
    fn recall(&mut self, e: &Event, out: &mut Vec<u8>) -> Result<(), String> {
        let Some(part) = self.parts.get(e.part as usize) else {
            out.extend_from_slice(format!("{{\"ts\":{}}}", e.ts).as_bytes());
            return Ok(());
        };
        match self.recallers.get_mut(part.source) {
            Some(r) => r.recall(part, e, out),
            None => Err(format!(
                "late record of {}: no source to read it back",
                part.name
            )),
        }
    }
}

impl Emitter for ShardEmitter {
    fn emit(&mut self, out: Output<'_>) {
        if !out.kind.is_retraction() {
            self.emitted += 1;
        }
        let tag = self.tag(&out);
        if self.outputs[self.node].is_empty() {
            return;
        }
        self.deliver(out.line, out.ts, tag, out.kind, false);
    }

    fn late(&mut self, rec: &Rec<'_>) {
        if self.lates[self.node].is_empty() {
            return;
        }
        let mut line = std::mem::take(&mut self.late_line);
        line.clear();
        match rec.row() {
            Some(r) => line.extend_from_slice(r),
            None => {
                if let Err(why) = self.recall(rec.ev, &mut line) {
                    // A dead letter saying where the record was, never a broken line.
                    self.failed.push((self.node, why, Vec::new()));
                    self.late_line = line;
                    return;
                }
            }
        }
        self.late_to_side += 1;
        let e = rec.ev;
        let tag = (
            e.seen_max,
            e.flags & FIRED,
            e.pos,
            lineage(e.sub, self.node, u32::MAX),
        );
        line.push(b'\n');
        self.deliver(&line, e.ts, tag, RowKind::Insert, true);
        self.late_line = line;
    }

    fn wants_retractions(&self) -> bool {
        self.outputs[self.node].retractions
    }
}

/// A dead letter as one JSON line.
pub(super) fn dead_letter_line(
    reason: &str,
    source: &str,
    partition: &str,
    offset: u64,
    raw: &[u8],
) -> Vec<u8> {
    let v = serde_json::json!({
        "reason": reason,
        "source": source,
        "partition": partition,
        "offset": offset,
        "raw": String::from_utf8_lossy(raw),
    });
    let mut out = serde_json::to_vec(&v).unwrap_or_default();
    out.push(b'\n');
    out
}
