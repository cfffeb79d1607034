//! A timestamp moved by an interval (`ts - INTERVAL '10' SECOND`) where it is not a join's time
//! bound: epoch milliseconds plus or minus the interval's, still a timestamp; anything else with
//! an interval is refused where it is written.

use super::{compiled, filter_condition, refusal, CLICKS};

const OUT: &str = "CREATE TABLE o (ad_id STRING, t TIMESTAMP_LTZ(3)) WITH ('connector' = 'print');
";

#[test]
fn a_timestamp_plus_or_minus_an_interval_is_a_timestamp() {
    let sql = format!(
        "{CLICKS}{OUT}INSERT INTO o SELECT ad_id, rt + INTERVAL '1' MINUTE FROM clicks
WHERE rt - INTERVAL '10' SECOND > TO_TIMESTAMP_LTZ(1000, 3) AND INTERVAL '2' SECOND + rt > rt"
    );
    let c = compiled(&sql);
    let cond = filter_condition(&c, "insert_1_o_where");
    assert!(
        cond.contains("- 10000)") && cond.contains("+ 2000)"),
        "{cond}"
    );
    let toml = c.toml();
    assert!(toml.contains("+ 60000)"), "{toml}");
}

#[test]
fn an_interval_with_anything_but_a_timestamp_is_refused() {
    for (sql, (line, column), want) in [
        (
            "INSERT INTO o SELECT ad_id, rt FROM clicks WHERE bid + INTERVAL '1' SECOND > 3",
            (7, 50),
            "an interval is added to or taken from a TIMESTAMP",
        ),
        (
            "INSERT INTO o SELECT ad_id, rt FROM clicks WHERE rt * INTERVAL '1' SECOND > rt",
            (7, 50),
            "this operation on an interval is",
        ),
        (
            "INSERT INTO o SELECT ad_id, INTERVAL '1' SECOND - rt FROM clicks",
            (7, 38),
            "this operation on an interval is",
        ),
    ] {
        let (l, c, m) = refusal(&format!("{CLICKS}{OUT}{sql}"));
        assert!(
            m.contains(want) && (l, c) == (line, column),
            "{sql}: {l}:{c} {m}"
        );
    }
}
