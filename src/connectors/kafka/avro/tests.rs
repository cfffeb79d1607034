use super::*;

const ORDER_V1: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"note","type":["null","string"],"default":null},
  {"name":"qty","type":"int"}]}"#;

/// V2 adds a field with a default, drops `note` and promotes `qty` to long.
const ORDER_V2: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"id","type":"long"},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"qty","type":"long"},
  {"name":"currency","type":"string","default":"EUR"}]}"#;

/// Avro's zig-zag varint, written by hand so the tests do not lean on the encoder under test.
fn zz(n: i64, out: &mut Vec<u8>) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// The V1 datum of (id 7, amount -12.34, ts 1700000000000, note "hi", qty 3), by hand.
fn v1_bytes() -> Vec<u8> {
    let mut b = Vec::new();
    zz(7, &mut b);
    // -1234 as two's complement big-endian: 0xFB 0x2E.
    zz(2, &mut b);
    b.extend_from_slice(&[0xFB, 0x2E]);
    zz(1_700_000_000_000, &mut b);
    zz(1, &mut b); // union branch 1: string
    zz(2, &mut b);
    b.extend_from_slice(b"hi");
    zz(3, &mut b);
    b
}

fn decode(writer: &str, reader: &str, datum: &[u8]) -> Result<String, String> {
    let w = Schema::parse_str(writer).unwrap();
    let r = Schema::parse_str(reader).unwrap();
    let mut out = Vec::new();
    Known::new(&w, Some(&r), 1 << 20)?.read(datum, &mut out)?;
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn a_record_reads_as_exact_json() {
    assert_eq!(
        decode(ORDER_V1, ORDER_V1, &v1_bytes()).unwrap(),
        r#"{"id":7,"amount":-12.34,"ts":1700000000000,"note":"hi","qty":3}"#
    );
}

#[test]
fn an_old_record_reads_through_a_newer_reader_schema() {
    // Dropped `note`, `qty` promoted, `currency` from its default.
    assert_eq!(
        decode(ORDER_V1, ORDER_V2, &v1_bytes()).unwrap(),
        r#"{"id":7,"amount":-12.34,"ts":1700000000000,"qty":3,"currency":"EUR"}"#
    );
}

#[test]
fn truncated_and_garbage_datums_are_errors_not_panics() {
    let full = v1_bytes();
    for cut in 0..full.len() {
        assert!(
            decode(ORDER_V1, ORDER_V1, &full[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    // A huge string length must be refused, not allocated.
    let mut b = Vec::new();
    zz(1, &mut b);
    zz(2, &mut b);
    b.extend_from_slice(&[0, 1]);
    zz(0, &mut b);
    zz(1, &mut b);
    zz(i64::MAX / 4, &mut b);
    assert!(decode(ORDER_V1, ORDER_V1, &b).is_err());
}

proptest::proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
        let _ = decode(ORDER_V1, ORDER_V2, &bytes);
    }
}

#[test]
fn decimals_print_with_their_scale() {
    let cases = [
        ("0", 2, "0.00"),
        ("5", 3, "0.005"),
        ("-1234", 2, "-12.34"),
        ("42", 0, "42"),
        ("-5", 1, "-0.5"),
    ];
    for (unscaled, scale, want) in cases {
        let mut out = Vec::new();
        decode::decimal(
            &num_bigint::BigInt::from(unscaled.parse::<i64>().unwrap()).to_signed_bytes_be(),
            scale,
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            want,
            "{unscaled} at scale {scale}"
        );
    }
}

#[test]
fn decimal_text_scales_exactly_or_is_refused() {
    let u = |t: &str| from_json::unscaled(t, 2, 10).map(|n| n.to_string());
    assert_eq!(u("12.34").unwrap(), "1234");
    assert_eq!(u("-0.5").unwrap(), "-50");
    assert_eq!(u("7").unwrap(), "700");
    assert_eq!(u("1.5e1").unwrap(), "1500");
    assert_eq!(u("12.340").unwrap(), "1234");
    assert!(u("12.345")
        .unwrap_err()
        .contains("2 digits after the point"));
    assert!(u("123456789.00")
        .unwrap_err()
        .contains("more than 10 digits"));
    assert!(u("abc").is_err());
    assert!(u("\"1\"").is_err());
    assert!(u("1e999999").is_err());
}

#[test]
fn a_result_line_encodes_to_the_hand_written_wire_bytes() {
    let enc = AvroEncoder::with_schema(42, ORDER_V1).unwrap();
    let mut out = Vec::new();
    enc.encode(
        br#"{"qty":3,"note":"hi","ts":1700000000000,"amount":-12.34,"id":7,"extra":1}"#,
        &mut out,
    )
    .unwrap();
    let mut want = vec![0, 0, 0, 0, 42];
    want.extend(v1_bytes());
    assert_eq!(out, want);
}

#[test]
fn a_missing_nullable_field_is_null_and_a_missing_required_one_is_an_error() {
    let enc = AvroEncoder::with_schema(1, ORDER_V1).unwrap();
    let mut out = Vec::new();
    enc.encode(br#"{"id":1,"amount":1,"ts":0,"qty":1}"#, &mut out)
        .unwrap();
    assert_eq!(split_wire(&out).unwrap().0, 1);
    assert_eq!(
        decode(ORDER_V1, ORDER_V1, split_wire(&out).unwrap().1).unwrap(),
        r#"{"id":1,"amount":1.00,"ts":0,"note":null,"qty":1}"#
    );
    let e = enc
        .encode(br#"{"id":1,"amount":1,"ts":0}"#, &mut out)
        .unwrap_err();
    assert!(e.contains("`.qty`") && e.contains("no default"), "{e}");
    let e = enc
        .encode(br#"{"id":"x","amount":1,"ts":0,"qty":1}"#, &mut out)
        .unwrap_err();
    assert!(e.contains("`.id`") && e.contains("expected a long"), "{e}");
    let e = enc
        .encode(br#"{"id":1,"amount":1.234,"ts":0,"qty":1}"#, &mut out)
        .unwrap_err();
    assert!(e.contains("`.amount`"), "{e}");
    assert!(enc.encode(b"not json", &mut out).is_err());
}

#[test]
fn nested_types_round_trip() {
    let schema = r#"{"type":"record","name":"R","fields":[
      {"name":"tags","type":{"type":"array","items":"string"}},
      {"name":"attrs","type":{"type":"map","values":"long"}},
      {"name":"kind","type":{"type":"enum","name":"K","symbols":["A","B"]}},
      {"name":"raw","type":"bytes"},
      {"name":"inner","type":{"type":"record","name":"I","fields":[{"name":"x","type":"double"}]}},
      {"name":"again","type":"I"},
      {"name":"day","type":{"type":"int","logicalType":"date"}}]}"#;
    let line = r#"{"tags":["a","b\"c"],"attrs":{"z":1,"a":-2},"kind":"B","raw":"AAEC/w==","inner":{"x":0.5},"again":{"x":-1.5},"day":19000}"#;
    let enc = AvroEncoder::with_schema(3, schema).unwrap();
    let mut out = Vec::new();
    enc.encode(line.as_bytes(), &mut out).unwrap();
    // Map entries come in the datum's order, which the encoder chose: compare as JSON values.
    let got: serde_json::Value =
        serde_json::from_str(&decode(schema, schema, &out[5..]).unwrap()).unwrap();
    let want: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(got, want);
    let e = enc
        .encode(line.replace("\"B\"", "\"C\"").as_bytes(), &mut out)
        .unwrap_err();
    assert!(e.contains("`.kind`") && e.contains("one of A, B"), "{e}");
}

#[test]
fn the_wire_header_is_checked() {
    assert_eq!(split_wire(&[0, 0, 0, 1, 2, 9]).unwrap(), (258, &[9u8][..]));
    assert!(split_wire(&[1, 0, 0, 0, 1])
        .unwrap_err()
        .contains("magic byte 1"));
    assert!(split_wire(&[0, 0]).unwrap_err().contains("5-byte header"));
    assert!(split_wire(&[]).is_err());
}

#[test]
fn base64_matches_the_rfc_examples() {
    for (raw, enc) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(base64(raw.as_bytes()), enc);
        assert_eq!(unbase64(enc).unwrap(), raw.as_bytes());
    }
    assert!(unbase64("a b").is_none());
}

#[test]
fn union_values_pick_the_branch_that_holds_them() {
    let schema =
        r#"{"type":"record","name":"U","fields":[{"name":"v","type":["null","long","string"]}]}"#;
    let enc = AvroEncoder::with_schema(1, schema).unwrap();
    let mut out = Vec::new();
    for (line, want) in [
        (r#"{"v":null}"#, r#"{"v":null}"#),
        (r#"{"v":5}"#, r#"{"v":5}"#),
        (r#"{"v":"x"}"#, r#"{"v":"x"}"#),
    ] {
        enc.encode(line.as_bytes(), &mut out).unwrap();
        assert_eq!(decode(schema, schema, &out[5..]).unwrap(), want);
    }
    assert!(enc.encode(br#"{"v":true}"#, &mut out).is_err());
}

#[test]
fn promotions_unions_enums_and_aliases_resolve_as_the_spec_says() {
    let w = r#"{"type":"record","name":"R","fields":[
      {"name":"a","type":"int"},{"name":"b","type":"long"},{"name":"c","type":"float"},
      {"name":"s","type":"string"},{"name":"u","type":["null","long"]},{"name":"v","type":"long"},
      {"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y","Z"]}},
      {"name":"old_name","type":"boolean"}]}"#;
    let r = r#"{"type":"record","name":"R","fields":[
      {"name":"a","type":"double"},{"name":"b","type":"float"},{"name":"c","type":"double"},
      {"name":"s","type":"bytes"},{"name":"u","type":"long"},{"name":"v","type":["null","long"]},
      {"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"],"default":"X"}},
      {"name":"new_name","aliases":["old_name"],"type":"boolean"}]}"#;
    let mut b = Vec::new();
    zz(-3, &mut b);
    zz(1 << 40, &mut b);
    b.extend_from_slice(&0.5f32.to_le_bytes());
    zz(2, &mut b);
    b.extend_from_slice(b"hi");
    zz(1, &mut b); // union branch long
    zz(9, &mut b);
    zz(4, &mut b);
    zz(2, &mut b); // Z: not in the reader's enum -> its default X
    b.push(1);
    assert_eq!(
        decode(w, r, &b).unwrap(),
        r#"{"a":-3.0,"b":1099511627776.0,"c":0.5,"s":"aGk=","u":9,"v":4,"e":"X","new_name":true}"#
    );
    // The writer's null branch has no reader branch: that record cannot be read.
    let mut b2 = b.clone();
    let at = 1 + 6 + 4 + 3; // a, b, c, s
    b2.splice(at..at + 2, [0u8]);
    let e = decode(w, r, &b2).unwrap_err();
    assert!(e.contains("null"), "{e}");
}

#[test]
fn a_reader_field_without_default_that_the_writer_lacks_is_refused() {
    let w = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}"#;
    let r = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"b","type":"long"}]}"#;
    let e = decode(w, r, &[2]).unwrap_err();
    assert!(e.contains("`b` has no default"), "{e}");
}

