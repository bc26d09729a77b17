//! `streamkeeper connect validate FILE --plugin P`: the rules on a config
//! file, offline, printing the findings as JSON; with `--server` the
//! console's validate (the rules with the cluster's facts, beside the
//! worker's). `streamkeeper connect draft FILE --server …` proposes it for
//! review. Exit codes as `schema check`: 0 no error (may be proposed, or
//! proposed), 1 errors found, 2 the check could not be made (unreadable
//! file, not a config, unknown plugin, the console refused or is away).

use anyhow::{Context as _, anyhow, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use std::process::ExitCode;
use streamkeeper::connect::config::CLASS;
use streamkeeper::connect::{Config, Context, Plugin, may_propose, validate};

#[derive(Debug, Subcommand)]
pub enum ConnectCommand {
    /// Validate a connector config file with the rules. Exit 0 no error,
    /// 1 errors found, 2 the check could not be made.
    ///
    /// `streamkeeper connect validate sink.json --plugin confluent_jdbc_sink`
    Validate(ConnectValidateArgs),
    /// Propose a connector config for review on a console: it creates the
    /// connector or replaces the running one's config once approved.
    ///
    /// `streamkeeper connect draft sink.json --server URL --token T --cluster prod --connect main`
    Draft(ConnectDraftArgs),
}

/// Where a console's Connect cluster is.
#[derive(Debug, Args)]
pub struct Console {
    /// The console's URL.
    #[arg(long, env = "STREAMKEEPER_SERVER")]
    pub server: Option<String>,
    /// An API token (read; `propose` for drafts).
    #[arg(long, env = "STREAMKEEPER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The Kafka cluster's name on the console.
    #[arg(long)]
    pub cluster: Option<String>,
    /// The Connect cluster's name.
    #[arg(long)]
    pub connect: Option<String>,
}

#[derive(Debug, Args)]
pub struct ConnectDraftArgs {
    /// The config: a JSON object of properties with `name`, or `{"name", "config"}`.
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub console: Console,
    /// A line for the inbox.
    #[arg(long)]
    pub title: Option<String>,
}

#[derive(Debug, Args)]
pub struct ConnectValidateArgs {
    /// The config: a JSON object of properties, or `{"name", "config"}`.
    pub file: std::path::PathBuf,
    /// debezium_postgres, debezium_mysql, confluent_jdbc_sink,
    /// debezium_jdbc_sink, s3_sink, snowflake_sink, bigquery_sink,
    /// iceberg_sink, elasticsearch_sink, or a connector.class.
    #[arg(long)]
    pub plugin: String,
    /// With `--server`: validate on the console (with the cluster's facts
    /// and, given `--connect`, the worker's validate beside the rules).
    #[command(flatten)]
    pub console: Console,
}

/// The largest config file read: configs are a few KiB.
const MAX_BYTES: u64 = 1 << 20;

pub async fn run(cmd: ConnectCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ConnectCommand::Validate(args) if args.console.server.is_some() => online(&args).await,
        ConnectCommand::Validate(args) => offline(&args),
        ConnectCommand::Draft(args) => draft(&args).await,
    }
}

/// The config file as JSON, at most [`MAX_BYTES`].
fn read_config(file: &std::path::Path) -> anyhow::Result<serde_json::Value> {
    let cannot = || format!("cannot read {}", file.display());
    let len = std::fs::metadata(file).with_context(cannot)?.len();
    streamkeeper::platform::limit::cap(file.display().to_string(), len, MAX_BYTES)
        .map_err(|e| anyhow!("{e}"))?;
    let text = std::fs::read_to_string(file).with_context(cannot)?;
    // Checked here so a typo is told at once, not by the console.
    Config::from_json(&text).map_err(|e| anyhow!("{}: {e}", file.display()))?;
    Ok(serde_json::from_str(&text)?)
}

