//! Tests of the NDJSON scanner and decoders: hand-written cases for each rule in the module doc,
//! and property tests that check [`super::extract`] against serde_json on generated objects.

mod shape;

use super::swar::parse8;
use super::*;
use proptest::prelude::*;
use serde_json::{Map, Value};
use std::borrow::Cow;

fn run<'a>(line: &'a [u8], names: &[&str]) -> Result<Vec<Option<Token<'a>>>, JsonError> {
    let fs = FieldSet::new(names);
    let mut out = vec![None; fs.len()];
    extract(line, &fs, &mut out).map(|()| out)
}
fn raw<'a>(t: &Option<Token<'a>>) -> Option<&'a str> {
    t.map(|t| std::str::from_utf8(t.raw).unwrap())
}

#[test]
fn click_line_fields_and_values() {
    let line = br#"{"ad_id":"ad-123","user_id":"u-456","ts":1700000000123,"bid":250}"#;
    let out = run(line, &["ts", "ad_id", "bid", "user_id", "absent"]).unwrap();
    let got: Vec<_> = out.iter().map(raw).collect();
    let want = [
        Some("1700000000123"),
        Some(r#""ad-123""#),
        Some("250"),
        Some(r#""u-456""#),
        None,
    ];
    assert_eq!(got, want);
    let ts = out[0].unwrap();
    assert_eq!((ts.kind, ts.has_escape), (TokenKind::Number, false));
    assert_eq!(parse_number(ts.raw), Ok(Number::Int(1_700_000_000_123)));
    assert!(matches!(
        unescape(out[1].unwrap().raw),
        Ok(Cow::Borrowed("ad-123"))
    ));
}

#[test]
fn whitespace_cr_nesting_and_escaped_keys() {
    let line = b" {\"x\" : [ 1 , {\"a\":[]} ] ,\t\"a\\u0064\":null, \"a\\\"b\": {\"q\":{}} }\r";
    let out = run(line, &["ad", "x", "a\"b", "zz"]).unwrap();
    let got: Vec<_> = out.iter().map(raw).collect();
    assert_eq!(
        got,
        [
            Some("null"),
            Some(r#"[ 1 , {"a":[]} ]"#),
            Some(r#"{"q":{}}"#),
            None
        ]
    );
    assert_eq!(out[1].unwrap().kind, TokenKind::Array);
    assert_eq!(out[2].unwrap().kind, TokenKind::Object);
    let lits = run(
        br#"{"t":true,"f":false,"e":{},"s":"\ud83d\ude00 \u00e9 \/"}"#,
        &["t", "f", "e", "s"],
    );
    let kinds: Vec<_> = lits.unwrap().iter().map(|t| t.unwrap().kind).collect();
    let want = [
        TokenKind::True,
        TokenKind::False,
        TokenKind::Object,
        TokenKind::String,
    ];
    assert_eq!(kinds, want);
    assert_eq!(run(b"{}", &["a"]).unwrap()[0].map(|t| t.kind), None);
}

#[test]
fn malformed_lines_rejected_where_serde_rejects() {
    use JsonError::*;
    let exp = |expected, at| Expected { expected, at };
    let cases: &[(&[u8], JsonError)] = &[
        (b"", Empty),
        (b" \r", Empty),
        (b"{", Truncated { at: 1 }),
        (br#"{"a":1,}"#, exp("a string key", 7)),
        (br#"{"a":01}"#, InvalidNumber { at: 6 }),
        (br#"{"a":1.}"#, InvalidNumber { at: 7 }),
        (br#"{"a":-}"#, InvalidNumber { at: 6 }),
        (br#"{"a":1e}"#, InvalidNumber { at: 7 }),
        (br#"{"a":+1}"#, exp("a value", 5)),
        (br#"{"a":1e400}"#, NumberOutOfRange { at: 5 }),
        (br#"{"a":tru}"#, InvalidLiteral { at: 5 }),
        (br#"{"a":nul"#, InvalidLiteral { at: 5 }),
        (br#"{"a":"\x"}"#, InvalidEscape { at: 6 }),
        (br#"{"a":"\u12G4"}"#, InvalidEscape { at: 10 }),
        (br#"{"a":"\ud800"}"#, LoneSurrogate { at: 6 }),
        (br#"{"a":"\udc00"}"#, LoneSurrogate { at: 6 }),
        (br#"{"a":"\ud800\u0041"}"#, LoneSurrogate { at: 6 }),
        (b"{\"a\":\"b\x01\"}", ControlCharacter { at: 7 }),
        (b"{\"a\":\"\xff\"}", InvalidUtf8 { at: 6 }),
        (b"{\"a\":\"\xc0\xaf\"}", InvalidUtf8 { at: 6 }),
        (b"{\"a\":\"\xed\xa0\x80\"}", InvalidUtf8 { at: 6 }),
        (b"{\"a\":\"\xe2\x82\"}", InvalidUtf8 { at: 6 }),
        (b"{\"\xf4\x90\x80\x80\":1}", InvalidUtf8 { at: 2 }),
        (br#"[1,2]"#, NotAnObject { at: 0 }),
        (br#"{"a":1} x"#, TrailingCharacters { at: 8 }),
        (br#"{"a":1}}"#, TrailingCharacters { at: 7 }),
        (br#"{"a" 1}"#, exp("':'", 5)),
        (br#"{"a":1 "b":2}"#, exp("',' or '}'", 7)),
        (br#"{1:2}"#, exp("a string key", 1)),
        (br#"{"a":[1,2}"#, exp("',' or ']'", 9)),
        (br#"{"a":{"b":1]}"#, exp("',' or '}'", 11)),
        (br#"{"a":{"b"}}"#, exp("':'", 9)),
        (br#"{"a":[1,]}"#, exp("a value", 8)),
        (br#"{"a":"abc"#, Truncated { at: 9 }),
        (br#"{"a":[{"#, Truncated { at: 7 }),
    ];
    for (line, err) in cases {
        let shown = String::from_utf8_lossy(line);
        assert_eq!(run(line, &["a"]).err(), Some(*err), "line {shown}");
        let serde = serde_json::from_slice::<Map<String, Value>>(line);
        assert!(serde.is_err(), "serde accepts {shown}");
    }
}

#[test]
fn duplicate_wanted_field_is_an_error_unwanted_is_fine() {
    let dup = JsonError::DuplicateField { at: 7 };
    assert_eq!(run(br#"{"a":1,"a":2}"#, &["a"]).err(), Some(dup));
    assert_eq!(run(br#"{"a":1,"\u0061":2}"#, &["a"]).err(), Some(dup));
    let out = run(br#"{"a":1,"b":2,"b":3}"#, &["a"]).unwrap();
    assert_eq!(raw(&out[0]), Some("1"));
}

#[test]
fn depth_limit_is_64_including_the_line_object() {
    let nest = |n: usize| format!("{{\"a\":{}1{}}}", "[".repeat(n), "]".repeat(n));
    assert!(run(nest(MAX_DEPTH - 1).as_bytes(), &["a"]).is_ok());
    let too_deep = JsonError::TooDeep {
        at: 5 + MAX_DEPTH - 1,
    };
    assert_eq!(run(nest(MAX_DEPTH).as_bytes(), &[]).err(), Some(too_deep));
    let objs = |n: usize| format!("{{{}}}", "\"k\":{".repeat(n) + &"}".repeat(n));
    assert!(run(objs(MAX_DEPTH - 1).as_bytes(), &["k"]).is_ok());
    assert!(matches!(
        run(objs(MAX_DEPTH).as_bytes(), &[]),
        Err(JsonError::TooDeep { .. })
    ));
}

#[test]
fn parse_number_cases() {
    use Number::*;
    let ok: &[(&str, Number)] = &[
        ("0", Int(0)),
        ("-0", Int(0)),
        ("250", Int(250)),
        ("123456789012345678", Int(123_456_789_012_345_678)),
        ("9223372036854775807", Int(i64::MAX)),
        ("-9223372036854775808", Int(i64::MIN)),
        ("9223372036854775808", Float(9_223_372_036_854_775_808.0)),
        ("1.5", Float(1.5)),
        ("1e3", Float(1000.0)),
        ("-2.5E-3", Float(-0.0025)),
        ("1e-400", Float(0.0)),
    ];
    for (s, n) in ok {
        assert_eq!(parse_number(s.as_bytes()), Ok(*n), "{s}");
    }
    for bad in [
        "", "01", "-01", "1.", "+1", ".5", "-", "1e", "1 ", "0x1", "1e400", "NaN",
    ] {
        assert!(parse_number(bad.as_bytes()).is_err(), "{bad}");
    }
}

#[test]
fn integer_fast_paths_every_length_and_neighbour_byte() {
    let all = "1987654320123456789";
    for n in 1..=all.len() {
        for neg in [false, true] {
            let text = format!("{}{}", if neg { "-" } else { "" }, &all[..n]);
            let want = text.parse::<i64>().unwrap();
            assert_eq!(
                parse_number(text.as_bytes()),
                Ok(Number::Int(want)),
                "{text}"
            );
            // Digit runs end exactly at the first non-digit, whatever byte it is.
            for stop in [b':', b'/', b'}', b' ', 0xFA, 0xFF, 0x00] {
                let mut line = text.clone().into_bytes();
                line.push(stop);
                line.extend_from_slice(b"12345678");
                assert_eq!(
                    digits_end(&line, usize::from(neg)),
                    text.len(),
                    "{text} {stop}"
                );
            }
        }
    }
    assert_eq!(parse8(u64::from_le_bytes(*b"01234567")), 1_234_567);
    assert_eq!(
        parse_number(b"1234567a"),
        Err(JsonError::InvalidNumber { at: 7 })
    );
}

#[test]
fn unescape_and_canonical() {
    assert_eq!(
        unescape(br#""a\"\\\/\b\f\n\r\t""#).unwrap(),
        "a\"\\/\x08\x0c\n\r\t"
    );
    assert_eq!(unescape(br#""\ud83d\ude00\u00e9""#).unwrap(), "😀é");
    assert!(unescape(br#""a"b""#).is_err());
    assert!(unescape(br#""a\""#).is_err());
    assert!(unescape(b"abc").is_err());
    let cases: &[(&[u8], &[u8])] = &[
        (br#""\u0061""#, br#""a""#),
        (br#""a\/b""#, br#""a/b""#),
        (br#""\u001F\u0000\n\"\\""#, br#""\u001f\u0000\n\"\\""#),
        (br#""\u00e9\u007f""#, "\"é\x7f\"".as_bytes()),
    ];
    let mut buf = Vec::new();
    for (raw_tok, want) in cases {
        let tok = Token {
            kind: TokenKind::String,
            raw: raw_tok,
            has_escape: true,
        };
        assert_eq!(canonical(&tok, &mut buf).unwrap(), *want);
        let serde = serde_json::to_vec(&unescape(raw_tok).unwrap()).unwrap();
        assert_eq!(serde, *want);
    }
    let num = Token {
        kind: TokenKind::Number,
        raw: b"1.0",
        has_escape: false,
    };
    assert_eq!(canonical(&num, &mut buf).unwrap(), b"1.0");
}

#[test]
fn rfc3339_known_values() {
    let cases: &[(&str, Option<i64>)] = &[
        ("1970-01-01T00:00:00Z", Some(0)),
        ("2023-11-14T22:13:20.123Z", Some(1_700_000_000_123)),
        ("2023-11-15T00:13:20.123+02:00", Some(1_700_000_000_123)),
        ("2023-11-14t16:43:20.1239-05:30", Some(1_700_000_000_123)),
        ("2000-02-29T00:00:00Z", Some(951_782_400_000)),
        ("2024-02-29 23:59:59z", Some(1_709_251_199_000)),
        ("1900-03-01T00:00:00Z", Some(-2_203_891_200_000)),
        ("1960-06-15T12:34:56Z", Some(-301_231_504_000)),
        ("1969-12-31T23:59:59.999Z", Some(-1)),
        ("1969-12-31T23:59:59.9995Z", Some(-1)),
        ("1969-12-31T23:59:59.000000001Z", Some(-1000)),
        ("0000-01-01T00:00:00Z", Some(-62_167_219_200_000)),
        ("9999-12-31T23:59:59.999999999Z", Some(253_402_300_799_999)),
        ("2016-12-31T23:59:60Z", Some(1_483_228_800_000)),
        ("1900-02-29T00:00:00Z", None),
        ("2100-02-29T00:00:00Z", None),
        ("2023-04-31T00:00:00Z", None),
        ("2023-13-01T00:00:00Z", None),
        ("2023-11-14T24:00:00Z", None),
        ("2023-11-14T22:13:20", None),
        ("2023-11-14T22:13:20.Z", None),
        ("2023-11-14T22:13:20.1234567891Z", None),
        ("2023-11-14T22:13:20+2:00", None),
        ("2023-11-14T22:13:20Z ", None),
        ("2023-11-14", None),
    ];
    for (s, want) in cases {
        assert_eq!(parse_rfc3339_ms(s.as_bytes()), *want, "{s}");
    }
}

// ---- property tests against serde_json and a naive calendar ----

const KEYS: &[&str] = &[
    "a",
    "b",
    "ad_id",
    "ts",
    "a\"b",
    "é",
    "\u{1}",
    "k\\",
    "\u{1F600}",
];

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(KEYS).prop_map(String::from),
        "[a-c]{1,2}",
        any::<String>()
    ]
}
fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        any::<String>().prop_map(Value::String),
        r#"[a-z\\"\x00-\x1f/é😀]{0,8}"#.prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((arb_key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}
fn arb_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((arb_key(), arb_value()), 0..8).prop_map(|kv| kv.into_iter().collect())
}
fn wanted(obj: &Map<String, Value>, fixed: Vec<&str>, pick: usize) -> Vec<String> {
    let mut w: Vec<String> = fixed.into_iter().map(String::from).collect();
    if let Some(k) = obj.keys().nth(pick % obj.len().max(1)) {
        if !w.contains(k) {
            w.push(k.clone());
        }
    }
    w
}

/// Every wanted field is found iff serde_json has it, and its token means the same value.
fn check_tokens(
    map: &Map<String, Value>,
    names: &[String],
    out: &[Option<Token<'_>>],
) -> Result<(), TestCaseError> {
    for (name, tok) in names.iter().zip(out) {
        let (v, tok) = match (map.get(name), tok) {
            (None, None) => continue,
            (Some(v), Some(t)) => (v, t),
            (v, t) => return Err(TestCaseError::fail(format!("{name}: serde {v:?} vs {t:?}"))),
        };
        prop_assert_eq!(&serde_json::from_slice::<Value>(tok.raw).unwrap(), v);
        let kind = match v {
            Value::Null => TokenKind::Null,
            Value::Bool(true) => TokenKind::True,
            Value::Bool(false) => TokenKind::False,
            Value::Number(_) => TokenKind::Number,
            Value::String(_) => TokenKind::String,
            Value::Array(_) => TokenKind::Array,
            Value::Object(_) => TokenKind::Object,
        };
        prop_assert_eq!(tok.kind, kind);
        if let Value::String(s) = v {
            prop_assert_eq!(&unescape(tok.raw).unwrap(), s);
            let mut buf = Vec::new();
            prop_assert_eq!(
                canonical(tok, &mut buf).unwrap(),
                serde_json::to_vec(s).unwrap()
            );
        }
        if let Value::Number(n) = v {
            match parse_number(tok.raw).unwrap() {
                Number::Int(i) => prop_assert_eq!(n.as_i64(), Some(i)),
                Number::Float(f) => {
                    prop_assert!(n.as_i64().is_none());
                    let g = n.as_f64().unwrap();
                    prop_assert!((f - g).abs() <= g.abs() * 1e-15, "{} vs {}", f, g);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn extract_agrees_with_serde_on_valid_objects(
        obj in arb_object(),
        fixed in prop::sample::subsequence(KEYS, 0..=KEYS.len()),
        pick in any::<usize>(),
        pretty in any::<bool>(),
    ) {
        let line = if pretty { serde_json::to_string_pretty(&obj) } else { serde_json::to_string(&obj) };
        let line = line.unwrap();
        let map: Map<String, Value> = serde_json::from_str(&line).unwrap();
        let names = wanted(&obj, fixed, pick);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let out = run(line.as_bytes(), &refs);
        prop_assert!(out.is_ok(), "{:?} on {}", out.err(), line);
        check_tokens(&map, &names, &out.unwrap())?;
    }

    #[test]
    fn mutated_lines_accepted_only_if_serde_accepts(
        obj in arb_object(),
        fixed in prop::sample::subsequence(KEYS, 0..=KEYS.len()),
        pick in any::<usize>(),
        edits in prop::collection::vec((0u8..3, any::<prop::sample::Index>(), prop_oneof![
            prop::sample::select(b"{}[],:\"\\0123456789-+.eEtrufalsn dD8u \t\r\n\x00\x1f\x7f\x80\xbf\xc3\xe2\xed\xf0\xff/".to_vec()),
            any::<u8>(),
        ]), 1..4),
    ) {
        let mut line = serde_json::to_vec(&obj).unwrap();
        for (op, at, byte) in edits {
            let i = at.index(line.len() + 1);
            match op {
                0 if i < line.len() => line[i] = byte,
                1 if i < line.len() => { line.remove(i); }
                _ => line.insert(i, byte),
            }
        }
        let names = wanted(&obj, fixed, pick);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let ours = run(&line, &refs);
        let serde = serde_json::from_slice::<Value>(&line);
        let shown = String::from_utf8_lossy(&line);
        match (ours, serde) {
            (Ok(out), Ok(Value::Object(map))) => check_tokens(&map, &names, &out)?,
            (Ok(_), other) => prop_assert!(false, "accepted {} but serde says {:?}", shown, other),
            (Err(JsonError::DuplicateField { .. } | JsonError::TooDeep { .. }), _) => {}
            (Err(e), Ok(Value::Object(_))) => prop_assert!(false, "rejected {} ({}) but serde accepts", shown, e),
            (Err(_), _) => {}
        }
    }

    #[test]
    fn rfc3339_matches_naive_calendar(
        y in 0i64..=9999, m in 1i64..=12, d in 1i64..=31, h in 0i64..24, mi in 0i64..60, s in 0i64..60,
        frac in "[0-9]{0,9}", off in prop::option::of((any::<bool>(), 0i64..24, 0i64..60)),
    ) {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let len = |y: i64, m: i64| [31, if leap(y) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m as usize - 1];
        prop_assume!(d <= len(y, m));
        let mut days: i64 = (1..m).map(|mm| len(y, mm)).sum::<i64>() + d - 1;
        if y >= 1970 {
            days += (1970..y).map(|yy| if leap(yy) { 366 } else { 365 }).sum::<i64>();
        } else {
            days -= (y..1970).map(|yy| if leap(yy) { 366 } else { 365 }).sum::<i64>();
        }
        let mut text = format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}");
        let mut ms = 0;
        if !frac.is_empty() {
            text += &format!(".{frac}");
            ms = format!("{frac:0<9}")[..3].parse::<i64>().unwrap();
        }
        let off_min = match off {
            None => { text += "Z"; 0 }
            Some((neg, oh, om)) => {
                text += &format!("{}{oh:02}:{om:02}", if neg { '-' } else { '+' });
                if neg { -(oh * 60 + om) } else { oh * 60 + om }
            }
        };
        let want = (days * 86_400 + h * 3600 + mi * 60 + s - off_min * 60) * 1000 + ms;
        prop_assert_eq!(parse_rfc3339_ms(text.as_bytes()), Some(want), "{}", text);
    }
}
