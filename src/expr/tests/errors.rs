//! Compile and run-time error messages, with the exact caret lines.

use super::{compile_err, eval_err};
use crate::expr::{compile, EvalReason, ExprErrorKind, FieldPath, RecordError};

/// The compile error of `text` as displayed, and its kind.
fn shown(text: &str) -> (String, ExprErrorKind) {
    let e = compile_err(text);
    (e.to_string(), e.kind)
}

#[test]
fn unknown_function_suggests_the_closest_name() {
    let e = compile_err("lowr(name) == 'x'");
    assert_eq!(
        e.to_string(),
        "unknown function `lowr` (did you mean `lower`?)\n  lowr(name) == 'x'\n  ^"
    );
    assert_eq!(
        (e.line, e.column, e.kind),
        (1, 1, ExprErrorKind::UnknownFunction)
    );
    assert_eq!(
        shown("name == 'x' && size(name) > 2"),
        (
            "unknown function `size` (did you mean `len`?)\n  name == 'x' && size(name) > 2\n                 ^".into(),
            ExprErrorKind::UnknownFunction
        )
    );
    assert_eq!(
        shown("frobnicate(1)").0,
        "unknown function `frobnicate`\n  frobnicate(1)\n  ^"
    );
    assert_eq!(
        shown("startswith(a, 'b')").0.lines().next(),
        Some("unknown function `startswith` (did you mean `starts_with`?)")
    );
    assert_eq!(
        shown("MAX(a, b)").0.lines().next(),
        Some("unknown function `MAX` (did you mean `max`?)")
    );
}

#[test]
fn wrong_arity() {
    assert_eq!(
        shown("lower(a, b)"),
        (
            "`lower` takes 1 argument, got 2\n  lower(a, b)\n  ^".into(),
            ExprErrorKind::Arity
        )
    );
    assert_eq!(
        shown("1 + round()").0,
        "`round` takes 1 or 2 arguments, got 0\n  1 + round()\n      ^"
    );
    assert_eq!(
        shown("coalesce()").0,
        "`coalesce` takes at least 1 argument, got 0\n  coalesce()\n  ^"
    );
    assert_eq!(
        shown("truncate_time(ts)").0.lines().next(),
        Some("`truncate_time` takes 2 arguments, got 1")
    );
}

#[test]
fn static_type_errors_point_at_the_operand() {
    assert_eq!(
        shown("'a' * 2"),
        (
            "`*` needs a number, got string\n  'a' * 2\n  ^".into(),
            ExprErrorKind::Type
        )
    );
    assert_eq!(
        shown("2 * 'a'").0,
        "`*` needs a number, got string\n  2 * 'a'\n      ^"
    );
    assert_eq!(
        shown("('a' + 'b') - 1").0,
        "`-` needs a number, got string\n  ('a' + 'b') - 1\n   ^"
    );
    assert_eq!(
        shown("qty == 1 && 'x'").0,
        "`&&` needs a bool, got string\n  qty == 1 && 'x'\n              ^"
    );
    assert_eq!(shown("!5").0, "`!` needs a bool, got int\n  !5\n   ^");
    assert_eq!(
        shown("a > 1 ? 'x' : 1 == 'y'").0.lines().next(),
        Some("`==` cannot compare int with string")
    );
    assert_eq!(
        shown("x + 1 in [1, 'a']").0,
        "`in` cannot compare number with string\n  x + 1 in [1, 'a']\n               ^"
    );
    // A list mixing types is fine when the left side's type is unknown: `1 in [1, 'a']` is true.
    assert!(compile("x in [1, 'a']").is_ok());
    assert_eq!(
        shown("true < false").0.lines().next(),
        Some("`<` needs a number or a string, got bool")
    );
    assert_eq!(
        shown("'1' + 1").0.lines().next(),
        Some("`+` needs two numbers or two strings, got string and int")
    );
    assert_eq!(
        shown("2 ? 1 : 0").0.lines().next(),
        Some("`?:` needs a bool condition, got int")
    );
}

#[test]
fn columns_count_characters_and_lines() {
    let e = compile_err("len('héllo') + 'x' + 1");
    assert_eq!(e.column, 16);
    assert_eq!(e.to_string(), "`+` needs two numbers or two strings, got int and string\n  len('héllo') + 'x' + 1\n                 ^");
    let e = compile_err("a +\n  'x' * 2");
    assert_eq!((e.line, e.column), (2, 3));
    assert_eq!(
        e.to_string(),
        "`*` needs a number, got string\n    'x' * 2\n    ^"
    );
    let e = compile_err("\t'x' * 2");
    assert_eq!(
        e.to_string(),
        "`*` needs a number, got string\n  \t'x' * 2\n  \t^"
    );
}

