//! Flink's `kafka` and `upsert-kafka` connectors as sluice's Kafka source and sink. An
//! `upsert-kafka` table is a keyed changelog: read, it is a versioned table (sluice's
//! `changelog = "upsert"` source: each record a new version of its key, a tombstone its
//! deletion, from the earliest offset as Flink reads it); written, each row is keyed by the
//! table's PRIMARY KEY (a JSON object of its columns), so a compacted topic keeps the last row
//! per key. Keys and values are JSON, the value holding every column (`value.fields-include` =
//! `ALL`, Flink's default).

use super::connectors::{check_json_options, option_error, refuse_unknown, required, JSON_OPTIONS};
use super::ddl::Table;
use super::error::SqlError;
use super::expr::quote;
use super::formats::{self, Place};

pub(super) fn kafka_source(t: &Table) -> Result<String, SqlError> {
    let known: Vec<&str> = [
        "connector",
        "format",
        "topic",
        "scan.startup.mode",
        "scan.startup.timestamp-millis",
        "scan.startup.specific-offsets",
        "scan.bounded.mode",
        "scan.bounded.timestamp-millis",
    ]
    .iter()
    .chain(formats::options(t))
    .copied()
    .collect();
    refuse_unknown(t, &known, Some("properties."))?;
    let mut out = String::from("type = \"kafka\"\n");
    out += &formats::toml(t, Place::KafkaSource)?;
    out += &format!(
        "brokers = {}\n",
        quote(required(t, "properties.bootstrap.servers")?)
    );
    let topic = required(t, "topic")?;
    if topic.contains(';') {
        let topics: Vec<String> = topic.split(';').map(quote).collect();
        out += &format!("topics = [{}]\n", topics.join(", "));
    } else {
        out += &format!("topic = {}\n", quote(topic));
    }
    if let Some(group) = t.option("properties.group.id") {
        out += &format!("group_id = {}\n", quote(group));
    }
    out += &format!("start = {}\n", startup(t)?);
    match t.option("scan.bounded.mode") {
        None | Some("unbounded") => {}
        Some("latest-offset") => out += "stop_at = \"end\"\n",
        Some("timestamp") => {
            let at = millis_option(t, "scan.bounded.timestamp-millis")?;
            out += &format!("stop_at = {{ timestamp = \"{at}\" }}\n");
        }
        Some(other) => {
            return Err(option_error(
                t,
                "scan.bounded.mode",
                format!("'{other}' is not supported yet (supported: 'latest-offset', 'timestamp', 'unbounded')"),
            ));
        }
    }
    out += &properties(t, &["properties.bootstrap.servers", "properties.group.id"]);
    Ok(out)
}

/// `scan.startup.mode` (with its timestamp or offsets) as the source's `start`.
fn startup(t: &Table) -> Result<String, SqlError> {
    Ok(match t.option("scan.startup.mode") {
        None | Some("group-offsets") => "\"committed\"".into(),
        Some("earliest-offset") => "\"earliest\"".into(),
        Some("latest-offset") => "\"latest\"".into(),
        Some("timestamp") => {
            let at = millis_option(t, "scan.startup.timestamp-millis")?;
            format!("{{ timestamp = \"{at}\" }}")
        }
        Some("specific-offsets") => {
            let key = "scan.startup.specific-offsets";
            let text = required(t, key)?;
            let mut offsets = Vec::new();
            // `partition:0,offset:42;partition:1,offset:300`
            for part in text.split(';').filter(|p| !p.trim().is_empty()) {
                let mut p = None;
                let mut o = None;
                for kv in part.split(',') {
                    match kv.trim().split_once(':') {
                        Some(("partition", v)) => p = v.trim().parse::<u32>().ok(),
                        Some(("offset", v)) => o = v.trim().parse::<i64>().ok().filter(|o| *o >= 0),
                        _ => {}
                    }
                }
                let (Some(p), Some(o)) = (p, o) else {
                    return Err(option_error(
                        t,
                        key,
                        format!("`{part}`: expected partition:N,offset:M"),
                    ));
                };
                offsets.push(format!("\"{p}\" = {o}"));
            }
            format!("{{ offsets = {{ {} }} }}", offsets.join(", "))
        }
        Some(other) => {
            return Err(option_error(t, "scan.startup.mode", format!("'{other}' is not supported (supported: 'earliest-offset', 'latest-offset', 'group-offsets', 'timestamp', 'specific-offsets')")));
        }
    })
}

/// An epoch-milliseconds option as RFC 3339 text, as the source's timestamps are written.
fn millis_option(t: &Table, key: &str) -> Result<String, SqlError> {
    let text = required(t, key)?;
    text.trim()
        .parse::<i64>()
        .ok()
        .and_then(crate::expr::rfc3339)
        .ok_or_else(|| option_error(t, key, format!("'{text}' is not epoch milliseconds")))
}

/// `properties.*` other than the ones mapped to keys of their own, as librdkafka `options`.
fn properties(t: &Table, mapped: &[&str]) -> String {
    let props: Vec<String> = t
        .options
        .iter()
        .filter(|(k, _)| k.starts_with("properties.") && !mapped.contains(&k.as_str()))
        .map(|(k, (v, _))| format!("{} = {}", quote(&k["properties.".len()..]), quote(v)))
        .collect();
    if props.is_empty() {
        String::new()
    } else {
        format!("options = {{ {} }}\n", props.join(", "))
    }
}

