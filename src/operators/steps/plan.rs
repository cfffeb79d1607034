//! Validation of filters and selects (steps): their inputs (any stream: a source, a node's output,
//! a late side output, another step), their expressions (compiled here, so a mistake is reported
//! with a caret at its column before anything runs) and the fields those read where the upstream
//! records are known. A step's readers see every path through it as an edge.
//!
//! Also the steps' registry entries (`TransformTable` for `filter` and `select`); a step is no
//! node, so it has no [`crate::operators::NodeSpec`].

use super::config::{FilterTransformConfig, SelectTransformConfig};
use crate::config::KeyPath;
use crate::expr;
use crate::operators::{table_inputs, TransformTable};
use crate::plan::build::graph::{Graph, Input};
use crate::plan::build::schema::{Known, Schema};
use crate::plan::build::Builder;
use crate::plan::{StepKind, StepPlan};

/// A step's table, of either kind.
#[derive(Clone, Copy)]
pub(crate) enum StepTable<'a> {
    Filter(&'a FilterTransformConfig),
    Select(&'a SelectTransformConfig),
}

impl Builder<'_> {
    pub(crate) fn step(&mut self, name: &str, t: StepTable<'_>, g: &mut Graph<'_>) {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let (what, names) = match t {
            StepTable::Filter(f) => ("filter", &f.inputs),
            StepTable::Select(s) => ("select", &s.inputs),
        };
        if names.is_empty() {
            self.err(at("inputs"), format!("a {what} needs at least one input"));
        }
        let inputs = g.inputs(self, at("inputs"), names);
        let known: Vec<Known> = inputs.iter().flat_map(|i| i.known.clone()).collect();
        let (kind, out_known) = match t {
            StepTable::Filter(f) => {
                self.expression(&f.condition, at("where"), &known);
                let kind = StepKind::Filter {
                    condition: f.condition.clone(),
                };
                (kind, known)
            }
            StepTable::Select(s) => {
                if s.fields.0.is_empty() {
                    self.err(
                        at("fields"),
                        "a select needs at least one field, e.g. { total = \"amount * rate\" }"
                            .into(),
                    );
                }
                for (out, text) in &s.fields.0 {
                    self.expression(text, at("fields").key(out), &known);
                }
                let names = s.fields.0.iter().map(|(n, _)| n.as_str());
                let out = vec![Known {
                    from: format!("select `{name}`"),
                    schema: Schema::closed(names),
                }];
                let kind = StepKind::Select {
                    fields: s.fields.0.clone(),
                };
                (kind, out)
            }
        };
        let merged = Input {
            edges: inputs.iter().flat_map(|i| i.edges.clone()).collect(),
            known: out_known,
            updates: inputs.iter().any(|i| i.updates),
            unretractable: inputs.iter().any(|i| i.unretractable),
            depth: inputs.iter().filter_map(|i| i.depth).max(),
            untimed: inputs.iter().find_map(|i| i.untimed.clone()),
            changelog: inputs.iter().find_map(|i| i.changelog.clone()),
        };
        let plan = StepPlan {
            name: name.to_string(),
            kind,
        };
        g.add_step(name, plan, merged);
    }

    /// Compiles one expression; reports its error, or a field the records it reads cannot have.
    pub(crate) fn expression(&mut self, text: &str, key: KeyPath, known: &[Known]) {
        let program = match expr::compile(text) {
            Ok(p) => p,
            Err(e) => return self.err(key, format!("invalid expression: {e}")),
        };
        for path in program.fields() {
            for k in known {
                if let Err(why) = k.schema.check(path) {
                    self.err(
                        key.clone(),
                        format!("`{text}` reads field `{path}`, but {} {why}", k.from),
                    );
                }
            }
        }
    }
}

impl TransformTable for FilterTransformConfig {
    table_inputs!();
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.step(name, StepTable::Filter(self), g);
    }
}

impl TransformTable for SelectTransformConfig {
    table_inputs!();
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.step(name, StepTable::Select(self), g);
    }
}
