//! Watch on the screens: clusters and their groups' lag, the streams
//! catalog, the streams' freshness SLOs and a domain's, and the cluster
//! settings.

pub mod clusters;
pub mod domains;
pub mod fns;
pub mod model;
#[cfg(feature = "ssr")]
pub mod port;
pub mod settings;
pub mod streams;
pub mod widgets;