/// The console's URL, a token, and the Kafka cluster's id by its name.
async fn console(c: &Console) -> anyhow::Result<(reqwest::Client, String, String, i64)> {
    let server = c
        .server
        .as_deref()
        .ok_or_else(|| anyhow!("--server (or STREAMKEEPER_SERVER) is required"))?
        .trim_end_matches('/')
        .to_owned();
    let token = c
        .token
        .clone()
        .ok_or_else(|| anyhow!("--token (or STREAMKEEPER_TOKEN) is required with --server"))?;
    let cluster = c
        .cluster
        .as_deref()
        .ok_or_else(|| anyhow!("--cluster is required with --server"))?;
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()?;
    let clusters: Vec<serde_json::Value> = crate::schemas::cli::answer(
        http.get(format!("{server}/api/v1/clusters"))
            .bearer_auth(&token)
            .send()
            .await,
        &server,
    )
    .await?;
    let id = clusters
        .iter()
        .find(|c| c["name"] == cluster)
        .and_then(|c| c["id"].as_i64())
        .ok_or_else(|| anyhow!("the console at {server} watches no cluster named {cluster:?}"))?;
    Ok((http, server, token, id))
}

async fn online(args: &ConnectValidateArgs) -> anyhow::Result<ExitCode> {
    let config = read_config(&args.file)?;
    let (http, server, token, id) = console(&args.console).await?;
    let report: serde_json::Value = crate::schemas::cli::answer(
        http.post(format!("{server}/api/v1/connect/validate"))
            .bearer_auth(&token)
            .json(&json!({ "config": config, "cluster_id": id, "connect": args.console.connect }))
            .send()
            .await,
        &server,
    )
    .await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(if report["may_propose"] == true {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn draft(args: &ConnectDraftArgs) -> anyhow::Result<ExitCode> {
    let config = read_config(&args.file)?;
    let connect = args.console.connect.as_deref().ok_or_else(|| {
        anyhow!("--connect is required: the Connect cluster the connector runs on")
    })?;
    let (http, server, token, id) = console(&args.console).await?;
    let item: serde_json::Value = crate::schemas::cli::answer(
        http.post(format!("{server}/api/v1/review-items/connectors"))
            .bearer_auth(&token)
            .json(
                &json!({ "cluster_id": id, "connect": connect, "config": config,
                           "title": args.title }),
            )
            .send()
            .await,
        &server,
    )
    .await?;
    println!("{}", serde_json::to_string_pretty(&item)?);
    Ok(ExitCode::SUCCESS)
}

fn offline(args: &ConnectValidateArgs) -> anyhow::Result<ExitCode> {
    let plugin = Plugin::parse(&args.plugin).ok_or_else(|| {
        anyhow!(
            "--plugin {:?} is not one of {} (or their connector.class)",
            args.plugin,
            Plugin::ALL.map(Plugin::as_str).join(", ")
        )
    })?;
    let cannot = || format!("cannot read {}", args.file.display());
    let len = std::fs::metadata(&args.file).with_context(cannot)?.len();
    streamkeeper::platform::limit::cap(args.file.display().to_string(), len, MAX_BYTES)
        .map_err(|e| anyhow!("{e}"))?;
    let text = std::fs::read_to_string(&args.file).with_context(cannot)?;
    let mut config =
        Config::from_json(&text).map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
    match config.get(CLASS).map(str::to_owned) {
        None => config.set(CLASS, plugin.class()),
        Some(class) if Plugin::from_class(&class) == Some(plugin) => {}
        Some(class) => bail!(
            "{}: connector.class is {class:?}, not the class of --plugin {} ({})",
            args.file.display(),
            plugin.as_str(),
            plugin.class()
        ),
    }
    let findings = validate(&config, &Context::default());
    let valid = may_propose(&findings);
    let out = json!({
        "file": args.file.display().to_string(),
        "plugin": plugin.as_str(),
        "valid": valid,
        "findings": findings,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(if valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
