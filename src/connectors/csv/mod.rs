//! CSV records as JSON records: a `format = "csv"` source's line (a file line or a Kafka record's
//! value) is split into fields (RFC 4180: a field in double quotes may hold the delimiter and
//! doubled quotes; one record per line, so a quoted field cannot span lines) and written as the
//! JSON object `{"COLUMN": value, ...}` the rest of the engine reads. An unquoted field that is a
//! JSON number is a number (its text kept, so decimals stay exact), an empty unquoted one is null,
//! anything else a string. A line with another number of fields than there are columns, or with
//! a broken quote, is an error (a dead letter), never a guess.

use serde::{Deserialize, Serialize};

pub mod check;
pub mod sql;

/// Input encoding of a file or Kafka source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// One JSON object per line (per record).
    #[default]
    Json,
    /// Comma-separated values (RFC 4180 quoting), one record per line; see `csv`.
    Csv,
    /// Kafka only: Avro in the Confluent wire format; see `schema_registry`.
    Avro,
}

/// `csv = { ... }` of a `format = "csv"` source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CsvConfig {
    /// The first line of each file names the columns (files only).
    #[serde(default)]
    pub header: bool,
    /// The column names in order (instead of, or checked against, a header).
    #[serde(default)]
    pub columns: Vec<String>,
    /// One ASCII character; default `,`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
}

/// The columns and delimiter of a CSV source (columns named by the config or a file's header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvPlan {
    /// The first line of each file is a header (skipped; the columns are taken from the first
    /// file's when `columns` is empty).
    pub header: bool,
    pub columns: Vec<String>,
    pub delimiter: u8,
}

/// A CSV source's columns ready for conversion: each name already a JSON string.
#[derive(Debug, Clone)]
pub struct CsvShape {
    keys: Vec<Vec<u8>>,
    delimiter: u8,
}

impl CsvShape {
    pub fn new(columns: &[String], delimiter: u8) -> CsvShape {
        let keys = columns
            .iter()
            .map(|c| serde_json::to_vec(c).unwrap_or_else(|_| b"\"\"".to_vec()))
            .collect();
        CsvShape { keys, delimiter }
    }

    pub fn columns(&self) -> usize {
        self.keys.len()
    }

    /// Writes `line` (without its newline) as a JSON object into `out` (cleared).
    pub fn to_json(&self, line: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        out.push(b'{');
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut fields = Fields {
            line,
            at: 0,
            delimiter: self.delimiter,
            done: false,
        };
        let mut n = 0;
        let mut text = Vec::new();
        while let Some(field) = fields.next_field(&mut text)? {
            let Some(key) = self.keys.get(n) else {
                return Err(format!("more than the {} columns", self.keys.len()));
            };
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(key);
            out.push(b':');
            match field {
                Field::Quoted => string(&text, out)?,
                Field::Plain([]) => out.extend_from_slice(b"null"),
                Field::Plain(v) if is_json_number(v) => out.extend_from_slice(v),
                Field::Plain(v) => string(v, out)?,
            }
            n += 1;
        }
        if n != self.keys.len() {
            return Err(format!(
                "{n} fields; the source has {} columns",
                self.keys.len()
            ));
        }
        out.push(b'}');
        Ok(())
    }
}

/// The column names of a header line.
pub fn header_columns(line: &[u8], delimiter: u8) -> Result<Vec<String>, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut fields = Fields {
        line,
        at: 0,
        delimiter,
        done: false,
    };
    let mut names = Vec::new();
    let mut text = Vec::new();
    while let Some(f) = fields.next_field(&mut text)? {
        let bytes = match f {
            Field::Quoted => text.clone(),
            Field::Plain(v) => v.trim_ascii().to_vec(),
        };
        let name =
            String::from_utf8(bytes).map_err(|_| "a column name is not UTF-8".to_string())?;
        if name.is_empty() {
            return Err(format!(
                "column {} of the header has no name",
                names.len() + 1
            ));
        }
        if names.contains(&name) {
            return Err(format!("column `{name}` appears twice in the header"));
        }
        names.push(name);
    }
    Ok(names)
}

enum Field<'a> {
    Plain(&'a [u8]),
    /// Unquoted into the caller's buffer.
    Quoted,
}

struct Fields<'a> {
    line: &'a [u8],
    at: usize,
    delimiter: u8,
    done: bool,
}

impl<'a> Fields<'a> {
    fn next_field(&mut self, text: &mut Vec<u8>) -> Result<Option<Field<'a>>, String> {
        if self.done {
            return Ok(None);
        }
        let rest = &self.line[self.at..];
        if rest.first() != Some(&b'"') {
            let end = memchr::memchr(self.delimiter, rest).unwrap_or(rest.len());
            let v = &rest[..end];
            if v.contains(&b'"') {
                return Err(format!(
                    "a quote inside the unquoted field `{}`",
                    String::from_utf8_lossy(v)
                ));
            }
            self.advance(end);
            return Ok(Some(Field::Plain(v)));
        }
        text.clear();
        let mut i = 1;
        loop {
            let Some(q) = memchr::memchr(b'"', &rest[i..]) else {
                return Err("a quoted field is not closed (a record cannot span lines)".into());
            };
            text.extend_from_slice(&rest[i..i + q]);
            i += q + 1;
            if rest.get(i) == Some(&b'"') {
                text.push(b'"');
                i += 1;
                continue;
            }
            break;
        }
        match rest.get(i) {
            None => {}
            Some(&d) if d == self.delimiter => {}
            Some(_) => return Err("text after a closing quote".into()),
        }
        self.advance(i);
        Ok(Some(Field::Quoted))
    }

    /// Moves past a field of `len` bytes and its delimiter, if any.
    fn advance(&mut self, len: usize) {
        self.at += len;
        if self.at < self.line.len() {
            self.at += 1;
        } else {
            self.done = true;
        }
    }
}

fn string(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "a field is not UTF-8".to_string())?;
    serde_json::to_writer(&mut *out, text).map_err(|e| e.to_string())
}

/// JSON's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_json_number(v: &[u8]) -> bool {
    let mut i = usize::from(v.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let s = *i;
        while v.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - s
    };
    match v.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if v.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(v.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(v.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == v.len()
}

#[cfg(test)]
mod tests;
