//! What Kafka sources and sinks share as librdkafka clients: the security settings this build can
//! honour (TLS and SASL SCRAM need the `kafka-tls` feature, librdkafka over the system's OpenSSL),
//! and the start-up check that reaches the brokers with the job's own settings and, when it cannot,
//! fails within seconds with the broker's reason (authentication failed, certificate not trusted)
//! instead of a bare timeout or a hang. Secrets reach `options` from the environment or files
//! while the plan is built (`options_env`, `options_file`), never from the TOML itself.

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::metadata::Metadata;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Whether this build speaks TLS to Kafka (and so SASL SCRAM, which librdkafka does with OpenSSL).
pub const TLS: bool = cfg!(feature = "kafka-tls");

/// The option a build without TLS cannot honour, and why; `None` when all can be.
pub fn unsupported(options: &BTreeMap<String, String>) -> Option<(String, String)> {
    if TLS {
        return None;
    }
    let lower = |k: &str| options.get(k).map(|v| v.trim().to_ascii_lowercase());
    let rebuild = "this sluice was built without TLS (the `kafka-tls` feature: install OpenSSL's \
                   headers, Debian `libssl-dev` and `pkg-config`, and build with default features)";
    if let Some(p) = lower("security.protocol") {
        if p == "ssl" || p == "sasl_ssl" {
            return Some((
                "security.protocol".into(),
                format!("`{p}` needs TLS: {rebuild}"),
            ));
        }
    }
    for k in ["sasl.mechanism", "sasl.mechanisms"] {
        if lower(k).is_some_and(|m| m.starts_with("scram")) {
            return Some((k.into(), format!("SASL SCRAM needs OpenSSL: {rebuild}")));
        }
    }
    None
}

/// A client context that keeps what librdkafka last reported as an error, so a failed start can
/// say why (the broker's message travels in the reason).
#[derive(Default)]
pub struct Reasons {
    last: Mutex<Option<(Option<RDKafkaErrorCode>, String)>>,
}

impl Reasons {
    fn last(&self) -> Option<(Option<RDKafkaErrorCode>, String)> {
        self.last.lock().ok().and_then(|g| g.clone())
    }
}

impl ClientContext for Reasons {
    fn error(&self, error: KafkaError, reason: &str) {
        if let Ok(mut g) = self.last.lock() {
            *g = Some((error.rdkafka_error_code(), reason.to_string()));
        }
    }
}

impl ConsumerContext for Reasons {}

/// Errors no retry within the start-up check can cure: the settings or credentials are wrong.
fn is_final(code: Option<RDKafkaErrorCode>) -> bool {
    matches!(
        code,
        Some(
            RDKafkaErrorCode::Authentication
                | RDKafkaErrorCode::SaslAuthenticationFailed
                | RDKafkaErrorCode::SSL
                | RDKafkaErrorCode::TopicAuthorizationFailed
                | RDKafkaErrorCode::ClusterAuthorizationFailed
                | RDKafkaErrorCode::UnsupportedSASLMechanism
        )
    )
}

/// A consumer over `config` that remembers its errors (for checks and discovery).
pub fn consumer(config: &ClientConfig) -> Result<BaseConsumer<Reasons>, String> {
    config
        .create_with_context(Reasons::default())
        .map_err(|e| format!("cannot create a Kafka client: {e}"))
}

/// The metadata of `topic` through `c`, asked in short slices so an authentication or TLS failure
/// ends the wait at once; after `timeout` the last reason the client heard is the error.
pub fn metadata(
    c: &BaseConsumer<Reasons>,
    topic: &str,
    timeout: Duration,
) -> Result<Metadata, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let slice = left.min(Duration::from_millis(500));
        let err = match c.fetch_metadata(Some(topic), slice) {
            Ok(md) => return Ok(md),
            Err(e) => e,
        };
        // Error events reach the context only while the client is polled.
        let _ = c.poll(Duration::from_millis(100));
        let heard = c.context().last();
        if let Some((code, reason)) = &heard {
            if is_final(*code) {
                return Err(reason.clone());
            }
        }
        if left <= slice {
            return Err(match heard {
                Some((_, reason)) => format!("{err}; the client last reported: {reason}"),
                None => err.to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_build_without_tls_names_the_option_it_cannot_honour() {
        let tls = opts(&[("security.protocol", "SASL_SSL")]);
        let scram = opts(&[("sasl.mechanism", "SCRAM-SHA-512")]);
        let plain = opts(&[
            ("security.protocol", "sasl_plaintext"),
            ("sasl.mechanism", "PLAIN"),
        ]);
        assert_eq!(unsupported(&plain), None);
        if TLS {
            assert_eq!(unsupported(&tls), None);
            assert_eq!(unsupported(&scram), None);
        } else {
            assert_eq!(unsupported(&tls).unwrap().0, "security.protocol");
            assert_eq!(unsupported(&scram).unwrap().0, "sasl.mechanism");
        }
    }

    #[test]
    fn an_unreachable_broker_fails_within_the_timeout_with_a_reason() {
        let mut c = ClientConfig::new();
        // A port nothing listens on (the discard port on loopback).
        c.set("bootstrap.servers", "127.0.0.1:9")
            .set("group.id", "t");
        let c = consumer(&c).unwrap();
        let t = Instant::now();
        let e = metadata(&c, "x", Duration::from_secs(2)).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(!e.is_empty());
    }
}
