//! How sluice creates and reads the files of a checkpoint directory: owner-only modes (files 0600,
//! folders 0700) and **never through a symbolic link** planted there. Files are created with
//! `O_CREAT | O_EXCL | O_NOFOLLOW` (an existing file or link is an error, never truncated or written
//! through); a file that replaces another (the pid file, a manifest) is written to a fresh temp file
//! and renamed over it, which replaces a link at that name instead of following it; reads open with
//! `O_NOFOLLOW | O_NONBLOCK` and accept only regular files (a FIFO would block, a device could be
//! endless); folders are made with `mkdir` (which never follows) and an existing one must be a real
//! folder. Paths the user gives (the checkpoint directory itself, a savepoint's parent folders) are
//! used as given: the rule is about the entries sluice names inside them.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// Mode of every file sluice creates in a checkpoint directory.
pub const FILE_MODE: u32 = 0o600;
/// Mode of every folder sluice creates there.
pub const DIR_MODE: u32 = 0o700;

const LINK: &str = "a symbolic link, not followed (sluice never reads or writes through a link \
                    in a checkpoint directory; remove it)";

fn link_error() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, LINK)
}

/// Turns the errors a refused link gives (`ELOOP` from `O_NOFOLLOW`, `EEXIST` from `O_EXCL`) into
/// one that says so.
fn explain(path: &Path, e: io::Error) -> io::Error {
    let is_link = e.raw_os_error() == Some(libc::ELOOP)
        || (e.kind() == io::ErrorKind::AlreadyExists
            && path.symlink_metadata().is_ok_and(|m| m.is_symlink()));
    if is_link {
        link_error()
    } else {
        e
    }
}

/// Creates a new file at `path` (mode 0600) for reading and writing; anything already there, a
/// link included, is an error.
pub fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| explain(path, e))
}

/// Opens the file at `path` for appending, creating it (mode 0600) if missing; a link there is
/// an error, never written through.
pub fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| explain(path, e))
}

/// Opens the regular file at `path` for reading; a link, a FIFO or a device is refused.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| explain(path, e))?;
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(f)
}

/// The bytes of the regular file at `path` (see [`open_regular`]).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// At most `limit` bytes of the regular file at `path`: for small control files, whatever size
/// someone made them.
pub fn read_at_most(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes `bytes` to `dir/name` atomically: into a fresh temp file `dir/.name.tmp` (an old one,
/// or a link planted there, is removed first, never followed), then renamed over `name`, which
/// replaces whatever is there (a link included) without writing through it. With `durable`, the
/// temp file is fsynced before the rename and the folder after it.
pub fn replace(dir: &Path, name: &str, bytes: &[u8], durable: bool) -> io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut f = create_new(&tmp)?;
    f.write_all(bytes)?;
    if durable {
        f.sync_all()?;
    }
    drop(f);
    std::fs::rename(&tmp, dir.join(name))?;
    if durable {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Makes the folder `path` (mode 0700); an existing entry, a link included, is an error.
pub fn create_dir(path: &Path) -> io::Result<()> {
    DirBuilder::new()
        .mode(DIR_MODE)
        .create(path)
        .map_err(|e| explain(path, e))
}

/// Makes `path` and its missing parents (each new one mode 0700); existing ones are kept as they
/// are, a user-given path as given.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)
}

/// Checks that `path` is a folder itself, not a link to one.
pub fn real_dir(path: &Path) -> io::Result<()> {
    let m = path.symlink_metadata()?;
    if m.is_symlink() {
        Err(link_error())
    } else if !m.is_dir() {
        Err(io::Error::new(io::ErrorKind::InvalidInput, "not a folder"))
    } else {
        Ok(())
    }
}

/// Checks that no existing folder between `base` and `path` (which lies under it), `path`
/// included, is a link: for folders sluice makes inside the checkpoint directory several levels
/// down (`savepoints/savepoint-<id>`).
pub fn no_links_below(base: &Path, path: &Path) -> io::Result<()> {
    for p in path
        .ancestors()
        .take_while(|p| *p != base && p.starts_with(base))
    {
        match p.symlink_metadata() {
            Ok(m) if m.is_symlink() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{}: {LINK}", p.display()),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Copies the regular file `from` to a new file `to` (mode 0600), neither through a link, and
/// fsyncs the copy.
pub fn copy(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = open_regular(from)?;
    let mut dst = create_new(to)?;
    io::copy(&mut src, &mut dst)?;
    dst.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn mode(p: &Path) -> u32 {
        p.symlink_metadata().unwrap().permissions().mode() & 0o777
    }

    /// A checkpoint dir and, outside it, a file a planted link points at.
    fn planted() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let (dir, outside) = (t.path().join("state"), t.path().join("victim"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(&outside, b"precious").unwrap();
        (t, dir, outside)
    }

    #[test]
    fn created_files_and_folders_are_owner_only() {
        let (_t, dir, _) = planted();
        let f = dir.join("a");
        create_new(&f).unwrap();
        assert_eq!(mode(&f), 0o600);
        replace(&dir, "b", b"x", true).unwrap();
        assert_eq!(mode(&dir.join("b")), 0o600);
        create_dir(&dir.join("c")).unwrap();
        assert_eq!(mode(&dir.join("c")), 0o700);
        create_dir_all(&dir.join("d/e")).unwrap();
        assert_eq!(
            (mode(&dir.join("d")), mode(&dir.join("d/e"))),
            (0o700, 0o700)
        );
        copy(&dir.join("b"), &dir.join("c/b")).unwrap();
        assert_eq!(mode(&dir.join("c/b")), 0o600);
    }

    #[test]
    fn a_planted_link_is_never_written_or_read_through() {
        let (_t, dir, outside) = planted();
        let link = dir.join("l");
        symlink(&outside, &link).unwrap();
        let e = create_new(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(read(&link)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
        assert!(copy(&link, &dir.join("copy")).is_err());
        std::fs::write(dir.join("src"), b"new").unwrap();
        assert!(copy(&dir.join("src"), &link).is_err());
        // A link at the temp file is removed, one at the name replaced: the target is untouched.
        symlink(&outside, dir.join(".p.tmp")).unwrap();
        symlink(&outside, dir.join("p")).unwrap();
        replace(&dir, "p", b"123", false).unwrap();
        assert!(!dir.join("p").symlink_metadata().unwrap().is_symlink());
        assert_eq!(std::fs::read(dir.join("p")).unwrap(), b"123");
        // Folders: mkdir never follows, and a link is not a folder.
        let dlink = dir.join("dl");
        symlink(outside.parent().unwrap(), &dlink).unwrap();
        assert!(create_dir(&dlink)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
        assert!(real_dir(&dlink)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
        assert!(real_dir(&dir).is_ok());
        let e = no_links_below(&dir, &dlink.join("sp/x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("dl: a symbolic link"), "{e}");
        assert!(no_links_below(&dir, &dir.join("c/d")).is_ok());
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
    }

    #[test]
    fn only_regular_files_are_read() {
        let (_t, dir, _) = planted();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(read(&dir).is_err(), "a folder is not read");
        std::fs::write(dir.join("big"), vec![b'7'; 1000]).unwrap();
        assert_eq!(read_at_most(&dir.join("big"), 10).unwrap().len(), 10);
    }
}
