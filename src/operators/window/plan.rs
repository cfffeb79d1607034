//! Validation of window transforms: inputs, group-by fields, window shape and aggregates, and the
//! port its events arrive on (keyed on the group-by fields, one value slot per distinct input
//! field of its aggregates).
//!
//! Also the node it validates into, [`WindowPlan`] (with its aggregates and hot-key settings),
//! and the kind's two registry entries (`TransformTable` for its table, [`NodeSpec`] for its
//! node). The aggregates themselves are `agg_plan`'s, shared with the group aggregate.

use crate::config::{
    self, HotKeyMode, HotKeysConfig, KeyPath, WindowConfig, WindowTransformConfig,
};
use crate::expr::FieldPath;
use crate::operators::{
    table_inputs, BuildCtx, Combine, NodeKind, NodeSpec, Operator, TransformTable,
};
use crate::plan::build::graph::{Graph, NodeDraft, PortDraft};
use crate::plan::build::schema::{derived, late_schema, Schema};
use crate::plan::build::Builder;

use super::agg_plan::{assign_slots, describe, signature, unretractable};
pub use super::agg_plan::{parse_aggregate, AggFunc, AggPlan, AGG_FUNCTIONS};

/// Output fields every window result has besides its group-by fields and aggregates.
pub const WINDOW_FIELDS: [&str; 2] = ["window_start", "window_end"];
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    Tumbling { size_ms: i64 },
    Sliding { size_ms: i64, slide_ms: i64 },
    Session { gap_ms: i64 },
    Cumulative { step_ms: i64, max_size_ms: i64 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct WindowPlan {
    /// Key fields as written (`user.country`); each names its output field.
    pub group_by: Vec<FieldPath>,
    pub window: WindowKind,
    pub allowed_lateness_ms: i64,
    pub aggregates: Vec<AggPlan>,
    pub hot_keys: HotKeysPlan,
}

impl WindowPlan {
    /// What this window's state layout depends on: its kind and sizes, its key and its aggregate
    /// functions with their inputs, in order.
    pub fn state_signature(&self) -> String {
        let keys: Vec<&str> = self.group_by.iter().map(FieldPath::as_str).collect();
        format!(
            "{:?} group_by {keys:?} aggregates [{}]",
            self.window,
            signature(&self.aggregates)
        )
    }
}

/// Where a window's phase one runs (see `operators::window::combine`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HotKeysPlan {
    pub mode: HotKeyPlanMode,
    /// Events a shard may hold back in phase one.
    pub max_buffered: usize,
}

