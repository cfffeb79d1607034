//! SQL tables written through sluice's table-shaped sinks (`jdbc` -> postgres, filesystem
//! `parquet` -> parquet): the options each maps to, the column types pinned from the DDL, time
//! columns written as epoch milliseconds, and the refusals.

use super::{compiled, expressions, job, refusal, CLICKS};
use crate::config::SinkConfig;
use crate::record::columns::ColumnType;

const PER_MINUTE: &str = "SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY ad_id, window_start, window_end";

fn jdbc_table(extra: &str) -> String {
    format!(
        "CREATE TABLE spend (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, spend DECIMAL(18, 2), PRIMARY KEY (ad_id, window_start) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:5433/ads?sslmode=disable',
  'table-name' = 'public.spend', 'username' = 'sluice', 'password' = 'it''s \\ secret'{extra});
"
    )
}

#[test]
fn a_jdbc_table_is_the_postgres_sink_with_the_ddl_types_and_the_primary_key() {
    let sql = format!(
        "{CLICKS}{}INSERT INTO spend {PER_MINUTE};",
        jdbc_table(", 'sink.buffer-flush.max-rows' = '100', 'sink.buffer-flush.interval' = '1s'")
    );
    let cfg = job(&sql);
    let SinkConfig::Postgres(pg) = &cfg.sinks["spend"] else {
        panic!("{:?}", cfg.sinks["spend"]);
    };
    assert_eq!(pg.table, "public.spend");
    assert_eq!(
        pg.key,
        vec!["ad_id".to_string(), "window_start".to_string()]
    );
    assert!(
        !pg.create_table,
        "Flink's JDBC sink writes into an existing table"
    );
    assert_eq!(pg.batch.rows, 100);
    assert_eq!(pg.batch.max_delay.as_millis(), 1000);
    let url = pg.url.as_deref().unwrap_or("");
    let parsed: postgres::Config = url.parse().unwrap_or_else(|e| panic!("{url}: {e}"));
    assert_eq!(parsed.get_dbname(), Some("ads"));
    assert_eq!(parsed.get_user(), Some("sluice"));
    assert_eq!(parsed.get_ports(), &[5433]);
    assert_eq!(parsed.get_password(), Some("it's \\ secret".as_bytes()));
    for (col, ty) in [
        ("ad_id", ColumnType::Text),
        ("window_start", ColumnType::Timestamp),
        ("clicks", ColumnType::BigInt),
        ("spend", ColumnType::Decimal(Some((18, 2)))),
    ] {
        assert_eq!(ColumnType::parse(&pg.columns[col]), Ok(ty), "{col}");
    }
    // The window bounds reach the sink as epoch milliseconds, not as Flink's JSON text.
    let c = compiled(&sql);
    assert!(
        !expressions(&c).iter().any(|e| e.contains("sql_timestamp")),
        "{}",
        c.toml()
    );
}

#[test]
fn a_jdbc_table_without_a_primary_key_appends() {
    let table = jdbc_table("").replace(", PRIMARY KEY (ad_id, window_start) NOT ENFORCED", "");
    let cfg = job(&format!("{CLICKS}{table}INSERT INTO spend {PER_MINUTE};"));
    let SinkConfig::Postgres(pg) = &cfg.sinks["spend"] else {
        panic!("{:?}", cfg.sinks["spend"]);
    };
    assert!(pg.key.is_empty());
}

#[test]
fn a_parquet_table_is_the_parquet_sink_with_the_ddl_types() {
    let sql = format!(
        "{CLICKS}CREATE TABLE history (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP_LTZ(3),
  clicks BIGINT, spend DECIMAL(10, 0)) WITH ('connector' = 'filesystem', 'path' = 'out/history/',
  'format' = 'parquet');
INSERT INTO history {PER_MINUTE};"
    );
    let cfg = job(&sql);
    let SinkConfig::Parquet(p) = &cfg.sinks["history"] else {
        panic!("{:?}", cfg.sinks["history"]);
    };
    assert_eq!(p.path.to_str(), Some("out/history/"));
    assert_eq!(
        ColumnType::parse(&p.columns["window_end"]),
        Ok(ColumnType::Timestamp)
    );
    assert_eq!(
        ColumnType::parse(&p.columns["spend"]),
        Ok(ColumnType::Decimal(Some((10, 0))))
    );
    let c = compiled(&sql);
    assert!(
        !expressions(&c).iter().any(|e| e.contains("sql_timestamp")),
        "{}",
        c.toml()
    );
}

#[test]
fn table_sink_options_are_checked() {
    let cases = [
        (jdbc_table(", 'bogus' = '1'"), "'bogus': not supported for connector 'jdbc'"),
        (jdbc_table(", 'driver' = 'com.mysql.cj.jdbc.Driver'"), "PostgreSQL only"),
        (jdbc_table(", 'sink.buffer-flush.max-rows' = '0'"), "above 0"),
        (jdbc_table(", 'sink.buffer-flush.interval' = 'soon'"), "a duration above 0"),
        (jdbc_table("").replace("jdbc:postgresql://127.0.0.1:5433/ads", "jdbc:mysql://h/ads"), "PostgreSQL only"),
        (jdbc_table("").replace("127.0.0.1:5433/ads", "127.0.0.1:x/ads"), "the port is not a number"),
        (jdbc_table("").replace("127.0.0.1:5433/ads", "127.0.0.1:5433"), "expected a database"),
        (jdbc_table("").replace("sslmode=disable", "loglevel=2"), "`loglevel` is not supported"),
        (jdbc_table("").replace("'table-name' = 'public.spend', ", ""), "needs the option 'table-name'"),
        (
            "CREATE TABLE spend (ad_id STRING, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', 'path' = 'o', 'format' = 'parquet', 'parquet.compression' = 'zstd');\n".into(),
            "'parquet.compression': not supported",
        ),
    ];
    for (table, want) in cases {
        let (_, _, m) = refusal(&format!("{CLICKS}{table}INSERT INTO spend {PER_MINUTE};"));
        assert!(m.contains(want), "want {want:?}, got {m:?}");
    }
}
