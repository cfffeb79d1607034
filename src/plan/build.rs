//! Validation of a parsed config into a [`Plan`]: the whole graph is checked and every problem is
//! reported at once, each with file, line, column and key.
//!
//! What must stay true of a plan that comes out of here (the runtime relies on it without
//! re-checking): every window reads only sources (directly or through filters and selects), every
//! filter and select reads only sources or other filters and selects (no cycles) and its
//! expressions compile, every sink reads only window results, late side outputs or records of a
//! filter or select, names are unique across all streams and components, window shapes are
//! well-formed, each window needs at most [`MAX_VALUE_SLOTS`] value fields, there are at most
//! [`MAX_WINDOWS`] windows, and runtime sizes are in range. Sources, windows and sinks are sorted
//! by name so that ids are deterministic. Nothing here touches files, threads or rings.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::{CheckpointPlan, Plan, RuntimePlan, SourceId, SourcePlan, StageId, WindowPlan};
use crate::config::{
    self, suggest, Config, ConfigError, KeyPath, Location, SourceText, TransformConfig,
};
#[cfg(doc)]
use crate::event::MAX_VALUE_SLOTS;

/// Window operator ids travel in a `u8` on every event.
pub const MAX_WINDOWS: usize = 255;
/// Fields a `generator` source's events carry.
pub const GENERATOR_FIELDS: [&str; 4] = ["ad_id", "user_id", "ts", "bid"];
/// Output fields every window result has besides its group-by fields and aggregates.
pub const WINDOW_FIELDS: [&str; 2] = ["window_start", "window_end"];
/// The aggregate functions, as a user writes them.
pub const AGG_FUNCTIONS: [&str; 6] = ["count", "sum", "min", "max", "avg", "count_distinct"];

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
}

/// Reads, parses and validates the config at `path`: the one call the CLI needs.
pub fn load(path: &Path) -> Result<Plan, LoadError> {
    let (config, src) = config::load(path)?;
    Ok(build(&config, &src)?)
}

/// Validates `config` (parsed from `src`, which locates keys for messages) into a plan.
pub fn build(config: &Config, src: &SourceText) -> Result<Plan, PlanErrors> {
    let mut b = Builder {
        src,
        errors: Vec::new(),
    };
    let runtime = b.runtime(config);
    b.unique_names(config);
    let streams = Streams::new(config);
    let sources: Vec<SourcePlan> = config
        .sources
        .iter()
        .map(|(name, s)| b.source(name, s))
        .collect();
    let cyclic = b.cycles(config, &streams);
    let window_count = windows_of(config).count()
        + joins_of(config).count()
        + interval_joins_of(config).count()
        + dedupes_of(config).count();
    if window_count > MAX_WINDOWS {
        let n = window_count;
        b.err(
            KeyPath::new(["transforms"]),
            format!(
                "{n} windows and joins, but at most {MAX_WINDOWS} are supported (operator ids are one byte)"
            ),
        );
    }
    let stages = b.stages(config, &streams);
    let joins: Vec<_> = joins_of(config)
        .map(|(name, j)| b.join(name, j, &streams))
        .collect();
    let interval_joins: Vec<_> = interval_joins_of(config)
        .map(|(name, j)| b.interval_join(name, j, &streams))
        .collect();
    let dedupes: Vec<_> = dedupes_of(config)
        .map(|(name, d)| b.dedupe(name, d, &streams))
        .collect();
    let windows = windows_of(config)
        .map(|(name, w)| b.window(name, w, config, &streams, &cyclic, &stages))
        .collect();
    b.kafka_limits(&sources, &joins, &interval_joins, &dedupes);

    let sinks = b.sinks(config, &streams, &stages);
    let checkpoint = b.checkpoint(config);
    let api = config.api.as_ref().and_then(|a| match a.address.parse() {
        Ok(addr) => Some(addr),
        Err(_) => {
            b.err(
                KeyPath::new(["api", "address"]),
                format!(
                    "`{}` is not a socket address: expected host:port, e.g. \"127.0.0.1:9464\"",
                    a.address
                ),
            );
            None
        }
    });
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
        return Ok(Plan {
            runtime,
            sources,
            windows,
            stages: stages.into_iter().map(|s| s.plan).collect(),
            joins,
            interval_joins,
            dedupes,
            sinks,
            dead_letter: config.dead_letter.as_ref().map(|d| d.path.clone()),
            checkpoint,
            api,
        });
    }
    // File order reads best; problems with no position (a missing section) come first.
    b.errors.sort_by_key(|e| e.at.line_col);
    Err(PlanErrors(b.errors))
}

