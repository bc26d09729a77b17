//! Dataset naming (`../shared/reference/openlineage-and-connect.md` A2):
//! the OpenLineage namespace/name rules, Kafka namespaces brought back to
//! the registered cluster whatever alias a producer used, and bad names
//! kept but marked with the reason, so a producer's mistake shows on the
//! node instead of losing the event.

pub use crate::watch::topic_name::{TopicIssue, topic_issue};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Kafka's default listener port, assumed when a producer leaves it out.
const KAFKA_PORT: u16 = 9092;
/// Marquez's `NamespaceName` limit; longer namespaces are marked.
const MAX_NAMESPACE: usize = 1024;

/// A cluster the console knows, as the canonicalisation needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisteredCluster {
    /// The console's id of the cluster, carried onto its datasets.
    pub id: String,
    /// `host:port` of every broker: the configured bootstrap list first
    /// (its first entry becomes the canonical namespace), then the
    /// advertised listeners from metadata. A `PROTO://` prefix is allowed.
    pub brokers: Vec<String>,
}

/// The registered clusters, indexed by broker for the lookups of a fold.
/// Build it once per pass (or per cluster change), not per event.
#[derive(Clone, Debug, Default)]
pub struct Clusters {
    /// Normalised `host:port` → (cluster id, canonical namespace).
    by_broker: HashMap<String, (String, String)>,
}

impl Clusters {
    /// Indexes `clusters`. A cluster without a usable broker is skipped
    /// (nothing could resolve to it); when two clusters list the same
    /// broker the first keeps it, since one address is one cluster.
    pub fn new(clusters: &[RegisteredCluster]) -> Self {
        let mut by_broker = HashMap::new();
        for c in clusters {
            let brokers: Vec<String> = c.brokers.iter().filter_map(|b| broker(b)).collect();
            let Some(first) = brokers.first() else {
                continue;
            };
            let canonical = format!("kafka://{first}");
            for b in brokers {
                by_broker
                    .entry(b)
                    .or_insert_with(|| (c.id.clone(), canonical.clone()));
            }
        }
        Clusters { by_broker }
    }
}

/// Why a namespace or name is marked. Marked datasets are kept: the
/// reason is shown on the node so its producer can be fixed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "issue", rename_all = "snake_case")]
pub enum NameIssue {
    #[error("the namespace is empty")]
    EmptyNamespace,
    #[error("the name is empty")]
    EmptyName,
    /// `kafka://null:-1` (Spark with a `SASL_SSL://` bootstrap, OpenLineage
    /// #4535), `kafka://unknown:unknown` (Debezium without a bootstrap
    /// setting) and the like: no broker can be read from it.
    #[error(
        "the Kafka namespace names no broker (the producer could not tell its bootstrap servers)"
    )]
    UnresolvedKafka,
    #[error(
        "the namespace contains {found:?}, which OpenLineage consumers (Marquez) do not accept"
    )]
    NamespaceCharacter { found: char },
    #[error("the namespace is longer than {MAX_NAMESPACE} characters")]
    NamespaceTooLong,
    #[error("not a valid Kafka topic name: {reason}")]
    InvalidTopic { reason: TopicIssue },
    /// Not a name: the dataset's `columnLineage` facet was malformed and
    /// refused (issue 43), marked where a name's issues are shown while
    /// the event's dataset-level lineage is kept.
    #[error("its columnLineage facet was refused: {reason}")]
    ColumnLineageRefused { reason: String },
}

/// A dataset's name after the rules: the key it is stored under, the
/// namespace the producer sent, and what was wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The canonical namespace: for Kafka, `kafka://<first bootstrap of
    /// the registered cluster>` when one matched, else `kafka://host:port`
    /// of the producer's first broker; otherwise the namespace as sent
    /// (with host case and default port made uniform for Postgres/MySQL).
    pub namespace: String,
    pub name: String,
    /// The namespace exactly as sent; an alias when it differs.
    pub raw_namespace: String,
    /// The registered cluster a Kafka namespace resolved to.
    pub cluster: Option<String>,
    pub issues: Vec<NameIssue>,
}

