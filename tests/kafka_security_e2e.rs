//! Kafka over SASL_SSL (SCRAM-SHA-512, the broker's certificate checked against its CA) through
//! the real binary and the real broker's SASL_SSL listener (`scripts/kafka-local.sh start
//! --sasl-ssl`): a job whose password comes from the environment (`options_env`) reads a topic and
//! writes one, every record arriving; a wrong password or an untrusted CA fails the start within
//! seconds with the broker's or TLS's reason, for a source and for a sink, never a hang; a missing
//! variable is a config error naming its key. The test's own clients use the plaintext listener.

mod common;

use common::kafka::{broker, read_committed, sasl, sasl_client_toml, topic, Sasl};
use common::{sluice_env, toml_str, BASE};
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

const MIN: Duration = Duration::from_secs(60);
const PASSWORD_VAR: &str = "SLUICE_TEST_KAFKA_PASSWORD";

fn produce(topic: &str, n: u64) {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .create()
        .unwrap();
    for i in 0..n {
        let line = format!("{{\"id\":{i},\"ts\":{}}}", BASE + i as i64);
        let key = i.to_string();
        p.send(BaseRecord::to(topic).key(&key).payload(&line))
            .unwrap();
        p.poll(Duration::ZERO);
    }
    p.flush(Duration::from_secs(30)).unwrap();
}

/// The ids of every record in `topic`.
fn ids(topic: &str) -> BTreeSet<u64> {
    read_committed(topic)
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// A Kafka client block over SASL_SSL with the password from [`PASSWORD_VAR`] and `ca`.
fn client(s: &Sasl, ca: &str) -> String {
    let line = format!("options_env = {{ \"sasl.password\" = \"{PASSWORD_VAR}\" }}\n");
    sasl_client_toml(s, ca, &line)
}

/// A job from `source` (a Kafka topic over `src_client`, or a file) through a filter into the
/// topic `out` over `sink_client`.
fn config(d: &Path, name: &str, source: &str, sink_client: &str, out: &str) -> String {
    let t = format!(
        "[runtime]\nshards = 2\n\n{source}\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"1s\" }}\n\n\
         [transforms.kept]\ntype = \"filter\"\ninputs = [\"ev\"]\nwhere = \"id >= 0\"\n\n\
         [sinks.out]\ntype = \"kafka\"\ninputs = [\"kept\"]\n{sink_client}topic = \"{out}\"\n"
    );
    let p = d.join(format!("{name}.toml"));
    std::fs::write(&p, t).unwrap();
    p.to_string_lossy().into_owned()
}

fn kafka_source(client: &str, topic: &str) -> String {
    format!(
        "[sources.ev]\ntype = \"kafka\"\n{client}topic = \"{topic}\"\nstart = \"earliest\"\n\
         stop_at = \"end\"\n"
    )
}

fn file_source(d: &Path, n: u64) -> String {
    let path = d.join("ev.ndjson");
    let text: String = (0..n)
        .map(|i| format!("{{\"id\":{i},\"ts\":{}}}\n", BASE + i as i64))
        .collect();
    std::fs::write(&path, text).unwrap();
    format!(
        "[sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n",
        toml_str(&path.to_string_lossy())
    )
}

#[test]
fn a_job_over_sasl_ssl_with_its_password_from_the_environment_moves_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = sasl();
    let (input, output) = (topic("sec-in", 3), topic("sec-out", 2));
    produce(&input, 5_000);
    let c = client(s, &s.ca);
    let cfg = config(d, "ok", &kafka_source(&c, &input), &c, &output);
    let r = sluice_env(
        d,
        &["run", "--config", &cfg],
        &[(PASSWORD_VAR, &s.password)],
        MIN * 2,
    );
    assert!(r.success, "{}", r.stderr);
    assert_eq!(ids(&output), (0..5_000).collect::<BTreeSet<u64>>());
}

/// Runs `cfg` expecting a failed start; its stderr.
fn refused(d: &Path, cfg: &str, password: &str) -> String {
    let t = Instant::now();
    let r = sluice_env(
        d,
        &["run", "--config", cfg],
        &[(PASSWORD_VAR, password)],
        MIN,
    );
    assert!(!r.success, "the job ran: {}", r.stderr);
    // The reason arrives at once, not after librdkafka's own timeouts.
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    r.stderr
}

#[test]
fn a_wrong_password_fails_the_start_with_the_brokers_reason_for_a_source_and_a_sink() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = sasl();
    let (input, output) = (topic("sec-pw-in", 1), topic("sec-pw-out", 1));
    let c = client(s, &s.ca);
    let plain = format!("brokers = \"{}\"\n", broker());
    let cfg = config(d, "src", &kafka_source(&c, &input), &plain, &output);
    let e = refused(d, &cfg, "not-the-password");
    assert!(
        e.contains("source `ev`") && e.contains("invalid credentials"),
        "{e}"
    );
    let cfg = config(d, "sink", &file_source(d, 10), &c, &output);
    let e = refused(d, &cfg, "not-the-password");
    assert!(
        e.contains("sink `out`") && e.contains("invalid credentials"),
        "{e}"
    );
    assert!(ids(&output).is_empty());
}

#[test]
fn an_untrusted_certificate_fails_the_start_with_the_tls_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = sasl();
    let other = d.join("other-ca.pem");
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=other",
        ])
        .arg("-keyout")
        .arg(d.join("other-ca.key"))
        .arg("-out")
        .arg(&other)
        .output()
        .expect("run openssl");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let input = topic("sec-ca-in", 1);
    let c = client(s, &other.to_string_lossy());
    let plain = format!("brokers = \"{}\"\n", broker());
    let cfg = config(d, "ca", &kafka_source(&c, &input), &plain, &input);
    let e = refused(d, &cfg, &s.password);
    assert!(
        e.contains("source `ev`") && e.contains("certificate verify failed"),
        "{e}"
    );
}

#[test]
fn a_password_variable_that_is_not_set_is_a_config_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = sasl();
    let c = client(s, &s.ca).replace(PASSWORD_VAR, "SLUICE_TEST_NO_SUCH_VARIABLE");
    let cfg = config(d, "var", &file_source(d, 1), &c, "unused");
    let r = sluice_env(d, &["run", "--config", &cfg], &[], MIN);
    assert!(!r.success);
    assert!(
        r.stderr.contains("options_env")
            && r.stderr.contains("sasl.password")
            && r.stderr
                .contains("`SLUICE_TEST_NO_SUCH_VARIABLE` is not set")
            && r.stderr.contains("var.toml"),
        "{}",
        r.stderr
    );
}
