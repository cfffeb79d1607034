//! A naive reference model of the ad-spend dataflow (`config/ad_spend.toml`), written from the
//! semantics in the README, never from engine code, so end-to-end tests can check the engine's
//! `out/ad_spend.ndjson` against it:
//!
//! ```text
//! clicks ──dedupe(click_id, 10m)──┐
//! impressions ──interval_join(imp_id, click.ts - imp.ts in [0, 10 s], inner)──select──┐
//! ad_prices ──temporal_join(ad_id, as of the click's ts, inner)──────────────────────┴─ window
//!                                              (ad_id, tumbling 1m on the click's ts: count, sum)
//! ```
//!
//! Steps, each a plain function over whole inputs (no watermarks: the model assumes no late
//! records, which the default `loadgen flow` files guarantee):
//! - [`dedupe`]: per `click_id`, occurrences in event-time order (equal ts: file order); the first
//!   passes and starts a horizon, one less than 10 min after the horizon's start is dropped, one at
//!   or after it passes and starts a new horizon.
//! - [`interval_join`]: nested loop over impressions and unique clicks of one `imp_id`, pairs with
//!   `0 <= click.ts - imp.ts <= 10000`; the select keeps the impression's `ad_id` and the click's ts.
//! - [`temporal_join`]: per match, the version of its ad with the largest `ts <= match.ts` (equal
//!   ts: the later line of the file wins), by a scan of all versions; no version, no output.
//! - [`windows`]: per (`ad_id`, epoch-aligned minute of the click's ts), the count and the exact
//!   decimal sum of the prices.
//!
//! Numbers that must stay exact (prices, spends) are read from their token in the line's text and
//! parsed with `rust_decimal`; serde_json would round them through f64.

use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

pub const DEDUPE_HORIZON_MS: i64 = 600_000;
pub const JOIN_LOWER_MS: i64 = 0;
pub const JOIN_UPPER_MS: i64 = 10_000;
pub const WINDOW_MS: i64 = 60_000;

/// The file names `sluice loadgen flow` writes into its `--out` directory.
pub const IMPRESSIONS_FILE: &str = "flow_impressions.ndjson";
pub const CLICKS_FILE: &str = "flow_clicks.ndjson";
pub const PRICES_FILE: &str = "flow_prices.ndjson";

/// The job's result: (ad_id, window_start) -> (clicks, spend).
pub type SpendMap = BTreeMap<(String, i64), (u64, Decimal)>;

#[derive(Debug, Clone, PartialEq)]
pub struct Impression {
    /// The `imp_id` JSON value as text (`1`, `"i-1"`): the join key, whatever its type.
    pub imp_id: String,
    pub ad_id: String,
    pub ts: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Click {
    /// The `click_id` JSON value as text: the dedupe key.
    pub click_id: String,
    pub imp_id: String,
    pub ts: i64,
    /// Position among the file's non-blank lines (0-based): breaks ties of equal ts.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Price {
    pub ad_id: String,
    pub price: Decimal,
    /// Valid from.
    pub ts: i64,
    pub line: usize,
}

/// One row of `matched_clicks`: an impression and a unique click within the join bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    pub ad_id: String,
    pub imp_id: String,
    pub click_id: String,
    /// The click's ts: the record's event time from here on.
    pub ts: i64,
}

/// The whole pipeline over the three files' lines (blank lines are skipped).
pub fn spend_model<S: AsRef<str>>(impressions: &[S], clicks: &[S], prices: &[S]) -> SpendMap {
    let impressions = parse_impressions(impressions);
    let clicks = parse_clicks(clicks);
    let prices = parse_prices(prices);
    let matched = interval_join(&impressions, &dedupe(&clicks));
    windows(&temporal_join(&matched, &prices))
}

/// [`spend_model`] over the three files `sluice loadgen flow --out DIR` wrote.
pub fn spend_model_dir(dir: &Path) -> SpendMap {
    let read = |name: &str| lines_of(&dir.join(name));
    spend_model(
        &read(IMPRESSIONS_FILE),
        &read(CLICKS_FILE),
        &read(PRICES_FILE),
    )
}

/// The job's output file (an upsert log) as a map: the last line per (ad_id, window_start) wins.
/// A missing file reads as empty (a sink that received nothing may not exist).
pub fn read_spend_output(path: &Path) -> SpendMap {
    parse_spend_output(&lines_of(path))
}

