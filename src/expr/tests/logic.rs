//! Null propagation, SQL three-valued logic, short-circuiting, `in` lists and the ternary.

use super::{compile_err, eval_err, v};
use crate::expr::EvalReason;

#[test]
fn null_propagates() {
    for text in [
        "none + 1",
        "1 - none",
        "none * 2.5",
        "none / 0",
        "none % 2",
        "none == none",
        "none != 1",
        "none < 1",
        "'a' >= none",
        "missing.field",
        "-missing",
        "!none",
        "none + 'a'",
    ] {
        assert_eq!(v(text), "null", "{text}");
    }
    // A wrong type is an error even next to a null.
    assert!(eval_err("name * none")
        .to_string()
        .contains("`*` needs a number, got string"));
    assert!(compile_err("'a' * null")
        .message
        .contains("`*` needs a number, got string"));
}

#[test]
fn three_valued_logic() {
    let values = ["true", "false", "none"];
    // Rows: left operand; columns: right operand, in the order of `values`.
    let and = [
        ["true", "false", "null"],
        ["false", "false", "false"],
        ["null", "false", "null"],
    ];
    let or = [
        ["true", "true", "true"],
        ["true", "false", "null"],
        ["true", "null", "null"],
    ];
    for (i, l) in values.iter().enumerate() {
        for (j, r) in values.iter().enumerate() {
            assert_eq!(v(&format!("{l} && {r}")), and[i][j], "{l} && {r}");
            assert_eq!(v(&format!("{l} || {r}")), or[i][j], "{l} || {r}");
        }
    }
    assert_eq!(v("!true"), "false");
    assert_eq!(v("!no"), "true");
    assert_eq!(v("!none"), "null");
}

#[test]
fn logic_short_circuits_left_to_right() {
    assert_eq!(v("no && qty / zero > 1"), "false");
    assert_eq!(v("flag || name * 2 > 1"), "true");
    assert_eq!(
        *eval_err("none && qty / zero > 1").reason(),
        EvalReason::DivisionByZero
    );
    let e = eval_err("qty && true");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Type {
            op: "&&",
            expected: "a bool",
            found: "int"
        }
    );
    assert_eq!(
        e.to_string(),
        "`&&` needs a bool, got int (in field `qty`)\n  qty && true\n  ^"
    );
}

#[test]
fn in_lists() {
    let cases = [
        ("qty in [1, 2, 3]", "true"),
        ("qty in [1, 2]", "false"),
        ("qty in [1, null]", "null"),
        ("qty in [3, null]", "true"),
        ("qty in [null, 3]", "true"),
        ("none in [1]", "null"),
        ("none in []", "null"),
        ("qty in []", "false"),
        ("name in ['Bob', 'Ada']", "true"),
        ("3.0 in [1, qty]", "true"),
        ("amount in [19.990]", "true"),
        ("!(qty in [1])", "true"),
        ("qty in [qty / zero]", ""),
    ];
    for (text, expected) in cases {
        if expected.is_empty() {
            assert_eq!(*eval_err(text).reason(), EvalReason::DivisionByZero);
        } else {
            assert_eq!(v(text), expected, "{text}");
        }
    }
    assert_eq!(
        v("none in [qty / zero]"),
        "null",
        "items are not evaluated for a null left side"
    );
    let e = eval_err("name in [1, 2]");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Incomparable {
            op: "in",
            left: "string",
            right: "int"
        }
    );
    assert_eq!(e.column(), 10);
}

#[test]
fn ternary() {
    assert_eq!(v("qty > 2 ? 'many' : 'few'"), r#""many""#);
    assert_eq!(v("qty > 5 ? 'many' : 'few'"), r#""few""#);
    assert_eq!(v("none ? 1 : 2"), "2");
    assert_eq!(v("no ? 1 : flag ? 2 : 3"), "2");
    assert_eq!(v("flag ? qty : qty / zero"), "3");
    let e = eval_err("qty ? 1 : 2");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Type {
            op: "?:",
            expected: "a bool",
            found: "int"
        }
    );
}