#[test]
fn fixed_decimals_and_bytes_defaults_read_exactly() {
    let w = r#"{"type":"record","name":"R","fields":[
      {"name":"d","type":{"type":"fixed","name":"F","size":3,"logicalType":"decimal","precision":6,"scale":3}}]}"#;
    let r = r#"{"type":"record","name":"R","fields":[
      {"name":"d","type":{"type":"fixed","name":"F","size":3,"logicalType":"decimal","precision":6,"scale":3}},
      {"name":"raw","type":"bytes","default":"\u00ff\u0001"}]}"#;
    // -1 as three bytes of two's complement: -0.001.
    assert_eq!(
        decode(w, r, &[0xff, 0xff, 0xff]).unwrap(),
        r#"{"d":-0.001,"raw":"/wE="}"#
    );
    assert_eq!(
        decode(w, w, &[0x01, 0xe2, 0x40]).unwrap(),
        r#"{"d":123.456}"#
    );
}

#[test]
fn hostile_counts_and_recursive_schemas_are_errors() {
    let nulls = r#"{"type":"array","items":"null"}"#;
    let mut b = Vec::new();
    zz(i64::MAX / 2, &mut b);
    assert!(decode(nulls, nulls, &b)
        .unwrap_err()
        .contains("more than the record can hold"));
    let longs = r#"{"type":"array","items":"long"}"#;
    let mut b = Vec::new();
    zz(1_000_000, &mut b);
    b.extend_from_slice(&[2, 4]);
    assert!(decode(longs, longs, &b).is_err());
    let mut ok = Vec::new();
    zz(-2, &mut ok); // a negative count carries the block's size
    zz(2, &mut ok);
    ok.extend_from_slice(&[2, 4, 0]);
    assert_eq!(decode(longs, longs, &ok).unwrap(), "[1,2]");
    let list = r#"{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}"#;
    // A recursive type is unrolled to a bounded depth: short chains read, a deep one is refused.
    assert_eq!(
        decode(list, list, &[2, 2, 0]).unwrap(),
        r#"{"next":{"next":{"next":null}}}"#
    );
    let mut deep = vec![2u8; 100];
    deep.push(0);
    let e = decode(list, list, &deep).unwrap_err();
    assert!(e.contains("deeper than"), "{e}");
    // Two recursive fields would unroll exponentially: refused once compiling passes its budget.
    let tree = r#"{"type":"record","name":"T","fields":[{"name":"l","type":["null","T"]},{"name":"r","type":["null","T"]}]}"#;
    let e = decode(tree, tree, &[0, 0]).unwrap_err();
    assert!(e.contains("unrolls to more than"), "{e}");
}

