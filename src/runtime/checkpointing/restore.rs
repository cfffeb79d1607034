//! Opening the checkpoint directory for a run: claim it, find what to resume from (the newest
//! intact checkpoint — newer damaged ones are skipped, each logged with the reason — or a
//! savepoint the user names), check that its state fits this config (same key groups, same input
//! partitions, operators with the same state layout), recover the sinks' outputs to it, and
//! decide which operator restores from which snapshot section.

use super::{CheckpointMetrics, Ckpt, SavepointCtl};
use crate::checkpoint::{self, control, CheckpointStore, Manifest, Snapshot};
use crate::connectors::sink::Committer;
use crate::connectors::source::Partition;
use crate::plan::CheckpointPlan;
use crate::runtime::RuntimeError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// Where a resumed run starts: the checkpoint's chunk and every shard's snapshot.
pub struct Resume {
    pub id: u64,
    pub chunk: u64,
    pub snapshots: Vec<Snapshot>,
    /// Per operator of this config: the snapshot section its state comes from (`None`: a new
    /// operator, starting empty).
    pub sections: Vec<Option<String>>,
}

/// What `open` needs besides the plan's `[checkpoint]`.
pub struct OpenArgs<'a> {
    pub key_groups: u32,
    pub parts: &'a [Partition],
    /// The sinks' shares of the two-phase commit, as a restore needs them: each recovers its
    /// output to the checkpoint resumed from before anything is opened.
    pub committers: Vec<Arc<dyn Committer>>,
    /// Operators of this config in order: (name, state signature).
    pub operators: Vec<(String, String)>,
    pub from_savepoint: Option<&'a Path>,
    pub allow_dropped_state: bool,
    /// Set by SIGUSR1.
    pub savepoint_requested: Arc<AtomicBool>,
}

/// The opened checkpoint state of a run: shared part, where to resume, the writer's job queue.
pub type Opened = (Arc<Ckpt>, Option<Resume>, mpsc::Receiver<super::Job>);

fn err(m: String) -> RuntimeError {
    RuntimeError::Checkpoint(m)
}

/// Opens the store and finds what to resume from; refuses state taken with other key groups, other
/// input partitions or other operators (unless `allow_dropped_state`), naming the difference.
pub fn open(plan: &CheckpointPlan, a: OpenArgs<'_>) -> Result<Opened, RuntimeError> {
    let store = CheckpointStore::open(&plan.dir).map_err(|e| err(e.to_string()))?;
    control::claim(&plan.dir).map_err(|e| err(e.to_string()))?;
    let partitions: Vec<String> = a.parts.iter().map(|p| p.name.clone()).collect();
    let mut base_id = store
        .ids()
        .map_err(|e| err(e.to_string()))?
        .last()
        .copied()
        .unwrap_or(0);
    let found = restore_point(&store, plan, a.from_savepoint)?;
    let mut resume = None;
    let mut newest = None;
    if let Some((mut m, snapshots, folder, what)) = found {
        if m.key_groups != a.key_groups {
            return Err(err(format!(
                "{what} was taken with key_groups = {}; this config has {}, and key groups are \
                 fixed for the life of the state (a restore may change shards, not key_groups)",
                m.key_groups, a.key_groups
            )));
        }
        let theirs: Vec<String> = serde_json::from_value(m.sources["partitions"].clone())
            .map_err(|e| err(format!("{what}: bad partitions: {e}")))?;
        if theirs != partitions {
            return Err(err(format!(
                "{what} was taken over input partitions {theirs:?}; this run reads {partitions:?}"
            )));
        }
        let chunk = m.sources["chunk"]
            .as_u64()
            .ok_or_else(|| err(format!("{what}: no chunk position")))?;
        let sections = match_operators(&m, &snapshots, &a.operators, a.allow_dropped_state)
            .map_err(|why| err(format!("{what}: {why}")))?;
        if a.from_savepoint.is_some() {
            // The restored state becomes this directory's newest checkpoint, so a restart before
            // the first new one comes back here, not to an older lineage's later checkpoints.
            base_id += 1;
            m = store
                .adopt(&m, &folder, base_id)
                .map_err(|e| err(e.to_string()))?;
        }
        tracing::info!(
            checkpoint = m.id,
            chunk,
            "resuming from {what} (chunk {chunk})"
        );
        resume = Some(Resume {
            id: m.id,
            chunk,
            snapshots,
            sections,
        });
        newest = Some(m);
    }
    for c in &a.committers {
        c.recover(newest.as_ref()).map_err(err)?;
    }
    let (tx, rx) = mpsc::channel();
    let ckpt = Ckpt {
        store,
        dir: plan.dir.clone(),
        interval: std::time::Duration::from_millis(plan.interval_ms.max(1) as u64),
        retain: plan.retain,
        tolerable_failures: plan.tolerable_failures,
        key_groups: a.key_groups,
        partitions,
        operators: a.operators.into_iter().collect(),
        base_id,
        completed: AtomicU64::new(base_id),
        settled: AtomicU64::new(base_id),
        issued: Mutex::new((0, Instant::now())),
        committers: std::sync::OnceLock::new(),
        savepoint: SavepointCtl {
            requested: a.savepoint_requested,
            at: AtomicU64::new(0),
            default_dir: plan.savepoint_dir.clone(),
        },
        metrics: Mutex::new(CheckpointMetrics::default()),
        error: Mutex::new(None),
        fail_ids: super::injected_failures(),
        jobs: Mutex::new(Some(tx)),
        buffers: Mutex::new(Default::default()),
    };
    Ok((Arc::new(ckpt), resume, rx))
}

