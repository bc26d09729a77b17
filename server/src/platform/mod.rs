//! Leaves every feature may use and that import no feature: the database
//! pool and migrations, errors a person can act on, password hashing,
//! sealing secrets the server reads back, the
//! sign-in limiter, schema limits, the routine runner, and the caller's
//! authorization facts.

pub mod authz;
pub mod cli;
pub mod clock;
pub mod db;
pub mod db_watch;
pub mod errors;
pub mod limiter;
pub mod limits;
pub mod metrics;
pub mod ownership;
pub mod password;
pub mod rest;
pub mod routine;
pub mod seal;
