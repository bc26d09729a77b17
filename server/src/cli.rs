//! The administrative subcommands: users, tokens and the audit log. Each
//! change is recorded in the audit log with the actor `cli`.

use crate::audit::store::Event;
use crate::clients::egress::Outbound;
use crate::clients::kafka::reader;
use crate::clients::kafka::settings::{ClusterSettings, SecretRef};
use crate::config::{
    AuditCommand, ClusterCommand, KafkaArgs, KafkaCommand, TokenCommand, UserCommand,
};
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

const ACTOR: &str = "cli";
const SOURCE: &str = "cli";

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
            let mut page = streamkeeper::page::PageRequest::new(Some(1), Some(200));
            println!(
                "{:<6} {:<24} {:<28} {:<9} roles",
                "id", "username", "name", "status"
            );
            loop {
                let p = crate::accounts::store::users::list(pool, None, page).await?;
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

pub async fn audit(pool: &PgPool, cmd: AuditCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        AuditCommand::Head => {
            // An empty log's head is entry 0, the genesis hash.
            let head = crate::audit::store::head(pool).await?.unwrap_or(Head {
                id: 0,
                hash: GENESIS,
            });
            println!("{head}");
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Verify { expect_head } => {
            match crate::audit::store::verify(pool, expect_head).await {
                Ok(v) => {
                    let keyed = match v.keyed_from {
                    Some(1) => " (all keyed)".to_string(),
                    Some(id) => format!(
                        " (keyed from entry {id} on; the ones before were written before the audit key was set)"
                    ),
                    None => " (none keyed: set STREAMKEEPER_AUDIT_KEY so that a rewrite needs more than database access)".to_string(),
                };
                    println!("audit log intact: {} entries verified{keyed}", v.entries);
                    Ok(ExitCode::SUCCESS)
                }
                // Not a break: what it cannot check without the key is unknown.
                Err(crate::audit::store::VerifyError::Broken(b @ ChainBreak::KeyNeeded { .. })) => {
                    Err(anyhow::anyhow!("cannot verify the audit log: {b}"))
                }
                Err(crate::audit::store::VerifyError::Broken(b)) => {
                    println!("audit log BROKEN at entry {}: {b}", b.id());
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}

fn cluster_settings(a: &KafkaArgs, policy: &CredentialPolicy) -> anyhow::Result<ClusterSettings> {
    let reference = |r: &Option<String>| {
        r.as_deref()
            .map(|r| SecretRef::checked(r, policy))
            .transpose()
    };
    Ok(ClusterSettings::new(
        &a.bootstrap,
        a.security_protocol.parse()?,
        a.sasl_mechanism.as_deref().map(str::parse).transpose()?,
        reference(&a.username)?,
        reference(&a.password)?,
        a.insecure_credentials,
    )?)
}

pub async fn kafka(cmd: KafkaCommand, outbound: &Outbound) -> anyhow::Result<ExitCode> {
    let (args, lag) = match &cmd {
        KafkaCommand::Check(a) => (a, false),
        KafkaCommand::Lag(a) => (a, true),
    };
    let settings = cluster_settings(args, &outbound.credentials)?;
    let known = Default::default();
    let reading = tokio::task::spawn_blocking(move || reader::read(&settings, &known)).await?;
    let r = match reading {
        Ok(r) => r,
        Err(e) => {
            println!("UNREACHABLE: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let partitions: usize = r.topics.iter().map(|t| t.partitions.len()).sum();
    let with_ends = r
        .topics
        .iter()
        .flat_map(|t| &t.partitions)
        .filter(|p| p.log_end.is_some())
        .count();
    if lag {
        for g in &r.groups {
            println!("group {} ({}, {} members)", g.name, g.state, g.members);
            if let Some(e) = &g.error {
                println!("  offsets could not be read: {e}");
            }
            for ((topic, partition), committed) in &g.offsets {
                let part = r
                    .topics
                    .iter()
                    .find(|t| &t.name == topic)
                    .and_then(|t| t.partitions.iter().find(|p| p.partition == *partition));
                let (start, end) = part
                    .map(|p| (p.log_start, p.log_end))
                    .unwrap_or((None, None));
                let lag = match (start, end) {
                    (Some(s), Some(e)) => {
                        format!(
                            "{:?}",
                            streamkeeper::watch::lag::offset::offset_lag(*committed, s, e)
                        )
                    }
                    _ => "unknown (log offsets not read)".into(),
                };
                let committed = committed.map_or("none".to_string(), |c| c.to_string());
                let end = end.map_or("?".to_string(), |e| e.to_string());
                println!("  {topic}[{partition}] committed {committed} end {end} lag {lag}");
            }
        }
    } else {
        println!(
            "read {} brokers, {} topics ({} partitions), {} consumer groups in {} ms",
            r.brokers,
            r.topics.len(),
            partitions,
            r.groups.len(),
            (r.finished - r.started).num_milliseconds()
        );
        println!("log offsets read for {with_ends} of {partitions} partitions");
    }
    for p in &r.problems {
        println!("could not read: {p}");
    }
    Ok(if r.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

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

/// Applies the clusters file `serve` was started with; a bad file stops
/// the start, so a typo never runs with half the clusters.
pub async fn apply_clusters_file(
    pool: &PgPool,
    outbound: &Outbound,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    let entries = crate::watch::cluster_file::load(path)?;
    let service = crate::watch::ClusterService::new(pool.clone(), outbound.credentials.clone());
    let connect = crate::watch::cluster_file::load_connect(path)?;
    let report = service
        .apply(&cli_principal(), "clusters-file", entries, false)
        .await?;
    tracing::info!(
        created = ?report.created,
        updated = ?report.updated,
        unchanged = report.unchanged.len(),
        not_in_file = ?report.not_in_file,
        "applied the clusters file"
    );
    let set = crate::connect::ConnectService::new(pool.clone(), outbound.clone())
        .apply_file(&cli_principal(), "clusters-file", connect, false)
        .await?;
    tracing::info!(connect = ?set, "applied the clusters file's Connect clusters");
    Ok(())
}

/// Prints what applying a clusters file did, a line per cluster.
pub fn print_apply(r: &crate::watch::ApplyReport, dry_run: bool) {
    let (created, updated) = if dry_run {
        ("would create", "would update")
    } else {
        ("created", "updated")
    };
    for (verb, names) in [
        (created, &r.created),
        (updated, &r.updated),
        ("unchanged", &r.unchanged),
        ("not in the file, left alone", &r.not_in_file),
    ] {
        for n in names {
            println!("{verb}: {n}");
        }
    }
}

pub async fn cluster(
    pool: &PgPool,
    outbound: &Outbound,
    cmd: ClusterCommand,
) -> anyhow::Result<ExitCode> {
    let service = crate::watch::ClusterService::new(pool.clone(), outbound.credentials.clone());
    let who = cli_principal();
    match cmd {
        ClusterCommand::Add {
            name,
            conn,
            interval,
        } => {
            let new = streamkeeper_app::watch::model::NewCluster {
                name,
                bootstrap: conn.bootstrap,
                security_protocol: conn.security_protocol,
                sasl_mechanism: conn.sasl_mechanism,
                username_ref: conn.username,
                password_ref: conn.password,
                insecure_credentials: conn.insecure_credentials,
                interval_s: interval,
            };
            let c = service.create(&who, SOURCE, new).await?;
            println!(
                "watching cluster {} (id {}) every {} s",
                c.name, c.id, c.interval_s
            );
        }
        ClusterCommand::Apply { file, dry_run } => {
            let entries = crate::watch::cluster_file::load(&file)?;
            let connect = crate::watch::cluster_file::load_connect(&file)?;
            let report = service.apply(&who, SOURCE, entries, dry_run).await?;
            print_apply(&report, dry_run);
            // A dry run checks the Connect entries of clusters that exist.
            let set = crate::connect::ConnectService::new(pool.clone(), outbound.clone())
                .apply_file(&who, SOURCE, connect, dry_run)
                .await?;
            for name in set {
                let verb = if dry_run {
                    "would set connect"
                } else {
                    "set connect"
                };
                println!("{verb}: {name}");
            }
        }
        ClusterCommand::List => {
            println!(
                "{:<6} {:<20} {:<12} {:<12} bootstrap",
                "id", "name", "state", "data age"
            );
            for c in service.list(&who).await? {
                let age = c
                    .data_age_s
                    .map_or("never".to_string(), |s| format!("{s} s"));
                println!(
                    "{:<6} {:<20} {:<12} {:<12} {}",
                    c.id,
                    c.name,
                    c.state.as_str(),
                    age,
                    c.bootstrap
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `streamkeeper routines`: every routine for every target, as
/// `GET /api/v1/routines` shows them.
pub async fn routines(pool: &PgPool) -> anyhow::Result<ExitCode> {
    let routines = crate::platform::routine::Routines::new(pool.clone());
    let who = cli_principal();
    let time = |t: Option<DateTime<Utc>>| {
        t.map_or("-".to_string(), |t| {
            t.format("%Y-%m-%d %H:%M:%S").to_string()
        })
    };
    println!(
        "{:<22} {:<16} {:<20} {:<10} {:<20} {:<28} error",
        "routine", "cluster", "last started", "outcome", "next due", "lease holder"
    );
    let mut page = streamkeeper::page::PageRequest::new(Some(1), Some(200));
    loop {
        let p = routines.list(&who, None, page).await?;
        for r in &p.items {
            let outcome = match (&r.last_outcome, r.running) {
                (_, true) => "running",
                (Some(o), false) => o.as_str(),
                (None, false) => "-",
            };
            println!(
                "{:<22} {:<16} {:<20} {:<10} {:<20} {:<28} {}",
                r.routine,
                r.cluster.as_deref().unwrap_or("-"),
                time(r.last_started_at),
                outcome,
                time(r.next_due_at),
                r.holder.as_deref().unwrap_or("-"),
                r.last_error.as_deref().unwrap_or("")
            );
        }
        if !p.has_next() {
            break;
        }
        page.page += 1;
    }
    Ok(ExitCode::SUCCESS)
}
