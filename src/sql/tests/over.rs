//! OVER aggregations in SQL: what a query with `AGG(x) OVER (...)` or `OVER w ... WINDOW w AS`
//! compiles to (its frame, partition and aggregates, the select reading them), and the windows
//! Flink's streaming mode refuses, refused here with where and why.

use super::{job, refusal, select_fields, transform, CLICKS};
use crate::config::TransformConfig;
use crate::operators::over_agg::config::{FrameUnit, OverAggregateConfig, Preceding};

const SINK: &str =
    "CREATE TABLE spend (ad_id STRING, bid BIGINT, n BIGINT, total BIGINT, avg_bid BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'out/spend', 'format' = 'json');
";

fn over(cfg: &crate::config::Config) -> &OverAggregateConfig {
    let mut found = cfg.transforms.values().filter_map(|t| match t {
        TransformConfig::OverAggregate(o) => Some(o),
        _ => None,
    });
    let o = found.next().expect("an over aggregate");
    assert!(found.next().is_none());
    o
}

#[test]
fn a_rows_window_becomes_an_over_aggregate_read_by_the_select() {
    let sql = format!(
        "{CLICKS}{SINK}INSERT INTO spend
SELECT ad_id, bid, COUNT(*) OVER w, SUM(bid) OVER w, AVG(bid) OVER w FROM clicks WHERE bid > 0
WINDOW w AS (PARTITION BY ad_id ORDER BY rt ROWS BETWEEN 10 PRECEDING AND CURRENT ROW);"
    );
    let cfg = job(&sql);
    let o = over(&cfg);
    assert_eq!(o.partition_by, ["ad_id"]);
    assert_eq!(
        (o.frame, o.preceding.clone()),
        (FrameUnit::Rows, Some(Preceding::Rows(10)))
    );
    assert_eq!(o.inputs, ["insert_1_spend_where"]);
    let aggs: Vec<(&str, &str)> = o
        .aggregates
        .0
        .iter()
        .map(|(n, a)| (n.as_str(), a.as_str()))
        .collect();
    assert_eq!(
        aggs,
        [("_a0", "count()"), ("_a1", "sum(bid)"), ("_a2", "avg(bid)")]
    );
    let c = super::compiled(&sql);
    let fields: Vec<(&str, &str)> = (select_fields(&c, "insert_1_spend").iter())
        .map(|(n, e)| (n.as_str(), e.as_str()))
        .collect();
    // AVG of a BIGINT is a BIGINT in Flink: the quotient truncated.
    assert_eq!(
        fields[2..],
        [("n", "_a0"), ("total", "_a1"), ("avg_bid", "to_int(_a2)")]
    );
    assert!(matches!(
        transform(&c, "insert_1_spend_over"),
        TransformConfig::OverAggregate(_)
    ));
}

#[test]
fn range_unbounded_and_default_frames() {
    let cases = [
        (
            "RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW",
            FrameUnit::Range,
            Some(Preceding::Text("60000ms".into())),
        ),
        (
            "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
            FrameUnit::Rows,
            None,
        ),
        ("RANGE UNBOUNDED PRECEDING", FrameUnit::Range, None),
        ("", FrameUnit::Range, None),
        (
            "ROWS 3 PRECEDING",
            FrameUnit::Rows,
            Some(Preceding::Rows(3)),
        ),
    ];
    for (frame, unit, preceding) in cases {
        let sql = format!(
            "{CLICKS}{SINK}INSERT INTO spend
SELECT ad_id, bid, COUNT(*) OVER (ORDER BY rt {frame}), 0, 0 FROM clicks;"
        );
        let o = over(&job(&sql)).clone();
        assert!(o.partition_by.is_empty(), "{frame}");
        assert_eq!((o.frame, o.preceding), (unit, preceding), "{frame}");
    }
}

#[test]
fn windows_flink_streaming_refuses_are_refused_with_where_and_why() {
    let q = |items: &str, rest: &str| {
        format!(
            "{CLICKS}{SINK}INSERT INTO spend\nSELECT ad_id, bid, {items}, 0, 0 FROM clicks {rest};"
        )
    };
    let cases = [
        (
            q("COUNT(*) OVER (PARTITION BY ad_id ORDER BY bid)", ""),
            63,
            "ordered by the input's time attribute ascending",
        ),
        (
            q("COUNT(*) OVER (ORDER BY rt DESC)", ""),
            44,
            "ordered by the input's time attribute ascending",
        ),
        (
            q(
                "COUNT(*) OVER (ORDER BY rt ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
                "",
            ),
            20,
            "must end at CURRENT ROW",
        ),
        (
            q(
                "COUNT(*) OVER (ORDER BY rt), SUM(bid) OVER (ORDER BY rt ROWS 2 PRECEDING)",
                "",
            ),
            49,
            "the same window",
        ),
        (q("COUNT(*) OVER w", ""), 34, "no window `w`"),
        (
            q("COUNT(*) OVER (ORDER BY rt), SUM(bid)", ""),
            49,
            "without OVER",
        ),
        (
            q("COUNT(*) OVER (PARTITION BY UPPER(ad_id) ORDER BY rt)", ""),
            48,
            "PARTITION BY other than columns",
        ),
    ];
    let grouped = format!("{CLICKS}{SINK}CREATE VIEW per_ad AS SELECT ad_id, COUNT(*) AS n FROM clicks GROUP BY ad_id;
INSERT INTO spend
SELECT ad_id, n, COUNT(*) OVER (ORDER BY n), 0, 0 FROM per_ad;");
    let (line, col, message) = refusal(&grouped);
    assert!(message.contains("reads an append-only input"), "{message}");
    assert_eq!((line, col), (10, 1), "{message}");
    // Each points at what is wrong: the ORDER BY column, the frame, the second window, ...
    for (sql, column, want) in cases {
        let (line, col, message) = refusal(&sql);
        assert!(message.contains(want), "{message}\n{sql}");
        assert_eq!(line, 9, "{message}");
        assert_eq!(col, column, "{message}");
    }
}
