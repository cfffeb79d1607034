//! `sluice loadgen clicks --kafka BROKERS --topic T`: produces the synthetic click stream into a
//! Kafka topic instead of files: record `i` is exactly line `i` of the file loadgen would write
//! (without its newline), sent in index order with no key, each to a random partition (so the
//! partitions get even shares), with idempotence on so a retry never duplicates one. Optionally paced to
//! `--send-rate` records per second of wall clock. Never touches the runtime.

use crate::connectors::generator::model::{write_ndjson, ClickModel};
use crate::connectors::generator::GeneratorPlan;
use crate::loadgen::{LoadgenArgs, LoadgenError, LoadgenReport};
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::ClientContext;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Counts failed deliveries and keeps the first reason.
#[derive(Default)]
struct Deliveries {
    failed: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, _)) = result {
            self.failed.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut f) = self.first_error.lock() {
                f.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

pub fn produce(
    args: &LoadgenArgs,
    plan: &GeneratorPlan,
    brokers: &str,
    topic: &str,
) -> Result<LoadgenReport, LoadgenError> {
    let fail = |reason: String| LoadgenError::Kafka {
        brokers: brokers.to_string(),
        topic: topic.to_string(),
        reason,
    };
    let producer: BaseProducer<Deliveries> = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("enable.idempotence", "true")
        .set("linger.ms", "20")
        .set("batch.size", "1000000")
        .set("compression.type", "lz4")
        .set("client.id", "sluice-loadgen")
        // Keyless records go to a random partition each (not sticky batches), so every partition
        // gets about the same share.
        .set("sticky.partitioning.linger.ms", "0")
        .create_with_context(Deliveries::default())
        .map_err(|e| fail(format!("cannot create a producer: {e}")))?;
    let model = ClickModel::new(plan);
    let started = Instant::now();
    let mut line = Vec::with_capacity(128);
    let mut bytes = 0u64;
    for i in 0..args.events {
        if args.send_rate > 0 {
            // Pace in steps of 1/100 s of records rather than per record.
            let due = Duration::from_secs_f64(i as f64 / args.send_rate as f64);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                if wait > Duration::from_millis(10) {
                    std::thread::sleep(wait);
                }
            }
        }
        line.clear();
        write_ndjson(&model.click(i), &mut line);
        let payload = line.strip_suffix(b"\n").unwrap_or(&line);
        bytes += payload.len() as u64 + 1;
        loop {
            match producer.send(BaseRecord::<(), [u8]>::to(topic).payload(payload)) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                    producer.poll(Duration::from_millis(50));
                }
                Err((e, _)) => return Err(fail(format!("cannot send record {i}: {e}"))),
            }
        }
        if i % 1024 == 0 {
            producer.poll(Duration::ZERO);
        }
    }
    producer
        .flush(Duration::from_secs(120))
        .map_err(|e| fail(format!("flushing: {e}")))?;
    let failed = producer.context().failed.load(Ordering::Relaxed);
    if failed > 0 {
        let why = producer
            .context()
            .first_error
            .lock()
            .ok()
            .and_then(|f| f.clone())
            .unwrap_or_default();
        return Err(fail(format!("{failed} records were not delivered: {why}")));
    }
    Ok(LoadgenReport {
        events: args.events,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
        files: Vec::new(),
    })
}
