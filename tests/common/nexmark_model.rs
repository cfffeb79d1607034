//! A plain reference model of the Nexmark queries in `benches/nexmark/`: each query's answer
//! computed directly from the three NDJSON files (read with serde_json), written from the queries'
//! Flink semantics and never from sluice's code. Windows are bucketed by hand (TUMBLE and HOP
//! aligned to the epoch, SESSION merging events at most the gap apart, as Flink's
//! `TimeWindow.intersects` does), joins are nested loops over hash maps.
//!
//! The model is a batch computation: it holds because no event of the files is behind its file's
//! watermark (`dateTime - 4 s`), so no engine drops a late row; [`load`] checks that.
//!
//! Rows are compared as canonical strings ([`canonical`] for an engine's JSON line, [`row`] for the
//! model's): the columns sorted by name, strings re-escaped one way, numbers by value (a DECIMAL
//! `908.000` equals `908`), so the comparison is exact and independent of column order.

use rust_decimal::Decimal;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::str::FromStr;

/// The queries' watermark bound: `WATERMARK FOR dt AS dt - INTERVAL '4' SECOND`.
const OUT_OF_ORDERNESS_MS: i64 = 4_000;

pub struct Bid {
    pub auction: i64,
    pub bidder: i64,
    pub price: i64,
    pub channel: String,
    pub url: String,
    pub date_time: i64,
    pub extra: String,
}

pub struct Person {
    pub id: i64,
    pub name: String,
    pub city: String,
    pub state: String,
    pub date_time: i64,
}

pub struct Auction {
    pub id: i64,
    pub item_name: String,
    pub description: String,
    pub initial_bid: i64,
    pub reserve: i64,
    pub expires: i64,
    pub seller: i64,
    pub category: i64,
    pub date_time: i64,
    pub extra: String,
}

pub struct Data {
    pub bids: Vec<Bid>,
    pub persons: Vec<Person>,
    pub auctions: Vec<Auction>,
}

/// One value of an output row.
pub enum Tok {
    Int(i64),
    Str(String),
    /// Epoch milliseconds written as a TIMESTAMP(3).
    Ts(i64),
    Dec(Decimal),
    Null,
}

fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path:?}: {e}"));
    let mut max = i64::MIN;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let t = int(&v, "dateTime");
        assert!(
            t >= max.saturating_sub(OUT_OF_ORDERNESS_MS),
            "{path:?}: {line} is behind the watermark; the batch model assumes no late rows"
        );
        max = max.max(t);
        out.push(v);
    }
    out
}

fn int(v: &Value, f: &str) -> i64 {
    v[f].as_i64()
        .unwrap_or_else(|| panic!("{f} is not an integer in {v}"))
}

fn text(v: &Value, f: &str) -> String {
    v[f].as_str()
        .unwrap_or_else(|| panic!("{f} is not a string in {v}"))
        .to_string()
}

/// The three files `sluice loadgen nexmark` wrote into `dir`.
pub fn load(dir: &Path) -> Data {
    let bids = records(&dir.join("bid.ndjson"))
        .iter()
        .map(|v| Bid {
            auction: int(v, "auction"),
            bidder: int(v, "bidder"),
            price: int(v, "price"),
            channel: text(v, "channel"),
            url: text(v, "url"),
            date_time: int(v, "dateTime"),
            extra: text(v, "extra"),
        })
        .collect();
    let persons = records(&dir.join("person.ndjson"))
        .iter()
        .map(|v| Person {
            id: int(v, "id"),
            name: text(v, "name"),
            city: text(v, "city"),
            state: text(v, "state"),
            date_time: int(v, "dateTime"),
        })
        .collect();
    let auctions = records(&dir.join("auction.ndjson"))
        .iter()
        .map(|v| Auction {
            id: int(v, "id"),
            item_name: text(v, "itemName"),
            description: text(v, "description"),
            initial_bid: int(v, "initialBid"),
            reserve: int(v, "reserve"),
            expires: int(v, "expires"),
            seller: int(v, "seller"),
            category: int(v, "category"),
            date_time: int(v, "dateTime"),
            extra: text(v, "extra"),
        })
        .collect();
    Data {
        bids,
        persons,
        auctions,
    }
}

pub use super::sql::flink_ts;

fn number(t: &str) -> String {
    if t.contains(['.', 'e', 'E']) {
        let d = Decimal::from_str(t)
            .or_else(|_| Decimal::from_scientific(t))
            .unwrap_or_else(|e| panic!("number {t}: {e}"));
        d.normalize().to_string()
    } else {
        t.to_string()
    }
}

fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn join(fields: BTreeMap<String, String>) -> String {
    let parts: Vec<String> = fields
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    parts.join(", ")
}

/// An engine's output line as a canonical row.
pub fn canonical(line: &str) -> String {
    let raw: BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("output line {line}: {e}"));
    let fields = raw
        .into_iter()
        .map(|(k, v)| {
            let t = v.get();
            let value = if t.starts_with('"') {
                let s: String = serde_json::from_str(t).unwrap_or_else(|e| panic!("{t}: {e}"));
                string(&s)
            } else if t == "null" {
                t.to_string()
            } else {
                number(t)
            };
            (k, value)
        })
        .collect();
    join(fields)
}

/// The raw JSON text of `field` in `line` (`908.000`, not the f64 it reads as), if present.
pub fn raw_field(line: &str, field: &str) -> Option<String> {
    let raw: BTreeMap<String, Box<RawValue>> = serde_json::from_str(line).ok()?;
    raw.get(field).map(|v| v.get().to_string())
}

/// A model row as a canonical row.
pub fn row(fields: &[(&str, Tok)]) -> String {
    let fields = fields
        .iter()
        .map(|(k, v)| {
            let value = match v {
                Tok::Int(n) => n.to_string(),
                Tok::Str(s) => string(s),
                Tok::Ts(ms) => string(&flink_ts(*ms)),
                Tok::Dec(d) => d.normalize().to_string(),
                Tok::Null => "null".to_string(),
            };
            (k.to_string(), value)
        })
        .collect();
    join(fields)
}

/// `0.908 * price`: a DECIMAL with 3 digits after the point, exactly.
fn euros(price: i64) -> Decimal {
    Decimal::new(908, 3) * Decimal::from(price)
}

/// q0: every bid.
pub fn q0(d: &Data) -> Vec<String> {
    d.bids
        .iter()
        .map(|b| {
            row(&[
                ("auction", Tok::Int(b.auction)),
                ("bidder", Tok::Int(b.bidder)),
                ("price", Tok::Int(b.price)),
                ("dateTime", Tok::Ts(b.date_time)),
                ("extra", Tok::Str(b.extra.clone())),
            ])
        })
        .collect()
}

/// q1: every bid with its price times 0.908.
pub fn q1(d: &Data) -> Vec<String> {
    d.bids
        .iter()
        .map(|b| {
            row(&[
                ("auction", Tok::Int(b.auction)),
                ("bidder", Tok::Int(b.bidder)),
                ("price", Tok::Dec(euros(b.price))),
                ("dateTime", Tok::Ts(b.date_time)),
                ("extra", Tok::Str(b.extra.clone())),
            ])
        })
        .collect()
}

/// q2: the bids of every 123rd auction.
pub fn q2(d: &Data) -> Vec<String> {
    d.bids
        .iter()
        .filter(|b| b.auction % 123 == 0)
        .map(|b| {
            row(&[
                ("auction", Tok::Int(b.auction)),
                ("price", Tok::Int(b.price)),
            ])
        })
        .collect()
}

/// q5: per 10 s window sliding by 2 s, every auction whose bid count is the window's largest.
pub fn q5(d: &Data) -> Vec<String> {
    const SIZE: i64 = 10_000;
    const SLIDE: i64 = 2_000;
    let mut counts: HashMap<(i64, i64), i64> = HashMap::new();
    for b in &d.bids {
        let last = b.date_time.div_euclid(SLIDE) * SLIDE;
        let mut start = last;
        while start > b.date_time - SIZE {
            *counts.entry((start, b.auction)).or_default() += 1;
            start -= SLIDE;
        }
    }
    let mut max: HashMap<i64, i64> = HashMap::new();
    for (&(start, _), &n) in &counts {
        let m = max.entry(start).or_default();
        *m = (*m).max(n);
    }
    counts
        .iter()
        .filter(|((start, _), n)| **n >= max[start])
        .map(|(&(_, auction), &n)| row(&[("auction", Tok::Int(auction)), ("num", Tok::Int(n))]))
        .collect()
}

