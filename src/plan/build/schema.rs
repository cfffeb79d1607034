//! What the plan knows of the records a stream carries, to refuse a field path no upstream
//! operator produces. Sources are open (any field may be there) except the generator; a select
//! produces exactly its fields; a window its group-by fields, `window_start`, `window_end` and its
//! aggregates; an interval join its key fields and `left`/`right` holding its inputs' records; a
//! temporal join its input's fields and `table`; filters and dedupe pass their input's on.

use crate::config::suggest;
use crate::expr::{FieldPath, Segment};
use crate::plan::build::graph::Input;
use crate::plan::StreamRef;

/// The fields of a record, as far as they are known.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Schema {
    /// Known fields and what they hold.
    pub fields: Vec<(String, Schema)>,
    /// Other fields may be there too (nothing is known of them).
    pub open: bool,
}

impl Schema {
    /// A record nothing is known of.
    pub fn open() -> Schema {
        Schema {
            fields: Vec::new(),
            open: true,
        }
    }

    /// A record with exactly these scalar fields.
    pub fn closed<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Schema {
        Schema {
            fields: names
                .into_iter()
                .map(|n| (n.as_ref().to_string(), Schema::open()))
                .collect(),
            open: false,
        }
    }

    fn get(&self, name: &str) -> Option<&Schema> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// `Err(message)` when `path` cannot be in a record of this schema.
    pub fn check(&self, path: &FieldPath) -> Result<(), String> {
        let mut at = self;
        let mut walked = String::new();
        for seg in path.segments() {
            let Segment::Key(k) = seg else {
                // Indexes lead into arrays nothing is known of.
                return Ok(());
            };
            match at.get(k) {
                Some(s) => at = s,
                None if at.open => return Ok(()),
                None => {
                    let names: Vec<&str> = at.fields.iter().map(|(n, _)| n.as_str()).collect();
                    let hint = suggest::hint(k, names.iter().copied());
                    let within = if walked.is_empty() {
                        String::new()
                    } else {
                        format!(" under `{walked}`")
                    };
                    return Err(format!(
                        "has no field `{k}`{within} (it has {}){hint}",
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            if !walked.is_empty() {
                walked.push('.');
            }
            walked.push_str(k);
        }
        Ok(())
    }
}

/// A stream's records as one upstream describes them, for messages: `select `priced``.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Known {
    pub from: String,
    pub schema: Schema,
}

/// The records of a stream with several origins: a path must be possible in each closed one.
pub(crate) fn check_all(known: &[Known], path: &FieldPath) -> Vec<String> {
    known
        .iter()
        .filter_map(|k| {
            k.schema
                .check(path)
                .err()
                .map(|why| format!("field `{path}` is not produced by {}: it {why}", k.from))
        })
        .collect()
}

/// The one schema of records that may come from any of `known` (open when nothing is known).
pub(crate) fn merged(known: &[Known]) -> Schema {
    match known {
        [one] => one.schema.clone(),
        _ => Schema::open(),
    }
}

/// Whether some input is another operator's output (its records cannot be read back from a
/// source, so a late side output needs them carried along).
pub(crate) fn derived(inputs: &[Input]) -> bool {
    inputs
        .iter()
        .flat_map(|i| &i.edges)
        .any(|e| !matches!(e.from, StreamRef::Source(_)))
}

/// What a node's late side output holds: the records of its inputs.
pub(crate) fn late_schema(inputs: &[Input]) -> Vec<Known> {
    let known: Vec<Known> = inputs.iter().flat_map(|i| i.known.clone()).collect();
    vec![Known {
        from: "the late records".into(),
        schema: merged(&known),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> FieldPath {
        FieldPath::parse(s).unwrap()
    }

    #[test]
    fn closed_schemas_refuse_what_they_lack_and_open_ones_take_anything() {
        let mut s = Schema::closed(["ad_id", "ts"]);
        s.fields.push((
            "left".into(),
            Schema {
                fields: vec![("imp_id".into(), Schema::open())],
                open: false,
            },
        ));
        assert!(s.check(&p("ad_id")).is_ok());
        assert!(s.check(&p("left.imp_id")).is_ok());
        let e = s.check(&p("ad_iid")).unwrap_err();
        assert!(
            e.contains("no field `ad_iid`") && e.contains("did you mean `ad_id`"),
            "{e}"
        );
        let e = s.check(&p("left.ad_id")).unwrap_err();
        assert!(e.contains("under `left`") && e.contains("`imp_id`"), "{e}");
        assert!(
            s.check(&p("ts.x")).is_ok(),
            "a scalar's insides are not known"
        );
        assert!(Schema::open().check(&p("any.thing[3].x")).is_ok());
    }
}
