//! What the plan knows of the rows a sink writes, for table-shaped sinks (PostgreSQL, Parquet):
//! the window results it reads directly give integer bounds and counts, sums and averages
//! (whatever the first rows hold), and the fields that make each result's key.

use super::{AggFunc, NodeKind, Plan, SinkPlan, StreamRef, WindowPlan};
use crate::record::columns::KnownColumn;

/// The windows a sink reads directly (no step between): what the plan knows of its rows' shape.
fn window_inputs<'p>(
    plan: &'p Plan,
    sink: &'p SinkPlan,
) -> impl Iterator<Item = &'p WindowPlan> + 'p {
    sink.inputs
        .iter()
        .filter(|e| e.steps.is_empty())
        .filter_map(|e| match e.from {
            StreamRef::Node(id) => match plan.nodes.get(id).map(|n| &n.kind) {
                Some(NodeKind::Window(w)) => Some(w),
                _ => None,
            },
            _ => None,
        })
}

/// The columns the plan knows of `sink`'s rows, window by window in input order (a name may
/// repeat; the first a sink can type wins).
pub fn known_columns(plan: &Plan, sink: &SinkPlan) -> Vec<(String, KnownColumn)> {
    let mut out = Vec::new();
    for w in window_inputs(plan, sink) {
        out.push(("window_start".to_string(), KnownColumn::Integer));
        out.push(("window_end".to_string(), KnownColumn::Integer));
        for a in &w.aggregates {
            let k = match a.func {
                AggFunc::Count | AggFunc::CountDistinct | AggFunc::ApproxCountDistinct => {
                    KnownColumn::Integer
                }
                AggFunc::Sum => KnownColumn::Sum,
                AggFunc::Avg => KnownColumn::Avg,
                AggFunc::Min | AggFunc::Max => continue,
            };
            out.push((a.name.clone(), k));
        }
    }
    out
}

/// Per window `sink` reads directly: the fields that make a result's key (its group-by fields,
/// then `window_start`).
pub fn result_keys(plan: &Plan, sink: &SinkPlan) -> Vec<Vec<String>> {
    window_inputs(plan, sink)
        .map(|w| {
            w.group_by
                .iter()
                .map(|f| f.as_str().to_string())
                .chain(["window_start".to_string()])
                .collect()
        })
        .collect()
}
