//! The statements the postgres sink sends, as text: the table it creates from the result's
//! columns, the catalog query that reads an existing table's columns, and the one upsert per
//! batch (`INSERT ... SELECT FROM unnest(text arrays) ON CONFLICT (key) DO UPDATE`), so a batch of
//! any size is one statement with one parameter per column.
//!
//! Values travel as text and are converted by the server to each column's type, so exact
//! decimals stay exact and a value that does not fit (too long, out of range) is refused by the
//! server with its own message. Conversions cast to the column's base type and let the
//! assignment to the column apply its modifier: an explicit `::varchar(10)` would truncate
//! silently, an assignment refuses.

use crate::record::columns::{Column, ColumnType};

/// `"name"` with inner quotes doubled: every identifier the sink writes is quoted, so a
/// result field may be named anything.
pub fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// `'text'` with inner quotes doubled.
pub fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `schema.name` or `name`, each part quoted.
pub fn table_ident(table: &str) -> String {
    table.split('.').map(quote).collect::<Vec<_>>().join(".")
}

/// The SQL type a column of an inferred or pinned type gets in a created table.
pub fn sql_type(ty: ColumnType) -> String {
    match ty {
        ColumnType::BigInt => "BIGINT".into(),
        ColumnType::Double => "DOUBLE PRECISION".into(),
        ColumnType::Decimal(None) => "NUMERIC".into(),
        ColumnType::Decimal(Some((p, s))) => format!("NUMERIC({p},{s})"),
        ColumnType::Text => "TEXT".into(),
        ColumnType::Boolean => "BOOLEAN".into(),
        ColumnType::Timestamp => "TIMESTAMPTZ".into(),
        ColumnType::Json => "JSONB".into(),
    }
}

/// `CREATE TABLE IF NOT EXISTS` with `key` as its primary key.
pub fn create_table(table: &str, columns: &[Column], key: &[String]) -> String {
    let mut cols: Vec<String> = columns
        .iter()
        .map(|c| {
            let not_null = if key.contains(&c.name) {
                " NOT NULL"
            } else {
                ""
            };
            format!("{} {}{not_null}", quote(&c.name), sql_type(c.ty))
        })
        .collect();
    if !key.is_empty() {
        let k: Vec<String> = key.iter().map(|k| quote(k)).collect();
        cols.push(format!("PRIMARY KEY ({})", k.join(", ")));
    }
    format!(
        "CREATE TABLE IF NOT EXISTS {} ({})",
        table_ident(table),
        cols.join(", ")
    )
}

/// Reads (column name, base type name) of the table `$1` in column order.
pub const COLUMNS_QUERY: &str = "SELECT a.attname::text, format_type(a.atttypid, NULL) \
     FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 \
     AND NOT a.attisdropped ORDER BY a.attnum";

/// Columns of the table `$1` that are NOT NULL without a default: every row must fill them.
pub const REQUIRED_QUERY: &str = "SELECT a.attname::text FROM pg_attribute a \
     WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped \
     AND a.attnotnull AND NOT a.atthasdef AND a.attidentity = '' AND a.attgenerated = ''";

/// A column of the table as the catalog describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct TableColumn {
    pub name: String,
    /// `format_type` without the modifier: `bigint`, `numeric`, `character varying`, ...
    pub base_type: String,
}

/// The expression that turns the text `u.<col>` into a value for a column of `base_type`.
fn convert(col: &str, base_type: &str) -> String {
    let v = format!("u.{}", quote(col));
    match base_type {
        "text" | "character varying" | "character" | "name" => v,
        "timestamp with time zone" => format!(
            "(CASE WHEN {v} ~ '^-?[0-9]+$' THEN timestamptz 'epoch' + {v}::bigint * interval '1 millisecond' \
             ELSE {v}::timestamptz END)"
        ),
        // Epoch ms are UTC whatever the server's TimeZone; a written time is taken as it is.
        "timestamp without time zone" | "date" => format!(
            "(CASE WHEN {v} ~ '^-?[0-9]+$' THEN timestamp 'epoch' + {v}::bigint * interval '1 millisecond' \
             ELSE {v}::timestamp END)::{base_type}"
        ),
        other => format!("{v}::{other}"),
    }
}