/// Output lines `{"ad_id":..,"window_start":..,"window_end":..,"clicks":3,"spend":3.7035}` as a
/// map, the last line per (ad_id, window_start) winning; `spend` is read from its token exactly.
pub fn parse_spend_output<S: AsRef<str>>(lines: &[S]) -> SpendMap {
    let mut out = SpendMap::new();
    for line in lines
        .iter()
        .map(AsRef::as_ref)
        .filter(|l| !l.trim().is_empty())
    {
        let v = json(line);
        let start = v["window_start"]
            .as_i64()
            .unwrap_or_else(|| panic!("no integer window_start in output line {line}"));
        let end = v["window_end"].as_i64();
        assert_eq!(end, Some(start + WINDOW_MS), "window_end in {line}");
        let clicks = v["clicks"]
            .as_u64()
            .unwrap_or_else(|| panic!("no integer clicks in output line {line}"));
        let spend = exact_number(line, &v, "spend");
        out.insert((text(&v["ad_id"]), start), (clicks, spend));
    }
    out
}

/// None when the maps are equal; else a readable account: row counts, the number of
/// differences and the first few of them.
pub fn spend_diff(want: &SpendMap, got: &SpendMap) -> Option<String> {
    const SHOWN: usize = 10;
    let mut diffs = Vec::new();
    let mut keys: Vec<&(String, i64)> = want.keys().chain(got.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        match (want.get(key), got.get(key)) {
            (Some(w), Some(g)) if w == g => {}
            (w, g) => diffs.push(format!(
                "  ({}, {}): want {} got {}",
                key.0,
                key.1,
                show(w),
                show(g)
            )),
        }
    }
    if diffs.is_empty() {
        return None;
    }
    let count = diffs.len();
    diffs.truncate(SHOWN);
    Some(format!(
        "spend per minute differs: want {} rows, got {} rows, {count} differences; first {}:\n{}",
        want.len(),
        got.len(),
        diffs.len(),
        diffs.join("\n")
    ))
}

/// Panics with [`spend_diff`]'s account (and `what`) unless the maps are equal.
pub fn assert_spend_eq(want: &SpendMap, got: &SpendMap, what: &str) {
    if let Some(diff) = spend_diff(want, got) {
        panic!("{what}: {diff}");
    }
}

fn show(v: Option<&(u64, Decimal)>) -> String {
    v.map_or("nothing".to_string(), |(c, s)| {
        format!("clicks={c} spend={s}")
    })
}

/// The unique clicks, in event-time order (equal ts: file order).
pub fn dedupe(clicks: &[Click]) -> Vec<Click> {
    let mut ordered: Vec<&Click> = clicks.iter().collect();
    ordered.sort_by_key(|c| (c.ts, c.line));
    // Per key, the start of its current horizon.
    let mut horizon: BTreeMap<&str, i64> = BTreeMap::new();
    let mut out = Vec::new();
    for c in ordered {
        let passes = horizon
            .get(c.click_id.as_str())
            .is_none_or(|start| c.ts - start >= DEDUPE_HORIZON_MS);
        if passes {
            horizon.insert(&c.click_id, c.ts);
            out.push(c.clone());
        }
    }
    out
}

/// Inner interval join on `imp_id`, `click.ts - imp.ts` in `[JOIN_LOWER_MS, JOIN_UPPER_MS]`,
/// then the select: every pair, as a nested loop within each `imp_id`.
pub fn interval_join(impressions: &[Impression], clicks: &[Click]) -> Vec<Matched> {
    let mut by_key: BTreeMap<&str, (Vec<&Impression>, Vec<&Click>)> = BTreeMap::new();
    for i in impressions {
        by_key.entry(&i.imp_id).or_default().0.push(i);
    }
    for c in clicks {
        by_key.entry(&c.imp_id).or_default().1.push(c);
    }
    let mut out = Vec::new();
    for (imps, clicks) in by_key.values() {
        for i in imps {
            for c in clicks {
                let d = c.ts - i.ts;
                if (JOIN_LOWER_MS..=JOIN_UPPER_MS).contains(&d) {
                    out.push(Matched {
                        ad_id: i.ad_id.clone(),
                        imp_id: i.imp_id.clone(),
                        click_id: c.click_id.clone(),
                        ts: c.ts,
                    });
                }
            }
        }
    }
    out
}

