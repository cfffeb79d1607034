//! The postgres sink against a real PostgreSQL server (`scripts/postgres-local.sh`): the table
//! equals the reference model row for row after a clean run and after `kill -9` three times with
//! restores; a re-fire overwrites its row; NUMERIC sums are exact; a table throttled by a trigger
//! backpressures the source (its read position stalls, memory stays flat); a server stopped for
//! 5 s mid-run is retried and the table still ends right, and one that stays away stops the job
//! past `max_retry_time`; values that do not fit their column go to the dead letters with the
//! server's message; bad configs are refused before anything runs.

mod common;

use common::flow_job::{flow_config, flow_data, kill_after_checkpoint};
use common::flow_model::{assert_spend_eq, decimal, spend_model_dir, SpendMap};
use common::pg::Pg;
use common::{read_lines, sluice, toml_str};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIN: Duration = Duration::from_secs(60);

/// A `[sinks.db]` table for the contract pipeline's per-minute spend.
fn spend_sink(url: &str, table: &str, extra: &str) -> String {
    format!(
        "\n[sinks.db]\ntype = \"postgres\"\ninputs = [\"spend_per_minute\"]\nurl = \"{url}\"\n\
         table = \"{table}\"\nkey = [\"ad_id\", \"window_start\"]\ncreate_table = true\n{extra}\n"
    )
}

/// The table's rows as the model's map, `spend` read from its exact NUMERIC text.
fn spend_table(pg: &Pg, table: &str) -> SpendMap {
    pg.sql(&format!(
        "SELECT ad_id, window_start, clicks, spend::text FROM {table}"
    ))
    .iter()
    .map(|l| {
        let f: Vec<&str> = l.split('\t').collect();
        let start: i64 = f[1].parse().expect("window_start as epoch ms");
        (
            (f[0].to_string(), start),
            (f[2].parse().unwrap(), decimal(f[3])),
        )
    })
    .collect()
}

#[test]
fn a_clean_run_upserts_exactly_the_reference_models_rows() {
    let pg = Pg::shared();
    pg.sql("DROP TABLE IF EXISTS spend_clean");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    flow_data(d, 30_000, 1000, 7);
    let cfg = flow_config(
        d,
        "job",
        &d.join("out.ndjson"),
        &spend_sink(&pg.url(), "spend_clean", ""),
    );
    let exit = sluice(d, &["run", "--config", &cfg], MIN);
    assert!(exit.success, "{}", exit.stderr);
    let want = spend_model_dir(d);
    assert!(want.len() > 100, "the model has only {} rows", want.len());
    assert_spend_eq(&want, &spend_table(pg, "spend_clean"), "postgres table");
    // Created from the results: exact NUMERIC, never a float; the key as primary key.
    let types = pg.sql(
        "SELECT column_name, data_type FROM information_schema.columns \
         WHERE table_name = 'spend_clean' ORDER BY ordinal_position",
    );
    assert_eq!(
        types,
        [
            "ad_id\ttext",
            "window_start\tbigint",
            "window_end\tbigint",
            "clicks\tbigint",
            "spend\tnumeric"
        ]
    );
}

#[test]
fn kill_9_three_times_with_restores_ends_with_the_uninterrupted_table() {
    let pg = Pg::shared();
    pg.sql("DROP TABLE IF EXISTS spend_killed");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    flow_data(d, 150_000, 1000, 5);
    let state = toml_str(&d.join("state").to_string_lossy());
    let extra = format!(
        "{}\n[checkpoint]\ndir = {state}\ninterval = \"10ms\"\n",
        spend_sink(&pg.url(), "spend_killed", "batch = { rows = 50 }")
    );
    let cfg = flow_config(d, "crash", &d.join("out.ndjson"), &extra);
    let (mut resumed, mut killed) = (0, 0);
    for (i, delay) in [20u64, 60, 120].into_iter().enumerate() {
        let err = d.join(format!("crash-{i}.txt"));
        let run = kill_after_checkpoint(&cfg, &d.join("state"), Duration::from_millis(delay), &err);
        killed += usize::from(run.live);
        resumed += usize::from(run.resumed);
    }
    assert_eq!(killed, 3, "a run ended before its kill");
    let last = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(last.success, "{}", last.stderr);
    assert!(resumed >= 1, "no killed run resumed from a checkpoint");
    assert_spend_eq(
        &spend_model_dir(d),
        &spend_table(pg, "spend_killed"),
        "after kill -9 x3",
    );
}

