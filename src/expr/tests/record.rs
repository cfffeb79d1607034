//! Record access: `RawJson` must read the same values as `serde_json::Value` on valid JSON, read
//! numbers exactly, and fail (never panic) on malformed lines.

use rust_decimal::Decimal;

use crate::expr::{FieldPath, RawJson, Record, RecordError, Value};

const DOCS: &[&str] = &[
    r#"{"a": 1, "b": "x", "c": null, "d": true, "e": false}"#,
    r#"  { "a" : { "b" : { "c" : [ 10 , 20 , [ 30 , { "d" : "deep" } ] ] } } }  "#,
    r#"{"s": "q\"uote\\slash\/ \n\t\r\b\f \u00e9\u20ac \ud83d\ude00", "k\"ey": 1, "a\\b": 2}"#,
    r#"{"skip": {"x": [1, {"y": "}]\"{["}], "z": "]"}, "a": "after"}"#,
    r#"{"a": 1, "a": 2, "b": {"c": 1}, "b": {"d": 2}}"#,
    r#"{"n": [-1, 0, -12, 9223372036854775807, -9223372036854775808, 9223372036854775808, 18446744073709551615]}"#,
    r#"{"n": [0.5, -1.25, 19.99, 1e2, 1E-2, -2.5e+3, 1.083421, 123456789.123456]}"#,
    r#"{"arr": [], "obj": {}, "mixed": [1, "two", null, [3], {"four": 4}], "a": "é日本"}"#,
    r#"{"a.b": 1, "a": {"b": 2}, "": 3, "uni\u00e9": 4, "unié": 5}"#,
    r#"[1, 2, 3]"#,
    r#""just a string""#,
];

const PATHS: &[&str] = &[
    "a",
    "b",
    "c",
    "d",
    "e",
    "s",
    "z",
    "skip",
    "a.b",
    "a.b.c",
    "a.b.c[0]",
    "a.b.c[1]",
    "a.b.c[2]",
    "a.b.c[2][0]",
    "a.b.c[2][1].d",
    "a.b.c[3]",
    "a[0]",
    "b.c",
    "b.d",
    "n[0]",
    "n[1]",
    "n[2]",
    "n[3]",
    "n[4]",
    "n[5]",
    "n[6]",
    "n[7]",
    "n[8]",
    "arr[0]",
    "obj.x",
    "mixed[0]",
    "mixed[1]",
    "mixed[2]",
    "mixed[3]",
    "mixed[3][0]",
    "mixed[4]",
    "mixed[4].four",
    "mixed[5]",
    "unié",
    "missing",
    "missing.deeper[3]",
];

fn same(a: &Result<Value<'_>, RecordError>, b: &Result<Value<'_>, RecordError>) -> bool {
    match (a, b) {
        (Ok(Value::Decimal(x)), Ok(Value::Decimal(y))) => x == y,
        _ => a == b,
    }
}

#[test]
fn raw_json_reads_what_serde_json_reads() {
    let mut checked = 0;
    for doc in DOCS {
        let parsed: serde_json::Value = serde_json::from_str(doc).unwrap();
        let raw = RawJson(doc.as_bytes());
        for path in PATHS {
            let path = FieldPath::parse(path).unwrap();
            let (from_serde, from_raw) = (Record::get(&parsed, &path), raw.get(&path));
            assert!(
                same(&from_serde, &from_raw),
                "{doc} {path}: serde {from_serde:?} raw {from_raw:?}"
            );
            checked += usize::from(!matches!(from_raw, Ok(Value::Null)));
        }
    }
    assert!(checked > 40, "only {checked} paths found something");
}

fn raw(doc: &str, path: &str) -> Result<Value<'static>, RecordError> {
    RawJson(doc.as_bytes())
        .get(&FieldPath::parse(path).unwrap())
        .map(Value::into_owned)
}

#[test]
fn raw_json_values() {
    let doc = DOCS[2];
    assert_eq!(
        raw(doc, "s"),
        Ok(Value::from(
            "q\"uote\\slash/ \n\t\r\u{8}\u{c} é€ 😀".to_owned()
        ))
    );
    assert_eq!(raw(DOCS[3], "a"), Ok(Value::str("after")));
    assert_eq!(
        raw(DOCS[4], "a"),
        Ok(Value::Int(2)),
        "the last duplicate key wins"
    );
    assert_eq!(raw(DOCS[4], "b.c"), Ok(Value::Null));
    assert_eq!(raw(DOCS[8], "unié"), Ok(Value::Int(5)));
    assert_eq!(raw(DOCS[8], "a.b"), Ok(Value::Int(2)));
    assert_eq!(
        raw(DOCS[7], "obj"),
        Err(RecordError::NotScalar { kind: "an object" })
    );
}

