//! `streamkeeper lineage impact` (a table, or `--json` as the API answers)
//! and `streamkeeper lineage rebuild`, both on the database directly.

use super::{ImpactView, IngestLimits, LineageService};
use crate::audit::store::Event;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use sqlx::PgPool;
use std::process::ExitCode;
use streamkeeper::lineage::graph::NodeKey;
use streamkeeper::lineage::impact::{Direction, Limits};
use streamkeeper::lineage::marquez::NodeId;
use streamkeeper::platform::words::counted;
use streamkeeper_app::lineage::model::BreakView;

#[derive(Debug, Subcommand)]
pub enum LineageCommand {
    /// Everything downstream (or upstream) of a topic, dataset or job, with
    /// owners and paths: a table, or --json as the API answers.
    Impact(LineageImpactArgs),
    /// Send the impact to every owner team it reaches (inbox and webhook),
    /// recorded as a question answered; prints who was told.
    Notify(LineageImpactArgs),
    /// Empty the lineage graph and fold every stored event into it again.
    Rebuild,
}

#[derive(Debug, Args)]
pub struct LineageImpactArgs {
    /// The topic.
    #[arg(long)]
    pub topic: Option<String>,
    /// The topic's cluster (its name in the console), when it is on several.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Any node instead of a topic: dataset:<namespace>:<name> or job:<namespace>:<name>.
    #[arg(long)]
    pub node: Option<String>,
    /// Where it comes from instead of what it feeds.
    #[arg(long)]
    pub upstream: bool,
    /// Hops (6; at most 50).
    #[arg(long)]
    pub depth: Option<u32>,
    /// Nodes at most (5,000; at most 100,000).
    #[arg(long)]
    pub budget: Option<usize>,
    /// Print JSON (the API's answer) instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(pool: &PgPool, cmd: LineageCommand) -> anyhow::Result<ExitCode> {
    // The CLI never ingests: the limits only size a queue it leaves unused.
    let svc = LineageService::new(pool.clone(), IngestLimits::for_body_limit(0));
    match cmd {
        LineageCommand::Impact(args) => impact(&svc, &args).await,
        LineageCommand::Notify(args) => notify(&svc, &args).await,
        LineageCommand::Rebuild => {
            let (replayed, unreadable) = svc
                .rebuild()
                .await
                .context("rebuilding the lineage graph")?;
            let counts = svc.counts().await?;
            let mut tx = pool.begin().await?;
            crate::audit::store::append(
                &mut tx,
                Event {
                    actor: "cli",
                    action: "lineage.rebuild",
                    target: "lineage".into(),
                    detail: json!({"replayed": replayed, "unreadable": unreadable,
                        "nodes": counts.nodes, "edges": counts.edges}),
                    source: "cli",
                },
            )
            .await?;
            tx.commit().await?;
            println!(
                "replayed {} into {} and {}{}",
                counted(replayed, "event"),
                counted(counts.nodes, "node"),
                counted(counts.edges, "edge"),
                if unreadable > 0 {
                    format!(" ({unreadable} no longer parse: see the log)")
                } else {
                    String::new()
                }
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The node, direction and limits the arguments ask about.
async fn question(
    svc: &LineageService,
    a: &LineageImpactArgs,
) -> anyhow::Result<(NodeKey, Direction, Limits)> {
    let key = match (&a.node, &a.topic) {
        (Some(node), None) => NodeId::parse(node)?.0,
        (None, Some(topic)) => svc
            .topic(a.cluster.as_deref(), topic)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?,
        _ => bail!("give either --topic (with --cluster when it is on several) or --node"),
    };
    let defaults = Limits::default();
    let limits = Limits {
        depth: a.depth.unwrap_or(defaults.depth),
        budget: a.budget.unwrap_or(defaults.budget),
    };
    let direction = if a.upstream {
        Direction::Upstream
    } else {
        Direction::Downstream
    };
    Ok((key, direction, limits))
}

async fn notify(svc: &LineageService, a: &LineageImpactArgs) -> anyhow::Result<ExitCode> {
    let (key, direction, limits) = question(svc, a).await?;
    let notice = svc
        .notify_owners(
            &crate::platform::cli::cli_principal(),
            "cli",
            &key,
            direction,
            limits,
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&notice)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "question {}: {} {} of {}{}",
        notice.question,
        counted(notice.impact.nodes.len(), "node"),
        notice.impact.direction,
        notice.impact.start,
        if notice.impact.partial {
            " (partial)"
        } else {
            ""
        }
    );
    for t in &notice.teams {
        println!(
            "told {}: {}, {}{}",
            t.team,
            counted(t.nodes, "node"),
            if t.members == 1 {
                "1 member's inbox".to_string()
            } else {
                format!("{} members' inboxes", t.members)
            },
            if t.webhook { ", webhook queued" } else { "" }
        );
    }
    if notice.teams.is_empty() {
        println!("no owner team to tell");
    }
    Ok(ExitCode::SUCCESS)
}

async fn impact(svc: &LineageService, a: &LineageImpactArgs) -> anyhow::Result<ExitCode> {
    let (key, direction, limits) = question(svc, a).await?;
    let answer = svc
        .impact(
            &crate::platform::cli::cli_principal(),
            &key,
            direction,
            limits,
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let view = ImpactView::of(&answer);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&view)?);
    } else {
        print!("{}", table(&view));
    }
    Ok(ExitCode::SUCCESS)
}

/// The review items whose pending change breaks a node ("-" when none).
fn broken_by(breaks: &[BreakView]) -> String {
    if breaks.is_empty() {
        return "-".into();
    }
    breaks
        .iter()
        .map(|b| {
            b.item
                .map_or("a change in review".into(), |id| format!("review #{id}"))
        })
        .collect::<Vec<String>>()
        .join(", ")
}

/// The answer as a table: one line a node, nearer first, then what was cut.
pub fn table(v: &ImpactView) -> String {
    let mut rows = vec![[
        "DEPTH".to_string(),
        "KIND".into(),
        "NODE".into(),
        "OWNER".into(),
        "KNOWN".into(),
        "LAST SEEN".into(),
        "VIA".into(),
        "BROKEN BY".into(),
    ]];
    for n in &v.nodes {
        let via = n
            .path
            .len()
            .checked_sub(2)
            .and_then(|i| n.path.get(i))
            .cloned()
            .unwrap_or_default();
        rows.push([
            n.depth.to_string(),
            n.kind.clone(),
            format!("{} {}", n.namespace, n.name),
            n.owner.clone().unwrap_or_else(|| "-".into()),
            n.known_as.clone(),
            n.last_seen
                .map_or("-".into(), |t| t.format("%Y-%m-%d %H:%M").to_string()),
            via,
            broken_by(&n.breaks),
        ]);
    }
    let widths: Vec<usize> = (0..8)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("{} of {}\n", v.direction, v.start);
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    if v.nodes.is_empty() {
        out.push_str("(nothing)\n");
    }
    if v.partial {
        let mut cut = Vec::new();
        if v.cut.depth {
            cut.push("the depth cap (--depth)");
        }
        if v.cut.budget {
            cut.push("the node budget (--budget)");
        }
        if v.cut.clamped {
            cut.push("the maxima (depth 50, 100,000 nodes)");
        }
        out.push_str(&format!("partial: cut by {}\n", cut.join(" and ")));
    }
    out
}
