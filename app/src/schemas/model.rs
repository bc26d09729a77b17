//! Schemas: the catalog's schemas, a proposed producer schema, and the
//! verdict of checking it against each consumer group that reads the topic.

use crate::error::AppError;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use streamkeeper::platform::page::Page;
use streamkeeper::schemas::downstream::FieldBreakage;
use streamkeeper::schemas::fields::TouchedField;
use streamkeeper::schemas::{Incompatibility, Mode, SchemaType, SubjectReference, Verdict};

/// A producer schema proposed for a topic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ProposedSchema {
    pub schema_type: SchemaType,
    /// The schema's text (an Avro or JSON Schema document, a `.proto` file).
    pub schema: String,
    /// Referenced schemas' text by the name the schema uses for them (a
    /// Protobuf import path, a JSON Schema `$ref`, an Avro full name). The
    /// registry cannot be asked about a schema with these: it knows
    /// references only as its own subject versions.
    #[serde(default)]
    pub references: BTreeMap<String, String>,
    /// Referenced schemas registered in the cluster's registry: their text
    /// is fetched from it, and they go with the registry's own check.
    #[serde(default)]
    pub subject_references: Vec<SubjectReference>,
}

/// Where a consumer group's reader schema comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReaderSource {
    /// Recorded for the group.
    Declared,
    /// None recorded: the stream's schema that was current when the group
    /// was first seen.
    Assumed,
    /// Neither the group nor the stream has a schema recorded.
    Missing,
}

/// One consumer group's verdict: can it read data written with the
/// proposed schema?
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ConsumerVerdict {
    pub group: String,
    pub owner: Option<String>,
    pub reader: ReaderSource,
    /// Which reader schema was used, in words.
    pub reader_note: String,
    pub verdict: Verdict,
    pub reasons: Vec<Incompatibility>,
    /// The fields of its reader schema the change removes, renames or
    /// retypes (checks kept before issue 43 have none).
    #[serde(default)]
    pub fields: Vec<TouchedField>,
}

/// One incompatibility with an earlier version of the subject.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct HistoryFinding {
    /// The earlier version (1 = oldest).
    pub version: usize,
    /// `new_reads_old` (BACKWARD) or `old_reads_new` (FORWARD).
    pub direction: String,
    #[serde(flatten)]
    pub incompatibility: Incompatibility,
}

/// The proposed schema against the subject's history under its
/// compatibility level, as the registry would judge a registration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct HistoryVerdict {
    pub subject: String,
    /// `registry` (the subject's versions) or `catalog` (the stream's
    /// recorded schemas, when no registry is configured).
    pub source: String,
    pub mode: Mode,
    pub versions: usize,
    pub verdict: Verdict,
    pub findings: Vec<HistoryFinding>,
    pub note: String,
}

/// The registry's own compatibility check, as a second opinion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RegistryOpinion {
    pub subject: String,
    pub is_compatible: Option<bool>,
    pub messages: Vec<String>,
    /// Why there is no opinion (the registry is down, refused, …).
    pub error: Option<String>,
}

/// The answer to "can every consumer read what this producer would write?"
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CompatibilityReport {
    pub id: i64,
    pub cluster_id: i64,
    pub cluster: String,
    pub topic: String,
    pub schema_type: SchemaType,
    pub verdict: Verdict,
    /// One sentence: who breaks, or why there is no verdict.
    pub summary: String,
    pub consumers: Vec<ConsumerVerdict>,
    pub history: HistoryVerdict,
    pub registry: Option<RegistryOpinion>,
    pub submitted_by: String,
    pub submitted_at: DateTime<Utc>,
    /// Submission to verdict, in milliseconds.
    pub elapsed_ms: i64,
    /// For each field the change touches, what column lineage says it
    /// breaks downstream (issue 43).
    #[serde(default)]
    pub downstream: Vec<FieldBreakage>,
    /// "Notify owners" sent of this check, newest first (read beside the
    /// stored report, never stored in it).
    #[serde(default)]
    pub notices: Vec<OwnersNotice>,
}

/// One "Notify owners" of a check's downstream breakage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OwnersNotice {
    pub sent_by: String,
    pub sent_at: DateTime<Utc>,
    /// The owner teams told.
    pub teams: Vec<String>,
    /// Channel messages queued (none: no channel of theirs takes it).
    pub messages: i32,
}

