//! The Nexmark event model of the generator source and `sluice loadgen nexmark`: event number `n` -> one person, auction
//! or bid, following the generator of Apache Beam and nexmark-flink (`GeneratorConfig`,
//! `PersonGenerator`, `AuctionGenerator`, `BidGenerator`, `PriceGenerator`, `StringsGenerator`).
//!
//! Invariants this module keeps:
//! - [`NexmarkModel::event`] is a pure function of `(config, n)`: each event draws from its own
//!   PRNG stream seeded from `(seed, n)` (Beam's `new Random(eventId)` idea), so any thread can make
//!   any range of events in any order and get the same ones.
//! - Kinds: of every 50 consecutive event numbers the first is a person, the next 3 auctions and
//!   the last 46 bids (`n % 50`); ids count up per kind from 1000, so person `k` (base 0) is event
//!   `50 k` and auction `k` is event `50 (k / 3) + 1 + k % 3`.
//! - `dateTime` is `base_time_ms + (n * 10^6 / rate µs) / 1000`, never decreasing in `n`.
//! - A seller or bidder is a recent person, an auction's bid a recent auction, as Java chooses
//!   them: mostly a "hot" one (the first or second of the current batch of 100 ids), otherwise one
//!   of the last `num_active_people` people or `num_in_flight_auctions` auctions, plus up to 10
//!   ids not yet generated (Java's `PERSON_ID_LEAD`/`AUCTION_ID_LEAD`, on purpose).
//!
//! It never does I/O and allocates per event only for persons' and auctions' random strings;
//! `extra`, `channel` and `url` borrow from tables the model builds once.

use super::strings::{base_url, channel, credit_card, exact_string, next_price, next_string, Rng};
use crate::connectors::generator::model::{mix64, IndexRng};

/// Ids start here so that queries find matches even on small data sets (as in Java).
pub const FIRST_PERSON_ID: u64 = 1000;
pub const FIRST_AUCTION_ID: u64 = 1000;
pub const FIRST_CATEGORY_ID: u64 = 10;
/// Categories are `FIRST_CATEGORY_ID .. FIRST_CATEGORY_ID + NUM_CATEGORIES`.
pub const NUM_CATEGORIES: u64 = 5;
/// Ids not yet generated that a random choice may still pick (Java's `*_ID_LEAD`).
pub const PERSON_ID_LEAD: u64 = 10;
pub const AUCTION_ID_LEAD: u64 = 10;
/// Hot sellers, bidders and auctions are the first (bidders: second) id of a batch of this many.
const HOT_BATCH: u64 = 100;
/// `channel-0 .. channel-9999`, each with a fixed url.
pub const CHANNELS: usize = 10_000;
pub const HOT_CHANNELS: [&str; 4] = ["Google", "Facebook", "Baidu", "Apple"];
/// `extra` strings are slices of one random a-z string of this length (Java's
/// `REUSABLE_EXTRA_STRING`), so padding costs no allocation.
const EXTRA_POOL_BYTES: usize = 1 << 20;
/// Tell the per-event streams and the tables' stream apart (and from the click model's).
const EVENTS_SALT: u64 = 0x4E58_4D52_4B00_0001;
const TABLES_SALT: u64 = 0x4E58_4D52_4B00_0002;
/// Prices are in cents: `round(10^(6 u) * 100)`, u uniform in [0, 1).
pub const PRICE_MIN: u64 = 100;
pub const PRICE_MAX: u64 = 100_000_000;

const US_STATES: [&str; 6] = ["AZ", "CA", "ID", "OR", "WA", "WY"];
const US_CITIES: [&str; 10] = [
    "Phoenix",
    "Los Angeles",
    "San Francisco",
    "Boise",
    "Portland",
    "Bend",
    "Redmond",
    "Seattle",
    "Kent",
    "Cheyenne",
];
const FIRST_NAMES: [&str; 11] = [
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter",
];
const LAST_NAMES: [&str; 9] = [
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris",
];

