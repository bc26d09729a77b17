//! Notifications on the screens: a team's channels (add, filter, send a
//! test, remove) and repeat interval, silences, and the widgets other
//! pages show (a flag's deliveries, "muted until", broken channels).

pub mod fns;
pub mod model;
pub mod pages;
#[cfg(feature = "ssr")]
pub mod port;
pub mod widgets;
