//! The ad-spend reference model (`tests/common/flow_model.rs`) on hand-computed cases: dedupe's
//! horizon, the join's inclusive bounds, price versions within a minute, clicks before any
//! price, window boundaries; its reading of the job's output file; and on the files
//! `sluice loadgen flow` writes, where it must give a non-trivial result.

mod common;

use common::flow_model::*;
use rust_decimal::Decimal;
use std::process::Command;
use std::str::FromStr;

/// A minute boundary: 28 333 334 minutes after the epoch.
const W: i64 = 1_700_000_040_000;

fn imp(id: u64, ad: &str, ts: i64) -> String {
    format!(r#"{{"imp_id":{id},"ad_id":"{ad}","ts":{ts}}}"#)
}

fn click(id: u64, imp_id: u64, ad: &str, ts: i64) -> String {
    format!(r#"{{"click_id":{id},"imp_id":{imp_id},"ad_id":"{ad}","ts":{ts}}}"#)
}

fn price(ad: &str, price: &str, ts: i64) -> String {
    format!(r#"{{"ad_id":"{ad}","price":{price},"ts":{ts}}}"#)
}

fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn spend(rows: &[(&str, i64, u64, &str)]) -> SpendMap {
    rows.iter()
        .map(|(ad, start, clicks, s)| ((ad.to_string(), *start), (*clicks, d(s))))
        .collect()
}

#[test]
fn a_duplicate_within_the_horizon_is_dropped_and_one_after_it_kept() {
    // One impression id shown three times, so every copy of click 9 could match one of them.
    let imps = [
        imp(1, "ad-1", W),
        imp(1, "ad-1", W + 299_000),
        imp(1, "ad-1", W + 600_000),
    ];
    let clicks = [
        click(9, 1, "ad-1", W + 1_000),
        click(9, 1, "ad-1", W + 1_000), // the exact line again: dropped
        click(9, 1, "ad-1", W + 300_000), // within 10 min of W+1000: dropped
        click(9, 1, "ad-1", W + 601_000), // exactly 10 min later: passes, new horizon
        click(9, 1, "ad-1", W + 601_500), // within the new horizon: dropped
    ];
    let prices = [price("ad-1", "1.0000", W - 60_000)];
    let unique = dedupe(&parse_clicks(&clicks));
    let times: Vec<(i64, usize)> = unique.iter().map(|c| (c.ts, c.line)).collect();
    assert_eq!(times, [(W + 1_000, 0), (W + 601_000, 3)]);
    let want = spend(&[("ad-1", W, 1, "1.0000"), ("ad-1", W + 600_000, 1, "1.0000")]);
    assert_spend_eq(&want, &spend_model(&imps, &clicks, &prices), "dedupe");
    // Arrival order does not matter, only event time: the same clicks reversed.
    let reversed: Vec<String> = clicks.iter().rev().cloned().collect();
    assert_spend_eq(&want, &spend_model(&imps, &reversed, &prices), "reversed");
}

#[test]
fn the_join_bound_is_inclusive_at_10_s_and_excludes_10_001_s() {
    let imps = [
        imp(1, "ad-1", W),
        imp(2, "ad-1", W),
        imp(3, "ad-1", W + 5_000),
        imp(4, "ad-1", W + 5_000),
    ];
    let clicks = [
        click(1, 1, "ad-1", W + 10_000), // 10 s: matches
        click(2, 2, "ad-1", W + 10_001), // 10.001 s: does not
        click(3, 3, "ad-1", W + 5_000),  // 0 s: matches
        click(4, 4, "ad-1", W + 4_999),  // before its impression: does not
        click(5, 99, "ad-1", W + 6_000), // no impression
    ];
    let prices = [price("ad-1", "2.0000", W - 1)];
    let matched = interval_join(&parse_impressions(&imps), &parse_clicks(&clicks));
    let mut ids: Vec<&str> = matched.iter().map(|m| m.click_id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["1", "3"]);
    assert!(matched.iter().all(|m| m.ad_id == "ad-1"));
    let want = spend(&[("ad-1", W, 2, "4.0000")]);
    assert_spend_eq(&want, &spend_model(&imps, &clicks, &prices), "bounds");
}

#[test]
fn a_price_change_between_two_clicks_of_one_minute_prices_each_at_its_time() {
    let imps = [
        imp(1, "ad-1", W + 5_000),
        imp(2, "ad-1", W + 28_000),
        imp(3, "ad-1", W + 35_000),
        imp(4, "ad-2", W),
    ];
    let clicks = [
        click(1, 1, "ad-1", W + 10_000), // before the change: 1.0000
        click(2, 2, "ad-1", W + 30_000), // at the change (valid from, inclusive): 2.5000
        click(3, 3, "ad-1", W + 40_000), // after it: 2.5000
        click(4, 4, "ad-2", W + 1),
    ];
    let prices = [
        // Newer version first in the file: versions are ordered by ts, not by line.
        price("ad-1", "2.5000", W + 30_000),
        price("ad-1", "1.0000", W - 5_000),
        price("ad-1", "9.9999", W + 50_000), // after every click
        // Two versions at one ts: the later line wins.
        price("ad-2", "1.1111", W),
        price("ad-2", "2.2222", W),
    ];
    let want = spend(&[("ad-1", W, 3, "6.0000"), ("ad-2", W, 1, "2.2222")]);
    assert_spend_eq(&want, &spend_model(&imps, &clicks, &prices), "versions");
}

#[test]
fn a_click_before_any_price_of_its_ad_is_dropped() {
    let imps = [
        imp(1, "ad-3", W + 5_000),
        imp(2, "ad-3", W + 20_000),
        imp(3, "ad-4", W),
    ];
    let clicks = [
        click(1, 1, "ad-3", W + 10_000), // ad-3's first price is later
        click(2, 2, "ad-3", W + 25_000),
        click(3, 3, "ad-4", W + 1_000), // ad-4 has no price at all
    ];
    let prices = [price("ad-3", "3.0000", W + 20_000)];
    let want = spend(&[("ad-3", W, 1, "3.0000")]);
    assert_spend_eq(&want, &spend_model(&imps, &clicks, &prices), "no version");
}

#[test]
fn windows_are_minutes_aligned_to_the_epoch_on_the_click_ts() {
    let imps = [
        imp(1, "ad-1", W + 55_000),
        imp(2, "ad-1", W + 55_000),
        imp(3, "ad-1", W - 5_000),
        imp(4, "ad-1", -5_000),
        imp(5, "ad-1", -5_000),
    ];
    let clicks = [
        click(1, 1, "ad-1", W + 59_999), // last ms of [W, W+60000)
        click(2, 2, "ad-1", W + 60_000), // first of the next
        click(3, 3, "ad-1", W - 1),      // last of the one before
        click(4, 4, "ad-1", -1),         // before the epoch: [-60000, 0)
        click(5, 5, "ad-1", 0),
    ];
    let prices = [price("ad-1", "0.0100", -200_000)];
    let want = spend(&[
        ("ad-1", -60_000, 1, "0.0100"),
        ("ad-1", 0, 1, "0.0100"),
        ("ad-1", W - 60_000, 1, "0.0100"),
        ("ad-1", W, 1, "0.0100"),
        ("ad-1", W + 60_000, 1, "0.0100"),
    ]);
    assert_spend_eq(&want, &spend_model(&imps, &clicks, &prices), "boundaries");
}

#[test]
fn output_lines_read_as_an_upsert_log_with_exact_spend() {
    let end = W + 60_000;
    let lines = [
        format!(
            r#"{{"ad_id":"ad-7","window_start":{W},"window_end":{end},"clicks":3,"spend":3.7035}}"#
        ),
        format!(
            r#"{{"ad_id":"ad-8","window_start":{W},"window_end":{end},"clicks":1,"spend":0.30000000000000004}}"#
        ),
        // A re-fire supersedes the first line of ad-7.
        format!(
            r#"{{"ad_id":"ad-7","window_start":{W},"window_end":{end},"clicks":4,"spend":4.9380}}"#
        ),
        format!(
            r#"{{"ad_id": "ad-9", "window_start": {W}, "window_end": {end}, "clicks": 1, "spend" : 1e-4}}"#
        ),
        String::new(),
    ];
    let got = parse_spend_output(&lines);
    let want = spend(&[
        ("ad-7", W, 4, "4.938"),
        ("ad-8", W, 1, "0.30000000000000004"),
        ("ad-9", W, 1, "0.0001"),
    ]);
    assert_eq!(spend_diff(&want, &got), None);
    // Read through f64 the ad-8 spend would equal 0.3: exactly it does not.
    let mut rounded = want.clone();
    rounded.insert(("ad-8".into(), W), (1, d("0.3")));
    rounded.remove(&("ad-9".to_string(), W));
    let diff = spend_diff(&rounded, &got).expect("differs");
    assert!(diff.contains("2 differences"), "{diff}");
    assert!(
        diff.contains(
            "(ad-8, 1700000040000): want clicks=1 spend=0.3 got clicks=1 spend=0.30000000000000004"
        ),
        "{diff}"
    );
    assert!(
        diff.contains("(ad-9, 1700000040000): want nothing got clicks=1 spend=0.0001"),
        "{diff}"
    );
    assert_eq!(
        raw_number(r#"{"name":"spend","spend":-2.50}"#, "spend"),
        Some("-2.50")
    );
    assert_eq!(raw_number(r#"{"spend":null}"#, "spend"), None);
}

#[test]
fn the_model_on_generated_files_gives_a_non_trivial_result() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let status = Command::new(common::BIN)
            .args([
                "loadgen", "flow", "--events", "20000", "--rate", "200", "--out",
            ])
            .arg(out)
            .status()
            .unwrap();
        assert!(status.success());
    }
    for name in [IMPRESSIONS_FILE, CLICKS_FILE, PRICES_FILE] {
        let read = |d: &std::path::Path| std::fs::read(d.join(name)).unwrap();
        assert!(read(&a) == read(&b), "{name} differs between two runs");
    }
    let result = spend_model_dir(&a);
    let clicks: u64 = result.values().map(|(c, _)| c).sum();
    // 60% of impressions clicked, 10 001 of every 12 001 delays within the bound.
    let expected = 20_000.0 * 0.6 * 10_001.0 / 12_001.0;
    assert!(
        (clicks as f64 - expected).abs() < expected * 0.05,
        "{clicks} clicks"
    );
    assert!(result.len() > 1_000, "{} windows", result.len());
    let minutes: std::collections::BTreeSet<i64> = result.keys().map(|k| k.1).collect();
    assert!(minutes.len() >= 2, "{minutes:?}");
    assert!(result.values().any(|(c, _)| *c >= 20), "a hot ad");
    for ((ad, start), (n, s)) in &result {
        assert_eq!(s.scale(), 4, "{ad} {start}: {s}");
        assert!(*s >= d("0.01") * Decimal::from(*n) && *s <= d("9.9999") * Decimal::from(*n));
    }
    // Dedupe had work to do: more click lines than unique clicks.
    let lines = lines_of(&a.join(CLICKS_FILE));
    assert!(dedupe(&parse_clicks(&lines)).len() < lines.len());
}