impl HotKeysPlan {
    pub const OFF: HotKeysPlan = HotKeysPlan {
        mode: HotKeyPlanMode::Off,
        max_buffered: crate::config::defaults::hot_key_max_buffered(),
    };
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HotKeyPlanMode {
    Off,
    /// Every key is combined where it is read, on shards `0..salt` (every shard when `None`; the
    /// shard count is known only at run time, after `--shards`).
    Salt {
        salt: Option<usize>,
    },
    /// Keys above `threshold` of a shard's recent events are combined (default: by shard count,
    /// `config::defaults::hot_key_threshold`, known only at run time).
    Auto {
        threshold: Option<f64>,
    },
}

impl Builder<'_> {
    pub(crate) fn window(&mut self, name: &str, w: &WindowTransformConfig, g: &mut Graph<'_>) {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if w.inputs.is_empty() {
            self.err(at("inputs"), "a window needs at least one input".into());
        }
        let inputs = g.inputs(self, at("inputs"), &w.inputs);
        let window = self.window_kind(name, &w.window);
        let group_by = self.group_by_fields(name, &w.group_by, &WINDOW_FIELDS, &inputs);
        let aggregates = self.aggregates(name, &w.aggregates, &WINDOW_FIELDS, &w.group_by, &inputs);
        let updating = inputs.iter().any(|i| i.updates);
        if updating {
            self.refuse_over_updates(name, w, &window, &aggregates);
        }
        if inputs.iter().any(|i| i.unretractable) {
            self.err(at("inputs"), "this window reads a session window that re-fires (allowed_lateness > 0): a late event that merges sessions replaces their results under a new window_start, which cannot be taken back; set allowed_lateness = \"0s\" on the session window, or read a tumbling, sliding or cumulative one".into());
        }
        let hot_keys = self.hot_keys(name, w, &window);
        if hot_keys.mode != HotKeyPlanMode::Off && inputs.iter().any(|i| i.depth.is_some()) {
            self.err(
                at("hot_keys"),
                "hot_keys applies to windows that read sources (directly or through filters and selects): phase one runs where records are read, and this window reads another operator's output".into(),
            );
        }
        let (aggregates, values) = assign_slots(aggregates);
        let output = Schema::closed(
            w.group_by
                .iter()
                .map(String::as_str)
                .chain(WINDOW_FIELDS)
                .chain(w.aggregates.0.iter().map(|(n, _)| n.as_str())),
        );
        let late = late_schema(&inputs);
        // A late event goes out as the record it was; only a source's can be read back.
        let row = w.late_events.is_some() && derived(&inputs);
        let plan = WindowPlan {
            group_by: group_by.clone(),
            window,
            allowed_lateness_ms: w.allowed_lateness.as_millis(),
            aggregates,
            hot_keys,
        };
        let session = matches!(plan.window, WindowKind::Session { .. });
        let draft = NodeDraft {
            updates: plan.allowed_lateness_ms > 0,
            unretractable: session && plan.allowed_lateness_ms > 0,
            changelog: false,
            kind: NodeKind::Window(plan),
            late_events: w.late_events.clone(),
            hold_ms: 0,
            output,
            late,
        };
        let port = PortDraft {
            name: "inputs",
            key: group_by,
            values,
            row,
            inputs,
            changes: false,
        };
        g.add_node(self, name, draft, vec![port]);
    }

    /// Over an updating input the window subtracts each retracted result: only aggregates that
    /// can take a value back, and only windows whose panes stay put.
    fn refuse_over_updates(
        &mut self,
        name: &str,
        w: &WindowTransformConfig,
        window: &WindowKind,
        aggregates: &[AggPlan],
    ) {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if matches!(window, WindowKind::Session { .. }) {
            self.err(at("window"), "a session window cannot read updates (its input re-fires results: allowed_lateness on the window it reads): a retraction could split a session; use a tumbling, sliding or cumulative window, or set allowed_lateness = \"0s\" upstream".into());
        }
        for (a, expr) in unretractable(aggregates, &w.aggregates) {
            self.err(
                at("aggregates").key(&a.name),
                format!("`{expr}` cannot take a value back, and this window's input carries updates (a re-firing window upstream sends a retraction of its previous result before each new one); use count, sum or avg here, or set allowed_lateness = \"0s\" on the window it reads"),
            );
        }
    }

    /// Checks `hot_keys`: only pane windows (whose accumulators merge in any grouping) can be
    /// combined in two phases.
    fn hot_keys(
        &mut self,
        name: &str,
        w: &WindowTransformConfig,
        window: &WindowKind,
    ) -> HotKeysPlan {
        let key = |k: &str| KeyPath::new(["transforms", name, "hot_keys", k]);
        let h = &w.hot_keys;
        if matches!(window, WindowKind::Session { .. }) && h.mode != HotKeyMode::Off {
            self.err(key("mode"), "session windows cannot be salted: a key's sessions merge in event order (a gap in one shard's events may be filled by another's), so partial aggregates cannot be combined before the whole key is seen; use a tumbling, sliding or cumulative window, or mode = \"off\"".into());
        }
        self.hot_keys_plan(name, h)
    }

    /// Checks a `hot_keys` table (of a window or a group aggregate) into its plan.
    pub(crate) fn hot_keys_plan(&mut self, name: &str, h: &HotKeysConfig) -> HotKeysPlan {
        let key = |k: &str| KeyPath::new(["transforms", name, "hot_keys", k]);
        if h.mode != HotKeyMode::Salt && h.salt.is_some() {
            self.err(key("salt"), "`salt` applies to mode = \"salt\" only".into());
        }
        if h.salt == Some(0) {
            self.err(
                key("salt"),
                "must be at least 1 (the number of shards that combine a salted key)".into(),
            );
        }
        if let Some(t) = h.threshold.filter(|t| !(*t > 0.0 && *t <= 1.0)) {
            self.err(
                key("threshold"),
                format!("{t} is not a share of events: expected a number in (0, 1], e.g. 0.05"),
            );
        }
        if h.mode != HotKeyMode::Auto && h.threshold.is_some() {
            self.err(
                key("threshold"),
                "`threshold` applies to mode = \"auto\" only".into(),
            );
        }
        if h.max_buffered < 256 {
            self.err(
                key("max_buffered"),
                format!(
                    "{} events is too few to combine anything: expected at least 256",
                    h.max_buffered
                ),
            );
        }
        let mode = match h.mode {
            HotKeyMode::Off => HotKeyPlanMode::Off,
            HotKeyMode::Salt => HotKeyPlanMode::Salt {
                salt: h.salt.map(|s| s as usize),
            },
            HotKeyMode::Auto => HotKeyPlanMode::Auto {
                threshold: h.threshold,
            },
        };
        HotKeysPlan {
            mode,
            max_buffered: h.max_buffered,
        }
    }

    fn window_kind(&mut self, name: &str, w: &WindowConfig) -> WindowKind {
        let key = |k: &str| KeyPath::new(["transforms", name, "window", k]);
        let positive = |b: &mut Self, k: &str, d: config::Duration| {
            if d.as_millis() == 0 {
                b.err(key(k), "must be longer than 0s".into());
            }
            d.as_millis()
        };
        match *w {
            WindowConfig::Tumbling { size } => WindowKind::Tumbling {
                size_ms: positive(self, "size", size),
            },
            WindowConfig::Session { gap } => WindowKind::Session {
                gap_ms: positive(self, "gap", gap),
            },
            WindowConfig::Sliding { size, slide } => {
                let (size_ms, slide_ms) =
                    (positive(self, "size", size), positive(self, "slide", slide));
                if slide_ms > size_ms {
                    self.err(key("slide"), format!("slide {slide} is longer than size {size}: events between windows would be dropped; slide must be <= size"));
                } else if slide_ms > 0 && size_ms % slide_ms != 0 {
                    self.err(key("slide"), format!("size {size} is not a whole multiple of slide {slide}: size % slide must be 0"));
                }
                WindowKind::Sliding { size_ms, slide_ms }
            }
            WindowConfig::Cumulative { step, max_size } => {
                let (step_ms, max_size_ms) = (
                    positive(self, "step", step),
                    positive(self, "max_size", max_size),
                );
                if step_ms > 0 && max_size_ms % step_ms != 0 {
                    self.err(key("max_size"), format!("max_size {max_size} is not a whole multiple of step {step}: max_size % step must be 0"));
                }
                WindowKind::Cumulative {
                    step_ms,
                    max_size_ms,
                }
            }
        }
    }
}

