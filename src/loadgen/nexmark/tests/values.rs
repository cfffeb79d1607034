//! Tests of the values `sluice loadgen nexmark` writes (prices, auction lengths, categories,
//! channels and urls, person strings, `extra` sizes, escaping), its argument checks, and the
//! command end to end on real files.

use super::*;
use std::collections::HashSet;

#[test]
fn prices_are_log_uniform_cents_and_reserves_exceed_initial_bids() {
    let bufs = files(&model(), 50 * 2000);
    let bids = lines(&bufs[2]);
    let range = model::PRICE_MIN..=model::PRICE_MAX;
    let prices: Vec<u64> = bids.iter().map(|b| u(b, "price")).collect();
    assert!(prices.iter().all(|p| range.contains(p)));
    // 10^(6u) * 100: half below 10^3 * 100, a sixth below 10^1 * 100.
    let below = |x: u64| prices.iter().filter(|&&p| p < x).count() as f64 / prices.len() as f64;
    assert!((0.49..0.51).contains(&below(100_000)), "{}", below(100_000));
    assert!((0.16..0.175).contains(&below(1_000)), "{}", below(1_000));
    for a in lines(&bufs[1]) {
        let (initial, reserve) = (u(&a, "initialBid"), u(&a, "reserve"));
        assert!(range.contains(&initial));
        assert!(reserve >= initial + model::PRICE_MIN && reserve <= initial + model::PRICE_MAX);
    }
}

#[test]
fn auctions_expire_after_they_start_within_twice_the_in_flight_horizon() {
    let m = model();
    let bufs = files(&m, 50 * 1000);
    // 100 auctions ahead are 1666 events, 166.6 ms at 10 000 events/s.
    let mut lengths = Vec::new();
    for a in lines(&bufs[1]) {
        let (start, expires) = (u(&a, "dateTime"), u(&a, "expires"));
        assert!(expires > start, "{a}");
        assert!(expires - start <= 2 * 167, "{a}");
        lengths.push(expires - start);
        assert!((10..15).contains(&u(&a, "category")));
    }
    let mean = lengths.iter().sum::<u64>() as f64 / lengths.len() as f64;
    assert!((160.0..173.0).contains(&mean), "{mean}");
}

#[test]
fn channels_and_urls_come_from_the_hot_list_or_the_channel_cache() {
    let bufs = files(&model(), 50 * 1000);
    let (mut hot, mut with_id, mut cold) = (0, 0, 0);
    let mut hot_urls = HashSet::new();
    for b in lines(&bufs[2]) {
        let (channel, url) = (b["channel"].as_str(), b["url"].as_str());
        let (channel, url) = (channel.unwrap_or(""), url.unwrap_or(""));
        let path = url
            .strip_prefix("https://www.nexmark.com/")
            .unwrap_or_else(|| panic!("{url}"));
        let (segments, query) = path.split_once("/item.htm?query=1").expect("item.htm");
        assert_eq!(segments.split('/').count(), 3, "{url}");
        if model::HOT_CHANNELS.contains(&channel) {
            hot += 1;
            assert_eq!(query, "");
            hot_urls.insert((channel.to_string(), url.to_string()));
            continue;
        }
        cold += 1;
        let i: i32 = channel
            .strip_prefix("channel-")
            .and_then(|i| i.parse().ok())
            .unwrap_or_else(|| panic!("{channel}"));
        assert!((0..model::CHANNELS as i32).contains(&i));
        if let Some(id) = query.strip_prefix("&channel_id=") {
            with_id += 1;
            assert_eq!(id, i.reverse_bits().wrapping_abs().to_string());
        } else {
            assert_eq!(query, "");
        }
    }
    // One fixed url per hot channel; half the bids hot; 9 in 10 cached urls have an id.
    assert_eq!(hot_urls.len(), model::HOT_CHANNELS.len());
    let share = hot as f64 / (hot + cold) as f64;
    assert!((0.49..0.51).contains(&share), "{share}");
    let share = with_id as f64 / cold as f64;
    assert!((0.88..0.92).contains(&share), "{share}");
}

#[test]
fn person_strings_have_the_java_shapes() {
    let bufs = files(&model(), 50 * 500);
    for p in lines(&bufs[0]) {
        let s = |k: &str| p[k].as_str().unwrap_or_default().to_string();
        assert_eq!(s("name").split(' ').count(), 2, "{p}");
        let email = s("emailAddress");
        let (user, host) = email.split_once('@').expect("an @");
        assert!(host.ends_with(".com") && !user.is_empty(), "{email}");
        let groups: Vec<String> = s("creditCard").split(' ').map(str::to_string).collect();
        assert_eq!(groups.len(), 4);
        assert!(groups
            .iter()
            .all(|g| g.len() == 4 && g.bytes().all(|c| c.is_ascii_digit())));
        assert!(["AZ", "CA", "ID", "OR", "WA", "WY"].contains(&s("state").as_str()));
        assert!(!s("city").is_empty());
    }
}

