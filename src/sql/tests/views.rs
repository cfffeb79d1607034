//! Flink's versioned view (`ROW_NUMBER() OVER (PARTITION BY k ORDER BY rt DESC) ... WHERE rn =
//! 1`) as the table of a temporal join: what it compiles to, and the places it is refused
//! (anything but a temporal join reading it, a filter beside `rn = 1`, a key it drops).

use super::{compiled, job, refusal};
use crate::config::TransformConfig;

const TABLES: &str =
    "CREATE TABLE orders (order_id BIGINT, currency STRING, amount DECIMAL(10, 2), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'o.ndjson', 'format' = 'json');
CREATE TABLE rates_history (currency STRING, rate DECIMAL(10, 4), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'r.ndjson', 'format' = 'json');
CREATE TABLE priced (order_id BIGINT, total DECIMAL(20, 6)) WITH ('connector' = 'print');
";

fn view(top: &str, order: &str, filter: &str) -> String {
    format!(
        "CREATE VIEW versioned_rates AS SELECT {top} FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY rt {order}) AS rn FROM rates_history)
  WHERE rn = 1{filter};
"
    )
}

const JOIN: &str = "INSERT INTO priced SELECT o.order_id, o.amount * r.rate FROM orders AS o
  JOIN versioned_rates FOR SYSTEM_TIME AS OF o.rt AS r ON o.currency = r.currency;";

#[test]
fn a_versioned_view_is_the_temporal_join_table_of_every_version() {
    let sql = format!("{TABLES}{}{JOIN}", view("currency, rate, rt", "DESC", ""));
    let cfg = job(&sql);
    let joins: Vec<_> = cfg
        .transforms
        .values()
        .filter_map(|t| match t {
            TransformConfig::TemporalJoin(j) => Some(j),
            _ => None,
        })
        .collect();
    assert_eq!(joins.len(), 1, "{:?}", cfg.transforms);
    assert_eq!(
        joins[0].out_of_order_versions,
        crate::config::OutOfOrderVersions::Drop,
        "a row older than its key's last is never the last row"
    );
    assert!(
        !cfg.transforms
            .values()
            .any(|t| matches!(t, TransformConfig::Dedupe(_))),
        "a versioned view keeps every version: nothing is deduplicated"
    );
    let c = compiled(&sql);
    assert!(
        c.transforms
            .iter()
            .any(|(_, t)| matches!(t, TransformConfig::TemporalJoin(_))),
        "{}",
        c.toml()
    );
}

#[test]
fn a_versioned_view_is_refused_where_it_would_be_an_updating_result() {
    let cases = [
        // Read by anything but a temporal join.
        (
            format!(
                "{TABLES}{}INSERT INTO priced SELECT 1, rate FROM versioned_rates;",
                view("currency, rate, rt", "DESC", "")
            ),
            "only as the table of a temporal join",
        ),
        // A filter beside rn = 1 would filter versions out of the last-row view.
        (
            format!(
                "{TABLES}{}{JOIN}",
                view("currency, rate, rt", "DESC", " AND rate > 1")
            ),
            "and nothing else",
        ),
        // The key must stay a column of the view, and so must the time.
        (
            format!("{TABLES}{}{JOIN}", view("rate, rt", "DESC", "")),
            "must keep its key column `currency`",
        ),
        (
            format!("{TABLES}{}{JOIN}", view("currency, rate", "DESC", "")),
            "must keep the time attribute",
        ),
        // A keep-first view is a deduplication, not a versioned table.
        (
            format!(
                "SET 'table.exec.state.ttl' = '1 h';\n{TABLES}{}{JOIN}",
                view("currency, rate, rt", "ASC", "")
            ),
            "is not a versioned table",
        ),
    ];
    for (sql, want) in cases {
        let (_, _, m) = refusal(&sql);
        assert!(m.contains(want), "want {want:?}, got {m:?}");
    }
}
