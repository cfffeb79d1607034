//! `format = "avro"` on Kafka sources and sinks, validated into [`crate::avro`] plans: the
//! registry URL, the subject (Confluent's `TOPIC-value` by default), a source's pinned reader
//! version, a sink's schema file (read and parsed now, so a bad `.avsc` fails before anything
//! runs), and basic-auth credentials whose password comes from a variable or a file.

use super::Builder;
use crate::avro::{AvroSinkPlan, AvroSourcePlan, RegistryPlan};
use crate::config::{
    Format, KafkaSinkConfig, KafkaSinkFormat, KafkaSourceConfig, KeyPath, SchemaRegistryConfig,
};

impl Builder<'_> {
    pub(super) fn avro_source(
        &mut self,
        name: &str,
        k: &KafkaSourceConfig,
        topics: &[String],
    ) -> Option<AvroSourcePlan> {
        let at = KeyPath::new(["sources", name]);
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

    pub(super) fn avro_sink(&mut self, name: &str, k: &KafkaSinkConfig) -> Option<AvroSinkPlan> {
        let at = KeyPath::new(["sinks", name]);
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

    /// The `schema_registry` table when `avro` is the format; an error when one is given
    /// without the other.
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
