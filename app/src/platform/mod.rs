//! The platform on the screens: the background routines an admin watches,
//! reschedules and runs by hand, and the replicas sharing them out
//! (Settings → Routines).

pub mod fns;
pub mod model;
#[cfg(feature = "ssr")]
pub mod port;
pub mod replicas;
pub mod routines;
