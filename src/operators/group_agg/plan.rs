//! Validation of group aggregates: inputs, group-by fields and aggregates, the port its records
//! arrive on (keyed on the group-by fields), and the node it validates into, [`GroupAggPlan`],
//! with the kind's two registry entries.
//!
//! Its output is an updating result without event time: append-only sinks and event-time
//! operators refuse it (see `plan::build::graph`). Over an updating input (another group
//! aggregate's result, a re-firing window) it takes retracted rows back out, which `count`, `sum`
//! and `avg` can do, and `min` and `max` by keeping every value (`extrema`); the distinct counts
//! would need every value's count kept, and are refused there for now. `first_value`,
//! `last_value`, `min_string` and `max_string` (`values`) read a top-level field's token from
//! each record's row, which the port then carries.

use super::config::GroupAggregateConfig;
use super::values::{self, ValueAggPlan, MAX_VALUE_FIELDS};
use crate::config::{KeyPath, OrderedTable};
use crate::expr::FieldPath;
use crate::operators::window::agg_plan::{
    assign_slots, describe, signature, unretractable, AggFunc, AggPlan,
};
use crate::operators::{
    table_inputs, BuildCtx, Combine, NodeKind, NodeSpec, Operator, TransformTable,
};
use crate::plan::build::graph::{
    check_fields, field_path, refuse_unretractable, Graph, Input, NodeDraft, PortDraft,
};
use crate::plan::build::schema::Schema;
use crate::plan::build::Builder;
use crate::plan::{HotKeyPlanMode, HotKeysPlan};

#[derive(Debug, Clone, PartialEq)]
pub struct GroupAggPlan {
    /// Key fields as written; each names its output field.
    pub group_by: Vec<FieldPath>,
    pub aggregates: Vec<AggPlan>,
    /// FIRST_VALUE, LAST_VALUE, MIN/MAX of strings: values kept as written (`values`).
    pub values: Vec<ValueAggPlan>,
    /// Its input updates: MIN and MAX keep every value to take one back.
    pub retracts: bool,
    /// Two-phase aggregation of hot groups (append-only inputs from sources only).
    pub hot_keys: HotKeysPlan,
}