#[test]
fn raw_json_numbers_are_exact() {
    let dec = |s: &str| Ok(Value::Decimal(Decimal::from_str_exact(s).unwrap()));
    let doc = r#"{"a": 0.1, "b": 1.50, "c": 0.1000000000000000055511151231, "m": 0.10000000000000000555111512312, "d": 1e2, "e": 1.5e-3,
        "f": 9223372036854775808, "g": -0, "h": 12E+1, "i": 0e400, "j": 1e29, "k": 1e-29, "l": -7}"#;
    assert_eq!(raw(doc, "a"), dec("0.1"));
    let b = raw(doc, "b");
    assert!(
        matches!(b, Ok(Value::Decimal(d)) if d.to_string() == "1.50"),
        "{b:?}"
    );
    assert_eq!(raw(doc, "c"), dec("0.1000000000000000055511151231"));
    assert_eq!(
        raw(doc, "m"),
        Err(RecordError::Number {
            text: "0.10000000000000000555111512312".into()
        })
    );
    assert_eq!(raw(doc, "d"), dec("100"));
    assert_eq!(raw(doc, "e"), dec("0.0015"));
    assert_eq!(raw(doc, "f"), dec("9223372036854775808"));
    assert_eq!(raw(doc, "g"), Ok(Value::Int(0)));
    assert_eq!(raw(doc, "h"), dec("120"));
    assert_eq!(raw(doc, "i"), dec("0"));
    assert_eq!(
        raw(doc, "j"),
        Err(RecordError::Number {
            text: "1e29".into()
        })
    );
    assert_eq!(
        raw(doc, "k"),
        Err(RecordError::Number {
            text: "1e-29".into()
        })
    );
    assert_eq!(raw(doc, "l"), Ok(Value::Int(-7)));
}

#[test]
fn serde_json_numbers_come_back_as_shortest_decimals() {
    let parsed: serde_json::Value =
        serde_json::from_str(r#"{"a": 19.99, "b": 1.50, "c": 1e300}"#).unwrap();
    let get = |p: &str| Record::get(&parsed, &FieldPath::parse(p).unwrap()).map(Value::into_owned);
    assert!(matches!(get("a"), Ok(Value::Decimal(d)) if d.to_string() == "19.99"));
    assert!(matches!(get("b"), Ok(Value::Decimal(d)) if d.to_string() == "1.5"));
    assert!(matches!(get("c"), Err(RecordError::Number { .. })));
    // serde_json parses `-0` as the float -0.0; RawJson reads it as the integer it is written as.
    let zero: serde_json::Value = serde_json::from_str(r#"{"z": -0}"#).unwrap();
    let path = FieldPath::parse("z").unwrap();
    assert!(matches!(Record::get(&zero, &path), Ok(Value::Decimal(d)) if d.is_zero()));
    assert_eq!(raw(r#"{"z": -0}"#, "z"), Ok(Value::Int(0)));
}

#[test]
fn malformed_lines_are_errors() {
    let cases = [
        (r#"{"a" 1}"#, "a"),
        (r#"{"a": 1,}"#, "b"),
        (r#"{"a": 01}"#, "a"),
        (r#"{"a": 1.}"#, "a"),
        (r#"{"a": -}"#, "a"),
        (r#"{"a": 1e}"#, "a"),
        (r#"{"a": tru}"#, "a"),
        (r#"{"a": "x\q"}"#, "a"),
        (r#"{"a": "\ud800"}"#, "a"),
        (r#"{"a": "\ud800\u0041"}"#, "a"),
        (r#"{"a": "unterminated}"#, "a"),
        ("{\"a\": \"ctrl\u{1}\"}", "a"),
        (r#"{"a": [1, 2"#, "b"),
        (r#"{a: 1}"#, "a"),
        (r#"{"a": 1 "b": 2}"#, "b"),
    ];
    for (doc, path) in cases {
        let result = raw(doc, path);
        assert!(
            matches!(result, Err(RecordError::Malformed { .. })),
            "{doc}: {result:?}"
        );
    }
    let bad_utf8 = b"{\"a\": \"\xff\"}";
    let line = RawJson(bad_utf8);
    let result = line.get(&FieldPath::parse("a").unwrap());
    assert_eq!(
        result,
        Err(RecordError::Malformed {
            offset: 7,
            what: "invalid UTF-8 in a string"
        })
    );
}

#[test]
fn every_prefix_of_a_line_is_handled_without_panicking() {
    for doc in DOCS {
        for end in 0..=doc.len() {
            let line = RawJson(&doc.as_bytes()[..end]);
            for path in PATHS {
                let _ = line.get(&FieldPath::parse(path).unwrap());
            }
        }
    }
}
