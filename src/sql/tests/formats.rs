//! Flink's `format` options on SQL tables: `csv` (columns by position from the DDL,
//! `csv.field-delimiter`) on files and Kafka, `avro-confluent` (a Schema Registry) on Kafka
//! sources and sinks, `debezium-avro-confluent` on Kafka sources, and the refusals of formats a
//! connector does not take.

use super::{job, refusal};
use crate::config::{SinkConfig, SourceConfig};

fn source(with: &str) -> String {
    format!(
        "CREATE TABLE t (ad_id STRING, price DECIMAL(10, 2), ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND) WITH ({with});
CREATE TABLE o (ad_id STRING, price DECIMAL(10, 2)) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id, price FROM t;"
    )
}

const KAFKA: &str =
    "'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '127.0.0.1:9092'";

#[test]
fn a_csv_table_names_its_columns_by_the_ddls_physical_columns() {
    let cfg = job(&source(
        "'connector' = 'filesystem', 'path' = 'data/t.csv', 'format' = 'csv', 'csv.field-delimiter' = ';'",
    ));
    let SourceConfig::File(f) = &cfg.sources["t"] else {
        panic!("{:?}", cfg.sources["t"]);
    };
    let csv = f.csv.as_ref().expect("a csv table");
    assert_eq!(
        csv.columns,
        ["ad_id", "price", "ts"],
        "the computed rt is not a field"
    );
    assert_eq!(csv.delimiter.as_deref(), Some(";"));
    assert!(!csv.header, "Flink's CSV format has no header line");
    let cfg = job(&source(&format!(
        "{KAFKA}, 'format' = 'csv', 'csv.field-delimiter' = '\\t'"
    )));
    let SourceConfig::Kafka(k) = &cfg.sources["t"] else {
        panic!("{:?}", cfg.sources["t"]);
    };
    assert_eq!(
        k.csv.as_ref().and_then(|c| c.delimiter.as_deref()),
        Some("\t")
    );
}

#[test]
fn avro_confluent_reads_and_writes_through_the_schema_registry() {
    let sql = source(&format!(
        "{KAFKA}, 'format' = 'avro-confluent', 'avro-confluent.url' = 'http://127.0.0.1:8081', 'avro-confluent.subject' = 'in-v'"
    ))
    .replace(
        "WITH ('connector' = 'print')",
        &format!("WITH ({}, 'format' = 'avro-confluent', 'avro-confluent.url' = 'http://127.0.0.1:8081')", KAFKA.replace("'in'", "'out'")),
    );
    let cfg = job(&sql);
    let SourceConfig::Kafka(k) = &cfg.sources["t"] else {
        panic!("{:?}", cfg.sources["t"]);
    };
    let sr = k.schema_registry.as_ref().expect("a registry");
    assert_eq!(
        (sr.url.as_str(), sr.subject.as_deref()),
        ("http://127.0.0.1:8081", Some("in-v"))
    );
    let SinkConfig::Kafka(s) = &cfg.sinks["o"] else {
        panic!("{:?}", cfg.sinks["o"]);
    };
    assert_eq!(s.format, crate::connectors::kafka::KafkaSinkFormat::Avro);
    assert!(s.schema_registry.is_some());
}

#[test]
fn debezium_avro_confluent_is_a_changelog_table_read_through_the_registry() {
    let sql = format!(
        "CREATE TABLE c (id BIGINT, tier STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ({KAFKA},
  'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.url' = 'http://127.0.0.1:8081',
  'debezium-avro-confluent.subject' = 'cdc-value');
CREATE TABLE o (tier STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT tier, COUNT(*) FROM c GROUP BY tier;"
    );
    let cfg = job(&sql);
    let SourceConfig::Kafka(k) = &cfg.sources["c"] else {
        panic!("{:?}", cfg.sources["c"]);
    };
    use crate::connectors::kafka::KafkaChangelog;
    assert_eq!(k.changelog, KafkaChangelog::DebeziumAvro);
    assert_eq!(k.format, crate::connectors::csv::Format::Avro);
    let sr = k.schema_registry.as_ref().expect("a registry");
    assert_eq!(
        (sr.url.as_str(), sr.subject.as_deref()),
        ("http://127.0.0.1:8081", Some("cdc-value"))
    );
}

#[test]
fn formats_a_connector_does_not_take_are_refused() {
    let cases = [
        (source("'connector' = 'filesystem', 'path' = 'p', 'format' = 'avro-confluent', 'avro-confluent.url' = 'u'"), "format 'avro-confluent' is not supported here yet (supported: 'json', 'csv', 'debezium-json')"),
        (source(&format!("{KAFKA}, 'format' = 'avro-confluent'")), "needs the option 'avro-confluent.url'"),
        (source(&format!("{KAFKA}, 'format' = 'debezium-avro-confluent'")), "format 'debezium-avro-confluent' needs the option 'debezium-avro-confluent.url'"),
        (source(&format!("{KAFKA}, 'format' = 'debezium-avro-confluent', 'avro-confluent.url' = 'u'")), "'avro-confluent.url': not supported"),
        (source("'connector' = 'filesystem', 'path' = 'p', 'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.url' = 'u'"), "format 'debezium-avro-confluent' is not supported here yet"),
        (source("'connector' = 'filesystem', 'path' = 'p', 'format' = 'csv', 'csv.field-delimiter' = ';;'"), "expected one ASCII character"),
        (source("'connector' = 'filesystem', 'path' = 'p', 'format' = 'csv', 'csv.quote-character' = '\"'"), "'csv.quote-character': not supported"),
        (source("'connector' = 'filesystem', 'path' = 'p', 'format' = 'json', 'csv.field-delimiter' = ';'"), "'csv.field-delimiter': not supported"),
        (source("'connector' = 'filesystem', 'path' = 'p', 'format' = 'orc'"), "format 'orc' is not supported"),
        (source("'connector' = 'filesystem', 'path' = 'p'"), "needs the option 'format'"),
    ];
    for (sql, want) in cases {
        let (_, _, m) = refusal(&sql);
        assert!(m.contains(want), "want {want:?}, got {m:?}");
    }
}
