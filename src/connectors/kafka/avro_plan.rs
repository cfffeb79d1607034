//! `format = "avro"` on Kafka sources and sinks, validated into [`crate::connectors::kafka::avro`] plans: the
//! registry URL, the subject (Confluent's `TOPIC-value` by default), a source's pinned reader
//! version, a sink's schema file (read and parsed now, so a bad `.avsc` fails before anything
//! runs), and basic-auth credentials whose password comes from a variable or a file.

use super::avro::{AvroSinkPlan, AvroSourcePlan, RegistryPlan};
use super::config::{KafkaChangelog, KafkaKeyFormat, KafkaSourceConfig};
use super::config::{KafkaSinkConfig, KafkaSinkFormat, SchemaRegistryConfig};
use crate::config::KeyPath;
use crate::connectors::check::Check;
use crate::connectors::csv::Format;

/// Validation of `format = "avro"` and its registry, on the table `cx` checks.
pub trait AvroCheck {
    fn avro_source(&mut self, k: &KafkaSourceConfig, topics: &[String]) -> Option<AvroSourcePlan>;
    fn avro_key(&mut self, k: &KafkaSourceConfig) -> Option<RegistryPlan>;
    fn avro_sink(&mut self, k: &KafkaSinkConfig) -> Option<AvroSinkPlan>;
}

impl AvroCheck for Check<'_> {
    fn avro_source(&mut self, k: &KafkaSourceConfig, topics: &[String]) -> Option<AvroSourcePlan> {
        let at = self.table();
        let avro_key = k.key_format == KafkaKeyFormat::Avro;
        if k.format != Format::Avro && avro_key {
            // The registry serves the keys only; `avro_key` validates the table.
            return None;
        }
        let sr = self.registry_table(&at, k.format == Format::Avro, k.schema_registry.as_ref())?;
        if sr.schema_file.is_some() {
            self.err(
                at.clone().key("schema_registry").key("schema_file"),
                "a source reads its writer schemas by the ids in its records and its reader schema from the registry; `schema_file` is for sinks".into(),
            );
        }
        let subject = match (&sr.subject, topics) {
            (Some(s), _) => s.clone(),
            (None, [one]) => format!("{one}-value"),
            (None, _) => {
                self.err(
                    at.clone().key("schema_registry").key("subject"),
                    "a source of several topics names the subject of its reader schema".into(),
                );
                String::new()
            }
        };
        Some(AvroSourcePlan {
            registry: self.registry(&at, sr),
            subject,
            version: sr.version,
        })
    }

    /// `key_format = "avro"`: keys read with their own writer schemas, by the ids they carry.
    fn avro_key(&mut self, k: &KafkaSourceConfig) -> Option<RegistryPlan> {
        if k.key_format != KafkaKeyFormat::Avro {
            return None;
        }
        let at = self.table();
        let Some(sr) = &k.schema_registry else {
            self.err(
                at.clone().key("key_format"),
                "key_format = \"avro\" reads key schemas from a registry: add `schema_registry = { url = \"http://127.0.0.1:8081\" }`".into(),
            );
            return None;
        };
        if !(k.metadata || k.changelog == KafkaChangelog::Upsert) {
            self.err(
                at.clone().key("key_format"),
                "the key is read only with metadata = true (as `_kafka.key`) or changelog = \"upsert\"".into(),
            );
        }
        Some(self.registry(&at, sr))
    }

    fn avro_sink(&mut self, k: &KafkaSinkConfig) -> Option<AvroSinkPlan> {
        let at = self.table();
        let sr = self.registry_table(
            &at,
            k.format == KafkaSinkFormat::Avro,
            k.schema_registry.as_ref(),
        )?;
        if sr.version.is_some() {
            self.err(
                at.clone().key("schema_registry").key("version"),
                "a sink writes with its `schema_file` or the subject's latest version".into(),
            );
        }
        let schema = sr.schema_file.as_ref().and_then(|path| {
            let key = at.clone().key("schema_registry").key("schema_file");
            match std::fs::read_to_string(path) {
                Ok(text) => match apache_avro::Schema::parse_str(&text) {
                    Ok(_) => Some(text),
                    Err(e) => {
                        self.err(
                            key,
                            format!("`{}` is not an Avro schema: {e}", path.display()),
                        );
                        None
                    }
                },
                Err(e) => {
                    self.err(key, format!("cannot read `{}`: {e}", path.display()));
                    None
                }
            }
        });
        Some(AvroSinkPlan {
            registry: self.registry(&at, sr),
            subject: sr
                .subject
                .clone()
                .unwrap_or_else(|| format!("{}-value", k.topic)),
            schema,
        })
    }
}

