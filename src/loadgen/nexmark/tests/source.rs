//! The `generator` source's Nexmark tables against `sluice loadgen nexmark`: a table read in
//! place is, record for record, the file the load generator writes for it, so a job gives the
//! same answer on either.

use super::*;
use crate::connectors::generator::nexmark::{config, NexmarkSource};
use crate::connectors::generator::{NexmarkSourcePlan, NexmarkTable};

fn plan(table: NexmarkTable) -> NexmarkSourcePlan {
    NexmarkSourcePlan {
        table,
        seed: 7,
        first_event_rate: 10_000,
        start_ms: 1_700_000_000_000,
        count: Some(3000),
    }
}

/// Each table's records, in event order, are the file `loadgen nexmark` writes for it.
#[test]
fn records_are_the_loadgen_lines_of_their_table() {
    let tables = [
        NexmarkTable::Person,
        NexmarkTable::Auction,
        NexmarkTable::Bid,
    ];
    let mut files = ChunkBufs::default();
    generate_range(
        &NexmarkModel::new(&config(&plan(NexmarkTable::Bid))),
        0..3000,
        &mut files,
    );
    for (table, file) in tables.into_iter().zip(&files) {
        let source = NexmarkSource::new(&plan(table));
        let mut made = Vec::new();
        for n in 0..3000 {
            let before = made.len();
            if let Some(ts) = source.record(n, &mut made) {
                let line: serde_json::Value =
                    serde_json::from_slice(&made[before..]).expect("a JSON record");
                assert_eq!(line["dateTime"].as_i64(), Some(ts), "event {n}");
                made.push(b'\n');
            } else {
                assert_eq!(made.len(), before, "event {n} is not of {table:?}");
            }
        }
        assert!(!made.is_empty());
        assert_eq!(made, *file, "{table:?}");
    }
}
