//! Doubles of the external REST services Streamkeeper talks to, for tests
//! and the demo. Each follows the contract in
//! `reference/schema-registry-and-connect.md` (and the on-call receivers
//! their published contracts, `oncall`) to the letter: status codes,
//! error bodies, content types and quirks.

pub mod connect;
pub mod oncall;
pub mod registry;
