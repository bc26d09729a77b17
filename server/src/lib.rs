//! The `streamkeeper` binary's library: configuration, Postgres, sign-in and
//! sessions, the web server, the REST API and the CLI. `main.rs` only parses
//! the command line and calls [`run`].

pub mod accounts;
pub mod audit;
pub mod clients;
pub mod config;
pub mod connect;
pub mod demo_history;
#[cfg(test)]
mod docs_check;
pub mod flags;
pub mod http;
pub mod lineage;
pub mod notify;
pub mod pilot;
pub mod platform;
pub mod review;
pub mod schemas;
pub mod serve;
pub mod store;
pub mod watch;

use config::{Cli, Command, ServeConfig};
use platform::db;
use std::process::ExitCode;
use std::time::Duration;

/// Runs a parsed command line; the exit code says how it went.
pub async fn run(cli: Cli) -> ExitCode {
    match dispatch(cli).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// A command whose settings have been validated.
enum Task {
    /// Commands that need no database.
    Offline(Offline),
    Database(DatabaseTask),
}

enum DatabaseTask {
    // Boxed: the configuration is much larger than any other task.
    Serve(Box<ServeConfig>),
    Migrate,
    User(accounts::cli::UserCommand),
    Token(accounts::cli::TokenCommand),
    Audit(audit::cli::AuditCommand),
    Cluster(watch::cli::ClusterCommand),
    Routines(platform::routine::cli::RoutinesArgs),
    Lineage(lineage::cli::LineageCommand),
    Pilot(pilot::cli::PilotArgs),
    /// With the mail server for email channels, if one is set.
    Notify(
        notify::cli::NotifyCommand,
        Option<Box<clients::smtp::settings::SmtpSettings>>,
    ),
}

enum Offline {
    Kafka(watch::cli::KafkaCommand),
    Schema(schemas::cli::SchemaCommand),
    Connect(connect::cli::ConnectCommand),
}

fn task(
    command: Option<Command>,
    outbound: clients::egress::Outbound,
) -> Result<Task, config::ConfigError> {
    use DatabaseTask as D;
    Ok(match command {
        None => Task::Database(D::Serve(Box::new(ServeConfig::from_args(
            &config::serve_args_from_env()?,
            outbound,
        )?))),
        Some(Command::Serve(args)) => {
            Task::Database(D::Serve(Box::new(ServeConfig::from_args(&args, outbound)?)))
        }
        Some(Command::Migrate) => Task::Database(D::Migrate),
        Some(Command::User(c)) => Task::Database(D::User(c)),
        Some(Command::Token(c)) => Task::Database(D::Token(c)),
        Some(Command::Audit(c)) => Task::Database(D::Audit(c)),
        Some(Command::Cluster(c)) => Task::Database(D::Cluster(c)),
        Some(Command::Routines(a)) => Task::Database(D::Routines(a)),
        Some(Command::Lineage(c)) => Task::Database(D::Lineage(c)),
        Some(Command::Pilot(a)) => Task::Database(D::Pilot(a)),
        Some(Command::Notify(a)) => {
            let smtp = config::smtp_settings(&a.smtp, &outbound)?;
            Task::Database(D::Notify(a.command, smtp.map(Box::new)))
        }
        Some(Command::Kafka(c)) => Task::Offline(Offline::Kafka(c)),
        Some(Command::Schema(c)) => Task::Offline(Offline::Schema(c)),
        Some(Command::Connect(c)) => Task::Offline(Offline::Connect(c)),
    })
}

async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    // Every setting is checked before waiting on the database.
    let outbound = config::outbound(&cli.global.outbound)?;
    let task = match task(cli.command, outbound.clone())? {
        Task::Offline(Offline::Kafka(c)) => return watch::cli::kafka(c, &outbound).await,
        Task::Offline(Offline::Schema(c)) => return schemas::cli::run(c).await,
        Task::Offline(Offline::Connect(c)) => return connect::cli::run(c).await,
        Task::Database(t) => t,
    };
    let url = config::database_url(&cli.global)?;
    let owner_url = config::migrate_database_url(&cli.global)?;
    crate::audit::store::use_key(config::audit_key(&cli.global)?);
    accounts::second_factor::use_key(config::totp_key(&cli.global)?);
    let timeout = Duration::from_secs(cli.global.db_connect_timeout);
    let pool = db::connect(&url, timeout).await?;
    match owner_url {
        // The owner's connection is closed once the schema is handed over:
        // the server never holds it.
        Some(owner_url) => {
            let owner = db::connect(&owner_url, timeout).await?;
            db::migrate(&owner).await?;
            db::hand_over(&owner, &pool).await?;
            owner.close().await;
        }
        None => db::migrate(&pool).await?,
    }
    // What may append must hold the log's key; reading and checking it
    // need not (`audit verify` names what the key it lacks keeps it from).
    if !matches!(task, DatabaseTask::Migrate | DatabaseTask::Audit(_)) {
        crate::audit::store::check_key(&pool).await?;
        let sealed = accounts::second_factor::at_start(&pool).await?;
        if sealed > 0 {
            tracing::info!(sealed, "TOTP secrets stored in plain form were sealed");
        }
    }
    match task {
        DatabaseTask::Serve(cfg) => {
            if !crate::audit::store::keyed() {
                tracing::warn!(
                    "STREAMKEEPER_AUDIT_KEY is not set: the audit log's hashes are plain, so whoever can write the database can rewrite it unnoticed after the last exported head"
                );
            }
            if !accounts::second_factor::keyed() {
                tracing::warn!(
                    "STREAMKEEPER_TOTP_KEY is not set: TOTP secrets are stored in plain form, so whoever can read the database can compute second-factor codes"
                );
            }
            if let Some(path) = &cfg.clusters_file {
                watch::cli::apply_clusters_file(
                    &pool,
                    &cfg.outbound,
                    path,
                    &connect::ConnectService::new(pool.clone(), cfg.outbound.clone()),
                )
                .await?;
            }
            serve::serve(pool, *cfg).await?;
            Ok(ExitCode::SUCCESS)
        }
        DatabaseTask::Migrate => {
            println!("migrations applied");
            Ok(ExitCode::SUCCESS)
        }
        DatabaseTask::User(c) => accounts::cli::user(&pool, c).await,
        DatabaseTask::Token(c) => accounts::cli::token(&pool, c).await,
        DatabaseTask::Audit(c) => audit::cli::audit(&pool, c).await,
        DatabaseTask::Cluster(c) => {
            let connect = connect::ConnectService::new(pool.clone(), outbound.clone());
            watch::cli::cluster(&pool, &outbound, c, &connect).await
        }
        DatabaseTask::Routines(a) => {
            let routines = platform::routine::Routines::new(
                pool.clone(),
                std::sync::Arc::new(audit::AuditTrail(pool.clone())),
            );
            platform::routine::cli::routines(&routines, a).await
        }
        DatabaseTask::Lineage(c) => lineage::cli::run(&pool, c).await,
        DatabaseTask::Pilot(a) => pilot::cli::run(&pilot::PilotService::new(pool.clone()), a).await,
        DatabaseTask::Notify(c, smtp) => {
            let mail = smtp.map(|s| clients::smtp::Smtp::new(*s));
            let service =
                notify::NotifyService::new(pool.clone(), outbound.clone()).with_mail(mail);
            notify::cli::run(&service, c).await
        }
    }
}
