//! Validation of `top_n`: an append-only input, the partition key fields and the order fields
//! (checked against what the input is known to hold), `n`, and the rank field, which the output
//! gains beside the input's fields.
//!
//! Also the node it validates into, [`TopNPlan`], and the kind's two registry entries
//! (`TransformTable` for its table, [`NodeSpec`] for its node).

use crate::config::{KeyPath, TopNConfig};
use crate::expr::FieldPath;
use crate::operators::{table_inputs, BuildCtx, NodeKind, NodeSpec, Operator, TransformTable};
use crate::plan::build::graph::{
    check_fields, field_path, refuse_updates, Graph, Input, NodeDraft, PortDraft,
};
use crate::plan::build::schema::{late_schema, merged, Schema};
use crate::plan::build::Builder;

/// The `n` best rows per key and event time, ranked by `order` (field, descending).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopNPlan {
    pub key: Vec<FieldPath>,
    pub order: Vec<(FieldPath, bool)>,
    pub n: usize,
    pub rank_field: Option<String>,
}

impl Builder<'_> {
    pub(crate) fn top_n(&mut self, name: &str, t: &TopNConfig, g: &mut Graph<'_>) {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if t.inputs.is_empty() {
            self.err(at("inputs"), "a top_n needs at least one input".into());
        }
        let inputs = g.inputs(self, at("inputs"), &t.inputs);
        refuse_updates(self, &at("inputs"), &inputs, "a top_n");
        let key = self.key_fields(&at("partition_by"), &t.partition_by, &[&inputs]);
        if t.n == 0 || t.n > TopNConfig::MAX_N {
            self.err(
                at("n"),
                format!(
                    "must be between 1 and {}: the rows kept per partition and time",
                    TopNConfig::MAX_N
                ),
            );
        }
        if t.order_by.is_empty() {
            self.err(
                at("order_by"),
                "a top_n needs at least one order field, e.g. order_by = [\"price desc\"]".into(),
            );
        }
        let order = self.order_fields(&at("order_by"), &t.order_by, &inputs);
        let output = self.ranked_schema(&at("rank_field"), t.rank_field.as_deref(), &inputs);
        let late = late_schema(&inputs);
        let draft = NodeDraft {
            kind: NodeKind::TopN(TopNPlan {
                key: key.clone(),
                order,
                n: t.n,
                rank_field: t.rank_field.clone(),
            }),
            late_events: t.late_events.clone(),
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

impl Builder<'_> {
    /// `order_by` (at `at`): each `"field"`, `"field asc"` or `"field desc"`, checked against
    /// what `inputs` hold.
    pub(crate) fn order_fields(
        &mut self,
        at: &KeyPath,
        order_by: &[String],
        inputs: &[Input],
    ) -> Vec<(FieldPath, bool)> {
        let mut order = Vec::new();
        for (i, o) in order_by.iter().enumerate() {
            let k = at.clone().index(i);
            let mut words = o.split_whitespace();
            let (Some(field), dir) = (words.next(), words.next()) else {
                self.err(k, "expected a field, then optionally asc or desc".into());
                continue;
            };
            let desc = match dir.map(str::to_ascii_lowercase).as_deref() {
                None | Some("asc") => false,
                Some("desc") => true,
                Some(other) => {
                    self.err(
                        k,
                        format!("`{other}`: expected asc or desc after the field"),
                    );
                    continue;
                }
            };
            if words.next().is_some() {
                self.err(k, "expected a field, then optionally asc or desc".into());
                continue;
            }
            if let Some(p) = field_path(self, &k, field) {
                check_fields(self, &k, inputs, &p);
                order.push((p, desc));
            }
        }
        order
    }

    /// The schema of ranked rows: the input's, with the rank field (at `at`) if one is named.
    pub(crate) fn ranked_schema(
        &mut self,
        at: &KeyPath,
        rank_field: Option<&str>,
        inputs: &[Input],
    ) -> Schema {
        let mut output = merged(
            &inputs
                .iter()
                .flat_map(|i| i.known.clone())
                .collect::<Vec<_>>(),
        );
        if let Some(rank) = rank_field {
            if rank.is_empty() || rank.contains('.') {
                self.err(at.clone(), "expected a top-level field name".into());
            } else if !output.open {
                output.fields.retain(|(n, _)| n != rank);
                output.fields.push((rank.to_string(), Schema::open()));
            }
        }
        output
    }
}

impl TransformTable for TopNConfig {
    table_inputs!();
    fn late_events(&self) -> Option<&str> {
        self.late_events.as_deref()
    }
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.top_n(name, self, g);
    }
}

impl NodeSpec for TopNPlan {
    fn state_signature(&self) -> String {
        format!(
            "TopN key {:?} (rows by value)",
            self.key.iter().map(FieldPath::as_str).collect::<Vec<_>>()
        )
    }
    fn what(&self) -> &'static str {
        "top-n"
    }
    fn build(&self, _ctx: BuildCtx) -> Box<dyn Operator> {
        Box::new(super::TopN::new(self))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::plan::{build, NodeKind};

    const JOB: &str = r#"
[sources.clicks]
type = "file"
path = "clicks.ndjson"
event_time = { field = "ts", unit = "ms" }

[transforms.per_ad]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { spend = "sum(bid)" }

[transforms.top]
type = "top_n"
inputs = ["per_ad"]
partition_by = ["window_start"]
order_by = ["spend desc", "ad_id"]
n = 3
rank_field = "rank"

[transforms.named]
type = "select"
inputs = ["top"]
fields = { ad_id = "ad_id", rank = "rank" }

[sinks.out]
type = "stdout"
inputs = ["named"]
"#;

    fn errors(text: &str) -> String {
        let (cfg, src) = parse(text, "job.toml").unwrap();
        match build(&cfg, &src) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_top_n_after_a_window_validates_and_its_rank_field_is_readable() {
        let (cfg, src) = parse(JOB, "job.toml").unwrap();
        let plan = build(&cfg, &src).unwrap();
        let node = plan.nodes.iter().find(|n| n.name == "top").unwrap();
        let NodeKind::TopN(t) = &node.kind else {
            panic!("{:?}", node.kind);
        };
        assert_eq!(t.n, 3);
        let order: Vec<(&str, bool)> = t.order.iter().map(|(p, d)| (p.as_str(), *d)).collect();
        assert_eq!(order, [("spend", true), ("ad_id", false)]);
    }

    #[test]
    fn bad_top_n_settings_are_refused_with_their_key() {
        for (from, to, want) in [
            (
                "n = 3",
                "n = 0",
                "transforms.top.n: must be between 1 and 10000",
            ),
            (
                "\"spend desc\"",
                "\"spend down\"",
                "transforms.top.order_by[0]: `down`: expected asc or desc",
            ),
            (
                "\"spend desc\"",
                "\"nope desc\"",
                "transforms.top.order_by[0]",
            ),
            (
                "order_by = [\"spend desc\", \"ad_id\"]",
                "order_by = []",
                "needs at least one order field",
            ),
            (
                "partition_by = [\"window_start\"]",
                "partition_by = [\"window_start\", \"window_start\"]",
                "listed twice",
            ),
        ] {
            let text = JOB.replace(from, to);
            let e = errors(&text);
            assert!(e.contains(want), "{to}: {e}");
        }
        let lateness = JOB.replace(
            "aggregates = {",
            "allowed_lateness = \"10s\"\naggregates = {",
        );
        assert!(
            errors(&lateness).contains("needs an append-only input"),
            "{}",
            errors(&lateness)
        );
    }
}
