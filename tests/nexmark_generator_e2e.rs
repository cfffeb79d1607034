//! The built-in Nexmark source (`type = "generator"`, `model = "nexmark"`) through the real
//! binary, against `sluice loadgen nexmark`'s files as the independent expectation: each table's
//! records are, as a multiset of lines, the file loadgen writes for it with the same seed, rate
//! and event count, on 1 shard and on 2; and a query of `benches/nexmark/` over the generator
//! (its raw tables declared with `'connector' = 'nexmark'`) gives the rows it gives over the
//! files, which are also the reference model's rows. A job killed after a checkpoint resumes
//! from it and ends with exactly the table's file (the position is the chunks made, as for the
//! click generator).

mod common;

use common::nexmark_model as model;
use common::sql::sql_job;
use common::{read_lines, sluice, toml_str, BIN};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// 20 000 events at 500 per second: 40 s of event time, so q5's 2 s hops number 20.
const EVENTS: &str = "20000";
const RATE: &str = "500";
const SEED: &str = "7";
const TABLES: [&str; 3] = ["person", "auction", "bid"];

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `sluice loadgen nexmark` into `dir/files`; returns that directory.
fn loadgen(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("files");
    let args = [
        "loadgen", "nexmark", "--events", EVENTS, "--rate", RATE, "--seed", SEED, "--out",
    ];
    let exit = sluice(
        dir,
        &[&args[..], &[&text(&out)]].concat(),
        Duration::from_secs(60),
    );
    assert!(exit.success, "loadgen: {}", exit.stderr);
    out
}

fn multiset(rows: impl IntoIterator<Item = String>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in rows {
        *m.entry(r).or_default() += 1;
    }
    m
}

/// A job of the three tables, each passed through a filter into `out/TABLE.ndjson`, on `shards`
/// shards with small chunks (so each shard makes several); returns each table's lines.
fn run_tables(dir: &Path, shards: usize) -> Vec<Vec<String>> {
    let out = dir.join(format!("out{shards}"));
    let mut toml = format!("[runtime]\nshards = {shards}\nchunk_bytes = 65536\n\n");
    for t in TABLES {
        toml += &format!(
            "[sources.{t}]\ntype = \"generator\"\nmodel = \"nexmark\"\ntable = \"{t}\"\n\
             count = {EVENTS}\nseed = {SEED}\nevents_per_second = {RATE}\n\
             watermark = {{ max_out_of_orderness = \"4s\" }}\n\n\
             [transforms.{t}_all]\ntype = \"filter\"\ninputs = [\"{t}\"]\nwhere = \"true\"\n\n\
             [sinks.{t}_out]\ntype = \"file\"\npath = {}\ninputs = [\"{t}_all\"]\n\n",
            toml_str(&text(&out.join(format!("{t}.ndjson"))))
        );
    }
    toml += &format!(
        "[dead_letter]\npath = {}\n",
        toml_str(&text(&out.join("dead.ndjson")))
    );
    let cfg = dir.join(format!("tables{shards}.toml"));
    std::fs::write(&cfg, toml).unwrap();
    let exit = sluice(
        dir,
        &["run", "--config", &text(&cfg)],
        Duration::from_secs(120),
    );
    assert!(exit.success, "{shards} shards: {}", exit.stderr);
    assert!(
        read_lines(&out.join("dead.ndjson")).is_empty(),
        "dead letters"
    );
    TABLES
        .iter()
        .map(|t| read_lines(&out.join(format!("{t}.ndjson"))))
        .collect()
}

#[test]
fn each_table_is_the_file_loadgen_writes_on_one_shard_and_on_two() {
    let d = tempfile::tempdir().unwrap();
    let files = loadgen(d.path());
    let one = run_tables(d.path(), 1);
    let two = run_tables(d.path(), 2);
    for (i, t) in TABLES.iter().enumerate() {
        let want = read_lines(&files.join(format!("{t}.ndjson")));
        assert!(want.len() >= 400, "{t}: only {} lines", want.len());
        // One shard reads the chunks in order: the file itself, line for line.
        assert_eq!(one[i], want, "{t}: 1 shard");
        assert_eq!(multiset(two[i].clone()), multiset(want), "{t}: 2 shards");
    }
}

