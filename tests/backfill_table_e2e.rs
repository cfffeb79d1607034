//! `scripts/backfill.sh` into a new PostgreSQL table: the replay from a start time writes
//! `<table>_vN` (never the live table), and its per-window comparison with the live table reports
//! nothing when they agree and exactly the planted differences when they do not (a changed sum and
//! a missing row after the start; a change before the start is outside the replay and not
//! reported).

mod common;

use common::pg::Pg;
use common::toml_str;
use std::path::Path;
use std::process::Command;

/// 2026-11-01T00:00:00Z.
const BASE: i64 = 1_793_491_200_000;

fn live_job(d: &Path, pg: &Pg) -> String {
    let text: String = (0..3000i64)
        .map(|i| {
            let k = ["a", "b", "c"][(i % 3) as usize];
            format!(
                "{{\"k\":\"{k}\",\"v\":{}.25,\"ts\":{}}}\n",
                i % 7,
                BASE + i * 600
            )
        })
        .collect();
    std::fs::write(d.join("in.ndjson"), text).unwrap();
    let cfg = d.join("live.toml");
    std::fs::write(
        &cfg,
        format!(
            "[runtime]\nshards = 2\n\n[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n\n\
             [transforms.per_minute]\ntype = \"window\"\ninputs = [\"ev\"]\ngroup_by = [\"k\"]\n\
             window = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ n = \"count()\", total = \"sum(v)\" }}\n\n\
             [sinks.db]\ntype = \"postgres\"\ninputs = [\"per_minute\"]\nurl = \"{}\"\ntable = \"bf_live\"\n\
             key = [\"k\", \"window_start\"]\ncreate_table = true\n",
            toml_str(&d.join("in.ndjson").to_string_lossy()),
            pg.url()
        ),
    )
    .unwrap();
    cfg.to_string_lossy().into_owned()
}

fn backfill(d: &Path, cfg: &str, suffix: &str) -> (i32, String) {
    let out = d.join(format!("bf{suffix}"));
    let r = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/backfill.sh"))
        .args([cfg, "2026-11-01T00:10:00Z", "20000", &out.to_string_lossy()])
        .env("SLUICE_BIN", common::BIN)
        .env("SUFFIX", suffix)
        .env("PORT", common::free_addr().rsplit(':').next().unwrap())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
    (r.status.code().unwrap_or(-1), text)
}

#[test]
fn a_backfill_writes_a_new_table_and_its_comparison_finds_planted_differences() {
    let pg = Pg::shared();
    pg.sql("DROP TABLE IF EXISTS bf_live, bf_live_v1, bf_live_v2");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = live_job(d, pg);
    let run = common::sluice(
        d,
        &["run", "--config", &cfg],
        std::time::Duration::from_secs(60),
    );
    assert!(run.success, "{}", run.stderr);
    // 30 minutes of three keys: 90 rows; 20 minutes of them from the start on.
    assert_eq!(pg.sql("SELECT count(*) FROM bf_live"), ["90"]);

    let (code, text) = backfill(d, &cfg, "_v1");
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("`bf_live_v1` equals `bf_live` over 20 windows"),
        "{text}"
    );
    assert!(
        text.contains("CREATE OR REPLACE VIEW \"bf_live_live\" AS SELECT * FROM \"bf_live_v1\""),
        "{text}"
    );
    assert_eq!(
        pg.sql("SELECT count(*) FROM bf_live_v1"),
        ["60"],
        "only windows from the start"
    );

    let (w1, w2, w0) = (BASE + 12 * 60_000, BASE + 25 * 60_000, BASE + 3 * 60_000);
    pg.sql(&format!(
        "UPDATE bf_live SET total = total + 1 WHERE k = 'a' AND window_start = {w1}; \
         DELETE FROM bf_live WHERE k = 'b' AND window_start = {w2}; \
         UPDATE bf_live SET n = n + 5 WHERE window_start = {w0}"
    ));
    let (code, text) = backfill(d, &cfg, "_v2");
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("2 of 20 windows differ"), "{text}");
    let listed: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().split('\t').next())
        .filter(|f| f.parse::<i64>().is_ok())
        .collect();
    assert_eq!(listed, [w1.to_string(), w2.to_string()], "{text}");
    assert!(
        text.contains("records read") || text.contains("backfill: done"),
        "{text}"
    );
}
