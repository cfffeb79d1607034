//! The regular join with event-time state TTL (`type = "join"`, SQL's unbounded `JOIN` under
//! `SET 'table.exec.state.ttl'`) through the real binary against a nested loop with expiry
//! written in this test: orders and payments of a few hundred accounts, many rows per key on
//! both sides (many-to-many matches), written out of order within the watermark bound; a row
//! joins every row of its key on the other side whose time is within `ttl` of its own (the
//! earlier row has not expired when the later arrives), rows with a `null` or missing key join
//! nothing. Over a run four times as long the peak of kept rows stays the same: state is
//! bounded by rate x ttl, not by run length.

mod common;

use common::{read_lines, sluice, toml_str};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
const TTL_MS: i64 = 5_000;

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// (account, ts, n) of one side; `None`: the row's key is null or missing.
type Rows = Vec<(Option<u64>, i64, u64)>;

/// `seconds` of orders and payments, `rate` a second each, keys drawn from `accounts`, lines
/// shuffled within 2 s of event time.
fn write_data(dir: &Path, seconds: i64, rate: i64, accounts: u64, seed: u64) -> (Rows, Rows) {
    let mut rng = Rng(seed);
    let side = |name: &str, rng: &mut Rng| -> Rows {
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for n in 0..(seconds * rate) as u64 {
            let ts = n as i64 * 1000 / rate + rng.below(50) as i64;
            let key = match rng.below(50) {
                0 => None,
                _ => Some(rng.below(accounts)),
            };
            let field = match (key, n % 2) {
                (Some(k), _) => format!(r#""account":{k},"#),
                (None, 0) => r#""account":null,"#.to_string(),
                (None, _) => String::new(),
            };
            let line = format!(r#"{{{field}"ts":{ts},"n":{n}}}"#);
            lines.push((ts + rng.below(2_000) as i64, line));
            rows.push((key, ts, n));
        }
        lines.sort();
        let text: String = lines.into_iter().map(|(_, l)| l + "\n").collect();
        std::fs::write(dir.join(name), text).unwrap();
        rows
    };
    let orders = side("orders.ndjson", &mut rng);
    let payments = side("payments.ndjson", &mut rng);
    (orders, payments)
}

fn config(dir: &Path, name: &str, shards: usize) -> String {
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
watermark = {{ max_out_of_orderness = "3s" }}

[sources.payments]
type = "file"
path = {payments}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "3s" }}

[transforms.paid]
type = "join"
left = "orders"
right = "payments"
on = ["account"]
ttl = "{TTL_MS}ms"

[sinks.out]
type = "file"
inputs = ["paid"]
path = {out}
"#,
        orders = file("orders.ndjson"),
        payments = file("payments.ndjson"),
        out = file(&format!("{name}.ndjson")),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

/// (account, order n, payment n) of every output line.
fn pairs(path: &Path) -> Vec<(u64, u64, u64)> {
    let mut out: Vec<_> = read_lines(path)
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let n = |side: &str| v[side]["n"].as_u64().unwrap();
            (v["account"].as_u64().unwrap(), n("left"), n("right"))
        })
        .collect();
    out.sort_unstable();
    out
}

/// Every (order, payment) of one account where the later of the two arrives before the earlier
/// has expired: their times differ by at most the TTL. Null keys match nothing.
fn reference(orders: &Rows, payments: &Rows) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    for (ko, to, no) in orders {
        for (kp, tp, np) in payments {
            let expired = (to - tp).abs() > TTL_MS;
            if let (Some(a), Some(b)) = (ko, kp) {
                if a == b && !expired {
                    out.push((*a, *no, *np));
                }
            }
        }
    }
    out.sort_unstable();
    out
}

#[test]
fn pairs_equal_the_nested_loop_with_expiry_on_any_shard_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (orders, payments) = write_data(d, 60, 20, 40, 5);
    let want = reference(&orders, &payments);
    // Many-to-many: an account has about 2.5 rows per side within a TTL.
    assert!(want.len() > 5_000, "{}", want.len());
    for shards in [1, 2, 3] {
        let name = format!("out-{shards}");
        let run = sluice(d, &["run", "--config", &config(d, &name, shards)], MIN);
        assert!(run.success, "{}", run.stderr);
        assert!(run.stderr.contains("0 late dropped"), "{}", run.stderr);
        let got = pairs(&d.join(format!("{name}.ndjson")));
        assert_eq!(got.len(), want.len(), "{shards} shards: every pair once");
        assert_eq!(got, want, "{shards} shards");
    }
}

#[test]
fn kept_rows_are_bounded_by_rate_times_ttl_not_run_length() {
    let peak = |seconds: i64| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write_data(d, seconds, 20, 40, 9);
        let stats = d.join("stats.json");
        let cfg = config(d, "run", 2);
        let run = sluice(
            d,
            &["run", "--config", &cfg, "--stats", &stats.to_string_lossy()],
            MIN * 2,
        );
        assert!(run.success, "{}", run.stderr);
        let s: Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
        let j = &s["joins"][0];
        assert_eq!(j["name"], "paid");
        let p = |i: usize| j["peak"][i].as_u64().unwrap();
        let op = &s["operators"][0];
        assert_eq!(op["name"], "paid");
        let bytes = op["state_bytes_peak"].as_u64().unwrap();
        (p(0) + p(1), j["cleaned"][0].as_u64().unwrap(), bytes)
    };
    let (short, cleaned_short, bytes_short) = peak(100);
    let (long, cleaned_long, bytes_long) = peak(400);
    // The sampled peak of the state's bytes is stable too (and was sampled at all).
    assert!(bytes_short > 0, "no state sampled");
    assert!(
        bytes_long <= bytes_short + bytes_short / 2,
        "peak state bytes {bytes_short} -> {bytes_long}"
    );
    assert!(
        cleaned_long > 3 * cleaned_short,
        "four times the rows went through"
    );
    assert!(long <= short + short / 4, "peaks {short} -> {long}");
    // 2 x 20 rows a second kept for the TTL (5 s) plus the watermark bound (3 s), the lines'
    // shuffle (2 s) and a chunk's span (about 2.5 s of one file): about 12.5 s of rows.
    assert!(
        long < 2 * 20 * 16,
        "peak {long} is about rate x (ttl + bound)"
    );
}