pub(super) fn kafka_sink(t: &Table) -> Result<String, SqlError> {
    let known: Vec<&str> = [
        "connector",
        "format",
        "topic",
        "sink.delivery-guarantee",
        "sink.transactional-id-prefix",
    ]
    .iter()
    .chain(if t.option("format") == Some("avro-confluent") {
        formats::options(t)
    } else {
        &[]
    })
    .copied()
    .collect();
    refuse_unknown(t, &known, Some("properties."))?;
    let mut out = String::from("type = \"kafka\"\n");
    out += &formats::toml(t, Place::KafkaSink)?;
    out += &format!(
        "brokers = {}\n",
        quote(required(t, "properties.bootstrap.servers")?)
    );
    out += &format!("topic = {}\n", quote(required(t, "topic")?));
    out += &delivery(t)?;
    out += &properties(t, &["properties.bootstrap.servers"]);
    Ok(out)
}

/// `sink.delivery-guarantee` and `sink.transactional-id-prefix`.
fn delivery(t: &Table) -> Result<String, SqlError> {
    let mut out = String::new();
    match t.option("sink.delivery-guarantee") {
        None | Some("at-least-once") | Some("none") => {}
        Some("exactly-once") => out += "delivery = \"exactly_once\"\n",
        Some(other) => {
            return Err(option_error(t, "sink.delivery-guarantee", format!("'{other}' is not a delivery guarantee (expected 'exactly-once', 'at-least-once' or 'none')")));
        }
    }
    if let Some(prefix) = t.option("sink.transactional-id-prefix") {
        out += &format!("transactional_id_prefix = {}\n", quote(prefix));
    }
    Ok(out)
}

/// The JSON key and value formats, every column in the value: what sluice's Kafka sources and
/// sinks read and write.
fn check_upsert_formats(t: &Table) -> Result<(), SqlError> {
    for key in ["key.format", "value.format"] {
        match t.option(key) {
            Some("json") => {}
            Some(other) => {
                return Err(option_error(
                    t,
                    key,
                    format!("'{other}' is not supported yet (supported: 'json')"),
                ))
            }
            None => {
                return Err(SqlError::span(
                    t.span,
                    format!("table `{}` needs the option '{key}' (= 'json')", t.name),
                ))
            }
        }
    }
    match t.option("value.fields-include") {
        None | Some("ALL") => {}
        Some(_) => {
            return Err(option_error(
                t,
                "value.fields-include",
                "only 'ALL' is supported: the value holds every column".into(),
            ))
        }
    }
    if t.primary_key.is_empty() {
        return Err(SqlError::span(t.span, format!("table `{}`: an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED: its record key", t.name)));
    }
    Ok(())
}

pub(super) fn upsert_kafka_source(t: &Table) -> Result<String, SqlError> {
    let known = [
        "connector",
        "topic",
        "key.format",
        "value.format",
        "value.fields-include",
        "scan.bounded.mode",
        JSON_OPTIONS[0],
        JSON_OPTIONS[1],
    ];
    refuse_unknown(t, &known, Some("properties."))?;
    check_upsert_formats(t)?;
    check_json_options(t)?;
    let mut out = String::from(
        "type = \"kafka\"\nchangelog = \"upsert\"\nkey_format = \"json\"\nstart = \"earliest\"\n",
    );
    out += &format!(
        "brokers = {}\n",
        quote(required(t, "properties.bootstrap.servers")?)
    );
    out += &format!("topic = {}\n", quote(required(t, "topic")?));
    if let Some(group) = t.option("properties.group.id") {
        out += &format!("group_id = {}\n", quote(group));
    }
    match t.option("scan.bounded.mode") {
        None | Some("unbounded") => {}
        Some("latest-offset") => out += "stop_at = \"end\"\n",
        Some(other) => {
            return Err(option_error(
                t,
                "scan.bounded.mode",
                format!("'{other}' is not supported yet (supported: 'unbounded', 'latest-offset')"),
            ))
        }
    }
    out += &properties(t, &["properties.bootstrap.servers", "properties.group.id"]);
    Ok(out)
}

pub(super) fn upsert_kafka_sink(t: &Table) -> Result<String, SqlError> {
    let known = [
        "connector",
        "topic",
        "key.format",
        "value.format",
        "value.fields-include",
        "sink.delivery-guarantee",
        "sink.transactional-id-prefix",
    ];
    refuse_unknown(t, &known, Some("properties."))?;
    check_upsert_formats(t)?;
    let mut out = String::from("type = \"kafka\"\n");
    out += &format!(
        "brokers = {}\n",
        quote(required(t, "properties.bootstrap.servers")?)
    );
    out += &format!("topic = {}\n", quote(required(t, "topic")?));
    let key: Vec<String> = t.primary_key.iter().map(|k| quote(k)).collect();
    out += &format!("key = [{}]\n", key.join(", "));
    out += &delivery(t)?;
    out += &properties(t, &["properties.bootstrap.servers"]);
    Ok(out)
}
