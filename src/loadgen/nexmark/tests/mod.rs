//! Tests of `sluice loadgen nexmark`: the event-kind mapping and its 1:3:46 proportions, ids and
//! the id rules of references (Java's hot batches, active people, in-flight auctions and leads),
//! timestamps and the 4 s watermark bound, determinism, the JSON shape of every line, value
//! ranges, and the command end to end on real files.

use super::*;
use crate::connectors::generator::nexmark::model;
use clap::Parser;
use serde_json::Value;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: LoadgenArgs,
}

fn args(out: &Path, extra: &[&str]) -> LoadgenArgs {
    let out = out.to_string_lossy().into_owned();
    let argv = ["loadgen", "nexmark", "--out", out.as_str()];
    Cli::try_parse_from(argv.iter().chain(extra).copied())
        .expect("parses")
        .args
}

fn model() -> NexmarkModel {
    NexmarkModel::new(&NexmarkConfig::default())
}

/// The three files' bytes for events `0..n`, as one sequential pass makes them.
fn files(model: &NexmarkModel, n: u64) -> ChunkBufs {
    let mut bufs = ChunkBufs::default();
    generate_range(model, 0..n, &mut bufs);
    bufs
}

fn lines(buf: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(buf).expect("utf-8");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn kinds_follow_the_java_mapping_in_exact_proportions() {
    let m = model();
    let mut counts = [0u64; 3];
    for n in 0..50 * 40 {
        let kind = m.kind(n);
        let want = match n % 50 {
            0 => EventKind::Person,
            1..=3 => EventKind::Auction,
            _ => EventKind::Bid,
        };
        assert_eq!(kind, want, "event {n}");
        let event_kind = match m.event(n) {
            NexmarkEvent::Person(_) => EventKind::Person,
            NexmarkEvent::Auction(_) => EventKind::Auction,
            NexmarkEvent::Bid(_) => EventKind::Bid,
        };
        assert_eq!(event_kind, kind);
        counts[kind as usize] += 1;
    }
    assert_eq!(counts, [40, 3 * 40, 46 * 40]);
}

#[test]
fn persons_and_auctions_count_up_from_1000_without_gaps() {
    let m = model();
    let bufs = files(&m, 50 * 300);
    let persons = lines(&bufs[0]);
    let auctions = lines(&bufs[1]);
    assert_eq!(persons.len(), 300);
    assert_eq!(auctions.len(), 900);
    for (k, p) in persons.iter().enumerate() {
        assert_eq!(u(p, "id"), FIRST_PERSON_ID + k as u64);
    }
    for (k, a) in auctions.iter().enumerate() {
        assert_eq!(u(a, "id"), FIRST_AUCTION_ID + k as u64);
    }
    // The last ids as Java's lastBase0*Id compute them, at a person, an auction and a bid.
    assert_eq!(m.last_base0_person_id(50 * 7), 7);
    assert_eq!(m.last_base0_person_id(50 * 7 + 30), 7);
    assert_eq!(m.last_base0_auction_id(50 * 7 + 2), 3 * 7 + 1);
    assert_eq!(m.last_base0_auction_id(50 * 7 + 30), 3 * 7 + 2);
    assert_eq!(m.last_base0_auction_id(50 * 7), 3 * 7 - 1);
}

/// Bids and sellers refer to recent ids: never more than the lead ahead of the newest one, never
/// further back than the active people / in-flight auctions (or the hot batch of 100).
#[test]
fn references_follow_the_java_id_rules() {
    let m = model();
    let c = m.config().clone();
    let (mut hot_auction, mut hot_bidder, mut ahead, mut bids) = (0, 0, 0, 0);
    for n in 0..50 * 4000 {
        let (last_p, last_a) = (m.last_base0_person_id(n), m.last_base0_auction_id(n));
        let person_ok = |id: u64| {
            let base0 = id - FIRST_PERSON_ID;
            let oldest = (last_p + 1).saturating_sub(c.num_active_people.max(100));
            (oldest..=last_p + model::PERSON_ID_LEAD).contains(&base0)
        };
        match m.event(n) {
            NexmarkEvent::Auction(a) => assert!(person_ok(a.seller), "seller of {n}: {a:?}"),
            NexmarkEvent::Bid(b) => {
                bids += 1;
                assert!(person_ok(b.bidder), "bidder of {n}: {b:?}");
                let base0 = b.auction - FIRST_AUCTION_ID;
                let oldest = last_a.saturating_sub(c.num_in_flight_auctions.max(99));
                assert!((oldest..=last_a + model::AUCTION_ID_LEAD).contains(&base0));
                hot_auction += u64::from(base0 == last_a / 100 * 100);
                hot_bidder += u64::from(b.bidder - FIRST_PERSON_ID == last_p / 100 * 100 + 1);
                ahead += u64::from(base0 > last_a || b.bidder - FIRST_PERSON_ID > last_p);
            }
            NexmarkEvent::Person(_) => {}
        }
    }
    let share = |k: u64| k as f64 / bids as f64;
    // Hot with probability 1 - 1/ratio (2 and 4), plus the odd cold pick of the same id.
    assert!(
        (0.49..0.53).contains(&share(hot_auction)),
        "{}",
        share(hot_auction)
    );
    assert!(
        (0.74..0.77).contains(&share(hot_bidder)),
        "{}",
        share(hot_bidder)
    );
    // Only cold picks reach into the lead (and hot bidders while a batch has one person).
    assert!(share(ahead) < 0.07, "{}", share(ahead));
}

#[test]
fn timestamps_follow_timestamp_for_event_and_never_decrease() {
    let m = model();
    let base = m.config().base_time_ms;
    assert_eq!(m.timestamp(0), base);
    assert_eq!(m.timestamp(9), base); // 100 µs apart at 10 000 events/s
    assert_eq!(m.timestamp(10), base + 1);
    assert_eq!(m.timestamp(10_000), base + 1000);
    let slow = NexmarkModel::new(&NexmarkConfig {
        first_event_rate: 3,
        ..NexmarkConfig::default()
    });
    assert_eq!(slow.timestamp(1), base + 333);
    assert_eq!(slow.timestamp(3), base + 1000);
    let mut last = i64::MIN;
    for n in 0..20_000 {
        let t = m.event(n).date_time();
        assert_eq!(t, m.timestamp(n));
        assert!(t >= last);
        last = t;
    }
}

/// Lines whose `dateTime` is more than 4 s behind the largest before them in the same file.
fn behind_watermark(lines: &[Value]) -> usize {
    let mut max = i64::MIN;
    let mut behind = 0;
    for v in lines {
        let t = v["dateTime"].as_i64().expect("dateTime");
        behind += usize::from(t < max.saturating_sub(4000));
        max = max.max(t);
    }
    behind
}

#[test]
fn every_file_keeps_the_4s_watermark_bound_and_is_in_order() {
    let bufs = files(&model(), 30_000);
    for buf in &bufs {
        let lines = lines(buf);
        assert_eq!(behind_watermark(&lines), 0);
        let times: Vec<i64> = lines
            .iter()
            .map(|v| v["dateTime"].as_i64().unwrap_or(0))
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let with_seed = |seed| {
        NexmarkModel::new(&NexmarkConfig {
            seed,
            ..NexmarkConfig::default()
        })
    };
    let a = files(&with_seed(7), 5_000);
    assert_eq!(a, files(&with_seed(7), 5_000));
    let b = files(&with_seed(8), 5_000);
    for k in 0..3 {
        assert_ne!(a[k], b[k], "file {k}");
    }
}

/// Each line has exactly these keys, with these JSON types (`u`: unsigned integer, `s`: string).
fn assert_shape(v: &Value, fields: &[(&str, char)]) {
    let obj = v.as_object().expect("an object");
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    let want: Vec<&str> = fields.iter().map(|f| f.0).collect();
    let (mut keys, mut want) = (keys, want);
    keys.sort_unstable();
    want.sort_unstable();
    assert_eq!(keys, want, "{v}");
    for (key, ty) in fields {
        let ok = match ty {
            'u' => obj[*key].is_u64(),
            _ => obj[*key].is_string(),
        };
        assert!(ok, "{key} in {v}");
    }
}

#[test]
fn every_line_has_exactly_the_nexmark_fields() {
    let bufs = files(&model(), 10_000);
    let person = [
        ("id", 'u'),
        ("name", 's'),
        ("emailAddress", 's'),
        ("creditCard", 's'),
        ("city", 's'),
        ("state", 's'),
        ("dateTime", 'u'),
        ("extra", 's'),
    ];
    let auction = [
        ("id", 'u'),
        ("itemName", 's'),
        ("description", 's'),
        ("initialBid", 'u'),
        ("reserve", 'u'),
        ("dateTime", 'u'),
        ("expires", 'u'),
        ("seller", 'u'),
        ("category", 'u'),
        ("extra", 's'),
    ];
    let bid = [
        ("auction", 'u'),
        ("bidder", 'u'),
        ("price", 'u'),
        ("channel", 's'),
        ("url", 's'),
        ("dateTime", 'u'),
        ("extra", 's'),
    ];
    for (buf, fields) in bufs.iter().zip([&person[..], &auction[..], &bid[..]]) {
        let lines = lines(buf);
        assert!(!lines.is_empty());
        lines.iter().for_each(|v| assert_shape(v, fields));
    }
}

mod source;
mod values;
