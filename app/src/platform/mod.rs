//! The platform on the screens: the background routines an admin watches,
//! reschedules and runs by hand, and the replicas sharing them out
//! (Settings → Routines).

pub mod fns;
pub mod model;
pub mod replicas;
pub mod routines;
