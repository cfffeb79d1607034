//! Where a Kafka source starts and stops reading, as written in `start` and `stop_at`: a name or
//! a small table. Read by hand rather than as untagged enums so that a wrong value says which
//! forms are accepted instead of "did not match any variant".

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Where a Kafka source starts reading when no checkpoint says otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KafkaStartConfig {
    /// `"committed"` (the group's offsets, else the earliest), `"earliest"` or `"latest"`.
    Named(KafkaStartName),
    /// `{ timestamp = "2026-11-01T00:00:00Z" }`: the first record at or after this time.
    Timestamp { timestamp: String },
    /// `{ offsets = { "0" = 1200, "clicks/1" = 0 } }`: per partition (`N` for a source of one
    /// topic, `TOPIC/N` for any); partitions not listed start as `"committed"` does.
    Offsets { offsets: BTreeMap<String, i64> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KafkaStartName {
    Committed,
    Earliest,
    Latest,
}

/// Where a Kafka source stops: `"never"` (the default), `"end"` (the end offsets each partition
/// had when the job first started) or `{ timestamp = "..." }` (before each partition's first
/// record with a Kafka timestamp at or after that time, as of the first start).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum KafkaStopAt {
    Named(KafkaStopName),
    Timestamp {
        timestamp: String,
    },
    #[default]
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KafkaStopName {
    Never,
    End,
}

const START_FORMS: &str =
    "\"committed\", \"earliest\", \"latest\", { timestamp = \"RFC 3339 time\" } \
     or { offsets = { \"PARTITION\" = OFFSET } }";
const STOP_FORMS: &str = "\"never\", \"end\" or { timestamp = \"RFC 3339 time\" }";

/// A string naming one of `names`, or a one-key table `{ key = value }` with `key` in `keys`.
enum Form<V> {
    Name(String),
    Table(String, V),
}

struct FormVisitor<V>(&'static str, std::marker::PhantomData<V>);

impl<'de, V: Deserialize<'de>> Visitor<'de> for FormVisitor<V> {
    type Value = Form<V>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Form<V>, E> {
        Ok(Form::Name(v.to_string()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Form<V>, A::Error> {
        let Some(key) = map.next_key::<String>()? else {
            return Err(de::Error::custom(format!(
                "an empty table; expected {}",
                self.0
            )));
        };
        let value = map.next_value::<V>()?;
        if map.next_key::<String>()?.is_some() {
            return Err(de::Error::custom(format!(
                "one key only; expected {}",
                self.0
            )));
        }
        Ok(Form::Table(key, value))
    }
}

/// A table's value is read as TOML gives it (a string or a table of integers).
#[derive(Deserialize, Serialize)]
#[serde(untagged)]
enum FormValue {
    Text(String),
    Offsets(BTreeMap<String, i64>),
}

fn form<'de, D: Deserializer<'de>>(
    d: D,
    expected: &'static str,
) -> Result<Form<FormValue>, D::Error> {
    d.deserialize_any(FormVisitor(expected, std::marker::PhantomData))
}

fn wrong<E: de::Error>(what: &str, expected: &str) -> E {
    E::custom(format!("{what}; expected {expected}"))
}

impl<'de> Deserialize<'de> for KafkaStartConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match form(d, START_FORMS)? {
            Form::Name(n) => KafkaStartConfig::Named(match n.as_str() {
                "committed" => KafkaStartName::Committed,
                "earliest" => KafkaStartName::Earliest,
                "latest" => KafkaStartName::Latest,
                _ => return Err(wrong(&format!("`{n}`"), START_FORMS)),
            }),
            Form::Table(k, FormValue::Text(timestamp)) if k == "timestamp" => {
                KafkaStartConfig::Timestamp { timestamp }
            }
            Form::Table(k, FormValue::Offsets(offsets)) if k == "offsets" => {
                KafkaStartConfig::Offsets { offsets }
            }
            Form::Table(k, _) => return Err(wrong(&format!("`{k} = ...`"), START_FORMS)),
        })
    }
}

impl<'de> Deserialize<'de> for KafkaStopAt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match form(d, STOP_FORMS)? {
            Form::Name(n) => KafkaStopAt::Named(match n.as_str() {
                "never" => KafkaStopName::Never,
                "end" => KafkaStopName::End,
                _ => return Err(wrong(&format!("`{n}`"), STOP_FORMS)),
            }),
            Form::Table(k, FormValue::Text(timestamp)) if k == "timestamp" => {
                KafkaStopAt::Timestamp { timestamp }
            }
            Form::Table(k, _) => return Err(wrong(&format!("`{k} = ...`"), STOP_FORMS)),
        })
    }
}

/// `{ key = value }`, a one-key table.
fn one_key<S: Serializer, V: Serialize>(s: S, key: &str, value: &V) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(1))?;
    m.serialize_entry(key, value)?;
    m.end()
}

impl Serialize for KafkaStartConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            KafkaStartConfig::Named(n) => n.serialize(s),
            KafkaStartConfig::Timestamp { timestamp } => one_key(s, "timestamp", timestamp),
            KafkaStartConfig::Offsets { offsets } => one_key(s, "offsets", offsets),
        }
    }
}

impl Serialize for KafkaStopAt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            KafkaStopAt::Named(n) => n.serialize(s),
            KafkaStopAt::Timestamp { timestamp } => one_key(s, "timestamp", timestamp),
            KafkaStopAt::Never => s.serialize_str("never"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Serialize)]
    struct T {
        start: Option<KafkaStartConfig>,
        #[serde(default)]
        stop_at: KafkaStopAt,
    }

    fn read(text: &str) -> Result<T, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn every_form_reads_and_a_wrong_one_says_what_is_accepted() {
        let t = read("start = \"latest\"\nstop_at = \"end\"").unwrap();
        assert_eq!(
            t.start,
            Some(KafkaStartConfig::Named(KafkaStartName::Latest))
        );
        assert_eq!(t.stop_at, KafkaStopAt::Named(KafkaStopName::End));
        let t =
            read("start = { offsets = { \"0\" = 5 } }\nstop_at = { timestamp = \"x\" }").unwrap();
        assert_eq!(
            t.start,
            Some(KafkaStartConfig::Offsets {
                offsets: BTreeMap::from([("0".into(), 5)])
            })
        );
        assert_eq!(
            t.stop_at,
            KafkaStopAt::Timestamp {
                timestamp: "x".into()
            }
        );
        assert_eq!(read("").unwrap().stop_at, KafkaStopAt::Never);
        for (bad, want) in [
            ("stop_at = \"soon\"", "`soon`; expected \"never\", \"end\""),
            (
                "stop_at = { offsets = { \"0\" = 1 } }",
                "`offsets = ...`; expected",
            ),
            (
                "start = { timestamp = \"x\", offsets = {} }",
                "one key only",
            ),
            ("start = \"first\"", "`first`; expected \"committed\""),
            ("start = 5", "expected \"committed\""),
        ] {
            let e = read(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
