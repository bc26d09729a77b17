//! Clusters declared in a file, for GitOps: the file is the source of
//! truth for the clusters it names, applied at start (`serve
//! --clusters-file`) or by a CI job (`streamkeeper cluster apply FILE`).
//! Credentials stay references (`env:STREAMKEEPER_CRED_…`, files under
//! `/run/secrets`), so the file can live in a repository.
//!
//! ```toml
//! [[cluster]]
//! name = "prod"
//! bootstrap = "pkc-abc.eu-west-1.aws.confluent.cloud:9092"
//! security_protocol = "SASL_SSL"
//! sasl_mechanism = "PLAIN"
//! username = "env:STREAMKEEPER_CRED_CC_API_KEY"
//! password = "env:STREAMKEEPER_CRED_CC_API_SECRET"
//! interval_s = 15
//! lineage_topic = "openlineage.events"  # opt-in: read OpenLineage events from it
//!
//! [[cluster.connect]]                # its Kafka Connect clusters, any number
//! name = "main"
//! url = "https://connect.internal:8083"
//! username = "env:STREAMKEEPER_CRED_CONNECT_USER"
//! password = "env:STREAMKEEPER_CRED_CONNECT_PASSWORD"
//! ```

use serde::Deserialize;
use std::io::Read;
use std::path::Path;
use streamkeeper::platform::limit::{TooLarge, cap};
use streamkeeper_app::watch::model::NewCluster;

/// The largest clusters file read: a thousand clusters take about
/// 250 KiB, and the TOML parser holds the whole file and its tree.
pub const MAX_BYTES: u64 = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ClusterFileError {
    #[error("the clusters file {path} cannot be read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the clusters file {path} is not valid: {detail}")]
    Invalid { path: String, detail: String },
    #[error("{0}")]
    TooLarge(TooLarge),
}

fn capped(path: &str, bytes: usize) -> Result<(), ClusterFileError> {
    let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
    cap(format!("the clusters file {path}"), bytes, MAX_BYTES).map_err(ClusterFileError::TooLarge)
}

/// One `[[cluster]]` table. Unknown keys are refused: a misspelt
/// `pasword` must not silently leave a cluster without credentials.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    bootstrap: String,
    #[serde(default = "plaintext")]
    security_protocol: String,
    sasl_mechanism: Option<String>,
    /// A reference: `env:STREAMKEEPER_CRED_NAME` or `file:/run/secrets/NAME`.
    username: Option<String>,
    /// A reference: `env:STREAMKEEPER_CRED_NAME` or `file:/run/secrets/NAME`.
    password: Option<String>,
    /// The CA bundle (PEM) TLS is checked against, by reference like the
    /// credentials. Absent: the system's trust store.
    ca: Option<String>,
    /// Mutual TLS: the client certificate (PEM) and its private key, by
    /// reference; both or neither.
    client_cert: Option<String>,
    client_key: Option<String>,
    /// Credentials may go without TLS: a local cluster only.
    #[serde(default)]
    insecure_credentials: bool,
    #[serde(default = "default_interval")]
    interval_s: i32,
    /// The topic the cluster's OpenLineage producers write to (their Kafka
    /// transport): read as the group `streamkeeper-lineage`. Absent: off.
    lineage_topic: Option<String>,
    /// The cluster's Kafka Connect clusters (`[[cluster.connect]]`).
    #[serde(default)]
    connect: Vec<ConnectEntry>,
}

/// One `[[cluster.connect]]` table: a worker's URL or Confluent Cloud's
/// managed-connector prefix, credentials by reference (Basic or a token).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConnectEntry {
    name: String,
    url: String,
    username: Option<String>,
    password: Option<String>,
    token: Option<String>,
    interval_s: Option<i32>,
}

/// A Connect cluster the file declares, with the name of its Kafka cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectFileEntry {
    pub cluster: String,
    pub name: String,
    pub url: String,
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    pub token_ref: Option<String>,
    pub interval_s: Option<i32>,
}

fn plaintext() -> String {
    "PLAINTEXT".into()
}

