//! The pilot's ten-day history for `scripts/demo`, played through the real
//! code paths before the console starts (see `streamkeeper_server::
//! demo_history`). Takes the console's own settings from the environment
//! (`DATABASE_URL`, `STREAMKEEPER_AUDIT_KEY`), so what it audits joins the
//! log's chain under the same key.
//!
//! `cargo run -p streamkeeper-server --example pilot_history -- \
//!    --cluster local --registry http://127.0.0.1:8081 --admin admin`

use clap::Parser;
use std::process::ExitCode;
use streamkeeper_server::config::{self, GlobalArgs};
use streamkeeper_server::demo_history::{Stage, play};
use streamkeeper_server::platform::db;

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    global: GlobalArgs,
    /// The registered cluster the history's topic is on.
    #[arg(long)]
    cluster: String,
    /// Its Schema Registry.
    #[arg(long)]
    registry: String,
    /// The admin who sets the stage.
    #[arg(long)]
    admin: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: &Args) -> anyhow::Result<()> {
    let url = config::database_url(&args.global)?;
    streamkeeper_server::audit::store::use_key(config::audit_key(&args.global)?);
    let today = chrono::Utc::now().date_naive();
    let day1 = today - chrono::Duration::days(streamkeeper::pilot::history::DAYS);
    // The pool the player makes is its own; this one checks the key only.
    let pool = db::connect(&url, std::time::Duration::from_secs(10)).await?;
    streamkeeper_server::audit::store::check_key(&pool).await?;
    pool.close().await;
    let played = play(&Stage {
        database_url: &url,
        cluster: &args.cluster,
        registry_url: &args.registry,
        admin: &args.admin,
        day1,
    })
    .await?;
    println!(
        "played the pilot's history from {day1}: {} steps, {} reviews, {} webhooks taken, in {:.1} s",
        played.steps,
        played.reviews.len(),
        played.delivered,
        played.took.as_secs_f64()
    );
    Ok(())
}
