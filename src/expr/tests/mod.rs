//! Hand-computed cases for literals, operators, null logic, precedence, fields and JSON output.
//! Every expression is evaluated on both record kinds (`serde_json::Value` and `RawJson` of the
//! same text), which must agree.

use std::borrow::Cow;

use super::*;

mod bench;
mod builtins;
mod errors;
mod functions;
mod logic;
mod proptests;
mod record;
mod reference;
mod reference_calls;

/// The record most tests read.
pub(super) const RECORD: &str = r#"{
    "amount": 19.99, "qty": 3, "zero": 0, "name": "Ada", "none": null, "flag": true, "no": false,
    "big": 9223372036854775807, "small": -9223372036854775808, "neg": -7,
    "dmax": 79228162514264337593543950335, "half": 2.5, "digits": 99, "unit": "week",
    "table": {"rate": 1.083421}, "ts": 1795953600000,
    "payload": {"items": [{"sku": "A-1"}, {"sku": "B-2", "tags": ["x", "y"]}]}
}"#;

/// Evaluates `text` on [`RECORD`] through both record kinds; the value as JSON, or the error.
pub(super) fn run(text: &str) -> Result<String, String> {
    let program = compile(text).map_err(|e| format!("compile: {e}"))?;
    let parsed: serde_json::Value = serde_json::from_str(RECORD).map_err(|e| e.to_string())?;
    let render = |result: Result<Value<'_>, EvalError>| {
        result.map(|v| {
            let mut out = Vec::new();
            v.write_json(&mut out);
            String::from_utf8_lossy(&out).into_owned()
        })
    };
    let from_serde = render(program.eval(&parsed));
    let from_raw = render(program.eval(&RawJson(RECORD.as_bytes())));
    assert_eq!(from_serde, from_raw, "record kinds disagree on `{text}`");
    from_raw.map_err(|e| e.to_string())
}

/// The value of `text` as JSON; panics with the error otherwise.
pub(super) fn v(text: &str) -> String {
    match run(text) {
        Ok(value) => value,
        Err(e) => panic!("`{text}` failed: {e}"),
    }
}

/// The run-time error of `text`.
pub(super) fn eval_err(text: &str) -> EvalError {
    let program = compile(text).unwrap_or_else(|e| panic!("`{text}` did not compile: {e}"));
    match program.eval(&RawJson(RECORD.as_bytes())) {
        Err(e) => e,
        Ok(v) => panic!("`{text}` gave {v:?}, expected an error"),
    }
}

/// The compile error of `text`.
pub(super) fn compile_err(text: &str) -> ExprError {
    match compile(text) {
        Err(e) => e,
        Ok(p) => panic!("`{text}` compiled to {p:?}, expected an error"),
    }
}

