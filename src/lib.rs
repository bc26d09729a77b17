//! Streamkeeper's domain: what a user, a role, an audit entry and a page of
//! results are, and the rules about them. Pure Rust with no IO, so it builds
//! for the server and for the browser (wasm) alike.

pub mod access;
pub mod account;
pub mod audit;
pub mod client_addr;
pub mod connect;
pub mod credential;
pub mod egress;
pub mod flags;
pub mod limit;
pub mod lineage;
pub mod page;
pub mod review;
pub mod role;
pub mod schema;
pub mod second_factor;
pub mod shell;
pub mod signin;
pub mod token;
pub mod watch;
