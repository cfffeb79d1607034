//! Validation of a parsed config into a [`Plan`]: the whole graph is checked and every problem is
//! reported at once, each with file, line, column and key.
//!
//! What must stay true of a plan that comes out of here (the runtime relies on it without
//! re-checking): every input names a stream (a source, a transform's output or a `late_events`
//! side output) and the transforms form no cycle; nodes are in topological order and each node's
//! depth is 1 + the deepest node it reads (0 when it reads only sources); filters' and selects'
//! expressions compile; every field path a consumer names exists where the upstream's fields are
//! known; names are unique across all streams and components; window shapes are well-formed;
//! there are at most [`MAX_NODES`] nodes and [`MAX_PORTS`] ports; nothing consumes an updating
//! stream it cannot handle; runtime sizes are in range. Nothing here touches files, threads or
//! rings.

use std::collections::HashMap;
use std::path::Path;

use super::{CheckpointPlan, NodePlan, Plan, PortPlan, RuntimePlan, SourcePlan};
use crate::config::{self, Config, ConfigError, KeyPath, Location, SourceText};

/// Node ids travel in snapshot section names and metrics labels only; a bound keeps plans sane.
pub const MAX_NODES: usize = 255;
/// Port ids travel in a `u16` on every event.
pub const MAX_PORTS: usize = u16::MAX as usize;

/// One problem in a config, at a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {key}: {message}")]
pub struct PlanError {
    pub at: Location,
    /// Dotted path of the offending key, e.g. `transforms.clicks_per_minute.inputs[0]`.
    pub key: String,
    pub message: String,
}

/// Every problem found in a config, in file order; displays one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanErrors(pub Vec<PlanError>);

impl std::fmt::Display for PlanErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PlanErrors {}

/// Reading, parsing or validating a config failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Plan(#[from] PlanErrors),
    #[error(transparent)]
    Sql(#[from] crate::sql::job::JobSqlError),
}

/// Reads, parses and validates the config at `path`: the one call the CLI needs.
pub fn load(path: &Path) -> Result<Plan, LoadError> {
    Ok(load_job(path)?.plan()?)
}

/// Where a config's keys are, for messages: in a TOML file, or for the parts a job's SQL compiled
/// to, at their statement in the SQL.
pub trait Locate {
    fn locate(&self, key: &KeyPath) -> Location;
}

impl Locate for SourceText {
    fn locate(&self, key: &KeyPath) -> Location {
        SourceText::locate(self, key)
    }
}

/// A job file read and parsed; with `[pipeline] sql`, its sources, transforms and sinks are the
/// typed tables the SQL compiles to.
pub struct Loaded {
    pub config: Config,
    pub text: SourceText,
    pub sql: Option<crate::sql::job::JobSql>,
}

impl Loaded {
    /// The job validated into a plan.
    pub fn plan(&self) -> Result<Plan, PlanErrors> {
        build(&self.config, self)
    }
}

impl Locate for Loaded {
    fn locate(&self, key: &KeyPath) -> Location {
        match self.sql.as_ref().and_then(|s| s.locate(key)) {
            Some(at) => at,
            None => self.text.locate(key),
        }
    }
}

/// Reads and parses the job at `path`; a job whose `[pipeline] sql` holds its graph gets the
/// sources, transforms and sinks the SQL compiles to.
pub fn load_job(path: &Path) -> Result<Loaded, LoadError> {
    let (mut config, text) = config::load(path)?;
    let Some(pipeline) = &config.pipeline else {
        return Ok(Loaded {
            config,
            text,
            sql: None,
        });
    };
    let counts = [
        ("sources", config.sources.len()),
        ("transforms", config.transforms.len()),
        ("sinks", config.sinks.len()),
    ];
    let sql = crate::sql::job::compile_job(&pipeline.sql, &text, counts)?;
    let c = &sql.compiled;
    config.sources = c.sources.iter().cloned().collect();
    config.transforms = c.transforms.iter().cloned().collect();
    config.sinks = c.sinks.iter().cloned().collect();
    Ok(Loaded {
        config,
        text,
        sql: Some(sql),
    })
}

/// Validates `config` (`src` locates its keys for messages) into a plan.
pub fn build(config: &Config, src: &dyn Locate) -> Result<Plan, PlanErrors> {
    let mut b = Builder {
        src,
        errors: Vec::new(),
    };
    let runtime = b.runtime(config);
    b.unique_names(config);
    let sources: Vec<SourcePlan> = config
        .sources
        .iter()
        .map(|(name, s)| b.source(name, s, config.checkpoint.is_some()))
        .collect();
    let names = graph::Names::new(config);
    let order = b.order(config, &names);
    let mut g = graph::Graph::new(config, &names);
    for name in &order {
        config.transforms[name.as_str()]
            .table()
            .validate(name, &mut b, &mut g);
    }
    if g.nodes.len() > MAX_NODES {
        let n = g.nodes.len();
        b.err(
            KeyPath::new(["transforms"]),
            format!("{n} windows, joins and dedupes, but at most {MAX_NODES} are supported"),
        );
    }
    if g.ports.len() > MAX_PORTS {
        let n = g.ports.len();
        b.err(
            KeyPath::new(["transforms"]),
            format!("{n} operator inputs, but at most {MAX_PORTS} are supported"),
        );
    }
    let sinks = b.sinks(config, &mut g);
    let checkpoint = b.checkpoint(config);
    let api = b.api(config);
    for (kind, count) in [
        ("sources", config.sources.len()),
        ("transforms", config.transforms.len()),
        ("sinks", config.sinks.len()),
    ] {
        if count == 0 {
            b.err(
                KeyPath::new([kind]),
                format!("no {kind}: a pipeline needs at least one [{kind}.NAME] table"),
            );
        }
    }
    if b.errors.is_empty() {
        let (nodes, ports, steps) = g.finish();
        return Ok(Plan {
            runtime,
            sources,
            nodes,
            ports,
            steps,
            sinks,
            dead_letter: config.dead_letter.as_ref().map(|d| super::DeadLetterPlan {
                path: d.path.clone(),
                sink: crate::connectors::dead_letters(&d.path),
            }),
            checkpoint,
            api,
        });
    }
    // File order reads best; problems with no position (a missing section) come first.
    b.errors.sort_by_key(|e| e.at.line_col);
    Err(PlanErrors(b.errors))
}

