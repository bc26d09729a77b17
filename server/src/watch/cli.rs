//! `streamkeeper cluster` and `streamkeeper kafka`: clusters from the command line
//! and the clusters file, and reading a cluster's lag without a database.

use crate::clients::egress::Outbound;
use crate::clients::kafka::settings::{ClientCert, ClusterSettings, SecretRef};
use crate::clients::kafka::{probe, reader};
use crate::platform::cli::{SOURCE, cli_principal};
use crate::watch::cluster_file::ConnectEntries;
use clap::{Args, Subcommand};
use sqlx::PgPool;
use std::process::ExitCode;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::platform::words::counted;
use streamkeeper_app::port::Watch as _;

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Watch a cluster (read-only). Credentials are references, never values.
    Add {
        name: String,
        #[command(flatten)]
        conn: KafkaArgs,
        /// Seconds between passes (5–3600).
        #[arg(long, default_value_t = 15)]
        interval: i32,
    },
    /// List watched clusters with their state and data age.
    List {
        /// List the removed clusters instead: who removed them, when, and
        /// when their history is purged (their ids are what `restore` takes).
        #[arg(long)]
        removed: bool,
    },
    /// Stop watching a cluster: it is gone from every list and page, its
    /// history kept for the retention period (audited as `cluster.remove`).
    Remove {
        /// The cluster's name.
        name: String,
    },
    /// Watch a removed cluster again, with its history (before it is purged).
    Restore {
        /// The removed cluster's id (`cluster list --removed`): a new
        /// cluster may have taken its name.
        id: i64,
    },
    /// Pause a cluster: nothing is read from it until it is resumed.
    Pause {
        /// The cluster's name.
        name: String,
    },
    /// Resume a paused cluster.
    Resume {
        /// The cluster's name.
        name: String,
    },
    /// Make the clusters a clusters file names match it (GitOps); clusters
    /// it does not name are left alone and listed.
    Apply {
        /// A TOML file of `[[cluster]]` tables (see docs/configuration.md).
        file: std::path::PathBuf,
        /// Say what would change, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Set the topic a cluster's OpenLineage producers write to (the
    /// opt-in Kafka transport, read by the group streamkeeper-lineage).
    LineageTopic {
        /// The cluster's name.
        cluster: String,
        /// The topic.
        #[arg(long, conflicts_with = "off", required_unless_present = "off")]
        topic: Option<String>,
        /// Turn the Kafka transport off.
        #[arg(long)]
        off: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum KafkaCommand {
    /// Test a connection: say what could and could not be read.
    Check(KafkaArgs),
    /// Print every consumer group's lag per partition.
    Lag(KafkaArgs),
}

#[derive(Debug, Args)]
pub struct KafkaArgs {
    /// host:port[,host:port…]
    #[arg(long)]
    pub bootstrap: String,
    /// PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (Confluent Cloud: SASL_SSL).
    #[arg(long, default_value = "PLAINTEXT")]
    pub security_protocol: String,
    /// PLAIN (Confluent Cloud API keys), SCRAM-SHA-256 or SCRAM-SHA-512.
    #[arg(long)]
    pub sasl_mechanism: Option<String>,
    /// Username reference: env:STREAMKEEPER_CRED_NAME or file:/run/secrets/NAME.
    #[arg(long)]
    pub username: Option<String>,
    /// Password reference: env:STREAMKEEPER_CRED_NAME or file:/run/secrets/NAME.
    #[arg(long)]
    pub password: Option<String>,
    /// CA bundle reference (PEM) for TLS: env:STREAMKEEPER_CRED_NAME or
    /// file:/run/secrets/NAME. Absent: the system's trust store.
    #[arg(long)]
    pub ca: Option<String>,
    /// Mutual TLS: the client certificate reference (PEM, its chain after
    /// it), shown to brokers that ask for one. Needs --client-key.
    #[arg(long, requires = "client_key")]
    pub client_cert: Option<String>,
    /// Mutual TLS: the client certificate's private key reference (PEM).
    #[arg(long, requires = "client_cert")]
    pub client_key: Option<String>,
    /// Send the credentials without TLS (SASL_PLAINTEXT): a local cluster only.
    #[arg(long)]
    pub insecure_credentials: bool,
}

fn cluster_settings(a: &KafkaArgs, policy: &CredentialPolicy) -> anyhow::Result<ClusterSettings> {
    let reference = |r: &Option<String>| {
        r.as_deref()
            .map(|r| SecretRef::checked(r, policy))
            .transpose()
    };
    let mut s = ClusterSettings::new(
        &a.bootstrap,
        a.security_protocol.parse()?,
        a.sasl_mechanism.as_deref().map(str::parse).transpose()?,
        reference(&a.username)?,
        reference(&a.password)?,
        a.insecure_credentials,
    )?;
    s.ca = reference(&a.ca)?;
    s.client_cert = ClientCert::pair(reference(&a.client_cert)?, reference(&a.client_key)?)?;
    Ok(s)
}

pub async fn kafka(cmd: KafkaCommand, outbound: &Outbound) -> anyhow::Result<ExitCode> {
    let (args, lag) = match &cmd {
        KafkaCommand::Check(a) => (a, false),
        KafkaCommand::Lag(a) => (a, true),
    };
    let settings = cluster_settings(args, &outbound.credentials)?;
    let known = Default::default();
    let read = settings.clone();
    let reading =
        tokio::task::spawn_blocking(move || reader::read(&read, &known, &Default::default()))
            .await?;
    let r = match reading {
        Ok(r) => r,
        Err(e) => {
            println!("UNREACHABLE: {e}");
            // The read's error says only that it failed; a probe's reasons
            // (and a TLS handshake of its own) say why, as the connection
            // test does.
            let probed = settings.clone();
            let attempt = tokio::task::spawn_blocking(move || probe::attempt(&probed)).await?;
            if let Err(reasons) = attempt {
                let (_, sentence) = probe::explain(&settings, &reasons).await;
                println!("why: {sentence}");
            }
            return Ok(ExitCode::from(2));
        }
    };
    let partitions: usize = r.topics.iter().map(|t| t.partitions.len()).sum();
    let with_ends = r
        .topics
        .iter()
        .flat_map(|t| &t.partitions)
        .filter(|p| p.log_end.is_some())
        .count();
    if lag {
        for g in &r.groups {
            println!(
                "group {} ({}, {})",
                g.name,
                g.state,
                counted(g.members, "member")
            );
            if let Some(e) = &g.error {
                println!("  offsets could not be read: {e}");
            }
            for ((topic, partition), committed) in &g.offsets {
                let part = r
                    .topics
                    .iter()
                    .find(|t| &t.name == topic)
                    .and_then(|t| t.partitions.iter().find(|p| p.partition == *partition));
                let (start, end) = part
                    .map(|p| (p.log_start, p.log_end))
                    .unwrap_or((None, None));
                let lag = match (start, end) {
                    (Some(s), Some(e)) => lag_words(streamkeeper::watch::lag::offset::offset_lag(
                        *committed, s, e,
                    )),
                    _ => "unknown (log offsets not read)".into(),
                };
                let committed = committed.map_or("none".to_string(), |c| c.to_string());
                let end = end.map_or("?".to_string(), |e| e.to_string());
                println!("  {topic}[{partition}] committed {committed} end {end} lag {lag}");
            }
        }
    } else {
        println!(
            "read {}, {} ({}), {} in {} ms",
            counted(r.brokers, "broker"),
            counted(r.topics.len(), "topic"),
            counted(partitions, "partition"),
            counted(r.groups.len(), "consumer group"),
            (r.finished - r.started).num_milliseconds()
        );
        println!(
            "log offsets read for {with_ends} of {}",
            counted(partitions, "partition")
        );
    }
    for p in &r.problems {
        println!("could not read: {p}");
    }
    Ok(if r.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The id of the cluster named `name`.
async fn cluster_id(
    service: &crate::watch::ClusterService,
    who: &streamkeeper::accounts::account::Principal,
    name: &str,
) -> anyhow::Result<i64> {
    service
        .clusters(who)
        .await?
        .into_iter()
        .find(|c| c.name == name)
        .map(|c| c.id)
        .ok_or_else(|| anyhow::anyhow!("no cluster named {name:?}"))
}

/// Applies the clusters file `serve` was started with; a bad file stops
/// the start, so a typo never runs with half the clusters.
pub async fn apply_clusters_file(
    pool: &PgPool,
    outbound: &Outbound,
    path: &std::path::Path,
    connect_entries: &dyn ConnectEntries,
) -> anyhow::Result<()> {
    let entries = crate::watch::cluster_file::load(path)?;
    let service = crate::watch::ClusterService::new(pool.clone(), outbound.credentials.clone());
    let connect = crate::watch::cluster_file::load_connect(path)?;
    let report = service
        .apply(&cli_principal(), "clusters-file", entries, false)
        .await?;
    tracing::info!(
        created = ?report.created,
        updated = ?report.updated,
        unchanged = report.unchanged.len(),
        not_in_file = ?report.not_in_file,
        "applied the clusters file"
    );
    let lineage = service
        .set_lineage_topics(
            &cli_principal(),
            "clusters-file",
            crate::watch::cluster_file::load_lineage_topics(path)?,
            false,
        )
        .await?;
    if !lineage.is_empty() {
        tracing::info!(clusters = ?lineage, "set the clusters' lineage topics");
    }
    let set = connect_entries
        .apply(&cli_principal(), "clusters-file", connect, false)
        .await?;
    tracing::info!(connect = ?set, "applied the clusters file's Connect clusters");
    Ok(())
}

/// Prints what applying a clusters file did, a line per cluster.
pub fn print_apply(r: &crate::watch::ApplyReport, dry_run: bool) {
    let (created, updated) = if dry_run {
        ("would create", "would update")
    } else {
        ("created", "updated")
    };
    for (verb, names) in [
        (created, &r.created),
        (updated, &r.updated),
        ("unchanged", &r.unchanged),
        ("not in the file, left alone", &r.not_in_file),
    ] {
        for n in names {
            println!("{verb}: {n}");
        }
    }
}

pub async fn cluster(
    pool: &PgPool,
    outbound: &Outbound,
    cmd: ClusterCommand,
    connect_entries: &dyn ConnectEntries,
) -> anyhow::Result<ExitCode> {
    let service = crate::watch::ClusterService::new(pool.clone(), outbound.credentials.clone());
    let who = cli_principal();
    match cmd {
        ClusterCommand::Add {
            name,
            conn,
            interval,
        } => {
            let new = streamkeeper_app::watch::model::NewCluster {
                name,
                bootstrap: conn.bootstrap,
                security_protocol: conn.security_protocol,
                sasl_mechanism: conn.sasl_mechanism,
                username_ref: conn.username,
                password_ref: conn.password,
                ca_ref: conn.ca,
                client_cert_ref: conn.client_cert,
                client_key_ref: conn.client_key,
                insecure_credentials: conn.insecure_credentials,
                interval_s: interval,
            };
            let c = service.create_cluster(&who, SOURCE, new).await?;
            println!(
                "watching cluster {} (id {}) every {} s",
                c.name, c.id, c.interval_s
            );
        }
        ClusterCommand::Apply { file, dry_run } => {
            let entries = crate::watch::cluster_file::load(&file)?;
            let connect = crate::watch::cluster_file::load_connect(&file)?;
            let lineage = crate::watch::cluster_file::load_lineage_topics(&file)?;
            let report = service.apply(&who, SOURCE, entries, dry_run).await?;
            print_apply(&report, dry_run);
            for name in service
                .set_lineage_topics(&who, SOURCE, lineage, dry_run)
                .await?
            {
                let verb = if dry_run { "would set" } else { "set" };
                println!("{verb} the lineage topic of {name}");
            }
            // A dry run checks the Connect entries of clusters that exist.
            let set = connect_entries
                .apply(&who, SOURCE, connect, dry_run)
                .await?;
            for name in set {
                let verb = if dry_run {
                    "would set connect"
                } else {
                    "set connect"
                };
                println!("{verb}: {name}");
            }
        }
        ClusterCommand::Remove { name } => {
            let id = cluster_id(&service, &who, &name).await?;
            let r = service.remove_cluster(&who, SOURCE, id).await?;
            println!(
                "stopped watching {name} (id {id}): its history is kept until {}, then deleted; `streamkeeper cluster restore {id}` until then",
                r.purged_on.format("%Y-%m-%d %H:%M UTC")
            );
        }
        ClusterCommand::Restore { id } => {
            let c = service.restore_cluster(&who, SOURCE, id).await?;
            println!(
                "restored {} (id {}): watched again from its next pass",
                c.name, c.id
            );
        }
        ClusterCommand::Pause { name } => {
            let id = cluster_id(&service, &who, &name).await?;
            service.pause_cluster(&who, SOURCE, id, true).await?;
            println!("paused {name}: nothing is read from it until it is resumed");
        }
        ClusterCommand::Resume { name } => {
            let id = cluster_id(&service, &who, &name).await?;
            service.pause_cluster(&who, SOURCE, id, false).await?;
            println!("resumed {name}: its routines take it up within about ten seconds");
        }
        ClusterCommand::LineageTopic {
            cluster,
            topic,
            off: _,
        } => {
            let id = cluster_id(&service, &who, &cluster).await?;
            let changed = service
                .set_lineage_topic(&who, SOURCE, id, topic.as_deref())
                .await?;
            let now = topic.map_or("off".to_string(), |t| format!("{t:?}"));
            if changed {
                println!("the lineage topic of {cluster} is now {now}");
            } else {
                println!("the lineage topic of {cluster} was already {now}");
            }
        }
        ClusterCommand::List { removed: true } => {
            println!(
                "{:<6} {:<20} {:<22} {:<16} {:<22} bootstrap",
                "id", "name", "removed", "by", "purged on"
            );
            for c in service.removed_clusters(&who).await? {
                let at =
                    |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
                println!(
                    "{:<6} {:<20} {:<22} {:<16} {:<22} {}",
                    c.id,
                    c.name,
                    at(c.removed_at),
                    c.removed_by,
                    at(c.purged_on),
                    c.bootstrap
                );
            }
        }
        ClusterCommand::List { removed: false } => {
            println!(
                "{:<6} {:<20} {:<12} {:<12} bootstrap",
                "id", "name", "state", "data age"
            );
            for c in service.clusters(&who).await? {
                let age = c
                    .data_age_s
                    .map_or("never".to_string(), |s| format!("{s} s"));
                println!(
                    "{:<6} {:<20} {:<12} {:<12} {}",
                    c.id,
                    c.name,
                    c.state.as_str(),
                    age,
                    c.bootstrap
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A partition's lag as the console says it: `1 message`, `none committed`,
/// `3 messages (2 lost to retention)`.
fn lag_words(lag: streamkeeper::watch::lag::offset::OffsetLag) -> String {
    use streamkeeper::watch::lag::offset::OffsetLag;
    match lag {
        OffsetLag::NoCommit => "none committed".into(),
        OffsetLag::Behind { messages } => counted(messages, "message"),
        OffsetLag::BeyondRetention { lost, messages } => format!(
            "{} ({} lost to retention)",
            counted(messages, "message"),
            lost
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::lag_words;
    use streamkeeper::watch::lag::offset::OffsetLag;

    #[test]
    fn a_partitions_lag_reads_as_people_say_it() {
        assert_eq!(lag_words(OffsetLag::Behind { messages: 1 }), "1 message");
        assert_eq!(lag_words(OffsetLag::Behind { messages: 0 }), "0 messages");
        assert_eq!(lag_words(OffsetLag::NoCommit), "none committed");
        assert_eq!(
            lag_words(OffsetLag::BeyondRetention {
                lost: 2,
                messages: 3
            }),
            "3 messages (2 lost to retention)"
        );
    }
}