/// Inner as-of join: each match with the price of its ad valid at its ts; none, no row.
pub fn temporal_join(matched: &[Matched], prices: &[Price]) -> Vec<(Matched, Decimal)> {
    let mut by_ad: BTreeMap<&str, Vec<&Price>> = BTreeMap::new();
    for p in prices {
        by_ad.entry(&p.ad_id).or_default().push(p);
    }
    let mut out = Vec::new();
    for m in matched {
        let mut best: Option<&Price> = None;
        for p in by_ad.get(m.ad_id.as_str()).into_iter().flatten() {
            // `>=` with versions in file order: on equal ts the later line wins.
            if p.ts <= m.ts && best.is_none_or(|b| p.ts >= b.ts) {
                best = Some(p);
            }
        }
        if let Some(p) = best {
            out.push((m.clone(), p.price));
        }
    }
    out
}

/// Tumbling one-minute windows on the match's ts, aligned to the epoch, per ad.
pub fn windows(priced: &[(Matched, Decimal)]) -> SpendMap {
    let mut out = SpendMap::new();
    for (m, price) in priced {
        let start = m.ts.div_euclid(WINDOW_MS) * WINDOW_MS;
        let e = out
            .entry((m.ad_id.clone(), start))
            .or_insert((0, Decimal::ZERO));
        e.0 += 1;
        e.1 += *price;
    }
    out
}

pub fn parse_impressions<S: AsRef<str>>(lines: &[S]) -> Vec<Impression> {
    records(lines)
        .map(|(_, _, v)| Impression {
            imp_id: key(&v, "imp_id"),
            ad_id: text(&v["ad_id"]),
            ts: ts(&v),
        })
        .collect()
}

pub fn parse_clicks<S: AsRef<str>>(lines: &[S]) -> Vec<Click> {
    records(lines)
        .map(|(line, _, v)| Click {
            click_id: key(&v, "click_id"),
            imp_id: key(&v, "imp_id"),
            ts: ts(&v),
            line,
        })
        .collect()
}

pub fn parse_prices<S: AsRef<str>>(lines: &[S]) -> Vec<Price> {
    records(lines)
        .map(|(line, raw, v)| Price {
            ad_id: text(&v["ad_id"]),
            price: exact_number(raw, &v, "price"),
            ts: ts(&v),
            line,
        })
        .collect()
}

/// Non-blank lines with their position and parsed value.
fn records<S: AsRef<str>>(lines: &[S]) -> impl Iterator<Item = (usize, &str, Value)> {
    lines
        .iter()
        .map(AsRef::as_ref)
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(k, l)| (k, l, json(l)))
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn ts(v: &Value) -> i64 {
    v["ts"]
        .as_i64()
        .unwrap_or_else(|| panic!("no integer ts in {v}"))
}

fn key(v: &Value, field: &str) -> String {
    match &v[field] {
        Value::Null => panic!("no {field} in {v}"),
        k => k.to_string(),
    }
}

/// A string value as its text; any other value as its JSON text.
fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// The number under top-level `field` of `line`, exactly, from its token text; checked against
/// serde_json's (f64) reading, so a token found in the wrong place cannot pass unnoticed.
pub fn exact_number(line: &str, v: &Value, field: &str) -> Decimal {
    let token =
        raw_number(line, field).unwrap_or_else(|| panic!("no number token for {field} in {line}"));
    let exact = decimal(token);
    let float = v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {line}"));
    let back: f64 = token.parse().unwrap_or(f64::NAN);
    assert!(
        (back - float).abs() <= 1e-12 * float.abs().max(1.0),
        "token {token} of {field} does not match its value {float} in {line}"
    );
    exact
}

/// The text of the number after `"field":` (spaces allowed around the colon), or None.
/// Meant for flat objects: the first occurrence of the quoted name followed by a colon counts.
pub fn raw_number<'a>(line: &'a str, field: &str) -> Option<&'a str> {
    let quoted = format!("\"{field}\"");
    let mut from = 0;
    while let Some(at) = line[from..].find(&quoted) {
        let after = &line[from + at + quoted.len()..];
        from += at + quoted.len();
        let Some(value) = after.trim_start().strip_prefix(':') else {
            continue; // The name as a value, not as a key.
        };
        let value = value.trim_start();
        let len = value
            .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
            .unwrap_or(value.len());
        return (len > 0).then(|| &value[..len]);
    }
    None
}

/// A JSON number token as an exact decimal (`1.2345`, `-3`, and exponent forms like `1e-7`).
pub fn decimal(token: &str) -> Decimal {
    Decimal::from_str(token)
        .or_else(|_| Decimal::from_scientific(token))
        .unwrap_or_else(|e| panic!("number {token} is not a decimal: {e}"))
}

/// The lines of a file; a missing file has none.
pub fn lines_of(path: &Path) -> Vec<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => text.lines().map(str::to_string).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("reading {}: {e}", path.display()),
    }
}
