//! Checkpoint damage: the checkpoint directory of one real run, damaged in 200 seeded ways —
//! snapshot files and manifests truncated, bit-flipped, zero-filled, given another format version
//! (raw, or re-sealed so every checksum agrees) — one to all of its checkpoints at a time. Each
//! damaged checkpoint is reported not usable, naming the damaged file; the selection restore uses
//! picks the newest intact one (or none) and reads back exactly what the run wrote; retention keeps
//! that one and everything newer. Then 8 damaged directories through the binary: the restarted job
//! says what it skipped, resumes from the newest intact checkpoint and ends with exactly the lines
//! of an uninterrupted run.

mod common;

use common::{late_clicks_toml, read_lines, sluice, SplitMix as Rng};
use sluice::checkpoint::{
    CheckpointStore, Manifest, MANIFEST_FILE, MANIFEST_FORMAT, SNAPSHOT_VERSION,
};
use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
const EVENTS: u64 = 600_000;
const RETAIN: usize = 4;
const CASES: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    Truncated,
    BitFlip,
    /// A bit flip that keeps a manifest valid JSON: a digit turned into another.
    DigitFlip,
    /// The same, in the digits of the position a restore resumes at.
    ChunkFlip,
    ZeroFill,
    /// Another format version, the checksums left as they were.
    Version,
    /// Another format version with every checksum (header, file in the manifest, manifest)
    /// recomputed: a whole checkpoint of a format this sluice does not read.
    VersionResealed,
}

const KINDS: [Damage; 5] = [
    Damage::Truncated,
    Damage::BitFlip,
    Damage::ZeroFill,
    Damage::Version,
    Damage::VersionResealed,
];

#[derive(Clone, Copy, Debug)]
enum Target {
    Manifest,
    Shard(u32),
}

impl Target {
    fn file(self) -> String {
        match self {
            Target::Manifest => MANIFEST_FILE.to_string(),
            Target::Shard(n) => format!("shard-{n}.snap"),
        }
    }
}

