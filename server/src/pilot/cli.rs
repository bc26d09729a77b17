//! `streamkeeper pilot`: the day-30 table as `GET /api/v1/pilot` computes
//! it, and `pilot set` as `PUT /api/v1/pilot/settings`, audited as `cli`.

use crate::platform::cli::{SOURCE, cli_principal};
use chrono::{NaiveDate, Utc};
use clap::{Args, Subcommand};
use std::process::ExitCode;
use streamkeeper::pilot::stats::human;
use streamkeeper::pilot::{Baseline, Metric, PilotInput, ScopeKind};
use streamkeeper::platform::durations::fine;

use super::PilotService;
use streamkeeper_app::port::Pilot as _;

#[derive(Debug, Args)]
pub struct PilotArgs {
    #[command(subcommand)]
    pub command: Option<PilotCommand>,
}

#[derive(Debug, Subcommand)]
pub enum PilotCommand {
    /// Print the day-30 table: each metric's baseline, p50 and p90 so far,
    /// the ratio to the baseline and the events it rests on.
    Show,
    /// Rebuild the pilot's day tally from the records. The tally is kept
    /// as records are written and rebuilt by itself after any change of
    /// what the pilot covers; this is for after a restore of some tables.
    Rebuild,
    /// Set the pilot up (replacing what was set).
    Set {
        /// `clusters`, `streams` (as cluster/topic) or `domains`.
        #[arg(long)]
        scope_kind: ScopeKind,
        /// What it covers (repeat it).
        #[arg(long, required = true)]
        scope: Vec<String>,
        /// Its day 1, as YYYY-MM-DD (UTC).
        #[arg(long)]
        start: NaiveDate,
        /// A baseline as METRIC=DURATION,NOTE, e.g.
        /// `lag_flagged=90m,median of Q3 on-call tickets` (s, m, h or d).
        #[arg(long)]
        baseline: Vec<String>,
    },
}

/// `90m`, `2h`, `2d`, `45s` in milliseconds.
fn duration_ms(text: &str) -> anyhow::Result<i64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: i64 = n
        .parse()
        .map_err(|_| anyhow::anyhow!("'{text}' is not a duration such as 90m, 2h or 2d"))?;
    let unit_ms = match unit {
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => anyhow::bail!("'{text}' is not a duration such as 90m, 2h or 2d"),
    };
    Ok(n.saturating_mul(unit_ms))
}

fn baseline(text: &str) -> anyhow::Result<Baseline> {
    let (metric, rest) = text
        .split_once('=')
        .ok_or_else(|| anyhow::anyhow!("a baseline is METRIC=DURATION,NOTE; '{text}' is not"))?;
    let (d, note) = rest.split_once(',').ok_or_else(|| {
        anyhow::anyhow!("say where the baseline comes from: METRIC=DURATION,NOTE")
    })?;
    Ok(Baseline {
        metric: metric.parse::<Metric>()?,
        ms: duration_ms(d)?,
        note: note.to_string(),
    })
}

pub async fn run(pilot: &PilotService, args: PilotArgs) -> anyhow::Result<ExitCode> {
    let who = cli_principal();
    match args.command.unwrap_or(PilotCommand::Show) {
        PilotCommand::Rebuild => {
            pilot.rebuild_tally().await?;
            println!("the pilot's day tally is rebuilt from the records");
            Ok(ExitCode::SUCCESS)
        }
        PilotCommand::Show => {
            let r = pilot.report(&who, SOURCE, Utc::now()).await?;
            let s = &r.settings;
            println!(
                "pilot since {} (day {}), {}: {}",
                s.started_on.map(|d| d.to_string()).unwrap_or_default(),
                r.report.day,
                s.scope_kind.map(|k| k.as_str()).unwrap_or_default(),
                s.scope.join(", ")
            );
            println!(
                "{:<18} {:>12} {:>12} {:>12} {:>8} {:>7}  note",
                "metric", "baseline", "p50", "p90", "ratio", "events"
            );
            for row in &r.report.table {
                let f = &row.now;
                println!(
                    "{:<18} {:>12} {:>12} {:>12} {:>8} {:>7}  {}",
                    row.metric.as_str(),
                    human(row.baseline_ms),
                    f.p50_ms.map(fine).unwrap_or_else(|| "-".into()),
                    f.p90_ms.map(fine).unwrap_or_else(|| "-".into()),
                    f.ratio_p50
                        .map(|r| format!("{r:.3}"))
                        .unwrap_or_else(|| "-".into()),
                    f.events,
                    f.note
                );
            }
            let counts: Vec<String> = r
                .report
                .counts
                .iter()
                .map(|(c, n)| format!("{} {n}", c.as_str()))
                .collect();
            println!("counts: {}", counts.join(", "));
            Ok(ExitCode::SUCCESS)
        }
        PilotCommand::Set {
            scope_kind,
            scope,
            start,
            baseline: entered,
        } => {
            let baselines = entered
                .iter()
                .map(|b| baseline(b))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let s = pilot
                .set(
                    &who,
                    SOURCE,
                    PilotInput {
                        scope_kind,
                        scope,
                        started_on: start,
                        baselines,
                    },
                )
                .await?;
            println!(
                "pilot set: {} {} from {}",
                s.scope_kind.map(|k| k.as_str()).unwrap_or_default(),
                s.scope.join(", "),
                s.started_on.map(|d| d.to_string()).unwrap_or_default()
            );
            for b in &s.baselines {
                println!(
                    "  {:<18} {:>10}  {}",
                    b.metric.as_str(),
                    human(b.ms),
                    b.note
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baselines_are_read_with_their_unit_and_note() {
        let b = baseline("lag_flagged=90m,median of Q3 tickets, roughly").expect("baseline");
        assert_eq!(b.metric, Metric::LagFlagged);
        assert_eq!(b.ms, 5_400_000);
        assert_eq!(b.note, "median of Q3 tickets, roughly");
        assert!(baseline("lag_flagged=90m").is_err());
        assert!(baseline("lag=90m,x").is_err());
        assert!(baseline("lag_flagged=90y,x").is_err());
    }
}
