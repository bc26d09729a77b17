//! The `streamkeeper` binary's library: configuration, Postgres, sign-in and
//! sessions, the web server, the REST API and the CLI. `main.rs` only parses
//! the command line and calls [`run`].

pub mod accounts;
pub mod api;
pub mod cli;
pub mod cluster_file;
pub mod clusters;
pub mod config;
pub mod db;
pub mod errors;
pub mod flagger;
pub mod flags;
pub mod kafka;
pub mod notify;
pub mod password;
pub mod registry;
pub mod serve;
pub mod store;
pub mod watch;
pub mod web;

use config::{Cli, Command, ServeConfig};
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
    Serve(ServeConfig),
    Migrate,
    User(config::UserCommand),
    Token(config::TokenCommand),
    Audit(config::AuditCommand),
    Kafka(config::KafkaCommand),
    Cluster(config::ClusterCommand),
}

fn task(command: Option<Command>) -> Result<Task, config::ConfigError> {
    Ok(match command {
        None => Task::Serve(ServeConfig::from_args(&config::serve_args_from_env()?)?),
        Some(Command::Serve(args)) => Task::Serve(ServeConfig::from_args(&args)?),
        Some(Command::Migrate) => Task::Migrate,
        Some(Command::User(c)) => Task::User(c),
        Some(Command::Token(c)) => Task::Token(c),
        Some(Command::Audit(c)) => Task::Audit(c),
        Some(Command::Kafka(c)) => Task::Kafka(c),
        Some(Command::Cluster(c)) => Task::Cluster(c),
    })
}

async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    // Every setting is checked before waiting on the database.
    let task = task(cli.command)?;
    if let Task::Kafka(c) = task {
        // Reading a cluster needs no database.
        return cli::kafka(c).await;
    }
    let url = config::database_url(&cli.global)?;
    let pool = db::connect(&url, Duration::from_secs(cli.global.db_connect_timeout)).await?;
    db::migrate(&pool).await?;
    match task {
        Task::Serve(cfg) => {
            if let Some(path) = &cfg.clusters_file {
                cli::apply_clusters_file(&pool, path).await?;
            }
            serve::serve(pool, cfg).await?;
            Ok(ExitCode::SUCCESS)
        }
        Task::Migrate => {
            println!("migrations applied");
            Ok(ExitCode::SUCCESS)
        }
        Task::User(c) => cli::user(&pool, c).await,
        Task::Token(c) => cli::token(&pool, c).await,
        Task::Audit(c) => cli::audit(&pool, c).await,
        Task::Kafka(c) => cli::kafka(c).await,
        Task::Cluster(c) => cli::cluster(&pool, c).await,
    }
}
