//! Avro (Confluent wire format) to the engine's JSON records: ns per record for a 5-field order
//! read with its own schema and through an evolved reader schema, against parsing the same
//! record's JSON text into a serde_json value (a generic JSON parse, the baseline).
//! `cargo bench --bench avro`.

use apache_avro::types::Value;
use apache_avro::Schema;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use sluice::connectors::kafka::avro::AvroDecoder;

const V1: &str = r#"{"type":"record","name":"Order","fields":[
  {"name":"id","type":"long"},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"currency","type":"string"},
  {"name":"qty","type":"int"}]}"#;

const V2: &str = r#"{"type":"record","name":"Order","fields":[
  {"name":"id","type":"long"},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"currency","type":"string"},
  {"name":"qty","type":"long"},
  {"name":"channel","type":"string","default":"web"}]}"#;

const N: usize = 10_000;

fn records() -> Vec<Vec<u8>> {
    let s = Schema::parse_str(V1).unwrap();
    (0..N as i64)
        .map(|i| {
            let v = Value::Record(vec![
                ("id".into(), Value::Long(i)),
                (
                    "amount".into(),
                    Value::Decimal(apache_avro::Decimal::from(
                        num_bigint::BigInt::from(i * 37 % 100_000).to_signed_bytes_be(),
                    )),
                ),
                (
                    "ts".into(),
                    Value::TimestampMillis(1_700_000_000_000 + i * 10),
                ),
                (
                    "currency".into(),
                    Value::String(["EUR", "USD", "GBP"][i as usize % 3].into()),
                ),
                ("qty".into(), Value::Int((i % 9) as i32)),
            ]);
            let mut out = vec![0, 0, 0, 0, 1];
            #[allow(deprecated)]
            out.extend(apache_avro::to_avro_datum(&s, v).unwrap());
            out
        })
        .collect()
}

fn bench_avro(c: &mut Criterion) {
    let recs = records();
    let mut g = c.benchmark_group("avro");
    g.throughput(Throughput::Elements(N as u64));
    let mut out = Vec::new();
    let mut same = AvroDecoder::with_schemas(V1, &[(1, V1)]).unwrap();
    g.bench_function("decode_same_schema", |b| {
        b.iter(|| {
            for r in &recs {
                same.to_json(r, &mut out).unwrap();
                black_box(&out);
            }
        })
    });
    let mut evolved = AvroDecoder::with_schemas(V2, &[(1, V1)]).unwrap();
    g.bench_function("decode_resolved_to_v2", |b| {
        b.iter(|| {
            for r in &recs {
                evolved.to_json(r, &mut out).unwrap();
                black_box(&out);
            }
        })
    });
    let json: Vec<Vec<u8>> = recs
        .iter()
        .map(|r| {
            same.to_json(r, &mut out).unwrap();
            out.clone()
        })
        .collect();
    g.bench_function("baseline_serde_json_value", |b| {
        b.iter(|| {
            for j in &json {
                black_box(serde_json::from_slice::<serde_json::Value>(j).unwrap());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_avro);
criterion_main!(benches);
