//! Steps on hand-written lines: filters, selects, chains of both, nested paths and errors.

use super::*;

fn stages() -> Vec<StepPlan> {
    vec![
        StepPlan {
            name: "big".into(),
            kind: StepKind::Filter {
                condition: "amount_usd >= 1000 && currency != 'JPY'".into(),
            },
        },
        StepPlan {
            name: "priced".into(),
            kind: StepKind::Select {
                fields: vec![
                    ("id".into(), "order_id".into()),
                    ("currency".into(), "currency".into()),
                    ("amount_usd".into(), "amount * table.rate".into()),
                ],
            },
        },
    ]
}

fn run(chain: &mut StepChain, line: &str) -> Result<Option<String>, String> {
    Ok(match chain.apply(line.as_bytes(), None)? {
        Outcome::Kept(b) => Some(String::from_utf8(b.to_vec()).unwrap()),
        Outcome::Dropped => None,
    })
}

#[test]
fn select_then_filter_reshapes_exactly_and_drops_by_the_condition() {
    let mut c = StepChain::new(&stages(), &[1, 0]).unwrap();
    let line = r#"{"order_id":7,"currency":"EUR","amount":999.99,"table":{"rate":1.083421},"x":1}"#;
    // 999.99 * 1.083421 = 1083.41016579, exactly; fields in the order written, others dropped.
    assert_eq!(
        run(&mut c, line).unwrap().as_deref(),
        Some(r#"{"id":7,"currency":"EUR","amount_usd":1083.41016579}"#)
    );
    let small = r#"{"order_id":8,"currency":"EUR","amount":19.99,"table":{"rate":1.083421}}"#;
    assert_eq!(run(&mut c, small).unwrap(), None);
    let yen = r#"{"order_id":9,"currency":"JPY","amount":5000,"table":{"rate":1}}"#;
    assert_eq!(run(&mut c, yen).unwrap(), None);
    // No rate: amount * null is null, and a null condition drops the record.
    let no_rate = r#"{"order_id":10,"currency":"EUR","amount":5000}"#;
    assert_eq!(run(&mut c, no_rate).unwrap(), None);
}

/// A first step fed the tokens the source's parser found in the same line writes exactly
/// what its own scan of the line writes.
#[test]
fn a_first_step_reading_the_source_parsers_tokens_writes_what_its_own_scan_writes() {
    use crate::plan::TimeUnit;
    use crate::record::bind::RecordParser;
    let st = stages();
    let (mut own, mut fused) = (
        StepChain::new(&st, &[1, 0]).unwrap(),
        StepChain::new(&st, &[1, 0]).unwrap(),
    );
    let mut parser = RecordParser::new("ts", TimeUnit::Millis, &[]).unwrap();
    let map = parser.keep_fields(fused.first_fields().unwrap()).unwrap();
    fused.read_first_from(map);
    let lines = [
        r#"{"ts":1,"order_id":7,"currency":"EUR","amount":999.99,"table":{"rate":1.083421}}"#,
        r#"{"table":{"rate":2},"amount":5000,"currency":"U\u0053D","ts":2,"order_id":"a\"b"}"#,
        r#"{ "ts" : 3 , "amount" : 1e3 , "currency" : "é" , "order_id" : null }"#,
        r#"{"ts":4,"amount":5000,"currency":"EUR"}"#,
        r#"{"ts":5,"order_id":[1,{"x":2}],"currency":"CHF","amount":2000,"table":{"rate":0.5}}"#,
        r#"{"ts":6,"order_id":1,"currency":"CHF","amount":"x","table":{"rate":0.5}}"#,
    ];
    for line in lines {
        parser.parse(line.as_bytes()).unwrap();
        let got = match fused.apply(line.as_bytes(), parser.kept()) {
            Ok(Outcome::Kept(b)) => Ok(Some(String::from_utf8(b.to_vec()).unwrap())),
            Ok(Outcome::Dropped) => Ok(None),
            Err(e) => Err(e),
        };
        assert_eq!(got, run(&mut own, line), "{line}");
    }
    // Nothing kept (another source's parser, or none): the step scans the line itself.
    let line = lines[0].as_bytes();
    assert!(matches!(fused.apply(line, None), Ok(Outcome::Kept(_))));
}

#[test]
fn a_filter_alone_keeps_the_line_as_it_is() {
    let st = vec![StepPlan {
        name: "f".into(),
        kind: StepKind::Filter {
            condition: "bid > 100".into(),
        },
    }];
    let mut c = StepChain::new(&st, &[0]).unwrap();
    let line = r#"{ "bid" : 250, "ts": 1 }"#;
    assert_eq!(run(&mut c, line).unwrap().as_deref(), Some(line));
    assert_eq!(run(&mut c, r#"{"bid":100}"#).unwrap(), None);
}

#[test]
fn a_type_error_names_the_stage_field_expression_and_column() {
    let mut c = StepChain::new(&stages(), &[1]).unwrap();
    let line = r#"{"order_id":7,"currency":"EUR","amount":"lots","table":{"rate":1.5}}"#;
    let e = run(&mut c, line).unwrap_err();
    assert!(
        e.starts_with("select `priced`, field `amount_usd`: `amount * table.rate` at column")
            && e.contains("(in field `amount`)"),
        "{e}"
    );
}

/// Plain fields are copied as tokens only where that gives the general path's bytes: the
/// same select through `coalesce(x, null)` (evaluated, never copied) is the reference.
#[test]
fn plain_fields_write_exactly_what_evaluating_them_writes() {
    let select = |name: &str, a: &str, b: &str| StepPlan {
        name: name.into(),
        kind: StepKind::Select {
            fields: vec![("a".into(), a.into()), ("b".into(), b.into())],
        },
    };
    let st = vec![
        select("plain", "v", "o.v"),
        select("general", "coalesce(v, null)", "coalesce(o.v, null)"),
    ];
    let (mut plain, mut general) = (
        StepChain::new(&st, &[0]).unwrap(),
        StepChain::new(&st, &[1]).unwrap(),
    );
    let values = [
        r#""ad-7""#,
        r#""é ✓""#,
        r#""a\"b""#,
        r#""tab\u0009""#,
        r#""""#,
        "12",
        "-5",
        "0",
        "-0",
        "1.2340",
        "-0.50",
        "1e3",
        "123456789012345678",
        "12345678901234567890",
        "-9223372036854775808",
        "true",
        "false",
        "null",
        r#"{"x":1}"#,
        "[1]",
    ];
    for v in values {
        for line in [
            format!(r#"{{"v":{v},"o":{{"v":{v}}}}}"#),
            format!(r#"{{"o":{{"w":{v}}}}}"#),
        ] {
            let (p, g) = (run(&mut plain, &line), run(&mut general, &line));
            match (&p, &g) {
                (Ok(p), Ok(g)) => assert_eq!(p, g, "{line}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{line}: plain {p:?}, general {g:?}"),
            }
        }
    }
}

#[test]
fn sql_timestamp_of_a_field_writes_exactly_what_evaluating_it_writes() {
    let select = |name: &str, a: &str| StepPlan {
        name: name.into(),
        kind: StepKind::Select {
            fields: vec![("a".into(), a.into()), ("n".into(), "v".into())],
        },
    };
    // `coalesce(...)` keeps the same call off the direct path.
    let st = vec![
        select("direct", "sql_timestamp(v)"),
        select("general", "coalesce(sql_timestamp(v), null)"),
    ];
    let (mut direct, mut general) = (
        StepChain::new(&st, &[0]).unwrap(),
        StepChain::new(&st, &[1]).unwrap(),
    );
    let values = [
        "0",
        "-1",
        "1500",
        "1020",
        "1700000000013",
        "1700000000010",
        "1700000000100",
        "951782400007",
        "253402300799999",
        "253402300800000",
        "-62167219200000",
        "-62167219200001",
        "9223372036854775807",
        "1.5",
        "\"12\"",
        "null",
        "true",
    ];
    for v in values {
        for line in [format!(r#"{{"v":{v}}}"#), r#"{"w":1}"#.to_string()] {
            let (d, g) = (run(&mut direct, &line), run(&mut general, &line));
            match (&d, &g) {
                (Ok(d), Ok(g)) => assert_eq!(d, g, "{line}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{line}: direct {d:?}, general {g:?}"),
            }
        }
    }
    // Spot checks against hand-written text (Flink's SQL_TIMESTAMP_FORMAT).
    let got = run(&mut direct, r#"{"v":1700000000010}"#).unwrap().unwrap();
    assert_eq!(got, r#"{"a":"2023-11-14 22:13:20.01","n":1700000000010}"#);
}
