//! The plan's graph as the runtime walks it, worked out once before any thread starts: who reads
//! each stream (a source, a node's output, a node's late side output) — the ports that key it and
//! the sinks that write it, directly or through chains of steps — and, per node, which input
//! partitions its watermark depends on and how far it is held back behind each.
//!
//! A node's watermark is the minimum over its own inputs only: over the partitions of the sources
//! upstream of it, each less the holds of the nodes in between (an outer interval join passes its
//! watermark on held back by its bounds). So an idle source of one pipeline never stops another's
//! windows, and a node's output is never late for its readers (see `plan::NodePlan::hold_ms`).

use crate::connectors::source::Partition;
use crate::plan::{Edge, Plan, StepId, StreamRef};
use crate::record::bind::Binding;

/// Everything that reads one stream.
#[derive(Debug, Clone, Default)]
pub struct Readers {
    /// Ports reading the stream as it is.
    pub ports: Vec<Binding>,
    /// Sinks writing it as it is.
    pub sinks: Vec<usize>,
    /// Chains of steps over it, each with the ports and sinks at its end.
    pub chains: Vec<Chain>,
    /// Some reader aggregates retractions (a window): updates go out as retraction + new value.
    pub retractions: bool,
}

#[derive(Debug, Clone)]
pub struct Chain {
    pub steps: Vec<StepId>,
    pub ports: Vec<Binding>,
    pub sinks: Vec<usize>,
    /// `ports` bind the chain's input line, not its output (`runtime::pushdown`).
    pub direct: bool,
}

impl Readers {
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty() && self.sinks.is_empty() && self.chains.is_empty()
    }

    /// The chain `steps`, added if new.
    fn chain(&mut self, steps: &[StepId]) -> &mut Chain {
        let i = match self.chains.iter().position(|c| c.steps == steps) {
            Some(i) => i,
            None => {
                self.chains.push(Chain {
                    steps: steps.to_vec(),
                    ports: Vec::new(),
                    sinks: Vec::new(),
                    direct: false,
                });
                self.chains.len() - 1
            }
        };
        &mut self.chains[i]
    }

    fn add_port(&mut self, steps: &[StepId], b: Binding) {
        if steps.is_empty() {
            self.ports.push(b);
        } else {
            self.chain(steps).ports.push(b);
        }
    }

    fn add_sink(&mut self, steps: &[StepId], sink: usize) {
        if steps.is_empty() {
            self.sinks.push(sink);
        } else {
            self.chain(steps).sinks.push(sink);
        }
    }
}

pub struct Topology {
    /// Levels of exchange a chunk goes through: 1 + the deepest node's depth (0 without nodes).
    pub depths: usize,
    pub node_depth: Vec<usize>,
    /// The nodes of each depth, in node order.
    pub by_depth: Vec<Vec<usize>>,
    /// The node each port belongs to, and the node's first port.
    pub port_node: Vec<usize>,
    pub first_port: Vec<u16>,
    /// `deps[node][partition]`: how far the node's watermark is held back behind the partition's,
    /// or `None` when the node does not read it at all.
    pub deps: Vec<Vec<Option<i64>>>,
    pub sources: Vec<Readers>,
    pub outputs: Vec<Readers>,
    pub lates: Vec<Readers>,
}

fn readers_of<'a>(
    from: StreamRef,
    sources: &'a mut [Readers],
    outputs: &'a mut [Readers],
    lates: &'a mut [Readers],
) -> &'a mut Readers {
    match from {
        StreamRef::Source(s) => &mut sources[s],
        StreamRef::Node(n) => &mut outputs[n],
        StreamRef::Late(n) => &mut lates[n],
    }
}

