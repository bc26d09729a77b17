//! `streamkeeper schema check`: offline on schema files, printing the
//! verdict of a compatibility mode as JSON; or against a running console,
//! printing each consumer group's verdict for a proposed producer schema.
//! Exit codes: 0 compatible, 1 incompatible, 2 an error or no verdict.

use crate::platform::limits::{Blocking, SchemaLimits};
use anyhow::{Context, anyhow, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use streamkeeper::schemas::check::{ParsedSchema, check};
use streamkeeper::schemas::{Mode, ResolvedReference, SchemaText, SchemaType, Verdict};
use streamkeeper_app::schemas::model::{CompatibilityReport, ProposedSchema};

#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// Is a new schema compatible? Exit 0 compatible, 1 incompatible, 2 error.
    ///
    /// Offline: `--type avro --mode BACKWARD --old v1.avsc --old v2.avsc --new v3.avsc`
    /// (several --old, oldest first, for the transitive modes).
    /// Against a console: `--server URL --token T --cluster C --topic T --schema FILE`
    /// checks the schema against every consumer group that reads the topic.
    Check(SchemaCheckArgs),
}

#[derive(Debug, Args)]
pub struct SchemaCheckArgs {
    /// avro, json or protobuf (offline: required; online: default avro).
    #[arg(long = "type")]
    pub schema_type: Option<String>,
    /// Offline: BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE,
    /// FULL, FULL_TRANSITIVE or NONE.
    #[arg(long)]
    pub mode: Option<String>,
    /// Offline: an earlier schema (repeat, oldest first).
    #[arg(long = "old")]
    pub old: Vec<std::path::PathBuf>,
    /// Offline: the new schema.
    #[arg(long = "new")]
    pub new: Option<std::path::PathBuf>,
    /// A referenced schema as NAME=FILE (a Protobuf import path, an Avro
    /// named type's schema, a JSON Schema $ref); repeat for several.
    #[arg(long = "reference")]
    pub references: Vec<String>,
    /// Online: the console's URL.
    #[arg(long, env = "STREAMKEEPER_SERVER")]
    pub server: Option<String>,
    /// Online: a bearer token (`streamkeeper token create`).
    #[arg(long, env = "STREAMKEEPER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Online: the cluster's name in the console.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Online: the topic the producer writes.
    #[arg(long)]
    pub topic: Option<String>,
    /// Online: the proposed producer schema.
    #[arg(long)]
    pub schema: Option<std::path::PathBuf>,
    /// Online: also propose the checked schema for review, under this
    /// title (`--propose` alone: the default title). The check's JSON
    /// stays on stdout; the item's address goes to stderr.
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    pub propose: Option<String>,
    /// The largest schema file (with its references) read, in bytes.
    #[arg(long, env = "STREAMKEEPER_MAX_SCHEMA_BYTES", default_value_t = crate::platform::limits::DEFAULT_MAX_SCHEMA_BYTES)]
    pub max_schema_bytes: usize,
}

pub async fn run(cmd: SchemaCommand) -> anyhow::Result<ExitCode> {
    let SchemaCommand::Check(args) = cmd;
    if args.server.is_some() {
        online(args).await
    } else {
        offline(&args)
    }
}

fn schema_type(arg: Option<&str>) -> anyhow::Result<SchemaType> {
    let t = arg.unwrap_or("avro");
    SchemaType::parse(t).ok_or_else(|| anyhow!("--type {t:?} is not avro, json or protobuf"))
}

/// A schema file, refused before it is read when it is over the cap.
fn read(path: &Path, limit: usize) -> anyhow::Result<String> {
    let cannot = || format!("cannot read {}", path.display());
    let len = std::fs::metadata(path).with_context(cannot)?.len();
    streamkeeper::platform::limit::cap(
        path.display().to_string(),
        len,
        u64::try_from(limit).unwrap_or(u64::MAX),
    )
    .map_err(|e| anyhow!("{e} (--max-schema-bytes, STREAMKEEPER_MAX_SCHEMA_BYTES)"))?;
    std::fs::read_to_string(path).with_context(cannot)
}

fn references(args: &SchemaCheckArgs) -> anyhow::Result<Vec<ResolvedReference>> {
    args.references
        .iter()
        .map(|r| {
            let (name, file) = r
                .split_once('=')
                .ok_or_else(|| anyhow!("--reference {r:?} is not NAME=FILE"))?;
            Ok(ResolvedReference {
                name: name.to_owned(),
                text: read(Path::new(file), args.max_schema_bytes)?,
            })
        })
        .collect()
}

/// Through the server's one way into the parsers (the size cap first);
/// here on the CLI's own thread, the only work it has.
fn parse(
    limits: &SchemaLimits,
    ty: SchemaType,
    path: &Path,
    refs: &[ResolvedReference],
) -> anyhow::Result<ParsedSchema> {
    let text = SchemaText {
        schema_type: ty,
        text: read(path, limits.max_bytes())?,
        references: refs.to_vec(),
    };
    limits
        .parse_here(&text)
        .with_context(|| path.display().to_string())
}

