//! A config as a review item holds it: canonical JSON with secrets masked,
//! its SHA-256, the base it changes, and the diff against that base.
//!
//! Everything here works on masked configs, so nothing computed from a
//! config can reveal an inline secret. A change of one inline secret to
//! another is therefore invisible; such drafts cannot be proposed anyway
//! (the `inline_secret` rule is an error), and a change between
//! references, or from an inline secret to a reference, shows.

use super::config::Config;
use super::secret::{MASK, is_secret_key, mask};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// The masked config as compact JSON, keys sorted (a `Config` is a sorted
/// map; serde_json writes it in that order).
pub fn canonical_json(config: &Config, marked: &BTreeSet<String>) -> String {
    // A map of strings always serialises.
    serde_json::to_string(&mask(config, marked)).unwrap_or_default()
}

/// The hex SHA-256 of [`canonical_json`], with a domain prefix (as review
/// items' hashes have) so it means nothing elsewhere.
pub fn config_hash(config: &Config, marked: &BTreeSet<String>) -> String {
    let mut h = Sha256::new();
    h.update(b"streamkeeper connector config v1\n");
    h.update(canonical_json(config, marked).as_bytes());
    hex::encode(h.finalize())
}

/// What a draft changes: the running connector's config as it was read
/// (hashed) or no connector of that name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Base {
    DoesNotExist,
    Running { hash: String },
}

impl Base {
    pub fn of(running: Option<&Config>, marked: &BTreeSet<String>) -> Base {
        match running {
            None => Base::DoesNotExist,
            Some(c) => Base::Running {
                hash: config_hash(c, marked),
            },
        }
    }

    /// Whether the connector moved since this base was taken: apply
    /// re-reads the running config and refuses when this is true.
    pub fn moved(&self, now: Option<&Config>, marked: &BTreeSet<String>) -> bool {
        *self != Base::of(now, marked)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Removed,
    Changed,
}

/// One property that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Change {
    pub key: String,
    pub kind: ChangeKind,
    /// The values, `None` when absent on that side or secret: a secret
    /// property shows only that it changed.
    pub before: Option<String>,
    pub after: Option<String>,
    pub secret: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Diff {
    /// `false`: the draft creates the connector; every property is added.
    pub base_exists: bool,
    pub changes: Vec<Change>,
}

/// The draft against its base, both masked first, in key order.
pub fn diff(base: Option<&Config>, draft: &Config, marked: &BTreeSet<String>) -> Diff {
    let empty = Config::new();
    let before = mask(base.unwrap_or(&empty), marked);
    let after = mask(draft, marked);
    let keys: BTreeSet<&str> = before.iter().chain(after.iter()).map(|(k, _)| k).collect();
    let changes = keys
        .into_iter()
        .filter_map(|key| {
            let (b, a) = (before.get(key), after.get(key));
            let kind = match (b, a) {
                (None, Some(_)) => ChangeKind::Added,
                (Some(_), None) => ChangeKind::Removed,
                (Some(x), Some(y)) if x != y => ChangeKind::Changed,
                _ => return None,
            };
            let secret = is_secret_key(key, marked) || b == Some(MASK) || a == Some(MASK);
            let shown = |v: Option<&str>| v.filter(|_| !secret).map(str::to_owned);
            Some(Change {
                key: key.to_owned(),
                kind,
                before: shown(b),
                after: shown(a),
                secret,
            })
        })
        .collect();
    Diff {
        base_exists: base.is_some(),
        changes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Config {
        pairs.iter().copied().collect()
    }

    fn none() -> BTreeSet<String> {
        BTreeSet::new()
    }

    #[test]
    fn canonical_json_is_sorted_and_masked() {
        let c = config(&[("z", "1"), ("a", "2"), ("database.password", "hunter2")]);
        let j = canonical_json(&c, &none());
        assert_eq!(j, r#"{"a":"2","database.password":"********","z":"1"}"#);
    }

    #[test]
    fn the_hash_ignores_inline_secrets_and_order_but_not_values() {
        let a = config(&[("a", "1"), ("database.password", "x")]);
        let b = config(&[("database.password", "y"), ("a", "1")]);
        assert_eq!(config_hash(&a, &none()), config_hash(&b, &none()));
        assert_eq!(config_hash(&a, &none()).len(), 64);
        let c = config(&[("a", "2"), ("database.password", "x")]);
        assert_ne!(config_hash(&a, &none()), config_hash(&c, &none()));
        let r = config(&[("a", "1"), ("database.password", "${env:PW}")]);
        assert_ne!(config_hash(&a, &none()), config_hash(&r, &none()));
    }

    #[test]
    fn a_base_moves_when_the_running_config_changes_or_appears() {
        let running = config(&[("a", "1")]);
        let base = Base::of(Some(&running), &none());
        assert!(!base.moved(Some(&running), &none()));
        assert!(base.moved(Some(&config(&[("a", "2")])), &none()));
        assert!(base.moved(None, &none()));
        assert!(Base::DoesNotExist.moved(Some(&running), &none()));
        assert!(!Base::of(None, &none()).moved(None, &none()));
        let json = serde_json::to_value(&Base::DoesNotExist).expect("json");
        assert_eq!(json["state"], "does_not_exist");
    }

    #[test]
    fn the_diff_names_added_removed_and_changed_keys() {
        let base = config(&[("a", "1"), ("b", "2"), ("c", "3")]);
        let draft = config(&[("a", "1"), ("b", "20"), ("d", "4")]);
        let d = diff(Some(&base), &draft, &none());
        assert!(d.base_exists);
        let kinds: Vec<(&str, ChangeKind)> =
            d.changes.iter().map(|c| (c.key.as_str(), c.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("b", ChangeKind::Changed),
                ("c", ChangeKind::Removed),
                ("d", ChangeKind::Added)
            ]
        );
        assert_eq!(d.changes[0].before.as_deref(), Some("2"));
        assert_eq!(d.changes[0].after.as_deref(), Some("20"));
    }

    #[test]
    fn secrets_never_show_in_a_diff() {
        let base = config(&[("database.password", "old-secret")]);
        let draft = config(&[("database.password", "${file:/s:pw}")]);
        let d = diff(Some(&base), &draft, &none());
        assert_eq!(d.changes.len(), 1);
        assert!(d.changes[0].secret);
        assert_eq!(d.changes[0].before, None);
        assert_eq!(d.changes[0].after, None);
        assert!(
            !serde_json::to_string(&d)
                .expect("json")
                .contains("old-secret")
        );
        let marked = BTreeSet::from(["custom".to_owned()]);
        let d = diff(None, &config(&[("custom", "s3cr3t")]), &marked);
        assert!(!d.base_exists);
        assert_eq!(d.changes[0].kind, ChangeKind::Added);
        assert_eq!(d.changes[0].after, None);
    }
}
