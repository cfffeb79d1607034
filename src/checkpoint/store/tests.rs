//! The store's promises: a checkpoint exists only with its manifest; torn, corrupt and unfinished
//! checkpoints are skipped with a reason in favour of the previous complete one; retention keeps the
//! newest intact ones.

use super::*;
use crate::checkpoint::Section;
use serde_json::json;

fn snap(shard: u32, fill: u8) -> Snapshot {
    Snapshot {
        shard,
        key_groups: (shard * 360, shard * 360 + 360),
        sections: vec![Section {
            name: "windows".into(),
            bytes: vec![fill; 1000 + shard as usize],
        }],
    }
}

/// Writes checkpoint `id` with two shards (fill byte = id) and completes it.
fn checkpoint(s: &CheckpointStore, id: u64) -> Manifest {
    s.begin(id).unwrap();
    let files = (0..2)
        .map(|sh| s.write_shard(id, &snap(sh, id as u8)).unwrap())
        .collect();
    s.complete(
        id,
        720,
        json!({ "chunk": id * 10 }),
        Default::default(),
        files,
    )
    .unwrap()
}

#[test]
fn latest_is_the_newest_complete_one_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let s = CheckpointStore::open(&dir.path().join("state")).unwrap();
    assert_eq!(s.latest().unwrap(), (None, vec![]));
    checkpoint(&s, 1);
    let m2 = checkpoint(&s, 2);
    let (m, skipped) = s.latest().unwrap();
    assert_eq!((m.as_ref(), skipped.len()), (Some(&m2), 0));
    assert_eq!(m2.sources, json!({ "chunk": 20 }));
    let shards = s.read_shards(&m2).unwrap();
    assert_eq!(shards, vec![snap(0, 2), snap(1, 2)]);
    assert!(s.begin(2).is_err(), "ids only grow");
}

#[test]
fn torn_corrupt_and_unfinished_checkpoints_fall_back_to_the_previous_one() {
    let dir = tempfile::tempdir().unwrap();
    let s = CheckpointStore::open(dir.path()).unwrap();
    let m1 = checkpoint(&s, 1);
    checkpoint(&s, 2);
    checkpoint(&s, 3);
    // 4: interrupted before its manifest.
    s.begin(4).unwrap();
    s.write_shard(4, &snap(0, 4)).unwrap();
    // 3: a snapshot cut short; 2: one flipped byte.
    let f3 = s.folder(3).join("shard-1.snap");
    let b = std::fs::read(&f3).unwrap();
    std::fs::write(&f3, &b[..b.len() / 2]).unwrap();
    let f2 = s.folder(2).join("shard-0.snap");
    let mut b = std::fs::read(&f2).unwrap();
    b[40] ^= 0x10;
    std::fs::write(&f2, &b).unwrap();
    let (m, skipped) = s.latest().unwrap();
    assert_eq!(m, Some(m1));
    let why: Vec<(u64, &str)> = skipped.iter().map(|k| (k.id, k.why.as_str())).collect();
    assert_eq!(why.len(), 3, "{why:?}");
    assert!(why[0].0 == 4 && why[0].1.contains("no manifest"), "{why:?}");
    assert!(why[1].0 == 3 && why[1].1.contains("torn"), "{why:?}");
    assert!(why[2].0 == 2 && why[2].1.contains("checksum"), "{why:?}");
}

#[test]
fn retain_keeps_the_newest_intact_and_never_deletes_newer_folders() {
    let dir = tempfile::tempdir().unwrap();
    let s = CheckpointStore::open(dir.path()).unwrap();
    for id in 1..=5 {
        checkpoint(&s, id);
    }
    s.begin(6).unwrap(); // in progress
                         // 5 is corrupt: the newest intact are 4 and 3.
    std::fs::write(s.folder(5).join("shard-0.snap"), b"junk").unwrap();
    assert_eq!(s.retain(2, 2).unwrap(), vec![1], "2 is still being written");
    assert_eq!(s.retain(2, u64::MAX).unwrap(), vec![2]);
    assert_eq!(s.ids().unwrap(), vec![3, 4, 5, 6]);
    assert_eq!(s.latest().unwrap().0.map(|m| m.id), Some(4));
    // Unrelated files in the directory are neither ids nor deleted.
    std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
    assert_eq!(s.retain(1, u64::MAX).unwrap(), vec![3]);
    assert!(dir.path().join("notes.txt").exists());
}

fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    p.symlink_metadata().unwrap().permissions().mode() & 0o777
}

#[test]
fn checkpoint_files_are_0600_and_folders_0700() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let s = CheckpointStore::open(&state).unwrap();
    let m = checkpoint(&s, 1);
    assert_eq!(mode(&state), 0o700, "the checkpoint dir sluice created");
    assert_eq!(mode(&s.folder(1)), 0o700);
    for f in ["shard-0.snap", "shard-1.snap", "manifest.json"] {
        assert_eq!(mode(&s.folder(1).join(f)), 0o600, "{f}");
    }
    let sp = state.join("savepoints/sp-1");
    s.export(&m, &sp).unwrap();
    assert_eq!((mode(&state.join("savepoints")), mode(&sp)), (0o700, 0o700));
    assert_eq!(mode(&sp.join("manifest.json")), 0o600);
}

#[test]
fn links_planted_in_the_checkpoint_dir_are_never_followed() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let (state, outside) = (dir.path().join("state"), dir.path().join("outside"));
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    // A complete checkpoint elsewhere, linked in as this store's newest: not restored from.
    let other = CheckpointStore::open(&dir.path().join("other")).unwrap();
    checkpoint(&other, 9);
    let s = CheckpointStore::open(&state).unwrap();
    let m1 = checkpoint(&s, 1);
    symlink(other.folder(9), s.folder(9)).unwrap();
    let (m, skipped) = s.latest().unwrap();
    assert_eq!(m, Some(m1.clone()), "the linked folder is not a checkpoint");
    assert!(
        skipped.len() == 1 && skipped[0].id == 9 && skipped[0].why.contains("symbolic link"),
        "{skipped:?}"
    );
    // A checkpoint folder planted as a link: a shard does not write into it.
    symlink(&outside, s.folder(10)).unwrap();
    let e = s.begin_shared(10).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    // A link at a snapshot's name or at the manifest's temp file is not written through.
    s.begin(11).unwrap();
    symlink(&victim, s.folder(11).join("shard-0.snap")).unwrap();
    let e = s.write_shard(11, &snap(0, 11)).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    s.begin(12).unwrap();
    let files = vec![s.write_shard(12, &snap(0, 12)).unwrap()];
    symlink(&victim, s.folder(12).join(".manifest.json.tmp")).unwrap();
    s.complete(12, 720, json!({ "chunk": 1 }), Default::default(), files)
        .unwrap();
    assert_eq!(s.latest().unwrap().0.map(|m| m.id), Some(12));
    // A link at the manifest's name is not read through.
    s.begin(13).unwrap();
    symlink(
        s.folder(12).join("manifest.json"),
        s.folder(13).join("manifest.json"),
    )
    .unwrap();
    assert_eq!(s.latest().unwrap().0.map(|m| m.id), Some(12));
    // A savepoint is not exported below a link planted in the checkpoint dir.
    symlink(&outside, state.join("savepoints")).unwrap();
    let e = s
        .export(&m1, &state.join("savepoints/sp-1"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("symbolic link"), "{e}");
    // Retention removes old links themselves, never what they point at.
    symlink(&outside, s.folder(0)).unwrap();
    s.retain(1, u64::MAX).unwrap();
    assert!(s.folder(0).symlink_metadata().is_err() && s.folder(1).symlink_metadata().is_err());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing written outside"
    );
    assert_eq!(other.latest().unwrap().0.map(|m| m.id), Some(9));
}