#[test]
fn extra_pads_to_the_average_sizes_of_nexmark_config() {
    let m = model();
    let (mut bid_extra, mut bids, mut auction_sizes, mut person_sizes) = (0, 0, Vec::new(), vec![]);
    for n in 0..50 * 1000 {
        match m.event(n) {
            // Java counts 8 bytes per number and the length of each string.
            NexmarkEvent::Bid(b) => {
                assert!((54..=81).contains(&b.extra.len()), "{}", b.extra.len());
                bid_extra += b.extra.len();
                bids += 1;
            }
            NexmarkEvent::Auction(a) => {
                auction_sizes.push(48 + a.item_name.len() + a.description.len() + a.extra.len())
            }
            NexmarkEvent::Person(p) => person_sizes.push(
                8 + p.name.len()
                    + p.email_address.len()
                    + p.credit_card.len()
                    + p.city.len()
                    + p.state.len()
                    + p.extra.len(),
            ),
        }
    }
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
    assert!((66.0..69.0).contains(&(bid_extra as f64 / bids as f64)));
    assert!((495.0..505.0).contains(&mean(&auction_sizes)));
    assert!((195.0..205.0).contains(&mean(&person_sizes)));
}

#[test]
fn hand_built_strings_are_escaped() {
    let bid = NexmarkEvent::Bid(Bid {
        auction: 1,
        bidder: 2,
        price: 3,
        channel: "a\"b\\c",
        url: "line\nbreak\u{1}",
        date_time: -5,
        extra: "é",
    });
    let mut out = Vec::new();
    write_json(&bid, &mut out);
    let v = &lines(&out)[0];
    assert_eq!(v["channel"], "a\"b\\c");
    assert_eq!(v["url"], "line\nbreak\u{1}");
    assert_eq!(v["extra"], "é");
    assert_eq!(v["dateTime"], -5);
}

#[test]
fn click_model_flags_are_refused_and_rate_seed_start_apply() {
    let out = Path::new("unused");
    let cfg = config_from_args(&args(out, &["--events", "1"])).expect("valid");
    assert_eq!(cfg, NexmarkConfig::default());
    let extra = [
        "--seed",
        "9",
        "--rate",
        "500",
        "--start-ms",
        "-3",
        "--events",
        "1",
    ];
    let cfg = config_from_args(&args(out, &extra)).expect("valid");
    assert_eq!(
        (cfg.seed, cfg.first_event_rate, cfg.base_time_ms),
        (9, 500, -3)
    );
    for (flag, value) in [
        ("--keys", "5"),
        ("--zipf", "0.5"),
        ("--celebrity-share", "0.1"),
        ("--users", "7"),
        ("--out-of-orderness-ms", "0"),
        ("--late-fraction", "0.1"),
        ("--late-by-ms", "1"),
        ("--files", "2"),
        ("--rate", "0"),
    ] {
        let err = config_from_args(&args(out, &["--events", "1", flag, value]));
        let err = err.expect_err(flag).to_string();
        assert!(err.contains(&flag[2..]), "{flag}: {err}");
    }
}

#[test]
fn an_out_that_is_a_file_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("taken");
    std::fs::write(&file, b"x").expect("write");
    let err = run(&args(&file, &["--events", "10"])).expect_err("not a directory");
    assert!(matches!(err, LoadgenError::CreateDir { .. }), "{err}");
    assert!(err.to_string().contains("taken"), "{err}");
}

/// The command on real files: three chunks' worth, made by both threads, equal to one
/// sequential pass, with the 1:3:46 line counts.
#[test]
fn run_writes_the_three_files_in_event_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("nx");
    let events = 2 * CHUNK_EVENTS + 1000;
    let report = run(&args(&out, &["--events", &events.to_string()])).expect("runs");
    let want = files(&model(), events);
    let names = [PERSON_FILE, AUCTION_FILE, BID_FILE];
    assert_eq!(report.files, names.map(|f| out.join(f)).to_vec());
    let mut bytes = 0;
    for (name, want) in names.iter().zip(&want) {
        let got = std::fs::read(out.join(name)).expect("written");
        assert!(got == *want, "{name} differs from a sequential pass");
        bytes += got.len() as u64;
        assert_eq!(behind_watermark(&lines(&got)), 0);
    }
    assert_eq!((report.events, report.bytes), (events, bytes));
    let count = |buf: &[u8]| buf.iter().filter(|&&c| c == b'\n').count() as u64;
    let epochs = events / 50; // events is 50 * 675 + 18: one person and 3 auctions in the tail
    assert_eq!(count(&want[0]), epochs + 1);
    assert_eq!(count(&want[1]), 3 * epochs + 3);
    assert_eq!(count(&want[2]), events - 4 * epochs - 4);
}
