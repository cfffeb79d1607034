//! FIRST_VALUE, LAST_VALUE, MIN/MAX of strings and aggregates over expressions in a GROUP BY:
//! what they compile to (the group aggregate's value aggregates, a select computing each
//! argument first), and where a window aggregation refuses them.

use super::{compiled, job, refusal, select_fields, CLICKS};
use crate::config::TransformConfig;
use crate::operators::group_agg::config::GroupAggregateConfig;
use crate::sql::Compiled;

/// The one group aggregate of `c`, by name.
fn group(c: &Compiled) -> (&str, &GroupAggregateConfig) {
    let found = c.transforms.iter().find_map(|(n, t)| match t {
        TransformConfig::GroupAggregate(g) => Some((n.as_str(), g)),
        _ => None,
    });
    found.unwrap_or_else(|| panic!("no group aggregate:\n{}", c.toml()))
}

/// The aggregate expressions of the group aggregate of `c`, in order.
fn aggregates(c: &Compiled) -> Vec<&str> {
    (group(c).1.aggregates.0.iter())
        .map(|(_, e)| e.as_str())
        .collect()
}

fn sink(columns: &str) -> String {
    format!("CREATE TABLE o ({columns}) WITH ('connector' = 'print');\n")
}

#[test]
fn first_last_and_string_extrema_keep_values_and_numbers_stay_numeric() {
    let sql = format!(
        "{CLICKS}{}INSERT INTO o SELECT user_id, FIRST_VALUE(ad_id), LAST_VALUE(bid), \
         MIN(ad_id), MAX(ad_id), MIN(bid), MAX(bid) FROM clicks GROUP BY user_id",
        sink("u BIGINT, f STRING, l BIGINT, lo STRING, hi STRING, blo BIGINT, bhi BIGINT")
    );
    job(&sql);
    let c = compiled(&sql);
    let want = [
        "first_value(ad_id)",
        "last_value(bid)",
        "min_string(ad_id)",
        "max_string(ad_id)",
        "min(bid)",
        "max(bid)",
    ];
    assert_eq!(aggregates(&c), want, "{}", c.toml());
}

#[test]
fn an_aggregate_over_an_expression_reads_a_column_computed_before_it() {
    // q16's `max(DATE_FORMAT(dateTime, 'HH:mm'))`, a SUM over arithmetic, and a GROUP BY
    // expression, which stays the key's column rather than an argument.
    let sql = format!(
        "{CLICKS}{}INSERT INTO o SELECT ad_id, MAX(DATE_FORMAT(rt, 'HH:mm')), SUM(bid * 2), \
         COUNT(*), MIN(UPPER(ad_id)) FROM clicks GROUP BY ad_id",
        sink("a STRING, m STRING, s BIGINT, n BIGINT, lo STRING")
    );
    job(&sql);
    let c = compiled(&sql);
    let (name, g) = group(&c);
    let aggs = aggregates(&c);
    assert_eq!(aggs.len(), 4, "{}", c.toml());
    assert!(aggs[0].starts_with("max_string(_e"), "{aggs:?}");
    assert!(aggs[1].starts_with("sum(_e"), "{aggs:?}");
    assert_eq!(aggs[2], "count()");
    assert!(aggs[3].starts_with("min_string(_e"), "{aggs:?}");
    // The select feeding the aggregate computes each argument once, under the name it reads.
    let fields = select_fields(&c, &g.inputs[0]);
    let arg = |a: &str| a[a.find('(').unwrap() + 1..a.len() - 1].to_string();
    for (a, has) in [(aggs[0], "HH:mm"), (aggs[1], "* 2"), (aggs[3], "upper")] {
        let found = fields.iter().find(|(n, _)| *n == arg(a));
        let (_, e) = found.unwrap_or_else(|| panic!("{a} reads no computed column: {fields:?}"));
        assert!(e.contains(has), "{a}: {e}");
    }
    assert_eq!(g.group_by, ["ad_id"], "{name}");
}

#[test]
fn a_window_aggregation_refuses_values_it_cannot_keep_with_their_position() {
    let window = |agg: &str| {
        format!(
            "{CLICKS}{}INSERT INTO o SELECT ad_id, {agg}\nFROM TABLE(TUMBLE(TABLE clicks, \
             DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end",
            sink("a STRING, v STRING")
        )
    };
    for (agg, what) in [
        ("MAX(ad_id)", "MAX of a STRING column"),
        ("FIRST_VALUE(ad_id)", "FIRST_VALUE of a STRING column"),
        ("LAST_VALUE(bid)", "LAST_VALUE of a non-numeric column"),
    ] {
        let (line, column, m) = refusal(&window(agg));
        assert_eq!((line, column), (7, 29), "{agg}: {m}");
        assert!(
            m.contains(what) && m.contains("window aggregation"),
            "{agg}: {m}"
        );
    }
    // A number's MIN stays a window aggregate.
    job(&window("MIN(bid)").replace("v STRING", "v BIGINT"));
    let over = format!(
        "{CLICKS}{}INSERT INTO o SELECT ad_id,\n MAX(ad_id) OVER (PARTITION BY ad_id ORDER BY rt \
         ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM clicks",
        sink("a STRING, v STRING")
    );
    let (line, _, m) = refusal(&over);
    assert_eq!(line, 8, "{m}");
    assert!(
        m.contains("MAX of a STRING column in an OVER aggregation"),
        "{m}"
    );
}
