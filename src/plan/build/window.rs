//! Validation of window transforms: inputs, group-by fields, window shape and aggregates.

use std::collections::BTreeSet;

use super::stage::Stage;
use super::{Builder, Stream, Streams, AGG_FUNCTIONS, GENERATOR_FIELDS, WINDOW_FIELDS};
use crate::config::{
    self, suggest, Config, HotKeyMode, KeyPath, SourceConfig, WindowConfig, WindowTransformConfig,
};
use crate::event::MAX_VALUE_SLOTS;
use crate::plan::{
    AggFunc, AggPlan, HotKeyPlanMode, HotKeysPlan, InputPath, SourceId, WindowKind, WindowPlan,
};

impl Builder<'_> {
    pub(super) fn window(
        &mut self,
        name: &str,
        w: &WindowTransformConfig,
        config: &Config,
        streams: &Streams<'_>,
        cyclic: &BTreeSet<usize>,
        stages: &[Stage],
    ) -> WindowPlan {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let sources: Vec<&str> = config.sources.keys().map(String::as_str).collect();
        let mut inputs: Vec<SourceId> = Vec::new();
        let mut via: Vec<InputPath> = Vec::new();
        // Fields the records reaching this window have, where known (a select's outputs).
        let mut known_fields: Vec<(String, Vec<String>)> = Vec::new();
        if w.inputs.is_empty() {
            self.err(
                at("inputs"),
                "a window needs at least one input source".into(),
            );
        }
        for (i, input) in w.inputs.iter().enumerate() {
            let key = at("inputs").index(i);
            match streams.get(input) {
                Some(Stream::Source(id)) if inputs.contains(&id) => {
                    self.err(key, format!("`{input}` is listed twice"))
                }
                Some(Stream::Source(id)) => inputs.push(id),
                Some(Stream::Stage(sid)) if !stages[sid].results.is_empty() => self.err(
                    key,
                    format!("`{input}` filters or reshapes window results; windows over window results are not supported"),
                ),
                Some(Stream::Stage(sid)) => {
                    via.extend(stages[sid].paths.iter().cloned());
                    if let Some(f) = &stages[sid].fields {
                        known_fields.push((input.clone(), f.clone()));
                    }
                }
                Some(Stream::Window(op) | Stream::Late(op)) => {
                    let self_op = super::windows_of(config).position(|(n, _)| n == name);
                    if !(cyclic.contains(&op) && self_op.is_some_and(|s| cyclic.contains(&s))) {
                        let what = if matches!(streams.get(input), Some(Stream::Late(_))) {
                            "the late side output of a transform"
                        } else {
                            "the output of a transform"
                        };
                        self.err(key, format!("`{input}` is {what}; windows over a transform's output are not supported by the runtime yet: a window's inputs must be sources ({})", sources.join(", ")));
                    }
                }
                Some(Stream::Sink) => self.err(
                    key,
                    format!(
                        "`{input}` is a sink, not a stream; a window's inputs must be sources ({})",
                        sources.join(", ")
                    ),
                ),
                None => {
                    let hint = streams.hint(input, |s| matches!(s, Stream::Source(_)));
                    self.err(
                        key,
                        format!("unknown input `{input}`: no source has this name{hint}"),
                    );
                }
            }
        }
        let window = self.window_kind(name, &w.window);
        let from_generator: Option<&str> = inputs.iter().find_map(|&id| {
            let (src_name, s) = config.sources.iter().nth(id)?;
            matches!(s, SourceConfig::Generator(_)).then_some(src_name.as_str())
        });
        let generator_check = |b: &mut Self, field: &str, key: KeyPath| {
            if let Some(g) = from_generator {
                if !GENERATOR_FIELDS.contains(&field) {
                    let hint = suggest::hint(field, GENERATOR_FIELDS);
                    b.err(key.clone(), format!("field `{field}` is not in the events of generator source `{g}`, which carry {}{hint}", GENERATOR_FIELDS.join(", ")));
                }
            }
            for (sel, fields) in &known_fields {
                if !fields.iter().any(|f| f == field) {
                    let hint = suggest::hint(field, fields.iter().map(String::as_str));
                    b.err(
                        key.clone(),
                        format!(
                            "field `{field}` is not among the fields of select `{sel}` ({}){hint}",
                            fields.join(", ")
                        ),
                    );
                }
            }
        };
        for (i, field) in w.group_by.iter().enumerate() {
            let key = at("group_by").index(i);
            if w.group_by[..i].contains(field) {
                self.err(key, format!("`{field}` is listed twice"));
            } else if WINDOW_FIELDS.contains(&field.as_str()) {
                self.err(key, format!("`{field}` is a field every window result has; it cannot be a group-by field"));
            } else if field.is_empty() {
                self.err(key, "a field name cannot be empty".into());
            } else {
                generator_check(self, field, key);
            }
        }
        let mut aggregates = Vec::new();
        if w.aggregates.0.is_empty() {
            self.err(
                at("aggregates"),
                "a window needs at least one aggregate, e.g. { clicks = \"count()\" }".into(),
            );
        }
        for (agg_name, expr) in &w.aggregates.0 {
            let key = at("aggregates").key(agg_name);
            if WINDOW_FIELDS.contains(&agg_name.as_str()) || w.group_by.contains(agg_name) {
                self.err(key.clone(), format!("aggregate name `{agg_name}` collides with an output field of the same name ({} and the group_by fields)", WINDOW_FIELDS.join(", ")));
            }
            match parse_aggregate(expr) {
                Ok((func, field)) => {
                    if let Some(f) = &field {
                        generator_check(self, f, key);
                    }
                    aggregates.push(AggPlan {
                        name: agg_name.clone(),
                        func,
                        field,
                    });
                }
                Err(message) => self.err(key, message),
            }
        }
        let plan = WindowPlan {
            name: name.to_string(),
            inputs,
            via,
            group_by: w.group_by.clone(),
            window,
            allowed_lateness_ms: w.allowed_lateness.as_millis(),
            late_events: w.late_events.clone(),
            aggregates,
            hot_keys: self.hot_keys(name, w, &window),
        };
        let fields = plan.value_fields();
        if fields.len() > MAX_VALUE_SLOTS {
            let list = fields
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ");
            self.err(at("aggregates"), format!("the aggregates read {} distinct fields ({list}); a window may read at most {MAX_VALUE_SLOTS}", fields.len()));
        }
        plan
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
        if matches!(window, WindowKind::Session { .. }) && h.mode != HotKeyMode::Off {
            self.err(key("mode"), "session windows cannot be salted: a key's sessions merge in event order (a gap in one shard's events may be filled by another's), so partial aggregates cannot be combined before the whole key is seen; use a tumbling, sliding or cumulative window, or mode = \"off\"".into());
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

/// Parses `func(field)` / `count()`; the error says what is wrong and what would be right.
pub fn parse_aggregate(expr: &str) -> Result<(AggFunc, Option<String>), String> {
    let form = "expected `function(field)` such as `sum(bid)`, or `count()`";
    let text = expr.trim();
    let (func, rest) = text
        .split_once('(')
        .ok_or_else(|| format!("`{expr}` is not an aggregate: {form}"))?;
    let arg = rest
        .strip_suffix(')')
        .ok_or_else(|| format!("`{expr}` is not an aggregate: {form}"))?
        .trim();
    let func = func.trim();
    let known = "count(), sum(field), min(field), max(field), avg(field), count_distinct(field)";
    let f = match func {
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        "avg" => AggFunc::Avg,
        "count_distinct" => AggFunc::CountDistinct,
        _ => {
            let hint = suggest::hint(func, AGG_FUNCTIONS);
            return Err(format!(
                "unknown aggregate function `{func}` in `{expr}`; known functions: {known}{hint}"
            ));
        }
    };
    if arg.contains(',') {
        return Err(format!(
            "`{func}` takes {} in `{expr}`",
            if f == AggFunc::Count {
                "no field"
            } else {
                "exactly one field"
            }
        ));
    }
    if arg.contains(|c: char| c == '(' || c == ')' || c.is_whitespace()) {
        return Err(format!("`{arg}` in `{expr}` is not a field name"));
    }
    match (f, arg.is_empty()) {
        (AggFunc::Count, true) => Ok((f, None)),
        (AggFunc::Count, false) => Err(format!(
            "`count` takes no field (it counts events): write `count()`, not `{expr}`"
        )),
        (_, true) => Err(format!("`{func}` needs a field: write `{func}(field)`")),
        (_, false) => Ok((f, Some(arg.to_string()))),
    }
}
