//! Which of the compiled parts a job runs, and which it runs once for several readers. Two
//! transforms that read the same streams and do the same (Nexmark q5's two identical HOP
//! windows over bids) become one, read by both readers, as Flink's planner reuses a common sub-plan
//! (`table.optimizer.reuse-sub-plan-enabled`, on by default).
//!
//! The parts run: the sources and transforms some `INSERT` reaches, walking back from the sinks'
//! inputs through each transform's inputs (`inputs`, `left`, `right`, `input`, `table`) and the
//! transforms whose late side output is read. A table or view that no `INSERT` reads is not
//! read, as Flink plans only what its statements reach; Nexmark's shared DDL declares three
//! tables, and a query over bids alone must not read the other two.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::TransformConfig;

/// A compiled transform: its name, its table, and where its statement starts.
type Part = (String, TransformConfig, (u64, u64));

/// Drops each transform equal to an earlier one once the streams it reads are renamed as the
/// earlier drops were, pointing its readers (later transforms and `sinks`) at the earlier one.
/// Transforms come after the streams they read, so one pass sees every rename first.
pub(super) fn share(transforms: Vec<Part>, sinks: &mut BTreeMap<String, Vec<String>>) -> Vec<Part> {
    let mut renamed: BTreeMap<String, String> = BTreeMap::new();
    let mut out: Vec<Part> = Vec::with_capacity(transforms.len());
    for (name, mut t, at) in transforms {
        t.rename_inputs(&|n| renamed.get(n).cloned());
        if let Some((first, _, _)) = out.iter().find(|(_, earlier, _)| *earlier == t) {
            renamed.insert(name, first.clone());
            continue;
        }
        out.push((name, t, at));
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

/// The names of the sources and transforms that the `sink_inputs` read, directly or not.
pub(super) fn used_parts<'a>(
    transforms: &[Part],
    sink_inputs: impl Iterator<Item = &'a String>,
) -> BTreeSet<String> {
    let mut reads: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut late_of: BTreeMap<&str, &str> = BTreeMap::new();
    for (name, t, _) in transforms {
        if let Some(late) = t.late_events() {
            late_of.insert(late, name);
        }
        reads.insert(
            name,
            t.input_names().into_iter().map(|(_, _, n)| n).collect(),
        );
    }
    let mut used = BTreeSet::new();
    let mut todo: Vec<String> = sink_inputs.cloned().collect();
    while let Some(name) = todo.pop() {
        if !used.insert(name.clone()) {
            continue;
        }
        if let Some(producer) = late_of.get(name.as_str()) {
            todo.push(producer.to_string());
        }
        todo.extend(
            reads
                .get(name.as_str())
                .into_iter()
                .flatten()
                .map(|s| s.to_string()),
        );
    }
    used
}