/// The knobs of Nexmark's `NexmarkConfiguration` that shape the data; defaults are Java's.
#[derive(Debug, Clone, PartialEq)]
pub struct NexmarkConfig {
    pub seed: u64,
    /// `dateTime` of event 0, epoch ms (Java: the wall clock at start; fixed here so files are
    /// reproducible).
    pub base_time_ms: i64,
    /// Events per second of event time (`firstEventRate`); at least 1.
    pub first_event_rate: u64,
    pub person_proportion: u64,
    pub auction_proportion: u64,
    pub bid_proportion: u64,
    /// A choice is hot with probability `1 - 1/ratio` (Java's `hot*Ratio`); at least 1.
    pub hot_auction_ratio: u32,
    pub hot_sellers_ratio: u32,
    pub hot_bidders_ratio: u32,
    pub num_in_flight_auctions: u64,
    pub num_active_people: u64,
    /// Average serialised size Java pads each kind to with `extra` (its own size estimate).
    pub avg_person_byte_size: u32,
    pub avg_auction_byte_size: u32,
    pub avg_bid_byte_size: u32,
}

impl Default for NexmarkConfig {
    fn default() -> Self {
        NexmarkConfig {
            seed: crate::connectors::generator::model::defaults::SEED,
            base_time_ms: crate::connectors::generator::model::defaults::START_MS,
            first_event_rate: 10_000,
            person_proportion: 1,
            auction_proportion: 3,
            bid_proportion: 46,
            hot_auction_ratio: 2,
            hot_sellers_ratio: 4,
            hot_bidders_ratio: 4,
            num_in_flight_auctions: 100,
            num_active_people: 1000,
            avg_person_byte_size: 200,
            avg_auction_byte_size: 500,
            avg_bid_byte_size: 100,
        }
    }
}

