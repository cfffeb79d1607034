//! A rough timing of evaluation, for quoting; not a benchmark suite (criterion benches live in
//! `benches/`). Run with
//! `cargo test --release --lib expr::tests_bench -- --ignored --nocapture`.

use std::hint::black_box;
use std::time::Instant;

use crate::expr::{compile, RawJson};

const LINE: &str = r#"{"id": 81723, "ts": 1795953600000, "country": "DE", "name": "Ada Lovelace",
"amount": 19.99, "table": {"rate": 1.083421}, "payload": {"items": [{"sku": "A-1", "qty": 2}]}}"#;

const EXPRESSIONS: &[&str] = &[
    "amount * table.rate > 20 && country in ['DE', 'AT', 'CH']",
    "round(amount * table.rate, 2)",
    "truncate_time(ts, 'minute')",
    "payload.items[0].qty * 2 + id % 7",
    "lower(country) == 'de' ? concat(name, '!') : name",
];

#[test]
#[ignore = "timing, run by hand with --release"]
fn evaluation_speed() {
    let parsed: serde_json::Value = serde_json::from_str(LINE).unwrap();
    let raw = RawJson(LINE.as_bytes());
    const N: u32 = 1_000_000;
    for text in EXPRESSIONS {
        let program = compile(text).unwrap();
        let start = Instant::now();
        for _ in 0..N {
            black_box(program.eval(black_box(&parsed)).is_ok());
        }
        let serde_ns = start.elapsed().as_nanos() / u128::from(N);
        let start = Instant::now();
        for _ in 0..N {
            black_box(program.eval(black_box(&raw)).is_ok());
        }
        let raw_ns = start.elapsed().as_nanos() / u128::from(N);
        println!(
            "{serde_ns:>5} ns/eval on serde_json::Value, {raw_ns:>5} ns/eval on RawJson: {text}"
        );
    }
}
