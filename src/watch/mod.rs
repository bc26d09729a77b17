//! Watching clusters: a cluster's health, consumer lag judged over a
//! window of passes, topic health, what a pass observed as flags, the time
//! series charts show, and the consumer protocol's assignment bytes.

pub mod cluster;
pub mod consumer_protocol;
pub mod health;
pub mod lag;
pub mod list;
pub mod observe;
pub mod series;
pub mod window;
