//! A connector change as a review item: what it holds, the hash its
//! approvals are bound to, and whose domain decides who approves it.

use super::canonical::Base;
use super::config::{Config, NAME};
use super::secret::mask;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// Exactly what would be sent to the worker: the connector's name and its
/// config, canonical (keys sorted, inline secrets masked, `${…}`
/// references as written). A draft with a masked value cannot be
/// proposed (the `masked_value` and `inline_secret` rules are errors), so
/// what was approved is what is written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DraftContent {
    /// The Connect cluster (its id and name) the connector runs on.
    pub connect_id: i64,
    pub connect: String,
    pub name: String,
    pub config: Config,
    /// The keys the plugin marks PASSWORD (the worker's validate answer),
    /// masked here and in the base alike.
    #[serde(default)]
    pub secret_keys: BTreeSet<String>,
}

impl DraftContent {
    /// The content for `config` as it may be kept: masked with the keys
    /// the plugin marks PASSWORD, and carrying its name.
    pub fn new(
        connect_id: i64,
        connect: &str,
        name: &str,
        config: &Config,
        marked: &BTreeSet<String>,
    ) -> DraftContent {
        let mut config = mask(config, marked);
        config.set(NAME, name);
        DraftContent {
            connect_id,
            connect: connect.to_owned(),
            name: name.to_owned(),
            config,
            secret_keys: marked.clone(),
        }
    }
}

/// The hex SHA-256 an approval of a connector item is bound to: the kind,
/// the canonical content and the base (serde_json writes the structs in
/// declaration order and the config's keys sorted).
pub fn draft_hash(kind: &str, content: &DraftContent, base: &Base) -> String {
    let mut h = Sha256::new();
    h.update(b"streamkeeper connector review item v1\n");
    h.update(kind.as_bytes());
    h.update(b"\n");
    // Strings, numbers and a map of strings always serialise.
    h.update(serde_json::to_vec(content).unwrap_or_default());
    h.update(b"\n");
    h.update(serde_json::to_vec(base).unwrap_or_default());
    hex::encode(h.finalize())
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    #[error(
        "None of the topics connector {0} reads or writes has a domain: describe its streams with their owner and domain first, so that its approvers are known."
    )]
    None(String),
    #[error(
        "Connector {name} reads or writes streams of domains {}: a change must have one domain's approvers. Split it, or move the streams into one domain.",
        .domains.join(", ")
    )]
    Several { name: String, domains: Vec<String> },
}

/// The domain whose approvers decide a change to connector `name`, and the
/// stream it comes from: the one domain of the streams it reads and writes
/// (`(topic, domain)`, blank domains ignored). None, or more than one, is
/// refused: nobody, or nobody alone, may approve it.
pub fn governing_domain(
    name: &str,
    streams: &[(String, String)],
) -> Result<(String, String), DomainError> {
    let named: Vec<&(String, String)> = streams
        .iter()
        .filter(|(_, d)| !d.trim().is_empty())
        .collect();
    let domains: BTreeSet<&str> = named.iter().map(|(_, d)| d.as_str()).collect();
    match domains.len() {
        0 => Err(DomainError::None(name.to_owned())),
        1 => {
            let first = named
                .iter()
                .min_by(|a, b| a.0.cmp(&b.0))
                .map(|(t, d)| (t.clone(), d.clone()));
            first.ok_or_else(|| DomainError::None(name.to_owned()))
        }
        _ => Err(DomainError::Several {
            name: name.to_owned(),
            domains: domains.into_iter().map(str::to_owned).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(pairs: &[(&str, &str)]) -> DraftContent {
        let config: Config = pairs.iter().copied().collect();
        DraftContent::new(1, "main", "sink", &config, &BTreeSet::new())
    }

    #[test]
    fn content_is_masked_named_and_keeps_references() {
        let c = content(&[
            ("database.password", "hunter2"),
            ("aws.secret.access.key", "${file:/s.properties:key}"),
            ("name", "other"),
        ]);
        assert_eq!(c.config.get("database.password"), Some("********"));
        assert_eq!(
            c.config.get("aws.secret.access.key"),
            Some("${file:/s.properties:key}")
        );
        assert_eq!(c.config.get("name"), Some("sink"));
        assert!(!serde_json::to_string(&c).expect("json").contains("hunter2"));
    }

    #[test]
    fn the_hash_binds_kind_content_and_base() {
        let base = Base::DoesNotExist;
        let a = content(&[("a", "1"), ("b", "2")]);
        let h = draft_hash("connector_draft", &a, &base);
        assert_eq!(h.len(), 64);
        assert_eq!(
            draft_hash(
                "connector_draft",
                &content(&[("b", "2"), ("a", "1")]),
                &base
            ),
            h,
            "key order does not count"
        );
        assert_ne!(
            draft_hash(
                "connector_draft",
                &content(&[("a", "2"), ("b", "2")]),
                &base
            ),
            h
        );
        assert_ne!(draft_hash("connector_restart", &a, &base), h);
        let moved = Base::Running { hash: "x".into() };
        assert_ne!(draft_hash("connector_draft", &a, &moved), h);
    }

    #[test]
    fn one_domain_governs() {
        let s = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(t, d)| ((*t).to_owned(), (*d).to_owned()))
                .collect()
        };
        assert_eq!(
            governing_domain("c", &s(&[("b", "payments"), ("a", "payments"), ("z", "")])),
            Ok(("a".into(), "payments".into()))
        );
        assert_eq!(
            governing_domain("c", &s(&[("a", " ")])),
            Err(DomainError::None("c".into()))
        );
        assert!(matches!(
            governing_domain("c", &s(&[("a", "payments"), ("b", "orders")])),
            Err(DomainError::Several { domains, .. }) if domains == ["orders", "payments"]
        ));
    }
}
