//! A shard's parts, made before any thread starts: its readers of each source with their chains
//! of filters and selects, the outlets of operator outputs and late side outputs, the sinks
//! opened for the run, and the metrics endpoint.

use super::{setup_err, Run};
use crate::connectors::sink::{OpenCx, OpenSink};
use crate::connectors::source::{Partition, ReaderCx, SourceReader};
use crate::operators::steps::StepChain;
use crate::plan::Plan;
use crate::record::bind::RecordParser;
use crate::runtime::shard::emit::Outlet;
use crate::runtime::shard::steps::SourceChain;
use crate::runtime::topology::{Readers, Topology};
use crate::runtime::RuntimeError;
use std::sync::Arc;

/// Per source: shard `shard`'s reader of it (binding its records for the ports that read it as
/// it is), and its chains (chains of filters and selects), each chain's first step reading the
/// fields the reader's parser finds in the same pass over the line.
pub(super) type SourceReaders = (Vec<Box<dyn SourceReader>>, Vec<Vec<SourceChain>>);

pub(super) fn source_readers(
    run: &Run<'_>,
    shard: usize,
    uring: bool,
) -> Result<SourceReaders, RuntimeError> {
    let plan = run.plan;
    let mut chains = source_chains(plan, &run.topo)?;
    let mut readers = Vec::with_capacity(plan.sources.len());
    for (i, ((s, open), rs)) in plan
        .sources
        .iter()
        .zip(run.sources)
        .zip(&mut chains)
        .enumerate()
    {
        let cx = ReaderCx {
            source: i,
            shard,
            shards: run.n,
            parts: &run.parts,
            bindings: &run.topo.sources[i].ports,
            chains: !rs.is_empty(),
            uring,
            chunk_bytes: plan.runtime.chunk_bytes.max(1),
            max_line_bytes: plan.runtime.max_line_bytes,
        };
        let mut reader = open
            .reader(&cx)
            .map_err(setup_err(format!("source `{}`", s.name)))?;
        for r in rs.iter_mut() {
            let Some(names) = r.chain.first_fields() else {
                continue;
            };
            if let Some(map) = reader.keep_fields(names) {
                r.chain.read_first_from(map);
            }
        }
        // Readers of a source's line itself take their fields from the same pass as well.
        for r in rs.iter_mut().filter(|r| r.direct) {
            let Some(rp) = r.parser.as_mut() else {
                continue;
            };
            if let Some(map) = reader.keep_fields(&rp.top_fields()) {
                rp.read_from_kept(&map);
            }
        }
        readers.push(reader);
    }
    Ok((readers, chains))
}

/// Per source: its chains of filters and selects, with the ports and sinks at their ends.
pub(super) fn source_chains(
    plan: &Plan,
    topo: &Topology,
) -> Result<Vec<Vec<SourceChain>>, RuntimeError> {
    let err = setup_err("(filters and selects)");
    topo.sources
        .iter()
        .map(|r| {
            r.chains
                .iter()
                .map(|c| {
                    Ok(SourceChain {
                        chain: StepChain::new(&plan.steps, &c.steps).map_err(&err)?,
                        parser: match c.ports.is_empty() {
                            true => None,
                            false => Some(RecordParser::keyed(&c.ports).map_err(&err)?),
                        },
                        sinks: c.sinks.clone(),
                        bound: false,
                        direct: c.direct,
                    })
                })
                .collect()
        })
        .collect()
}

/// The readers of one node's output (or late side output), compiled for one shard.
pub(super) fn outlet(plan: &Plan, r: &Readers) -> Result<Outlet, RuntimeError> {
    let err = setup_err("(operator outputs)");
    Ok(Outlet {
        sinks: r.sinks.clone(),
        parser: match r.ports.is_empty() {
            true => None,
            false => Some(RecordParser::keyed(&r.ports).map_err(&err)?),
        },
        chains: r
            .chains
            .iter()
            .map(|c| {
                Ok((
                    StepChain::new(&plan.steps, &c.steps).map_err(&err)?,
                    match c.ports.is_empty() {
                        true => None,
                        false => Some(RecordParser::keyed(&c.ports).map_err(&err)?),
                    },
                    c.sinks.clone(),
                ))
            })
            .collect::<Result<_, RuntimeError>>()?,
        retractions: r.retractions,
    })
}

