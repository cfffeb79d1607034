//! A Kafka record's metadata as a field of the record: `{"_kafka": {"key": ..., "headers":
//! {...}, "timestamp": ..., "partition": ..., "offset": ..., "topic": ...}, <the value's fields>}`,
//! written as the first field of the value's JSON object, so expressions, filters and group-by
//! read `_kafka.key` or `_kafka.headers.trace_id` like any nested field. Decoding never loses a
//! record: a key that is not UTF-8 or not JSON is still given (as text, invalid bytes as U+FFFD),
//! a repeated header name keeps its first value, a header without a value is null. A value that
//! is not a JSON object is left as it is, and goes to the dead letters as before. A tombstone of
//! an upsert changelog becomes the deletion row of its key ([`tombstone`]).

use super::config::KafkaKeyFormat;
use rdkafka::message::{Headers, Message};

/// The field that holds the metadata.
pub const FIELD: &str = "_kafka";

/// Writes `m`'s value with its metadata spliced in as the first field into `out` (cleared).
pub fn line_with_metadata<M: Message>(
    m: &M,
    key: Option<&[u8]>,
    value: &[u8],
    key_format: KafkaKeyFormat,
    out: &mut Vec<u8>,
) {
    out.clear();
    let start = value.iter().position(|b| !b.is_ascii_whitespace());
    let Some(open) = start.filter(|&i| value[i] == b'{') else {
        out.extend_from_slice(value);
        return;
    };
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(FIELD.as_bytes());
    out.extend_from_slice(b"\":{");
    members(m, key, key_format, out);
    out.push(b'}');
    let rest = &value[open + 1..];
    let empty = rest.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}');
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(rest);
}

pub use crate::record::TOMBSTONE;

/// A tombstone of an upsert changelog as the deletion row of its key: `{"_kafka":{"tombstone":
/// true, <metadata when asked>}, <the key object's fields>, "<ts_field>": <Kafka timestamp>}`, so
/// it is keyed, timed and routed like the versions of its key. Left empty (a dead letter) when the
/// key is not a JSON object.
pub fn tombstone<M: Message>(
    m: &M,
    key: Option<&[u8]>,
    metadata: Option<KafkaKeyFormat>,
    ts_field: Option<&str>,
    out: &mut Vec<u8>,
) {
    out.clear();
    let Some(k) = key.map(<[u8]>::trim_ascii) else {
        return;
    };
    let is_object = k.first() == Some(&b'{')
        && serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(k).is_ok();
    if !is_object {
        return;
    }
    out.extend_from_slice(TOMBSTONE);
    if let Some(f) = metadata {
        out.push(b',');
        members(m, key, f, out);
    }
    out.push(b'}');
    let inner = k[1..k.len() - 1].trim_ascii();
    if !inner.is_empty() {
        out.push(b',');
        out.extend_from_slice(inner);
    }
    if let (Some(f), Some(ts)) = (ts_field, m.timestamp().to_millis()) {
        out.push(b',');
        string(f.as_bytes(), out);
        out.push(b':');
        out.extend_from_slice(ts.to_string().as_bytes());
    }
    out.push(b'}');
}

