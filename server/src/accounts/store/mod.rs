//! Users, teams and tokens.

pub mod sso;
pub mod teams;
pub mod tokens;
pub mod users;