/// A window's on-time result and then its re-fire (a late event within `allowed_lateness`): the
/// row holds the re-fired sum, hand-computed, and the bounds are TIMESTAMPTZ when asked.
#[test]
fn a_refire_overwrites_its_windows_row() {
    let pg = Pg::shared();
    pg.sql("DROP TABLE IF EXISTS refired, refired_batched");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = [
        r#"{"k":"a","v":1.10,"ts":1000}"#,
        r#"{"k":"b","v":0.01,"ts":1500}"#,
        r#"{"k":"a","v":2.20,"ts":2000}"#,
        r#"{"k":"a","v":5,"ts":70000}"#,
        r#"{"k":"a","v":0.05,"ts":3000}"#,
        r#"{"k":"a","v":1,"ts":300000}"#,
    ];
    std::fs::write(d.join("in.ndjson"), input.join("\n") + "\n").unwrap();
    let cfg = d.join("job.toml");
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 2\n\n[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\nwatermark = {{ max_out_of_orderness = \"0s\" }}\n\n\
             [transforms.w]\ntype = \"window\"\ninputs = [\"ev\"]\ngroup_by = [\"k\"]\n\
             window = {{ type = \"tumbling\", size = \"1m\" }}\nallowed_lateness = \"2m\"\n\
             aggregates = {{ total = \"sum(v)\", n = \"count()\" }}\n\n\
             [sinks.out]\ntype = \"file\"\ninputs = [\"w\"]\npath = {}\n\n\
             [sinks.db]\ntype = \"postgres\"\ninputs = [\"w\"]\nurl = \"{}\"\ntable = \"refired\"\n\
             key = [\"k\", \"window_start\"]\ncreate_table = true\nwindow_ts = \"timestamptz\"\n\
             batch = {{ rows = 1 }}\n\n\
             [sinks.batched]\ntype = \"postgres\"\ninputs = [\"w\"]\nurl = \"{}\"\ntable = \"refired_batched\"\n\
             key = [\"k\", \"window_start\"]\ncreate_table = true\nwindow_ts = \"timestamptz\"\n\
             batch = {{ rows = 5000, max_delay = \"1h\" }}\n",
            toml_str(&d.join("in.ndjson").to_string_lossy()),
            toml_str(&d.join("out.ndjson").to_string_lossy()),
            pg.url(),
            pg.url()
        ),
    )
    .unwrap();
    let exit = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN);
    assert!(exit.success, "{}", exit.stderr);
    let firsts: Vec<String> = read_lines(&d.join("out.ndjson"))
        .into_iter()
        .filter(|l| l.contains("\"k\":\"a\"") && l.contains("\"window_start\":0,"))
        .collect();
    assert_eq!(firsts.len(), 2, "fired then re-fired: {firsts:?}");
    // Row by row (the re-fire is a later statement) and in one batch (the re-fire must win over
    // the on-time row within the batch): the same table.
    for table in ["refired", "refired_batched"] {
        let rows = pg.sql(&format!(
            "SELECT k, extract(epoch from window_start)::bigint, extract(epoch from window_end)::bigint, \
             total::text, n FROM {table} ORDER BY k, window_start"
        ));
        let want = [
            "a\t0\t60\t3.35\t3",
            "a\t60\t120\t5\t1",
            "a\t300\t360\t1\t1",
            "b\t0\t60\t0.01\t1",
        ];
        assert_eq!(rows, want, "{table}");
    }
}

