//! The audit log: appending to the keyed hash chain, reading it, and its
//! REST routes. The chain's rules are in `streamkeeper::audit`.

pub mod api;
pub mod cli;
pub mod store;
