//! Flink's built-in functions through the SQL front end: each expression compiled as a query's
//! column, evaluated on one record and written as the sink writes it, against the value Flink
//! gives (Flink's documentation and hand computation), including NULLs and Flink's result types.

use super::{compiled, refusal, select_fields};

const T: &str = "CREATE TABLE t (s STRING, n BIGINT, d DECIMAL(10, 3), ts BIGINT, u STRING,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt
) WITH ('connector' = 'filesystem', 'path' = 'data/t.ndjson', 'format' = 'json');
";

/// 2024-01-05 10:30:00 UTC, a Friday.
const RECORD: &str =
    r#"{"s": "hello wORLD", "n": -5, "d": -7.250, "ts": 1704450600000, "u": null}"#;

/// The JSON value `expr` (written into a column of type `ty`) gives on [`RECORD`].
fn value(expr: &str, ty: &str) -> String {
    let sql = format!("{T}CREATE TABLE o (x {ty}) WITH ('connector' = 'print');\nINSERT INTO o SELECT {expr} AS x FROM t");
    let c = compiled(&sql);
    let fields = select_fields(&c, "insert_1_o");
    let (_, text) = fields
        .iter()
        .find(|(name, _)| name == "x")
        .unwrap_or_else(|| panic!("no column x: {}", c.toml()));
    let record: serde_json::Value = serde_json::from_str(RECORD).unwrap_or_default();
    eval_json(text, &record)
}

