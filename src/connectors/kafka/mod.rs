//! The `kafka` connector: topics as sources (today in `crate::sources::kafka`) and as sinks
//! ([`sink`]: at-least-once producers per shard, or exactly-once through transactions committed
//! with each checkpoint, [`commit`]), the librdkafka client settings both share ([`client`],
//! [`options`]), and Avro with a Schema Registry as a format of its records ([`avro`], validated
//! by [`avro_plan`]).

pub mod avro;
pub mod avro_plan;
pub mod client;
pub mod commit;
pub mod config;
pub mod config_forms;
pub mod options;
pub mod produce;
pub mod sink;

pub use config::{Delivery, KafkaSinkConfig, KafkaSinkFormat, SchemaRegistryConfig};
pub use sink::KafkaSinkPlan;
