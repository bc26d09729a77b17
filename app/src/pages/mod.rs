//! One module a page (or a pair of list and detail pages), each with its
//! server functions first and its components after.

pub mod account;
pub mod audit;
pub mod cluster_settings;
pub mod flags;
pub mod home;
pub mod login;
pub mod review;
pub mod review_settings;
pub mod schemas;
pub mod streams;
pub mod teams;
pub mod users;
pub mod watch;