/// A schema recorded in the catalog.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CatalogSchema {
    pub id: i64,
    pub topic: String,
    /// The consumer group that reads with it; `None` for the stream's own.
    pub group: Option<String>,
    pub schema_type: SchemaType,
    pub schema: String,
    /// `text` (pasted or uploaded) or `registry` (pinned to a version).
    pub source: String,
    pub subject: Option<String>,
    pub version: Option<i32>,
    pub recorded_by: String,
    pub recorded_at: DateTime<Utc>,
}

/// A schema to record: text, or a registry subject's version to pin (its
/// references' text is copied from the registry too).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewCatalogSchema {
    pub schema_type: Option<SchemaType>,
    pub schema: Option<String>,
    #[serde(default)]
    pub references: BTreeMap<String, String>,
    /// Pin the schema the registry holds under this subject at `version`.
    pub subject: Option<String>,
    /// With `subject`: the version to pin; absent pins the latest (the
    /// number recorded is the one it had then).
    pub version: Option<i32>,
}

impl NewCatalogSchema {
    /// What the browser's paste-or-upload form posts: the schema's text and
    /// its references as name/text pairs, in slots; blank slots are the
    /// form's spares.
    pub fn from_text_form(
        schema_type: &str,
        schema: String,
        ref_names: Vec<String>,
        ref_texts: Vec<String>,
    ) -> Result<Self, AppError> {
        let t = SchemaType::parse(schema_type)
            .ok_or_else(|| AppError::Invalid(format!("Unknown schema type {schema_type:?}.")))?;
        let mut references = BTreeMap::new();
        let texts = ref_texts
            .into_iter()
            .chain(std::iter::repeat(String::new()));
        for (i, (name, text)) in ref_names.into_iter().zip(texts).enumerate() {
            let name = name.trim().to_owned();
            match (name.is_empty(), text.trim().is_empty()) {
                (true, true) => continue,
                (true, false) => {
                    return Err(AppError::Invalid(format!(
                        "Reference {} has text but no name: give the name the schema uses for it.",
                        i + 1
                    )));
                }
                (false, true) => {
                    return Err(AppError::Invalid(format!("Reference {name} has no text.")));
                }
                (false, false) => {
                    if references.insert(name.clone(), text).is_some() {
                        return Err(AppError::Invalid(format!(
                            "Reference {name} is given twice."
                        )));
                    }
                }
            }
        }
        Ok(NewCatalogSchema {
            schema_type: Some(t),
            schema: Some(schema),
            references,
            subject: None,
            version: None,
        })
    }

    /// What the browser's pin form posts: a subject, and a version number
    /// or `latest` (also when left blank).
    pub fn from_pin_form(subject: &str, version: &str) -> Result<Self, AppError> {
        let subject = subject.trim();
        if subject.is_empty() {
            return Err(AppError::Invalid(
                "Give the registry subject to pin.".into(),
            ));
        }
        let version = match version.trim() {
            v if v.is_empty() || v.eq_ignore_ascii_case("latest") => None,
            v => Some(v.parse::<i32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                AppError::Invalid(format!(
                    "Version {v:?} is not a version: give a number from 1, or latest."
                ))
            })?),
        };
        Ok(NewCatalogSchema {
            schema_type: None,
            schema: None,
            references: BTreeMap::new(),
            subject: Some(subject.to_owned()),
            version,
        })
    }
}

/// A consumer group reading the stream, with the schema it reads with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReaderView {
    pub group: String,
    pub owner: Option<String>,
    pub reader: ReaderSource,
    pub note: String,
    pub schema: Option<CatalogSchema>,
}

/// A stream's schemas: its own with history, and its readers'.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StreamSchemas {
    pub cluster_id: i64,
    pub topic: String,
    /// The stream's schemas, newest first.
    pub history: Vec<CatalogSchema>,
    pub readers: Vec<ReaderView>,
    /// The last checks of proposed changes, newest first.
    pub checks: Vec<CheckSummary>,
}

/// A past check in a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CheckSummary {
    pub id: i64,
    pub verdict: Verdict,
    pub summary: String,
    pub submitted_by: String,
    pub submitted_at: DateTime<Utc>,
}

/// A cluster's Schema Registry connection. Credentials are references.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RegistrySpec {
    pub url: String,
    /// `env:NAME` or `file:/path` (a Confluent Cloud Schema Registry API key).
    pub username_ref: Option<String>,
    /// `env:NAME` or `file:/path` (its secret).
    pub password_ref: Option<String>,
}

/// One registry hygiene finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RegistryFinding {
    /// `UNREGISTERED_TOPIC`, `ORPHAN_SUBJECT` or `LEVEL_DRIFT`.
    pub kind: String,
    pub subject: Option<String>,
    pub topic: Option<String>,
    /// The team owning the topic's stream, if any.
    pub owner: Option<String>,
    pub detail: String,
    pub found_at: DateTime<Utc>,
}

