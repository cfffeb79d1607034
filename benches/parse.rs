//! NDJSON parse throughput (bytes/s) on 100k generated ~70-byte click lines: sluice's projecting
//! scanner (`record::json::extract` + number decoding) against serde_json into a borrowed struct.
//! Run: `cargo bench --bench parse -- --warm-up-time 1 --measurement-time 3`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use serde::Deserialize;
use sluice::record::json::{extract, parse_number, FieldSet, Number, Token};

const LINES: usize = 100_000;

/// Click lines in the loadgen shape, one buffer with '\n' separators plus each line's range.
fn click_lines() -> (Vec<u8>, Vec<(usize, usize)>) {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut buf = Vec::with_capacity(LINES * 72);
    let mut ranges = Vec::with_capacity(LINES);
    let mut ts: u64 = 1_700_000_000_000;
    for _ in 0..LINES {
        ts += next() % 3;
        let start = buf.len();
        let line = format!(
            r#"{{"ad_id":"ad-{}","user_id":"u-{}","ts":{},"bid":{}}}"#,
            next() % 100_000,
            next() % 1_000_000,
            ts - next() % 5_000,
            1 + next() % 10_000
        );
        buf.extend_from_slice(line.as_bytes());
        ranges.push((start, buf.len()));
        buf.push(b'\n');
    }
    (buf, ranges)
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Click<'a> {
    #[serde(borrow)]
    ad_id: &'a str,
    #[serde(borrow)]
    user_id: &'a str,
    ts: i64,
    bid: i64,
}

fn int(tok: Option<Token<'_>>) -> i64 {
    match tok.map(|t| parse_number(t.raw)) {
        Some(Ok(Number::Int(i))) => i,
        _ => 0,
    }
}

fn bench_parse(c: &mut Criterion) {
    let (buf, ranges) = click_lines();
    let bytes: usize = ranges.iter().map(|(s, e)| e - s + 1).sum();
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(bytes as u64));

    for names in [
        &["ts", "ad_id", "bid"][..],
        &["ts", "ad_id", "bid", "user_id"][..],
    ] {
        let fields = FieldSet::new(names);
        g.bench_function(format!("sluice_extract_{}_fields", names.len()), |b| {
            let mut out = [None; 4];
            b.iter(|| {
                let mut acc = 0i64;
                for &(s, e) in &ranges {
                    let slots = &mut out[..fields.len()];
                    if extract(&buf[s..e], &fields, slots).is_ok() {
                        acc = acc.wrapping_add(int(slots[0]) ^ int(slots[2]));
                        acc = acc.wrapping_add(slots[1].map_or(0, |t| t.raw.len() as i64));
                    }
                }
                black_box(acc)
            })
        });
    }

    g.bench_function("serde_json_borrowed_struct", |b| {
        b.iter(|| {
            let mut acc = 0i64;
            for &(s, e) in &ranges {
                if let Ok(c) = serde_json::from_slice::<Click<'_>>(&buf[s..e]) {
                    acc = acc
                        .wrapping_add(c.ts ^ c.bid)
                        .wrapping_add(c.ad_id.len() as i64);
                }
            }
            black_box(acc)
        })
    });
    g.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
