//! Watch on the screens: clusters and their groups' lag, the streams
//! catalog, and the cluster settings.

pub mod clusters;
pub mod fns;
pub mod model;
pub mod settings;
pub mod streams;
