//! Notifications on the screens: a team's channels (add, filter, send a
//! test, remove) and a flag's deliveries.

pub mod model;
#[cfg(feature = "ssr")]
pub mod port;
