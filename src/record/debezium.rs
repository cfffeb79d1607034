//! Reading a changelog: Debezium's JSON envelope, as Flink's `debezium-json` format reads it.
//!
//! A line `{"before":{..},"after":{..},"op":"c"}` (or the same inside `"payload"`, when the
//! connector includes its schema) becomes the rows it changes, each with its kind: `c` (create)
//! and `r` (a snapshot read) insert `after` (`+I`); `u` takes `before` back and inserts `after`
//! (`-U`, `+U`); `d` deletes `before` (`-D`). Other fields (`source`, `ts_ms`, ...) are ignored,
//! and a `null` line (a Kafka tombstone, which Debezium writes after a delete) changes nothing.
//! An update or delete without `before` is an error, as in Flink: the table must log its old
//! rows (PostgreSQL: `REPLICA IDENTITY FULL`).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::event::RowKind;

/// The rows one envelope changes: none (a tombstone), one, or an update's two.
#[derive(Debug, PartialEq, Eq)]
pub enum Change<'a> {
    None,
    One(RowKind, &'a [u8]),
    Update { before: &'a [u8], after: &'a [u8] },
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    before: Option<&'a RawValue>,
    #[serde(borrow, default)]
    after: Option<&'a RawValue>,
    #[serde(borrow, default)]
    op: Option<&'a str>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
}

/// The rows `line` changes, or why it is not a Debezium change.
pub fn decode<'a>(line: &'a [u8]) -> Result<Change<'a>, String> {
    let text = std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?;
    if text.trim() == "null" {
        return Ok(Change::None);
    }
    let e: Envelope<'a> =
        serde_json::from_str(text).map_err(|err| format!("not a Debezium JSON change: {err}"))?;
    if e.op.is_none() && e.before.is_none() && e.after.is_none() {
        if let Some(p) = e.payload {
            return decode(p.get().as_bytes());
        }
    }
    let row = |v: Option<&'a RawValue>, what: &str| -> Result<&'a [u8], String> {
        match v.map(|r| r.get()) {
            Some(r) if r.trim_start().starts_with('{') => Ok(r.as_bytes()),
            Some(_) => Err(format!(
                "the \"{what}\" field of a Debezium change must be an object"
            )),
            None => Err(format!(
                "the \"{what}\" field of this Debezium change is null or missing"
            )),
        }
    };
    match e.op {
        Some("c" | "r") => Ok(Change::One(RowKind::Insert, row(e.after, "after")?)),
        Some("u") => {
            let before = row(e.before, "before").map_err(|m| {
                format!("{m}: an update needs its old row (for PostgreSQL, set the table's REPLICA IDENTITY to FULL)")
            })?;
            Ok(Change::Update {
                before,
                after: row(e.after, "after")?,
            })
        }
        Some("d") => {
            let before = row(e.before, "before").map_err(|m| {
                format!("{m}: a delete needs its old row (for PostgreSQL, set the table's REPLICA IDENTITY to FULL)")
            })?;
            Ok(Change::One(RowKind::Delete, before))
        }
        Some(other) => Err(format!(
            "unknown Debezium operation \"{other}\" (expected c, r, u or d)"
        )),
        None => Err("a Debezium change needs \"op\" (c, r, u or d)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> (RowKind, String) {
        match decode(line.as_bytes()) {
            Ok(Change::One(k, r)) => (k, String::from_utf8(r.to_vec()).unwrap()),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn each_operation_becomes_its_rows() {
        assert_eq!(
            one(r#"{"before":null,"after":{"id":1},"op":"c"}"#),
            (RowKind::Insert, r#"{"id":1}"#.into())
        );
        assert_eq!(
            one(r#"{"after":{"id":1},"op":"r","source":{"db":"x"},"ts_ms":5}"#),
            (RowKind::Insert, r#"{"id":1}"#.into())
        );
        assert_eq!(
            one(r#"{"before":{"id":1},"after":null,"op":"d"}"#),
            (RowKind::Delete, r#"{"id":1}"#.into())
        );
        assert_eq!(
            decode(br#"{"before":{"id":1,"v":2},"after":{"id":1,"v":3},"op":"u"}"#),
            Ok(Change::Update {
                before: br#"{"id":1,"v":2}"#,
                after: br#"{"id":1,"v":3}"#
            })
        );
        // With the connector's schema: the change is the payload.
        assert_eq!(
            one(
                r#"{"schema":{"type":"struct"},"payload":{"before":null,"after":{"id":2},"op":"c"}}"#
            ),
            (RowKind::Insert, r#"{"id":2}"#.into())
        );
        assert_eq!(decode(b"null"), Ok(Change::None));
    }

    #[test]
    fn broken_changes_say_why() {
        let why = |l: &str| decode(l.as_bytes()).unwrap_err();
        assert!(why(r#"{"before":null,"after":{"id":1},"op":"u"}"#).contains("REPLICA IDENTITY"));
        assert!(why(r#"{"before":null,"after":null,"op":"d"}"#).contains("REPLICA IDENTITY"));
        assert!(why(r#"{"after":{"id":1},"op":"x"}"#).contains("unknown Debezium operation"));
        assert!(why(r#"{"after":{"id":1}}"#).contains("needs \"op\""));
        assert!(why(r#"{"after":[1],"op":"c"}"#).contains("must be an object"));
        assert!(why(r#"{"after":{"id":1},"op":"c""#).contains("not a Debezium JSON change"));
        assert!(why("\u{0}garbage").contains("not a Debezium JSON change"));
        assert!(decode(&[0xff, 0xfe]).is_err());
    }
}
