//! Validation of filters and selects: their inputs (sources, or other filters and selects, with no
//! cycle), their expressions (compiled here, so a mistake is reported with a caret at its column
//! before anything runs), the fields they read where those are known, and every path by which a
//! stage's records come from a source.

use super::{stages_of, Builder, Stream, Streams, GENERATOR_FIELDS};
use crate::config::{suggest, Config, KeyPath, SourceConfig, TransformConfig};
use crate::expr::{self, Segment};
use crate::plan::{InputPath, StageKind, StagePlan};

/// A validated stage, with what its consumers need to know.
pub(in crate::plan) struct Stage {
    pub plan: StagePlan,
    /// Every (source, chain) by which records reach this stage's output; chains end with it.
    pub paths: Vec<InputPath>,
    /// Every (window, chain) by which window results reach it; chains end with it.
    pub results: Vec<(usize, Vec<usize>)>,
    /// The fields its output records have, when known: a select's, or those of what a filter reads.
    pub fields: Option<Vec<String>>,
}

/// Fields known to be in the records a stage reads, and who says so (for messages).
struct Known {
    from: String,
    fields: Vec<String>,
}

impl Builder<'_> {
    pub(super) fn stages(&mut self, config: &Config, streams: &Streams<'_>) -> Vec<Stage> {
        let list: Vec<(&String, &TransformConfig)> = stages_of(config).collect();
        let mut done: Vec<Option<Stage>> = (0..list.len()).map(|_| None).collect();
        for id in 0..list.len() {
            self.resolve(id, &list, config, streams, &mut done, &mut Vec::new());
        }
        done.into_iter()
            .enumerate()
            .map(|(id, s)| {
                s.unwrap_or_else(|| Stage {
                    plan: StagePlan {
                        name: list[id].0.clone(),
                        kind: StageKind::Filter {
                            condition: "false".into(),
                        },
                    },
                    paths: Vec::new(),
                    results: Vec::new(),
                    fields: None,
                })
            })
            .collect()
    }

    /// Validates stage `id` after the stages it reads (depth first; `visiting` is the path here,
    /// so a stage met again on it closes a cycle).
    fn resolve(
        &mut self,
        id: usize,
        list: &[(&String, &TransformConfig)],
        config: &Config,
        streams: &Streams<'_>,
        done: &mut Vec<Option<Stage>>,
        visiting: &mut Vec<usize>,
    ) {
        if done[id].is_some() || visiting.contains(&id) {
            return;
        }
        let (name, t) = list[id];
        let at = |k: &str| KeyPath::new(["transforms", name.as_str(), k]);
        let kind = match t {
            TransformConfig::Filter(_) => "filter",
            _ => "select",
        };
        visiting.push(id);
        let mut paths = Vec::new();
        let mut results: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut known: Vec<Known> = Vec::new();
        if t.inputs().is_empty() {
            self.err(at("inputs"), format!("a {kind} needs at least one input"));
        }
        for (i, input) in t.inputs().iter().enumerate() {
            let key = at("inputs").index(i);
            match streams.get(input) {
                Some(Stream::Source(s)) => {
                    paths.push(InputPath {
                        source: s,
                        chain: vec![id],
                    });
                    if let Some((_, SourceConfig::Generator(_))) = config.sources.iter().nth(s) {
                        known.push(Known {
                            from: format!("generator source `{input}`"),
                            fields: GENERATOR_FIELDS.iter().map(|f| f.to_string()).collect(),
                        });
                    }
                }
                Some(Stream::Stage(other)) if visiting.contains(&other) => {
                    let cycle: Vec<&str> = visiting[visiting.iter().position(|&v| v == other).unwrap_or(0)..]
                        .iter()
                        .map(|&v| list[v].0.as_str())
                        .chain([list[other].0.as_str()])
                        .collect();
                    self.err(
                        key,
                        format!(
                            "transforms form a cycle: {} (each reads the next); a pipeline must be acyclic",
                            cycle.join(" <- ")
                        ),
                    );
                }
                Some(Stream::Stage(other)) => {
                    self.resolve(other, list, config, streams, done, visiting);
                    if let Some(up) = &done[other] {
                        paths.extend(up.paths.iter().map(|p| {
                            let mut chain = p.chain.clone();
                            chain.push(id);
                            InputPath {
                                source: p.source,
                                chain,
                            }
                        }));
                        results.extend(up.results.iter().map(|(op, c)| {
                            let mut chain = c.clone();
                            chain.push(id);
                            (*op, chain)
                        }));
                        if let Some(f) = &up.fields {
                            known.push(Known {
                                from: format!("`{input}`"),
                                fields: f.clone(),
                            });
                        }
                    }
                }
                Some(Stream::Window(op)) => {
                    results.push((op, vec![id]));
                    if let Some((_, w)) = super::windows_of(config).nth(op) {
                        let fields = w
                            .group_by
                            .iter()
                            .cloned()
                            .chain(super::WINDOW_FIELDS.iter().map(|f| f.to_string()))
                            .chain(w.aggregates.0.iter().map(|(n, _)| n.clone()))
                            .collect();
                        known.push(Known {
                            from: format!("window `{input}`"),
                            fields,
                        });
                    }
                }
                Some(Stream::Late(_)) => self.err(
                    key,
                    format!("`{input}` is a late side output; a {kind} reads sources, window results or other filters and selects (late events through filters is not supported yet)"),
                ),
                Some(Stream::Sink) => {
                    self.err(key, format!("`{input}` is a sink, not a stream"))
                }
                None => {
                    let hint = streams.hint(input, |s| matches!(s, Stream::Source(_) | Stream::Stage(_)));
                    self.err(key, format!("unknown input `{input}`: no source, filter or select has this name{hint}"));
                }
            }
        }
        let (plan_kind, fields) = match t {
            TransformConfig::Filter(f) => {
                self.expression(&f.condition, at("where"), &known);
                let fields = match known.as_slice() {
                    [k] if t.inputs().len() == 1 => Some(k.fields.clone()),
                    _ => None,
                };
                (
                    StageKind::Filter {
                        condition: f.condition.clone(),
                    },
                    fields,
                )
            }
            TransformConfig::Select(s) => {
                if s.fields.0.is_empty() {
                    self.err(
                        at("fields"),
                        "a select needs at least one field, e.g. { total = \"amount * rate\" }"
                            .into(),
                    );
                }
                for (out, text) in &s.fields.0 {
                    self.expression(text, at("fields").key(out), &known);
                }
                (
                    StageKind::Select {
                        fields: s.fields.0.clone(),
                    },
                    Some(s.fields.0.iter().map(|(n, _)| n.clone()).collect()),
                )
            }
            TransformConfig::Window(_)
            | TransformConfig::TemporalJoin(_)
            | TransformConfig::IntervalJoin(_)
            | TransformConfig::Dedupe(_) => {
                unreachable!("stages_of yields only filters and selects")
            }
        };
        visiting.pop();
        done[id] = Some(Stage {
            plan: StagePlan {
                name: name.clone(),
                kind: plan_kind,
            },
            paths,
            results,
            fields,
        });
    }

    /// Compiles one expression; reports its error, or a field the records it reads cannot have.
    fn expression(&mut self, text: &str, key: KeyPath, known: &[Known]) {
        let program = match expr::compile(text) {
            Ok(p) => p,
            Err(e) => return self.err(key, format!("invalid expression: {e}")),
        };
        for path in program.fields() {
            let Some(Segment::Key(first)) = path.segments().first() else {
                continue;
            };
            for k in known {
                if !k.fields.iter().any(|f| f == first) {
                    let hint = suggest::hint(first, k.fields.iter().map(String::as_str));
                    self.err(
                        key.clone(),
                        format!(
                            "`{text}` reads field `{first}`, which records of {} do not have ({}){hint}",
                            k.from,
                            k.fields.join(", ")
                        ),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "stage_tests.rs"]
mod tests;
