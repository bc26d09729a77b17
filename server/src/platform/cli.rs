//! What every feature's subcommands share: the actor and source their
//! changes are audited under, and the principal the command line acts as.
//! Each feature's own subcommands live in its `cli.rs`; `config.rs` is
//! their root.

use streamkeeper::accounts::role;
use streamkeeper::accounts::token::Scopes;

pub const ACTOR: &str = "cli";
pub const SOURCE: &str = "cli";

/// The command line acts with full rights (it holds the database
/// credentials), and is recorded as `cli`.
pub fn cli_principal() -> streamkeeper::accounts::account::Principal {
    streamkeeper::accounts::account::Principal {
        user_id: 0,
        username: ACTOR.into(),
        display_name: "command line".into(),
        roles: vec![role::Role::Admin],
        via: streamkeeper::accounts::account::Credential::Token,
        scopes: Some(Scopes::all()),
    }
}
