//! Flink's built-in functions in sluice's expression language, ns per call, one group per family
//! (strings, digests and encodings, numbers, DOUBLE math, calendar, conditions), each expression
//! compiled once and evaluated on one record as a select evaluates it per event; the `fields`
//! group reads the arguments alone, the baseline each call's own cost is measured against.
//! Run: `cargo bench --bench functions -- --warm-up-time 1 --measurement-time 2`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use sluice::expr::{compile, RawJson};

const LINE: &[u8] = br#"{"s": "hello wORLD", "url": "http://a.com/p?k1=v1&k2=v2", "n": -5, "d": -7.250, "ts": 1704450600000, "when": "2024-01-05 10:30:00", "u": null}"#;

const FAMILIES: &[(&str, &[&str])] = &[
    // The baseline: reading the field alone, which every call below also does.
    ("fields", &["s", "d", "ts"]),
    (
        "strings",
        &[
            "concat_ws('-', s, u, 'x')",
            "lpad(s, 16, '*')",
            "initcap(s)",
            "locate('o', s, 3)",
            "parse_url(url, 'QUERY', 'k2')",
            "regexp_count(s, '[a-z]+')",
        ],
    ),
    (
        "digests",
        &[
            "md5(s)",
            "sha256(s)",
            "to_base64(s)",
            "url_encode(url)",
            "hex(n)",
        ],
    ),
    ("numbers", &["div(n, 3)", "sign(d)", "truncate(d, 1)"]),
    (
        "double",
        &[
            "to_double(d) * 2",
            "sqrt(to_double(n) * -1)",
            "power(d, 2)",
            "ln(1 + 5)",
        ],
    ),
    (
        "calendar",
        &[
            "parse_time(when)",
            "parse_time(when, 'yyyy-MM-dd HH:mm:ss')",
            "unix_timestamp(when)",
            "time_add('MONTH', 1, ts)",
            "time_diff('DAY', ts, ts + 86400000)",
            "time_field(ts, 'DOW')",
            "floor_time(ts, 'MONTH')",
        ],
    ),
    (
        "conditions",
        &[
            "coalesce(n > 0, false) ? s : u",
            "try(to_int(s))",
            "is_decimal(s)",
        ],
    ),
];

fn functions(c: &mut Criterion) {
    let record = RawJson(LINE);
    for (family, exprs) in FAMILIES {
        let mut group = c.benchmark_group(*family);
        for text in *exprs {
            let program = compile(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            group.bench_function(*text, |b| {
                b.iter(|| black_box(program.eval(black_box(&record)).is_ok()))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, functions);
criterion_main!(benches);
