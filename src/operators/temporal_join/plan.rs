//! Validation of `type = "temporal_join"`: its `input` and `table` (any stream that carries no
//! updates), the `on` fields (checked against what each side is known to hold), and its two
//! ports, which keep whole records, so their events carry the row by value.
//!
//! Also the node it validates into, [`TemporalJoinPlan`], and the kind's two registry entries
//! (`TransformTable` for its table, [`NodeSpec`] for its node).

use crate::config::{KeyPath, OutOfOrderVersions, TemporalJoinConfig, TemporalJoinKind};
use crate::expr::FieldPath;
use crate::operators::{table_inputs, BuildCtx, NodeKind, NodeSpec, Operator, TransformTable};
use crate::plan::build::graph::{
    check_fields, field_path, refuse_hot_keys, Graph, NodeDraft, PortDraft,
};
use crate::plan::build::schema::{late_schema, merged};
use crate::plan::build::Builder;

/// An event-time temporal join: each input record joins the table version valid at its time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemporalJoinPlan {
    pub on_input: FieldPath,
    pub on_table: FieldPath,
    /// `left`: input records with no version get `"table":null`.
    pub left: bool,
    /// A version older than its key's latest, arriving after it, is dropped (and counted).
    pub drop_older_versions: bool,
}

impl Builder<'_> {
    pub(crate) fn temporal_join(&mut self, name: &str, j: &TemporalJoinConfig, g: &mut Graph<'_>) {
        refuse_hot_keys(self, name, "a temporal join", &j.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let input = self.side(g, name, "input", &j.input, "a temporal join");
        let table = self.side(g, name, "table", &j.table, "a temporal join");
        let on_input = field_path(self, &at("on").key("input"), &j.on.input);
        let on_table = field_path(self, &at("on").key("table"), &j.on.table);
        if let Some(p) = &on_input {
            check_fields(self, &at("on").key("input"), &input, p);
        }
        if let Some(p) = &on_table {
            check_fields(self, &at("on").key("table"), &table, p);
        }
        let (Some(on_input), Some(on_table)) = (on_input, on_table) else {
            return;
        };
        let table_schema = merged(
            &table
                .iter()
                .flat_map(|i| i.known.clone())
                .collect::<Vec<_>>(),
        );
        let mut output = merged(
            &input
                .iter()
                .flat_map(|i| i.known.clone())
                .collect::<Vec<_>>(),
        );
        output.fields.retain(|(n, _)| n != "table");
        output.fields.push(("table".into(), table_schema));
        let late = late_schema(&[input.clone(), table.clone()].concat());
        let draft = NodeDraft {
            kind: NodeKind::TemporalJoin(TemporalJoinPlan {
                on_input: on_input.clone(),
                on_table: on_table.clone(),
                left: j.kind == TemporalJoinKind::Left,
                drop_older_versions: j.out_of_order_versions == OutOfOrderVersions::Drop,
            }),
            late_events: j.late_events.clone(),
            hold_ms: 0,
            updates: false,
            unretractable: false,
            changelog: false,
            output,
            late,
        };
        let ports = vec![
            PortDraft {
                name: "input",
                key: vec![on_input],
                values: Vec::new(),
                row: true,
                inputs: input,
                changes: false,
            },
            PortDraft {
                name: "table",
                key: vec![on_table],
                values: Vec::new(),
                row: true,
                inputs: table,
                changes: true,
            },
        ];
        g.add_node(self, name, draft, ports);
    }
}

impl TransformTable for TemporalJoinConfig {
    table_inputs!(input, table);
    fn late_events(&self) -> Option<&str> {
        self.late_events.as_deref()
    }
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.temporal_join(name, self, g);
    }
}

impl NodeSpec for TemporalJoinPlan {
    fn state_signature(&self) -> String {
        format!(
            "TemporalJoin on {:?} table on {:?} (rows by value)",
            self.on_input.as_str(),
            self.on_table.as_str()
        )
    }
    fn what(&self) -> &'static str {
        "temporal join"
    }
    fn build(&self, ctx: BuildCtx) -> Box<dyn Operator> {
        Box::new(super::TemporalJoin::new(self, ctx))
    }
}
