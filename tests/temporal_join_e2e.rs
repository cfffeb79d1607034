//! The reference scenario through the real binary: orders priced at the FX rate valid at order time
//! by a temporal join, then `amount * table.rate` by a select. Rates are a changelog (a new version
//! per currency every second or so) and both files arrive out of order within the watermark bound;
//! every order's joined rate is the one a nested loop in this test picks, and every printed
//! `amount_usd` is the product computed here with `rust_decimal`, exactly. Left and inner kinds,
//! on 1 and 3 shards, with small chunks so the two files interleave.

mod common;

use common::{read_lines, sluice, toml_str};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
const CURRENCIES: [&str; 5] = ["EUR", "GBP", "JPY", "CHF", "SEK"];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `n / 10^scale` as decimal text.
fn dec(n: u64, scale: u32) -> String {
    Decimal::new(n as i64, scale).to_string()
}

/// Lines sorted by event time plus a jitter below `bound_ms`: out of order, within the bound.
fn jittered(rng: &mut Rng, rows: Vec<(i64, String)>, bound_ms: u64) -> String {
    let mut keyed: Vec<(i64, usize, String)> = rows
        .into_iter()
        .enumerate()
        .map(|(i, (ts, l))| (ts + rng.below(bound_ms) as i64, i, l))
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, _, l)| l + "\n").collect()
}

struct Data {
    /// currency -> (valid from, rate text), ascending.
    rates: BTreeMap<&'static str, Vec<(i64, String)>>,
    /// (order_id, currency, amount text, ts)
    orders: Vec<(u64, &'static str, String, i64)>,
}

fn write_data(dir: &Path) -> Data {
    let mut rng = Rng(42);
    let mut rates: BTreeMap<&'static str, Vec<(i64, String)>> = BTreeMap::new();
    let mut rate_rows = Vec::new();
    for (c, cur) in CURRENCIES.iter().enumerate() {
        // SEK's first version comes at 30 s: earlier SEK orders have no rate.
        let mut t = if *cur == "SEK" {
            30_000
        } else {
            500 + c as i64 * 37
        };
        while t < 120_000 {
            let rate = dec(1 + rng.below(2_000_000), rng.below(7) as u32);
            rate_rows.push((
                t,
                format!(r#"{{"currency":"{cur}","rate":{rate},"ts":{t}}}"#),
            ));
            rates.entry(cur).or_default().push((t, rate));
            t += 700 + rng.below(1_300) as i64;
        }
    }
    let mut orders = Vec::new();
    let mut order_rows = Vec::new();
    for id in 0..6_000u64 {
        let cur = CURRENCIES[rng.below(5) as usize];
        let amount = dec(rng.below(1_000_000), rng.below(3) as u32);
        let ts = rng.below(120_000) as i64;
        order_rows.push((
            ts,
            format!(r#"{{"order_id":{id},"currency":"{cur}","amount":{amount},"ts":{ts}}}"#),
        ));
        orders.push((id, cur, amount, ts));
    }
    std::fs::write(
        dir.join("rates.ndjson"),
        jittered(&mut rng, rate_rows, 2_000),
    )
    .unwrap();
    std::fs::write(
        dir.join("orders.ndjson"),
        jittered(&mut rng, order_rows, 2_000),
    )
    .unwrap();
    Data { rates, orders }
}

/// Nested loop: the rate of `cur` valid at `ts` (latest valid-from <= ts).
fn rate_at<'a>(d: &'a Data, cur: &str, ts: i64) -> Option<&'a str> {
    d.rates[cur]
        .iter()
        .filter(|(from, _)| *from <= ts)
        .max_by_key(|(from, _)| *from)
        .map(|(_, r)| r.as_str())
}

fn config(dir: &Path, name: &str, kind: &str, shards: usize) -> String {
    let file = |f: &str| toml_str(&dir.join(f).to_string_lossy());
    let toml = format!(
        r#"[runtime]
shards = {shards}
chunk_bytes = 4096

[sources.orders]
type = "file"
path = {orders}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "2s" }}

[sources.fx_rates]
type = "file"
path = {rates}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "2s" }}

[transforms.priced]
type = "temporal_join"
input = "orders"
table = "fx_rates"
on = {{ input = "currency", table = "currency" }}
kind = "{kind}"

[transforms.priced_usd]
type = "select"
inputs = ["priced"]
fields = {{ order_id = "order_id", rate = "table.rate", amount_usd = "amount * table.rate" }}

[sinks.usd]
type = "file"
inputs = ["priced_usd"]
path = {out}
"#,
        orders = file("orders.ndjson"),
        rates = file("rates.ndjson"),
        out = file(&format!("{name}.ndjson")),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

/// The raw text of the value after `"key":` in a compact JSON line.
fn raw<'a>(line: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    let at = line
        .find(&pat)
        .unwrap_or_else(|| panic!("no {pat} in {line}"))
        + pat.len();
    let rest = &line[at..];
    &rest[..rest.find([',', '}']).unwrap_or(rest.len())]
}

#[test]
fn orders_are_priced_at_the_rate_valid_at_order_time_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = write_data(d);
    let no_rate = data
        .orders
        .iter()
        .filter(|o| rate_at(&data, o.1, o.3).is_none())
        .count();
    assert!(
        no_rate > 50,
        "some orders come before their currency's first rate"
    );
    for (kind, shards) in [("left", 1), ("left", 3), ("inner", 2)] {
        let name = format!("{kind}-{shards}");
        let cfg = config(d, &name, kind, shards);
        let run = sluice(d, &["run", "--config", &cfg], MIN);
        assert!(run.success, "{}", run.stderr);
        assert!(run.stderr.contains("0 late dropped"), "{}", run.stderr);
        let mut got: BTreeMap<u64, String> = BTreeMap::new();
        for line in read_lines(&d.join(format!("{name}.ndjson"))) {
            let id: u64 = raw(&line, "order_id").parse().unwrap();
            assert!(got.insert(id, line).is_none(), "order {id} twice");
        }
        let want = if kind == "left" {
            data.orders.len()
        } else {
            data.orders.len() - no_rate
        };
        assert_eq!(got.len(), want, "{name}");
        for (id, cur, amount, ts) in &data.orders {
            let rate = rate_at(&data, cur, *ts);
            let Some(line) = got.get(id) else {
                assert!(
                    kind == "inner" && rate.is_none(),
                    "{name}: order {id} missing"
                );
                continue;
            };
            match rate {
                None => {
                    assert_eq!(raw(line, "rate"), "null", "{name}: {line}");
                    assert_eq!(raw(line, "amount_usd"), "null", "{name}: {line}");
                }
                Some(r) => {
                    assert_eq!(raw(line, "rate"), r, "{name}: order {id} at {ts}: {line}");
                    let want = Decimal::from_str_exact(amount).unwrap()
                        * Decimal::from_str_exact(r).unwrap();
                    let printed = Decimal::from_str_exact(raw(line, "amount_usd")).unwrap();
                    assert_eq!(printed, want, "{name}: {amount} * {r}: {line}");
                }
            }
        }
    }
}