/// A cluster's registry as the hygiene routine last read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RegistryStatus {
    pub cluster_id: i64,
    pub cluster: String,
    pub url: String,
    /// When it was last read (good or not); `None` before the first time.
    pub checked_at: Option<DateTime<Utc>>,
    /// Why the last reading failed; the findings are then older.
    pub last_error: Option<String>,
    pub findings: Vec<RegistryFinding>,
}

/// A subject in a registry: its versions, latest schema and own level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SubjectSummary {
    pub name: String,
    pub versions: Vec<u32>,
    /// The latest version's registry-wide schema ID.
    pub latest_id: u32,
    pub schema_type: SchemaType,
    /// Its own level; `None` follows the registry's global level.
    pub level: Option<Mode>,
    /// For a topic's value subject: which versions its producers write
    /// now, read off the wire ("producers write v3 (latest v4)"); `None`
    /// before its records were read (docs/drift.md).
    pub producers_write: Option<String>,
}

/// A registry's subjects as the hygiene routine last read them (every
/// five minutes), a page at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RegistrySubjects {
    pub cluster_id: i64,
    pub cluster: String,
    pub url: String,
    /// When the subjects were read; `None` before the first good reading.
    pub read_at: Option<DateTime<Utc>>,
    /// Why the last reading failed; the subjects are then from `read_at`.
    pub last_error: Option<String>,
    /// The global level at that reading.
    pub global: Option<Mode>,
    /// The search the page was filtered by (subjects containing it).
    pub search: Option<String>,
    pub subjects: Page<SubjectSummary>,
}

/// One line of a side-by-side diff: on both sides, or on one only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DiffLine {
    pub left: Option<String>,
    pub right: Option<String>,
}

/// Two versions of a subject side by side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SubjectDiff {
    pub cluster_id: i64,
    pub subject: String,
    pub versions: Vec<u32>,
    pub left: u32,
    pub right: u32,
    pub schema_type: SchemaType,
    pub level: Mode,
    pub lines: Vec<DiffLine>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_text_form_keeps_filled_reference_slots_and_skips_blank_ones() {
        let new = NewCatalogSchema::from_text_form(
            "json",
            "{}".into(),
            strings(&["money.json", "", " "]),
            strings(&["{\"type\":\"number\"}", "", ""]),
        )
        .expect("valid");
        assert_eq!(new.schema_type, Some(SchemaType::Json));
        assert_eq!(
            new.references,
            BTreeMap::from([(
                "money.json".to_string(),
                "{\"type\":\"number\"}".to_string()
            )])
        );
    }

    #[test]
    fn the_text_form_refuses_half_given_or_repeated_references() {
        let form = |names: &[&str], texts: &[&str]| {
            NewCatalogSchema::from_text_form(
                "AVRO",
                "\"int\"".into(),
                strings(names),
                strings(texts),
            )
        };
        for (names, texts, says) in [
            (&["", "b"][..], &["text", "x"][..], "no name"),
            (&["a"][..], &[" "][..], "no text"),
            (&["a", "a"][..], &["x", "y"][..], "twice"),
        ] {
            let e = form(names, texts).expect_err(says);
            assert!(e.to_string().contains(says), "{e}");
        }
        assert!(form(&[], &[]).expect("none").references.is_empty());
        assert!(NewCatalogSchema::from_text_form("XML", String::new(), vec![], vec![]).is_err());
    }

    #[test]
    fn the_pin_form_takes_a_number_or_latest() {
        let pin = |v: &str| NewCatalogSchema::from_pin_form("orders-value", v).map(|n| n.version);
        assert_eq!(pin("3"), Ok(Some(3)));
        assert_eq!(pin(" Latest "), Ok(None));
        assert_eq!(pin(""), Ok(None));
        for bad in ["0", "-1", "v2", "1.5"] {
            assert!(pin(bad).is_err(), "{bad}");
        }
        assert!(NewCatalogSchema::from_pin_form(" ", "1").is_err());
        let new = NewCatalogSchema::from_pin_form(" orders-value ", "2").expect("pin");
        assert_eq!(
            (new.subject.as_deref(), new.schema),
            (Some("orders-value"), None)
        );
    }
}

/// A subject's latest version as the hygiene routine last read the
/// cluster's registry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SubjectSeen {
    /// `None`: the subject had no live versions then.
    pub latest: Option<u32>,
    pub read_at: DateTime<Utc>,
}
