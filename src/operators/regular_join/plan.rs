//! Validation of `type = "join"`: with a `ttl` it is the interval join's (see
//! `interval_join::plan`); without one, the regular join that keeps its rows, over any inputs but
//! a session window that re-fires: its `on` fields (checked against both sides), and its two
//! ports, which keep whole records, so their events carry the row by value.
//!
//! Its output has no event time, as a regular join's in Flink (event-time operators refuse it),
//! and is an updating result where a side is outer or an input updates; an inner join of two
//! insert-only inputs stays insert-only, so an append-only sink takes it.

use super::config::RegularJoinConfig;
use crate::config::{IntervalJoinKind, KeyPath};
use crate::expr::FieldPath;
use crate::operators::{table_inputs, BuildCtx, NodeKind, NodeSpec, Operator, TransformTable};
use crate::plan::build::graph::{
    refuse_hot_keys, refuse_unretractable, Graph, Input, NodeDraft, PortDraft,
};
use crate::plan::build::schema::{merged, Schema};
use crate::plan::build::Builder;

/// A regular join that keeps its rows: two inputs keyed on `on`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegularJoinPlan {
    pub on: Vec<FieldPath>,
    /// Emit unmatched rows of (left, right), NULL-padded.
    pub outer: [bool; 2],
    /// A pair matches only where this expression over the joined record is true.
    pub condition: Option<String>,
}

impl Builder<'_> {
    pub(crate) fn unbounded_join(&mut self, name: &str, j: &RegularJoinConfig, g: &mut Graph<'_>) {
        const WHAT: &str = "a regular join";
        refuse_hot_keys(self, name, WHAT, &j.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if j.late_events.is_some() {
            self.err(at("late_events"), "a regular join without a ttl has no late rows (it matches whatever it holds, whatever the times): late_events applies with a ttl".into());
        }
        let left = self.join_side(g, name, "left", &j.left);
        let right = self.join_side(g, name, "right", &j.right);
        if j.on.is_empty() {
            self.err(at("on"), format!("{WHAT} needs at least one field to match on, e.g. on = [\"user_id\"]; a cross join is not supported"));
        }
        let on = self.key_fields(&at("on"), &j.on, &[&left, &right]);
        let outer = match j.kind {
            IntervalJoinKind::Inner => [false, false],
            IntervalJoinKind::Left => [true, false],
            IntervalJoinKind::Right => [false, true],
            IntervalJoinKind::Full => [true, true],
        };
        let updating = left.iter().chain(&right).any(Input::updating);
        let side_schema =
            |s: &[Input]| merged(&s.iter().flat_map(|i| i.known.clone()).collect::<Vec<_>>());
        let mut output = Schema::closed(j.on.iter().map(String::as_str));
        output.fields.push(("left".into(), side_schema(&left)));
        output.fields.push(("right".into(), side_schema(&right)));
        if let Some(text) = &j.condition {
            let known = [crate::plan::build::schema::Known {
                from: format!("join `{name}`"),
                schema: output.clone(),
            }];
            self.expression(text, at("condition"), &known);
        }
        let draft = NodeDraft {
            kind: NodeKind::RegularJoin(RegularJoinPlan {
                on: on.clone(),
                outer,
                condition: j.condition.clone(),
            }),
            late_events: None,
            hold_ms: 0,
            updates: false,
            unretractable: false,
            changelog: updating || outer != [false, false],
            output,
            late: Vec::new(),
        };
        let port = |name, inputs| PortDraft {
            name,
            key: on.clone(),
            values: Vec::new(),
            row: true,
            inputs,
            changes: false,
        };
        g.add_node(
            self,
            name,
            draft,
            vec![port("left", left), port("right", right)],
        );
    }

    /// One side of a regular join: any stream whose updates can be taken back.
    fn join_side(&mut self, g: &Graph<'_>, name: &str, k: &str, input: &str) -> Vec<Input> {
        let key = KeyPath::new(["transforms", name, k]);
        let inputs: Vec<Input> = g.input(self, key.clone(), input).into_iter().collect();
        refuse_unretractable(self, key, &inputs, "this regular join");
        inputs
    }
}

impl TransformTable for RegularJoinConfig {
    table_inputs!(left, right);
    fn late_events(&self) -> Option<&str> {
        self.late_events.as_deref()
    }
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        match self.ttl {
            Some(_) if self.condition.is_some() => b.err(
                KeyPath::new(["transforms", name, "condition"]),
                "a condition applies to a regular join without a ttl (with a ttl, filter the joined rows with a filter after the join)".into(),
            ),
            Some(ttl) => b.ttl_join(name, self, ttl.as_millis(), g),
            None => b.unbounded_join(name, self, g),
        }
    }
}

impl NodeSpec for RegularJoinPlan {
    fn state_signature(&self) -> String {
        format!(
            "RegularJoin on {:?} (rows by value with copies)",
            self.on.iter().map(FieldPath::as_str).collect::<Vec<_>>()
        )
    }
    fn what(&self) -> &'static str {
        "regular join"
    }
    fn describe(&self) -> String {
        let kind = match self.outer {
            [false, false] => "inner",
            [true, false] => "left outer",
            [false, true] => "right outer",
            [true, true] => "full outer",
        };
        let when = self
            .condition
            .as_ref()
            .map_or(String::new(), |c| format!(" where {c}"));
        format!(
            "regular join ({kind}) on {}{when}, keeping every row until it is retracted",
            self.on
                .iter()
                .map(FieldPath::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
    fn takes_retractions(&self) -> bool {
        true
    }
    fn needs_event_time(&self) -> bool {
        false
    }
    fn keeps_event_time(&self) -> bool {
        false
    }
    fn build(&self, ctx: BuildCtx) -> Box<dyn Operator> {
        Box::new(super::RegularJoin::new(self, ctx))
    }
}
