//! Part files of a Parquet sink's directory and their two-phase commit. A shard writes each file
//! under a hidden temporary name, `.part-<checkpoint>-<shard>-<seq>.parquet.tmp`; a finished file
//! (footer written, fsynced) becomes visible only by a rename to `part-<checkpoint>-<shard>.parquet`
//! (`-<seq>` added for the second and later file of a shard in one checkpoint), done once the
//! checkpoint's manifest is durable, then the directory is fsynced. Recovery to checkpoint `c`
//! renames the temporaries of `c` and earlier (their manifest is durable, the rename may not have
//! happened) and deletes later temporaries and parts (the replay writes them again). A rename is
//! atomic, so a reader never sees a partial file.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A file of the sink's directory this sink wrote.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Part {
    pub id: u64,
    pub shard: usize,
    pub seq: u64,
    /// Still under its temporary name.
    pub temp: bool,
}

impl Part {
    pub fn temp_name(&self) -> String {
        format!(".part-{}-{}-{}.parquet.tmp", self.id, self.shard, self.seq)
    }

    pub fn final_name(&self) -> String {
        match self.seq {
            0 => format!("part-{}-{}.parquet", self.id, self.shard),
            s => format!("part-{}-{}-{s}.parquet", self.id, self.shard),
        }
    }

    /// Reads a name this sink gives its files; `None` for anything else (left alone).
    pub fn parse(name: &str) -> Option<Part> {
        let (temp, body) = if let Some(b) = name
            .strip_prefix(".part-")
            .and_then(|b| b.strip_suffix(".parquet.tmp"))
        {
            (true, b)
        } else {
            let b = name.strip_prefix("part-")?.strip_suffix(".parquet")?;
            (false, b)
        };
        let mut it = body.split('-');
        let id = it.next()?.parse().ok()?;
        let shard = it.next()?.parse().ok()?;
        let seq = match (it.next(), temp) {
            (Some(s), _) => s.parse().ok()?,
            (None, false) => 0,
            (None, true) => return None,
        };
        if it.next().is_some() {
            return None;
        }
        let p = Part {
            id,
            shard,
            seq,
            temp,
        };
        // `part-1-0-0.parquet` is not a name this sink writes (`part-1-0.parquet` is).
        let canonical = if temp { p.temp_name() } else { p.final_name() };
        (canonical == name).then_some(p)
    }
}

/// This sink's files in `dir`, sorted (absent dir: none).
pub fn list(dir: &Path) -> io::Result<Vec<(Part, PathBuf)>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut v = Vec::new();
    for e in rd {
        let e = e?;
        if let Some(p) = e.file_name().to_str().and_then(Part::parse) {
            v.push((p, e.path()));
        }
    }
    v.sort();
    Ok(v)
}

/// Makes renames and deletions in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Creates the temporary file of `part` in `dir` (never through a link planted at its name).
pub fn create(dir: &Path, part: &Part) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(part.temp_name()))
}

/// Gives one finished temporary its final name.
pub fn publish(dir: &Path, part: &Part) -> io::Result<()> {
    std::fs::rename(dir.join(part.temp_name()), dir.join(part.final_name()))
}

/// Commits checkpoint `id`: its temporaries and those of earlier checkpoints that failed are
/// renamed to their final names, then the directory is fsynced. Returns how many were renamed.
/// Repeating it after a crash renames what is left.
pub fn commit(dir: &Path, id: u64) -> io::Result<usize> {
    let mut n = 0;
    for (p, _) in list(dir)? {
        if p.temp && p.id <= id {
            publish(dir, &p)?;
            n += 1;
        }
    }
    if n > 0 {
        sync_dir(dir)?;
    }
    Ok(n)
}

/// What [`recover`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    pub committed: usize,
    pub deleted: usize,
}

/// Recovery to checkpoint `latest` (`None`: no checkpoint, a fresh start): temporaries it covers
/// are committed, every later file (temporary or part) is deleted. Without a checkpoint that is
/// every file this sink wrote.
pub fn recover(dir: &Path, latest: Option<u64>) -> io::Result<Recovered> {
    let mut r = Recovered::default();
    for (p, path) in list(dir)? {
        match latest {
            Some(c) if p.id <= c => {
                if p.temp {
                    publish(dir, &p)?;
                    r.committed += 1;
                }
            }
            _ => {
                std::fs::remove_file(path)?;
                r.deleted += 1;
            }
        }
    }
    if r != Recovered::default() {
        sync_dir(dir)?;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(id: u64, shard: usize, seq: u64, temp: bool) -> Part {
        Part {
            id,
            shard,
            seq,
            temp,
        }
    }

    #[test]
    fn names_round_trip_and_foreign_files_are_not_ours() {
        for p in [
            part(3, 1, 0, true),
            part(3, 1, 0, false),
            part(12, 0, 4, false),
        ] {
            let name = if p.temp {
                p.temp_name()
            } else {
                p.final_name()
            };
            assert_eq!(Part::parse(&name), Some(p), "{name}");
        }
        assert_eq!(part(3, 1, 0, false).final_name(), "part-3-1.parquet");
        assert_eq!(part(3, 1, 2, false).final_name(), "part-3-1-2.parquet");
        for other in [
            "part-1-0-0.parquet",
            "part-x-0.parquet",
            "notes.parquet",
            ".part-1-0.parquet.tmp",
            "part-1-0-1-2.parquet",
            "part-1-0.parquet.bak",
        ] {
            assert_eq!(Part::parse(other), None, "{other}");
        }
    }

    #[test]
    fn commit_renames_up_to_the_checkpoint_and_recovery_drops_what_is_after_it() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        for p in [
            part(1, 0, 0, true),
            part(1, 0, 1, true),
            part(1, 1, 0, true),
            part(2, 0, 0, true),
            part(3, 1, 0, true),
        ] {
            std::fs::write(dir.join(p.temp_name()), b"x").unwrap();
        }
        std::fs::write(dir.join("keep.txt"), b"mine").unwrap();
        assert_eq!(commit(dir, 1).unwrap(), 3);
        let names = |dir: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            names(dir),
            [
                ".part-2-0-0.parquet.tmp",
                ".part-3-1-0.parquet.tmp",
                "keep.txt",
                "part-1-0-1.parquet",
                "part-1-0.parquet",
                "part-1-1.parquet"
            ]
        );
        // Checkpoint 2's manifest was durable, its rename had not happened: recovery does it, and
        // drops checkpoint 3's temporary.
        let r = recover(dir, Some(2)).unwrap();
        assert_eq!((r.committed, r.deleted), (1, 1));
        assert!(dir.join("part-2-0.parquet").exists());
        // Falling back to checkpoint 1 drops what 2 committed; no checkpoint drops everything.
        assert_eq!(recover(dir, Some(1)).unwrap().deleted, 1);
        assert_eq!(recover(dir, None).unwrap().deleted, 3);
        assert_eq!(names(dir), ["keep.txt"]);
    }
}