/// The `schema_registry` table when `avro` is the format; an error when one is given without
/// the other.
trait Registry {
    fn registry_table<'c>(
        &mut self,
        at: &KeyPath,
        avro: bool,
        sr: Option<&'c SchemaRegistryConfig>,
    ) -> Option<&'c SchemaRegistryConfig>;
    fn registry(&mut self, at: &KeyPath, sr: &SchemaRegistryConfig) -> RegistryPlan;
}

impl Registry for Check<'_> {
    fn registry_table<'c>(
        &mut self,
        at: &KeyPath,
        avro: bool,
        sr: Option<&'c SchemaRegistryConfig>,
    ) -> Option<&'c SchemaRegistryConfig> {
        match (avro, sr) {
            (true, Some(sr)) => Some(sr),
            (true, None) => {
                self.err(
                    at.clone().key("schema_registry"),
                    "format = \"avro\" reads schemas from a registry: `schema_registry = { url = \"http://127.0.0.1:8081\" }`".into(),
                );
                None
            }
            (false, Some(_)) => {
                self.err(
                    at.clone().key("schema_registry"),
                    "`schema_registry` is for format = \"avro\"".into(),
                );
                None
            }
            (false, None) => None,
        }
    }

    fn registry(&mut self, at: &KeyPath, sr: &SchemaRegistryConfig) -> RegistryPlan {
        let key = |k: &str| at.clone().key("schema_registry").key(k);
        if !(sr.url.starts_with("http://") || sr.url.starts_with("https://")) {
            self.err(
                key("url"),
                format!("`{}` is not an http:// or https:// URL", sr.url),
            );
        }
        let password = match (&sr.password_env, &sr.password_file) {
            (Some(_), Some(_)) => {
                self.err(
                    key("password_file"),
                    "give `password_env` or `password_file`, not both".into(),
                );
                None
            }
            (Some(var), None) => match std::env::var(var) {
                Ok(v) if !v.is_empty() => Some(v),
                _ => {
                    self.err(
                        key("password_env"),
                        format!("the environment variable `{var}` is not set, empty or not UTF-8"),
                    );
                    None
                }
            },
            (None, Some(path)) => match std::fs::read_to_string(path) {
                Ok(v) => Some(v.trim_end_matches(['\n', '\r']).to_string()),
                Err(e) => {
                    self.err(
                        key("password_file"),
                        format!("cannot read `{}`: {e}", path.display()),
                    );
                    None
                }
            },
            (None, None) => None,
        };
        let basic = match (&sr.username, password) {
            (Some(u), p) => Some((u.clone(), p.unwrap_or_default())),
            (None, Some(_)) => {
                self.err(key("username"), "a password needs its `username`".into());
                None
            }
            (None, None) => None,
        };
        RegistryPlan {
            url: sr.url.clone(),
            basic,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::connectors::kafka::KafkaSinkPlan;
    use crate::connectors::kafka::KafkaSource;
    use crate::plan::{build, Plan};

    /// A Kafka source and sink with `source` and `sink` lines added.
    fn job(source: &str, sink: &str) -> String {
        format!(
            "[sources.ev]\ntype = \"kafka\"\nbrokers = \"b:9092\"\ntopic = \"t\"\n\
             event_time = {{ field = \"ts\", unit = \"ms\" }}\n{source}\n\
             [transforms.kept]\ntype = \"filter\"\ninputs = [\"ev\"]\nwhere = \"true\"\n\n\
             [sinks.out]\ntype = \"kafka\"\ninputs = [\"kept\"]\nbrokers = \"b:9092\"\ntopic = \"o\"\n{sink}"
        )
    }

    fn built(text: &str) -> Result<Plan, String> {
        let (config, src) = parse(text, "a.toml").map_err(|e| e.to_string())?;
        build(&config, &src).map_err(|e| e.to_string())
    }

    #[test]
    fn subjects_default_to_the_topic_and_secrets_come_from_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let avsc = dir.path().join("o.avsc");
        std::fs::write(
            &avsc,
            r#"{"type":"record","name":"O","fields":[{"name":"n","type":"long"}]}"#,
        )
        .unwrap();
        let plan = built(&job(
            "format = \"avro\"\nkey_format = \"avro\"\nmetadata = true\n\
             schema_registry = { url = \"http://r:8081\", version = 3, username = \"u\", password_env = \"PATH\" }\n",
            &format!(
                "format = \"avro\"\nschema_registry = {{ url = \"https://r\", schema_file = {:?} }}\n",
                avsc.display().to_string()
            ),
        ))
        .unwrap();
        let Some(k) = plan.sources[0].source_as::<KafkaSource>().map(|k| &k.plan) else {
            panic!()
        };
        let a = k.avro.as_ref().unwrap();
        assert_eq!((a.subject.as_str(), a.version), ("t-value", Some(3)));
        let basic = a.registry.basic.as_ref().unwrap();
        assert_eq!(
            (basic.0.as_str(), basic.1.clone()),
            ("u", std::env::var("PATH").unwrap())
        );
        assert_eq!(k.avro_key.as_ref().unwrap().url, "http://r:8081");
        let Some(s) = plan.sinks[0].sink_as::<KafkaSinkPlan>() else {
            panic!()
        };
        let sa = s.avro.as_ref().unwrap();
        assert_eq!(sa.subject, "o-value");
        assert!(sa.schema.as_deref().unwrap().contains("\"O\""));
    }

    #[test]
    fn misplaced_or_missing_registry_settings_name_their_keys() {
        let cases = [
            ("format = \"avro\"\n", "", "sources.ev.schema_registry", "reads schemas from a registry"),
            ("schema_registry = { url = \"http://r\" }\n", "", "sources.ev.schema_registry", "is for format = \"avro\""),
            ("key_format = \"avro\"\nmetadata = true\n", "", "sources.ev.key_format", "add `schema_registry"),
            ("key_format = \"avro\"\nschema_registry = { url = \"http://r\" }\n", "", "sources.ev.key_format", "only with metadata = true"),
            ("format = \"avro\"\nschema_registry = { url = \"r:8081\" }\n", "", "sources.ev.schema_registry.url", "not an http://"),
            ("format = \"avro\"\nschema_registry = { url = \"http://r\", schema_file = \"x.avsc\" }\n", "", "schema_registry.schema_file", "for sinks"),
            ("format = \"avro\"\nschema_registry = { url = \"http://r\", password_env = \"SLUICE_NO_SUCH_VAR_7\" }\n", "", "schema_registry.password_env", "`SLUICE_NO_SUCH_VAR_7` is not set"),
            ("", "format = \"avro\"\nschema_registry = { url = \"http://r\", schema_file = \"/nonexistent.avsc\" }\n", "sinks.out.schema_registry.schema_file", "cannot read `/nonexistent.avsc`"),
            ("", "format = \"avro\"\nschema_registry = { url = \"http://r\", version = 2 }\n", "sinks.out.schema_registry.version", "latest version"),
        ];
        for (source, sink, key, why) in cases {
            let e = built(&job(source, sink)).unwrap_err();
            assert!(
                e.contains(key) && e.contains(why),
                "{key} / {why} not in:\n{e}"
            );
        }
    }

    #[test]
    fn a_file_source_cannot_be_avro() {
        let text = "[sources.f]\ntype = \"file\"\npath = \"x.ndjson\"\nformat = \"avro\"\n\
                    event_time = { field = \"ts\" }\n\n\
                    [transforms.kept]\ntype = \"filter\"\ninputs = [\"f\"]\nwhere = \"true\"\n\n\
                    [sinks.out]\ntype = \"stdout\"\ninputs = [\"kept\"]\n";
        let e = built(text).unwrap_err();
        assert!(
            e.contains("sources.f.format") && e.contains("read from Kafka"),
            "{e}"
        );
    }
}
