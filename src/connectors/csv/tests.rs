use super::*;

fn json(columns: &[&str], line: &str) -> Result<serde_json::Value, String> {
    let cols: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let mut out = Vec::new();
    CsvShape::new(&cols, b',').to_json(line.as_bytes(), &mut out)?;
    Ok(serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out))))
}

#[test]
fn fields_become_numbers_strings_and_nulls_with_their_text_kept() {
    let cols = ["id", "name", "price", "zip", "note", "ok", "e"];
    let v = json(&cols, "7,\"Smith, \"\"Al\"\"\",12.50,01234,,true,-1.5e3\r").unwrap();
    assert_eq!(
        v,
        serde_json::json!({"id": 7, "name": "Smith, \"Al\"", "price": 12.5, "zip": "01234",
                           "note": null, "ok": "true", "e": -1500.0})
    );
    // The decimal keeps its digits: the JSON text is `12.50`, not a float's rendering.
    let mut out = Vec::new();
    let c: Vec<String> = vec!["p".into()];
    CsvShape::new(&c, b',').to_json(b"12.50", &mut out).unwrap();
    assert_eq!(out, b"{\"p\":12.50}");
    // Quoted digits stay text; an empty quoted field is an empty string, not null.
    assert_eq!(
        json(&["a", "b"], "\"12\",\"\"").unwrap(),
        serde_json::json!({"a": "12", "b": ""})
    );
    assert_eq!(
        json(&["a", "b"], "x,").unwrap(),
        serde_json::json!({"a": "x", "b": null})
    );
    assert_eq!(json(&["a"], "").unwrap(), serde_json::json!({"a": null}));
}

#[test]
fn numbers_follow_the_json_grammar_only() {
    for (v, num) in [
        ("0", true),
        ("-0.5", true),
        ("10", true),
        ("1e9", true),
        ("1E-2", true),
        ("01", false),
        (".5", false),
        ("5.", false),
        ("1e", false),
        ("+1", false),
        ("0x10", false),
        ("NaN", false),
        ("-", false),
        ("1_000", false),
    ] {
        assert_eq!(is_json_number(v.as_bytes()), num, "{v}");
    }
}

#[test]
fn wrong_field_counts_and_broken_quotes_are_errors() {
    let cols = ["a", "b"];
    for (line, why) in [
        ("1", "1 fields; the source has 2 columns"),
        ("1,2,3", "more than the 2 columns"),
        ("\"open,2", "not closed"),
        ("\"a\"x,2", "after a closing quote"),
        ("a\"b,2", "a quote inside"),
    ] {
        let e = json(&cols, line).unwrap_err();
        assert!(e.contains(why), "{line}: {e}");
    }
    let mut out = Vec::new();
    let c: Vec<String> = vec!["a".into()];
    assert!(CsvShape::new(&c, b',')
        .to_json(b"\xff", &mut out)
        .unwrap_err()
        .contains("UTF-8"));
}

#[test]
fn a_header_names_the_columns_and_other_delimiters_work() {
    assert_eq!(
        header_columns(b"ts, ad_id ,\"price\"\r", b',').unwrap(),
        ["ts", "ad_id", "price"]
    );
    assert!(header_columns(b"a,,b", b',')
        .unwrap_err()
        .contains("no name"));
    assert!(header_columns(b"a,b,a", b',')
        .unwrap_err()
        .contains("twice"));
    let c: Vec<String> = vec!["a".into(), "b".into()];
    let mut out = Vec::new();
    CsvShape::new(&c, b';').to_json(b"1,5;x", &mut out).unwrap();
    assert_eq!(out, b"{\"a\":\"1,5\",\"b\":\"x\"}");
    CsvShape::new(&c, b'\t').to_json(b"1\t2", &mut out).unwrap();
    assert_eq!(out, b"{\"a\":1,\"b\":2}");
}
