//! `streamkeeper`: serve the console, migrate, and manage users, tokens and
//! the audit log from the command line.

use clap::Parser;
use std::process::ExitCode;
use streamkeeper_server::config::Cli;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(&cli.global.log_level);
    let Ok(filter) = filter else {
        eprintln!(
            "error: {}",
            streamkeeper_server::config::ConfigError::BadLogLevel(cli.global.log_level.clone())
        );
        return ExitCode::from(2);
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    streamkeeper_server::run(cli).await
}
