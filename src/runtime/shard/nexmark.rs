//! Producing a Nexmark generator chunk: its range of event numbers, of which only the table's
//! own become records. Each record is its `loadgen nexmark` line, parsed, stepped and routed as
//! a file's line is (the source's event time is a field of it), with its event number as its
//! position.

use super::produce::DeadAt;
use super::{steps, Shard, SourceParser};
use crate::sources::generator::nexmark::NexmarkSource;

/// The wall clock in epoch ms, for the clock-skew guard (`i64::MAX` if the clock is before 1970,
/// which turns the guard off rather than refusing everything).
pub(super) fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(i64::MAX, |d| d.as_millis() as i64)
}

impl Shard {
    /// Makes the next record of the current chunk, skipping the events of other tables; false
    /// at the end of the chunk.
    pub(super) fn next_nexmark(&mut self, source: &NexmarkSource) -> bool {
        let Some(cur) = self.cur.as_mut() else {
            return false;
        };
        let mut line = std::mem::take(&mut self.line);
        let n = loop {
            if cur.next >= cur.end {
                self.line = line;
                return false;
            }
            let n = cur.next;
            cur.next += 1;
            line.clear();
            if source.record(n, &mut line).is_some() {
                break n;
            }
        };
        let (part, seq) = (cur.part, cur.seq);
        let setup = self.setup.clone();
        let src = setup.parts[part as usize].source;
        self.rate_read[src] += 1;
        let res = match &mut self.parsers[src] {
            SourceParser::Json(p) => p.parse(&line).map_err(|m| m.0),
            _ => Err("not a Nexmark source's parser".to_string()),
        };
        let at = DeadAt {
            source: &setup.sources[src],
            partition: &setup.parts[part as usize].name,
            offset: n,
            line: &line,
        };
        match res {
            Ok(ts) => {
                let seen = cur.seen_max;
                cur.seen_max = seen.max(ts);
                cur.last_seen = seen;
                self.stats.events_in += 1;
                if !self.routes[src].is_empty() {
                    let kept = self.parsers[src].kept();
                    let a = steps::apply(
                        &mut self.routes[src],
                        &line,
                        kept,
                        ts,
                        seq,
                        &mut self.record_out,
                    );
                    at.account(&a, &mut self.dead, &mut self.emitter, &mut self.stats);
                }
                self.line = line;
                self.route_parsed(src, seen, part, n, 0);
            }
            Err(reason) => {
                at.write(&reason, &mut self.dead, &mut self.emitter, &mut self.stats);
                self.line = line;
            }
        }
        true
    }
}
