//! Flink's legacy group windows (`GROUP BY TUMBLE(rt, ..)`, `HOP`, `SESSION` with
//! `TUMBLE_START`/`_END`/`_ROWTIME`): each compiles to exactly the job its window table function
//! form compiles to, and what the rewrite cannot take is refused where the query wrote it.

use super::{compiled, job, refusal, CLICKS};

const OUT: &str =
    "CREATE TABLE o (ad_id STRING, ws TIMESTAMP(3), we TIMESTAMP(3), wt TIMESTAMP(3), n BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'out/o', 'format' = 'json');
";

/// Both forms compile to the same tables, and the legacy one validates as a job.
fn same(legacy: &str, tvf: &str) {
    let (a, b) = (
        format!("{CLICKS}{OUT}{legacy}"),
        format!("{CLICKS}{OUT}{tvf}"),
    );
    assert_eq!(compiled(&a).toml(), compiled(&b).toml(), "{legacy}");
    job(&a);
}

#[test]
fn tumble_hop_and_session_group_windows_are_their_table_functions() {
    same(
        "INSERT INTO o SELECT ad_id, TUMBLE_START(rt, INTERVAL '1' MINUTE), TUMBLE_END(rt, INTERVAL '1' MINUTE), TUMBLE_ROWTIME(rt, INTERVAL '1' MINUTE), COUNT(*)
FROM clicks GROUP BY ad_id, TUMBLE(rt, INTERVAL '1' MINUTE)",
        "INSERT INTO o SELECT ad_id, window_start, window_end, window_time, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end",
    );
    same(
        "INSERT INTO o SELECT c.ad_id, hop_start(c.rt, INTERVAL '10' SECOND, INTERVAL '1' MINUTE), HOP_END(c.rt, INTERVAL '10' SECOND, INTERVAL '1' MINUTE), HOP_ROWTIME(c.rt, INTERVAL '10' SECOND, INTERVAL '1' MINUTE), COUNT(*)
FROM clicks AS c WHERE c.bid > 3 GROUP BY HOP(c.rt, INTERVAL '10' SECOND, INTERVAL '1' MINUTE), c.ad_id HAVING COUNT(*) > 2",
        "INSERT INTO o SELECT c.ad_id, window_start, window_end, window_time, COUNT(*)
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(rt), INTERVAL '10' SECOND, INTERVAL '1' MINUTE)) AS c WHERE c.bid > 3 GROUP BY c.ad_id, window_start, window_end HAVING COUNT(*) > 2",
    );
    // A session is per group: the other GROUP BY columns are its PARTITION BY.
    same(
        "INSERT INTO o SELECT ad_id, SESSION_START(rt, INTERVAL '30' SECOND), SESSION_END(rt, INTERVAL '30' SECOND), SESSION_ROWTIME(rt, INTERVAL '30' SECOND), COUNT(*)
FROM clicks GROUP BY ad_id, SESSION(rt, INTERVAL '30' SECOND)",
        "INSERT INTO o SELECT ad_id, window_start, window_end, window_time, COUNT(*)
FROM TABLE(SESSION(TABLE clicks PARTITION BY ad_id, DESCRIPTOR(rt), INTERVAL '30' SECOND)) GROUP BY ad_id, window_start, window_end",
    );
}

#[test]
fn what_a_group_window_cannot_be_is_refused_where_it_is_written() {
    let cases = [
        ("INSERT INTO o SELECT ad_id, TUMBLE_START(rt, INTERVAL '1' MINUTE), TUMBLE_END(rt, INTERVAL '1' MINUTE), TUMBLE_PROCTIME(rt, INTERVAL '1' MINUTE), COUNT(*)\nFROM clicks GROUP BY ad_id, TUMBLE(rt, INTERVAL '1' MINUTE)", (8, 105), "a processing-time window attribute is not supported"),
        ("INSERT INTO o SELECT a.ad_id, a.rt, a.rt, a.rt, COUNT(*)\nFROM clicks a JOIN clicks b ON a.ad_id = b.ad_id GROUP BY a.ad_id, TUMBLE(a.rt, INTERVAL '1' MINUTE)", (9, 68), "a group window over anything but one table is"),
        ("INSERT INTO o SELECT ad_id, rt, rt, rt, COUNT(*)\nFROM clicks GROUP BY TUMBLE(rt, INTERVAL '1' MINUTE), TUMBLE(rt, INTERVAL '2' MINUTE)", (9, 55), "a second group window in one GROUP BY is"),
        ("INSERT INTO o SELECT ad_id, rt, rt, rt, COUNT(*)\nFROM clicks GROUP BY ad_id, TUMBLE(ts, INTERVAL '1' MINUTE)", (9, 36), "not the time attribute"),
    ];
    let mut wrong = Vec::new();
    for (sql, (line, column), message) in cases {
        let (l, c, m) = refusal(&format!("{CLICKS}{OUT}{sql}"));
        if !m.contains(message) || (l, c) != (line, column) {
            wrong.push(format!(
                "want {line}:{column} {message:?}, got {l}:{c} {m:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