impl NexmarkConfig {
    pub fn total_proportion(&self) -> u64 {
        self.person_proportion + self.auction_proportion + self.bid_proportion
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person<'m> {
    pub id: u64,
    pub name: String,
    pub email_address: String,
    pub credit_card: String,
    pub city: &'static str,
    pub state: &'static str,
    pub date_time: i64,
    pub extra: &'m str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auction<'m> {
    pub id: u64,
    pub item_name: String,
    pub description: String,
    pub initial_bid: u64,
    pub reserve: u64,
    pub date_time: i64,
    pub expires: i64,
    pub seller: u64,
    pub category: u64,
    pub extra: &'m str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bid<'m> {
    pub auction: u64,
    pub bidder: u64,
    pub price: u64,
    pub channel: &'m str,
    pub url: &'m str,
    pub date_time: i64,
    pub extra: &'m str,
}

/// One Nexmark event; strings borrow from the [`NexmarkModel`] that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NexmarkEvent<'m> {
    Person(Person<'m>),
    Auction(Auction<'m>),
    Bid(Bid<'m>),
}

impl NexmarkEvent<'_> {
    pub fn date_time(&self) -> i64 {
        match self {
            NexmarkEvent::Person(p) => p.date_time,
            NexmarkEvent::Auction(a) => a.date_time,
            NexmarkEvent::Bid(b) => b.date_time,
        }
    }
}

/// Which kind event `n` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Person,
    Auction,
    Bid,
}

/// The model: its config and the tables built once from the seed. (No `Debug`: the tables are
/// megabytes; print [`NexmarkModel::config`] instead.)
#[derive(Clone)]
pub struct NexmarkModel {
    config: NexmarkConfig,
    /// Seeds the per-event streams (the seed hashed, so `seed` and `seed + 1` share nothing).
    seed_key: u64,
    /// Java's `interEventDelayUs`: microseconds between consecutive events.
    inter_event_delay_us: f64,
    /// Random a-z bytes; `extra` strings are slices of it.
    extra_pool: String,
    /// `(channel, url)` of the hot channels, then of `channel-0 ..`.
    hot_channels: Vec<(&'static str, String)>,
    channels: Vec<(String, String)>,
}

impl NexmarkModel {
    /// Builds the tables (about 1.6 MB); a zero rate, ratio or proportion is taken as 1 so no
    /// value can make [`NexmarkModel::event`] divide by zero.
    pub fn new(config: &NexmarkConfig) -> NexmarkModel {
        let mut config = config.clone();
        config.first_event_rate = config.first_event_rate.max(1);
        for r in [
            &mut config.hot_auction_ratio,
            &mut config.hot_sellers_ratio,
            &mut config.hot_bidders_ratio,
        ] {
            *r = (*r).max(1);
        }
        config.person_proportion = config.person_proportion.max(1);
        config.auction_proportion = config.auction_proportion.max(1);
        let seed_key = mix64(config.seed ^ EVENTS_SALT);
        // One stream for the tables, drawn in Java's order: hot urls, then the channel cache.
        let mut rng = Rng(IndexRng::new(mix64(seed_key ^ TABLES_SALT), 0));
        let hot_channels = HOT_CHANNELS
            .iter()
            .map(|&c| (c, base_url(&mut rng)))
            .collect();
        let channels = (0..CHANNELS).map(|i| channel(i, &mut rng)).collect();
        NexmarkModel {
            inter_event_delay_us: 1_000_000.0 / config.first_event_rate as f64,
            extra_pool: exact_string(&mut rng, EXTRA_POOL_BYTES),
            hot_channels,
            channels,
            seed_key,
            config,
        }
    }

    pub fn config(&self) -> &NexmarkConfig {
        &self.config
    }

    pub fn kind(&self, n: u64) -> EventKind {
        let c = &self.config;
        let rem = n % c.total_proportion();
        if rem < c.person_proportion {
            EventKind::Person
        } else if rem < c.person_proportion + c.auction_proportion {
            EventKind::Auction
        } else {
            EventKind::Bid
        }
    }

    /// Java's `timestampForEvent`: `baseTime + (long)(n * interEventDelayUs) / 1000`.
    pub fn timestamp(&self, n: u64) -> i64 {
        let us = (n as f64 * self.inter_event_delay_us) as i64; // `as` saturates
        self.config.base_time_ms.saturating_add(us / 1000)
    }

    /// Event number `n` (Java's event id, with `firstEventId = 0`).
    pub fn event(&self, n: u64) -> NexmarkEvent<'_> {
        let mut rng = Rng(IndexRng::new(self.seed_key, n));
        let ts = self.timestamp(n);
        match self.kind(n) {
            EventKind::Person => NexmarkEvent::Person(self.person(n, ts, &mut rng)),
            EventKind::Auction => NexmarkEvent::Auction(self.auction(n, ts, &mut rng)),
            EventKind::Bid => NexmarkEvent::Bid(self.bid(n, ts, &mut rng)),
        }
    }

    /// `PersonGenerator.lastBase0PersonId`: the newest person at event `n` (itself, for a person).
    pub fn last_base0_person_id(&self, n: u64) -> u64 {
        let c = &self.config;
        let (epoch, offset) = (n / c.total_proportion(), n % c.total_proportion());
        epoch * c.person_proportion + offset.min(c.person_proportion - 1)
    }

    /// `AuctionGenerator.lastBase0AuctionId`: the newest auction at event `n` (itself, for an
    /// auction). Before the first auction Java gives -1; this gives 0 (only persons ask there, and
    /// persons never use it).
    pub fn last_base0_auction_id(&self, n: u64) -> u64 {
        let c = &self.config;
        let (epoch, offset) = (n / c.total_proportion(), n % c.total_proportion());
        if offset < c.person_proportion {
            // The last auction of the previous epoch.
            (epoch * c.auction_proportion).saturating_sub(1)
        } else if offset >= c.person_proportion + c.auction_proportion {
            epoch * c.auction_proportion + c.auction_proportion - 1
        } else {
            epoch * c.auction_proportion + offset - c.person_proportion
        }
    }

    /// `PersonGenerator.nextBase0PersonId`: one of the last `num_active_people` people, or one of
    /// the next `PERSON_ID_LEAD` (which makes some person and auction/bid events look swapped).
    fn next_base0_person_id(&self, n: u64, rng: &mut Rng) -> u64 {
        let num_people = self.last_base0_person_id(n) + 1;
        let active = num_people.min(self.config.num_active_people);
        num_people - active + rng.below(active + PERSON_ID_LEAD)
    }

    /// `AuctionGenerator.nextBase0AuctionId`: one of the auctions likely still in flight, or one
    /// of the next `AUCTION_ID_LEAD`.
    fn next_base0_auction_id(&self, n: u64, rng: &mut Rng) -> u64 {
        let max = self.last_base0_auction_id(n);
        let min = max.saturating_sub(self.config.num_in_flight_auctions);
        min + rng.below(max - min + 1 + AUCTION_ID_LEAD)
    }

    fn person(&self, n: u64, ts: i64, rng: &mut Rng) -> Person<'_> {
        let first = FIRST_NAMES[rng.below_usize(FIRST_NAMES.len())];
        let last = LAST_NAMES[rng.below_usize(LAST_NAMES.len())];
        let name = format!("{first} {last}");
        let email_address = format!(
            "{}@{}.com",
            next_string(rng, 7, ' '),
            next_string(rng, 5, ' ')
        );
        let credit_card = credit_card(rng);
        let city = US_CITIES[rng.below_usize(US_CITIES.len())];
        let state = US_STATES[rng.below_usize(US_STATES.len())];
        let size =
            8 + name.len() + email_address.len() + credit_card.len() + city.len() + state.len();
        let extra = self.extra(rng, size, self.config.avg_person_byte_size);
        Person {
            id: self.last_base0_person_id(n) + FIRST_PERSON_ID,
            name,
            email_address,
            credit_card,
            city,
            state,
            date_time: ts,
            extra,
        }
    }

    fn auction(&self, n: u64, ts: i64, rng: &mut Rng) -> Auction<'_> {
        let seller = if rng.below(self.config.hot_sellers_ratio.into()) > 0 {
            (self.last_base0_person_id(n) / HOT_BATCH) * HOT_BATCH
        } else {
            self.next_base0_person_id(n, rng)
        };
        let category = FIRST_CATEGORY_ID + rng.below(NUM_CATEGORIES);
        let initial_bid = next_price(rng);
        let expires = ts.saturating_add(self.auction_length_ms(n, ts, rng));
        let item_name = next_string(rng, 20, ' ');
        let description = next_string(rng, 100, ' ');
        let reserve = initial_bid + next_price(rng);
        let size = 8 + item_name.len() + description.len() + 5 * 8;
        Auction {
            id: self.last_base0_auction_id(n) + FIRST_AUCTION_ID,
            item_name,
            description,
            initial_bid,
            reserve,
            date_time: ts,
            expires,
            seller: seller + FIRST_PERSON_ID,
            category,
            extra: self.extra(rng, size, self.config.avg_auction_byte_size),
        }
    }

    /// `nextAuctionLengthMs`: uniform in `1 ..= 2 h`, where `h` is how much later the auction
    /// `num_in_flight_auctions` ahead will be made; so about that many auctions are open at once.
    fn auction_length_ms(&self, n: u64, ts: i64, rng: &mut Rng) -> i64 {
        let c = &self.config;
        let ahead = c.num_in_flight_auctions * c.total_proportion() / c.auction_proportion;
        let horizon = self.timestamp(n.saturating_add(ahead)) - ts;
        1 + rng.below(horizon.saturating_mul(2).max(1) as u64) as i64
    }

    fn bid(&self, n: u64, ts: i64, rng: &mut Rng) -> Bid<'_> {
        let auction = if rng.below(self.config.hot_auction_ratio.into()) > 0 {
            (self.last_base0_auction_id(n) / HOT_BATCH) * HOT_BATCH
        } else {
            self.next_base0_auction_id(n, rng)
        };
        // The second person of the batch, so hot bidders and hot sellers differ.
        let bidder = if rng.below(self.config.hot_bidders_ratio.into()) > 0 {
            (self.last_base0_person_id(n) / HOT_BATCH) * HOT_BATCH + 1
        } else {
            self.next_base0_person_id(n, rng)
        };
        let price = next_price(rng);
        let (channel, url) = if rng.below(2) > 0 {
            let (c, u) = &self.hot_channels[rng.below_usize(HOT_CHANNELS.len())];
            (*c, u.as_str())
        } else {
            let (c, u) = &self.channels[rng.below_usize(CHANNELS)];
            (c.as_str(), u.as_str())
        };
        Bid {
            auction: auction + FIRST_AUCTION_ID,
            // Once, as Beam does: nexmark-flink adds it a second time (a slip that makes most
            // bidders people that do not exist yet).
            bidder: bidder + FIRST_PERSON_ID,
            price,
            channel,
            url,
            date_time: ts,
            extra: self.extra(rng, 4 * 8, self.config.avg_bid_byte_size),
        }
    }

    /// `StringsGenerator.nextExtra`: padding so that `size` plus its length averages `average`
    /// (uniform within ±20% of the gap), a slice of the pool.
    fn extra(&self, rng: &mut Rng, size: usize, average: u32) -> &str {
        let average = average as usize;
        if size > average {
            return "";
        }
        let gap = average - size;
        let delta = (gap as f64 * 0.2).round() as usize;
        let len = gap - delta
            + if delta == 0 {
                0
            } else {
                rng.below_usize(2 * delta)
            };
        let len = len.min(self.extra_pool.len() / 2);
        let start = rng.below_usize(self.extra_pool.len() - len);
        // The pool is ASCII, so every index is a char boundary.
        &self.extra_pool[start..start + len]
    }
}