impl Topology {
    pub fn new(plan: &Plan, parts: &[Partition]) -> Topology {
        let nodes = plan.nodes.len();
        let mut sources = vec![Readers::default(); plan.sources.len()];
        let mut outputs = vec![Readers::default(); nodes];
        let mut lates = vec![Readers::default(); nodes];
        let mut port_node = Vec::with_capacity(plan.ports.len());
        for (id, port) in plan.ports.iter().enumerate() {
            port_node.push(port.node);
            let binding = Binding {
                port: id as u16,
                key: port.key.clone(),
                values: port.values.clone(),
                row: port.row,
            };
            let window = plan.nodes[port.node].kind.spec().takes_retractions();
            for Edge { from, steps } in &port.inputs {
                let r = readers_of(*from, &mut sources, &mut outputs, &mut lates);
                r.add_port(steps, binding.clone());
                r.retractions |= window;
            }
        }
        for (si, sink) in plan.sinks.iter().enumerate() {
            for Edge { from, steps } in &sink.inputs {
                readers_of(*from, &mut sources, &mut outputs, &mut lates).add_sink(steps, si);
            }
        }
        for r in &mut sources {
            // A source's lines reach sinks only through its step chains (`shard::steps`): a sink
            // reading the source as it is takes the chain of no steps.
            if !r.sinks.is_empty() {
                let sinks = std::mem::take(&mut r.sinks);
                r.chain(&[]).sinks.extend(sinks);
            }
            bind_through_selects(plan, r);
        }
        let depths = plan.depths();
        let mut by_depth = vec![Vec::new(); depths.max(1)];
        for (i, n) in plan.nodes.iter().enumerate() {
            by_depth[n.depth].push(i);
        }
        Topology {
            depths,
            by_depth,
            node_depth: plan.nodes.iter().map(|n| n.depth).collect(),
            first_port: plan.nodes.iter().map(|n| n.ports.start as u16).collect(),
            port_node,
            deps: dependencies(plan, parts),
            sources,
            outputs,
            lates,
        }
    }
}

/// A source's chains whose readers can bind through their select (`runtime::pushdown`): with
/// nothing left to run and no sink, the readers become the source's own, bound in the same pass
/// over the line as the event time; otherwise they bind the line after the remaining steps.
fn bind_through_selects(plan: &Plan, r: &mut Readers) {
    let mut kept = Vec::with_capacity(r.chains.len());
    for mut c in std::mem::take(&mut r.chains) {
        match super::pushdown::through_chain(&plan.steps, &c.steps, &c.ports) {
            Some(p) if p.steps.is_empty() && c.sinks.is_empty() => {
                r.ports.extend(p.ports);
                continue;
            }
            Some(p) => {
                if c.sinks.is_empty() {
                    c.steps = p.steps;
                }
                c.ports = p.ports;
                c.direct = true;
            }
            None => {}
        }
        kept.push(c);
    }
    r.chains = kept;
}

/// Per node, per partition, the largest hold on any path from the partition to the node (`None`:
/// no path). Nodes are in topological order, so every upstream is done first.
fn dependencies(plan: &Plan, parts: &[Partition]) -> Vec<Vec<Option<i64>>> {
    let mut deps: Vec<Vec<Option<i64>>> = Vec::with_capacity(plan.nodes.len());
    for node in &plan.nodes {
        let mut mine: Vec<Option<i64>> = vec![None; parts.len()];
        let mut take = |p: usize, h: i64| {
            mine[p] = Some(mine[p].map_or(h, |o: i64| o.max(h)));
        };
        for port in &plan.ports[node.ports.clone()] {
            for e in &port.inputs {
                match e.from {
                    StreamRef::Source(s) => {
                        for (p, part) in parts.iter().enumerate() {
                            if part.source == s {
                                take(p, 0);
                            }
                        }
                    }
                    StreamRef::Node(u) | StreamRef::Late(u) => {
                        let hold = match e.from {
                            StreamRef::Node(_) => plan.nodes[u].hold_ms,
                            _ => 0,
                        };
                        for (p, h) in deps[u].iter().enumerate() {
                            if let Some(h) = h {
                                take(p, h.saturating_add(hold));
                            }
                        }
                    }
                }
            }
        }
        deps.push(mine);
    }
    deps
}