fn offline(args: &SchemaCheckArgs) -> anyhow::Result<ExitCode> {
    let Some(type_arg) = args.schema_type.as_deref() else {
        bail!(
            "offline checks need --type (avro, json or protobuf), --mode, --new and --old (or --server for a console)"
        );
    };
    let ty = schema_type(Some(type_arg))?;
    let mode_arg = args
        .mode
        .as_deref()
        .ok_or_else(|| anyhow!("--mode is required offline (e.g. BACKWARD)"))?;
    let mode = Mode::parse(mode_arg).ok_or_else(|| {
        anyhow!(
            "--mode {mode_arg:?} is not one of {}",
            Mode::ALL.map(Mode::as_str).join(", ")
        )
    })?;
    let new_path = args
        .new
        .as_deref()
        .ok_or_else(|| anyhow!("--new is required"))?;
    let refs = references(args)?;
    let limits = SchemaLimits::new(args.max_schema_bytes, Blocking::new(1));
    let new = parse(&limits, ty, new_path, &refs)?;
    let history = args
        .old
        .iter()
        .map(|p| parse(&limits, ty, p, &refs))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let verdict = check(mode, &history, &new);
    let out = json!({
        "compatible": verdict.compatible,
        "schema_type": ty.as_str(),
        "mode": mode.as_str(),
        "versions_checked": history.len(),
        "incompatibilities": verdict.findings.iter().map(|f| json!({
            "version": f.version,
            "old": args.old.get(f.version - 1).map(|p| p.display().to_string()),
            "direction": f.direction,
            "kind": f.incompatibility.kind,
            "location": f.incompatibility.location,
            "message": f.incompatibility.message,
        })).collect::<Vec<_>>(),
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(if verdict.compatible {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn online(args: SchemaCheckArgs) -> anyhow::Result<ExitCode> {
    let server = args
        .server
        .as_deref()
        .unwrap_or_default()
        .trim_end_matches('/');
    let token = args
        .token
        .as_deref()
        .ok_or_else(|| anyhow!("--token (or STREAMKEEPER_TOKEN) is required with --server"))?;
    let cluster = args
        .cluster
        .as_deref()
        .ok_or_else(|| anyhow!("--cluster is required with --server"))?;
    let topic = args
        .topic
        .as_deref()
        .ok_or_else(|| anyhow!("--topic is required with --server"))?;
    let proposed = proposed_schema(&args)?;
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()?;
    let id = cluster_id(&http, server, token, cluster).await?;
    let topic_path: String = url::form_urlencoded::byte_serialize(topic.as_bytes()).collect();
    let report: CompatibilityReport = answer(
        http.post(format!(
            "{server}/api/v1/clusters/{id}/streams/{topic_path}/compatibility"
        ))
        .bearer_auth(token)
        .json(&proposed)
        .send()
        .await,
        server,
    )
    .await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    if let Some(title) = &args.propose {
        propose(&http, server, token, report.id, title).await?;
    }
    Ok(match report.verdict {
        Verdict::Compatible => ExitCode::SUCCESS,
        Verdict::Incompatible => ExitCode::from(1),
        Verdict::Undecided => {
            eprintln!("no verdict: {}", report.summary);
            ExitCode::from(2)
        }
    })
}

/// The schema file `--schema` names, with its type and references.
fn proposed_schema(args: &SchemaCheckArgs) -> anyhow::Result<ProposedSchema> {
    let path = args
        .schema
        .as_deref()
        .ok_or_else(|| anyhow!("--schema FILE is required with --server"))?;
    Ok(ProposedSchema {
        schema_type: schema_type(args.schema_type.as_deref())?,
        schema: read(path, args.max_schema_bytes)?,
        references: references(args)?
            .into_iter()
            .map(|r| (r.name, r.text))
            .collect(),
        subject_references: Vec::new(),
    })
}

/// The id of the cluster the console at `server` watches as `cluster`.
async fn cluster_id(
    http: &reqwest::Client,
    server: &str,
    token: &str,
    cluster: &str,
) -> anyhow::Result<i64> {
    let clusters: Vec<serde_json::Value> = answer(
        http.get(format!("{server}/api/v1/clusters"))
            .bearer_auth(token)
            .send()
            .await,
        server,
    )
    .await?;
    clusters
        .iter()
        .find(|c| c["name"] == cluster)
        .and_then(|c| c["id"].as_i64())
        .ok_or_else(|| anyhow!("the console at {server} watches no cluster named {cluster:?}"))
}

/// Proposes the checked schema (check `check`) for review as `title`.
async fn propose(
    http: &reqwest::Client,
    server: &str,
    token: &str,
    check: i64,
    title: &str,
) -> anyhow::Result<()> {
    let item: serde_json::Value = answer(
        http.post(format!("{server}/api/v1/schema-checks/{check}/proposals"))
            .bearer_auth(token)
            .json(&serde_json::json!({ "title": title }))
            .send()
            .await,
        server,
    )
    .await
    .context("proposing the checked schema for review")?;
    let id = item["id"].as_i64().unwrap_or_default();
    eprintln!("proposed for review as item {id}: {server}/review/{id}");
    Ok(())
}

/// The JSON body of a successful answer, or the API's error message.
pub(crate) async fn answer<T: serde::de::DeserializeOwned>(
    sent: Result<reqwest::Response, reqwest::Error>,
    server: &str,
) -> anyhow::Result<T> {
    let r = sent.with_context(|| format!("the console at {server} cannot be reached"))?;
    let status = r.status();
    let body = r.text().await.context("reading the console's answer")?;
    if !status.is_success() {
        let message = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
            .unwrap_or(body);
        bail!("the console answered {status}: {message}");
    }
    serde_json::from_str(&body).with_context(|| format!("unexpected answer from {server}"))
}
