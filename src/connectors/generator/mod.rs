//! The `generator` connector: synthetic sources made in-process, so a benchmark or the quickstart
//! needs no files. `model = "clicks"` makes sluice's click model ([`model`], shared with `sluice
//! loadgen`), bound straight into events where it can ([`bind`]); `model = "nexmark"` makes one of
//! the Nexmark benchmark's tables ([`nexmark`], the model `sluice loadgen nexmark` writes its
//! files from). A chunk is a range of event indices and every event is a pure function of its
//! index, so any shard can make any chunk and a late record is made again by its position.

pub mod bind;
pub mod config;
pub mod model;
pub mod nexmark;
mod plan;
mod source;
pub mod sql;

pub use config::{GeneratorModel, GeneratorSourceConfig, NexmarkTable};
pub use source::{ClickSource, NexmarkTableSource};

/// Fields the records of each Nexmark table carry, in the order `sluice loadgen nexmark`
/// writes them ([`nexmark`]'s tests check that they match).
pub fn nexmark_fields(table: NexmarkTable) -> &'static [&'static str] {
    match table {
        NexmarkTable::Person => &[
            "id",
            "name",
            "emailAddress",
            "creditCard",
            "city",
            "state",
            "dateTime",
            "extra",
        ],
        NexmarkTable::Auction => &[
            "id",
            "itemName",
            "description",
            "initialBid",
            "reserve",
            "dateTime",
            "expires",
            "seller",
            "category",
            "extra",
        ],
        NexmarkTable::Bid => &[
            "auction", "bidder", "price", "channel", "url", "dateTime", "extra",
        ],
    }
}

/// The synthetic click model shared by the `generator` source and `sluice loadgen`.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorPlan {
    pub seed: u64,
    /// Distinct `ad_id`s (`ad-0` .. `ad-{keys-1}`), drawn Zipf-distributed.
    pub keys: u64,
    pub zipf_exponent: f64,
    /// Share of events that go to the celebrity key `ad-0` regardless of Zipf (0.0 ..= 1.0).
    pub celebrity_share: f64,
    /// Distinct `user_id`s, drawn uniformly.
    pub users: u64,
    /// Event-time rate: events per second of event time.
    pub events_per_second: u64,
    /// Event time of the first event, epoch ms.
    pub start_ms: i64,
    /// Each event's time is jittered back by up to this much (stays within the watermark bound).
    pub out_of_orderness_ms: i64,
    /// Share of events made late on purpose (0.0 ..= 1.0).
    pub late_fraction: f64,
    /// How far behind its slot a late event's time is.
    pub late_by_ms: i64,
    /// `None`: unbounded.
    pub count: Option<u64>,
}

/// One of Nexmark's tables made in-process: the records of events `0..count` (of all three
/// tables) that are of `table`'s kind, in event order, each the JSON line `sluice loadgen
/// nexmark` writes for it (see [`nexmark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NexmarkSourcePlan {
    pub table: NexmarkTable,
    pub seed: u64,
    /// Events per second of event time over all three tables (Nexmark's `firstEventRate`).
    pub first_event_rate: u64,
    /// `dateTime` of event 0, epoch ms.
    pub start_ms: i64,
    /// Events of all three tables the stream covers; `None`: unbounded.
    pub count: Option<u64>,
}
