//! The control files' promises: only a positive pid of a live sluice counts as a running job, a
//! pid file that is not sluice's is reported and never signalled, requests and answers round-trip
//! by nonce, and every control file is 0600 and never read or written through a planted link.

use super::*;

#[test]
fn a_stale_or_own_pid_file_does_not_count_as_a_running_job() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(running_pid(dir.path()), None);
    claim(dir.path()).unwrap();
    assert_eq!(
        running_pid(dir.path()),
        None,
        "our own pid is not another job"
    );
    std::fs::write(dir.path().join(PID_FILE), "4194304").unwrap(); // above pid_max
    assert_eq!(running_pid(dir.path()), None);
    claim(dir.path()).unwrap();
    release(dir.path());
    assert!(!dir.path().join(PID_FILE).exists());
}

#[test]
fn a_pid_that_is_not_a_positive_i32_never_counts_as_a_job() {
    // Each of these, cast to pid_t, would name the caller's process group (0), every process
    // it may signal (-1), or nothing; none is a pid any sluice wrote.
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        "0",
        "-1",
        "4294967295",
        "2147483648",
        "-2147483648",
        "",
        "12abc",
        "1e3",
        "\0\0",
    ] {
        std::fs::write(dir.path().join(PID_FILE), bad).unwrap();
        assert_eq!(running_pid(dir.path()), None, "pid file {bad:?}");
    }
}

#[test]
fn a_live_process_that_is_not_sluice_is_not_a_job() {
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    // Until the child has exec'd, its comm is still this test thread's name.
    let comm = format!("/proc/{}/comm", child.id());
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&comm).map_or(true, |c| c.trim_end() != "sleep")
        && start.elapsed() < std::time::Duration::from_secs(10)
    {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(PID_FILE), child.id().to_string()).unwrap();
    let found = pid_file(dir.path());
    let signalled = signal_savepoint(child.id() as i32);
    let alive = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        matches!(&found, PidFile::Stale { why, .. } if why.contains("`sleep`, not sluice")),
        "{found:?}"
    );
    let e = signalled.unwrap_err().to_string();
    assert!(e.contains("not sluice") && alive, "{e}");
}

#[test]
fn only_a_positive_i32_is_a_pid_and_an_unreadable_proc_entry_is_not_sluice() {
    assert_eq!(parse_pid("4242\n"), Ok(4242));
    assert_eq!(parse_pid(" 2147483647 "), Ok(i32::MAX));
    for bad in [
        "0",
        "-1",
        "-7",
        "4294967295",
        "2147483648",
        "",
        "x",
        "1.0",
        "0x10",
    ] {
        let e = parse_pid(bad).unwrap_err();
        assert!(e.contains("not a process id"), "{bad:?}: {e}");
    }
    let long = "9".repeat(1000);
    assert!(
        parse_pid(&long).unwrap_err().len() < 200,
        "garbage is quoted short"
    );
    assert!(judge_comm(Ok("sluice\n".into())).is_ok());
    let missing = io::Error::from(io::ErrorKind::NotFound);
    assert!(judge_comm(Err(missing))
        .unwrap_err()
        .contains("not known to be sluice"));
    assert!(judge_comm(Ok("bash\n".into())).is_err());
    assert!(signal_savepoint(0).is_err() && signal_savepoint(-1).is_err());
}

#[test]
fn an_invalid_pid_file_is_reported_and_replaced_by_a_claim() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(pid_file(dir.path()), PidFile::Absent);
    std::fs::write(dir.path().join(PID_FILE), "0").unwrap();
    assert!(matches!(pid_file(dir.path()), PidFile::Invalid(why) if why.contains("\"0\" is not")),);
    claim(dir.path()).unwrap();
    let own = std::process::id().to_string();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(PID_FILE)).unwrap(),
        own
    );
    // Release removes only this process's pid file.
    std::fs::write(dir.path().join(PID_FILE), "1").unwrap();
    release(dir.path());
    assert!(dir.path().join(PID_FILE).exists());
}

#[test]
fn control_files_are_0600_and_links_planted_at_them_are_not_followed() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let t = tempfile::tempdir().unwrap();
    let (dir, victim) = (t.path().join("state"), t.path().join("victim"));
    std::fs::create_dir(&dir).unwrap();
    let req = Request {
        out: "/tmp/elsewhere".into(),
        nonce: "planted".into(),
    };
    std::fs::write(&victim, serde_json::to_vec(&req).unwrap()).unwrap();
    let untouched = std::fs::read(&victim).unwrap();
    let mode = |n: &str| {
        let m = dir.join(n).symlink_metadata().unwrap();
        (m.is_symlink(), m.permissions().mode() & 0o777)
    };
    for name in [
        PID_FILE,
        ".sluice.pid.tmp",
        REQUEST_FILE,
        ".savepoint.request.tmp",
    ] {
        symlink(&victim, dir.join(name)).unwrap();
    }
    // A request planted as a link is not taken (and the link, not its target, is removed).
    assert_eq!(take_request(&dir), None);
    symlink(&victim, dir.join(REQUEST_FILE)).unwrap();
    claim(&dir).unwrap();
    assert_eq!(mode(PID_FILE), (false, 0o600), "the link is replaced");
    write_request(
        &dir,
        &Request {
            out: "/x".into(),
            nonce: "n".into(),
        },
    )
    .unwrap();
    assert_eq!(mode(REQUEST_FILE), (false, 0o600));
    symlink(&victim, dir.join(".savepoint.result.tmp")).unwrap();
    symlink(&victim, dir.join(RESULT_FILE)).unwrap();
    let o = Outcome {
        nonce: "n".into(),
        id: 1,
        out: "/x".into(),
        error: None,
    };
    write_outcome(&dir, &o).unwrap();
    assert_eq!(mode(RESULT_FILE), (false, 0o600));
    assert_eq!(std::fs::read(&victim).unwrap(), untouched);
}

#[test]
fn request_and_outcome_round_trip_and_match_by_nonce() {
    let dir = tempfile::tempdir().unwrap();
    let r = Request {
        out: "/tmp/sp".into(),
        nonce: "n1".into(),
    };
    write_request(dir.path(), &r).unwrap();
    assert_eq!(take_request(dir.path()), Some(r));
    assert_eq!(take_request(dir.path()), None, "a request is served once");
    let o = Outcome {
        nonce: "n1".into(),
        id: 7,
        out: "/tmp/sp".into(),
        error: None,
    };
    write_outcome(dir.path(), &o).unwrap();
    assert_eq!(read_outcome(dir.path(), "n2"), None);
    assert_eq!(read_outcome(dir.path(), "n1"), Some(o));
}
