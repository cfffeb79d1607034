//! The order transforms are validated in: every transform after the transforms it reads, ties by
//! name, so ids are deterministic. A cycle is reported once, at its first member by name, with its
//! path; its members and everything downstream of them are left out (their consumers get no
//! further complaint). Iterative throughout: no recursion depth or index arithmetic a config can
//! push out of range.

use std::collections::{BTreeMap, BTreeSet};

use super::graph::{Names, Stream};
use super::Builder;
use crate::config::{Config, KeyPath};

/// Per transform: (input key, its index, the transform it reads) for each input naming a
/// transform's output or its late side output.
type Reads<'a> = BTreeMap<&'a str, Vec<Step<'a>>>;
/// One input of a transform: (key, index, transform read).
type Step<'a> = (&'static str, Option<usize>, &'a str);

/// Key of input `(field, index)` of transform `name`.
pub(super) fn input_key(name: &str, field: &str, index: Option<usize>) -> KeyPath {
    let k = KeyPath::new(["transforms", name, field]);
    match index {
        Some(i) => k.index(i),
        None => k,
    }
}

impl Builder<'_> {
    /// Transforms in dependency order, without those on or behind a cycle.
    pub(super) fn order(&mut self, config: &Config, names: &Names<'_>) -> Vec<String> {
        // reads[t] = (field, index, transform read) for each input naming a transform's output or
        // its late side output.
        let reads: Reads<'_> = config
            .transforms
            .iter()
            .map(|(name, t)| {
                let ups = t
                    .input_names()
                    .into_iter()
                    .filter_map(|(f, i, input)| match names.get(input) {
                        Some(Stream::Transform(u) | Stream::LateOf(u)) => Some((f, i, u)),
                        _ => None,
                    })
                    .collect();
                (name.as_str(), ups)
            })
            .collect();
        let cyclic = self.report_cycles(&reads);
        // Kahn's algorithm, smallest name first among the ready ones.
        let mut waiting: BTreeMap<&str, usize> = BTreeMap::new();
        let mut readers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (&t, ups) in &reads {
            let distinct: BTreeSet<&str> = ups.iter().map(|&(_, _, u)| u).collect();
            waiting.insert(t, distinct.len());
            for u in distinct {
                readers.entry(u).or_default().push(t);
            }
        }
        let mut ready: BTreeSet<&str> = waiting
            .iter()
            .filter(|(t, &n)| n == 0 && !cyclic.contains(*t))
            .map(|(t, _)| *t)
            .collect();
        let mut order = Vec::new();
        while let Some(t) = ready.pop_first() {
            order.push(t.to_string());
            for &r in readers.get(t).map_or(&[][..], Vec::as_slice) {
                if let Some(n) = waiting.get_mut(r) {
                    *n -= 1;
                    if *n == 0 && !cyclic.contains(r) {
                        ready.insert(r);
                    }
                }
            }
        }
        order
    }

    /// Reports each cycle once and returns every transform on one.
    fn report_cycles<'a>(&mut self, reads: &Reads<'a>) -> BTreeSet<&'a str> {
        let mut cyclic: BTreeSet<&str> = BTreeSet::new();
        for &start in reads.keys() {
            if cyclic.contains(start) {
                continue;
            }
            let Some(path) = shortest_cycle(reads, start) else {
                continue;
            };
            // Every transform that both reaches `start` and is reached from it is on a cycle
            // with it: one report covers them.
            let from = reachable(reads, start);
            for &t in &from {
                if reachable(reads, t).contains(start) {
                    cyclic.insert(t);
                }
            }
            cyclic.insert(start);
            let shown: Vec<&str> = path.iter().map(|&(_, _, t)| t).collect();
            let (f, i, _) = path[0];
            self.err(
                input_key(start, f, i),
                format!(
                    "transforms form a cycle: {start} -> {} (each reads the next); a pipeline must be acyclic",
                    shown.join(" -> ")
                ),
            );
        }
        cyclic
    }
}

/// Transforms reachable from `from` by following reads (one step or more).
fn reachable<'a>(reads: &Reads<'a>, from: &'a str) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<&str> = reads
        .get(from)
        .map_or(Vec::new(), |v| v.iter().map(|&(_, _, u)| u).collect());
    while let Some(t) = stack.pop() {
        if seen.insert(t) {
            if let Some(v) = reads.get(t) {
                stack.extend(v.iter().map(|&(_, _, u)| u));
            }
        }
    }
    seen
}

/// A shortest path of reads from `start` back to `start`: the (field, index, transform) steps,
/// the last one being `start`.
fn shortest_cycle<'a>(reads: &Reads<'a>, start: &'a str) -> Option<Vec<Step<'a>>> {
    // Breadth first; `parent[t]` is the step that first reached `t`.
    let mut parent: BTreeMap<&str, (&str, &'static str, Option<usize>)> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut end = None;
    'search: while let Some(t) = queue.pop_front() {
        for &(f, i, u) in reads.get(t).map_or(&[][..], Vec::as_slice) {
            if u == start {
                end = Some((t, f, i));
                break 'search;
            }
            if !parent.contains_key(u) {
                parent.insert(u, (t, f, i));
                queue.push_back(u);
            }
        }
    }
    let (mut at, f, i) = end?;
    let mut path = vec![(f, i, start)];
    // Each step back is to a transform found strictly earlier, so this ends at `start`.
    while at != start {
        let &(p, pf, pi) = parent.get(at)?;
        path.push((pf, pi, at));
        at = p;
    }
    path.reverse();
    Some(path)
}
