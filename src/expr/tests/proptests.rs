//! Property tests: the compiled evaluator against the reference tree-walker, and `RawJson`
//! against `serde_json::Value`, on generated expressions and records.
//!
//! Expressions come from a byte string read as a stream of choices (0 when it runs out, which
//! always picks a leaf), so proptest shrinks a failure by shortening the bytes. Generation is
//! loosely typed (number, string and bool expressions) so that most expressions compile and
//! compute something; the record's fields are usually of the type their name suggests but
//! sometimes null, missing or of another type, which exercises run-time type errors.

use proptest::prelude::*;

use super::reference;
use crate::expr::parse::parse;
use crate::expr::{compile, RawJson, Value};

struct Choices<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Choices<'_> {
    fn pick(&mut self, n: usize) -> usize {
        let byte = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        usize::from(byte) % n
    }

    fn one<'s>(&mut self, options: &[&'s str]) -> &'s str {
        options[self.pick(options.len())]
    }

    fn num(&mut self, depth: usize) -> String {
        const LEAVES: &[&str] = &[
            "i",
            "1",
            "d",
            "0.5",
            "j",
            "-3",
            "e",
            "2.50",
            "x",
            "7",
            "19.99",
            "1.083421",
            "0",
            "0.0",
            "100",
            "-1.25",
            "9223372036854775807",
            "-9223372036854775808",
            "n.x",
            "arr[1]",
            "m",
            "null",
        ];
        let depth = depth.saturating_sub(1);
        match if depth == 0 { 0 } else { self.pick(14) } {
            3 | 4 => {
                let op = self.one(&["+", "-", "*", "/", "%"]);
                format!("({} {op} {})", self.num(depth), self.num(depth))
            }
            5 => format!("-{}", self.num(depth)),
            6 => format!(
                "{}({})",
                self.one(&["abs", "floor", "ceil", "round"]),
                self.num(depth)
            ),
            7 => format!(
                "round({}, {})",
                self.num(depth),
                self.one(&["0", "1", "2", "i", "30", "-1"])
            ),
            8 => {
                let f = self.one(&["min", "max"]);
                let (a, b) = (self.num(depth), self.num(depth));
                if self.pick(2) == 0 {
                    format!("{f}({a}, {b})")
                } else {
                    format!("{f}({a}, {b}, {})", self.num(depth))
                }
            }
            9 => format!("coalesce({}, {})", self.num(depth), self.num(depth)),
            10 => format!(
                "({} ? {} : {})",
                self.bool(depth),
                self.num(depth),
                self.num(depth)
            ),
            11 => format!("len({})", self.str(depth)),
            12 => {
                let unit = self.one(&["'second'", "'minute'", "'hour'", "'day'", "s"]);
                format!("truncate_time({}, {unit})", self.num(depth))
            }
            _ => self.one(LEAVES).to_owned(),
        }
    }

    fn str(&mut self, depth: usize) -> String {
        const LEAVES: &[&str] = &[
            "s", "'a'", "t", "'héllo'", "x", "''", "'B'", "'ß'", "'x y'", "null", "m",
        ];
        let depth = depth.saturating_sub(1);
        match if depth == 0 { 0 } else { self.pick(10) } {
            3 => format!("{}({})", self.one(&["lower", "upper"]), self.str(depth)),
            4 => format!("concat({}, {})", self.str(depth), self.num(depth)),
            5 => format!("({} + {})", self.str(depth), self.str(depth)),
            6 => format!("coalesce({}, {})", self.str(depth), self.str(depth)),
            7 => format!(
                "({} ? {} : {})",
                self.bool(depth),
                self.str(depth),
                self.str(depth)
            ),
            8 => format!(
                "{}({})",
                self.one(&["format_time", "sql_timestamp"]),
                self.num(depth)
            ),
            _ => self.one(LEAVES).to_owned(),
        }
    }

    fn bool(&mut self, depth: usize) -> String {
        const LEAVES: &[&str] = &["b", "true", "false", "null", "x", "m"];
        let depth = depth.saturating_sub(1);
        let cmp = ["==", "!=", "<", "<=", ">", ">="];
        match if depth == 0 { 0 } else { self.pick(13) } {
            2 | 3 => format!(
                "({} {} {})",
                self.num(depth),
                self.one(&cmp),
                self.num(depth)
            ),
            4 => format!(
                "({} {} {})",
                self.str(depth),
                self.one(&cmp),
                self.str(depth)
            ),
            5 => format!("({} && {})", self.bool(depth), self.bool(depth)),
            6 => format!("({} || {})", self.bool(depth), self.bool(depth)),
            7 => format!("!{}", self.bool(depth)),
            8 => format!(
                "({} in [{}, {}])",
                self.num(depth),
                self.num(depth),
                self.num(depth)
            ),
            9 => format!(
                "({} in [{}, {}])",
                self.str(depth),
                self.str(depth),
                self.str(depth)
            ),
            10 => {
                let f = self.one(&["starts_with", "ends_with", "contains"]);
                format!("{f}({}, {})", self.str(depth), self.str(depth))
            }
            11 => format!(
                "({} ? {} : {})",
                self.bool(depth),
                self.bool(depth),
                self.bool(depth)
            ),
            _ => self.one(LEAVES).to_owned(),
        }
    }
}

