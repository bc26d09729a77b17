//! Users, teams and tokens.

pub mod mail;
pub mod sso;
pub mod teams;
pub mod tokens;
pub mod users;
