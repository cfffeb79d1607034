//! What the plan knows of the rows a table-shaped sink (PostgreSQL, Parquet) writes: the window
//! results it reads directly, and the column types those imply (bounds and counts are integers,
//! whatever the first rows hold).

use super::{AggFunc, NodeKind, Plan, SinkPlan, StreamRef, WindowPlan};
use crate::record::columns::ColumnType;

/// The windows a sink reads directly (no step between): what the plan knows of its rows' shape.
pub fn window_inputs<'p>(
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

/// Column types the plan knows for a sink reading windows directly: bounds and counts are
/// integers, sums `sum` (`None`: as the first rows imply) and averages `avg`, whatever the first
/// rows hold (a sum whose first totals happen to be whole must not make an integer column its
/// later fractions cannot enter). Pinned types come first.
pub fn window_types(
    plan: &Plan,
    sink: &SinkPlan,
    pinned: &[(String, ColumnType)],
    sum: Option<ColumnType>,
    avg: ColumnType,
) -> Vec<(String, ColumnType)> {
    let mut out = pinned.to_vec();
    let mut add = |name: &str, ty| {
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name.to_string(), ty));
        }
    };
    for w in window_inputs(plan, sink) {
        add("window_start", ColumnType::BigInt);
        add("window_end", ColumnType::BigInt);
        for a in &w.aggregates {
            match a.func {
                AggFunc::Count | AggFunc::CountDistinct => add(&a.name, ColumnType::BigInt),
                AggFunc::Sum => {
                    if let Some(ty) = sum {
                        add(&a.name, ty)
                    }
                }
                AggFunc::Avg => add(&a.name, avg),
                AggFunc::Min | AggFunc::Max => {}
            }
        }
    }
    out
}