/// q7: per 10 s tumbling window, the bids priced at its highest price with a time from the
/// window's start to its end, both included (a bid at the end is also the next window's).
/// The sink's bidder column holds the price and its price column the bidder, as the query says.
pub fn q7(d: &Data) -> Vec<String> {
    const SIZE: i64 = 10_000;
    let mut max: BTreeMap<i64, i64> = BTreeMap::new();
    for b in &d.bids {
        let m = max
            .entry(b.date_time.div_euclid(SIZE) * SIZE)
            .or_insert(i64::MIN);
        *m = (*m).max(b.price);
    }
    let mut by_price: HashMap<i64, Vec<&Bid>> = HashMap::new();
    for b in &d.bids {
        by_price.entry(b.price).or_default().push(b);
    }
    let mut out = Vec::new();
    for (&start, &price) in &max {
        for b in &by_price[&price] {
            if (start..=start + SIZE).contains(&b.date_time) {
                out.push(row(&[
                    ("auction", Tok::Int(b.auction)),
                    ("bidder", Tok::Int(b.price)),
                    ("price", Tok::Int(b.bidder)),
                    ("dateTime", Tok::Ts(b.date_time)),
                    ("extra", Tok::Str(b.extra.clone())),
                ]));
            }
        }
    }
    out
}

/// q8: persons who created an auction in the 10 s tumbling window they entered in.
pub fn q8(d: &Data) -> Vec<String> {
    const SIZE: i64 = 10_000;
    let sellers: HashSet<(i64, i64)> = d
        .auctions
        .iter()
        .map(|a| (a.seller, a.date_time.div_euclid(SIZE) * SIZE))
        .collect();
    let persons: HashSet<(i64, &str, i64)> = d
        .persons
        .iter()
        .map(|p| (p.id, p.name.as_str(), p.date_time.div_euclid(SIZE) * SIZE))
        .collect();
    persons
        .into_iter()
        .filter(|(id, _, start)| sellers.contains(&(*id, *start)))
        .map(|(id, name, start)| {
            row(&[
                ("id", Tok::Int(id)),
                ("name", Tok::Str(name.to_string())),
                ("stime", Tok::Ts(start)),
            ])
        })
        .collect()
}

/// q11: bids per bidder session, a session closed by 10 s without a bid of that bidder.
pub fn q11(d: &Data) -> Vec<String> {
    const GAP: i64 = 10_000;
    let mut times: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for b in &d.bids {
        times.entry(b.bidder).or_default().push(b.date_time);
    }
    let mut out = Vec::new();
    for (bidder, mut ts) in times {
        ts.sort_unstable();
        let emit = |first: i64, last: i64, n: i64| {
            row(&[
                ("bidder", Tok::Int(bidder)),
                ("bid_count", Tok::Int(n)),
                ("starttime", Tok::Ts(first)),
                ("endtime", Tok::Ts(last + GAP)),
            ])
        };
        let (mut first, mut last, mut n) = (ts[0], ts[0], 0);
        for &t in &ts {
            // [last, last + gap) and [t, t + gap) intersect, ends included, when t <= last + gap.
            if t > last + GAP {
                out.push(emit(first, last, n));
                (first, n) = (t, 0);
            }
            last = t;
            n += 1;
        }
        out.push(emit(first, last, n));
    }
    out
}

/// q14: bids priced between 1 000 000 and 50 000 000 euros (exclusive), with the hour's type
/// (UTC) and the number of `c` characters in `extra`.
pub fn q14(d: &Data) -> Vec<String> {
    let (low, high) = (Decimal::from(1_000_000), Decimal::from(50_000_000));
    d.bids
        .iter()
        .filter(|b| euros(b.price) > low && euros(b.price) < high)
        .map(|b| {
            let hour = b.date_time.rem_euclid(86_400_000) / 3_600_000;
            let kind = match hour {
                8..=18 => "dayTime",
                h if h <= 6 || h >= 20 => "nightTime",
                _ => "otherTime",
            };
            row(&[
                ("auction", Tok::Int(b.auction)),
                ("bidder", Tok::Int(b.bidder)),
                ("price", Tok::Dec(euros(b.price))),
                ("bidTimeType", Tok::Str(kind.to_string())),
                ("dateTime", Tok::Ts(b.date_time)),
                ("extra", Tok::Str(b.extra.clone())),
                ("c_counts", Tok::Int(b.extra.matches('c').count() as i64)),
            ])
        })
        .collect()
}

/// q22: each bid with the first three directories of its URL (`SPLIT_INDEX(url, '/', 3..5)`,
/// NULL past the last part).
pub fn q22(d: &Data) -> Vec<String> {
    d.bids
        .iter()
        .map(|b| {
            let parts: Vec<&str> = b.url.split('/').collect();
            let dir = |i: usize| {
                parts
                    .get(i)
                    .map_or(Tok::Null, |s| Tok::Str((*s).to_string()))
            };
            row(&[
                ("auction", Tok::Int(b.auction)),
                ("bidder", Tok::Int(b.bidder)),
                ("price", Tok::Int(b.price)),
                ("channel", Tok::Str(b.channel.clone())),
                ("dir1", dir(3)),
                ("dir2", dir(4)),
                ("dir3", dir(5)),
            ])
        })
        .collect()
}

