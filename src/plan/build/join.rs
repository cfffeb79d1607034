//! Validation of temporal joins: both sides are sources (distinct ones: a record's side is told by
//! the source it was read from), keyed on one non-empty field each.

use super::{Builder, Stream, Streams};
use crate::config::{KeyPath, TemporalJoinConfig, TemporalJoinKind};
use crate::plan::JoinPlan;

impl Builder<'_> {
    pub(super) fn join(
        &mut self,
        name: &str,
        j: &TemporalJoinConfig,
        streams: &Streams<'_>,
    ) -> JoinPlan {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let side = |b: &mut Self, k: &str, input: &str| match streams.get(input) {
            Some(Stream::Source(s)) => s,
            Some(_) => {
                b.err(at(k), format!("`{input}` is not a source; a temporal join reads two sources (joins over transforms are not supported yet)"));
                0
            }
            None => {
                let hint = streams.hint(input, |s| matches!(s, Stream::Source(_)));
                b.err(at(k), format!("unknown source `{input}`{hint}"));
                0
            }
        };
        let input = side(self, "input", &j.input);
        let table = side(self, "table", &j.table);
        if j.input == j.table {
            self.err(
                at("table"),
                format!(
                    "`{}` is both input and table; a temporal join needs two sources",
                    j.table
                ),
            );
        }
        for (k, f) in [("input", &j.on.input), ("table", &j.on.table)] {
            if f.is_empty() {
                self.err(at("on").key(k), "a field name cannot be empty".into());
            }
        }
        JoinPlan {
            name: name.to_string(),
            input,
            table,
            on_input: j.on.input.clone(),
            on_table: j.on.table.clone(),
            left: j.kind == TemporalJoinKind::Left,
        }
    }
}