/// A restore point: its manifest, its snapshots, the folder it was read from, and what it is
/// called in messages.
type Found = (Manifest, Vec<Snapshot>, PathBuf, String);

/// What to resume from: the savepoint asked for, or the newest intact checkpoint of the store
/// (each damaged newer one skipped with a warning saying why); `None`: start from the beginning.
fn restore_point(
    store: &CheckpointStore,
    plan: &CheckpointPlan,
    from_savepoint: Option<&Path>,
) -> Result<Option<Found>, RuntimeError> {
    Ok(match from_savepoint {
        Some(sp) => {
            let (m, snapshots) = checkpoint::load_folder(sp)
                .map_err(|why| err(format!("savepoint {}: not usable: {why}", sp.display())))?;
            let what = format!("savepoint {}", sp.display());
            Some((m, snapshots, sp.to_path_buf(), what))
        }
        None => {
            let (newest, skipped) = store.restore_point().map_err(|e| err(e.to_string()))?;
            for s in &skipped {
                tracing::warn!(
                    checkpoint = s.id,
                    dir = %plan.dir.display(),
                    "checkpoint {} skipped: {}",
                    s.id,
                    s.why
                );
            }
            match (&newest, skipped.is_empty()) {
                (Some((m, _)), false) => tracing::warn!(
                    checkpoint = m.id,
                    skipped = skipped.len(),
                    "falling back to checkpoint {}, the newest intact one",
                    m.id
                ),
                (None, false) => tracing::warn!(
                    skipped = skipped.len(),
                    "no intact checkpoint in {}: starting from the beginning",
                    plan.dir.display()
                ),
                _ => {}
            }
            newest.map(|(m, snapshots)| {
                let what = format!("checkpoint {} in {}", m.id, plan.dir.display());
                let folder = store.folder(m.id);
                (m, snapshots, folder, what)
            })
        }
    })
}

