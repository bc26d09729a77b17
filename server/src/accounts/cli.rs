//! `streamkeeper user` and `streamkeeper token`: accounts and API tokens from
//! the command line, each change audited with the actor `cli`.

use crate::audit::store::Event;
use crate::platform::cli::{ACTOR, SOURCE};
use crate::platform::password;
use crate::store::is_unique_violation;
use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use clap::Subcommand;
use serde_json::json;
use sqlx::PgPool;
use std::io::Read;
use std::process::ExitCode;
use streamkeeper::accounts::account::{check_display_name, check_password, check_username};
use streamkeeper::accounts::role;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::{Dead, Scope, Scopes, liveness};

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a user. Prints a generated password once unless --password-stdin.
    Add {
        username: String,
        #[arg(long, default_value = "")]
        display_name: String,
        /// A role (repeat for several): viewer, owner, approver, manager, admin.
        #[arg(long = "role", default_value = "viewer")]
        roles: Vec<Role>,
        /// Read the password from standard input instead of generating one.
        #[arg(long)]
        password_stdin: bool,
        /// The user must change the password at their first sign-in.
        #[arg(long)]
        temporary: bool,
    },
    /// Set a user's password, end their sessions and revoke their tokens.
    Passwd {
        username: String,
        #[arg(long)]
        password_stdin: bool,
        /// The user must change the password at their next sign-in.
        #[arg(long)]
        temporary: bool,
    },
    /// Disable a user, end their sessions and revoke their tokens.
    Disable { username: String },
    /// List users.
    List,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a bearer token acting as USER. The token is printed once.
    /// It may do what both its scopes and USER's roles allow.
    Create {
        #[arg(long)]
        user: String,
        /// What the token is for, e.g. "ci-schema-check".
        #[arg(long)]
        name: String,
        /// A scope (repeat for several): read, check, propose,
        /// lineage:write, metrics, write. Not approve: approvals are done by
        /// people in the console.
        #[arg(long = "scope", default_value = "read", value_parser = streamkeeper::accounts::token::grantable)]
        scopes: Vec<Scope>,
        /// Days until the token stops working (default: until revoked).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        expires_days: Option<u16>,
    },
    /// Revoke a token by its id.
    Revoke { id: i64 },
    /// List tokens (never their secrets).
    List,
}

fn read_password(from_stdin: bool, user_inputs: &[&str]) -> anyhow::Result<(String, bool)> {
    if !from_stdin {
        return Ok((password::generate(), true));
    }
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .context("reading the password from standard input")?;
    let p = s.trim_end_matches(['\n', '\r']).to_string();
    check_password(&p, user_inputs)?;
    Ok((p, false))
}

