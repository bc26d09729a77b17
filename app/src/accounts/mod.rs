//! Accounts on the screens: signing in, the caller's own account, and the
//! users and teams admins manage.

pub mod account;
pub mod fns;
pub mod login;
pub mod model;
pub mod teams;
pub mod users;