fn default_interval() -> i32 {
    15
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterFile {
    #[serde(default)]
    cluster: Vec<Entry>,
}

fn read_toml(path: &str, text: &str) -> Result<ClusterFile, ClusterFileError> {
    capped(path, text.len())?;
    toml::from_str(text).map_err(|e| ClusterFileError::Invalid {
        path: path.to_owned(),
        detail: e.to_string(),
    })
}

/// The Connect clusters a clusters file's text declares; a name twice
/// under one cluster is refused.
pub fn parse_connect(path: &str, text: &str) -> Result<Vec<ConnectFileEntry>, ClusterFileError> {
    let file = read_toml(path, text)?;
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for e in file.cluster {
        for c in e.connect {
            if !seen.insert((e.name.trim().to_owned(), c.name.trim().to_owned())) {
                return Err(ClusterFileError::Invalid {
                    path: path.to_owned(),
                    detail: format!(
                        "the Connect cluster {:?} of cluster {:?} is declared twice",
                        c.name, e.name
                    ),
                });
            }
            out.push(ConnectFileEntry {
                cluster: e.name.trim().to_owned(),
                name: c.name,
                url: c.url,
                username_ref: c.username,
                password_ref: c.password,
                token_ref: c.token,
                interval_s: c.interval_s,
            });
        }
    }
    Ok(out)
}

/// Each cluster's lineage topic as the file says it (absent: none), by
/// cluster name.
pub fn parse_lineage_topics(
    path: &str,
    text: &str,
) -> Result<Vec<(String, Option<String>)>, ClusterFileError> {
    Ok(read_toml(path, text)?
        .cluster
        .into_iter()
        .map(|e| {
            let topic = e.lineage_topic.map(|t| t.trim().to_owned());
            (e.name.trim().to_owned(), topic.filter(|t| !t.is_empty()))
        })
        .collect())
}

/// Parses a clusters file's text; `path` only names it in errors.
pub fn parse(path: &str, text: &str) -> Result<Vec<NewCluster>, ClusterFileError> {
    let invalid = |detail: String| ClusterFileError::Invalid {
        path: path.to_owned(),
        detail,
    };
    let file = read_toml(path, text)?;
    let mut seen = std::collections::BTreeSet::new();
    for e in &file.cluster {
        if !seen.insert(e.name.trim().to_owned()) {
            return Err(invalid(format!(
                "the cluster {:?} is declared twice",
                e.name
            )));
        }
    }
    Ok(file
        .cluster
        .into_iter()
        .map(|e| NewCluster {
            name: e.name,
            bootstrap: e.bootstrap,
            security_protocol: e.security_protocol,
            sasl_mechanism: e.sasl_mechanism,
            username_ref: e.username,
            password_ref: e.password,
            ca_ref: e.ca,
            client_cert_ref: e.client_cert,
            client_key_ref: e.client_key,
            insecure_credentials: e.insecure_credentials,
            interval_s: e.interval_s,
        })
        .collect())
}

/// Reads and parses a clusters file, reading no more than one byte past
/// [`MAX_BYTES`] however big the file is (or grows while it is read).
pub fn load(path: &Path) -> Result<Vec<NewCluster>, ClusterFileError> {
    let (name, text) = read(path)?;
    parse(&name, &text)
}

/// The lineage topics of a clusters file, read as [`load`] reads it.
pub fn load_lineage_topics(path: &Path) -> Result<Vec<(String, Option<String>)>, ClusterFileError> {
    let (name, text) = read(path)?;
    parse_lineage_topics(&name, &text)
}

/// The Connect clusters of a clusters file, read as [`load`] reads it.
pub fn load_connect(path: &Path) -> Result<Vec<ConnectFileEntry>, ClusterFileError> {
    let (name, text) = read(path)?;
    parse_connect(&name, &text)
}

fn read(path: &Path) -> Result<(String, String), ClusterFileError> {
    let name = path.display().to_string();
    let unreadable = |source| ClusterFileError::Read {
        path: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let declared = file.metadata().map_err(unreadable)?.len();
    capped(&name, usize::try_from(declared).unwrap_or(usize::MAX))?;
    let mut text = String::new();
    file.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(unreadable)?;
    Ok((name, text))
}

/// Whoever applies the file's Connect entries: the connect feature, which
/// sits above watch. Watch reads the whole file but knows only clusters,
/// so `cluster apply` and `serve --clusters-file` are handed this.
#[async_trait::async_trait]
pub trait ConnectEntries: Send + Sync {
    /// Checks every entry, then (unless `dry_run`) sets them; the names set.
    async fn apply(
        &self,
        who: &streamkeeper::accounts::account::Principal,
        from: &str,
        entries: Vec<ConnectFileEntry>,
        dry_run: bool,
    ) -> Result<Vec<String>, streamkeeper_app::error::AppError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entries_with_defaults() {
        let c = parse(
            "c.toml",
            r#"
            [[cluster]]
            name = "local"
            bootstrap = "127.0.0.1:9092"

            [[cluster]]
            name = "cloud"
            bootstrap = "pkc:9092"
            security_protocol = "SASL_SSL"
            sasl_mechanism = "PLAIN"
            username = "env:STREAMKEEPER_CRED_KEY"
            password = "file:/run/secrets/cc"
            interval_s = 30
            "#,
        )
        .expect("valid");
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].security_protocol, "PLAINTEXT");
        assert_eq!(c[0].interval_s, 15);
        assert_eq!(c[1].password_ref.as_deref(), Some("file:/run/secrets/cc"));
    }

    #[test]
    fn reads_the_lineage_topic_opt_in_per_cluster() {
        let t = parse_lineage_topics(
            "c.toml",
            "[[cluster]]\nname='a'\nbootstrap='b:1'\nlineage_topic=' openlineage.events '\n\
             [[cluster]]\nname='b'\nbootstrap='c:1'\n",
        )
        .expect("valid");
        assert_eq!(
            t,
            [
                ("a".to_string(), Some("openlineage.events".to_string())),
                ("b".to_string(), None)
            ]
        );
    }

    #[test]
    fn reads_connect_clusters_under_their_cluster() {
        let text = r#"
            [[cluster]]
            name = "prod"
            bootstrap = "pkc:9092"
            [[cluster.connect]]
            name = "main"
            url = "https://connect:8083"
            username = "env:STREAMKEEPER_CRED_U"
            password = "env:STREAMKEEPER_CRED_P"
            [[cluster.connect]]
            name = "cloud"
            url = "https://api.confluent.cloud/connect/v1/environments/env-1/clusters/lkc-1"
            interval_s = 60
            "#;
        assert_eq!(parse("c.toml", text).expect("clusters").len(), 1);
        let c = parse_connect("c.toml", text).expect("connect");
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].cluster, "prod");
        assert_eq!(
            c[0].password_ref.as_deref(),
            Some("env:STREAMKEEPER_CRED_P")
        );
        assert_eq!(c[1].interval_s, Some(60));
        let e = parse_connect(
            "c.toml",
            &format!("{text}\n[[cluster.connect]]\nname='main'\nurl='http://x'\n"),
        )
        .expect_err("twice");
        assert!(e.to_string().contains("declared twice"), "{e}");
        let e = parse("c.toml", "[[cluster]]\nname='a'\nbootstrap='b'\n[[cluster.connect]]\nname='m'\nurl='http://x'\npasword='env:X'\n")
            .expect_err("unknown key");
        assert!(e.to_string().contains("pasword"), "{e}");
    }

    #[test]
    fn refuses_unknown_keys_duplicates_and_bad_toml() {
        let e = parse(
            "c.toml",
            "[[cluster]]\nname='a'\nbootstrap='b'\npasword='env:X'\n",
        )
        .expect_err("unknown key");
        assert!(e.to_string().contains("pasword"), "{e}");
        let e = parse(
            "c.toml",
            "[[cluster]]\nname='a'\nbootstrap='b'\n[[cluster]]\nname='a'\nbootstrap='c'\n",
        )
        .expect_err("twice");
        assert!(e.to_string().contains("declared twice"), "{e}");
        let e = parse("c.toml", "[[cluster]\n").expect_err("bad toml");
        assert!(e.to_string().contains("c.toml"), "{e}");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_before_it_is_parsed() {
        let mut text = String::from("[[cluster]]\nname='a'\nbootstrap='b'\n");
        text.push_str(&"# padding\n".repeat(120_000));
        let e = parse("big.toml", &text).expect_err("too large");
        assert!(matches!(e, ClusterFileError::TooLarge(_)), "{e}");
        assert!(
            e.to_string()
                .starts_with("the clusters file big.toml is 1.1 MiB"),
            "{e}"
        );
        assert!(e.to_string().ends_with("the limit is 1 MiB"), "{e}");
        let dir = std::env::temp_dir().join(format!("sk-clusters-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("big.toml");
        std::fs::write(&file, &text).expect("write");
        let e = load(&file).expect_err("too large on disk");
        assert!(matches!(e, ClusterFileError::TooLarge(_)), "{e}");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
