//! Kafka, read-only: cluster settings and the pass that reads a cluster's
//! topics, consumer groups and offsets; a probe that keeps librdkafka's
//! reasons when a cluster cannot be reached (with a TLS handshake of its
//! own, `tls`, to say why a certificate was refused); and the one exception, the group
//! consumer of the OpenLineage Kafka transport (`group_consumer`).

pub mod group_consumer;
pub mod group_offsets;
pub mod probe;
pub mod progress;
pub mod reader;
pub mod settings;
pub mod tls;
pub mod wire;
