//! Which of the compiled parts a job runs: the sources and transforms some `INSERT` reaches,
//! walking back from the sinks' inputs through each transform's inputs (`inputs`, `left`,
//! `right`, `input`, `table`) and the transforms whose late side output is read. A table or view
//! that no `INSERT` reads is not read, as Flink plans only what its statements reach; Nexmark's
//! shared DDL declares three tables, and a query over bids alone must not read the other two.

use std::collections::{BTreeMap, BTreeSet};

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
    let Ok(doc) = text.parse::<toml::Table>() else {
        return (String::new(), Vec::new(), None);
    };
    let Some((name, body)) = doc
        .get("transforms")
        .and_then(toml::Value::as_table)
        .and_then(|t| t.iter().next())
    else {
        return (String::new(), Vec::new(), None);
    };
    let mut inputs = Vec::new();
    for key in ["inputs", "left", "right", "input", "table"] {
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
    (name.clone(), inputs, late)
}
