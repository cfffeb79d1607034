//! The bare limits the engine's figures are compared against (README, "Performance"), one core each:
//! - `parse_only`: the engine's own parser (`RecordParser`, projecting ts, ad_id and bid) over the
//!   same NDJSON lines the file benchmark reads, doing nothing with the result;
//! - `hashbrown_only`: a `hashbrown::HashMap` keyed by the same `ad_id`s in the same order, updating
//!   a (count, sum) pair per event, with nothing else.
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use sluice::connectors::generator::model::{default_plan, write_ndjson, ClickModel};
use sluice::expr::FieldPath;
use sluice::plan::SlotUse;
use sluice::plan::TimeUnit;
use sluice::record::bind::{Binding, RecordParser};

const N: u64 = 2_000_000;

fn lines() -> (Vec<u8>, Vec<(usize, usize)>) {
    let model = ClickModel::new(&default_plan(Some(N)));
    let mut buf = Vec::with_capacity(N as usize * 72);
    let mut spans = Vec::with_capacity(N as usize);
    for i in 0..N {
        let start = buf.len();
        write_ndjson(&model.click(i), &mut buf);
        spans.push((start, buf.len() - 1));
    }
    (buf, spans)
}

fn limits(c: &mut Criterion) {
    let (buf, spans) = lines();
    let mut g = c.benchmark_group("limits");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N));
    let path = |p: &str| FieldPath::parse(p).expect("a path");
    let binding = Binding {
        port: 0,
        key: vec![path("ad_id")],
        values: vec![(path("bid"), SlotUse::Number)],
        row: false,
    };
    let mut parser = RecordParser::new("ts", TimeUnit::Millis, &[binding]).expect("parser");
    g.bench_function("parse_only", |b| {
        b.iter(|| {
            let mut acc = 0i64;
            for &(s, e) in &spans {
                acc = acc.wrapping_add(parser.parse(&buf[s..e]).unwrap_or(0));
                black_box(&parser.events);
            }
            acc
        })
    });
    // The same keys, in the same order, as fixed-size arrays (no allocation per lookup).
    let model = ClickModel::new(&default_plan(Some(N)));
    let keys: Vec<([u8; 16], i64)> = (0..N)
        .map(|i| {
            let c = model.click(i);
            let mut k = [0u8; 16];
            let s = format!("\"ad-{}\"", c.ad_id);
            k[..s.len()].copy_from_slice(s.as_bytes());
            (k, c.bid)
        })
        .collect();
    g.bench_function("hashbrown_only", |b| {
        b.iter(|| {
            let mut map: hashbrown::HashMap<[u8; 16], (u64, i64)> = hashbrown::HashMap::new();
            for (k, bid) in &keys {
                let e = map.entry(*k).or_insert((0, 0));
                e.0 += 1;
                e.1 += bid;
            }
            map.len()
        })
    });
    g.finish();
}

criterion_group!(benches, limits);
criterion_main!(benches);
