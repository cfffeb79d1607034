//! `sluice explain`: the operator graph a plan runs, as text a person reads — every source with
//! its event time and watermark, every stateful operator with the keys its inputs are routed on
//! and the chains of filters and selects they read through, every sink with what it writes and
//! the delivery guarantee it gives; each operator's output and each sink with its changelog mode.

use super::{Edge, NodeKind, Plan, StepKind, StreamRef, TimeUnit};
use std::fmt::Write;

/// The whole graph, sources first, then operators in the order they run, then sinks.
pub fn explain(plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "sources");
    for s in &plan.sources {
        let time = match &s.event_time {
            Some(et) => {
                let unit = match et.unit {
                    TimeUnit::Millis => "ms",
                    TimeUnit::Seconds => "s",
                    TimeUnit::Micros => "us",
                    TimeUnit::Rfc3339 => "RFC 3339",
                };
                format!(
                    "event time `{}` ({unit}); watermark = max event time - {} ms, idle after {} ms",
                    et.field, s.watermark.max_out_of_orderness_ms, s.watermark.idle_timeout_ms
                )
            }
            None => "no event time (no operator that needs one may read it)".to_string(),
        };
        let _ = writeln!(out, "  {}: {}; {time}", s.name, s.source.describe());
    }
    let _ = writeln!(
        out,
        "operators (watermark of each: the minimum over its inputs)"
    );
    for n in &plan.nodes {
        let _ = writeln!(
            out,
            "  {}: {} (depth {})",
            n.name,
            node_kind(&n.kind),
            n.depth
        );
        for p in &plan.ports[n.ports.clone()] {
            let key: Vec<&str> = p.key.iter().map(|k| k.as_str()).collect();
            let key = if key.is_empty() {
                "(none: one global group)".to_string()
            } else {
                key.join(", ")
            };
            let inputs: Vec<String> = p.inputs.iter().map(|e| edge(plan, e)).collect();
            let _ = writeln!(
                out,
                "    {} keyed on {key} <- {}",
                p.name,
                inputs.join(" + ")
            );
        }
        if let Some(late) = &n.late_events {
            let _ = writeln!(out, "    late events -> {late}");
        }
        let _ = writeln!(out, "    emits: {}", n.mode());
    }
    let _ = writeln!(out, "sinks");
    for s in &plan.sinks {
        let inputs: Vec<String> = s.inputs.iter().map(|e| edge(plan, e)).collect();
        let _ = writeln!(
            out,
            "  {}: {} <- {}",
            s.name,
            s.sink.describe(),
            inputs.join(" + ")
        );
        let _ = writeln!(
            out,
            "    writes: {}; delivery: {}",
            s.sink.changelog().describe(),
            s.sink.guarantee(plan.checkpoint.is_some())
        );
    }
    out
}

fn node_kind(kind: &NodeKind) -> String {
    kind.spec().describe()
}

/// `stream -> step -> step`, each step with what it is.
fn edge(plan: &Plan, e: &Edge) -> String {
    let mut s = match e.from {
        StreamRef::Source(i) => plan.sources[i].name.clone(),
        StreamRef::Node(i) => plan.nodes[i].name.clone(),
        StreamRef::Late(i) => format!("{} (late events)", plan.nodes[i].name),
    };
    for &step in &e.steps {
        let st = &plan.steps[step];
        let what = match &st.kind {
            StepKind::Filter { .. } => "filter",
            StepKind::Select { .. } => "select",
        };
        let _ = write!(s, " -> {} ({what})", st.name);
    }
    s
}