#[test]
fn hostile_nesting_and_huge_scales_stay_bounded() {
    // Arrays of empty arrays: each item costs no bytes; the datum's item budget ends it.
    let nested = r#"{"type":"array","items":{"type":"array","items":"null"}}"#;
    let mut b = Vec::new();
    for _ in 0..2_000 {
        zz(60_000, &mut b);
        b.push(0);
    }
    let mut small = Vec::new();
    zz(2_000, &mut small);
    small.extend_from_slice(&b[..]);
    let w = Schema::parse_str(nested).unwrap();
    let mut out = Vec::new();
    let e = Known::new(&w, None, 1 << 20)
        .unwrap()
        .read(&small, &mut out)
        .unwrap_err();
    assert!(
        e.contains("more than the record can hold") || e.contains("passes"),
        "{e}"
    );
    assert!(out.len() < 4 << 20, "{}", out.len());
    // A scale no decimal needs is refused when the plan is made, not written out.
    let huge = r#"{"type":"bytes","logicalType":"decimal","precision":100000000,"scale":99999999}"#;
    if let Ok(s) = Schema::parse_str(huge) {
        assert!(decode(huge, huge, &[2, 1])
            .unwrap_err()
            .contains("beyond 76 digits"));
        let _ = s;
    }
    assert!(from_json::unscaled("1e9223372036854775807", 2, 10).is_err());
    assert!(from_json::unscaled("1e-9223372036854775807", 2, 10).is_err());
}