impl Builder<'_> {
    pub(crate) fn group_aggregate(
        &mut self,
        name: &str,
        t: &GroupAggregateConfig,
        g: &mut Graph<'_>,
    ) {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if t.inputs.is_empty() {
            self.err(
                at("inputs"),
                "a group aggregate needs at least one input".into(),
            );
        }
        let inputs = g.inputs(self, at("inputs"), &t.inputs);
        let group_by = self.group_by_fields(name, &t.group_by, &[], &inputs);
        let (value_aggs, words): (Vec<_>, Vec<_>) =
            (t.aggregates.0.iter().cloned()).partition(|(_, e)| values::parse(e).is_some());
        let aggregates = match words.is_empty() && !value_aggs.is_empty() {
            true => Vec::new(),
            false => self.aggregates(name, &OrderedTable(words), &[], &t.group_by, &inputs),
        };
        let values = self.value_aggregates(name, &value_aggs, &t.group_by, &inputs);
        let retracts = inputs.iter().any(Input::updating);
        if retracts {
            self.refuse_unretractable_aggregates(name, t, &aggregates);
        }
        refuse_unretractable(self, at("inputs"), &inputs, "this group aggregate");
        let hot_keys = self.hot_keys_plan(name, &t.hot_keys);
        if hot_keys.mode != HotKeyPlanMode::Off {
            self.refuse_hot_keys(name, &inputs, retracts, &values);
        }
        let (aggregates, slots) = assign_slots(aggregates);
        let output = Schema::closed(
            t.group_by
                .iter()
                .map(String::as_str)
                .chain(t.aggregates.0.iter().map(|(n, _)| n.as_str())),
        );
        let draft = NodeDraft {
            updates: false,
            unretractable: false,
            changelog: true,
            kind: NodeKind::GroupAggregate(GroupAggPlan {
                group_by: group_by.clone(),
                aggregates,
                values: values.clone(),
                retracts,
                hot_keys,
            }),
            late_events: None,
            hold_ms: 0,
            output,
            late: Vec::new(),
        };
        let port = PortDraft {
            name: "inputs",
            key: group_by,
            values: slots,
            // The value aggregates read their tokens from the row.
            row: !values.is_empty(),
            inputs,
            changes: false,
        };
        g.add_node(self, name, draft, vec![port]);
    }

    /// `first_value(f)` and the others (`values`), each over a top-level field of the inputs.
    fn value_aggregates(
        &mut self,
        name: &str,
        written: &[(String, String)],
        group_by: &[String],
        inputs: &[Input],
    ) -> Vec<ValueAggPlan> {
        let mut plans: Vec<ValueAggPlan> = Vec::new();
        for (agg, expr) in written {
            let key = KeyPath::new(["transforms", name, "aggregates", agg]);
            if group_by.contains(agg) {
                self.err(
                    key.clone(),
                    format!(
                        "aggregate name `{agg}` collides with a group_by field of the same name"
                    ),
                );
            }
            let Some(Ok((pick, field))) = values::parse(expr) else {
                if let Some(Err(why)) = values::parse(expr) {
                    self.err(key, why);
                }
                continue;
            };
            if let Some(p) = field_path(self, &key, &field) {
                check_fields(self, &key, inputs, &p);
            }
            plans.push(ValueAggPlan {
                name: agg.clone(),
                pick,
                field,
            });
        }
        let mut fields: Vec<&str> = plans.iter().map(|p| p.field.as_str()).collect();
        fields.sort_unstable();
        fields.dedup();
        if fields.len() > MAX_VALUE_FIELDS {
            self.err(
                KeyPath::new(["transforms", name, "aggregates"]),
                format!("first_value, last_value, min_string and max_string read {} fields here; at most {MAX_VALUE_FIELDS} per group aggregate (split it into two)", fields.len()),
            );
        }
        plans
    }

    /// `hot_keys` combines events where they are read, into partials the owner merges: only
    /// for append-only rows read from sources, and aggregates kept in accumulator words.
    fn refuse_hot_keys(
        &mut self,
        name: &str,
        inputs: &[Input],
        retracts: bool,
        values: &[ValueAggPlan],
    ) {
        let at = KeyPath::new(["transforms", name, "hot_keys", "mode"]);
        if inputs.iter().any(|i| i.depth.is_some()) {
            self.err(at.clone(), "hot_keys applies to group aggregates that read sources (directly or through filters and selects): phase one runs where records are read, and this one reads another operator's output".into());
        }
        if retracts {
            self.err(at.clone(), "hot_keys needs an append-only input: a partial that folded a retraction with inserts could not be ignored where its group has no row, as a retraction alone is".into());
        }
        if !values.is_empty() {
            self.err(at, "hot_keys cannot combine first_value, last_value, min_string or max_string (they keep input tokens, not accumulators); drop hot_keys or those aggregates".into());
        }
    }

    /// Over an updating input only aggregates that can take a value back.
    fn refuse_unretractable_aggregates(
        &mut self,
        name: &str,
        t: &GroupAggregateConfig,
        aggs: &[AggPlan],
    ) {
        let kept =
            |a: &AggPlan| matches!(a.func, AggFunc::Min | AggFunc::Max | AggFunc::CountDistinct);
        for (a, expr) in unretractable(aggs, &t.aggregates).filter(|(a, _)| !kept(a)) {
            self.err(
                KeyPath::new(["transforms", name, "aggregates", &a.name]),
                format!("`{expr}` over an updating input: an approximate distinct count (a HyperLogLog sketch) cannot take a value back; use count_distinct (exact, which keeps each value's row count) here, or aggregate an append-only input"),
            );
        }
    }
}

impl TransformTable for GroupAggregateConfig {
    table_inputs!();
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.group_aggregate(name, self, g);
    }
}

impl NodeSpec for GroupAggPlan {
    fn state_signature(&self) -> String {
        let keys: Vec<&str> = self.group_by.iter().map(FieldPath::as_str).collect();
        let values: Vec<String> = (self.values.iter())
            .map(|v| format!("{}({})", v.pick.function(), v.field))
            .collect();
        format!(
            "GroupAggregate group_by {keys:?} aggregates [{}]{}",
            signature(&self.aggregates),
            match values.is_empty() {
                true => String::new(),
                false => format!(" values [{}]", values.join(", ")),
            }
        )
    }
    fn what(&self) -> &'static str {
        "group aggregate"
    }
    fn describe(&self) -> String {
        let values = (self.values.iter())
            .map(|v| format!(", {} = {}({})", v.name, v.pick.function(), v.field));
        format!(
            "group aggregate, updating result (+I/-U/+U/-D); {}{}",
            describe(&self.aggregates),
            values.collect::<String>()
        )
    }
    fn needs_event_time(&self) -> bool {
        false
    }
    fn keeps_event_time(&self) -> bool {
        false
    }
    fn takes_retractions(&self) -> bool {
        true
    }
    fn build(&self, _ctx: BuildCtx) -> Box<dyn Operator> {
        Box::new(super::GroupAggregate::new(self))
    }
    fn combiner(&self) -> Option<(Box<dyn Combine>, HotKeysPlan)> {
        if self.hot_keys.mode == HotKeyPlanMode::Off {
            return None;
        }
        Some((super::combiner(self), self.hot_keys))
    }
}