#[test]
fn literals() {
    assert_eq!(v("42"), "42");
    assert_eq!(v("-9223372036854775808"), "-9223372036854775808");
    assert_eq!(v("19.990"), "19.990");
    assert_eq!(v("-0.5"), "-0.5");
    assert_eq!(
        v(r#"'it\'s' + "a \"q\"" + '\t\n\\\u00e9'"#),
        r#""it'sa \"q\"\t\n\\é""#
    );
    assert_eq!(v("true"), "true");
    assert_eq!(v("null"), "null");
}

#[test]
fn decimals_are_exact() {
    assert_eq!(v("19.99 * 1.083421"), "21.65758579");
    assert_eq!(v("amount * table.rate"), "21.65758579");
    assert_eq!(v("0.1 + 0.2"), "0.3");
    assert_eq!(v("0.1 + 0.2 == 0.3"), "true");
    assert_eq!(v("1.10 + 1"), "2.10");
    assert_eq!(v("2.50 * 2"), "5.00");
    assert_eq!(v("1 - 0.9"), "0.1");
    assert_eq!(v("7.5 % 2"), "1.5");
    assert_eq!(v("-7.5 % 2"), "-1.5");
}

#[test]
fn decimal_zero_is_never_negative() {
    for (text, expected) in [
        ("-(0.0)", "0.0"),
        ("--0.0", "0.0"),
        ("-0.5 * 0", "0.0"), // SQL: scale 1 + 0
        ("-1.5 % 1.5", "0"),
        ("round(-0.4)", "0"),
        ("ceil(-0.5)", "0"),
        ("-0.00", "0.00"),
    ] {
        assert_eq!(v(text), expected, "{text}");
    }
    let line = RawJson(br#"{"z": -0.0}"#);
    let program = compile("z").unwrap();
    let mut out = Vec::new();
    program.eval(&line).unwrap().write_json(&mut out);
    assert_eq!(out, b"0.0");
}

#[test]
fn integers_stay_integers() {
    assert_eq!(v("7 + 2"), "9");
    assert_eq!(v("7 - 9"), "-2");
    assert_eq!(v("6 * 7"), "42");
    assert_eq!(v("6 / 3"), "2");
    assert_eq!(v("qty * 2 + neg"), "-1");
    assert_eq!(v("7 % 3"), "1");
    assert_eq!(v("-7 % 3"), "-1");
    assert_eq!(v("7 % -3"), "1");
    assert_eq!(v("small % -1"), "0");
}

#[test]
fn integer_division_is_exact_or_decimal() {
    assert_eq!(v("7 / 2"), "3.5");
    assert_eq!(v("-7 / 2"), "-3.5");
    assert_eq!(v("1 / 8"), "0.125");
    assert_eq!(v("1 / 3"), "0.3333333333333333333333333333");
    assert_eq!(v("2 / 3"), "0.6666666666666666666666666667");
    assert_eq!(v("7 / 2 * 2"), "7.0");
}

#[test]
fn int_and_decimal_mix() {
    assert_eq!(v("1 + 0.5"), "1.5");
    assert_eq!(v("1 == 1.0"), "true");
    assert_eq!(v("qty == 3.000"), "true");
    assert_eq!(v("2 < 2.5"), "true");
    assert_eq!(v("3 > 2.99"), "true");
    assert_eq!(v("big > 9223372036854775806.5"), "true");
}

#[test]
fn overflow_and_division_by_zero_are_errors() {
    let e = compile_err("9223372036854775807 + 1");
    assert_eq!(e.kind, ExprErrorKind::Constant);
    assert!(e.message.contains("integer overflow in `+`"), "{e}");
    assert_eq!(e.column, 21);
    for (text, reason) in [
        ("big + 1", EvalReason::IntOverflow { op: "+" }),
        ("small - 1", EvalReason::IntOverflow { op: "-" }),
        ("big * 2", EvalReason::IntOverflow { op: "*" }),
        ("-small", EvalReason::IntOverflow { op: "-" }),
        ("small / -1", EvalReason::IntOverflow { op: "/" }),
        ("dmax + 1", EvalReason::DecimalOverflow { op: "+" }),
        ("dmax * 1.5", EvalReason::DecimalOverflow { op: "*" }),
        ("qty / zero", EvalReason::DivisionByZero),
        ("qty % zero", EvalReason::DivisionByZero),
        ("amount / zero", EvalReason::DivisionByZero),
        ("amount / 0.00", EvalReason::DivisionByZero),
    ] {
        assert_eq!(*eval_err(text).reason(), reason, "{text}");
    }
    assert_eq!(
        eval_err("qty / zero").field().cloned(),
        FieldPath::parse("zero").ok()
    );
    assert_eq!(compile_err("1 / 0").kind, ExprErrorKind::Constant);
    assert_eq!(compile_err("1.5 % 0").kind, ExprErrorKind::Constant);
}

#[test]
fn unary_minus() {
    assert_eq!(v("-qty"), "-3");
    assert_eq!(v("-(1.5)"), "-1.5");
    assert_eq!(v("- -3"), "3");
    assert_eq!(v("-neg"), "7");
    assert_eq!(v("-none"), "null");
}

#[test]
fn comparisons() {
    let cases = [
        ("1 < 2", "true"),
        ("2 <= 2", "true"),
        ("3 > 2", "true"),
        ("2 >= 3", "false"),
        ("2 == 2", "true"),
        ("2 != 2", "false"),
        ("'a' < 'b'", "true"),
        ("'B' < 'a'", "true"),
        ("'é' > 'z'", "true"),
        ("'ab' < 'abc'", "true"),
        ("name == 'Ada'", "true"),
        ("name != 'ada'", "true"),
        ("flag == true", "true"),
        ("flag != no", "true"),
        ("amount >= 19.99", "true"),
    ];
    for (text, expected) in cases {
        assert_eq!(v(text), expected, "{text}");
    }
    let e = eval_err("flag < no");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Type {
            op: "<",
            expected: "a number or a string",
            found: "bool"
        }
    );
    let e = eval_err("qty == name");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Incomparable {
            op: "==",
            left: "int",
            right: "string"
        }
    );
    assert_eq!(e.field().cloned(), FieldPath::parse("name").ok());
}