impl TransformTable for WindowTransformConfig {
    table_inputs!();
    fn late_events(&self) -> Option<&str> {
        self.late_events.as_deref()
    }
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.window(name, self, g);
    }
}

impl NodeSpec for WindowPlan {
    fn state_signature(&self) -> String {
        WindowPlan::state_signature(self)
    }
    fn what(&self) -> &'static str {
        "window"
    }
    fn describe(&self) -> String {
        let window = match self.window {
            WindowKind::Tumbling { size_ms } => format!("tumbling {size_ms} ms"),
            WindowKind::Sliding { size_ms, slide_ms } => {
                format!("sliding {size_ms} ms every {slide_ms} ms")
            }
            WindowKind::Session { gap_ms } => format!("session, gap {gap_ms} ms"),
            WindowKind::Cumulative {
                step_ms,
                max_size_ms,
            } => {
                format!("cumulative to {max_size_ms} ms in steps of {step_ms} ms")
            }
        };
        format!(
            "window, {window}, allowed lateness {} ms; {}",
            self.allowed_lateness_ms,
            describe(&self.aggregates)
        )
    }
    fn takes_retractions(&self) -> bool {
        true
    }
    fn build(&self, _ctx: BuildCtx) -> Box<dyn Operator> {
        super::build(self)
    }
    fn combiner(&self) -> Option<(Box<dyn Combine>, HotKeysPlan)> {
        if self.hot_keys.mode == HotKeyPlanMode::Off {
            return None;
        }
        Some((super::combiner(self)?, self.hot_keys))
    }
}