/// Applies the naming rules to one dataset name. Never fails: a bad
/// namespace is kept as sent and marked, so the event is not lost.
pub fn dataset(namespace: &str, name: &str, clusters: &Clusters) -> Named {
    let mut issues = Vec::new();
    let mut cluster = None;
    let canonical = if let Some(rest) = namespace.strip_prefix("kafka://") {
        match kafka(rest, clusters) {
            Some((ns, id)) => {
                cluster = id;
                ns
            }
            None => {
                issues.push(NameIssue::UnresolvedKafka);
                namespace.to_string()
            }
        }
    } else if let Some(rest) = namespace.strip_prefix("postgres://") {
        host_port("postgres", rest, 5432).unwrap_or_else(|| namespace.to_string())
    } else if let Some(rest) = namespace.strip_prefix("mysql://") {
        host_port("mysql", rest, 3306).unwrap_or_else(|| namespace.to_string())
    } else {
        namespace.to_string()
    };
    if namespace.is_empty() {
        issues.push(NameIssue::EmptyNamespace);
    } else if let Some(found) = namespace.chars().find(|c| !namespace_char(*c)) {
        // A Kafka comma list is a known producer habit (Debezium takes the
        // setting whole), resolved above; only other characters are marked.
        if !(namespace.starts_with("kafka://") && found == ',' && issues.is_empty()) {
            issues.push(NameIssue::NamespaceCharacter { found });
        }
    }
    if namespace.len() > MAX_NAMESPACE {
        issues.push(NameIssue::NamespaceTooLong);
    }
    if name.is_empty() {
        issues.push(NameIssue::EmptyName);
    } else if canonical.starts_with("kafka://")
        && let Some(reason) = topic_issue(name)
    {
        issues.push(NameIssue::InvalidTopic { reason });
    }
    Named {
        namespace: canonical,
        name: name.to_string(),
        raw_namespace: namespace.to_string(),
        cluster,
        issues,
    }
}

/// Marquez's `NamespaceName` characters (`^[a-zA-Z:;=/0-9_\-\.@+]`).
fn namespace_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || ":;=/_-.@+".contains(c)
}

/// The canonical namespace of a Kafka authority (what follows
/// `kafka://`) and the registered cluster it names, or `None` when no
/// broker can be read from it. Every entry of a comma/semicolon list is
/// tried against the registry, since producers disagree on which entry
/// they take (A2's table).
fn kafka(authority: &str, clusters: &Clusters) -> Option<(String, Option<String>)> {
    let brokers: Vec<String> = authority.split([',', ';']).filter_map(broker).collect();
    for b in &brokers {
        if let Some((id, canonical)) = clusters.by_broker.get(b) {
            return Some((canonical.clone(), Some(id.clone())));
        }
    }
    brokers.first().map(|b| (format!("kafka://{b}"), None))
}

/// One broker entry as `host:port`: `PROTO://` prefix dropped, host in
/// lower case, Kafka's port when missing. `None` for what names no
/// broker (`null:-1`, `unknown:unknown`, empty, a bad port).
fn broker(entry: &str) -> Option<String> {
    let entry = entry.trim();
    let entry = match entry.find("://") {
        Some(i) => &entry[i + 3..],
        None => entry,
    };
    let (host, port) = split_host_port(entry)?;
    let port = match port {
        None => KAFKA_PORT,
        Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0)?,
    };
    let host = host.to_ascii_lowercase();
    if host.is_empty() || host == "null" || host == "unknown" || host.contains('/') {
        return None;
    }
    Some(format!("{host}:{port}"))
}

/// `host[:port]`, with `[v6]:port` kept bracketed.
fn split_host_port(s: &str) -> Option<(&str, Option<&str>)> {
    if s.starts_with('[') {
        let end = s.find(']')?;
        let rest = &s[end + 1..];
        return match rest.strip_prefix(':') {
            Some(p) => Some((&s[..=end], Some(p))),
            None if rest.is_empty() => Some((&s[..=end], None)),
            None => None,
        };
    }
    Some(match s.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    })
}