impl WindowPlan {
    /// The distinct aggregate input fields in order of first use: value slot `i` of an event keyed
    /// for this window holds field `i`. At most [`MAX_VALUE_SLOTS`] (checked by [`build`]).
    pub fn value_fields(&self) -> Vec<&str> {
        let mut fields: Vec<&str> = Vec::new();
        for f in self.aggregates.iter().filter_map(|a| a.field.as_deref()) {
            if !fields.contains(&f) {
                fields.push(f);
            }
        }
        fields
    }
}

/// The window transforms, in name order: a window's id is its position here.
fn windows_of(
    config: &Config,
) -> impl Iterator<Item = (&String, &config::WindowTransformConfig)> + '_ {
    config.transforms.iter().filter_map(|(n, t)| match t {
        TransformConfig::Window(w) => Some((n, w)),
        _ => None,
    })
}

/// The filters and selects, in name order: a stage's id is its position here.
fn stages_of(config: &Config) -> impl Iterator<Item = (&String, &TransformConfig)> + '_ {
    config
        .transforms
        .iter()
        .filter(|(_, t)| matches!(t, TransformConfig::Filter(_) | TransformConfig::Select(_)))
}

/// The interval joins, in name order: after the windows and the temporal joins.
fn interval_joins_of(
    config: &Config,
) -> impl Iterator<Item = (&String, &config::IntervalJoinConfig)> + '_ {
    config.transforms.iter().filter_map(|(n, t)| match t {
        TransformConfig::IntervalJoin(j) => Some((n, j)),
        _ => None,
    })
}

/// The dedupes, in name order: after the interval joins.
fn dedupes_of(config: &Config) -> impl Iterator<Item = (&String, &config::DedupeConfig)> + '_ {
    config.transforms.iter().filter_map(|(n, t)| match t {
        TransformConfig::Dedupe(d) => Some((n, d)),
        _ => None,
    })
}

/// The temporal joins, in name order: join `j`'s operator id is the window count + `j`.
fn joins_of(config: &Config) -> impl Iterator<Item = (&String, &config::TemporalJoinConfig)> + '_ {
    config.transforms.iter().filter_map(|(n, t)| match t {
        TransformConfig::TemporalJoin(j) => Some((n, j)),
        _ => None,
    })
}

/// What a name refers to when used as an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Source(SourceId),
    Window(usize),
    Late(usize),
    /// A filter or select.
    Stage(StageId),
    Sink,
}

/// Every name an input could mention. A duplicated name resolves to its first meaning (the
/// duplicate itself is reported by `unique_names`).
struct Streams<'c> {
    by_name: HashMap<&'c str, Stream>,
}

impl<'c> Streams<'c> {
    fn new(config: &'c Config) -> Streams<'c> {
        let mut by_name = HashMap::new();
        for (id, name) in config.sources.keys().enumerate() {
            by_name.entry(name.as_str()).or_insert(Stream::Source(id));
        }
        for (op, (name, w)) in windows_of(config).enumerate() {
            by_name.entry(name.as_str()).or_insert(Stream::Window(op));
            if let Some(late) = &w.late_events {
                by_name.entry(late.as_str()).or_insert(Stream::Late(op));
            }
        }
        for (id, (name, _)) in stages_of(config).enumerate() {
            by_name.entry(name.as_str()).or_insert(Stream::Stage(id));
        }
        let windows = windows_of(config).count();
        for (j, (name, tj)) in joins_of(config).enumerate() {
            by_name
                .entry(name.as_str())
                .or_insert(Stream::Window(windows + j));
            if let Some(late) = &tj.late_events {
                by_name
                    .entry(late.as_str())
                    .or_insert(Stream::Late(windows + j));
            }
        }
        let first = windows + joins_of(config).count();
        for (j, (name, ij)) in interval_joins_of(config).enumerate() {
            by_name
                .entry(name.as_str())
                .or_insert(Stream::Window(first + j));
            if let Some(late) = &ij.late_events {
                by_name
                    .entry(late.as_str())
                    .or_insert(Stream::Late(first + j));
            }
        }
        let first = first + interval_joins_of(config).count();
        for (j, (name, dd)) in dedupes_of(config).enumerate() {
            by_name
                .entry(name.as_str())
                .or_insert(Stream::Window(first + j));
            if let Some(late) = &dd.late_events {
                by_name
                    .entry(late.as_str())
                    .or_insert(Stream::Late(first + j));
            }
        }
        for name in config.sinks.keys() {
            by_name.entry(name.as_str()).or_insert(Stream::Sink);
        }
        Streams { by_name }
    }

    fn get(&self, name: &str) -> Option<Stream> {
        self.by_name.get(name).copied()
    }

    /// "; did you mean `x`?" among the names of kinds `want` accepts.
    fn hint(&self, wrong: &str, want: impl Fn(Stream) -> bool) -> String {
        let mut names: Vec<&str> = self
            .by_name
            .iter()
            .filter(|(_, s)| want(**s))
            .map(|(n, _)| *n)
            .collect();
        names.sort_unstable();
        suggest::hint(wrong, names)
    }
}

struct Builder<'s> {
    src: &'s SourceText,
    errors: Vec<PlanError>,
}

