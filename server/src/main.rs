//! `streamkeeper`: serve the console, migrate, and manage users, tokens and
//! the audit log from the command line.

use clap::Parser;
use std::process::ExitCode;
use std::time::Duration;
use streamkeeper_server::config::{Cli, LogFormat};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(&cli.global.log_level);
    let Ok(filter) = filter else {
        eprintln!(
            "error: {}",
            streamkeeper_server::config::ConfigError::BadLogLevel(cli.global.log_level.clone())
        );
        return ExitCode::from(2);
    };
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match cli.global.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().with_current_span(true).init(),
    }
    // Every schema parse runs on the runtime's threads, and a parse at the
    // nesting limits may need more than tokio's 2 MiB default.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(streamkeeper::schemas::PARSE_STACK_BYTES)
        .build();
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(streamkeeper_server::run(cli));
    // A Kafka read that cannot be cancelled (a hung broker) may still hold
    // a blocking thread: it ends with the process instead of holding it.
    runtime.shutdown_timeout(Duration::from_millis(500));
    code
}