pub async fn user(pool: &PgPool, cmd: UserCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        UserCommand::Add {
            username,
            display_name,
            roles,
            password_stdin,
            temporary,
        } => {
            let username = check_username(&username)?;
            let display_name = check_display_name(&display_name, &username)?;
            let roles = role::normalize(roles);
            let (pw, generated) = read_password(password_stdin, &[&username, &display_name])?;
            let hash = password::hash(&pw)?;
            let mut tx = pool.begin().await?;
            match crate::accounts::store::users::insert(
                &mut tx,
                &username,
                &display_name,
                &hash,
                &roles,
                temporary,
            )
            .await
            {
                Ok(_) => {}
                Err(e) if is_unique_violation(&e) => {
                    bail!("a user named {username} already exists")
                }
                Err(e) => return Err(e.into()),
            }
            crate::audit::store::append(
                &mut tx,
                Event {
                    actor: ACTOR,
                    action: "user.create",
                    target: format!("user:{username}"),
                    detail: json!({ "roles": crate::accounts::store::users::role_strings(&roles), "display_name": display_name,
                                    "must_change_password": temporary }),
                    source: SOURCE,
                },
            )
            .await?;
            tx.commit().await?;
            let roles: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
            println!("created user {username} with roles {}", roles.join(", "));
            if generated {
                println!("password (shown once): {pw}");
            }
            Ok(ExitCode::SUCCESS)
        }
        UserCommand::Passwd {
            username,
            password_stdin,
            temporary,
        } => {
            let mut tx = pool.begin().await?;
            let Some(found) = crate::accounts::store::users::by_username(pool, &username).await?
            else {
                bail!("no user named {username}");
            };
            let mut u = crate::accounts::store::users::lock(&mut tx, found.id)
                .await?
                .context("the user vanished")?;
            let (pw, generated) = read_password(password_stdin, &[&u.username, &u.display_name])?;
            u.password_hash = password::hash(&pw)?;
            u.must_change_password = temporary;
            crate::accounts::store::users::update(&mut tx, &u, true).await?;
            crate::audit::store::append(
                &mut tx,
                Event {
                    actor: ACTOR,
                    action: "user.password",
                    target: format!("user:{username}"),
                    detail: json!({ "sessions_ended": true, "tokens_revoked": true,
                                    "must_change_password": temporary }),
                    source: SOURCE,
                },
            )
            .await?;
            tx.commit().await?;
            println!(
                "password of {username} changed; their sessions are ended and their tokens revoked"
            );
            if generated {
                println!("password (shown once): {pw}");
            }
            Ok(ExitCode::SUCCESS)
        }
        UserCommand::Disable { username } => {
            let Some(found) = crate::accounts::store::users::by_username(pool, &username).await?
            else {
                bail!("no user named {username}");
            };
            let mut tx = pool.begin().await?;
            let mut u = crate::accounts::store::users::lock(&mut tx, found.id)
                .await?
                .context("the user vanished")?;
            u.disabled = true;
            crate::accounts::store::users::update(&mut tx, &u, true).await?;
            crate::audit::store::append(
                &mut tx,
                Event {
                    actor: ACTOR,
                    action: "user.disable",
                    target: format!("user:{username}"),
                    detail: json!({ "disabled": true }),
                    source: SOURCE,
                },
            )
            .await?;
            tx.commit().await?;
            println!("disabled {username}; their sessions and tokens no longer work");
            Ok(ExitCode::SUCCESS)
        }
        UserCommand::List => {
            let mut page = streamkeeper::platform::page::PageRequest::new(Some(1), Some(200));
            println!(
                "{:<6} {:<24} {:<28} {:<9} roles",
                "id", "username", "name", "status"
            );
            loop {
                let p = crate::accounts::store::users::list(pool, None, Default::default(), page)
                    .await?;
                for u in &p.items {
                    let roles: Vec<&str> = u.roles.iter().map(|r| r.as_str()).collect();
                    let status = if u.disabled { "disabled" } else { "active" };
                    println!(
                        "{:<6} {:<24} {:<28} {:<9} {}",
                        u.id,
                        u.username,
                        u.display_name,
                        status,
                        roles.join(",")
                    );
                }
                if !p.has_next() {
                    break;
                }
                page.page += 1;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub async fn token(pool: &PgPool, cmd: TokenCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        TokenCommand::Create {
            user,
            name,
            scopes,
            expires_days,
        } => {
            let name = name.trim().to_string();
            if name.is_empty() || name.chars().count() > 100 {
                bail!("--name must be 1 to 100 characters");
            }
            let scopes = Scopes::new(scopes)?;
            let expires_at = expires_days.map(|d| Utc::now() + chrono::Duration::days(d.into()));
            let Some(u) = crate::accounts::store::users::by_username(pool, &user).await? else {
                bail!("no user named {user}");
            };
            if u.disabled {
                bail!("{user} is disabled");
            }
            let token = crate::accounts::store::tokens::generate();
            let mut tx = pool.begin().await?;
            let id = crate::accounts::store::tokens::insert(
                &mut tx, u.id, &name, &token, &scopes, expires_at,
            )
            .await?;
            crate::audit::store::append(
                &mut tx,
                Event {
                    actor: ACTOR,
                    action: "token.create",
                    target: format!("user:{user}"),
                    detail: json!({
                        "token_id": id,
                        "name": name,
                        "scopes": scopes,
                        "expires_at": expires_at,
                    }),
                    source: SOURCE,
                },
            )
            .await?;
            tx.commit().await?;
            let until = expires_at.map_or("until revoked".to_string(), |e| {
                format!("until {}", e.format("%Y-%m-%d %H:%M UTC"))
            });
            println!("token {id} for {user} ({name}), scopes {scopes}, {until}, shown once:");
            println!("{token}");
            Ok(ExitCode::SUCCESS)
        }
        TokenCommand::Revoke { id } => {
            let mut tx = pool.begin().await?;
            let Some(owner) = crate::accounts::store::tokens::revoke(&mut tx, id).await? else {
                bail!("no live token with id {id}");
            };
            crate::audit::store::append(
                &mut tx,
                Event {
                    actor: ACTOR,
                    action: "token.revoke",
                    target: format!("user:{owner}"),
                    detail: json!({ "token_id": id }),
                    source: SOURCE,
                },
            )
            .await?;
            tx.commit().await?;
            println!("revoked token {id} of {owner}");
            Ok(ExitCode::SUCCESS)
        }
        TokenCommand::List => {
            println!(
                "{:<6} {:<24} {:<28} {:<32} {:<17} {:<17} state",
                "id", "user", "name", "scopes", "expires", "last used"
            );
            let now = Utc::now();
            for t in crate::accounts::store::tokens::list(pool).await? {
                let when = |d: Option<DateTime<Utc>>, none: &str| {
                    d.map_or(none.to_string(), |d| d.format("%Y-%m-%d %H:%M").to_string())
                };
                let state = match liveness(&t.facts(), now) {
                    Ok(()) => "live".to_string(),
                    Err(Dead::Revoked) => format!("revoked {}", when(t.revoked_at, "")),
                    Err(dead) => dead.as_str().to_string(),
                };
                println!(
                    "{:<6} {:<24} {:<28} {:<32} {:<17} {:<17} {state} (created {})",
                    t.id,
                    t.username,
                    t.name,
                    t.scopes.join(","),
                    when(t.expires_at, "never"),
                    when(t.last_used_at, "never"),
                    t.created_at.format("%Y-%m-%d")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
