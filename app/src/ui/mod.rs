//! Widgets every feature's pages share. Nothing here imports a feature's
//! pages.

pub mod chart;
pub mod file_text;
pub mod flash;
pub mod header;
pub mod island;
pub mod notes;
pub mod owner;
pub mod pager;
pub mod params;
pub mod roles;
pub mod schema;
pub mod sort;
pub mod time;
pub mod title;
