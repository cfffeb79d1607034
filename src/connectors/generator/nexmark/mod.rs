//! The `generator` source with `model = "nexmark"`: one of the Nexmark benchmark's tables
//! (persons, auctions or bids) made in-process from [`NexmarkModel`], so the benchmark needs no
//! files.
//!
//! Invariants this module keeps:
//! - The stream covers Nexmark event numbers `0..count` of all three tables; its records are the
//!   events of its table's kind among them, in event-number order, and each record is exactly
//!   the line `sluice loadgen nexmark` writes for that event (without its `'\n'`). So three
//!   sources of one seed, rate, start and count make the three files `loadgen nexmark --events
//!   count` writes, and their records bind through the ordinary JSON path like a file's lines.
//! - A chunk is a range of event numbers, as for the click generator, and event `n`'s record is
//!   a pure function of `(plan, n)`: any shard can make any chunk, and a record's position is its
//!   event number (which is how a late record is made again for a side output).
//!
//! It never does I/O. The model (`model`, its random strings and prices in `strings`, its lines
//! in `json`) is also what `sluice loadgen nexmark` writes its files from, so these records
//! equal those files' lines.

mod json;
pub mod model;
mod strings;

pub use json::write_json;
use model::{EventKind, NexmarkConfig, NexmarkModel};

use super::{NexmarkSourcePlan, NexmarkTable};

/// Bytes of NDJSON one Nexmark event number makes on average over the three tables (the lines
/// `loadgen nexmark` writes average about 190 bytes), for sizing chunks like file chunks: the
/// three tables' chunks of one range together are about `chunk_bytes`.
pub const NEXMARK_EVENT_BYTES: usize = 190;

/// One table of the Nexmark model.
#[derive(Clone)]
pub struct NexmarkSource {
    model: NexmarkModel,
    kind: EventKind,
}

impl std::fmt::Debug for NexmarkSource {
    // The model's tables are megabytes: show what it was built from.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NexmarkSource")
            .field("config", self.model.config())
            .field("kind", &self.kind)
            .finish()
    }
}

impl NexmarkSource {
    /// Builds the model's tables (about 1.6 MB), once per source.
    pub fn new(plan: &NexmarkSourcePlan) -> NexmarkSource {
        NexmarkSource {
            model: NexmarkModel::new(&config(plan)),
            kind: match plan.table {
                NexmarkTable::Person => EventKind::Person,
                NexmarkTable::Auction => EventKind::Auction,
                NexmarkTable::Bid => EventKind::Bid,
            },
        }
    }

    /// Whether event `n` is a record of this table.
    #[inline]
    pub fn has(&self, n: u64) -> bool {
        self.model.kind(n) == self.kind
    }

    /// Appends the record of event `n` (its `loadgen nexmark` line without the `'\n'`) and
    /// returns its event time, `dateTime`; `None`, and nothing appended, when event `n` is of
    /// another table.
    pub fn record(&self, n: u64, out: &mut Vec<u8>) -> Option<i64> {
        if !self.has(n) {
            return None;
        }
        let event = self.model.event(n);
        write_json(&event, out);
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        Some(event.date_time())
    }
}

/// The model config `loadgen nexmark --seed S --rate R --start-ms T` uses, from the plan.
pub fn config(plan: &NexmarkSourcePlan) -> NexmarkConfig {
    NexmarkConfig {
        seed: plan.seed,
        base_time_ms: plan.start_ms,
        first_event_rate: plan.first_event_rate,
        ..NexmarkConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(table: NexmarkTable) -> NexmarkSourcePlan {
        NexmarkSourcePlan {
            table,
            seed: 7,
            first_event_rate: 10_000,
            start_ms: 1_700_000_000_000,
            count: Some(3000),
        }
    }

    /// The plan's field lists (which refuse a field no record has) are the records' keys.
    #[test]
    fn records_have_the_fields_the_plan_lists() {
        for table in [
            NexmarkTable::Person,
            NexmarkTable::Auction,
            NexmarkTable::Bid,
        ] {
            let source = NexmarkSource::new(&plan(table));
            let n = (0..100)
                .find(|&n| source.has(n))
                .expect("a record in 100 events");
            let mut line = Vec::new();
            source.record(n, &mut line);
            let v: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&line).expect("a JSON object");
            let keys: Vec<&str> = v.keys().map(String::as_str).collect();
            let mut want = super::super::nexmark_fields(table).to_vec();
            let mut got = keys.clone();
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want, "{table:?}");
        }
    }
}