/// Copies the tree `from` to `to`, its files as hard links when `link` (cheap; `damage` replaces a
/// file rather than writing into it, so the original stays whole).
fn copy_dir(from: &Path, to: &Path, link: bool) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst, link);
        } else if link {
            std::fs::hard_link(e.path(), &dst).unwrap();
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// Replaces the file at `path` with `bytes` (a new file: a hard link to it stays as it was).
fn replace(path: &Path, bytes: &[u8]) {
    std::fs::remove_file(path).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn folder(state: &Path, id: u64) -> PathBuf {
    state.join(format!("chk-{id:020}"))
}

/// A format number this sluice does not read (the readable ones are `readable`).
fn other_version(readable: RangeInclusive<u32>, rng: &mut Rng) -> u32 {
    let hi = *readable.end();
    let unreadable: Vec<u32> = [0, 1, 2, hi + 1, hi + 7, u32::MAX]
        .into_iter()
        .filter(|v| !readable.contains(v))
        .collect();
    unreadable[rng.below(unreadable.len())]
}

/// Snapshot versions and manifest formats this sluice reads.
const SNAPSHOTS: RangeInclusive<u32> = SNAPSHOT_VERSION..=SNAPSHOT_VERSION;
const MANIFESTS: RangeInclusive<u32> = 1..=MANIFEST_FORMAT;

/// Damages `target` of the checkpoint in `folder` by `kind`.
fn damage(folder: &Path, target: Target, kind: Damage, rng: &mut Rng) {
    let path = folder.join(target.file());
    let mut b = std::fs::read(&path).unwrap();
    let len = b.len();
    match kind {
        Damage::Truncated => b.truncate(rng.below(len)),
        Damage::BitFlip => b[rng.below(len)] ^= 1 << rng.below(8),
        Damage::DigitFlip => {
            let digits: Vec<usize> = (0..len).filter(|&i| b[i].is_ascii_digit()).collect();
            b[digits[rng.below(digits.len())]] ^= 1; // '0'<->'1', ..., '8'<->'9'
        }
        Damage::ChunkFlip => {
            // A digit lowered by one bit (3->2, 4->0, ...): an earlier position, still valid JSON
            // (no leading zero).
            let start = b.windows(9).position(|w| w == b"\"chunk\": ").unwrap() + 9;
            let end = (start..len).find(|&i| !b[i].is_ascii_digit()).unwrap();
            let at = (start..end)
                .rev()
                .find(|&i| {
                    let d = b[i] - b'0';
                    d != 0 && (i > start || end - start == 1 || d ^ (1 << d.trailing_zeros()) != 0)
                })
                .unwrap();
            b[at] ^= 1 << (b[at] - b'0').trailing_zeros();
        }
        Damage::ZeroFill => loop {
            let (at, n) = if rng.below(5) == 0 {
                (0, len)
            } else {
                let at = rng.below(len);
                (at, 1 + rng.below(64.min(len - at)))
            };
            if b[at..at + n].iter().any(|&x| x != 0) {
                b[at..at + n].fill(0);
                break;
            }
        },
        Damage::Version => match target {
            Target::Shard(_) => {
                let v = other_version(SNAPSHOTS, rng);
                b[8..12].copy_from_slice(&v.to_le_bytes());
            }
            Target::Manifest => {
                let text = String::from_utf8(b).unwrap();
                let at = text.find("\"format\": ").unwrap() + 10;
                let end = at + text[at..].find(|c: char| !c.is_ascii_digit()).unwrap();
                let v = other_version(MANIFESTS, rng);
                b = format!("{}{v}{}", &text[..at], &text[end..]).into_bytes();
            }
        },
        Damage::VersionResealed => {
            let mut m = Manifest::read(folder).unwrap().unwrap();
            match target {
                Target::Shard(n) => {
                    let v = other_version(SNAPSHOTS, rng);
                    b[8..12].copy_from_slice(&v.to_le_bytes());
                    let crc = crc32fast::hash(&b[..28]);
                    b[28..32].copy_from_slice(&crc.to_le_bytes());
                    let f = m.files.iter_mut().find(|f| f.shard == n).unwrap();
                    (f.size, f.crc32) = (b.len() as u64, crc32fast::hash(&b));
                }
                Target::Manifest => m.format = other_version(MANIFESTS, rng),
            }
            if let Target::Shard(_) = target {
                replace(&path, &b);
            }
            m.write(folder).unwrap();
            return;
        }
    }
    replace(&path, &b);
}

/// The late-clicks job on 2 shards checkpointing every millisecond, keeping `RETAIN`.
fn job(d: &Path, name: &str, checkpoints: bool) -> String {
    let tail = if checkpoints {
        format!(
            "[checkpoint]\ndir = {:?}\ninterval = \"1ms\"\nretain = {RETAIN}\n",
            d.join(format!("{name}-state"))
        )
    } else {
        String::new()
    };
    let aggs = r#"clicks = "count()", spend = "sum(bid)", users = "count_distinct(user_id)""#;
    let out = d.join(format!("{name}.ndjson"));
    let toml = late_clicks_toml("shards = 2\nchunk_bytes = 65536", EVENTS, aggs, &out, &tail);
    let path = d.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

/// Runs the checkpointed job once to its end; its checkpoint ids, ascending.
fn real_run(d: &Path, name: &str) -> Vec<u64> {
    let r = sluice(d, &["run", "--config", &job(d, name, true)], MIN);
    assert!(r.success, "{}", r.stderr);
    let store = CheckpointStore::open(&d.join(format!("{name}-state"))).unwrap();
    let ids = store.ids().unwrap();
    assert!(ids.len() >= 3, "the run left only checkpoints {ids:?}");
    ids
}

/// Which checkpoints (indices into ids, newest = 0) a case damages.
fn pick_ages(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut ages = match rng.below(20) {
        0..=7 => vec![0],
        8..=11 => vec![0, 1],
        12..=14 => vec![0, 1 + rng.below(n - 1)],
        15..=16 => (0..n).collect(),
        _ => vec![1 + rng.below(n - 1)],
    };
    ages.dedup();
    ages
}

fn random_damage(shards: u32, rng: &mut Rng) -> (Target, Damage) {
    let t = if rng.below(3) == 0 {
        Target::Manifest
    } else {
        Target::Shard(rng.below(shards as usize) as u32)
    };
    (t, KINDS[rng.below(KINDS.len())])
}

#[test]
fn two_hundred_damaged_checkpoint_dirs_are_detected_and_the_newest_intact_one_is_picked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ids = real_run(d, "lib");
    let pristine = d.join("lib-state");
    let store = CheckpointStore::open(&pristine).unwrap();
    let mut want = BTreeMap::new();
    for &id in &ids {
        let (_, m) = store
            .list()
            .unwrap()
            .into_iter()
            .find(|(i, _)| *i == id)
            .unwrap();
        let m = m.unwrap_or_else(|why| panic!("the real run's checkpoint {id}: {why}"));
        let shards = store.read_shards(&m).unwrap();
        want.insert(id, (m, shards));
    }
    let shards = want[&ids[0]].0.files.len() as u32;
    // One generator plans the cases (which checkpoints, files and kinds: the same whatever the
    // run wrote), another picks the bytes.
    let (mut rng, mut bytes) = (Rng(0x5EED_C4EC_4901_2026), Rng(0xB17E_5000_0000_0200));
    let (mut damages, mut fallbacks, mut none_left) = (0, 0, 0);
    for case in 0..CASES {
        let at = d.join(format!("case-{case}"));
        copy_dir(&pristine, &at, true);
        // Every kind on both kinds of file in turn; the other damaged checkpoints at random.
        let mut kind = KINDS[case % KINDS.len()];
        let target = if (case / KINDS.len()).is_multiple_of(2) {
            Target::Manifest
        } else {
            Target::Shard(rng.below(shards as usize) as u32)
        };
        if kind == Damage::BitFlip && matches!(target, Target::Manifest) && rng.below(2) == 0 {
            kind = Damage::DigitFlip;
        }
        let ages = pick_ages(ids.len(), &mut rng);
        let mut damaged: BTreeMap<u64, (Target, Damage)> = BTreeMap::new();
        for (i, &age) in ages.iter().enumerate() {
            let id = ids[ids.len() - 1 - age];
            let what = if i == 0 {
                (target, kind)
            } else {
                random_damage(shards, &mut rng)
            };
            damage(&folder(&at, id), what.0, what.1, &mut bytes);
            damaged.insert(id, what);
        }
        damages += damaged.len();
        let ctx = format!("case {case}: damaged {damaged:?}");
        let s = CheckpointStore::open(&at).unwrap();
        for (id, got) in s.list().unwrap() {
            match (damaged.get(&id), got) {
                (Some((t, _)), Err(why)) => {
                    assert!(why.contains(&t.file()), "{ctx}: checkpoint {id}: {why}")
                }
                (Some(_), Ok(_)) => panic!("{ctx}: damaged checkpoint {id} passed as intact"),
                (None, Ok(m)) => assert_eq!(m, want[&id].0, "{ctx}"),
                (None, Err(why)) => panic!("{ctx}: intact checkpoint {id} refused: {why}"),
            }
        }
        let listing = sluice::checkpoint::inspect(&at).unwrap();
        for id in damaged.keys() {
            let line = format!("checkpoint {id}: not usable");
            assert!(listing.contains(&line), "{ctx}: inspect says\n{listing}");
        }
        let newest_intact = ids
            .iter()
            .rev()
            .find(|id| !damaged.contains_key(id))
            .copied();
        let (got, skipped) = s.latest().unwrap();
        assert_eq!(got.as_ref().map(|m| m.id), newest_intact, "{ctx}");
        let newer: Vec<u64> = damaged
            .keys()
            .rev()
            .copied()
            .filter(|&id| Some(id) > newest_intact)
            .collect();
        let skipped_ids: Vec<u64> = skipped.iter().map(|k| k.id).collect();
        assert_eq!(skipped_ids, newer, "{ctx}: reported as skipped");
        // What a restore reads: the same checkpoint, its snapshots exactly as the run wrote them.
        let (point, skipped) = s.restore_point().unwrap();
        let skipped_ids: Vec<u64> = skipped.iter().map(|k| k.id).collect();
        assert_eq!(skipped_ids, newer, "{ctx}: skipped by the restore");
        match &point {
            Some((m, snaps)) => assert_eq!((m, snaps), (&want[&m.id].0, &want[&m.id].1), "{ctx}"),
            None => assert!(newest_intact.is_none(), "{ctx}"),
        }
        match got {
            Some(m) => {
                fallbacks += usize::from(!newer.is_empty());
                assert_eq!(s.read_shards(&m).unwrap(), want[&m.id].1, "{ctx}");
                // Retention keeps the one restored from and every newer folder (for inspection).
                s.retain(1, u64::MAX).unwrap();
                let kept: Vec<u64> = ids.iter().copied().filter(|&i| i >= m.id).collect();
                assert_eq!(s.ids().unwrap(), kept, "{ctx}: retention");
            }
            None => none_left += 1,
        }
        std::fs::remove_dir_all(&at).unwrap();
    }
    eprintln!(
        "{CASES} cases on a run's {} checkpoints, {damages} damaged checkpoints: {fallbacks} fell \
         back past a damaged one, {none_left} had no intact checkpoint left",
        ids.len()
    );
    assert!(fallbacks >= CASES / 2 && none_left > 0);
}

fn sorted_lines(d: &Path, name: &str) -> Vec<String> {
    let mut v = read_lines(&d.join(format!("{name}.ndjson")));
    v.sort();
    v
}

#[test]
fn damaged_checkpoints_through_the_binary_fall_back_and_end_with_the_uninterrupted_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let plain = sluice(d, &["run", "--config", &job(d, "plain", false)], MIN);
    assert!(plain.success, "{}", plain.stderr);
    let want = sorted_lines(d, "plain");
    assert!(want.len() > 1000);
    let ids = real_run(d, "e2e");
    let (state, out) = (d.join("e2e-state"), d.join("e2e.ndjson"));
    let (keep_state, keep_out) = (d.join("pristine-state"), d.join("pristine.ndjson"));
    copy_dir(&state, &keep_state, false);
    std::fs::copy(&out, &keep_out).unwrap();
    let all: Vec<(usize, Target, Damage)> = (0..ids.len())
        .map(|age| {
            (
                age,
                Target::Shard((age % 2) as u32),
                KINDS[age % KINDS.len()],
            )
        })
        .collect();
    // (age: 0 = newest, file, damage) per case.
    let cases: Vec<Vec<(usize, Target, Damage)>> = vec![
        vec![(0, Target::Shard(1), Damage::Truncated)],
        vec![(0, Target::Shard(0), Damage::BitFlip)],
        vec![(0, Target::Manifest, Damage::ChunkFlip)],
        vec![(0, Target::Shard(1), Damage::ZeroFill)],
        vec![(0, Target::Shard(0), Damage::VersionResealed)],
        vec![
            (0, Target::Manifest, Damage::VersionResealed),
            (1, Target::Manifest, Damage::Truncated),
        ],
        vec![
            (0, Target::Manifest, Damage::ZeroFill),
            (1, Target::Shard(1), Damage::Version),
        ],
        all,
    ];
    let mut rng = Rng(0xE2E0_DA3A_6E00_0008);
    let cfg = job(d, "e2e", true);
    for (case, damages) in cases.iter().enumerate() {
        std::fs::remove_dir_all(&state).unwrap();
        copy_dir(&keep_state, &state, false);
        std::fs::copy(&keep_out, &out).unwrap();
        let mut damaged = Vec::new();
        for &(age, target, kind) in damages {
            let id = ids[ids.len() - 1 - age];
            damage(&folder(&state, id), target, kind, &mut rng);
            damaged.push(id);
        }
        let newest_intact = ids.iter().rev().find(|id| !damaged.contains(id));
        let r = sluice(d, &["run", "--config", &cfg], MIN);
        let ctx = format!("case {case} {damages:?}: stderr\n{}", r.stderr);
        assert!(r.success, "{ctx}");
        for id in damaged.iter().filter(|&&id| Some(&id) > newest_intact) {
            assert!(
                r.stderr.contains(&format!("checkpoint {id} skipped")),
                "{ctx}"
            );
        }
        match newest_intact {
            Some(id) => assert!(
                r.stderr
                    .contains(&format!("resuming from checkpoint {id} ")),
                "{ctx}"
            ),
            None => assert!(!r.stderr.contains("resuming"), "{ctx}"),
        }
        assert!(sorted_lines(d, "e2e") == want, "{ctx}: output differs");
    }
}
