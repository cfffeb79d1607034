//! The contract pipeline of the dataflow-graph issue on a real Kafka broker: `config/ad_spend_kafka.toml`
//! (three topics in, results out exactly once) over topics of 1 and 3 partitions equals the
//! reference model; and a job that mixes a Kafka source with files gives the same results as the
//! all-file job (sources of any kind in one job, each keeping its position in its own terms).

mod common;

use common::kafka::{broker, client_toml, read_committed, topic};

use common::flow_model::{assert_spend_eq, parse_spend_output, read_spend_output, spend_model_dir};
use common::{read_lines, sluice, toml_str};
use rdkafka::config::ClientConfig;
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use std::path::Path;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);

/// Produces every line of `file` into `topic`, line `i` to partition `i % partitions` (each
/// partition's records stay in file order, so within the file's out-of-orderness bound).
fn produce(file: &Path, topic: &str, partitions: i32) {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker())
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .create()
        .unwrap();
    for (i, line) in read_lines(file).iter().enumerate() {
        let part = (i as i32) % partitions;
        loop {
            match p.send(
                BaseRecord::<(), str>::to(topic)
                    .payload(line)
                    .partition(part),
            ) {
                Ok(()) => break,
                Err((e, _)) => {
                    assert!(
                        matches!(e, KafkaError::MessageProduction(_)),
                        "producing to {topic}: {e}"
                    );
                    p.poll(Duration::from_millis(20));
                }
            }
        }
        if i % 1000 == 0 {
            p.poll(Duration::ZERO);
        }
    }
    p.flush(Duration::from_secs(60)).unwrap();
}

/// Writes the three input files with `sluice loadgen flow`.
fn write_data(dir: &Path, events: u64, rate: u64, seed: u64) {
    let exit = sluice(
        dir,
        &[
            "loadgen",
            "flow",
            "--events",
            &events.to_string(),
            "--rate",
            &rate.to_string(),
            "--seed",
            &seed.to_string(),
            "--out",
            &dir.to_string_lossy(),
        ],
        MIN,
    );
    assert!(exit.success, "loadgen failed: {}", exit.stderr);
}

/// `config/ad_spend_kafka.toml` with this test's broker, topics, state dir and shard count.
fn kafka_config(d: &Path, name: &str, topics: [&str; 4], shards: usize) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("config/ad_spend_kafka.toml"),
    )
    .unwrap()
    .replace("brokers = \"127.0.0.1:9092\"\n", &client_toml())
    .replace("\"flow-impressions\"", &toml_str(topics[0]))
    .replace("\"flow-clicks\"", &toml_str(topics[1]))
    .replace("\"flow-prices\"", &toml_str(topics[2]))
    .replace(
        "topic = \"ad-spend\"",
        &format!(
            "topic = {}\ntransactional_id_prefix = {}",
            toml_str(topics[3]),
            toml_str(name)
        ),
    )
    .replace(
        "shards = 2",
        &format!("shards = {shards}\nchunk_bytes = 65536"),
    )
    .replace(
        "\"state/ad_spend_kafka\"",
        &toml_str(&d.join(format!("{name}-state")).to_string_lossy()),
    )
    .replace("interval = \"1s\"", "interval = \"50ms\"");
    let path = d.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn the_contract_pipeline_on_kafka_topics_of_1_and_3_partitions_equals_the_model_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_data(d, 20_000, 250, 21);
    let want = spend_model_dir(d);
    assert!(want.len() > 300, "{} windows", want.len());
    for (partitions, shards) in [(1u32, 2usize), (3, 2), (3, 3)] {
        let names = ["imps", "clicks", "prices", "spend"];
        let t: Vec<String> = names.iter().map(|n| topic(n, partitions)).collect();
        for (file, topic) in [
            ("flow_impressions.ndjson", &t[0]),
            ("flow_clicks.ndjson", &t[1]),
            ("flow_prices.ndjson", &t[2]),
        ] {
            produce(&d.join(file), topic, partitions as i32);
        }
        let name = format!("k{partitions}-{shards}");
        let cfg = kafka_config(d, &name, [&t[0], &t[1], &t[2], &t[3]], shards);
        let exit = sluice(d, &["run", "--config", &cfg], MIN * 3);
        assert!(exit.success, "{partitions} partitions: {}", exit.stderr);
        let got = parse_spend_output(&read_committed(&t[3]));
        assert_spend_eq(
            &want,
            &got,
            &format!("{partitions} partitions, {shards} shards"),
        );
    }
}

#[test]
fn kafka_and_files_in_one_job_give_the_all_file_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_data(d, 20_000, 250, 8);
    let want = spend_model_dir(d);
    let imps = topic("imps", 2);
    produce(&d.join("flow_impressions.ndjson"), &imps, 2);
    // Impressions from Kafka; clicks and prices from files; results to a file.
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("config/ad_spend.toml"))
            .unwrap();
    let at = |f: &str| toml_str(&d.join(f).to_string_lossy());
    let kafka_imps = format!(
        "[sources.impressions]\ntype = \"kafka\"\n{}topic = {}\nstart = \"earliest\"\nstop_at = \"end\"\n",
        client_toml(),
        toml_str(&imps)
    );
    let text = text
        .replace(
            "[sources.impressions]\ntype = \"file\"\npath = \"data/flow_impressions.ndjson\"\n",
            &kafka_imps,
        )
        .replace("\"data/flow_clicks.ndjson\"", &at("flow_clicks.ndjson"))
        .replace("\"data/flow_prices.ndjson\"", &at("flow_prices.ndjson"))
        .replace("\"out/ad_spend.ndjson\"", &at("mixed.ndjson"))
        .replace("shards = 2", "shards = 2\nchunk_bytes = 65536");
    assert!(
        text.contains("type = \"kafka\""),
        "the impressions source is Kafka now"
    );
    let state = toml_str(&d.join("mixed-state").to_string_lossy());
    let cfg = d.join("mixed.toml");
    std::fs::write(
        &cfg,
        format!("{text}\n[checkpoint]\ndir = {state}\ninterval = \"50ms\"\n"),
    )
    .unwrap();
    let exit = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN * 3);
    assert!(exit.success, "{}", exit.stderr);
    assert_spend_eq(
        &want,
        &read_spend_output(&d.join("mixed.ndjson")),
        "kafka + files",
    );
}