pub(crate) struct Builder<'s> {
    src: &'s dyn Locate,
    errors: Vec<PlanError>,
}

impl Builder<'_> {
    pub(crate) fn err(&mut self, key: KeyPath, message: String) {
        self.errors.push(PlanError {
            at: self.src.locate(&key),
            key: key.to_string(),
            message,
        });
    }

    fn checkpoint(&mut self, config: &Config) -> Option<CheckpointPlan> {
        let c = config.checkpoint.as_ref()?;
        let key = |k: &str| KeyPath::new(["checkpoint", k]);
        if c.interval.as_millis() <= 0 {
            self.err(key("interval"), "must be longer than 0 ms".into());
        }
        if c.retain == 0 {
            self.err(key("retain"), "must keep at least 1 checkpoint".into());
        }
        Some(CheckpointPlan {
            dir: c.dir.clone(),
            interval_ms: c.interval.as_millis(),
            retain: c.retain,
            tolerable_failures: c.tolerable_failures,
            savepoint_dir: c
                .savepoint_dir
                .clone()
                .unwrap_or_else(|| c.dir.join("savepoints")),
        })
    }

    fn runtime(&mut self, config: &Config) -> RuntimePlan {
        let r = &config.runtime;
        let key = |k: &str| KeyPath::new(["runtime", k]);
        if r.shards == 0 {
            self.err(key("shards"), "must be at least 1".into());
        }
        if (r.key_groups as usize) < r.shards.max(1) {
            self.err(
                key("key_groups"),
                format!(
                    "{} key groups cannot be spread over {} shards: key_groups must be >= shards",
                    r.key_groups, r.shards
                ),
            );
        }
        if r.ring_capacity < 16 || !r.ring_capacity.is_power_of_two() {
            self.err(
                key("ring_capacity"),
                format!(
                    "{} is not allowed: must be a power of two, at least 16",
                    r.ring_capacity
                ),
            );
        }
        if r.chunk_bytes == 0 {
            self.err(key("chunk_bytes"), "must be at least 1".into());
        }
        if r.max_line_bytes == 0 {
            self.err(key("max_line_bytes"), "must be at least 1".into());
        }
        RuntimePlan {
            shards: r.shards,
            key_groups: r.key_groups,
            ring_capacity: r.ring_capacity,
            chunk_bytes: r.chunk_bytes,
            pin_cores: r.pin_cores,
            max_line_bytes: r.max_line_bytes,
            drain_timeout_ms: r.drain_timeout.as_millis(),
        }
    }

    /// Component names and late side-output names share one namespace.
    fn unique_names(&mut self, config: &Config) {
        let mut claims: Vec<(&str, KeyPath)> = Vec::new();
        claims.extend(
            config
                .sources
                .keys()
                .map(|n| (n.as_str(), KeyPath::new(["sources", n]))),
        );
        claims.extend(
            config
                .transforms
                .keys()
                .map(|n| (n.as_str(), KeyPath::new(["transforms", n]))),
        );
        claims.extend(
            config
                .sinks
                .keys()
                .map(|n| (n.as_str(), KeyPath::new(["sinks", n]))),
        );
        for (name, t) in &config.transforms {
            if let Some(late) = t.late_events() {
                claims.push((late, KeyPath::new(["transforms", name, "late_events"])));
            }
        }
        let mut first: HashMap<&str, KeyPath> = HashMap::new();
        for (name, at) in claims {
            if name.is_empty() {
                self.err(at, "a name cannot be empty".into());
            } else if let Some(prev) = first.get(name) {
                let msg = format!("name `{name}` is already used by `{prev}`; names must be unique across sources, transforms, late_events and sinks");
                self.err(at, msg);
            } else {
                first.insert(name, at);
            }
        }
    }
}

/// Ports and node drafts are assembled into the plan's lists here.
impl graph::Graph<'_> {
    fn finish(self) -> (Vec<NodePlan>, Vec<PortPlan>, Vec<super::StepPlan>) {
        (self.nodes, self.ports, self.steps)
    }
}

mod api;
pub(crate) mod graph;
mod io;
mod order;
pub(crate) mod schema;
#[cfg(test)]
mod tests;
