//! How a plan's operators are fed and built: which operator each source's records are keyed for
//! (directly or through chains of filters and selects), with which key fields and value slots, and
//! the operators themselves in operator-id order (windows, temporal joins, interval joins,
//! dedupes). Built once before any thread starts.

use super::RuntimeError;
use crate::operators::dedupe::Dedupe;
use crate::operators::interval_join::IntervalJoin;
use crate::operators::temporal_join::TemporalJoin;
use crate::operators::{window, Operator};
use crate::plan::{AggFunc, InputPath, Plan};
use crate::sources::record::{Binding, SlotUse};
use crate::sources::Partition;

/// What every source feeds, and how many operators there are.
pub(super) struct Wiring {
    /// Per window: the value slot each aggregate reads.
    pub agg_slots: Vec<Vec<Option<usize>>>,
    /// Per source: the operators its records are keyed for directly.
    pub bindings: Vec<Vec<Binding>>,
    /// Per source, per distinct chain of filters and selects: the windows and sinks reading it.
    pub chains: Vec<Vec<RouteSpec>>,
    pub n_ops: usize,
}

/// One chain of filters and selects from a source: its stages, the window bindings reading it
/// and the sinks writing it.
pub(super) type RouteSpec = (Vec<crate::plan::StageId>, Vec<Binding>, Vec<usize>);

/// The spec of `path`'s chain among its source's, added if new.
fn route_spec<'a>(chains: &'a mut [Vec<RouteSpec>], path: &InputPath) -> &'a mut RouteSpec {
    let specs = &mut chains[path.source];
    let i = match specs.iter().position(|s| s.0 == path.chain) {
        Some(i) => i,
        None => {
            specs.push((path.chain.clone(), Vec::new(), Vec::new()));
            specs.len() - 1
        }
    };
    &mut specs[i]
}

/// For each window: the value slots its events carry, and the slot each aggregate reads.
fn slots_of(w: &crate::plan::WindowPlan) -> (Vec<(String, SlotUse)>, Vec<Option<usize>>) {
    let mut slots: Vec<(String, SlotUse)> = Vec::new();
    let mut agg_slots = Vec::new();
    for a in &w.aggregates {
        let Some(f) = &a.field else {
            agg_slots.push(None);
            continue;
        };
        let use_ = if a.func == AggFunc::CountDistinct {
            SlotUse::Hash
        } else {
            SlotUse::Number
        };
        let i = match slots.iter().position(|(n, u)| n == f && *u == use_) {
            Some(i) => i,
            None => {
                slots.push((f.clone(), use_));
                slots.len() - 1
            }
        };
        agg_slots.push(Some(i));
    }
    (slots, agg_slots)
}

/// Works out every binding of `plan`; refuses a window that needs more value slots than events carry.
pub(super) fn wire(plan: &Plan) -> Result<Wiring, RuntimeError> {
    let mut agg_slots = Vec::new();
    let mut bindings: Vec<Vec<Binding>> = vec![Vec::new(); plan.sources.len()];
    // Per source, per distinct chain of filters and selects: the windows and sinks reading it.
    let mut chains: Vec<Vec<RouteSpec>> = vec![Vec::new(); plan.sources.len()];
    for (i, w) in plan.windows.iter().enumerate() {
        let (slots, per_agg) = slots_of(w);
        if slots.len() > crate::event::MAX_VALUE_SLOTS {
            return Err(RuntimeError::Setup {
                window: w.name.clone(),
                message: format!(
                    "needs {} value slots; at most {}",
                    slots.len(),
                    crate::event::MAX_VALUE_SLOTS
                ),
            });
        }
        agg_slots.push(per_agg);
        let binding = Binding {
            op: i as u8,
            key_fields: w.group_by.clone(),
            slots: slots.clone(),
        };
        for &s in &w.inputs {
            bindings[s].push(binding.clone());
        }
        for p in &w.via {
            route_spec(&mut chains, p).1.push(binding.clone());
        }
    }
    for (si, s) in plan.sinks.iter().enumerate() {
        for p in &s.records {
            route_spec(&mut chains, p).2.push(si);
        }
    }
    // A join's two sides are keyed on their `on` fields; the side is told by the source.
    let n_windows = plan.windows.len();
    for (j, join) in plan.joins.iter().enumerate() {
        for (source, field) in [(join.input, &join.on_input), (join.table, &join.on_table)] {
            bindings[source].push(Binding {
                op: (n_windows + j) as u8,
                key_fields: vec![field.clone()],
                slots: Vec::new(),
            });
        }
    }
    let first_interval = n_windows + plan.joins.len();
    for (j, join) in plan.interval_joins.iter().enumerate() {
        for source in [join.left, join.right] {
            bindings[source].push(Binding {
                op: (first_interval + j) as u8,
                key_fields: join.on.clone(),
                slots: Vec::new(),
            });
        }
    }
    let first_dedupe = first_interval + plan.interval_joins.len();
    for (j, dd) in plan.dedupes.iter().enumerate() {
        for &source in &dd.inputs {
            bindings[source].push(Binding {
                op: (first_dedupe + j) as u8,
                key_fields: dd.key.clone(),
                slots: Vec::new(),
            });
        }
    }
    let n_ops = first_dedupe + plan.dedupes.len();
    Ok(Wiring {
        agg_slots,
        bindings,
        chains,
        n_ops,
    })
}

/// One shard's operators, in operator-id order.
pub(super) fn operators(
    plan: &Plan,
    agg_slots: &[Vec<Option<usize>>],
    parts: &[Partition],
) -> Vec<Box<dyn Operator>> {
    plan.windows
        .iter()
        .zip(agg_slots)
        .map(|(w, s)| window::build(w, s))
        .chain(plan.joins.iter().map(|j| {
            let table_parts = parts.iter().map(|p| p.source == j.table).collect();
            Box::new(TemporalJoin::new(j.left, table_parts)) as Box<dyn crate::operators::Operator>
        }))
        .chain(plan.interval_joins.iter().map(|j| {
            let right_parts = parts.iter().map(|p| p.source == j.right).collect();
            Box::new(IntervalJoin::new(
                j.on.clone(),
                j.lower_ms,
                j.upper_ms,
                j.outer,
                right_parts,
            )) as Box<dyn crate::operators::Operator>
        }))
        .chain(
            plan.dedupes.iter().map(|d| {
                Box::new(Dedupe::new(d.horizon_ms)) as Box<dyn crate::operators::Operator>
            }),
        )
        .collect()
}
