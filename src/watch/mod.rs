//! Watching clusters: a cluster's health, consumer lag, topic health, the
//! time series charts show, and the consumer protocol's assignment bytes.

pub mod cluster;
pub mod consumer_protocol;
pub mod health;
pub mod lag;
pub mod series;