/// `benches/nexmark/ddl.sql` + `q.sql`, over the files or (`generator`) with each raw table's
/// `WITH` options replaced by the Nexmark connector's; the sink's lines.
fn run_query(dir: &Path, files: &Path, q: &str, generator: bool) -> Vec<String> {
    let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/nexmark");
    let read = |f: &str| std::fs::read_to_string(benches.join(f)).unwrap();
    let mut ddl = read("ddl.sql");
    if generator {
        for t in TABLES {
            let from = format!(
                "'connector' = 'filesystem', 'path' = 'data/nexmark/{t}.ndjson', 'format' = 'json'"
            );
            assert!(ddl.contains(&from), "ddl.sql has no {from}");
            ddl = ddl.replace(
                &from,
                &format!(
                    "'connector' = 'nexmark', 'table' = '{t}', 'events.num' = '{EVENTS}', \
                     'first-event.rate' = '{RATE}', 'seed' = '{SEED}'"
                ),
            );
        }
    }
    let run = dir.join(format!("{q}_{}", if generator { "gen" } else { "files" }));
    std::fs::create_dir_all(&run).unwrap();
    let sql = format!("{ddl}\n{}", read(&format!("{q}.sql")))
        .replace("'data/nexmark/", &format!("'{}/", text(files)))
        .replace("'out/", &format!("'{}/", text(&run.join("out"))));
    let cfg = sql_job(&run, &sql, "");
    let exit = sluice(&run, &["run", "--config", &cfg], Duration::from_secs(120));
    assert!(exit.success, "{q}: {}", exit.stderr);
    assert!(
        read_lines(&run.join("dead.ndjson")).is_empty(),
        "{q}: dead letters"
    );
    read_lines(&run.join(format!("out/nexmark_{q}/part-0.json")))
}

#[test]
fn q2_and_q5_over_the_generator_give_the_rows_they_give_over_the_files() {
    let d = tempfile::tempdir().unwrap();
    let files = loadgen(d.path());
    let data = model::load(&files);
    for (q, expected, min) in [("q2", model::q2(&data), 5), ("q5", model::q5(&data), 10)] {
        let from_files = run_query(d.path(), &files, q, false);
        let from_gen = run_query(d.path(), &files, q, true);
        let canonical = |lines: &[String]| multiset(lines.iter().map(|l| model::canonical(l)));
        assert!(expected.len() >= min, "{q}: only {} rows", expected.len());
        assert_eq!(canonical(&from_gen), canonical(&from_files), "{q}");
        assert_eq!(canonical(&from_gen), multiset(expected), "{q}: the model");
    }
}

/// Killed (SIGKILL, by its handle) once a checkpoint exists, the job resumes from it on restart,
/// and its exactly-once file sink ends with the bid file, line for line as a multiset.
#[test]
fn a_killed_job_resumes_from_its_checkpoint_with_exactly_the_file() {
    const MANY: &str = "200000";
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let files = dir.join("files");
    let args = [
        "loadgen",
        "nexmark",
        "--events",
        MANY,
        "--out",
        &text(&files),
    ];
    assert!(sluice(dir, &args, Duration::from_secs(60)).success);
    let (ckpt, out) = (dir.join("ckpt"), dir.join("out/bid.ndjson"));
    // The rate limit makes the run last about 5 s, so the kill lands mid-run.
    let toml = format!(
        "[runtime]\nshards = 2\nchunk_bytes = 65536\n\n\
         [checkpoint]\ndir = {}\ninterval = \"200ms\"\n\n\
         [sources.bid]\ntype = \"generator\"\nmodel = \"nexmark\"\ntable = \"bid\"\n\
         count = {MANY}\nrate_limit = \"40000/s\"\n\n\
         [transforms.all]\ntype = \"filter\"\ninputs = [\"bid\"]\nwhere = \"true\"\n\n\
         [sinks.out]\ntype = \"file\"\npath = {}\ninputs = [\"all\"]\n",
        toml_str(&text(&ckpt)),
        toml_str(&text(&out))
    );
    let cfg = dir.join("job.toml");
    std::fs::write(&cfg, toml).unwrap();
    let mut child = std::process::Command::new(BIN)
        .args(["run", "--config", &text(&cfg)])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    // A checkpoint is complete once its manifest is written.
    let has_checkpoint = || {
        std::fs::read_dir(&ckpt).is_ok_and(|r| {
            r.flatten().any(|e| {
                e.file_name().to_string_lossy().starts_with("chk-")
                    && e.path().join("manifest.json").exists()
            })
        })
    };
    while !has_checkpoint() && start.elapsed() < Duration::from_secs(60) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the job ended before a checkpoint"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let exit = sluice(
        dir,
        &["run", "--config", &text(&cfg)],
        Duration::from_secs(120),
    );
    assert!(exit.success, "restart: {}", exit.stderr);
    assert!(
        exit.stderr.contains("resuming from checkpoint"),
        "{}",
        exit.stderr
    );
    let want = read_lines(&files.join("bid.ndjson"));
    assert_eq!(multiset(read_lines(&out)), multiset(want));
}
