//! How a changelog reaches an output: the row kinds a sink takes and the bytes it writes for each.
//!
//! Operators emit rows as JSON lines with a [`RowKind`]. An append-only output writes inserts
//! (and, as an upsert log, the new value of a re-fired window) as they are; the others encode
//! every kind as Flink does, so a consumer of either engine reads the same changelog:
//! - `print`: `+I[a, 1]`, `-U[a, 1]`, `+U[a, 2]`, `-D[a, 2]` (Flink's `print` connector);
//! - `debezium-json`: `{"before":null,"after":{..},"op":"c"}` for `+I` and `+U`,
//!   `{"before":{..},"after":null,"op":"d"}` for `-U` and `-D` (Flink's encoding: an update is a
//!   `d` then a `c`);
//! - by key: one byte of kind ([`RowKind::code`]) before the line, for outputs that apply a row
//!   by its key (an upsert or a delete).

use super::event::RowKind;

/// How a sink writes a changelog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangelogEncoding {
    /// Rows as they are, one line each: inserts, and the new value of a re-fired window (an
    /// upsert log by the window's key); the rows an update or delete takes back are not written.
    /// An updating result (a group aggregate's) is refused by the plan.
    Append,
    /// Flink's `print` rows.
    Print,
    /// Flink's `debezium-json` envelope.
    Debezium,
    /// Applied by key: the kind's [`RowKind::code`] byte, then the line.
    ByKey,
}

impl ChangelogEncoding {
    /// Whether it takes every row kind (an updating result).
    pub fn takes_updates(self) -> bool {
        self != ChangelogEncoding::Append
    }

    /// How `explain` and messages name it.
    pub fn describe(self) -> &'static str {
        match self {
            ChangelogEncoding::Append => "append-only",
            ChangelogEncoding::Print => "changelog as +I/-U/+U/-D rows",
            ChangelogEncoding::Debezium => "changelog as debezium-json",
            ChangelogEncoding::ByKey => "changelog applied by key (upsert, delete)",
        }
    }

    /// Appends what the output writes for one row `line` (a JSON object ending in `\n`) of kind
    /// `kind`; returns whether it wrote anything.
    pub fn encode(self, kind: RowKind, line: &[u8], out: &mut Vec<u8>) -> bool {
        match self {
            ChangelogEncoding::Append if kind.is_retraction() => return false,
            ChangelogEncoding::Append => out.extend_from_slice(line),
            ChangelogEncoding::Print => print_row(kind, line, out),
            ChangelogEncoding::Debezium => {
                let row = line.strip_suffix(b"\n").unwrap_or(line);
                if kind.is_retraction() {
                    out.extend_from_slice(b"{\"before\":");
                    out.extend_from_slice(row);
                    out.extend_from_slice(b",\"after\":null,\"op\":\"d\"}\n");
                } else {
                    out.extend_from_slice(b"{\"before\":null,\"after\":");
                    out.extend_from_slice(row);
                    out.extend_from_slice(b",\"op\":\"c\"}\n");
                }
            }
            ChangelogEncoding::ByKey => {
                out.push(kind.code());
                out.extend_from_slice(line);
            }
        }
        true
    }
}

impl RowKind {
    /// One byte per kind, as a by-key output reads it: `I`, `u` (-U), `U` (+U), `D`.
    pub fn code(self) -> u8 {
        match self {
            RowKind::Insert => b'I',
            RowKind::UpdateBefore => b'u',
            RowKind::UpdateAfter => b'U',
            RowKind::Delete => b'D',
        }
    }

    /// The kind of a [`RowKind::code`] byte.
    pub fn of_code(b: u8) -> Option<RowKind> {
        Some(match b {
            b'I' => RowKind::Insert,
            b'u' => RowKind::UpdateBefore,
            b'U' => RowKind::UpdateAfter,
            b'D' => RowKind::Delete,
            _ => return None,
        })
    }
}

/// A line of a by-key output as [`ChangelogEncoding::ByKey`] wrote it: its kind and the row after
/// the kind's byte. A line without one (a JSON row starts with `{`, never with a kind's code:
/// lines staged before kinds were written) is an insert of the whole line.
pub fn split_kind(line: &[u8]) -> (RowKind, &[u8]) {
    match line.split_first() {
        Some((&k, row)) => match RowKind::of_code(k) {
            Some(kind) => (kind, row),
            None => (RowKind::Insert, line),
        },
        None => (RowKind::Insert, line),
    }
}

/// `+I[v1, v2]` for the JSON object `line`: its values in order, strings without quotes, numbers
/// exactly as written (a decimal keeps its scale), nested objects as `(..)` and arrays as `[..]`,
/// as Flink's `print` casts a row to a string. A line that is not a JSON object (none reaches
/// here from an operator) is written as it is after the kind.
fn print_row(kind: RowKind, line: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(kind.short().as_bytes());
    let row = line.strip_suffix(b"\n").unwrap_or(line);
    let start = out.len();
    let mut p = Printer { b: row, i: 0 };
    p.skip_ws();
    let whole = p.b.get(p.i) == Some(&b'{') && p.value(out, (b'[', b']')).is_some() && {
        p.skip_ws();
        p.i == row.len()
    };
    if !whole {
        out.truncate(start);
        out.extend_from_slice(row);
    }
    out.push(b'\n');
}

/// A walk over one JSON value, writing it as `print` shows it; `None` on malformed JSON.
struct Printer<'a> {
    b: &'a [u8],
    i: usize,
}

impl Printer<'_> {
    fn skip_ws(&mut self) {
        while self.b.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    /// Writes the value at `i`; an object between `brackets` (the top row's `[..]`, a nested
    /// row's `(..)`).
    fn value(&mut self, out: &mut Vec<u8>, brackets: (u8, u8)) -> Option<()> {
        self.skip_ws();
        match *self.b.get(self.i)? {
            b'"' => {
                let raw = self.string()?;
                out.extend_from_slice(super::json::unescape(raw).ok()?.as_bytes());
            }
            b'{' => {
                self.i += 1;
                out.push(brackets.0);
                self.items(out, b'}', true)?;
                out.push(brackets.1);
            }
            b'[' => {
                self.i += 1;
                out.push(b'[');
                self.items(out, b']', false)?;
                out.push(b']');
            }
            _ => {
                let from = self.i;
                while self
                    .b
                    .get(self.i)
                    .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
                {
                    self.i += 1;
                }
                out.extend_from_slice(&self.b[from..self.i]);
            }
        }
        Some(())
    }

    /// The members (or elements) up to `close`, separated by `, `; an object's keys are skipped.
    fn items(&mut self, out: &mut Vec<u8>, close: u8, keyed: bool) -> Option<()> {
        let mut first = true;
        loop {
            self.skip_ws();
            if *self.b.get(self.i)? == close {
                self.i += 1;
                return Some(());
            }
            if !first {
                (*self.b.get(self.i)? == b',').then_some(())?;
                self.i += 1;
                out.extend_from_slice(b", ");
            }
            first = false;
            if keyed {
                self.skip_ws();
                self.string()?;
                self.skip_ws();
                (*self.b.get(self.i)? == b':').then_some(())?;
                self.i += 1;
            }
            self.value(out, (b'(', b')'))?;
        }
    }

    /// The raw string token at `i` (with its quotes).
    fn string(&mut self) -> Option<&[u8]> {
        let from = self.i;
        (*self.b.get(self.i)? == b'"').then_some(())?;
        self.i += 1;
        loop {
            match *self.b.get(self.i)? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(&self.b[from..self.i]);
                }
                _ => self.i += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests;
