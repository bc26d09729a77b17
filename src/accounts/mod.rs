//! Accounts: who a user is, what their role lets them do, how they sign in
//! (passwords, second factors, sessions) and what a machine token may do.

pub mod account;
pub mod list;
pub mod role;
pub mod second_factor;
pub mod signin;
pub mod sso;
pub mod time_zone;
pub mod token;
