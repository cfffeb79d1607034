//! The shipped `config/ad_spend.sql` written through Flink's table-shaped connectors instead of
//! JSON files, through the real binary and real services: `'connector' = 'jdbc'` upserts into a
//! PostgreSQL table the test created with Flink's types (TIMESTAMP(3) window bounds,
//! NUMERIC(38, 4) spend), and `'format' = 'parquet'` writes part files DuckDB reads back. Both
//! equal the ad-spend reference model (`common::flow_model`) row for row.

mod common;

use common::duckdb::duckdb;
use common::flow_job::flow_data;
use common::flow_model::{assert_spend_eq, decimal, spend_model_dir, SpendMap};
use common::pg::Pg;
use common::sql::run_sql;
use std::path::Path;

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `config/ad_spend.sql` on the files in `dir`, its sink table's WITH clause replaced by `with`
/// (and `extra_key` added to its columns).
fn run_ad_spend(dir: &Path, extra_key: &str, with: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sql = std::fs::read_to_string(root.join("config/ad_spend.sql"))
        .unwrap()
        .replace("'data/", &format!("'{}/", path(dir)));
    let json_sink = "clicks BIGINT, spend DECIMAL(38, 4)\n) WITH ('connector' = 'filesystem', 'path' = 'out/ad_spend', 'format' = 'json');";
    assert!(
        sql.contains(json_sink),
        "config/ad_spend.sql changed its sink table"
    );
    let sql = sql.replace(
        json_sink,
        &format!("clicks BIGINT, spend DECIMAL(38, 4){extra_key}\n) WITH ({with});"),
    );
    run_sql(dir, &sql);
}

fn model(dir: &Path) -> SpendMap {
    let want = spend_model_dir(dir);
    assert!(
        want.len() > 100,
        "too few windows to mean anything: {}",
        want.len()
    );
    want
}

#[test]
fn a_jdbc_table_ends_with_exactly_the_reference_models_rows() {
    let pg = Pg::shared();
    pg.sql("DROP TABLE IF EXISTS sql_spend");
    // As a Flink user would have it: the table exists, typed as the DDL says.
    pg.sql("CREATE TABLE sql_spend (ad_id TEXT NOT NULL, window_start TIMESTAMP(3) NOT NULL, \
            window_end TIMESTAMP(3), clicks BIGINT, spend NUMERIC(38, 4), PRIMARY KEY (ad_id, window_start))");
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    flow_data(dir, 20_000, 2_000, 7);
    // libpq's URL form of the shared server, as the JDBC URL Flink would be given.
    let url = pg
        .url()
        .replace("postgresql://sluice@", "jdbc:postgresql://");
    run_ad_spend(
        dir,
        ",\n  PRIMARY KEY (ad_id, window_start) NOT ENFORCED",
        &format!("'connector' = 'jdbc', 'url' = '{url}', 'table-name' = 'sql_spend', 'username' = 'sluice'"),
    );
    let got: SpendMap = pg
        .sql("SELECT ad_id, (extract(epoch FROM window_start) * 1000)::bigint, \
              (extract(epoch FROM window_end - window_start) * 1000)::bigint, clicks, spend::text FROM sql_spend")
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f[2], "60000", "a one-minute window: {l}");
            let start: i64 = f[1].parse().unwrap();
            ((f[0].to_string(), start), (f[3].parse().unwrap(), decimal(f[4])))
        })
        .collect();
    assert_spend_eq(&model(dir), &got, "jdbc table");
}

#[test]
fn a_parquet_table_reads_back_in_duckdb_as_the_reference_models_rows() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    flow_data(dir, 20_000, 2_000, 7);
    let out = dir.join("history");
    run_ad_spend(
        dir,
        "",
        &format!(
            "'connector' = 'filesystem', 'path' = '{}', 'format' = 'parquet'",
            path(&out)
        ),
    );
    let rows = duckdb(&format!(
        "SELECT ad_id, epoch_ms(window_start), epoch_ms(window_end) - epoch_ms(window_start), clicks, spend::VARCHAR, \
         typeof(spend), typeof(window_start) FROM read_parquet('{}/part-*.parquet')",
        path(&out)
    ))
    .unwrap();
    let mut got = SpendMap::new();
    for r in rows.iter().skip(1) {
        assert_eq!(r[2], "60000", "a one-minute window: {r:?}");
        assert_eq!(r[5], "DECIMAL(38,4)", "spend typed as the DDL says: {r:?}");
        assert!(
            r[6].starts_with("TIMESTAMP"),
            "window_start a timestamp: {r:?}"
        );
        let key = (r[0].clone(), r[1].parse().unwrap());
        assert!(
            got.insert(key, (r[3].parse().unwrap(), decimal(&r[4])))
                .is_none(),
            "{r:?} twice"
        );
    }
    assert_spend_eq(&model(dir), &got, "parquet files");
}
