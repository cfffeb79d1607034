//! Chains of joins in one FROM (`a JOIN b ON .. LEFT JOIN c ON ..`): joined left to right, each
//! join of the kind its own conditions make it, references to earlier relations read from the
//! joined rows, `*` expanded, and refusals still pointing at what the query wrote.

use super::{job, refusal};
use crate::config::{Config, TransformConfig};

const TABLES: &str = "CREATE TABLE imps (imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/imps.ndjson', 'format' = 'json');
CREATE TABLE cl (click_id BIGINT, imp_id BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/cl.ndjson', 'format' = 'json');
CREATE TABLE ads (ad_id STRING, owner STRING) WITH ('connector' = 'filesystem', 'path' = 'data/ads.ndjson', 'format' = 'json');
CREATE TABLE owners (owner STRING, tier STRING) WITH ('connector' = 'filesystem', 'path' = 'data/owners.ndjson', 'format' = 'json');
";

/// The kinds of the joins of `cfg`, in the order they were made.
fn joins(cfg: &Config) -> Vec<(String, String)> {
    (cfg.transforms.iter())
        .filter_map(|(name, t)| match t {
            TransformConfig::Join(j) => Some((name.clone(), format!("{:?} on {:?}", j.kind, j.on))),
            TransformConfig::IntervalJoin(j) => {
                Some((name.clone(), format!("interval {:?} on {:?}", j.kind, j.on)))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn three_and_four_relations_join_left_to_right() {
    let sql = format!("{TABLES}CREATE TABLE o (imp_id BIGINT, click_id BIGINT, owner STRING, tier STRING) WITH ('connector' = 'print');
INSERT INTO o
SELECT i.imp_id, c.click_id, a.owner, w.tier
FROM imps AS i
JOIN cl AS c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '10' SECOND
LEFT JOIN ads AS a ON i.ad_id = a.ad_id
LEFT JOIN owners w ON a.owner = w.owner
WHERE c.click_id > 0;");
    let cfg = job(&sql);
    let made = joins(&cfg);
    assert_eq!(made.len(), 3, "{made:?}");
    // The first is an interval join (its bounds), the others regular LEFT joins over the rows
    // before them.
    assert!(
        made.iter().any(|(_, k)| k.starts_with("interval Inner")),
        "{made:?}"
    );
    assert_eq!(
        made.iter().filter(|(_, k)| k.starts_with("Left")).count(),
        2,
        "{made:?}"
    );
}

#[test]
fn star_and_unqualified_names_read_the_joined_rows() {
    let sql = format!("{TABLES}CREATE TABLE o (imp_id BIGINT, ad_id STRING, ts BIGINT, rt TIMESTAMP_LTZ(3), click_id BIGINT,
  imp_id2 BIGINT, ts2 BIGINT, rt2 TIMESTAMP_LTZ(3), ad_id2 STRING, owner STRING)
WITH ('connector' = 'print');
INSERT INTO o
SELECT * FROM imps AS i JOIN cl AS c ON i.imp_id = c.imp_id JOIN ads AS a ON ad_id = a.ad_id;");
    // `ad_id` is only in imps among the first two; `*` is imps', cl's, then ads' columns (the
    // computed `rt` too, as in Flink).
    let cfg = job(&sql);
    assert_eq!(joins(&cfg).len(), 2);
}

#[test]
fn refusals_in_a_later_join_point_at_it() {
    let sql = format!(
        "{TABLES}CREATE TABLE o (imp_id BIGINT, owner STRING) WITH ('connector' = 'print');
INSERT INTO o
SELECT i.imp_id, a.owner
FROM imps AS i JOIN cl AS c ON i.imp_id = c.imp_id
JOIN ads AS a ON i.ad_id = a.ad_id AND a.owner = i.nope;"
    );
    let (line, col, message) = refusal(&sql);
    assert!(
        message.contains("`i.nope`") && message.contains("(i, c, a)"),
        "{message}"
    );
    assert_eq!((line, col), (13, 50), "{message}");
}

#[test]
fn an_outer_joins_conditions_on_both_sides_are_the_joins_own() {
    // A LEFT join's `c.click_id > i.imp_id` decides which clicks match each impression (the
    // others leave it NULL-padded), so the join evaluates it, over its joined record; a
    // condition on one side is a gate or a filter before it, as before; an inner join's stays a
    // filter of its pairs.
    let sql = format!(
        "{TABLES}CREATE TABLE o (imp_id BIGINT, click_id BIGINT) WITH ('connector' = 'print');
INSERT INTO o
SELECT i.imp_id, c.click_id FROM imps AS i LEFT JOIN cl AS c
  ON i.imp_id = c.imp_id AND c.click_id > i.imp_id AND c.ts < i.ts + 1000 AND c.click_id <> 7;"
    );
    let cfg = job(&sql);
    let TransformConfig::Join(j) = &cfg.transforms["insert_1_o_join"] else {
        panic!("{:?}", cfg.transforms.keys());
    };
    let cond = j.condition.as_deref().expect("the join's condition");
    assert!(
        cond.contains("right.click_id > left.imp_id")
            && cond.contains("right.ts < (left.ts + 1000)"),
        "{cond}"
    );
    assert!(
        !cond.contains("<> 7"),
        "a one-side condition is not the join's: {cond}"
    );
    let inner = job(&sql.replace("LEFT JOIN", "JOIN"));
    let TransformConfig::Join(j) = &inner.transforms["insert_1_o_join"] else {
        panic!("{:?}", inner.transforms.keys());
    };
    assert_eq!(
        j.condition, None,
        "an inner join filters its pairs after it"
    );
    // With a state TTL an outer join pads a row once it expires unmatched (an interval join
    // of +-TTL): it has no condition of its own, so one reading both sides is refused there.
    let ttl = format!("SET 'table.exec.state.ttl' = '1 h';\n{sql}");
    let (_, _, m) = refusal(&ttl);
    assert!(
        m.contains("with table.exec.state.ttl set, in an outer join, a condition in ON that reads both sides"),
        "{m}"
    );
}

#[test]
fn an_outer_join_with_a_state_ttl_expires_its_rows_and_stays_append_only() {
    // Into an append-only file sink: a row is padded only once its TTL has passed unmatched,
    // so nothing is ever taken back.
    let sql = format!("SET 'table.exec.state.ttl' = '1 h';
{TABLES}CREATE TABLE o (imp_id BIGINT, click_id BIGINT) WITH ('connector' = 'filesystem', 'path' = 'o', 'format' = 'json');
INSERT INTO o
SELECT i.imp_id, c.click_id FROM imps AS i FULL OUTER JOIN cl AS c ON i.imp_id = c.imp_id AND c.click_id <> 7;");
    let cfg = job(&sql);
    let TransformConfig::Join(j) = &cfg.transforms["insert_1_o_join"] else {
        panic!("{:?}", cfg.transforms.keys());
    };
    assert_eq!(j.ttl.map(|t| t.as_millis()), Some(3_600_000));
    assert_eq!(j.kind, crate::config::IntervalJoinKind::Full);
    assert_eq!(j.condition, None);
    // Over an updating input (a GROUP BY view) the TTL cannot be kept in event time.
    let grouped = format!(
        "SET 'table.exec.state.ttl' = '1 h';
{TABLES}CREATE VIEW per_imp AS SELECT imp_id, COUNT(*) AS n FROM cl GROUP BY imp_id;
CREATE TABLE u (imp_id BIGINT, n BIGINT) WITH ('connector' = 'print');
INSERT INTO u SELECT i.imp_id, p.n FROM imps AS i LEFT JOIN per_imp AS p ON i.imp_id = p.imp_id;"
    );
    let (_, _, m) = refusal(&grouped);
    assert!(
        m.contains("this join reads an updating result: remove the SET"),
        "{m}"
    );
}
