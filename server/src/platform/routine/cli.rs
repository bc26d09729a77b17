//! `streamkeeper routines`: each routine and target, as `GET /api/v1/routines`
//! lists them; `routines schedule` and `routines run` as an admin's
//! `PUT …/schedule` and `POST …/run`, audited as `cli`.

use crate::platform::cli::{SOURCE, cli_principal};
use crate::platform::routine::Routines;
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use std::process::ExitCode;
use streamkeeper::platform::schedule::Schedule;

#[derive(Debug, Args)]
pub struct RoutinesArgs {
    #[command(subcommand)]
    pub command: Option<RoutinesCommand>,
}

#[derive(Debug, Subcommand)]
pub enum RoutinesCommand {
    /// List every routine for every target (the default).
    List,
    /// Set a routine's schedule: an interval (`30s`, `5m`, `2h`, `1d`), a
    /// cron expression in UTC (`"*/5 * * * *"`, six fields with seconds),
    /// `paused`, or `default` (its own interval).
    Schedule { routine: String, schedule: String },
    /// Run a routine once now, on one cluster or (per-cluster routines,
    /// no --cluster) on every cluster.
    Run {
        routine: String,
        #[arg(long)]
        cluster: Option<String>,
    },
}

pub async fn routines(routines: &Routines, args: RoutinesArgs) -> anyhow::Result<ExitCode> {
    let who = cli_principal();
    match args.command.unwrap_or(RoutinesCommand::List) {
        RoutinesCommand::List => list(routines).await,
        RoutinesCommand::Schedule { routine, schedule } => {
            let schedule: Schedule = schedule.parse()?;
            let set = routines
                .set_schedule(&who, SOURCE, &routine, schedule)
                .await?;
            println!("{routine}: {set}");
            Ok(ExitCode::SUCCESS)
        }
        RoutinesCommand::Run { routine, cluster } => {
            let asked = routines
                .run_now(&who, SOURCE, &routine, cluster.as_deref())
                .await?;
            println!(
                "{routine}: asked to run now on {} target(s); a replica takes it within {} s",
                asked.targets,
                super::POLL.as_secs()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `streamkeeper routines`: every routine for every target, as
/// `GET /api/v1/routines` shows them.
async fn list(routines: &Routines) -> anyhow::Result<ExitCode> {
    let who = cli_principal();
    let time = |t: Option<DateTime<Utc>>| {
        t.map_or("-".to_string(), |t| {
            t.format("%Y-%m-%d %H:%M:%S").to_string()
        })
    };
    println!(
        "{:<22} {:<16} {:<24} {:<20} {:<10} {:<20} {:<28} error",
        "routine", "cluster", "schedule", "last started", "outcome", "next due", "lease holder"
    );
    let mut page = streamkeeper::platform::page::PageRequest::new(Some(1), Some(200));
    loop {
        let p = routines.list(&who, None, page).await?;
        for r in &p.items {
            let outcome = match (&r.last_outcome, r.running) {
                (_, true) => "running",
                (Some(o), false) => o.as_str(),
                (None, false) => "-",
            };
            // "-": its own interval, as every column shows what is unset.
            let schedule = match &r.schedule {
                Schedule::Default => "-".to_string(),
                other => other.to_string(),
            };
            println!(
                "{:<22} {:<16} {:<24} {:<20} {:<10} {:<20} {:<28} {}",
                r.routine,
                r.cluster.as_deref().unwrap_or("-"),
                schedule,
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