pub(super) type Outlets = (Vec<Outlet>, Vec<Outlet>);

pub(super) fn outlets(plan: &Plan, topo: &Topology) -> Result<Outlets, RuntimeError> {
    let outputs = topo
        .outputs
        .iter()
        .map(|r| outlet(plan, r))
        .collect::<Result<_, _>>()?;
    let lates = topo
        .lates
        .iter()
        .map(|r| outlet(plan, r))
        .collect::<Result<_, _>>()?;
    Ok((outputs, lates))
}

/// The sinks of a run, opened, by name; and the dead-letter output.
pub(super) type OpenSinks = (Vec<(String, Arc<dyn OpenSink>)>, Option<Arc<dyn OpenSink>>);

/// Opens every sink, each through its connector; under `[checkpoint]` their committers join the
/// checkpoints' two-phase commit.
pub(super) fn open_sinks(
    plan: &Plan,
    ckpt: Option<&super::checkpointing::Ckpt>,
    resumed: bool,
    n: usize,
) -> Result<OpenSinks, RuntimeError> {
    let dead = match &plan.dead_letter {
        Some(d) => {
            let cx = OpenCx {
                name: "dead_letter",
                shards: n,
                checkpoint_dir: None,
                resumed,
                dead: None,
                known: &[],
                result_keys: &[],
            };
            Some(d.sink.open(&cx)?)
        }
        None => None,
    };
    let mut open = Vec::new();
    let mut committers = Vec::new();
    for s in &plan.sinks {
        let known = crate::plan::columns::known_columns(plan, s);
        let result_keys = crate::plan::columns::result_keys(plan, s);
        let cx = OpenCx {
            name: &s.name,
            shards: n,
            checkpoint_dir: plan.checkpoint.as_ref().map(|c| c.dir.as_path()),
            resumed,
            dead: dead.as_ref(),
            known: &known,
            result_keys: &result_keys,
        };
        let sink = s.sink.open(&cx)?;
        committers.extend(sink.committer());
        open.push((s.name.clone(), sink));
    }
    if let Some(ck) = ckpt {
        // Set once, before the checkpoint writer starts.
        let _ = ck.committers.set(committers);
    }
    Ok((open, dead))
}

pub(super) type Endpoint = (
    Option<Arc<crate::metrics::live::Live>>,
    Option<crate::api::Server>,
);

/// The metrics endpoint, bound before any shard starts: a taken address fails the run at once.
pub(super) fn endpoint(
    run: &Run<'_>,
    names: &[String],
    sinks: &OpenSinks,
) -> Result<Endpoint, RuntimeError> {
    let plan = run.plan;
    let Some(api) = &plan.api else {
        return Ok((None, None));
    };
    let (addr, err) = (api.address, setup_err("(api)"));
    let server = crate::api::Server::bind(addr, api.into())
        .map_err(|e| err(format!("cannot listen on {addr}: {e}")))?;
    if api.remote {
        tracing::warn!(
            address = %addr,
            "the endpoint listens beyond loopback (api.allow_remote = true): anyone who can reach \
             it can read /metrics, and it has no authentication"
        );
    }
    let mut live = crate::metrics::live::Live::new(run.n, names.to_vec());
    live.source_names = plan.sources.iter().map(|s| s.name.clone()).collect();
    live.partition_names = run.parts.iter().map(|p| p.name.clone()).collect();
    live.sinks = sinks.0.iter().filter_map(|(_, s)| s.counters()).collect();
    for (i, open) in run.sources.iter().enumerate() {
        let logs: Vec<(u16, &Partition)> = run
            .parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.source == i && p.is_log())
            .map(|(j, p)| (j as u16, p))
            .collect();
        if logs.is_empty() {
            continue;
        }
        if let Some(ends) = open.log_ends(&logs).map_err(&err)? {
            live.log_ends.push(ends);
        }
    }
    Ok((Some(Arc::new(live)), Some(server)))
}
