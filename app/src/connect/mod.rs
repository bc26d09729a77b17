//! Kafka Connect on the screens: a cluster's Connect clusters (drawn on
//! the cluster's page), a Connect cluster's connectors, and a connector
//! with its tasks, traces and history; the draft form.

pub mod connectors;
pub mod draft;
pub mod fns;
pub mod model;
pub mod widgets;
