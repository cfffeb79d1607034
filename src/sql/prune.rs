//! Which of the compiled parts a job runs, and which it runs once for several readers. Two
//! transforms that read the same streams and do the same (Nexmark q5's two identical HOP
//! windows over bids) become one, read by both readers, as Flink's planner reuses a common sub-plan
//! (`table.optimizer.reuse-sub-plan-enabled`, on by default).
//!
//! The parts run: the sources and transforms some `INSERT` reaches,
//! walking back from the sinks' inputs through each transform's inputs (`inputs`, `left`,
//! `right`, `input`, `table`) and the transforms whose late side output is read. A table or view
//! that no `INSERT` reads is not read, as Flink plans only what its statements reach; Nexmark's
//! shared DDL declares three tables, and a query over bids alone must not read the other two.

use std::collections::{BTreeMap, BTreeSet};

/// The keys of a transform naming the streams it reads.
const INPUT_KEYS: [&str; 5] = ["inputs", "left", "right", "input", "table"];

/// Drops each transform equal to an earlier one once the streams it reads are renamed as the
/// earlier drops were, pointing its readers (later transforms and `sinks`) at the earlier one.
/// Transforms come after the streams they read, so one pass sees every rename first.
pub(super) fn share(
    transforms: Vec<String>,
    sinks: &mut BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let mut renamed: BTreeMap<String, String> = BTreeMap::new();
    let mut seen: Vec<(toml::Table, String)> = Vec::new();
    let mut out = Vec::with_capacity(transforms.len());
    for text in transforms {
        let Some((name, mut body)) = body_of(&text) else {
            out.push(text);
            continue;
        };
        let changed = rename_inputs(&mut body, &renamed);
        if let Some((_, first)) = seen.iter().find(|(b, _)| *b == body) {
            renamed.insert(name, first.clone());
            continue;
        }
        out.push(match changed {
            true => renamed_text(&text, &renamed),
            false => text,
        });
        seen.push((body, name));
    }
    for inputs in sinks.values_mut() {
        for i in inputs {
            if let Some(to) = renamed.get(i) {
                *i = to.clone();
            }
        }
    }
    out
}

/// `text` with the streams it reads renamed: each input key is on a line of its own (the
/// compiler writes them so), rewritten alone, so the other lines (a select's fields in their
/// order) stay as written.
fn renamed_text(text: &str, renamed: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let key = line.split(" = ").next().unwrap_or("");
        let parsed = INPUT_KEYS
            .contains(&key)
            .then(|| line.parse::<toml::Table>().ok())
            .flatten()
            .and_then(|mut t| rename_inputs(&mut t, renamed).then_some(t));
        match parsed {
            Some(t) => {
                let value = match t.get(key) {
                    Some(toml::Value::Array(a)) => format!(
                        "[{}]",
                        a.iter()
                            .filter_map(toml::Value::as_str)
                            .map(super::expr::quote)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    Some(v) => super::expr::quote(v.as_str().unwrap_or("")),
                    None => String::new(),
                };
                out.push_str(&format!("{key} = {value}\n"));
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Renames the streams `body` reads; whether any was.
fn rename_inputs(body: &mut toml::Table, renamed: &BTreeMap<String, String>) -> bool {
    let mut changed = false;
    let mut rename = |v: &mut toml::Value| {
        if let Some(to) = v.as_str().and_then(|s| renamed.get(s)) {
            *v = toml::Value::String(to.clone());
            changed = true;
        }
    };
    for key in INPUT_KEYS {
        match body.get_mut(key) {
            Some(toml::Value::Array(a)) => a.iter_mut().for_each(&mut rename),
            Some(v) => rename(v),
            None => {}
        }
    }
    changed
}

/// A transform text's name and body (`None`: not one table under `[transforms]`).
fn body_of(text: &str) -> Option<(String, toml::Table)> {
    let doc = text.parse::<toml::Table>().ok()?;
    let transforms = doc.get("transforms")?.as_table()?;
    let (name, body) = transforms.iter().next()?;
    Some((name.clone(), body.as_table()?.clone()))
}

/// The name of each transform text (`[transforms."name"]` ...), in order.
pub(super) fn part_names(transforms: &[String]) -> Vec<String> {
    transforms.iter().map(|t| parse(t).0).collect()
}

/// The names of the sources and transforms that the `sink_inputs` read, directly or not.
pub(super) fn used_parts<'a>(
    transforms: &[String],
    sink_inputs: impl Iterator<Item = &'a String>,
) -> BTreeSet<String> {
    let mut reads: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut late_of: BTreeMap<String, String> = BTreeMap::new();
    for t in transforms {
        let (name, inputs, late) = parse(t);
        if let Some(late) = late {
            late_of.insert(late, name.clone());
        }
        reads.insert(name, inputs);
    }
    let mut used = BTreeSet::new();
    let mut todo: Vec<String> = sink_inputs.cloned().collect();
    while let Some(name) = todo.pop() {
        if !used.insert(name.clone()) {
            continue;
        }
        if let Some(producer) = late_of.get(&name) {
            todo.push(producer.clone());
        }
        todo.extend(reads.get(&name).into_iter().flatten().cloned());
    }
    used
}

/// A transform text's name, the streams it reads and its late side output. The compiler wrote
/// the text, so it parses; were it not to, the part keeps its place under an empty name and the
/// TOML's own validation reports it.
fn parse(text: &str) -> (String, Vec<String>, Option<String>) {
    let Some((name, body)) = body_of(text) else {
        return (String::new(), Vec::new(), None);
    };
    let mut inputs = Vec::new();
    for key in INPUT_KEYS {
        match body.get(key) {
            Some(toml::Value::String(s)) => inputs.push(s.clone()),
            Some(toml::Value::Array(a)) => {
                inputs.extend(a.iter().filter_map(|v| v.as_str().map(str::to_string)));
            }
            _ => {}
        }
    }
    let late = body
        .get("late_events")
        .and_then(toml::Value::as_str)
        .map(str::to_string);
    (name, inputs, late)
}