/// q21: bids of the four named channels (their fixed ids) or whose URL has a `channel_id`
/// parameter (at its start or after a `&`), with that id; the others are dropped.
pub fn q21(d: &Data) -> Vec<String> {
    const KEY: &str = "channel_id=";
    let param = |url: &str| {
        let at = if url.starts_with(KEY) {
            Some(0)
        } else {
            url.find(&format!("&{KEY}")).map(|i| i + 1)
        }?;
        let rest = &url[at + KEY.len()..];
        Some(rest.split('&').next().unwrap_or("").to_string())
    };
    let mut out = Vec::new();
    for b in &d.bids {
        let named = match b.channel.to_lowercase().as_str() {
            "apple" => Some("0"),
            "google" => Some("1"),
            "facebook" => Some("2"),
            "baidu" => Some("3"),
            _ => None,
        };
        let id = match (named, param(&b.url)) {
            (Some(n), _) => n.to_string(),
            (None, Some(p)) => p,
            (None, None) => continue,
        };
        out.push(row(&[
            ("auction", Tok::Int(b.auction)),
            ("bidder", Tok::Int(b.bidder)),
            ("price", Tok::Int(b.price)),
            ("channel", Tok::Str(b.channel.clone())),
            ("channel_id", Tok::Str(id)),
        ]));
    }
    out
}

/// Whether two rows of a regular join meet before the earlier expires: their event times are
/// at most `ttl_ms` apart (sluice's `table.exec.state.ttl`, in event time).
fn within(a: i64, b: i64, ttl_ms: i64) -> bool {
    (a - b).abs() <= ttl_ms
}

/// q3: auctions of category 10 with their seller, when the seller lives in OR, ID or CA; a
/// regular join whose rows expire `ttl_ms` after their time.
pub fn q3(d: &Data, ttl_ms: i64) -> Vec<String> {
    let mut by_id: BTreeMap<i64, Vec<&Person>> = BTreeMap::new();
    for p in d
        .persons
        .iter()
        .filter(|p| ["OR", "ID", "CA"].contains(&p.state.as_str()))
    {
        by_id.entry(p.id).or_default().push(p);
    }
    let mut out = Vec::new();
    for a in d.auctions.iter().filter(|a| a.category == 10) {
        for p in by_id.get(&a.seller).into_iter().flatten() {
            if within(a.date_time, p.date_time, ttl_ms) {
                out.push(row(&[
                    ("name", Tok::Str(p.name.clone())),
                    ("city", Tok::Str(p.city.clone())),
                    ("state", Tok::Str(p.state.clone())),
                    ("id", Tok::Int(a.id)),
                ]));
            }
        }
    }
    out
}

/// q20: each bid of an auction of category 10 with the auction's columns; a regular join whose
/// rows expire `ttl_ms` after their time.
pub fn q20(d: &Data, ttl_ms: i64) -> Vec<String> {
    let mut by_id: BTreeMap<i64, Vec<&Auction>> = BTreeMap::new();
    for a in d.auctions.iter().filter(|a| a.category == 10) {
        by_id.entry(a.id).or_default().push(a);
    }
    let mut out = Vec::new();
    for b in &d.bids {
        for a in by_id.get(&b.auction).into_iter().flatten() {
            if within(b.date_time, a.date_time, ttl_ms) {
                out.push(row(&[
                    ("auction", Tok::Int(b.auction)),
                    ("bidder", Tok::Int(b.bidder)),
                    ("price", Tok::Int(b.price)),
                    ("channel", Tok::Str(b.channel.clone())),
                    ("url", Tok::Str(b.url.clone())),
                    ("bid_dateTime", Tok::Ts(b.date_time)),
                    ("bid_extra", Tok::Str(b.extra.clone())),
                    ("itemName", Tok::Str(a.item_name.clone())),
                    ("description", Tok::Str(a.description.clone())),
                    ("initialBid", Tok::Int(a.initial_bid)),
                    ("reserve", Tok::Int(a.reserve)),
                    ("auction_dateTime", Tok::Ts(a.date_time)),
                    ("expires", Tok::Ts(a.expires)),
                    ("seller", Tok::Int(a.seller)),
                    ("category", Tok::Int(a.category)),
                    ("auction_extra", Tok::Str(a.extra.clone())),
                ]));
            }
        }
    }
    out
}
