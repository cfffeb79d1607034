//! The graph being built: what every name refers to, and the streams, steps, nodes and ports
//! validated so far (transforms are validated in dependency order, so a transform's inputs are
//! always done before it, unless they sit on a cycle, which was reported already).

use std::collections::HashMap;

use super::schema::Known;
use super::Builder;
use crate::config::{suggest, Config, KeyPath};
use crate::expr::FieldPath;
use crate::plan::{
    Edge, NodeId, NodeKind, NodePlan, PortPlan, SlotUse, SourceId, StepId, StepPlan, StreamRef,
};

/// What a name refers to when used as an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream<'c> {
    Source(SourceId),
    Transform(&'c str),
    /// The late side output of the named transform.
    LateOf(&'c str),
    Sink,
}

/// Every name an input could mention. A duplicated name resolves to its first meaning (the
/// duplicate itself is reported by `unique_names`).
pub(crate) struct Names<'c> {
    by_name: HashMap<&'c str, Stream<'c>>,
}

impl<'c> Names<'c> {
    pub fn new(config: &'c Config) -> Names<'c> {
        let mut by_name = HashMap::new();
        for (id, name) in config.sources.keys().enumerate() {
            by_name.entry(name.as_str()).or_insert(Stream::Source(id));
        }
        for (name, t) in &config.transforms {
            by_name
                .entry(name.as_str())
                .or_insert(Stream::Transform(name.as_str()));
            if let Some(late) = t.late_events() {
                by_name.entry(late).or_insert(Stream::LateOf(name.as_str()));
            }
        }
        for name in config.sinks.keys() {
            by_name.entry(name.as_str()).or_insert(Stream::Sink);
        }
        Names { by_name }
    }

    pub fn get(&self, name: &str) -> Option<Stream<'c>> {
        self.by_name.get(name).copied()
    }

    /// "; did you mean `x`?" among the names that are streams.
    fn hint(&self, wrong: &str) -> String {
        let mut names: Vec<&str> = self
            .by_name
            .iter()
            .filter(|(_, s)| !matches!(s, Stream::Sink))
            .map(|(n, _)| *n)
            .collect();
        names.sort_unstable();
        suggest::hint(wrong, names)
    }
}

/// A stream as its readers see it: the edges it stands for (a step stands for every path through
/// it), what its records are known to hold, and how it was made.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    pub edges: Vec<Edge>,
    pub known: Vec<Known>,
    /// It carries updates of earlier records (retractions before re-fired window results).
    pub updates: bool,
    /// Some update in it cannot be taken back (a session window's re-fire replaces a session
    /// under a new `window_start`).
    pub unretractable: bool,
    /// Depth of the deepest node it comes from; `None` when it comes only from sources.
    pub depth: Option<usize>,
    /// Why its records have no event time, if they have none: what it reads, as a message ends
    /// (a source without event time, directly or through filters and selects; an updating result).
    pub untimed: Option<String>,
    /// It carries the updating result (`+I`/`-U`/`+U`/`-D`) of the operator named here: an
    /// append-only sink refuses it.
    pub changelog: Option<String>,
}

impl Input {
    /// It takes rows back: a re-firing window's updates or an updating result.
    pub fn updating(&self) -> bool {
        self.updates || self.changelog.is_some()
    }
}

/// A validated transform, as its readers need it.
#[derive(Debug, Clone)]
enum Done {
    Step(Input),
    Node {
        id: NodeId,
        output: Vec<Known>,
        late: Vec<Known>,
        updates: bool,
        unretractable: bool,
        depth: usize,
        /// Its output is an updating result (a group aggregate's).
        changelog: bool,
        /// What it is, when its output has no event time (a group aggregate, a regular join).
        untimed: Option<&'static str>,
    },
}

/// One input of a node being added.
pub(crate) struct PortDraft {
    pub name: &'static str,
    pub key: Vec<FieldPath>,
    pub values: Vec<(FieldPath, SlotUse)>,
    pub row: bool,
    pub inputs: Vec<Input>,
    /// It reads a changelog with event time as versions (a temporal join's versioned table):
    /// a changelog source is not refused here as at other event-time ports.
    pub changes: bool,
}

