//! Where a shard's operator output goes: its own buffers for each sink (whole lines, appended to the
//! shared output in large writes), through filters and selects over window results where a sink
//! reads those, late events recalled from their source, and dead letters.

use super::super::setup::Routes;
use crate::event::Event;
use crate::operators::record::Outcome;
use crate::operators::Emitter;
use crate::sinks::{SinkError, SinkWriter};
use crate::sources::generator::raw_record;
use crate::sources::{PartKind, Partition};
use std::fs::File;
use std::sync::Arc;

/// Writes operator output to this shard's sink buffers.
pub(super) struct ShardEmitter {
    pub(super) sinks: Vec<SinkWriter>,
    pub(super) routes: Arc<Routes>,
    pub(super) parts: Arc<Vec<Partition>>,
    pub(super) recall_files: Vec<Option<File>>,
    pub(super) op: usize,
    pub(super) scratch: Vec<u8>,
    pub(super) emitted: u64,
    pub(super) error: Option<SinkError>,
    /// Per operator: chains of filters and selects over its results, and the sinks of each.
    pub(super) chains: super::ResultChains,
    /// Results a chain dropped, and (operator, reason, line) of those it could not evaluate: the
    /// shard writes them to the dead letters.
    pub(super) results_filtered: u64,
    pub(super) late_to_side: u64,
    pub(super) failed: Vec<(usize, String, Vec<u8>)>,
}

impl ShardEmitter {
    /// A result line through each chain over this operator's results (a filter keeps the line as
    /// it is; a select writes a new one).
    #[cold]
    fn through_chains(&mut self, line: &[u8]) {
        let bare = line.strip_suffix(b"\n").unwrap_or(line);
        let mut chains = std::mem::take(&mut self.chains[self.op]);
        for (chain, sinks) in &mut chains {
            match chain.apply(bare) {
                Ok(Outcome::Kept(rec)) => {
                    self.scratch.clear();
                    self.scratch.extend_from_slice(rec);
                    self.scratch.push(b'\n');
                    for &s in sinks.iter() {
                        self.write(s, true, &[]);
                    }
                }
                Ok(Outcome::Dropped) => self.results_filtered += 1,
                Err(why) => self.failed.push((self.op, why, bare.to_vec())),
            }
        }
        self.chains[self.op] = chains;
    }

    fn write(&mut self, sink: usize, line_from_scratch: bool, line: &[u8]) {
        let res = if line_from_scratch {
            self.sinks[sink].line(&self.scratch)
        } else {
            self.sinks[sink].line(line)
        };
        if let Err(e) = res {
            self.error.get_or_insert(e);
        }
    }
}

impl Emitter for ShardEmitter {
    fn result(&mut self, line: &[u8]) {
        self.emitted += 1;
        for i in 0..self.routes.results[self.op].len() {
            let s = self.routes.results[self.op][i];
            self.write(s, false, line);
        }
        if !self.chains[self.op].is_empty() {
            self.through_chains(line);
        }
    }

    fn recall(&mut self, part: u16, pos: u64, len: u32, out: &mut Vec<u8>) {
        match &self.parts[part as usize].kind {
            PartKind::File { path, .. } => {
                let slot = &mut self.recall_files[part as usize];
                if slot.is_none() {
                    *slot = File::open(path).ok();
                }
                let start = out.len();
                if let Some(f) = slot.as_ref() {
                    if crate::sources::file::recall(f, pos, len, out).is_err() {
                        out.truncate(start);
                    }
                }
            }
            PartKind::Generator { model, .. } => {
                raw_record(model, pos, out);
                if out.last() == Some(&b'\n') {
                    out.pop();
                }
            }
            PartKind::Memory { .. } => {}
            // The record stays in Kafka: a reference to it (joins and dedupe, which would need
            // the record itself, refuse Kafka inputs at validation).
            PartKind::Kafka(k) => out.extend_from_slice(
                serde_json::json!({
                    "kafka_topic": k.topic,
                    "kafka_partition": k.partition,
                    "kafka_offset": pos,
                })
                .to_string()
                .as_bytes(),
            ),
        }
    }

    fn late(&mut self, ev: &Event) {
        if self.routes.late[self.op].is_empty() {
            return;
        }
        self.late_to_side += 1;
        let mut line = std::mem::take(&mut self.scratch);
        line.clear();
        if let PartKind::Memory { .. } = &self.parts[ev.part as usize].kind {
            line.extend_from_slice(format!("{{\"ts\":{}}}", ev.ts).as_bytes());
        } else {
            self.recall(ev.part, ev.pos, ev.len, &mut line);
        }
        line.push(b'\n');
        self.scratch = line;
        for i in 0..self.routes.late[self.op].len() {
            let s = self.routes.late[self.op][i];
            self.write(s, true, &[]);
        }
    }
}

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