/// A statement trigger sleeps 50 ms per upsert of at most 10 rows: the sink takes ~400 rows/s
/// while the file holds 1.2 M records (~80 MB). The job must keep its read position near what it
/// has written (lag stays in the file) and its memory flat, not buffer the file.
#[test]
fn a_throttled_table_backpressures_the_source_and_memory_stays_flat() {
    let pg = Pg::shared();
    pg.sql(
        "DROP TABLE IF EXISTS throttled; CREATE TABLE throttled (id bigint PRIMARY KEY, pad text, ts bigint); \
         CREATE OR REPLACE FUNCTION slow_down() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_sleep(0.05); RETURN NULL; END $$; \
         CREATE TRIGGER slow BEFORE INSERT ON throttled FOR EACH STATEMENT EXECUTE FUNCTION slow_down()",
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = String::with_capacity(90 << 20);
    let pad = "x".repeat(40);
    for i in 0..1_200_000u64 {
        text.push_str(&format!(
            "{{\"id\":{i},\"pad\":\"{pad}\",\"ts\":{}}}\n",
            1_000 + i
        ));
    }
    let size = text.len() as f64;
    std::fs::write(d.join("in.ndjson"), text).unwrap();
    let addr = common::free_addr();
    let cfg = d.join("job.toml");
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 2\n\n[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n\n\
             [transforms.rows]\ntype = \"select\"\ninputs = [\"ev\"]\nfields = {{ id = \"id\", pad = \"pad\", ts = \"ts\" }}\n\n\
             [sinks.db]\ntype = \"postgres\"\ninputs = [\"rows\"]\nurl = \"{}\"\ntable = \"throttled\"\nkey = [\"id\"]\n\
             batch = {{ rows = 10 }}\n\n[api]\naddress = \"{addr}\"\n",
            toml_str(&d.join("in.ndjson").to_string_lossy()),
            pg.url()
        ),
    )
    .unwrap();
    let mut child = Command::new(common::BIN)
        .args(["run", "--config", &cfg.to_string_lossy()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(d.join("err.txt")).unwrap())
        .spawn()
        .unwrap();
    common::wait_healthy(&addr);
    std::thread::sleep(Duration::from_secs(1));
    let (rss_at_1s, read_at_1s) = (
        proc_kib(child.id(), "status", "VmRSS:"),
        read_bytes(child.id()),
    );
    let mut rss_max = rss_at_1s;
    for _ in 0..30 {
        std::thread::sleep(Duration::from_millis(100));
        rss_max = rss_max.max(proc_kib(child.id(), "status", "VmRSS:"));
    }
    let read = read_bytes(child.id());
    let metrics = common::get(&addr, "/metrics")
        .map(|(_, b)| b)
        .unwrap_or_default();
    let still_running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    let written = common::sum(&metrics, "sluice_sink_rows_written_total");
    eprintln!(
        "throttled: read {read_at_1s} then {read} of {size} bytes, {written} rows written, RSS {rss_at_1s} -> {rss_max} KiB"
    );
    assert!(
        still_running,
        "the throttled job ended: {}",
        std::fs::read_to_string(d.join("err.txt")).unwrap()
    );
    assert!(written > 0.0, "nothing written: {metrics}");
    // The source reads at the table's pace: ~400 rows/s is ~30 KB/s, plus a few chunks held.
    assert!(
        read < size * 0.1,
        "read {read} of {size} bytes: the source did not stop"
    );
    assert!(
        read - read_at_1s < (16 << 20) as f64,
        "read {} bytes in 3 s while the table took {written} rows",
        read - read_at_1s
    );
    assert!(
        rss_max < rss_at_1s + 32 * 1024,
        "memory grew from {rss_at_1s} KiB to {rss_max} KiB while the table was throttled"
    );
}

/// Bytes the process has read (`rchar`: read calls and io_uring reads alike).
fn read_bytes(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

fn proc_kib(pid: u32, file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
/// A job writing `n` rows at 20 000 records/s into `table` on `pg`.
fn steady_job(d: &Path, pg: &Pg, table: &str, n: u64, extra: &str) -> String {
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{{\"id\":{i},\"v\":{}.{:02},\"ts\":{}}}\n",
                i % 97,
                i % 100,
                1_000 + i
            )
        })
        .collect();
    std::fs::write(d.join("in.ndjson"), text).unwrap();
    let cfg = d.join(format!("{table}.toml"));
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 2\nchunk_bytes = 65536\n\n[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\nrate_limit = \"20000/s\"\n\n\
             [transforms.rows]\ntype = \"select\"\ninputs = [\"ev\"]\nfields = {{ id = \"id\", v = \"v\" }}\n\n\
             [sinks.db]\ntype = \"postgres\"\ninputs = [\"rows\"]\nurl = \"{}\"\ntable = \"{table}\"\nkey = [\"id\"]\n\
             create_table = true\nbatch = {{ rows = 500, max_delay = \"50ms\" }}\n{extra}\n",
            toml_str(&d.join("in.ndjson").to_string_lossy()),
            pg.url()
        ),
    )
    .unwrap();
    cfg.to_string_lossy().into_owned()
}

#[test]
fn a_server_stopped_for_5s_is_retried_and_one_that_stays_away_stops_the_job() {
    let pg = Pg::own(55491);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = steady_job(
        d,
        &pg,
        "outage",
        100_000,
        "retry = { initial = \"50ms\", max = \"500ms\", max_retry_time = \"30s\" }",
    );
    let mut child = Command::new(common::BIN)
        .args(["run", "--config", &cfg])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(d.join("err.txt")).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    pg.stop();
    std::thread::sleep(Duration::from_secs(5));
    pg.start();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < MIN,
            "the job did not finish after the server came back"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = std::fs::read_to_string(d.join("err.txt")).unwrap();
    assert!(status.success(), "{err}");
    assert!(err.contains("retrying"), "no retry was logged: {err}");
    let rows = pg.sql("SELECT count(*), sum(id), sum(v)::text FROM outage");
    // Hand-computed: ids 0..99 999; v = (i % 97) + (i % 100) / 100.
    let want_v: i64 = (0..100_000i64).map(|i| (i % 97) * 100 + i % 100).sum();
    let want = format!("100000\t4999950000\t{}.{:02}", want_v / 100, want_v % 100);
    assert_eq!(rows, [want]);

    // Away for good: past max_retry_time the job stops with a clear message.
    let cfg = steady_job(
        d,
        &pg,
        "outage2",
        100_000,
        "retry = { initial = \"50ms\", max = \"200ms\", max_retry_time = \"2s\" }",
    );
    let mut child = Command::new(common::BIN)
        .args(["run", "--config", &cfg])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(d.join("err2.txt")).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    pg.stop();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > MIN {
            let _ = child.kill();
            panic!("the job kept running with the database gone");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = std::fs::read_to_string(d.join("err2.txt")).unwrap();
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("PostgreSQL unreachable") && err.contains("max_retry_time"),
        "{err}"
    );
}

/// Rows the table refuses (a name too long for VARCHAR(5), a fraction for a BIGINT) go to the
/// dead letters with the server's message; every other row of their batches is written.
#[test]
fn values_that_do_not_fit_go_to_the_dead_letters_with_the_servers_message() {
    let pg = Pg::shared();
    pg.sql("DROP TABLE IF EXISTS narrow; CREATE TABLE narrow (id text PRIMARY KEY, name varchar(5), n bigint)");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = [
        r#"{"id":"a","name":"ann","n":1,"ts":1}"#,
        r#"{"id":"b","name":"much too long","n":2,"ts":2}"#,
        r#"{"id":"c","name":"cy","n":3.5,"ts":3}"#,
        r#"{"id":"d","name":"dee","n":4,"ts":4}"#,
        r#"{"id":"e","name":null,"n":5,"ts":5}"#,
    ];
    std::fs::write(d.join("in.ndjson"), input.join("\n") + "\n").unwrap();
    let cfg = d.join("job.toml");
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 1\n\n[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n\n\
             [transforms.rows]\ntype = \"select\"\ninputs = [\"ev\"]\nfields = {{ id = \"id\", name = \"name\", n = \"n\" }}\n\n\
             [sinks.db]\ntype = \"postgres\"\ninputs = [\"rows\"]\nurl = \"{}\"\ntable = \"narrow\"\nkey = [\"id\"]\n\n\
             [dead_letter]\npath = {}\n",
            toml_str(&d.join("in.ndjson").to_string_lossy()),
            pg.url(),
            toml_str(&d.join("dead.ndjson").to_string_lossy()),
        ),
    )
    .unwrap();
    let exit = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN);
    assert!(exit.success, "{}", exit.stderr);
    assert_eq!(
        pg.sql("SELECT id, coalesce(name, '-'), n FROM narrow ORDER BY id"),
        ["a\tann\t1", "d\tdee\t4", "e\t-\t5"]
    );
    let dead: Vec<serde_json::Value> = read_lines(&d.join("dead.ndjson"))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(dead.len(), 2, "{dead:?}");
    let by_id = |id: &str| {
        dead.iter()
            .find(|v| {
                v["raw"]
                    .as_str()
                    .unwrap_or("")
                    .contains(&format!("\"id\":\"{id}\""))
            })
            .unwrap_or_else(|| panic!("no dead letter for {id}: {dead:?}"))
    };
    assert!(by_id("b")["reason"]
        .as_str()
        .unwrap()
        .contains("value too long for type character varying(5)"));
    assert!(by_id("c")["reason"]
        .as_str()
        .unwrap()
        .contains("invalid input syntax for type bigint"));
    assert_eq!(by_id("b")["sink"], "db");
}

