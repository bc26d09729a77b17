//! The outbound clients: the egress rule every HTTP client is built with,
//! Kafka (read-only), the Schema Registry, Kafka Connect, webhooks, mail (SMTP), OpenLineage forwarding.
//! Leaves: they import no feature.

pub mod connect;
pub mod egress;
pub mod kafka;
pub mod openlineage;
pub mod registry;
pub mod smtp;
pub mod webhook;
