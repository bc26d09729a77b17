//! The audit log on the screens.

pub mod fns;
pub mod model;
pub mod pages;
pub mod widgets;