/// Compiled expression `text` on `record`, as JSON.
fn eval_json(text: &str, record: &serde_json::Value) -> String {
    let program = crate::expr::compile(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let v = program
        .eval(record)
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut out = Vec::new();
    v.write_json(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn table(cases: &[(&str, &str, &str)]) {
    for (expr, ty, want) in cases {
        assert_eq!(value(expr, ty), *want, "`{expr}`");
    }
}

#[test]
fn integer_division_and_numeric_functions() {
    table(&[
        ("n / 3", "BIGINT", "-1"),
        ("n / 2 * 2", "BIGINT", "-4"),
        ("SIGN(n)", "BIGINT", "-1"),
        ("TRUNCATE(d, 1)", "DECIMAL(10, 1)", "-7.2"),
        ("HEX(255)", "STRING", r#""FF""#),
        ("BIN(n + 9)", "STRING", r#""100""#),
    ]);
}

#[test]
fn conditional_forms() {
    table(&[
        ("IF(n > 0, 'pos', 'neg')", "STRING", r#""neg""#),
        ("IF(u = 'x', 1, 2)", "INT", "2"),
        ("NULLIF(n, -5)", "BIGINT", "null"),
        ("NULLIF(n, 3)", "BIGINT", "-5"),
        ("u IS DISTINCT FROM NULL", "BOOLEAN", "false"),
        ("s IS DISTINCT FROM u", "BOOLEAN", "true"),
        ("u IS NOT DISTINCT FROM NULL", "BOOLEAN", "true"),
        ("n IS DISTINCT FROM -5", "BOOLEAN", "false"),
        ("(u = 'x') IS NOT TRUE", "BOOLEAN", "true"),
        ("(n < 0) IS TRUE", "BOOLEAN", "true"),
        ("(u = 'x') IS FALSE", "BOOLEAN", "false"),
    ]);
}

#[test]
fn string_functions_and_syntax_forms() {
    table(&[
        ("POSITION('l' IN s)", "INT", "3"),
        ("INSTR(s, 'o')", "INT", "5"),
        ("LOCATE('l', s, 4)", "INT", "4"),
        ("LOCATE('o', s, 6)", "INT", "0"),
        ("TRIM(LEADING 'h' FROM s)", "STRING", r#""ello wORLD""#),
        ("TRIM(BOTH 'hD' FROM s)", "STRING", r#""ello wORL""#),
        ("TRIM(TRAILING ' ' FROM '  x  ')", "STRING", r#""  x""#),
        (
            "OVERLAY(s PLACING 'J' FROM 1 FOR 1)",
            "STRING",
            r#""Jello wORLD""#,
        ),
        ("INITCAP(s)", "STRING", r#""Hello World""#),
        ("CONCAT_WS('-', s, u, 'x')", "STRING", r#""hello wORLD-x""#),
        ("LPAD(CAST(n AS STRING), 4, '0')", "STRING", r#""00-5""#),
        ("REPEAT(u, 2)", "STRING", "null"),
        (
            "MD5('abc')",
            "STRING",
            r#""900150983cd24fb0d6963f7d28e17f72""#,
        ),
        ("SHA256(u)", "STRING", "null"),
        (
            "PARSE_URL('http://a.com/p?k=v', 'QUERY', 'k')",
            "STRING",
            r#""v""#,
        ),
        ("LEFT(s, 5)", "STRING", r#""hello""#),
    ]);
}

#[test]
fn temporal_functions() {
    table(&[
        (
            "FLOOR(rt TO HOUR)",
            "TIMESTAMP_LTZ(3)",
            r#""2024-01-05 10:00:00Z""#,
        ),
        (
            "CEIL(rt TO MONTH)",
            "TIMESTAMP_LTZ(3)",
            r#""2024-02-01 00:00:00Z""#,
        ),
        ("EXTRACT(DOW FROM rt)", "BIGINT", "6"),
        ("EXTRACT(QUARTER FROM rt)", "BIGINT", "1"),
        ("DAYOFWEEK(rt)", "BIGINT", "6"),
        ("DAYOFYEAR(rt)", "BIGINT", "5"),
        ("WEEK(rt)", "BIGINT", "1"),
        (
            "TIMESTAMPADD(MONTH, 1, rt)",
            "TIMESTAMP_LTZ(3)",
            r#""2024-02-05 10:30:00Z""#,
        ),
        (
            "TIMESTAMPDIFF(DAY, rt, TIMESTAMPADD(WEEK, 1, rt))",
            "INT",
            "7",
        ),
        (
            "TO_TIMESTAMP('2024-01-05 10:30:00')",
            "TIMESTAMP(3)",
            r#""2024-01-05 10:30:00""#,
        ),
        (
            "TO_TIMESTAMP('05/01/2024', 'dd/MM/yyyy')",
            "TIMESTAMP(3)",
            r#""2024-01-05 00:00:00""#,
        ),
        ("TO_TIMESTAMP('nope')", "TIMESTAMP(3)", "null"),
        (
            "UNIX_TIMESTAMP('2024-01-05 10:30:00')",
            "BIGINT",
            "1704450600",
        ),
        (
            "FROM_UNIXTIME(1704450600)",
            "STRING",
            r#""2024-01-05 10:30:00""#,
        ),
        ("FROM_UNIXTIME(0, 'yyyy')", "STRING", r#""1970""#),
        ("TO_DATE('2024-01-05')", "DATE", r#""2024-01-05""#),
        (
            "DATE_FORMAT('2024-01-05 10:30:00', 'yyyy/MM/dd HH')",
            "STRING",
            r#""2024/01/05 10""#,
        ),
        ("DATE_FORMAT('2024-01-05', 'yyyy')", "STRING", "null"),
        (
            "UNIX_TIMESTAMP(DATE_FORMAT(FLOOR(rt TO DAY), 'yyyy-MM-dd HH:mm:ss')) * 1000",
            "BIGINT",
            "1704412800000",
        ),
    ]);
}

#[test]
fn refusals_name_the_function_and_reason() {
    let out = "CREATE TABLE o (x BIGINT) WITH ('connector' = 'print');\n";
    for (expr, want) in [
        ("UNIX_TIMESTAMP()", "UNIX_TIMESTAMP() without arguments"),
        ("TIMESTAMPADD(FORTNIGHT, 1, rt)", "expected a time unit"),
        ("TIMESTAMPDIFF(DAY, s, rt)", "expected a TIMESTAMP(3)"),
        ("FLOOR(rt TO WEEK)", "FLOOR/CEIL to WEEK"),
        ("IF(n > 0, 1)", "IF takes a condition and two values"),
        ("LPAD(s, 2)", "LPAD takes 3 arguments, got 2"),
        ("NO_SUCH_FN(s)", "function NO_SUCH_FN is not supported yet"),
        ("PI(1)", "PI takes no arguments"),
    ] {
        let (_, _, m) = refusal(&format!("{T}{out}INSERT INTO o SELECT {expr} AS x FROM t"));
        assert!(m.contains(want), "{expr}: {m}");
    }
}

#[test]
fn doubles_casts_and_math() {
    table(&[
        ("CAST(n AS DOUBLE)", "DOUBLE", "-5.0"),
        ("CAST(d AS DOUBLE) * 2", "DOUBLE", "-14.5"),
        (
            "CAST('0.1' AS DOUBLE) + CAST('0.2' AS DOUBLE)",
            "DOUBLE",
            "0.30000000000000004",
        ),
        (
            "CAST(CAST(n AS DOUBLE) / 2 AS STRING)",
            "STRING",
            r#""-2.5""#,
        ),
        ("TRY_CAST(s AS BIGINT)", "BIGINT", "null"),
        ("TRY_CAST('42' AS INT)", "INT", "42"),
        ("TRY_CAST(s AS DOUBLE)", "DOUBLE", "null"),
        ("POWER(n, 2)", "DOUBLE", "25.0"),
        ("SQRT(ABS(n) + 11)", "DOUBLE", "4.0"),
        ("ROUND(PI(), 3)", "DOUBLE", "3.142"),
        ("LOG10(1000)", "DOUBLE", "3.0"),
        ("LN(E())", "DOUBLE", "1.0"),
        ("DEGREES(PI())", "DOUBLE", "180.0"),
        ("CAST(POWER(2, 40) AS BIGINT)", "BIGINT", "1099511627776"),
    ]);
}

#[test]
fn a_double_column_reads_as_a_double() {
    let sql = "CREATE TABLE p (price DOUBLE) WITH ('connector' = 'filesystem', 'path' = 'data/p.ndjson', 'format' = 'json');
CREATE TABLE o (x DOUBLE, y DOUBLE) WITH ('connector' = 'print');
INSERT INTO o SELECT price * 3, price FROM p";
    let c = compiled(sql);
    let fields = select_fields(&c, "insert_1_o");
    let record: serde_json::Value = serde_json::json!({"price": 0.1});
    let values: Vec<String> = fields
        .iter()
        .map(|(_, text)| eval_json(text, &record))
        .collect();
    // Flink: 0.1 * 3 as doubles, and the column as Java prints a double.
    assert_eq!(values, ["0.30000000000000004", "0.1"], "{}", c.toml());
}
