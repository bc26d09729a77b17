//! `streamkeeper notify`: a team's channels as `/api/v1/teams/{team}/channels`
//! manages them (list, add, send a test, remove), and a cluster's silences
//! as `/api/v1/clusters/{cluster}/silences` does (list, mute, end), through
//! the same port, audited as `cli`.

use crate::platform::cli::{SOURCE, cli_principal};
use chrono::{DateTime, Utc};
use clap::Subcommand;
use std::process::ExitCode;
use streamkeeper_app::notify::model::{NewChannel, NewSilence};
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
        /// slack, teams, pagerduty, alertmanager, webhook or email.
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
    /// List a cluster's silences not ended.
    Silences {
        /// The cluster's id.
        #[arg(long)]
        cluster: i64,
    },
    /// Mute a cluster, a stream or a group until a time, or end a silence.
    #[command(subcommand)]
    Silence(SilenceCommand),
}

#[derive(Debug, Subcommand)]
pub enum SilenceCommand {
    /// Mute a cluster, or with --stream or --group one of its streams or
    /// groups: flags are still raised, their deliveries held.
    Add {
        /// The cluster's id.
        #[arg(long)]
        cluster: i64,
        /// Mute a stream (its topic, and the groups reading only muted streams).
        #[arg(long, conflicts_with = "group")]
        stream: Option<String>,
        /// Mute a consumer group.
        #[arg(long)]
        group: Option<String>,
        /// Until when, RFC 3339 (2026-12-08T06:00:00Z), at most 30 days ahead.
        #[arg(long)]
        until: DateTime<Utc>,
        /// Why: shown on its pages and kept in the audit log.
        #[arg(long)]
        reason: String,
    },
    /// End a silence now: held deliveries whose trouble is still there go out.
    End {
        /// The cluster's id.
        #[arg(long)]
        cluster: i64,
        /// The silence's id.
        id: i64,
    },
}

/// The silence `add` asks for.
fn new_silence(
    stream: Option<String>,
    group: Option<String>,
    until: DateTime<Utc>,
    reason: String,
) -> NewSilence {
    let (scope, name) = match (stream, group) {
        (Some(s), _) => ("stream", s),
        (None, Some(g)) => ("group", g),
        (None, None) => ("cluster", String::new()),
    };
    NewSilence {
        scope: scope.into(),
        name,
        until,
        reason,
    }
}

async fn silence(notify: &NotifyService, command: SilenceCommand) -> anyhow::Result<()> {
    let who = cli_principal();
    match command {
        SilenceCommand::Add {
            cluster,
            stream,
            group,
            until,
            reason,
        } => {
            let new = new_silence(stream, group, until, reason);
            let s = notify.silence(&who, SOURCE, cluster, &new).await?;
            println!("silence {} until {}", s.id, s.until.to_rfc3339());
        }
        SilenceCommand::End { cluster, id } => {
            notify.unsilence(&who, SOURCE, cluster, id).await?;
            println!("silence {id} ended");
        }
    }
    Ok(())
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
        NotifyCommand::Silences { cluster } => {
            for s in notify.silences(&who, cluster).await? {
                let what = format!("{} {}", s.scope, s.name);
                let until = s.until.to_rfc3339();
                println!(
                    "{:>6}  {:<30} until {until}  by {}: {}",
                    s.id,
                    what.trim(),
                    s.created_by,
                    s.reason
                );
            }
        }
        NotifyCommand::Silence(c) => silence(notify, c).await?,
    }
    Ok(ExitCode::SUCCESS)
}
