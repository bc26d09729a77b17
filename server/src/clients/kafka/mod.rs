//! Kafka, read-only: cluster settings and the pass that reads a cluster's
//! topics, consumer groups and offsets.

pub mod group_offsets;
pub mod reader;
pub mod settings;
