//! Event-time window aggregation: tumbling, sliding, cumulative and session windows with Flink's
//! firing and lateness rules.
//!
//! - A window `[start, end)` fires when the watermark reaches `end - 1` (its last millisecond).
//! - An event whose window has fired but whose watermark is below `end - 1 + allowed_lateness` is added
//!   and the window re-fires at once: a new line with the same group-by and `window_start` (upsert).
//! - Later events are dropped from that window; an event dropped from all of its windows is counted and
//!   handed to the late side output.
//! - State is one accumulator set per (key, pane), never a buffer of events. Tumbling, sliding and
//!   cumulative windows share panes (sliding: `slide`-sized panes merged at fire time; cumulative:
//!   `step`-sized panes), so an event updates exactly one accumulator set.
//!
//! This module knows events, aggregates and time; it never sees threads, rings, sources or sinks.

pub mod acc_table;
pub mod agg_plan;
pub mod aggregate;
pub mod combine;
pub mod config;
pub mod distinct;
pub(crate) mod format;
pub(crate) mod numbers;
pub mod panes;
pub mod plan;
mod session;

use crate::operators::Operator;
use crate::plan::{WindowKind, WindowPlan};
use aggregate::AggLayout;

pub use format::LineFormat;

/// Phase one of a pane window with `hot_keys` (see [`combine`]); `None` for session windows.
pub fn combiner(plan: &WindowPlan) -> Option<Box<dyn crate::operators::Combine>> {
    combine::Combiner::new(plan).map(|c| Box::new(c) as Box<dyn crate::operators::Combine>)
}

/// Builds the operator for one window transform.
pub fn build(plan: &WindowPlan) -> Box<dyn Operator> {
    let layout = AggLayout::new(&plan.aggregates);
    let names: Vec<String> = plan
        .group_by
        .iter()
        .map(|p| p.as_str().to_string())
        .collect();
    let format = LineFormat::new(&names);
    match plan.window {
        WindowKind::Session { gap_ms } => Box::new(session::SessionWindows::new(
            gap_ms,
            plan.allowed_lateness_ms,
            layout,
            format,
        )),
        kind => Box::new(panes::PaneWindows::new(
            panes::Geometry::new(kind),
            plan.allowed_lateness_ms,
            layout,
            format,
        )),
    }
}

/// `floor(ts / size) * size` for any sign of `ts`.
#[inline]
pub fn align(ts: i64, size: i64) -> i64 {
    ts - ts.rem_euclid(size)
}

#[cfg(test)]
mod tests;