/// The metadata object's members: `"key":...,"headers":{...},...,"topic":"..."`.
fn members<M: Message>(m: &M, k: Option<&[u8]>, key_format: KafkaKeyFormat, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\"key\":");
    key(k, key_format, out);
    out.extend_from_slice(b",\"headers\":{");
    if let Some(h) = m.headers() {
        let mut seen: Vec<&str> = Vec::new();
        for header in h.iter() {
            if seen.contains(&header.key) {
                continue;
            }
            if !seen.is_empty() {
                out.push(b',');
            }
            seen.push(header.key);
            string(header.key.as_bytes(), out);
            out.push(b':');
            match header.value {
                Some(v) => string(v, out),
                None => out.extend_from_slice(b"null"),
            }
        }
    }
    out.extend_from_slice(b"},\"timestamp\":");
    match m.timestamp().to_millis() {
        Some(ts) => out.extend_from_slice(ts.to_string().as_bytes()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(
        format!(
            ",\"partition\":{},\"offset\":{},\"topic\":",
            m.partition(),
            m.offset()
        )
        .as_bytes(),
    );
    string(m.topic().as_bytes(), out);
}

fn key(k: Option<&[u8]>, format: KafkaKeyFormat, out: &mut Vec<u8>) {
    let Some(k) = k else {
        out.extend_from_slice(b"null");
        return;
    };
    // An Avro key arrives here already decoded to JSON.
    let json = matches!(format, KafkaKeyFormat::Json | KafkaKeyFormat::Avro);
    if json && serde_json::from_slice::<serde::de::IgnoredAny>(k).is_ok() {
        // Valid JSON text, written as it is (without surrounding whitespace).
        out.extend_from_slice(k.trim_ascii());
        return;
    }
    string(k, out);
}

/// `bytes` as a JSON string (bytes that are not UTF-8 as U+FFFD).
fn string(bytes: &[u8], out: &mut Vec<u8>) {
    let text = String::from_utf8_lossy(bytes);
    // Writing a string into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, text.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::message::{Header, OwnedHeaders, OwnedMessage, Timestamp};

    fn msg(value: Option<&str>, key: Option<&[u8]>, headers: Option<OwnedHeaders>) -> OwnedMessage {
        OwnedMessage::new(
            value.map(|v| v.as_bytes().to_vec()),
            key.map(<[u8]>::to_vec),
            "clicks".into(),
            Timestamp::CreateTime(1_700_000_000_123),
            3,
            42,
            headers,
        )
    }

    fn line(m: &OwnedMessage, f: KafkaKeyFormat) -> serde_json::Value {
        let mut out = Vec::new();
        line_with_metadata(m, m.key(), m.payload().unwrap_or_default(), f, &mut out);
        serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)))
    }

    #[test]
    fn metadata_comes_first_and_the_value_keeps_its_fields() {
        let h = OwnedHeaders::new()
            .insert(Header {
                key: "trace",
                value: Some("t-1"),
            })
            .insert(Header {
                key: "trace",
                value: Some("t-2"),
            })
            .insert(Header {
                key: "empty",
                value: None::<&str>,
            })
            .insert(Header {
                key: "q\"uote",
                value: Some(&[0xff, b'a'][..]),
            });
        let v = line(
            &msg(Some(" {\"ad\":\"a\",\"n\":1}"), Some(b"user-7"), Some(h)),
            KafkaKeyFormat::String,
        );
        assert_eq!(
            v,
            serde_json::json!({
                "_kafka": {
                    "key": "user-7",
                    "headers": { "trace": "t-1", "empty": null, "q\"uote": "\u{fffd}a" },
                    "timestamp": 1_700_000_000_123_i64, "partition": 3, "offset": 42, "topic": "clicks"
                },
                "ad": "a", "n": 1
            })
        );
    }

    #[test]
    fn keys_decode_as_text_or_json_and_never_lose_the_record() {
        let cases: [(Option<&[u8]>, KafkaKeyFormat, serde_json::Value); 6] = [
            (None, KafkaKeyFormat::String, serde_json::Value::Null),
            (
                Some(b"{\"id\": 7}"),
                KafkaKeyFormat::String,
                "{\"id\": 7}".into(),
            ),
            (
                Some(b" {\"id\": 7} "),
                KafkaKeyFormat::Json,
                serde_json::json!({"id": 7}),
            ),
            (Some(b"42"), KafkaKeyFormat::Json, 42.into()),
            (Some(b"not json"), KafkaKeyFormat::Json, "not json".into()),
            (
                Some(&[0xc3, 0x28]),
                KafkaKeyFormat::String,
                "\u{fffd}(".into(),
            ),
        ];
        for (k, f, want) in cases {
            let v = line(&msg(Some("{}"), k, None), f);
            assert_eq!(v["_kafka"]["key"], want, "{k:?}");
            assert_eq!(
                v.as_object().unwrap().len(),
                1,
                "empty value object: only _kafka"
            );
            assert_eq!(v["_kafka"]["headers"], serde_json::json!({}));
        }
    }

    #[test]
    fn a_tombstone_becomes_its_keys_deletion_row_timed_by_its_kafka_timestamp() {
        let m = msg(None, Some(b" {\"currency\":\"EUR\",\"n\":1} "), None);
        let mut out = Vec::new();
        tombstone(&m, m.key(), None, Some("ts"), &mut out);
        assert!(out.starts_with(TOMBSTONE));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"_kafka": {"tombstone": true}, "currency": "EUR", "n": 1,
                               "ts": 1_700_000_000_123_i64})
        );
        tombstone(&m, m.key(), Some(KafkaKeyFormat::Json), None, &mut out);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["_kafka"]["tombstone"], true);
        assert_eq!(v["_kafka"]["key"]["currency"], "EUR");
        assert_eq!(v["_kafka"]["offset"], 42);
        assert!(v.get("ts").is_none());
        // No key, or one that is not an object: nothing to delete, left for the dead letters.
        for k in [None, Some(&b"EUR"[..]), Some(b"[1]"), Some(b"{bad")] {
            let m = msg(None, k, None);
            tombstone(&m, m.key(), None, Some("ts"), &mut out);
            assert!(out.is_empty(), "{k:?}");
        }
    }

    #[test]
    fn a_value_that_is_not_an_object_is_left_as_it_is() {
        for value in [None, Some(""), Some("[1,2]"), Some("not json"), Some("  ")] {
            let mut out = Vec::new();
            let m = msg(value, Some(b"k"), None);
            line_with_metadata(
                &m,
                m.key(),
                m.payload().unwrap_or_default(),
                KafkaKeyFormat::String,
                &mut out,
            );
            assert_eq!(out, value.unwrap_or_default().as_bytes());
        }
    }
}
