//! The record model against hand-written records: projection, nested paths, keys of any length,
//! NULL keys, exact decimals, rows, and the reasons malformed records are refused with.

use super::*;
use crate::record::event::{Rec, KEY_OUT, ROW};
use std::str::FromStr;

fn path(s: &str) -> FieldPath {
    FieldPath::parse(s).unwrap()
}

fn parser(unit: TimeUnit) -> RecordParser {
    RecordParser::new(
        "ts",
        unit,
        &[Binding {
            port: 3,
            key: vec![path("ad_id"), path("n")],
            values: vec![
                (path("bid"), SlotUse::Number),
                (path("user"), SlotUse::Hash),
            ],
            row: false,
        }],
    )
    .unwrap()
}

/// The first event of the last parse, with its payload.
fn rec(p: &RecordParser) -> Rec<'_> {
    Rec::parse(&p.events[0], &p.payloads[0].bytes).unwrap()
}

#[test]
fn projects_key_values_and_time() {
    let mut p = parser(TimeUnit::Millis);
    let ts = p
        .parse(br#"{"x":[1,{"y":2}],"ad_id":"a\u0062","ts":1700,"bid":2.5,"user":"u1","n":7}"#)
        .unwrap();
    assert_eq!(ts, 1700);
    let r = rec(&p);
    assert_eq!(r.key(), b"\"ab\"\x007");
    assert_eq!(r.ev.port, 3);
    assert_eq!(r.value(0), Value::Dec(Decimal::from_str("2.5").unwrap()));
    assert_eq!(r.value(1), Value::Hash(hash_key(b"\"u1\"")));
    let hash = r.ev.hash;
    // The same key spelt without escapes hashes identically.
    p.parse(br#"{"ad_id":"ab","ts":1,"n":7}"#).unwrap();
    assert_eq!(p.events[0].hash, hash);
    assert_eq!(
        rec(&p).value(0),
        Value::Null,
        "missing numeric field is null"
    );
}

#[test]
fn nested_paths_step_into_objects_and_missing_steps_are_null() {
    let mut p = RecordParser::keyed(&[Binding {
        port: 0,
        key: vec![path("user.country")],
        values: vec![(path("table.price"), SlotUse::Number)],
        row: false,
    }])
    .unwrap();
    p.parse_at(
        br#"{"user":{"id":1,"country":"DE"},"table":{"price":1.2345}}"#,
        5,
    )
    .unwrap();
    let r = rec(&p);
    assert_eq!(r.key(), b"\"DE\"");
    assert_eq!(r.ev.flags & NULL_KEY, 0);
    assert_eq!(r.value(0), Value::Dec(Decimal::from_str("1.2345").unwrap()));
    assert_eq!(r.ev.ts, 5);
    for line in [
        &br#"{"user":{"id":1}}"#[..],
        br#"{"user":"DE"}"#,
        br#"{"user":null}"#,
        b"{}",
    ] {
        p.parse_at(line, 0).unwrap();
        let r = rec(&p);
        assert_eq!(r.key(), b"null", "{}", String::from_utf8_lossy(line));
        assert_ne!(r.ev.flags & NULL_KEY, 0, "a missing key field is NULL");
    }
}

#[test]
fn keys_of_any_length_travel_out_of_line() {
    let mut p = RecordParser::keyed(&[Binding {
        port: 0,
        key: vec![path("k")],
        values: Vec::new(),
        row: true,
    }])
    .unwrap();
    let long = "x".repeat(200);
    let line = format!(r#"{{"k":"{long}","v":1}}"#);
    p.parse_at(line.as_bytes(), 0).unwrap();
    let r = rec(&p);
    assert_ne!(r.ev.flags & KEY_OUT, 0);
    assert_eq!(r.key(), format!("\"{long}\"").as_bytes());
    assert_eq!(r.ev.hash, hash_key(format!("\"{long}\"").as_bytes()));
    assert_ne!(r.ev.flags & ROW, 0);
    assert_eq!(r.row(), Some(line.as_bytes()));
}

#[test]
fn numbers_are_integers_exact_decimals_or_floats_only_beyond_them() {
    for (text, want) in [
        ("7", Value::Int(7)),
        ("-0.50", Value::Dec(Decimal::from_str("-0.50").unwrap())),
        (
            "12345678901234567890",
            Value::Dec(Decimal::from_str("12345678901234567890").unwrap()),
        ),
        ("1.5e2", Value::Dec(Decimal::from_str("150").unwrap())),
    ] {
        assert_eq!(number(text.as_bytes()).unwrap(), want, "{text}");
    }
    assert!(matches!(number(b"1e300").unwrap(), Value::Float(_)));
    assert_eq!(
        number(b"2.50").unwrap(),
        Value::Dec(Decimal::from_str("2.50").unwrap()),
        "the scale as written"
    );
}

#[test]
fn units_convert_to_millis_with_floor() {
    assert_eq!(parser(TimeUnit::Seconds).parse(br#"{"ts":1.5}"#), Ok(1500));
    assert_eq!(parser(TimeUnit::Micros).parse(br#"{"ts":-1}"#), Ok(-1));
    assert_eq!(
        parser(TimeUnit::Rfc3339).parse(br#"{"ts":"1970-01-01T00:00:01.250Z"}"#),
        Ok(1250)
    );
}

#[test]
fn malformed_records_say_why() {
    let mut p = parser(TimeUnit::Millis);
    let mut err = |l: &[u8]| p.parse(l).unwrap_err().0;
    assert!(err(br#"{"ad_id":"a"}"#).contains("missing event time field `ts`"));
    assert!(err(br#"{"ts":"soon"}"#).contains("must be a number"));
    assert!(err(br#"{"ts":1,"bid":"9"}"#).contains("`bid` is not a number"));
    assert!(err(br#"{"ts":1,"#).contains("invalid JSON"));
    assert!(err(br#"{"ts":1e300}"#).contains("out of range"));
    let long = format!(r#"{{"ts":1,"ad_id":"{}"}}"#, "k".repeat(80));
    assert!(p.parse(long.as_bytes()).is_ok(), "long keys are fine now");
    assert!(p.parse(br#"{"ts":1}"#).is_ok());
}

#[test]
fn an_untimed_parser_needs_no_time_field_and_still_refuses_bad_lines() {
    let binding = Binding {
        port: 0,
        key: vec![path("ad_id")],
        values: vec![(path("bid"), SlotUse::Number)],
        row: false,
    };
    let mut p = RecordParser::untimed(&[binding]).unwrap();
    // A `ts` field is just a field: neither read as time nor required.
    for line in [
        &br#"{"ad_id":"a","bid":5,"ts":1700}"#[..],
        br#"{"ad_id":"a","bid":5}"#,
    ] {
        assert_eq!(p.parse(line).unwrap(), NO_EVENT_TIME);
        assert_eq!(rec(&p).value(0), Value::Int(5));
        assert_eq!(rec(&p).key(), b"\"a\"");
    }
    assert!(p
        .parse(br#"{"ad_id":"a","#)
        .unwrap_err()
        .0
        .contains("invalid JSON"));
    assert!(p
        .parse(br#"{"bid":"9"}"#)
        .unwrap_err()
        .0
        .contains("`bid` is not a number"));
}

#[test]
fn array_indexes_in_key_paths_are_refused_with_a_reason() {
    let e = RecordParser::keyed(&[Binding {
        port: 0,
        key: vec![path("items[0].sku")],
        values: Vec::new(),
        row: false,
    }])
    .err()
    .unwrap();
    assert!(e.contains("array indexes"), "{e}");
}

#[test]
fn count_distinct_hashes_numbers_by_value_not_spelling() {
    let mut p = RecordParser::keyed(&[Binding {
        port: 0,
        key: Vec::new(),
        values: vec![(path("v"), SlotUse::Hash)],
        row: false,
    }])
    .unwrap();
    let mut hash_of = |v: &str| {
        p.parse_at(format!(r#"{{"v":{v}}}"#).as_bytes(), 0).unwrap();
        match rec(&p).value(0) {
            Value::Hash(h) => h,
            other => panic!("{v}: {other:?}"),
        }
    };
    let same = |a: &[&str], hash_of: &mut dyn FnMut(&str) -> u64| {
        let hs: Vec<u64> = a.iter().map(|v| hash_of(v)).collect();
        assert!(hs.iter().all(|&h| h == hs[0]), "{a:?} are one value");
        hs[0]
    };
    let two_and_a_half = same(&["2.5", "2.50", "25e-1", "0.25E1"], &mut hash_of);
    let two = same(&["2", "2.0", "2.000", "0.2e1"], &mut hash_of);
    let zero = same(&["0", "-0", "0.00", "-0.0"], &mut hash_of);
    let big = same(
        &["12345678901234567890", "12345678901234567890.00"],
        &mut hash_of,
    );
    let distinct = [
        two_and_a_half,
        two,
        zero,
        big,
        hash_of("-2.5"),
        hash_of("\"2.5\""),
    ];
    let set: std::collections::HashSet<u64> = distinct.iter().copied().collect();
    assert_eq!(
        set.len(),
        distinct.len(),
        "different values, and a string is not a number"
    );
    // The hash is the one `count_distinct` gives a number that reaches it unhashed.
    assert_eq!(
        two,
        crate::record::event::number_hash(Value::Int(2)).unwrap()
    );
    assert_eq!(
        two_and_a_half,
        crate::record::event::number_hash(Value::Dec(Decimal::from_str("2.50").unwrap())).unwrap()
    );
    // An integer token keeps the hash it always had: its bytes.
    assert_eq!(hash_of("-17"), hash_key(b"-17"));
}

#[test]
fn a_reader_of_the_source_line_binds_from_the_spans_the_source_kept_as_a_scan_would() {
    let bindings = [
        Binding {
            port: 1,
            key: vec![path("ad_id"), path("user.country")],
            values: vec![
                (path("bid"), SlotUse::Number),
                (path("user.id"), SlotUse::Hash),
            ],
            row: true,
        },
        Binding {
            port: 2,
            key: vec![path("n")],
            values: vec![(path("ts"), SlotUse::Number)],
            row: false,
        },
    ];
    let mut source = RecordParser::new("ts", TimeUnit::Millis, &[]).unwrap();
    // A filter on `bid` kept first, as the runtime does.
    source.keep_fields(&["bid".to_string()]).unwrap();
    let mut kept = RecordParser::keyed(&bindings).unwrap();
    let map = source.keep_fields(&kept.top_fields()).unwrap();
    kept.read_from_kept(&map);
    assert!(kept.from_kept.is_some());
    let mut scan = RecordParser::keyed(&bindings).unwrap();
    let lines: [&[u8]; 6] = [
        br#"{"ts":5,"ad_id":"a\u0062","bid":2.50,"user":{"country":"nl","id":"u\"1"},"n":7}"#,
        br#"{"n":null,"user":{"id":3},"ts":6,"bid":1}"#,
        br#" {"bid":-1e3,"ad_id":"x","ts":7,"user":"flat","n":[1,2]} "#,
        br#"{"ts":8,"ad_id":"x","bid":3,"user":{"country":{"deep":1}},"n":"1"}"#,
        br#"{"ts":9}"#,
        br#"{"ts":10,"ad_id":"a","bid":4,"n":1,"extra":{"ad_id":"no"}}"#,
    ];
    for line in lines {
        let ts = source.parse(line).unwrap();
        kept.parse_kept(line, source.kept(), ts).unwrap();
        scan.parse_at(line, ts).unwrap();
        for (b, binding) in bindings.iter().enumerate() {
            let a = Rec::parse(&kept.events[b], &kept.payloads[b].bytes).unwrap();
            let e = Rec::parse(&scan.events[b], &scan.payloads[b].bytes).unwrap();
            let text = String::from_utf8_lossy(line);
            assert_eq!(a.ev.ts, e.ev.ts, "{text}");
            assert_eq!(a.ev.hash, e.ev.hash, "{text}");
            assert_eq!(a.ev.flags, e.ev.flags, "{text}");
            assert_eq!(a.key(), e.key(), "{text}");
            assert_eq!(kept.payloads[b].bytes, scan.payloads[b].bytes, "{text}");
            for v in 0..binding.values.len() {
                assert_eq!(a.value(v), e.value(v), "{text}");
            }
        }
    }
    // Without the source's spans (another parser), it scans the line itself.
    kept.parse_kept(lines[0], None, 5).unwrap();
    scan.parse_at(lines[0], 5).unwrap();
    assert_eq!(kept.events[0].hash, scan.events[0].hash);
}