#[test]
fn syntax_errors() {
    let cases = [
        (
            "amount >",
            "expected a value, found the end of the expression",
            9,
        ),
        ("a = 1", "unexpected `=`; compare with `==`", 3),
        ("a & b", "unexpected `&`; use `&&` for and", 3),
        ("'abc", "unterminated string", 1),
        ("'a\\qb'", "unknown escape `\\q`", 3),
        (
            "'\\u12'",
            "`\\u` needs four hex digits naming a Unicode scalar value",
            2,
        ),
        (
            "'\\ud800'",
            "`\\u` needs four hex digits naming a Unicode scalar value",
            2,
        ),
        (
            "a.lower()",
            "methods are not supported; call functions like `lower(x)`",
            8,
        ),
        (
            "x in 1",
            "`in` needs a list in brackets, like `x in [1, 2]`",
            6,
        ),
        ("[1, 2]", "a list in brackets is only allowed after `in`", 1),
        ("(1 + 2", "expected `)`, found the end of the expression", 7),
        (
            "1 2",
            "expected an operator or the end of the expression, found number `2`",
            3,
        ),
        ("f(1 2)", "expected `,` or `)`, found number `2`", 5),
        ("a[b]", "an index must be a non-negative integer literal", 3),
        (
            "a[-1]",
            "an index must be a non-negative integer literal",
            3,
        ),
        (
            "a.",
            "expected a field name after `.`, found the end of the expression",
            3,
        ),
        ("(a).b", "field access is only allowed on field names", 4),
        ("12abc", "a number must not run into letters", 1),
        (
            "a ? b",
            "expected `:` of the ternary `cond ? a : b`, found the end of the expression",
            6,
        ),
        ("a # b", "unexpected character `#`", 3),
        ("in", "expected a value, found `in`", 1),
        ("", "expected a value, found the end of the expression", 1),
    ];
    for (text, message, column) in cases {
        let e = compile_err(text);
        assert_eq!(
            (e.message.as_str(), e.column, e.kind),
            (message, column, ExprErrorKind::Syntax),
            "{text}"
        );
    }
}

#[test]
fn literal_and_constant_errors() {
    let e = compile_err("x > 9223372036854775808");
    assert_eq!(e.kind, ExprErrorKind::Constant);
    assert_eq!(e.column, 5);
    assert!(e.message.contains("out of the 64-bit range"), "{e}");
    assert_eq!(
        compile_err("1.00000000000000000000000000001").kind,
        ExprErrorKind::Constant
    );
    assert_eq!(
        compile_err("x + 1 / 0").to_string(),
        "this constant expression always fails: division by zero\n  x + 1 / 0\n          ^"
    );
    assert_eq!(
        compile_err("round(x, 29)").message,
        "`round` digits must be between 0 and 28, got 29"
    );
}

#[test]
fn deep_nesting_is_rejected_without_overflowing_the_stack() {
    let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(compile_err(&deep).message.contains("nests more than"));
    let long = format!("1{}", " + 1".repeat(10_000));
    assert!(compile_err(&long).message.contains("nests more than"));
    let negations = format!("{}true", "!".repeat(10_000));
    assert!(compile_err(&negations).message.contains("nests more than"));
    assert!(compile(&format!("1{}", " + x".repeat(100))).is_ok());
}

#[test]
fn run_time_errors_name_the_field_and_point_at_it() {
    let e = eval_err("qty * name");
    assert_eq!(
        e.to_string(),
        "`*` needs a number, got string (in field `name`)\n  qty * name\n        ^"
    );
    assert_eq!(
        (e.line(), e.column(), e.field().cloned()),
        (1, 7, FieldPath::parse("name").ok())
    );
    assert_eq!(e.text(), "qty * name");
    let e = eval_err("qty + big * 2");
    assert_eq!(
        e.to_string(),
        "integer overflow in `*`\n  qty + big * 2\n            ^"
    );
    assert_eq!(e.field().cloned(), None);
    let e = eval_err("1 + payload.items");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Record(RecordError::NotScalar { kind: "an array" })
    );
    assert_eq!(
        e.to_string(),
        "cannot read the field: the value is an array; expressions read only null, booleans, numbers and strings (in field `payload.items`)\n  1 + payload.items\n      ^"
    );
    let e = eval_err("-(qty + name)");
    assert_eq!(e.column(), 9);
}

#[test]
fn field_paths_parse_and_print() {
    let path = FieldPath::parse("payload.items[0].sku").unwrap();
    assert_eq!(path.to_string(), "payload.items[0].sku");
    assert_eq!(path.segments().len(), 4);
    assert_eq!(FieldPath::parse(" a . b ").unwrap().as_str(), "a.b");
    assert!(FieldPath::parse("a + b").is_err());
    assert!(FieldPath::parse("[0]").is_err());
}