#[test]
fn precedence_and_associativity() {
    let cases = [
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("2 - 1 - 1", "0"),
        ("8 / 2 / 2", "2"),
        ("2 * 3 % 4", "2"),
        ("-2 * -3", "6"),
        ("!true || true", "true"),
        ("1 < 2 == true", "true"),
        ("true || false && false", "true"),
        ("qty > 1 && qty < 5 || no", "true"),
        ("1 + 1 in [2] ? 'y' : 'n'", r#""y""#),
    ];
    for (text, expected) in cases {
        assert_eq!(v(text), expected, "{text}");
    }
}

#[test]
fn string_concatenation_with_plus() {
    assert_eq!(v("'a' + 'b'"), r#""ab""#);
    assert_eq!(v("name + '!'"), r#""Ada!""#);
    assert_eq!(compile_err("'a' + 1").kind, ExprErrorKind::Type);
    let e = eval_err("name + qty");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Type {
            op: "+",
            expected: "a string",
            found: "int"
        }
    );
}

#[test]
fn field_paths() {
    assert_eq!(v("payload.items[1].sku"), r#""B-2""#);
    assert_eq!(v("payload.items[1].tags[0]"), r#""x""#);
    assert_eq!(v("payload.items[5].sku"), "null");
    assert_eq!(v("qty.x"), "null");
    assert_eq!(v("name[0]"), "null");
    assert_eq!(v("table.rate"), "1.083421");
    let e = eval_err("payload.items == 1");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Record(RecordError::NotScalar { kind: "an array" })
    );
    assert_eq!(e.field().map(FieldPath::as_str), Some("payload.items"));
}

#[test]
fn program_lists_its_fields_and_type() {
    let p =
        compile("amount * table.rate > 10 && amount > 0 || payload.items[0].sku == 'x'").unwrap();
    let fields: Vec<&str> = p.fields().iter().map(FieldPath::as_str).collect();
    assert_eq!(fields, ["amount", "table.rate", "payload.items[0].sku"]);
    assert_eq!(p.result_type(), Type::Bool);
    assert_eq!(
        p.text(),
        "amount * table.rate > 10 && amount > 0 || payload.items[0].sku == 'x'"
    );
    assert_eq!(compile("1 + 2").unwrap().result_type(), Type::Int);
    assert_eq!(compile("qty / 2").unwrap().result_type(), Type::Number);
    assert_eq!(
        compile("amount * 1.5").unwrap().result_type(),
        Type::Decimal
    );
    assert_eq!(compile("lower(name)").unwrap().result_type(), Type::String);
    assert_eq!(compile("coalesce(a, b)").unwrap().result_type(), Type::Any);
    assert!(compile("1 + 2").unwrap().fields().is_empty());
}

#[test]
fn programs_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Program>();
    shareable::<EvalError>();
    shareable::<ExprError>();
}

#[test]
fn filters_keep_only_true() {
    assert!(is_true(&Value::Bool(true)));
    assert!(!is_true(&Value::Bool(false)));
    assert!(!is_true(&Value::Null));
    assert!(!is_true(&Value::Int(1)));
}

#[test]
fn strings_borrow_from_the_record() {
    let program = compile("name").unwrap();
    let raw = RawJson(RECORD.as_bytes());
    assert!(matches!(
        program.eval(&raw),
        Ok(Value::Str(Cow::Borrowed("Ada")))
    ));
    let program = compile("coalesce(none, 'x')").unwrap();
    assert!(matches!(
        program.eval(&raw),
        Ok(Value::Str(Cow::Borrowed("x")))
    ));
}

#[test]
fn json_output() {
    let cases = [
        (Value::Null, "null"),
        (Value::Bool(false), "false"),
        (Value::Int(-12), "-12"),
        (
            Value::Decimal(rust_decimal::Decimal::new(-21_657_585_790, 9)),
            "-21.657585790",
        ),
        (
            Value::str("a\"b\\c\n\r\t\u{1}\u{8}\u{c}\u{1f}é😀"),
            r#""a\"b\\c\n\r\t\u0001\b\f\u001fé😀""#,
        ),
    ];
    for (value, expected) in cases {
        let mut out = b"[".to_vec();
        value.write_json(&mut out);
        assert_eq!(String::from_utf8(out).unwrap(), format!("[{expected}"));
    }
    let mut out = Vec::new();
    Value::str("\u{0}\u{7f}\u{2028}").write_json(&mut out);
    let back: String = serde_json::from_slice(&out).unwrap();
    assert_eq!(back, "\u{0}\u{7f}\u{2028}");
}
