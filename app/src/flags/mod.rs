//! Flags on the screens: the list and a flag's page.

pub mod fns;
pub mod model;
pub mod pages;
pub mod widgets;
