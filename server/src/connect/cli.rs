//! `streamkeeper connect validate FILE --plugin P`: the rules on a config
//! file, offline, printing the findings as JSON. Exit codes as
//! `schema check`: 0 no error (may be proposed), 1 errors found, 2 the
//! check could not be made (unreadable file, not a config, unknown plugin).

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
}

/// The largest config file read: configs are a few KiB.
const MAX_BYTES: u64 = 1 << 20;

pub fn run(cmd: ConnectCommand) -> anyhow::Result<ExitCode> {
    let ConnectCommand::Validate(args) = cmd;
    offline(&args)
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
