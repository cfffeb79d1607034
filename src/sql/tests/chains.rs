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
