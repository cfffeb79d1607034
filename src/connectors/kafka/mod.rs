//! The `kafka` connector: topics as sources ([`source`]: each partition a log one shard owns,
//! found by [`discover`], read by [`read`], records with their metadata or as an upsert changelog
//! by [`meta`]) and as sinks ([`sink`]: at-least-once producers per shard, or exactly-once through
//! transactions committed with each checkpoint, [`commit`]), the librdkafka client settings both
//! share ([`client`], [`options`]), and Avro with a Schema Registry as a format of its records
//! ([`avro`], validated by [`avro_plan`]).

pub mod avro;
pub mod avro_plan;
mod chunks;
pub mod client;
pub mod commit;
pub mod config;
pub mod config_forms;
pub mod discover;
pub mod meta;
pub mod options;
pub mod produce;
pub mod read;
pub mod sink;
pub mod source;
pub mod source_plan;
pub mod sql;

pub use config::{
    Delivery, KafkaChangelog, KafkaKeyFormat, KafkaSinkConfig, KafkaSinkFormat, KafkaSourceConfig,
    SchemaRegistryConfig,
};
pub use sink::KafkaSinkPlan;
pub use source::KafkaSource;
pub use source_plan::{KafkaPlan, KafkaStart};