/// The expression text the choice bytes describe.
fn expression(bytes: &[u8]) -> String {
    let mut choices = Choices { bytes, at: 0 };
    match choices.pick(3) {
        0 => choices.num(5),
        1 => choices.str(5),
        _ => choices.bool(5),
    }
}

/// JSON text of a decimal with at most 13 significant digits (so an `f64` keeps it exactly).
fn decimal() -> impl Strategy<Value = String> {
    (-1_000_000_000_000i64..1_000_000_000_000, 1u32..7).prop_map(|(mantissa, scale)| {
        rust_decimal::Decimal::new(mantissa, scale)
            .normalize()
            .to_string()
    })
}

fn int() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (-10i64..10).prop_map(|i| i.to_string()),
        1 => any::<i64>().prop_map(|i| i.to_string()),
        1 => prop::sample::select(vec![i64::MAX, i64::MIN, i64::MAX - 1, 1_700_000_123_456, -86_400_001])
            .prop_map(|i| i.to_string()),
    ]
}

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "", "a", "B", "héllo", "ß", "x y", "a\"b", "tab\t", "日本", "second", "day"
        ])
        .prop_map(str::to_owned),
        "[a-cA-Cé ]{0,4}",
    ]
    .prop_map(|s| serde_json::Value::String(s).to_string())
}

/// A field's JSON text, usually of `usual` type; `None` means the field is missing.
fn field(usual: BoxedStrategy<String>) -> impl Strategy<Value = Option<String>> {
    let other = prop_oneof![
        int(),
        decimal(),
        string(),
        any::<bool>().prop_map(|b| b.to_string())
    ];
    prop_oneof![
        12 => usual.prop_map(Some),
        2 => Just(Some("null".to_owned())),
        1 => Just(None),
        2 => other.prop_map(Some),
    ]
}

