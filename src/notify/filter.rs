//! A channel's filter: which flags it hears of. Empty lists mean "all".

use super::Severity;
use serde::{Deserialize, Serialize};

/// Which flags a channel hears of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    /// Flag kinds (`STOP`, `UNDER_REPLICATED`…), upper case; empty for all.
    pub kinds: Vec<String>,
    /// The least severity heard of.
    pub min_severity: Severity,
    /// Cluster names; empty for all.
    pub clusters: Vec<String>,
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            kinds: Vec::new(),
            min_severity: Severity::Info,
            clusters: Vec::new(),
        }
    }
}

/// A filter that cannot be kept.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    #[error("'{0}' is not a flag kind: letters, digits and _ (like STOP or UNDER_REPLICATED).")]
    BadKind(String),
    #[error("A filter names at most {MAX_ITEMS} kinds and {MAX_ITEMS} clusters.")]
    TooMany,
    #[error("A cluster name in a filter is 1 to 200 characters.")]
    BadCluster,
}

const MAX_ITEMS: usize = 50;

impl Filter {
    /// A filter from what a person typed: comma-separated lists, kinds
    /// upper-cased, blanks and repeats dropped.
    pub fn parse(kinds: &str, min_severity: Severity, clusters: &str) -> Result<Self, FilterError> {
        let split = |s: &str| -> Vec<String> {
            let mut v: Vec<String> = s
                .split(',')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(str::to_owned)
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let kinds: Vec<String> = split(kinds).iter().map(|k| k.to_uppercase()).collect();
        let clusters = split(clusters);
        if kinds.len() > MAX_ITEMS || clusters.len() > MAX_ITEMS {
            return Err(FilterError::TooMany);
        }
        if let Some(bad) = kinds
            .iter()
            .find(|k| !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(FilterError::BadKind(bad.clone()));
        }
        if clusters.iter().any(|c| c.chars().count() > 200) {
            return Err(FilterError::BadCluster);
        }
        Ok(Filter {
            kinds,
            min_severity,
            clusters,
        })
    }

    /// Whether a flag of `kind` on `cluster` passes. A resolution or an
    /// acknowledgment passes when the flag's raise did, so the kind that
    /// counts is the one the channel was told of.
    pub fn admits(&self, cluster: &str, kind: &str) -> bool {
        (self.kinds.is_empty() || self.kinds.iter().any(|k| k == kind))
            && (self.clusters.is_empty() || self.clusters.iter().any(|c| c == cluster))
            && Severity::of_kind(kind) >= self.min_severity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_filter_admits_everything() {
        assert!(Filter::default().admits("prod", "WARN"));
        assert!(Filter::default().admits("dev", "ANYTHING"));
    }

    #[test]
    fn kinds_clusters_and_severity_each_narrow() {
        let f = Filter::parse("stop, OFFLINE,,stop", Severity::Info, " prod ").expect("ok");
        assert_eq!(f.kinds, ["OFFLINE", "STOP"]);
        assert_eq!(f.clusters, ["prod"]);
        assert!(f.admits("prod", "STOP"));
        assert!(!f.admits("prod", "WARN"), "kind not listed");
        assert!(!f.admits("dev", "STOP"), "cluster not listed");
        let f = Filter::parse("", Severity::Error, "").expect("ok");
        assert!(f.admits("x", "STALL") && f.admits("x", "STOP"));
        assert!(!f.admits("x", "WARN"));
    }

    #[test]
    fn bad_kinds_and_long_lists_are_refused() {
        assert_eq!(
            Filter::parse("STOP;DROP", Severity::Info, ""),
            Err(FilterError::BadKind("STOP;DROP".into()))
        );
        let many = (0..51)
            .map(|i| format!("K{i}"))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(
            Filter::parse(&many, Severity::Info, ""),
            Err(FilterError::TooMany)
        );
    }
}
