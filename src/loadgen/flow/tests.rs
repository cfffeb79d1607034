//! Tests of `sluice loadgen flow`: determinism, the out-of-orderness bound of every file,
//! duplicates and retries, prices before impressions, late clicks only when asked for, and the
//! argument checks.

use super::*;
use clap::Parser;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: LoadgenArgs,
}

fn args(extra: &[&str]) -> LoadgenArgs {
    let argv = ["loadgen", "flow", "--out", "unused"];
    Cli::try_parse_from(argv.iter().chain(extra).copied())
        .expect("parses")
        .args
}

/// The three files as text, and the counts.
struct Files {
    impressions: String,
    clicks: String,
    prices: String,
    counts: FlowCounts,
}

fn generate_text(extra: &[&str]) -> Files {
    let plan = FlowPlan::from_args(&args(extra)).expect("valid");
    let (mut imp, mut clk, mut pri) = (Vec::new(), Vec::new(), Vec::new());
    let counts = generate(&plan, &mut imp, &mut clk, &mut pri).expect("in-memory writes");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("utf-8");
    Files {
        impressions: text(imp),
        clicks: text(clk),
        prices: text(pri),
        counts,
    }
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn ts(v: &Value) -> i64 {
    v["ts"].as_i64().expect("integer ts")
}

/// Lines whose ts is more than `bound` behind the largest ts before them.
fn late_lines(text: &str, bound: i64) -> usize {
    let mut max = i64::MIN;
    let mut late = 0;
    for line in text.lines() {
        let t = ts(&parse(line));
        if max != i64::MIN && t < max - bound {
            late += 1;
        }
        max = max.max(t);
    }
    late
}

const SMALL: &[&str] = &["--events", "20000", "--rate", "1000"];

#[test]
fn defaults_are_the_flow_ones() {
    let plan = FlowPlan::from_args(&args(&["--events", "3"])).expect("valid");
    assert_eq!(plan.keys, defaults::KEYS);
    assert_eq!(plan.out_of_orderness_ms, defaults::OUT_OF_ORDERNESS_MS);
    assert_eq!(plan.late_fraction, 0.0);
    assert_eq!(
        plan.ads.slot_ms(defaults::EVENTS_PER_SECOND),
        plan.start_ms + 1000
    );
    // Given flags win over the flow defaults.
    let plan = FlowPlan::from_args(&args(&["--events", "3", "--keys", "7"])).expect("valid");
    assert_eq!(plan.keys, 7);
}

#[test]
fn same_arguments_give_identical_files() {
    let a = generate_text(SMALL);
    let b = generate_text(SMALL);
    assert!(a.impressions == b.impressions && a.clicks == b.clicks && a.prices == b.prices);
    assert_eq!(a.counts, b.counts);
    let c = generate_text(&["--events", "20000", "--rate", "1000", "--seed", "7"]);
    assert!(a.clicks != c.clicks && a.impressions != c.impressions && a.prices != c.prices);
}

#[test]
fn every_file_keeps_the_out_of_orderness_bound() {
    for (extra, bound) in [(SMALL.to_vec(), 4_000), (vec!["--events", "30000"], 4_000)] {
        let f = generate_text(&extra);
        for (name, text) in [
            ("impressions", &f.impressions),
            ("clicks", &f.clicks),
            ("prices", &f.prices),
        ] {
            assert_eq!(late_lines(text, bound), 0, "{name} {extra:?}");
            // And the files really are out of order, up to the bound.
            let ordered = late_lines(text, 0) == 0;
            assert!(!ordered, "{name} is in order");
        }
    }
    let f = generate_text(&["--events", "20000", "--out-of-orderness-ms", "1000"]);
    assert_eq!(late_lines(&f.clicks, 1000), 0);
    assert_eq!(late_lines(&f.prices, 1000), 0);
    assert_eq!(late_lines(&f.impressions, 1000), 0);
}

#[test]
fn impressions_and_clicks_follow_the_model() {
    let f = generate_text(SMALL);
    let mut imps: HashMap<u64, (String, i64)> = HashMap::new();
    for line in f.impressions.lines() {
        let v = parse(line);
        let id = v["imp_id"].as_u64().expect("imp_id");
        let ad = v["ad_id"].as_str().expect("ad_id").to_string();
        assert!(imps.insert(id, (ad, ts(&v))).is_none(), "imp_id {id} twice");
    }
    assert_eq!(imps.len(), 20_000);
    // First copy of each click, by click_id; then the second copies.
    let mut first: HashMap<u64, (String, i64)> = HashMap::new();
    let (mut exact, mut retries, mut outside_join) = (0, 0, 0);
    let mut seen_lines = HashSet::new();
    for line in f.clicks.lines() {
        let v = parse(line);
        let id = v["click_id"].as_u64().expect("click_id");
        let (ad, imp_ts) = &imps[&v["imp_id"].as_u64().expect("imp_id")];
        assert_eq!(v["ad_id"].as_str(), Some(ad.as_str()));
        let t = ts(&v);
        let again = !seen_lines.insert(line.to_string());
        match first.get(&id) {
            None => {
                let delay = t - imp_ts;
                assert!((0..=CLICK_DELAY_MAX_MS).contains(&delay), "{line}");
                outside_join += usize::from(delay > 10_000);
                first.insert(id, (line.to_string(), t));
            }
            Some((_, t0)) if again => {
                assert_eq!(t, *t0);
                exact += 1;
            }
            Some((_, t0)) => {
                let later = t - t0;
                assert!(later > 4_000 && later < DEDUPE_HORIZON_MS, "{line}");
                retries += 1;
            }
        }
    }
    let clicks = first.len() as f64;
    assert!(
        (clicks / 20_000.0 - CLICK_SHARE).abs() < 0.02,
        "{clicks} clicks"
    );
    // A sixth of delays exceed 10 s.
    assert!((outside_join as f64 / clicks - 1.0 / 6.0).abs() < 0.03);
    assert!(
        exact > 100 && retries > 30,
        "exact {exact} retries {retries}"
    );
    assert_eq!(exact + retries, f.counts.duplicates as usize);
    assert_eq!(f.counts.lines[1], clicks as u64 + f.counts.duplicates);
    // Click ids count up from 1 without gaps.
    assert!((1..=first.len() as u64).all(|id| first.contains_key(&id)));
}

#[test]
fn every_ad_has_a_price_before_its_first_impression() {
    let f = generate_text(SMALL);
    let mut first_imp: HashMap<String, i64> = HashMap::new();
    for line in f.impressions.lines() {
        let v = parse(line);
        let e = first_imp.entry(v["ad_id"].as_str().expect("ad").to_string());
        let t = ts(&v);
        e.and_modify(|m| *m = (*m).min(t)).or_insert(t);
    }
    let mut first_price: HashMap<String, i64> = HashMap::new();
    let mut versions = HashSet::new();
    for line in f.prices.lines() {
        let v = parse(line);
        let ad = v["ad_id"].as_str().expect("ad").to_string();
        let t = ts(&v);
        assert!(
            versions.insert((ad.clone(), t)),
            "two versions of {ad} at {t}"
        );
        let e = first_price.entry(ad).or_insert(t);
        *e = (*e).min(t);
        // Exactly four decimals, within range.
        let token = line
            .split("\"price\":")
            .nth(1)
            .and_then(|r| r.split(',').next())
            .expect("price token");
        let (whole, frac) = token.split_once('.').expect("a decimal point");
        assert_eq!(frac.len(), 4, "{line}");
        let units: u32 = format!("{whole}{frac}").parse().expect("digits");
        assert!((PRICE_MIN..=PRICE_MAX).contains(&units), "{line}");
    }
    assert_eq!(first_price.len() as u64, defaults::KEYS);
    for (ad, t) in &first_imp {
        assert!(
            first_price[ad] < *t,
            "{ad}: price {} imp {t}",
            first_price[ad]
        );
    }
    // Prices change through the run, about once per 100 impressions.
    let changes = f.counts.lines[2] - defaults::KEYS;
    assert!((changes as f64 - 200.0).abs() < 60.0, "{changes} changes");
    let last = f.prices.lines().last().map(|l| ts(&parse(l))).unwrap_or(0);
    assert!(last > first_imp.values().max().copied().unwrap_or(0) - 2_000);
}

#[test]
fn late_clicks_only_when_asked_for() {
    let f = generate_text(SMALL);
    assert_eq!(f.counts.late, 0);
    assert_eq!(late_lines(&f.clicks, 4_000), 0);
    let extra = [SMALL, &["--late-fraction", "0.02"]].concat();
    let g = generate_text(&extra);
    assert!(g.counts.late > 100, "{} late", g.counts.late);
    let late = late_lines(&g.clicks, 4_000) as u64;
    // A late click near the end may have few lines after it; nearly all are late.
    assert!(
        late <= g.counts.late && late * 10 >= g.counts.late * 9,
        "{late}"
    );
    // The other files do not change.
    assert!(g.impressions == f.impressions && g.prices == f.prices);
}

#[test]
fn bad_arguments_are_refused() {
    let refused = |extra: &[&str], want: &str| match FlowPlan::from_args(&args(extra)) {
        Err(LoadgenError::InvalidArg { arg, .. }) => assert_eq!(arg, want, "{extra:?}"),
        other => panic!("{extra:?}: expected InvalidArg, got {other:?}"),
    };
    refused(&["--events", "1", "--files", "2"], "files");
    refused(&["--events", "1", "--keys", "0"], "keys");
    refused(&["--events", "1", "--keys", "20000000"], "keys");
    refused(
        &[
            "--events",
            "1",
            "--late-fraction",
            "0.1",
            "--late-by-ms",
            "4000",
        ],
        "late-by-ms",
    );
    let mut kafka = args(&["--events", "1"]);
    kafka.kafka = Some("localhost:9092".into());
    assert!(matches!(
        FlowPlan::from_args(&kafka),
        Err(LoadgenError::InvalidArg { arg: "kafka", .. })
    ));
}

#[test]
fn run_writes_the_three_files_into_the_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("nested/flow");
    let a = LoadgenArgs {
        out: Some(out.clone()),
        ..args(&["--events", "500"])
    };
    let report = crate::loadgen::run(&a).expect("runs");
    let f = generate_text(&["--events", "500"]);
    let read = |name| fs::read_to_string(out.join(name)).expect("written");
    assert_eq!(read(IMPRESSIONS_FILE), f.impressions);
    assert_eq!(read(CLICKS_FILE), f.clicks);
    assert_eq!(read(PRICES_FILE), f.prices);
    assert_eq!(report.events, f.counts.lines.iter().sum::<u64>());
    assert_eq!(report.files.len(), 3);
}

#[test]
fn prices_print_with_exactly_four_decimals() {
    let mut out = Vec::new();
    for units in [25_000, PRICE_MIN, PRICE_MAX, 12_345, 10_001] {
        format::write_price(7, units, -5, &mut out);
    }
    let want = ["2.5000", "0.0100", "9.9999", "1.2345", "1.0001"]
        .map(|p| format!("{{\"ad_id\":\"ad-7\",\"price\":{p},\"ts\":-5}}\n"))
        .concat();
    assert_eq!(String::from_utf8(out).expect("utf-8"), want);
}
