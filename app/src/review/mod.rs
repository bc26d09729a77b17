//! The review inbox on the screens: the inbox, an item's page and the
//! review settings.

pub mod fns;
pub mod inbox;
pub mod item;
pub mod model;
pub mod settings;
pub mod widgets;