#[test]
fn bad_postgres_configs_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.ndjson"), "{\"id\":1,\"ts\":1}\n").unwrap();
    let job = |sink: &str| {
        let cfg = d.join("bad.toml");
        std::fs::write(
            &cfg,
            format!(
                "[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
                 event_time = {{ field = \"ts\", unit = \"ms\" }}\n\n\
                 [transforms.rows]\ntype = \"select\"\ninputs = [\"ev\"]\nfields = {{ id = \"id\" }}\n\n\
                 [sinks.db]\ntype = \"postgres\"\ninputs = [\"rows\"]\ntable = \"t\"\n{sink}\n",
                toml_str(&d.join("in.ndjson").to_string_lossy())
            ),
        )
        .unwrap();
        cfg.to_string_lossy().into_owned()
    };
    let cases = [
        (
            "url_env = \"SLUICE_TEST_NO_SUCH_VARIABLE\"",
            "SLUICE_TEST_NO_SUCH_VARIABLE",
        ),
        ("", "give exactly one of `url`"),
        (
            "url = \"postgresql://a@b/c\"\nurl_env = \"X\"",
            "give exactly one of `url`",
        ),
        (
            "url = \"postgresql://a@127.0.0.1:1/c\"\ncolumns = { id = \"uuid\" }",
            "`uuid` is not a column type",
        ),
        (
            "url = \"postgresql://a@127.0.0.1:1/c\"\nbatch = { rows = 0 }",
            "batch.rows",
        ),
        (
            "url = \"postgresql://a@127.0.0.1:1/c\"\nmax_inflight = 2",
            "max_inflight",
        ),
    ];
    for (sink, want) in cases {
        let exit = sluice(d, &["validate", "--config", &job(sink)], MIN);
        assert!(
            !exit.success && exit.stderr.contains(want),
            "{sink}: {}",
            exit.stderr
        );
        assert!(
            exit.stderr.contains("bad.toml"),
            "{sink}: no file named: {}",
            exit.stderr
        );
    }
    // A key that lets two shards write one row (a window input's group field left out) is refused
    // before anything runs.
    let cfg = d.join("key.toml");
    std::fs::write(
        &cfg,
        format!(
            "[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n\n\
             [transforms.w]\ntype = \"window\"\ninputs = [\"ev\"]\ngroup_by = [\"id\"]\n\
             window = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ n = \"count()\" }}\n\n\
             [sinks.db]\ntype = \"postgres\"\ninputs = [\"w\"]\ntable = \"t\"\n\
             url = \"postgresql://a@127.0.0.1:1/c\"\nkey = [\"window_start\"]\n",
            toml_str(&d.join("in.ndjson").to_string_lossy())
        ),
    )
    .unwrap();
    let exit = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN);
    assert!(
        !exit.success && exit.stderr.contains("`key` must include `id`"),
        "{}",
        exit.stderr
    );
    // A database nobody answers on: the run fails at once, naming the sink.
    let exit = sluice(
        d,
        &[
            "run",
            "--config",
            &job("url = \"postgresql://a@127.0.0.1:1/c\""),
        ],
        MIN,
    );
    assert!(
        !exit.success
            && exit
                .stderr
                .contains("sink `db`: cannot connect to PostgreSQL"),
        "{}",
        exit.stderr
    );
}