/// A node being added: everything but its id, ports and depth.
pub(crate) struct NodeDraft {
    pub kind: NodeKind,
    pub late_events: Option<String>,
    pub hold_ms: i64,
    pub updates: bool,
    /// Its updates cannot be retracted (a session window's).
    pub unretractable: bool,
    /// Its output is an updating result (`+I`/`-U`/`+U`/`-D`) without event time, as a group
    /// aggregate's: append-only sinks and event-time operators refuse it.
    pub changelog: bool,
    /// What its output records hold, and its late side output's.
    pub output: crate::plan::build::schema::Schema,
    pub late: Vec<Known>,
}

pub(crate) struct Graph<'c> {
    config: &'c Config,
    names: &'c Names<'c>,
    done: HashMap<String, Done>,
    pub nodes: Vec<NodePlan>,
    pub ports: Vec<PortPlan>,
    pub steps: Vec<StepPlan>,
}

impl<'c> Graph<'c> {
    pub fn new(config: &'c Config, names: &'c Names<'c>) -> Graph<'c> {
        Graph {
            config,
            names,
            done: HashMap::new(),
            nodes: Vec::new(),
            ports: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// The stream `name` (read at `key`), or `None` after reporting why it is not one. A
    /// transform that is not done sits on or behind a cycle: reported already, so `None` quietly.
    pub fn input(&self, b: &mut Builder<'_>, key: KeyPath, name: &str) -> Option<Input> {
        match self.names.get(name) {
            Some(Stream::Source(id)) => {
                let mut known = Vec::new();
                let source = self.config.sources.values().nth(id);
                if let Some((s, fields)) = source.and_then(|s| Some((s, s.table().fields()?))) {
                    known.push(Known {
                        from: format!("{} source `{name}`", s.kind()),
                        schema: super::schema::Schema::closed(fields),
                    });
                }
                Some(Input {
                    edges: vec![Edge {
                        from: StreamRef::Source(id),
                        steps: Vec::new(),
                    }],
                    known,
                    updates: false,
                    unretractable: false,
                    depth: None,
                    untimed: source.is_some_and(|s| s.event_time().is_none()).then(|| {
                        format!("source `{name}`, which has none: give `{name}` an event_time (in SQL, a WATERMARK on its table)")
                    }),
                    changelog: source
                        .is_some_and(|s| s.table().changelog())
                        .then(|| name.to_string()),
                })
            }
            Some(Stream::Transform(t)) => match self.done.get(t)? {
                Done::Step(input) => Some(input.clone()),
                Done::Node {
                    id,
                    output,
                    updates,
                    unretractable,
                    depth,
                    changelog,
                    untimed,
                    ..
                } => Some(Input {
                    edges: vec![Edge {
                        from: StreamRef::Node(*id),
                        steps: Vec::new(),
                    }],
                    known: output.clone(),
                    updates: *updates,
                    unretractable: *unretractable,
                    depth: Some(*depth),
                    untimed: untimed.map(|what| format!("the result of {what} `{t}`, which has no event time (a GROUP BY without a window and a regular join give rows without a time attribute, as in Flink)")),
                    changelog: changelog.then(|| t.to_string()),
                }),
            },
            Some(Stream::LateOf(t)) => match self.done.get(t)? {
                Done::Node {
                    id, late, depth, ..
                } => Some(Input {
                    edges: vec![Edge {
                        from: StreamRef::Late(*id),
                        steps: Vec::new(),
                    }],
                    known: late.clone(),
                    updates: false,
                    unretractable: false,
                    depth: Some(*depth),
                    untimed: None,
                    changelog: None,
                }),
                Done::Step(_) => None,
            },
            Some(Stream::Sink) => {
                b.err(key, format!("`{name}` is a sink, not a stream"));
                None
            }
            None => {
                let hint = self.names.hint(name);
                b.err(
                    key,
                    format!("unknown input `{name}`: no source, transform or late_events output has this name{hint}"),
                );
                None
            }
        }
    }

    /// Every input of `names` (at `key[i]`), refusing one listed twice.
    pub fn inputs(&self, b: &mut Builder<'_>, key: KeyPath, names: &[String]) -> Vec<Input> {
        let mut out: Vec<Input> = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let k = key.clone().index(i);
            if names[..i].contains(name) {
                b.err(k, format!("`{name}` is listed twice"));
                continue;
            }
            if let Some(input) = self.input(b, k, name) {
                out.push(input);
            }
        }
        out
    }

    /// Records a validated filter or select: its readers see `input` (paths already through it).
    pub fn add_step(&mut self, name: &str, step: StepPlan, mut input: Input) -> StepId {
        let id = self.steps.len();
        self.steps.push(step);
        for e in &mut input.edges {
            e.steps.push(id);
        }
        self.done.insert(name.to_string(), Done::Step(input));
        id
    }

    /// Records a validated node with its ports; returns its id. A node that works in event time
    /// and reads a source without it is reported to `b`.
    pub fn add_node(
        &mut self,
        b: &mut Builder<'_>,
        name: &str,
        draft: NodeDraft,
        ports: Vec<PortDraft>,
    ) -> NodeId {
        if draft.kind.spec().needs_event_time() {
            refuse_untimed(b, name, draft.kind.what(), &ports);
            refuse_changelog(b, name, draft.kind.what(), &ports);
        }
        let id = self.nodes.len();
        let depth = ports
            .iter()
            .flat_map(|p| &p.inputs)
            .filter_map(|i| i.depth)
            .map(|d| d + 1)
            .max()
            .unwrap_or(0);
        let first = self.ports.len();
        for (side, p) in ports.into_iter().enumerate() {
            self.ports.push(PortPlan {
                node: id,
                side,
                name: p.name,
                key: p.key,
                values: p.values,
                row: p.row,
                inputs: p.inputs.into_iter().flat_map(|i| i.edges).collect(),
            });
        }
        let what = draft.kind.what();
        let untimed = (!draft.kind.spec().keeps_event_time()).then_some(what);
        self.nodes.push(NodePlan {
            name: name.to_string(),
            kind: draft.kind,
            ports: first..self.ports.len(),
            late_events: draft.late_events,
            depth,
            hold_ms: draft.hold_ms,
            updates: draft.updates,
            changelog: draft.changelog,
        });
        self.done.insert(
            name.to_string(),
            Done::Node {
                id,
                output: vec![Known {
                    from: format!("{what} `{name}`"),
                    schema: draft.output,
                }],
                late: draft.late,
                updates: draft.updates,
                unretractable: draft.unretractable,
                depth,
                changelog: draft.changelog,
                untimed,
            },
        );
        id
    }
}

/// Reports each input of `ports` whose records have no event time.
fn refuse_untimed(b: &mut Builder<'_>, name: &str, what: &str, ports: &[PortDraft]) {
    let untimed = ports
        .iter()
        .flat_map(|p| &p.inputs)
        .filter_map(|i| i.untimed.as_deref());
    for why in untimed {
        b.err(
            KeyPath::new(["transforms", name]),
            format!("{what} works in event time, but it reads {why}"),
        );
    }
}

/// Reports each input of `ports` that is an updating result with event time (a changelog
/// source): an event-time operator takes appends only, as Flink's window and interval join do.
fn refuse_changelog(b: &mut Builder<'_>, name: &str, what: &str, ports: &[PortDraft]) {
    let updating = ports
        .iter()
        .filter(|p| !p.changes)
        .flat_map(|p| &p.inputs)
        .filter(|i| i.untimed.is_none())
        .filter_map(|i| i.changelog.as_deref());
    for from in updating {
        b.err(
            KeyPath::new(["transforms", name]),
            format!("{what} takes appends only, but `{from}` is a changelog (rows updated and deleted), as Flink's {what} does not consume update changes: aggregate it with a group aggregate, join it with a regular join or rank it with a rank"),
        );
    }
}

/// Checks every path against what the inputs are known to hold; reports each miss at `key`.
pub(crate) fn check_fields(b: &mut Builder<'_>, key: &KeyPath, inputs: &[Input], path: &FieldPath) {
    for input in inputs {
        for why in super::schema::check_all(&input.known, path) {
            b.err(key.clone(), why);
        }
    }
}

/// Parses a field path as written in `group_by`, `on`, `key` or an aggregate; reports a bad one.
pub(crate) fn field_path(b: &mut Builder<'_>, key: &KeyPath, text: &str) -> Option<FieldPath> {
    if text.is_empty() {
        b.err(key.clone(), "a field name cannot be empty".into());
        return None;
    }
    match FieldPath::parse(text) {
        Ok(p)
            if p.segments()
                .iter()
                .any(|s| matches!(s, crate::expr::Segment::Index(_))) =>
        {
            b.err(
                key.clone(),
                format!("`{text}`: array indexes are not supported here (keys and aggregate inputs step into objects only); a select can take the element out first, e.g. {{ sku = \"{text}\" }}"),
            );
            None
        }
        Ok(p) => Some(p),
        Err(e) => {
            b.err(
                key.clone(),
                format!("`{text}` is not a field path (a name, `a.b` for a nested field, `items[0]` for an array element): {e}"),
            );
            None
        }
    }
}

/// Refuses an updating input where the consumer cannot take retractions.
pub(crate) fn refuse_updates(b: &mut Builder<'_>, key: &KeyPath, inputs: &[Input], what: &str) {
    if inputs.iter().any(|i| i.updates) {
        b.err(
            key.clone(),
            format!("{what} needs an append-only input, but this one carries updates (a window with allowed_lateness re-fires its results, each as a retraction and a new value); set allowed_lateness = \"0s\" on that window, or put {what} before it"),
        );
    }
}

/// Refuses, at `key`, inputs whose updates cannot be taken back (a re-firing session window) to
/// `what` (`this rank`), which takes updates back row by row.
pub(crate) fn refuse_unretractable(
    b: &mut Builder<'_>,
    key: KeyPath,
    inputs: &[Input],
    what: &str,
) {
    if inputs.iter().any(|i| i.unretractable) {
        b.err(key, format!("{what} reads a session window that re-fires (allowed_lateness > 0): a late event that merges sessions replaces their results under a new window_start, which cannot be taken back; set allowed_lateness = \"0s\" on the session window"));
    }
}

/// Joins and dedupe keep rows, not accumulators: there is nothing to combine in a phase one.
pub(crate) fn refuse_hot_keys(
    b: &mut Builder<'_>,
    name: &str,
    what: &str,
    h: &Option<toml::Value>,
) {
    if h.is_some() {
        b.err(
            KeyPath::new(["transforms", name, "hot_keys"]),
            format!("{what} cannot be salted: it must see every row of a key in one place and in event-time order (rows are matched or dropped one by one, not summed), so rows cannot be combined into partial results on other shards; hot_keys applies to tumbling, sliding and cumulative windows"),
        );
    }
}

impl Builder<'_> {
    /// One named input of a join (`left`, `table`, ...), refusing updates.
    pub(crate) fn side(
        &mut self,
        g: &Graph<'_>,
        name: &str,
        k: &str,
        input: &str,
        what: &str,
    ) -> Vec<Input> {
        let key = KeyPath::new(["transforms", name, k]);
        let inputs: Vec<Input> = g.input(self, key.clone(), input).into_iter().collect();
        refuse_updates(self, &key, &inputs, what);
        inputs
    }

    /// Key fields `fields` (at `key`), checked against every input.
    pub(crate) fn key_fields(
        &mut self,
        key: &KeyPath,
        fields: &[String],
        inputs: &[&[Input]],
    ) -> Vec<FieldPath> {
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            let k = key.clone().index(i);
            if fields[..i].contains(f) {
                self.err(k, format!("`{f}` is listed twice"));
                continue;
            }
            if let Some(p) = field_path(self, &k, f) {
                for side in inputs {
                    check_fields(self, &k, side, &p);
                }
                out.push(p);
            }
        }
        out
    }
}
