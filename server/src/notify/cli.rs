//! `streamkeeper notify`: a team's channels as `/api/v1/teams/{team}/channels`
//! manages them (list, add, send a test, remove), audited as `cli`.

use crate::platform::cli::{SOURCE, cli_principal};
use clap::Subcommand;
use std::process::ExitCode;
use streamkeeper_app::notify::model::NewChannel;
use streamkeeper_app::port::Notify as _;

use super::NotifyService;

#[derive(Debug, Subcommand)]
pub enum NotifyCommand {
    /// List a team's channels (secrets are never shown).
    Channels {
        #[arg(long)]
        team: i64,
    },
    /// Add a channel to a team.
    Add {
        #[arg(long)]
        team: i64,
        #[arg(long)]
        name: String,
        /// slack, teams, pagerduty, alertmanager or webhook.
        #[arg(long)]
        kind: String,
        /// A URL, or for Slack and Teams a reference (env:NAME, file:/path) to it.
        #[arg(long, default_value = "")]
        endpoint: String,
        /// A reference to PagerDuty's routing key or a webhook's signing key.
        #[arg(long, default_value = "")]
        secret: String,
        /// Comma-separated flag kinds (all when empty).
        #[arg(long, default_value = "")]
        kinds: String,
        /// info, warning, error or critical.
        #[arg(long, default_value = "")]
        min_severity: String,
        /// Comma-separated cluster names (all when empty).
        #[arg(long, default_value = "")]
        clusters: String,
    },
    /// Send a test message and print what the receiver answered.
    Test {
        #[arg(long)]
        team: i64,
        #[arg(long)]
        id: i64,
    },
    /// Remove a channel.
    Remove {
        #[arg(long)]
        team: i64,
        #[arg(long)]
        id: i64,
    },
}

pub async fn run(notify: &NotifyService, command: NotifyCommand) -> anyhow::Result<ExitCode> {
    let who = cli_principal();
    match command {
        NotifyCommand::Channels { team } => {
            for c in notify.channels(&who, team).await? {
                let broken = c
                    .broken_answer
                    .map(|a| format!("  BROKEN: {a}"))
                    .unwrap_or_default();
                println!("{:>6}  {:<12} {}{broken}", c.id, c.kind, c.name);
            }
        }
        NotifyCommand::Add {
            team,
            name,
            kind,
            endpoint,
            secret,
            kinds,
            min_severity,
            clusters,
        } => {
            let new = NewChannel {
                name,
                kind,
                endpoint,
                secret,
                kinds,
                min_severity,
                clusters,
            };
            let c = notify.add_channel(&who, SOURCE, team, &new).await?;
            println!("channel {} added to team {team}", c.id);
        }
        NotifyCommand::Test { team, id } => {
            let a = notify.test_channel(&who, SOURCE, team, id).await?;
            println!("{}", a.answer);
            if !a.ok {
                return Ok(ExitCode::from(1));
            }
        }
        NotifyCommand::Remove { team, id } => {
            notify.remove_channel(&who, SOURCE, team, id).await?;
            println!("channel {id} removed");
        }
    }
    Ok(ExitCode::SUCCESS)
}
