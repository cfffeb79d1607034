//! Result lines: `{<group-by fields>,"window_start":S,"window_end":E,<aggregates>}`, and a
//! group aggregate's `{<group-by fields>,<aggregates>}`.
//!
//! Group-by values are written as the canonical JSON tokens the source put in the key (so a string
//! stays a string and a number a number), split at the 0 bytes that separate fields.

use super::aggregate::{AggLayout, Sketches};
use crate::record::text::write_i64;

pub struct LineFormat {
    /// `"name":` for each group-by field, pre-escaped.
    prefixes: Vec<Vec<u8>>,
}

impl LineFormat {
    pub fn new(group_by: &[String]) -> Self {
        let prefixes = group_by
            .iter()
            .map(|name| {
                let mut p = serde_json::to_vec(name).unwrap_or_else(|_| b"\"?\"".to_vec());
                p.push(b':');
                p
            })
            .collect();
        LineFormat { prefixes }
    }

    /// Appends one complete line (with `\n`) for window `[start, end)` to `out`.
    pub fn write(
        &self,
        key: &[u8],
        bounds: (i64, i64),
        layout: &AggLayout,
        accs: &[u64],
        sketches: &Sketches,
        out: &mut Vec<u8>,
    ) {
        self.write_row(key, Some(bounds), layout, accs, sketches, out);
    }

    /// Appends one complete line: the group-by fields, the window's bounds if any (a group
    /// aggregate's row has none), then the aggregates.
    pub fn write_row(
        &self,
        key: &[u8],
        bounds: Option<(i64, i64)>,
        layout: &AggLayout,
        accs: &[u64],
        sketches: &Sketches,
        out: &mut Vec<u8>,
    ) {
        out.push(b'{');
        let start = out.len();
        let mut tokens = key.split(|&b| b == 0);
        for prefix in &self.prefixes {
            out.extend_from_slice(prefix);
            match tokens.next() {
                Some(tok) if !tok.is_empty() => out.extend_from_slice(tok),
                _ => out.extend_from_slice(b"null"),
            }
            out.push(b',');
        }
        match bounds {
            Some((start, end)) => {
                out.extend_from_slice(b"\"window_start\":");
                write_i64(start, out);
                out.extend_from_slice(b",\"window_end\":");
                write_i64(end, out);
            }
            // The aggregates bring their own separators: drop the last key's.
            None if out.len() > start => {
                out.pop();
            }
            None => {}
        }
        let at = out.len();
        layout.write_fields(accs, sketches, out);
        if at == start && out.get(at) == Some(&b',') {
            // Nothing before the first aggregate.
            out.remove(at);
        }
        out.extend_from_slice(b"}\n");
    }
}
