//! A Confluent Schema Registry client over its REST API (the API Confluent's registry, Karapace,
//! Redpanda and Apicurio's `ccompat` endpoint all serve): schemas by global id, a subject's
//! versions, and registering a sink's schema. Blocking and small on purpose: it runs at start and
//! when a record names a schema id not seen before, never per record.

use std::time::Duration;

/// How long one registry request may take before the caller gets an error.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Waits before the retries of a request the registry could not answer (no connection, 5xx).
const RETRIES: [Duration; 3] = [
    Duration::from_millis(200),
    Duration::from_secs(1),
    Duration::from_secs(3),
];

/// Why a registry request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    /// The registry answered that it does not have it (4xx): asking again will not help.
    pub refused: bool,
    pub message: String,
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<RegistryError> for String {
    fn from(e: RegistryError) -> String {
        e.message
    }
}
const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// One subject version: its global schema id, its version number and its schema text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectVersion {
    pub id: u32,
    pub version: u32,
    pub schema: String,
}

/// A registry at a base URL (`http://host:8081`, or Apicurio's `.../apis/ccompat/v7`).
#[derive(Clone)]
pub struct Registry {
    base: String,
    agent: ureq::Agent,
    /// `Basic ...` from the configured user and password.
    auth: Option<String>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Registry({})", self.base)
    }
}

impl Registry {
    /// A client for `url`; `basic` is `(user, password)` for HTTP basic authentication.
    pub fn new(url: &str, basic: Option<(&str, &str)>) -> Registry {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false);
        #[cfg(feature = "kafka-tls")]
        let config = config.tls_config(
            ureq::tls::TlsConfig::builder()
                .provider(ureq::tls::TlsProvider::NativeTls)
                .build(),
        );
        Registry {
            base: url.trim_end_matches('/').to_string(),
            agent: config.build().into(),
            auth: basic
                .map(|(u, p)| format!("Basic {}", super::base64(format!("{u}:{p}").as_bytes()))),
        }
    }

    /// The schema text with global id `id`.
    pub fn schema_by_id(&self, id: u32) -> Result<String, RegistryError> {
        let v = self.get(&format!("/schemas/ids/{id}"))?;
        v.get("schema")
            .and_then(|s| s.as_str())
            .map(str::to_string)
            .ok_or_else(|| RegistryError {
                refused: true,
                message: format!("the registry's answer for schema id {id} has no `schema`"),
            })
    }

    /// Version `version` of `subject`, or its latest with `None`.
    pub fn subject_version(
        &self,
        subject: &str,
        version: Option<u32>,
    ) -> Result<SubjectVersion, String> {
        let v = version.map_or("latest".to_string(), |n| n.to_string());
        let body = self
            .get(&format!("/subjects/{}/versions/{v}", encode(subject)))
            .map_err(String::from)?;
        subject_version(&body).ok_or_else(|| {
            format!("the registry's answer for subject `{subject}` is not a version")
        })
    }

    /// Registers `schema` under `subject` (the registry answers with the id it already has when
    /// the schema is registered, and refuses one its compatibility rule forbids).
    pub fn register(&self, subject: &str, schema: &str) -> Result<u32, String> {
        let body = serde_json::json!({ "schema": schema }).to_string();
        let path = format!("/subjects/{}/versions", encode(subject));
        let mut req = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", CONTENT_TYPE)
            .header("Accept", CONTENT_TYPE);
        if let Some(a) = &self.auth {
            req = req.header("Authorization", a);
        }
        let res = req.send(body.as_bytes());
        let v = self.answer(&path, res).map_err(String::from)?;
        v.get("id")
            .and_then(|i| i.as_u64())
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(|| format!("the registry's answer to registering `{subject}` has no `id`"))
    }

    /// A GET, retried while the registry cannot answer (no connection, 5xx).
    fn get(&self, path: &str) -> Result<serde_json::Value, RegistryError> {
        let mut waits = RETRIES.iter();
        loop {
            let mut req = self
                .agent
                .get(format!("{}{path}", self.base))
                .header("Accept", CONTENT_TYPE);
            if let Some(a) = &self.auth {
                req = req.header("Authorization", a);
            }
            match self.answer(path, req.call()) {
                Err(e) if !e.refused => match waits.next() {
                    Some(w) => std::thread::sleep(*w),
                    None => return Err(e),
                },
                res => return res,
            }
        }
    }

    /// The JSON body of a 2xx answer, or the registry's own message (`error_code`, `message`).
    fn answer(
        &self,
        path: &str,
        res: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<serde_json::Value, RegistryError> {
        let unavailable = |message: String| RegistryError {
            refused: false,
            message,
        };
        let mut res =
            res.map_err(|e| unavailable(format!("schema registry `{}`: {e}", self.base)))?;
        let status = res.status().as_u16();
        let text = res.body_mut().read_to_string().map_err(|e| {
            unavailable(format!(
                "schema registry `{}`: reading {path}: {e}",
                self.base
            ))
        })?;
        let body: serde_json::Value =
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
        if (200..300).contains(&status) {
            return Ok(body);
        }
        let message = body
            .get("message")
            .and_then(|m| m.as_str())
            .map_or_else(|| text.chars().take(200).collect(), str::to_string);
        Err(RegistryError {
            refused: (400..500).contains(&status),
            message: format!(
                "schema registry `{}` answered {status} to {path}: {message}",
                self.base
            ),
        })
    }
}

fn subject_version(v: &serde_json::Value) -> Option<SubjectVersion> {
    let num = |k: &str| v.get(k)?.as_u64().and_then(|n| u32::try_from(n).ok());
    Some(SubjectVersion {
        id: num("id")?,
        version: num("version")?,
        schema: v.get("schema")?.as_str()?.to_string(),
    })
}

/// Percent-encodes a subject for a URL path (subjects are usually `topic-value`).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_percent_encoded() {
        assert_eq!(encode("orders-value"), "orders-value");
        assert_eq!(encode("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn a_version_answer_is_read() {
        let v = serde_json::json!({"subject":"s","id":7,"version":2,"schema":"\"long\""});
        assert_eq!(
            subject_version(&v),
            Some(SubjectVersion {
                id: 7,
                version: 2,
                schema: "\"long\"".into()
            })
        );
        assert_eq!(subject_version(&serde_json::json!({"id": 1})), None);
    }

    #[test]
    fn an_unreachable_registry_is_an_error_not_a_panic() {
        let r = Registry::new("http://127.0.0.1:9", None);
        let e = r.schema_by_id(1).unwrap_err();
        assert!(e.message.contains("127.0.0.1:9") && !e.refused, "{e}");
    }
}
