//! Watching clusters: a cluster's health, consumer lag judged over a
//! window of passes, topic health, what a pass observed as flags, the time
//! series charts show, the consumer protocol's assignment bytes and
//! Kafka's rule for topic names.

pub mod cluster;
pub mod consumer_protocol;
pub mod health;
pub mod lag;
pub mod list;
pub mod listing;
pub mod observe;
pub mod reach;
pub mod retention;
pub mod series;
pub mod sign_in;
pub mod slo;
pub mod topic_name;
pub mod window;
