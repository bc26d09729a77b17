//! What a rule says about a draft: a finding with its severity, the
//! property it is about, a sentence, and a fix the form can apply in one
//! click.

use super::config::Config;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The connector will fail, lose data or harm another connector: the
    /// draft cannot be proposed.
    Error,
    /// Likely wrong; the author decides.
    Warning,
    /// Worth knowing.
    Info,
}

/// Which rule a finding comes from: stable names for screens, tests and
/// the API (serialised in snake_case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    // Every connector.
    Required,
    AllowedValue,
    NotANumber,
    NotABoolean,
    InlineSecret,
    MaskedValue,
    ClientOverride,
    ConverterWithoutRegistry,
    TransformWithoutType,
    ErrorsToleranceWithoutDlq,
    // Sinks.
    TopicsAndRegex,
    NoTopics,
    DlqInTopics,
    DlqReplicationFactor,
    MissingTopic,
    RegexMatchesNothing,
    TasksOverPartitions,
    SchemaChangeTopic,
    // Debezium sources.
    SingleTask,
    TopicPrefixInvalid,
    TopicPrefixShared,
    TopicPrefixChanged,
    RemovedSnapshotMode,
    IncludeAndExclude,
    UnescapedDot,
    HeartbeatOff,
    DecoderbufsDefault,
    SlotNameInvalid,
    SlotShared,
    PublicationAllTables,
    PublicationShared,
    ServerIdInvalid,
    ServerIdShared,
    SchemaHistoryShared,
    // JDBC sinks.
    UpsertWithoutKey,
    DeleteWithoutRecordKey,
    // S3.
    FlushWithoutRotation,
    TimePartitionerSettings,
    NullValuesFail,
    // Snowflake.
    SnowflakeName,
    SnowflakeKeyFormat,
    SnowpipeConverter,
    SchematizationImplicit,
    // BigQuery.
    KeyfileSource,
    UpsertKeyField,
    MergeNeverRuns,
    UpsertWithStorageWrite,
    DottedTopicNames,
    // Iceberg.
    IcebergCatalog,
    IcebergTables,
    ControlTopicShared,
    UpsertOnAppendOnly,
    // Elasticsearch.
    HalfCredentials,
    IgnorePair,
    DataStreamNulls,
    DataStreamUpsert,
}

/// A change to the draft: properties to set, then properties to remove.
/// Fixes never carry a secret value (only references and public values).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Fix {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub remove: BTreeSet<String>,
}

impl Fix {
    pub fn set(key: &str, value: impl Into<String>) -> Fix {
        Fix::default().and_set(key, value)
    }

    pub fn remove(key: &str) -> Fix {
        Fix::default().and_remove(key)
    }

    pub fn and_set(mut self, key: &str, value: impl Into<String>) -> Fix {
        self.set.insert(key.to_owned(), value.into());
        self
    }

    pub fn and_remove(mut self, key: &str) -> Fix {
        self.remove.insert(key.to_owned());
        self
    }

    /// The draft with this fix applied.
    pub fn apply(&self, config: &Config) -> Config {
        let mut out = config.clone();
        for (k, v) in &self.set {
            out.set(k.as_str(), v.as_str());
        }
        for k in &self.remove {
            out.remove(k);
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Finding {
    pub rule: Rule,
    pub severity: Severity,
    /// The property the finding is about (where the form shows it).
    pub property: String,
    /// One sentence for the author. Never quotes a secret's value.
    pub sentence: String,
    /// `None` when no change to the config alone can fix it (e.g. a host
    /// name only the author knows).
    pub fix: Option<Fix>,
}

impl Finding {
    pub fn new(rule: Rule, severity: Severity, property: &str, sentence: String) -> Finding {
        Finding {
            rule,
            severity,
            property: property.to_owned(),
            sentence,
            fix: None,
        }
    }

    pub fn error(rule: Rule, property: &str, sentence: String) -> Finding {
        Finding::new(rule, Severity::Error, property, sentence)
    }

    pub fn warning(rule: Rule, property: &str, sentence: String) -> Finding {
        Finding::new(rule, Severity::Warning, property, sentence)
    }

    pub fn info(rule: Rule, property: &str, sentence: String) -> Finding {
        Finding::new(rule, Severity::Info, property, sentence)
    }

    pub fn with_fix(mut self, fix: Fix) -> Finding {
        self.fix = Some(fix);
        self
    }

    pub fn with(mut self, fix: Option<Fix>) -> Finding {
        self.fix = fix;
        self
    }
}

/// Whether a draft with these findings may be proposed for review: not
/// while any finding is an error.
pub fn may_propose(findings: &[Finding]) -> bool {
    findings.iter().all(|f| f.severity != Severity::Error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fix_sets_then_removes() {
        let c: Config = [("a", "1"), ("b", "2")].into_iter().collect();
        let fixed = Fix::set("a", "3")
            .and_set("c", "4")
            .and_remove("b")
            .apply(&c);
        assert_eq!(fixed.get("a"), Some("3"));
        assert_eq!(fixed.get("b"), None);
        assert_eq!(fixed.get("c"), Some("4"));
    }

    #[test]
    fn only_errors_block_a_proposal() {
        let w = Finding::warning(Rule::HeartbeatOff, "x", "w".into());
        let e = Finding::error(Rule::Required, "x", "e".into());
        assert!(may_propose(&[]));
        assert!(may_propose(std::slice::from_ref(&w)));
        assert!(!may_propose(&[w, e]));
    }

    #[test]
    fn rules_and_fixes_serialise_for_the_api() {
        let f = Finding::error(Rule::DecoderbufsDefault, "plugin.name", "s".into())
            .with_fix(Fix::set("plugin.name", "pgoutput"));
        let v = serde_json::to_value(&f).expect("json");
        assert_eq!(v["rule"], "decoderbufs_default");
        assert_eq!(v["severity"], "error");
        assert_eq!(v["fix"]["set"]["plugin.name"], "pgoutput");
        assert!(v["fix"].get("remove").is_none());
    }
}
