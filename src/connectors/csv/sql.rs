//! Flink's `csv` format of a table (`'format' = 'csv'`): the physical columns, in the DDL's
//! order, name the fields (Flink's CSV format has no header); `csv.field-delimiter`, and
//! `csv.ignore-parse-errors` (a malformed line goes to the dead letters whatever it says).

use crate::connectors::csv::{CsvConfig, Format};
use crate::sql::ddl::Table;
use crate::sql::options::option_error;
use crate::sql::SqlError;

/// The format's options.
pub const OPTIONS: [&str; 2] = ["csv.field-delimiter", "csv.ignore-parse-errors"];

/// `format = "csv"` and its `csv` table for `t`.
pub fn format(t: &Table) -> Result<(Format, Option<CsvConfig>), SqlError> {
    let columns: Vec<String> = t
        .columns
        .iter()
        .filter(|c| c.computed.is_none())
        .map(|c| c.name.clone())
        .collect();
    let mut delimiter = None;
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
        delimiter = Some(d.to_string());
    }
    match t.option("csv.ignore-parse-errors") {
        None | Some("true") | Some("false") => {}
        Some(_) => {
            return Err(option_error(
                t,
                "csv.ignore-parse-errors",
                "expected 'true' or 'false'".into(),
            ))
        }
    }
    let csv = CsvConfig {
        header: false,
        columns,
        delimiter,
    };
    Ok((Format::Csv, Some(csv)))
}
