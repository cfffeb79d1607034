//! Validation of `type = "dedupe"`: its inputs (any stream that carries no updates), its key
//! fields (checked against what the inputs are known to hold), its horizon, and its port, which
//! keeps whole records, so its events carry the row by value.
//!
//! Also the node it validates into, [`DedupePlan`], and the kind's two registry entries
//! (`TransformTable` for its table, [`NodeSpec`] for its node).

use crate::config::{DedupeConfig, KeyPath};
use crate::expr::FieldPath;
use crate::operators::{table_inputs, BuildCtx, NodeKind, NodeSpec, Operator, TransformTable};
use crate::plan::build::graph::{refuse_hot_keys, refuse_updates, Graph, NodeDraft, PortDraft};
use crate::plan::build::schema::{late_schema, merged};
use crate::plan::build::Builder;

/// Event-time deduplication on key fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DedupePlan {
    pub key: Vec<FieldPath>,
    pub horizon_ms: i64,
}

impl Builder<'_> {
    pub(crate) fn dedupe(&mut self, name: &str, d: &DedupeConfig, g: &mut Graph<'_>) {
        refuse_hot_keys(self, name, "dedupe", &d.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if d.inputs.is_empty() {
            self.err(at("inputs"), "a dedupe needs at least one input".into());
        }
        let inputs = g.inputs(self, at("inputs"), &d.inputs);
        refuse_updates(self, &at("inputs"), &inputs, "a dedupe");
        if d.key.is_empty() {
            self.err(
                at("key"),
                "a dedupe needs at least one key field, e.g. key = [\"click_id\"]".into(),
            );
        }
        let key = self.key_fields(&at("key"), &d.key, &[&inputs]);
        if d.horizon.as_millis() <= 0 {
            self.err(
                at("horizon"),
                "must be longer than 0s: ids are remembered this long".into(),
            );
        }
        let output = merged(
            &inputs
                .iter()
                .flat_map(|i| i.known.clone())
                .collect::<Vec<_>>(),
        );
        let late = late_schema(&inputs);
        let draft = NodeDraft {
            kind: NodeKind::Dedupe(DedupePlan {
                key: key.clone(),
                horizon_ms: d.horizon.as_millis(),
            }),
            late_events: d.late_events.clone(),
            hold_ms: 0,
            updates: false,
            unretractable: false,
            changelog: false,
            output,
            late,
        };
        let port = PortDraft {
            name: "inputs",
            key,
            values: Vec::new(),
            row: true,
            inputs,
            changes: false,
        };
        g.add_node(self, name, draft, vec![port]);
    }
}

impl TransformTable for DedupeConfig {
    table_inputs!();
    fn late_events(&self) -> Option<&str> {
        self.late_events.as_deref()
    }
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.dedupe(name, self, g);
    }
}

impl NodeSpec for DedupePlan {
    fn state_signature(&self) -> String {
        format!(
            "Dedupe key {:?} (rows by value)",
            self.key.iter().map(FieldPath::as_str).collect::<Vec<_>>()
        )
    }
    fn what(&self) -> &'static str {
        "dedupe"
    }
    fn build(&self, _ctx: BuildCtx) -> Box<dyn Operator> {
        Box::new(super::Dedupe::new(self))
    }
}
