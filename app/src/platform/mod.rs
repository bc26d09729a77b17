//! The platform on the screens: the background routines an admin watches,
//! reschedules and runs by hand (Settings → Routines).

pub mod fns;
pub mod model;
pub mod routines;