/// `scheme://host:port` with the host in lower case and the default port
/// filled in, so `postgres://DB:5432` and `postgres://db` join. `None`
/// (keep as sent) for anything with a path, credentials or query.
fn host_port(scheme: &str, authority: &str, default: u16) -> Option<String> {
    if authority.contains(['/', '@', '?', ',']) {
        return None;
    }
    let (host, port) = split_host_port(authority)?;
    let port = match port {
        None => default,
        Some(p) => p.parse::<u16>().ok()?,
    };
    if host.is_empty() {
        return None;
    }
    Some(format!("{scheme}://{}:{port}", host.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Clusters {
        Clusters::new(&[RegisteredCluster {
            id: "prod".into(),
            brokers: vec![
                "b1:9092".into(),
                "B2:9092".into(),
                "SASL_SSL://b1:9093".into(),
            ],
        }])
    }

    #[test]
    fn every_alias_of_a_registered_cluster_is_one_namespace() {
        let c = registry();
        for raw in [
            "kafka://b1:9092",
            "kafka://b2:9092",
            "kafka://B1:9092",
            "kafka://b1",
            "kafka://SASL_SSL://b1:9093",
            "kafka://PLAINTEXT://b2:9092",
            "kafka://b1:9092,b2:9092",
            "kafka://x9:9092;b2:9092",
        ] {
            let n = dataset(raw, "orders", &c);
            assert_eq!(n.namespace, "kafka://b1:9092", "{raw}");
            assert_eq!(n.cluster.as_deref(), Some("prod"), "{raw}");
            assert_eq!(n.raw_namespace, raw);
            assert!(n.issues.is_empty(), "{raw}: {:?}", n.issues);
        }
    }

    #[test]
    fn an_unregistered_cluster_still_gets_one_form() {
        let n = dataset("kafka://SASL_SSL://Other:9093,o2:9093", "t", &registry());
        assert_eq!(n.namespace, "kafka://other:9093");
        assert_eq!(n.cluster, None);
        assert!(n.issues.is_empty());
    }

    #[test]
    fn unresolvable_kafka_namespaces_are_kept_and_marked() {
        for raw in ["kafka://null:-1", "kafka://unknown:unknown", "kafka://"] {
            let n = dataset(raw, "orders", &registry());
            assert_eq!(n.namespace, raw);
            assert_eq!(n.issues, vec![NameIssue::UnresolvedKafka], "{raw}");
        }
    }

    #[test]
    fn bad_namespaces_are_kept_and_marked() {
        let c = Clusters::default();
        let n = dataset("postgres://db:5432?serverTimezone=UTC", "a.b.c", &c);
        assert_eq!(n.namespace, "postgres://db:5432?serverTimezone=UTC");
        assert_eq!(n.issues, vec![NameIssue::NamespaceCharacter { found: '?' }]);
        let n = dataset("my namespace", "x", &c);
        assert_eq!(n.issues, vec![NameIssue::NamespaceCharacter { found: ' ' }]);
        assert_eq!(dataset("", "x", &c).issues, vec![NameIssue::EmptyNamespace]);
        assert_eq!(dataset("ns", "", &c).issues, vec![NameIssue::EmptyName]);
        let long = "a".repeat(1025);
        assert_eq!(
            dataset(&long, "x", &c).issues,
            vec![NameIssue::NamespaceTooLong]
        );
        assert!(
            NameIssue::NamespaceCharacter { found: '?' }
                .to_string()
                .contains("'?'")
        );
    }

    #[test]
    fn topics_follow_kafkas_rule() {
        let n = dataset("kafka://b1:9092", "1x:y", &registry());
        assert_eq!(
            n.issues,
            vec![NameIssue::InvalidTopic {
                reason: TopicIssue::Character
            }]
        );
        assert_eq!(topic_issue("orders.v1_x-2"), None);
        assert_eq!(topic_issue(".."), Some(TopicIssue::Dots));
        assert_eq!(topic_issue(&"t".repeat(250)), Some(TopicIssue::TooLong));
        assert_eq!(topic_issue("ünï"), Some(TopicIssue::Character));
        // Only Kafka datasets are topics: a table may hold a colon.
        assert!(dataset("s3://bucket", "a:b", &registry()).issues.is_empty());
    }

    #[test]
    fn postgres_hosts_join_across_case_and_default_port() {
        let c = Clusters::default();
        assert_eq!(
            dataset("postgres://DB", "d.s.t", &c).namespace,
            "postgres://db:5432"
        );
        assert_eq!(
            dataset("postgres://db:5433", "d.s.t", &c).namespace,
            "postgres://db:5433"
        );
        assert_eq!(
            dataset("mysql://My", "d.t", &c).namespace,
            "mysql://my:3306"
        );
        assert_eq!(
            dataset("postgres://u@db/x", "t", &c).namespace,
            "postgres://u@db/x"
        );
    }
}