/// The upsert of one batch: `$i` is the text array of `columns[i]`. Without a key, a plain
/// insert; with every column in the key, `DO NOTHING` (nothing else to update).
pub fn upsert(table: &str, columns: &[TableColumn], key: &[String]) -> String {
    let names: Vec<String> = columns.iter().map(|c| quote(&c.name)).collect();
    let arrays: Vec<String> = (1..=columns.len())
        .map(|i| format!("${i}::text[]"))
        .collect();
    let values: Vec<String> = columns
        .iter()
        .map(|c| convert(&c.name, &c.base_type))
        .collect();
    let mut sql = format!(
        "INSERT INTO {} ({}) SELECT {} FROM unnest({}) AS u({})",
        table_ident(table),
        names.join(", "),
        values.join(", "),
        arrays.join(", "),
        names.join(", ")
    );
    if !key.is_empty() {
        let k: Vec<String> = key.iter().map(|k| quote(k)).collect();
        let set: Vec<String> = columns
            .iter()
            .filter(|c| !key.contains(&c.name))
            .map(|c| format!("{0} = EXCLUDED.{0}", quote(&c.name)))
            .collect();
        sql.push_str(&format!(" ON CONFLICT ({}) DO ", k.join(", ")));
        if set.is_empty() {
            sql.push_str("NOTHING");
        } else {
            sql.push_str(&format!("UPDATE SET {}", set.join(", ")));
        }
    }
    sql
}

/// The delete of one batch of keys: `$i` is the text array of `key[i]`, each converted as the
/// upsert converts it, so a key written by an upsert is found by a delete.
pub fn delete(table: &str, key: &[TableColumn]) -> String {
    let names: Vec<String> = key.iter().map(|c| quote(&c.name)).collect();
    let arrays: Vec<String> = (1..=key.len()).map(|i| format!("${i}::text[]")).collect();
    let matches: Vec<String> = key
        .iter()
        .map(|c| format!("t.{} = {}", quote(&c.name), convert(&c.name, &c.base_type)))
        .collect();
    format!(
        "DELETE FROM {} AS t USING unnest({}) AS u({}) WHERE {}",
        table_ident(table),
        arrays.join(", "),
        names.join(", "),
        matches.join(" AND ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str, base_type: &str) -> TableColumn {
        TableColumn {
            name: name.into(),
            base_type: base_type.into(),
        }
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote(r#"a"b"#), r#""a""b""#);
        assert_eq!(table_ident("ads.spend"), r#""ads"."spend""#);
    }

    #[test]
    fn upsert_updates_every_non_key_column() {
        let cols = [
            col("ad_id", "text"),
            col("window_start", "bigint"),
            col("spend", "numeric"),
        ];
        let key = ["ad_id".to_string(), "window_start".to_string()];
        assert_eq!(
            upsert("t", &cols, &key),
            r#"INSERT INTO "t" ("ad_id", "window_start", "spend") SELECT u."ad_id", u."window_start"::bigint, u."spend"::numeric FROM unnest($1::text[], $2::text[], $3::text[]) AS u("ad_id", "window_start", "spend") ON CONFLICT ("ad_id", "window_start") DO UPDATE SET "spend" = EXCLUDED."spend""#
        );
        assert!(upsert("t", &cols[..1], &key[..1]).ends_with("DO NOTHING"));
        assert!(!upsert("t", &cols, &[]).contains("ON CONFLICT"));
    }

    #[test]
    fn delete_matches_every_key_column_converted_as_written() {
        let key = [col("ad_id", "text"), col("day", "date")];
        let d = delete("ads.t", &key);
        assert_eq!(
            d,
            format!(
                r#"DELETE FROM "ads"."t" AS t USING unnest($1::text[], $2::text[]) AS u("ad_id", "day") WHERE t."ad_id" = u."ad_id" AND t."day" = {}"#,
                convert("day", "date")
            )
        );
    }

    #[test]
    fn created_tables_key_on_the_key() {
        let cols = [
            Column {
                name: "k".into(),
                ty: ColumnType::Text,
            },
            Column {
                name: "s".into(),
                ty: ColumnType::Decimal(Some((18, 2))),
            },
        ];
        assert_eq!(
            create_table("t", &cols, &["k".into()]),
            r#"CREATE TABLE IF NOT EXISTS "t" ("k" TEXT NOT NULL, "s" NUMERIC(18,2), PRIMARY KEY ("k"))"#
        );
    }
}
