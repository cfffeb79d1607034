//! Two-phase GROUP BY from SQL: Flink's mini-batch settings turn on the combining of hot groups
//! (`hot_keys = auto`) where Flink would split the aggregate into a local and a global phase, a
//! `sluice.hot_keys` hint sets it on one query, and what cannot combine stays one-phase or is
//! refused where it is written.

use super::{compiled, job, refusal, CLICKS};
use crate::config::{HotKeyMode, TransformConfig};
use crate::sql::Compiled;

const OUT: &str = "CREATE TABLE o (ad_id STRING, n BIGINT, s BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'out/o', 'format' = 'debezium-json');
";
const QUERY: &str = "INSERT INTO o SELECT ad_id, COUNT(*), SUM(bid) FROM clicks GROUP BY ad_id;\n";

/// The `hot_keys` mode of each group aggregate of `c`, in order.
fn modes(c: &Compiled) -> Vec<HotKeyMode> {
    (c.transforms.iter())
        .filter_map(|(_, t)| match t {
            TransformConfig::GroupAggregate(g) => Some(g.hot_keys.mode),
            _ => None,
        })
        .collect()
}

fn with(settings: &str, query: &str) -> String {
    format!("{settings}{CLICKS}{OUT}{query}")
}

#[test]
fn mini_batch_turns_on_two_phase_group_aggregates_unless_one_phase_is_asked() {
    let on = "SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.allow-latency' = '2 s';\nSET 'table.exec.mini-batch.size' = '5000';\n";
    for (settings, want) in [
        ("", HotKeyMode::Off),
        (on, HotKeyMode::Auto),
        (
            &*format!("{on}SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';\n"),
            HotKeyMode::Auto,
        ),
        (
            &*format!("{on}SET 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE';\n"),
            HotKeyMode::Off,
        ),
        // Flink's local phase folds a mini-batch: without one it aggregates in one phase.
        (
            "SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';\n",
            HotKeyMode::Off,
        ),
        (
            "SET 'table.exec.mini-batch.enabled' = 'false';\n",
            HotKeyMode::Off,
        ),
    ] {
        let sql = with(settings, QUERY);
        assert_eq!(modes(&compiled(&sql)), [want], "{settings}");
        job(&sql);
    }
    // A GROUP BY over another GROUP BY's result reads an operator, not a source: one phase.
    let nested = "CREATE VIEW per_user AS SELECT user_id, ad_id, COUNT(*) AS c FROM clicks GROUP BY user_id, ad_id;
INSERT INTO o SELECT ad_id, COUNT(*), SUM(c) FROM per_user GROUP BY ad_id;\n";
    let sql = with(on, nested);
    assert_eq!(modes(&compiled(&sql)), [HotKeyMode::Auto, HotKeyMode::Off]);
    job(&sql);
    // FIRST_VALUE and MAX of a string keep values, which do not merge: one phase, as in Flink.
    let out = "CREATE TABLE f (ad_id STRING, first_user BIGINT, n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'out/f', 'format' = 'debezium-json');
INSERT INTO f SELECT ad_id, FIRST_VALUE(user_id), COUNT(*) FROM clicks GROUP BY ad_id;\n";
    let sql = with(on, out);
    assert_eq!(modes(&compiled(&sql)), [HotKeyMode::Off]);
    job(&sql);
}

#[test]
fn a_hint_sets_one_group_aggregates_hot_keys() {
    let q = "INSERT INTO o SELECT ad_id, COUNT(*), SUM(bid) FROM clicks /*+ OPTIONS('sluice.hot_keys' = 'salt', 'sluice.hot_keys.salt' = '2') */ GROUP BY ad_id;\n";
    let c = compiled(&with("", q));
    assert_eq!(modes(&c), [HotKeyMode::Salt]);
    job(&with("", q));
    // The hint wins over the session's settings.
    let off = "INSERT INTO o SELECT ad_id, COUNT(*), SUM(bid) FROM clicks /*+ OPTIONS('sluice.hot_keys' = 'off') */ GROUP BY ad_id;\n";
    let sql = with("SET 'table.exec.mini-batch.enabled' = 'true';\n", off);
    assert_eq!(modes(&compiled(&sql)), [HotKeyMode::Off]);
}

#[test]
fn what_cannot_combine_is_refused_where_it_is_written() {
    let late = "INSERT INTO o SELECT ad_id, COUNT(*), SUM(bid) FROM clicks /*+ OPTIONS('sluice.allowed_lateness' = '5 s') */ GROUP BY ad_id;\n";
    let (line, _, msg) = refusal(&with("", late));
    assert_eq!(line, 8, "{msg}");
    assert!(
        msg.contains("a GROUP BY without one has no lateness"),
        "{msg}"
    );
    for (set, want) in [
        (
            "SET 'table.exec.mini-batch.enabled' = 'yes';\n",
            "expected 'true' or 'false'",
        ),
        (
            "SET 'table.optimizer.agg-phase-strategy' = 'THREE';\n",
            "expected AUTO, ONE_PHASE or TWO_PHASE",
        ),
    ] {
        let (line, _, msg) = refusal(&with(set, QUERY));
        assert_eq!(line, 1, "{msg}");
        assert!(msg.contains(want), "{msg}");
    }
}
