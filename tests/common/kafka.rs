//! The test broker (`scripts/kafka-local.sh start --sasl-ssl`: plaintext on PORT, SASL_SSL with
//! SCRAM-SHA-512 on PORT+2), started once per test binary, and how a job under test reaches it.
//! Test clients (producers, readers) always use the plaintext listener; a job's own Kafka
//! sources and sinks use SASL_SSL when `SLUICE_KAFKA_TEST_SECURITY=sasl_ssl`, so the same tests
//! check both (`.ci/run` runs the Kafka tests a second time that way).

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

pub fn script() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka-local.sh")
}

/// The broker's plaintext address, started once for all tests of this binary.
pub fn broker() -> &'static str {
    static B: OnceLock<String> = OnceLock::new();
    B.get_or_init(|| {
        let port = std::env::var("SLUICE_KAFKA_PORT").unwrap_or_else(|_| "9092".into());
        let out = Command::new("bash")
            .args([script(), "start", "--sasl-ssl"])
            .output()
            .expect("run scripts/kafka-local.sh");
        assert!(
            out.status.success(),
            "the Kafka tests need a broker: scripts/kafka-local.sh start --sasl-ssl failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        format!("127.0.0.1:{port}")
    })
}

/// The SASL_SSL listener and its credentials, as `kafka-local.sh env` prints them.
#[derive(Debug, Clone)]
pub struct Sasl {
    pub brokers: String,
    pub user: String,
    pub password: String,
    /// The CA certificate (PEM) the broker's certificate is signed with.
    pub ca: String,
}

pub fn sasl() -> &'static Sasl {
    static S: OnceLock<Sasl> = OnceLock::new();
    S.get_or_init(|| {
        broker();
        let out = Command::new("bash")
            .args([script(), "env"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let var = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("export {name}=")))
                .map(|v| v.trim_matches('\'').to_string())
                .unwrap_or_else(|| panic!("kafka-local.sh env printed no {name}:\n{text}"))
        };
        Sasl {
            brokers: var("SLUICE_KAFKA_SASL_BROKERS"),
            user: var("SLUICE_KAFKA_SASL_USER"),
            password: var("SLUICE_KAFKA_SASL_PASSWORD"),
            ca: var("SLUICE_KAFKA_CA"),
        }
    })
}

/// Whether the jobs under test reach Kafka over SASL_SSL.
pub fn over_sasl() -> bool {
    std::env::var("SLUICE_KAFKA_TEST_SECURITY").is_ok_and(|v| v.eq_ignore_ascii_case("sasl_ssl"))
}

/// The SASL_SSL settings of a job's Kafka client trusting the CA file `ca`, as TOML lines;
/// `password` is the TOML line that supplies `sasl.password` (`options_env` or `options_file`).
pub fn sasl_client_toml(s: &Sasl, ca: &str, password: &str) -> String {
    format!(
        "brokers = \"{}\"\n\
         options = {{ \"security.protocol\" = \"SASL_SSL\", \"sasl.mechanism\" = \"SCRAM-SHA-512\", \
         \"sasl.username\" = \"{}\", \"ssl.ca.location\" = {} }}\n{password}",
        s.brokers,
        s.user,
        super::toml_str(ca),
    )
}

/// [`sasl_client_toml`] with the broker's CA and the password read from the file the broker
/// script keeps it in (`options_file`).
pub fn sasl_toml(s: &Sasl) -> String {
    let password = Path::new(&s.ca).with_file_name("password");
    let line = format!(
        "options_file = {{ \"sasl.password\" = {} }}\n",
        super::toml_str(&password.to_string_lossy())
    );
    sasl_client_toml(s, &s.ca, &line)
}

/// The `brokers = ...` line (and security settings) of a job's Kafka source or sink under test.
pub fn client_toml() -> String {
    if over_sasl() {
        sasl_toml(sasl())
    } else {
        format!("brokers = \"{}\"\n", broker())
    }
}

/// A topic name of its own for one test (the broker outlives test runs).
pub fn unique_name(name: &str) -> String {
    format!(
        "{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// A topic of its own for one test.
pub fn topic(name: &str, partitions: u32) -> String {
    broker();
    let t = unique_name(name);
    let out = Command::new("bash")
        .args([script(), "topic", &t, &partitions.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t
}

/// Every record of `topic` a `read_committed` consumer on the plaintext listener sees, read to
/// the end of each partition (within a minute).
pub fn read_all(topic: &str) -> Vec<rdkafka::message::OwnedMessage> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::error::KafkaError;
    use rdkafka::message::Message;
    use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
    use std::time::{Duration, Instant};
    let c: BaseConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", broker())
        .set("group.id", format!("reader-{topic}"))
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .set("isolation.level", "read_committed")
        .create()
        .unwrap();
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .unwrap();
    let parts = md.topics()[0].partitions().len();
    let mut tpl = TopicPartitionList::new();
    for p in 0..parts {
        tpl.add_partition_offset(topic, p as i32, Offset::Beginning)
            .unwrap();
    }
    c.assign(&tpl).unwrap();
    let mut out = Vec::new();
    let mut eof = std::collections::BTreeSet::new();
    let start = Instant::now();
    while eof.len() < parts {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "reading {topic} timed out"
        );
        match c.poll(Duration::from_millis(100)) {
            Some(Ok(m)) => {
                eof.remove(&m.partition());
                out.push(m.detach());
            }
            Some(Err(KafkaError::PartitionEOF(p))) => {
                eof.insert(p);
            }
            Some(Err(e)) => panic!("{e}"),
            None => {}
        }
    }
    out
}

/// The payloads of [`read_all`] as text.
pub fn read_committed(topic: &str) -> Vec<String> {
    use rdkafka::message::Message;
    read_all(topic)
        .iter()
        .map(|m| String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned())
        .collect()
}
