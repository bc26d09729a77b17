//! Users, teams and tokens.

pub mod teams;
pub mod tokens;
pub mod users;