/// For every operator of this config, the section of `m` to restore it from. Operators with no
/// state there start empty; state of operators this config no longer has (or defines with another
/// state layout) is refused, naming each, unless `allow_dropped`.
fn match_operators(
    m: &Manifest,
    snapshots: &[Snapshot],
    ours: &[(String, String)],
    allow_dropped: bool,
) -> Result<Vec<Option<String>>, String> {
    // Format-1 manifests carry no signatures: the sections' names are all there is.
    let theirs: BTreeMap<String, Option<String>> = if m.operators.is_empty() {
        let names = snapshots.first().map_or(&[][..], |s| &s.sections[..]);
        names
            .iter()
            .filter_map(|s| s.name.strip_prefix("op/"))
            .map(|n| (n.to_string(), None))
            .collect()
    } else {
        m.operators
            .iter()
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect()
    };
    let mut sections = Vec::with_capacity(ours.len());
    let mut used = Vec::new();
    let mut problems = Vec::new();
    for (name, sig) in ours {
        match theirs.get(name) {
            Some(Some(s)) if s != sig => {
                problems.push(format!(
                    "window `{name}` was saved as {s}; this config defines it as {sig}"
                ));
                sections.push(None);
            }
            Some(_) => {
                sections.push(Some(format!("op/{name}")));
                used.push(name);
            }
            None => sections.push(None),
        }
    }
    for name in theirs.keys().filter(|n| !used.contains(n)) {
        if !ours.iter().any(|(n, _)| n == name) {
            problems.push(format!(
                "it holds state of window `{name}`, which this config does not have"
            ));
        }
    }
    if problems.is_empty() {
        return Ok(sections);
    }
    if allow_dropped {
        for p in &problems {
            tracing::warn!("dropping state (--allow-dropped-state): {p}");
        }
        return Ok(sections);
    }
    Err(format!(
        "{}; restoring would drop that state: change the config back, or pass \
         --allow-dropped-state to start those windows empty",
        problems.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::{Kind, Section};

    fn manifest(ops: &[(&str, &str)]) -> Manifest {
        Manifest {
            format: 2,
            kind: Kind::Savepoint,
            id: 1,
            created_unix_ms: 0,
            key_groups: 8,
            sources: serde_json::json!({}),
            operators: ops
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            files: vec![],
        }
    }

    fn ours(ops: &[(&str, &str)]) -> Vec<(String, String)> {
        ops.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn operators_match_by_name_and_signature_and_new_ones_start_empty() {
        let m = manifest(&[("a", "S1"), ("b", "S2")]);
        let got = match_operators(
            &m,
            &[],
            &ours(&[("b", "S2"), ("new", "S3"), ("a", "S1")]),
            false,
        );
        assert_eq!(
            got.unwrap(),
            vec![Some("op/b".into()), None, Some("op/a".into())]
        );
    }

    #[test]
    fn dropped_or_redefined_state_is_refused_by_name_unless_allowed() {
        let m = manifest(&[("a", "S1"), ("gone", "S2")]);
        let cfg = ours(&[("a", "S1-changed")]);
        let e = match_operators(&m, &[], &cfg, false).unwrap_err();
        assert!(e.contains("window `a` was saved as S1"), "{e}");
        assert!(
            e.contains("window `gone`, which this config does not have"),
            "{e}"
        );
        assert!(e.contains("--allow-dropped-state"), "{e}");
        assert_eq!(match_operators(&m, &[], &cfg, true).unwrap(), vec![None]);
    }

    #[test]
    fn format_1_manifests_match_by_section_names() {
        let m = manifest(&[]);
        let snap = Snapshot {
            shard: 0,
            key_groups: (0, 8),
            sections: vec![
                Section {
                    name: "time".into(),
                    bytes: vec![],
                },
                Section {
                    name: "op/a".into(),
                    bytes: vec![],
                },
            ],
        };
        let got = match_operators(&m, std::slice::from_ref(&snap), &ours(&[("a", "S")]), false);
        assert_eq!(got.unwrap(), vec![Some("op/a".into())]);
        assert!(match_operators(&m, &[snap], &ours(&[("b", "S")]), false).is_err());
    }
}
