//! Validation of `type = "rank"`: its inputs (any stream whose updates can be taken back), the
//! partition key fields, the order fields, `n` and the rank field. Over an append-only input
//! it keeps only each partition's top `n` rows (a row below them can never rise); over an
//! updating one it keeps every row, as a retraction may lift one into the top `n` (Flink's
//! retractable Top-N). Its output is an updating result without event time.

use super::config::RankConfig;
use crate::config::{KeyPath, TopNConfig};
use crate::expr::FieldPath;
use crate::operators::{table_inputs, BuildCtx, NodeKind, NodeSpec, Operator, TransformTable};
use crate::plan::build::graph::{refuse_unretractable, Graph, Input, NodeDraft, PortDraft};
use crate::plan::build::Builder;

/// The `n` best rows per key among all the input holds, ranked by `order` (field, descending).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankPlan {
    pub key: Vec<FieldPath>,
    pub order: Vec<(FieldPath, bool)>,
    pub n: usize,
    pub rank_field: Option<String>,
    /// Keep every row, not only the top `n`: the input updates.
    pub keep_all: bool,
    /// Rows of an append-only input equal on every order field: the later in source order
    /// ranks first (keep-last deduplication), else the earlier.
    pub later_first: bool,
}

impl Builder<'_> {
    pub(crate) fn rank(&mut self, name: &str, t: &RankConfig, g: &mut Graph<'_>) {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if t.inputs.is_empty() {
            self.err(at("inputs"), "a rank needs at least one input".into());
        }
        let inputs = g.inputs(self, at("inputs"), &t.inputs);
        refuse_unretractable(self, at("inputs"), &inputs, "this rank");
        let key = self.key_fields(&at("partition_by"), &t.partition_by, &[&inputs]);
        if t.n == 0 || t.n > TopNConfig::MAX_N {
            self.err(
                at("n"),
                format!(
                    "must be between 1 and {}: the rows ranked per partition",
                    TopNConfig::MAX_N
                ),
            );
        }
        if t.order_by.is_empty() {
            self.err(
                at("order_by"),
                "a rank needs at least one order field, e.g. order_by = [\"price desc\"]".into(),
            );
        }
        let order = self.order_fields(&at("order_by"), &t.order_by, &inputs);
        let output = self.ranked_schema(&at("rank_field"), t.rank_field.as_deref(), &inputs);
        let keep_all = inputs.iter().any(Input::updating);
        let draft = NodeDraft {
            kind: NodeKind::Rank(RankPlan {
                key: key.clone(),
                order,
                n: t.n,
                rank_field: t.rank_field.clone(),
                keep_all,
                later_first: t.ties == super::config::Ties::Later,
            }),
            late_events: None,
            hold_ms: 0,
            updates: false,
            unretractable: false,
            changelog: true,
            output,
            late: Vec::new(),
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

impl TransformTable for RankConfig {
    table_inputs!();
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.rank(name, self, g);
    }
}

impl NodeSpec for RankPlan {
    fn state_signature(&self) -> String {
        format!(
            "Rank key {:?} order {:?} keep_all {} later_first {} (rows by value with copies and source positions)",
            self.key.iter().map(FieldPath::as_str).collect::<Vec<_>>(),
            self.order
                .iter()
                .map(|(p, d)| format!("{}{}", p.as_str(), if *d { " desc" } else { "" }))
                .collect::<Vec<_>>(),
            self.keep_all,
            self.later_first
        )
    }
    fn what(&self) -> &'static str {
        "rank"
    }
    fn describe(&self) -> String {
        format!(
            "rank: the {} best rows per {} by {}{}, {}",
            self.n,
            if self.key.is_empty() {
                "stream".to_string()
            } else {
                self.key
                    .iter()
                    .map(FieldPath::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            self.order
                .iter()
                .map(|(p, d)| format!("{}{}", p.as_str(), if *d { " desc" } else { "" }))
                .collect::<Vec<_>>()
                .join(", "),
            self.rank_field
                .as_ref()
                .map_or(String::new(), |f| format!(", rank in `{f}`")),
            if self.keep_all {
                "keeping every row (the input updates)"
            } else {
                "keeping the top rows only (the input appends)"
            }
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
    fn build(&self, _ctx: BuildCtx) -> Box<dyn Operator> {
        Box::new(super::Rank::new(self))
    }
}
