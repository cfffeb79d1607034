//! Validation of `type = "over_aggregate"`: its inputs (append-only, with event time, as Flink's
//! OverAggregate takes them), the partition fields, the frame (`frame`, `preceding`) and the
//! aggregates, the port its rows arrive on (keyed on the partition, carrying the row and the
//! aggregates' values), and the node it validates into, [`OverAggPlan`], with the kind's two
//! registry entries. Its output is the input's rows with the aggregates added: append-only, each
//! row at its own event time.

use super::config::{FrameUnit, OverAggregateConfig, Preceding};
use crate::config::{Duration, KeyPath};
use crate::expr::FieldPath;
use crate::operators::window::agg_plan::{assign_slots, describe, signature, AggPlan};
use crate::operators::{table_inputs, BuildCtx, NodeKind, NodeSpec, Operator, TransformTable};
use crate::plan::build::graph::{refuse_updates, Graph, NodeDraft, PortDraft};
use crate::plan::build::schema::{late_schema, merged, Schema};
use crate::plan::build::Builder;

/// How far back each row's frame reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// `ROWS n PRECEDING`: the row and up to `n` rows before it; `None`: every row before it.
    Rows(Option<u64>),
    /// `RANGE` of `ms` PRECEDING: the rows at most `ms` older, and every row of its own time;
    /// `None`: every row up to its time.
    Range(Option<i64>),
}

impl Frame {
    /// Whether rows leave the frame (so aggregates must take values back).
    pub fn bounded(self) -> bool {
        matches!(self, Frame::Rows(Some(_)) | Frame::Range(Some(_)))
    }

    fn describe(self) -> String {
        match self {
            Frame::Rows(Some(n)) => format!("ROWS {n} PRECEDING"),
            Frame::Rows(None) => "ROWS UNBOUNDED PRECEDING".into(),
            Frame::Range(Some(ms)) => format!("RANGE {ms} ms PRECEDING"),
            Frame::Range(None) => "RANGE UNBOUNDED PRECEDING".into(),
        }
    }
}

/// Aggregates over each row's frame within its partition, in event-time order.
#[derive(Debug, Clone, PartialEq)]
pub struct OverAggPlan {
    pub partition_by: Vec<FieldPath>,
    pub frame: Frame,
    pub aggregates: Vec<AggPlan>,
}

impl Builder<'_> {
    pub(crate) fn over_aggregate(
        &mut self,
        name: &str,
        t: &OverAggregateConfig,
        g: &mut Graph<'_>,
    ) {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if t.inputs.is_empty() {
            self.err(
                at("inputs"),
                "an over aggregate needs at least one input".into(),
            );
        }
        let inputs = g.inputs(self, at("inputs"), &t.inputs);
        refuse_updates(self, &at("inputs"), &inputs, "an over aggregate");
        let key = self.key_fields(&at("partition_by"), &t.partition_by, &[&inputs]);
        let frame = self.frame(&at("preceding"), t);
        let aggregates = self.aggregates(name, &t.aggregates, &[], &[], &inputs);
        for a in aggregates
            .iter()
            .filter(|a| a.func.distinct_mode().is_some())
        {
            if frame.bounded() {
                self.err(
                    at("aggregates").key(&a.name),
                    format!("a distinct count over a frame that rows leave ({}) would have to keep every value's count, which sluice does not do yet: use an unbounded frame, or count, sum, avg, min or max", frame.describe()),
                );
            }
        }
        let (aggregates, values) = assign_slots(aggregates);
        let mut output = merged(
            &inputs
                .iter()
                .flat_map(|i| i.known.clone())
                .collect::<Vec<_>>(),
        );
        for a in &aggregates {
            if output.fields.iter().any(|(n, _)| *n == a.name) {
                self.err(
                    at("aggregates").key(&a.name),
                    format!("the input rows already hold a field `{}`: name the aggregate otherwise, as it is added to each row", a.name),
                );
            } else if !output.open {
                output.fields.push((a.name.clone(), Schema::open()));
            }
        }
        let draft = NodeDraft {
            kind: NodeKind::OverAggregate(OverAggPlan {
                partition_by: key.clone(),
                frame,
                aggregates,
            }),
            late_events: t.late_events.clone(),
            hold_ms: 0,
            updates: false,
            unretractable: false,
            changelog: false,
            late: late_schema(&inputs),
            output,
        };
        let port = PortDraft {
            name: "inputs",
            key,
            values,
            row: true,
            inputs,
            changes: false,
        };
        g.add_node(self, name, draft, vec![port]);
    }

    /// The frame of `frame` and `preceding`.
    fn frame(&mut self, at: &KeyPath, t: &OverAggregateConfig) -> Frame {
        let text = match (&t.preceding, t.frame) {
            (None, FrameUnit::Rows) => return Frame::Rows(None),
            (None, FrameUnit::Range) => return Frame::Range(None),
            (Some(Preceding::Text(s)), unit) if s == "unbounded" => {
                return match unit {
                    FrameUnit::Rows => Frame::Rows(None),
                    FrameUnit::Range => Frame::Range(None),
                }
            }
            (Some(Preceding::Rows(n)), FrameUnit::Rows) => return Frame::Rows(Some(*n)),
            (Some(Preceding::Rows(_)), FrameUnit::Range) => {
                self.err(at.clone(), "a RANGE frame reaches back a duration, e.g. preceding = \"10s\" (or \"unbounded\"); a number of rows needs frame = \"rows\"".into());
                return Frame::Range(None);
            }
            (Some(Preceding::Text(s)), FrameUnit::Rows) => {
                self.err(at.clone(), format!("`{s}`: a ROWS frame reaches back a number of rows, e.g. preceding = 10 (or \"unbounded\")"));
                return Frame::Rows(None);
            }
            (Some(Preceding::Text(s)), FrameUnit::Range) => s,
        };
        match Duration::parse(text) {
            Ok(d) if d.as_millis() >= 0 => Frame::Range(Some(d.as_millis())),
            Ok(_) => {
                self.err(at.clone(), "must not be negative".into());
                Frame::Range(None)
            }
            Err(e) => {
                self.err(at.clone(), format!("{e}, or \"unbounded\""));
                Frame::Range(None)
            }
        }
    }
}

impl TransformTable for OverAggregateConfig {
    table_inputs!();
    fn late_events(&self) -> Option<&str> {
        self.late_events.as_deref()
    }
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.over_aggregate(name, self, g);
    }
}

impl NodeSpec for OverAggPlan {
    fn state_signature(&self) -> String {
        let keys: Vec<&str> = self.partition_by.iter().map(FieldPath::as_str).collect();
        format!(
            "OverAggregate partition_by {keys:?} frame {:?} aggregates [{}]",
            self.frame,
            signature(&self.aggregates)
        )
    }
    fn what(&self) -> &'static str {
        "over aggregate"
    }
    fn describe(&self) -> String {
        format!(
            "over aggregate, {} per {}, each row once the watermark passes it (appends); {}",
            self.frame.describe(),
            if self.partition_by.is_empty() {
                "stream".to_string()
            } else {
                (self.partition_by.iter())
                    .map(FieldPath::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            describe(&self.aggregates)
        )
    }
    fn build(&self, _ctx: BuildCtx) -> Box<dyn Operator> {
        Box::new(super::OverAggregate::new(self))
    }
}
