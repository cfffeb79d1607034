//! Validation of `format = "csv"` and its `csv` table, for the sources that read CSV (files and
//! Kafka): the columns named, or to come from each file's header line.

use super::{CsvConfig, CsvPlan, Format};
use crate::connectors::check::Check;

/// The CSV layout of the source `cx` checks, when its `format` is CSV (`file`: a file source,
/// whose files may start with a header).
pub fn csv_plan(
    cx: &mut Check<'_>,
    format: Format,
    csv: Option<&CsvConfig>,
    file: bool,
) -> Option<CsvPlan> {
    if format != Format::Csv {
        if csv.is_some() {
            cx.err(cx.key("csv"), "`csv` is for format = \"csv\"".into());
        }
        return None;
    }
    let c = csv.cloned().unwrap_or_default();
    let delimiter = match c.delimiter.as_deref().map(str::as_bytes) {
        None => b',',
        Some(&[d]) if d.is_ascii() && d != b'"' && d != b'\n' && d != b'\r' => d,
        Some(_) => {
            cx.err(cx.key("csv").key("delimiter"), "one ASCII character other than a quote or a line end, e.g. \",\", \";\" or \"\\t\"".into());
            b','
        }
    };
    if c.header && !file {
        cx.err(
            cx.key("csv").key("header"),
            "a Kafka record has no header line: name the columns with `columns = [...]`".into(),
        );
    } else if !c.header && c.columns.is_empty() {
        cx.err(cx.key("csv"), "name the columns: `csv = { header = true }` (the first line of each file) or `csv = { columns = [\"ts\", ...] }`".into());
    }
    let mut seen = std::collections::HashSet::new();
    for col in &c.columns {
        if col.is_empty() || !seen.insert(col.as_str()) {
            cx.err(
                cx.key("csv").key("columns"),
                format!("`{col}`: column names must be non-empty and distinct"),
            );
        }
    }
    Some(CsvPlan {
        header: c.header,
        columns: c.columns,
        delimiter,
    })
}