#[test]
fn sink_defaults_of_bytes_fixed_and_decimal_are_code_points() {
    let schema = r#"{"type":"record","name":"D","fields":[
      {"name":"b","type":"bytes","default":"\u00ffA"},
      {"name":"f","type":{"type":"fixed","name":"F","size":2},"default":"\u0001\u0002"},
      {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":6,"scale":2},"default":"\u0004\u00d2"}]}"#;
    let enc = AvroEncoder::with_schema(9, schema).unwrap();
    let mut out = Vec::new();
    enc.encode(b"{}", &mut out).unwrap();
    // 0x04d2 = 1234 at scale 2.
    assert_eq!(
        decode(schema, schema, &out[5..]).unwrap(),
        r#"{"b":"/0E=","f":"AQI=","d":12.34}"#
    );
}

#[test]
fn a_writer_record_does_not_land_in_a_reader_record_of_another_name() {
    let w = r#"{"type":"record","name":"Y","fields":[{"name":"a","type":"long"}]}"#;
    let r = r#"["null",{"type":"record","name":"X","fields":[{"name":"a","type":"long"}]}]"#;
    assert!(decode(w, r, &[2]).is_err());
    let r_ok = r#"["null",{"type":"record","name":"Y","fields":[{"name":"a","type":"long"}]}]"#;
    assert_eq!(decode(w, r_ok, &[2]).unwrap(), r#"{"a":1}"#);
}