impl Builder<'_> {
    fn err(&mut self, key: KeyPath, message: String) {
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
        let join_lates =
            interval_joins_of(config).filter_map(|(n, j)| Some((n, j.late_events.as_ref()?)));
        let dedupe_lates =
            dedupes_of(config).filter_map(|(n, d)| Some((n, d.late_events.as_ref()?)));
        let temporal_lates =
            joins_of(config).filter_map(|(n, j)| Some((n, j.late_events.as_ref()?)));
        for (name, late) in join_lates.chain(dedupe_lates).chain(temporal_lates) {
            claims.push((late, KeyPath::new(["transforms", name, "late_events"])));
        }
        for (name, w) in windows_of(config) {
            if let Some(late) = &w.late_events {
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

    /// Reports each cycle among windows once (at its first member by name) and returns the
    /// ops that lie on one, whose inputs then need no further complaint. (Cycles among filters and
    /// selects are found where their inputs are resolved.)
    fn cycles(&mut self, config: &Config, streams: &Streams<'_>) -> BTreeSet<usize> {
        let names: Vec<&str> = windows_of(config).map(|(n, _)| n.as_str()).collect();
        // reads[u] = (input index, op it reads) for each input of window u naming a transform
        // output or a late side output.
        let reads: Vec<Vec<(usize, usize)>> = windows_of(config)
            .map(|(_, w)| {
                w.inputs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, input)| match streams.get(input) {
                        Some(Stream::Window(v) | Stream::Late(v)) => Some((i, v)),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let reach: Vec<Vec<bool>> = (0..names.len()).map(|u| reachable(&reads, u)).collect();
        let mut cyclic = BTreeSet::new();
        for u in 0..names.len() {
            if !reach[u][u] || cyclic.contains(&u) {
                continue;
            }
            let path = cycle_path(&reads, &reach, u);
            cyclic.extend((0..names.len()).filter(|&v| reach[u][v] && reach[v][u]));
            let shown: Vec<&str> = path.iter().map(|&(_, v)| names[v]).collect();
            let first_input = path.first().map_or(0, |&(i, _)| i);
            let msg = format!(
                "transforms form a cycle: {} -> {} (each reads the next); a pipeline must be acyclic",
                names[u],
                shown.join(" -> ")
            );
            self.err(
                KeyPath::new(["transforms", names[u], "inputs"]).index(first_input),
                msg,
            );
        }
        cyclic
    }
}

/// `reach[v]`: can window `from` reach window `v` by following inputs (one step or more)?
fn reachable(reads: &[Vec<(usize, usize)>], from: usize) -> Vec<bool> {
    let mut seen = vec![false; reads.len()];
    let mut stack: Vec<usize> = reads[from].iter().map(|&(_, v)| v).collect();
    while let Some(v) = stack.pop() {
        if !std::mem::replace(&mut seen[v], true) {
            stack.extend(reads[v].iter().map(|&(_, w)| w));
        }
    }
    seen
}

/// A shortest cycle from `u` back to `u`: the (input index, op read) steps, ending at `u`.
fn cycle_path(reads: &[Vec<(usize, usize)>], reach: &[Vec<bool>], u: usize) -> Vec<(usize, usize)> {
    // Breadth-first from u, staying inside u's strongly connected component.
    let mut parent: Vec<Option<(usize, usize)>> = vec![None; reads.len()];
    let mut queue = std::collections::VecDeque::from([u]);
    let mut end = None;
    'search: while let Some(v) = queue.pop_front() {
        for &(i, w) in &reads[v] {
            if w == u {
                end = Some((v, i));
                break 'search;
            }
            if parent[w].is_none() && w != u && reach[w][u] {
                parent[w] = Some((v, i));
                queue.push_back(w);
            }
        }
    }
    let mut path = Vec::new();
    if let Some((mut v, i)) = end {
        path.push((i, u));
        while v != u {
            let Some((p, pi)) = parent[v] else { break };
            path.push((pi, v));
            v = p;
        }
    }
    path.reverse();
    path
}

mod io;
mod join;
mod stage;
#[cfg(test)]
mod tests;
mod window;
