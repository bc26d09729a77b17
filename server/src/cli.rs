//! What every feature's subcommands share: the actor and source their
//! changes are audited under, and the principal the command line acts as.
//! Each feature's own subcommands live in its `cli.rs`.

use crate::audit::store::Event;
use crate::clients::egress::Outbound;
use crate::clients::kafka::reader;
use crate::clients::kafka::settings::{ClusterSettings, SecretRef};
use crate::platform::password;
use crate::store::is_unique_violation;
use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgPool;
use std::io::Read;
use std::process::ExitCode;
use streamkeeper::account::{check_display_name, check_password, check_username};
use streamkeeper::audit::{ChainBreak, GENESIS, Head};
use streamkeeper::credential::CredentialPolicy;
use streamkeeper::role;
use streamkeeper::token::{Dead, Scopes, liveness};

pub const ACTOR: &str = "cli";
pub const SOURCE: &str = "cli";

/// The command line acts with full rights (it holds the database
/// credentials), and is recorded as `cli`.
pub fn cli_principal() -> streamkeeper::account::Principal {
    streamkeeper::account::Principal {
        user_id: 0,
        username: ACTOR.into(),
        display_name: "command line".into(),
        roles: vec![role::Role::Admin],
        via: streamkeeper::account::Credential::Token,
        scopes: Some(Scopes::all()),
    }
}