/// A record line with fields i, j (ints), d, e (decimals), s, t (strings), b (bool), x (any),
/// `n.x` and `arr[1]` (numbers); `m` is never present.
fn record() -> impl Strategy<Value = String> {
    let any_scalar = prop_oneof![int(), decimal(), string(), Just("true".to_owned())].boxed();
    let number = prop_oneof![int(), decimal()].boxed();
    let bools = any::<bool>().prop_map(|b| b.to_string()).boxed();
    let fields = [
        ("i", int().boxed()),
        ("j", int().boxed()),
        ("d", decimal().boxed()),
        ("e", decimal().boxed()),
        ("s", string().boxed()),
        ("t", string().boxed()),
        ("b", bools),
        ("x", any_scalar),
        ("nx", number.clone()),
        ("arr1", number),
    ];
    let strategies: Vec<_> = fields
        .into_iter()
        .map(|(name, s)| field(s).prop_map(move |v| (name, v)))
        .collect();
    strategies.prop_map(|fields| {
        let mut parts = Vec::new();
        for (name, value) in fields {
            let Some(value) = value else { continue };
            parts.push(match name {
                "nx" => format!("\"n\": {{\"x\": {value}}}"),
                "arr1" => format!("\"arr\": [0, {value}, 2]"),
                _ => format!("\"{name}\": {value}"),
            });
        }
        format!("{{{}}}", parts.join(", "))
    })
}

/// Same value: same type and same JSON text (so decimals must agree on their scale too).
fn same(a: &Value<'_>, b: &Value<'_>) -> bool {
    let json = |v: &Value<'_>| {
        let mut out = Vec::new();
        v.write_json(&mut out);
        out
    };
    a.type_name() == b.type_name() && json(a) == json(b)
}

proptest! {
    // 2048 cases by default; PROPTEST_CASES=100000 for a longer hunt.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2048),
        ..ProptestConfig::default()
    })]

    #[test]
    fn compiled_matches_reference(bytes in prop::collection::vec(any::<u8>(), 0..64), line in record()) {
        let text = expression(&bytes);
        let rec: serde_json::Value = serde_json::from_str(&line).unwrap();
        // Expressions the checker rejects have no compiled form to compare.
        let Ok(program) = compile(&text) else { return Ok(()) };
        let expected = reference::evaluate(&parse(&text).unwrap(), &rec);
        let actual = program.eval(&rec);
        match (&actual, &expected) {
            (Ok(a), Ok(e)) => prop_assert!(same(a, e), "`{}` on {}: compiled {:?}, reference {:?}", text, line, a, e),
            (Err(_), Err(_)) => {}
            _ => prop_assert!(false, "`{}` on {}: compiled {:?}, reference {:?}", text, line, actual, expected),
        }
    }

    #[test]
    fn raw_json_matches_serde_json(bytes in prop::collection::vec(any::<u8>(), 0..64), line in record()) {
        let text = expression(&bytes);
        let Ok(program) = compile(&text) else { return Ok(()) };
        let rec: serde_json::Value = serde_json::from_str(&line).unwrap();
        let raw = RawJson(line.as_bytes());
        let (from_serde, from_raw) = (program.eval(&rec), program.eval(&raw));
        match (&from_serde, &from_raw) {
            (Ok(a), Ok(b)) => prop_assert!(same(a, b), "`{}` on {}: serde {:?}, raw {:?}", text, line, a, b),
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            _ => prop_assert!(false, "`{}` on {}: serde {:?}, raw {:?}", text, line, from_serde, from_raw),
        }
    }
}

/// The generator is only useful if most expressions compile and many produce a value.
#[test]
fn generated_expressions_mostly_compile_and_compute() {
    let rec: serde_json::Value = serde_json::from_str(
        r#"{"i": 3, "j": -2, "d": 1.5, "e": 0.25, "s": "héllo", "t": "B", "b": true, "x": 7, "n": {"x": 2}, "arr": [0, 1.5, 2]}"#,
    )
    .unwrap();
    let (mut compiled, mut valued, mut state) = (0, 0, 0x2545_f491_4f6c_dd1du64);
    for _ in 0..2000 {
        let bytes: Vec<u8> = (0..64)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        if let Ok(program) = compile(&expression(&bytes)) {
            compiled += 1;
            valued += usize::from(matches!(program.eval(&rec), Ok(v) if !v.is_null()));
        }
    }
    assert!(compiled > 1400, "only {compiled} of 2000 compiled");
    assert!(
        valued > 700,
        "only {valued} of 2000 produced a non-null value"
    );
}
