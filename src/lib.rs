//! Streamkeeper's domain: what a user, a role, an audit entry and a page of
//! results are, and the rules about them. Pure Rust with no IO, so it builds
//! for the server and for the browser (wasm) alike.

pub mod access;
pub mod accounts;
pub mod audit;
pub mod connect;
pub mod flags;
pub mod lineage;
pub mod notify;
pub mod pilot;
pub mod platform;
pub mod review;
pub mod schemas;
pub mod watch;
