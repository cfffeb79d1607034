//! A table's `format` and its options (Flink's names) as a source's or sink's TOML: `json`
//! (`json.*`), `csv` (columns by position from the DDL, as Flink's CSV format reads them;
//! `csv.field-delimiter`, `csv.ignore-parse-errors`) and, on Kafka, `avro-confluent` (the
//! Confluent wire format through a Schema Registry: `avro-confluent.url`,
//! `avro-confluent.subject`). A malformed record goes to the dead letters whatever the options
//! say: sluice never fails a job on one.

use super::connectors::{check_json_options, option_error, JSON_OPTIONS};
use super::ddl::Table;
use super::error::SqlError;
use super::expr::quote;

const CSV_OPTIONS: [&str; 2] = ["csv.field-delimiter", "csv.ignore-parse-errors"];
const AVRO_OPTIONS: [&str; 2] = ["avro-confluent.url", "avro-confluent.subject"];

/// The format options a table of this format may set, besides its connector's own.
pub(super) fn options(t: &Table) -> &'static [&'static str] {
    match t.option("format") {
        Some("csv") => &CSV_OPTIONS,
        Some("avro-confluent") => &AVRO_OPTIONS,
        _ => &JSON_OPTIONS,
    }
}

/// Where a format is read or written: what each supports.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    FileSource,
    KafkaSource,
    KafkaSink,
}

/// The `format = ...` lines (and the format's own table) for `t` at `place`.
pub(super) fn toml(t: &Table, place: Place) -> Result<String, SqlError> {
    let supported = match place {
        Place::FileSource => "'json', 'csv'",
        Place::KafkaSource => "'json', 'csv', 'avro-confluent'",
        Place::KafkaSink => "'json', 'avro-confluent'",
    };
    match (t.option("format"), place) {
        (Some("json"), _) => {
            check_json_options(t)?;
            Ok("format = \"json\"\n".into())
        }
        (Some("csv"), Place::FileSource | Place::KafkaSource) => csv(t),
        (Some("avro-confluent"), Place::KafkaSource | Place::KafkaSink) => avro(t),
        (Some(other), _) => Err(option_error(
            t,
            "format",
            format!("format '{other}' is not supported here yet (supported: {supported})"),
        )),
        (None, _) => Err(SqlError::span(
            t.span,
            format!("table `{}` needs the option 'format' ({supported})", t.name),
        )),
    }
}

/// Flink's CSV format has no header: the physical columns, in the DDL's order, name the fields.
fn csv(t: &Table) -> Result<String, SqlError> {
    let columns: Vec<String> = t
        .columns
        .iter()
        .filter(|c| c.computed.is_none())
        .map(|c| quote(&c.name))
        .collect();
    let mut out = format!(
        "format = \"csv\"\ncsv = {{ columns = [{}]",
        columns.join(", ")
    );
    if let Some(d) = t.option("csv.field-delimiter") {
        // Flink writes a tab as '\t' in the option's text.
        let d = if d == "\\t" { "\t" } else { d };
        if d.len() != 1 || !d.is_ascii() {
            return Err(option_error(
                t,
                "csv.field-delimiter",
                format!("'{d}': expected one ASCII character"),
            ));
        }
        out += &format!(", delimiter = {}", quote(d));
    }
    out += " }\n";
    match t.option("csv.ignore-parse-errors") {
        None | Some("true") | Some("false") => Ok(out),
        Some(_) => Err(option_error(
            t,
            "csv.ignore-parse-errors",
            "expected 'true' or 'false'".into(),
        )),
    }
}

fn avro(t: &Table) -> Result<String, SqlError> {
    let Some(url) = t.option("avro-confluent.url") else {
        return Err(SqlError::span(
            t.span,
            format!("table `{}`: format 'avro-confluent' needs the option 'avro-confluent.url' (the Schema Registry)", t.name),
        ));
    };
    let mut registry = format!("url = {}", quote(url));
    if let Some(subject) = t.option("avro-confluent.subject") {
        registry += &format!(", subject = {}", quote(subject));
    }
    Ok(format!(
        "format = \"avro\"\nschema_registry = {{ {registry} }}\n"
    ))
}
