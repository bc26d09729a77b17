//! Schema compatibility with Confluent Schema Registry's semantics: can a
//! consumer that reads with one schema read data written with another?
//!
//! The vocabulary (formats, modes, findings) builds everywhere, the browser
//! included, because the screens show it. The engines that parse and
//! compare schemas need the `schema` feature: they pull in parsers the
//! browser never runs.
//!
//! - [`avro`]: Java's `SchemaCompatibility` reader/writer resolution.
//! - [`json`]: Confluent's JSON Schema diff with its content models.
//! - [`protobuf`]: Confluent's wire-compatibility diff, fields keyed by tag.
//! - [`reader`]: which schema a consumer group reads with.
//! - [`fields`]: which fields a change removes, renames or retypes;
//!   [`downstream`]: what those fields reach past the consumers.
//! - [`hygiene`]: unregistered topics, orphan subjects, level drift.
//! - [`verdict`]: one answer from each consumer's, the history's and the
//!   registry's.
//! - [`report`]: that answer in one sentence.
//! - [`check`]: the modes (BACKWARD, FORWARD, FULL, transitive, NONE) over
//!   a subject's history, and the per-consumer check.

#[cfg(feature = "schema")]
pub mod avro;
pub mod breaks;
#[cfg(feature = "schema")]
pub mod check;
pub mod downstream;
pub mod drift;
pub mod fields;
pub mod hygiene;
#[cfg(feature = "schema")]
pub mod json;
pub mod list;
#[cfg(feature = "schema")]
pub mod protobuf;
pub mod reader;
pub mod report;
pub mod subject;
pub mod verdict;
pub mod wire;

pub use verdict::Verdict;

use serde::{Deserialize, Serialize};

use crate::platform::limit::{TooLarge, cap};

/// The stack a schema parse may need at the nesting limits, in a debug
/// build (a release build needs a fraction of it). The Avro crate resolves
/// a reference to another by recursing, and it takes them in a different
/// order on each run, so a chain at the limit sometimes goes much deeper
/// than usual: 80 links overflowed a 2 MiB thread now and then. The
/// server's threads, which run every parse, get this much.
pub const PARSE_STACK_BYTES: usize = 8 << 20;

/// A schema format, spelled as the registry spells `schemaType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum SchemaType {
    Avro,
    Json,
    Protobuf,
}

impl SchemaType {
    pub const ALL: [SchemaType; 3] = [SchemaType::Avro, SchemaType::Json, SchemaType::Protobuf];

    pub fn as_str(self) -> &'static str {
        match self {
            SchemaType::Avro => "AVRO",
            SchemaType::Json => "JSON",
            SchemaType::Protobuf => "PROTOBUF",
        }
    }

    /// Case-insensitive; the registry's missing `schemaType` means AVRO,
    /// which callers handle before calling this.
    pub fn parse(s: &str) -> Option<SchemaType> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// A reference to a registered subject version, as the registry names
/// one in a schema's `references`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SubjectReference {
    /// The name the schema uses for it (an import path, a `$ref`, a full name).
    pub name: String,
    pub subject: String,
    pub version: u32,
}

/// A compatibility level, as the registry's `/config` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Mode {
    None,
    Backward,
    BackwardTransitive,
    Forward,
    ForwardTransitive,
    Full,
    FullTransitive,
}

impl Mode {
    pub const ALL: [Mode; 7] = [
        Mode::Backward,
        Mode::BackwardTransitive,
        Mode::Forward,
        Mode::ForwardTransitive,
        Mode::Full,
        Mode::FullTransitive,
        Mode::None,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::None => "NONE",
            Mode::Backward => "BACKWARD",
            Mode::BackwardTransitive => "BACKWARD_TRANSITIVE",
            Mode::Forward => "FORWARD",
            Mode::ForwardTransitive => "FORWARD_TRANSITIVE",
            Mode::Full => "FULL",
            Mode::FullTransitive => "FULL_TRANSITIVE",
        }
    }

    /// Case-insensitive; `-` and `_` are the same (CLI users type both).
    pub fn parse(s: &str) -> Option<Mode> {
        let s = s.trim().replace('-', "_");
        Self::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(&s))
    }

    /// Whether the new schema must read data written with older ones.
    pub fn backward(self) -> bool {
        matches!(
            self,
            Mode::Backward | Mode::BackwardTransitive | Mode::Full | Mode::FullTransitive
        )
    }

    /// Whether older schemas must read data written with the new one.
    pub fn forward(self) -> bool {
        matches!(
            self,
            Mode::Forward | Mode::ForwardTransitive | Mode::Full | Mode::FullTransitive
        )
    }

    /// Whether every earlier version counts, or only the latest.
    pub fn transitive(self) -> bool {
        matches!(
            self,
            Mode::BackwardTransitive | Mode::ForwardTransitive | Mode::FullTransitive
        )
    }
}

/// A schema as submitted: its format, its text, and the text of the
/// schemas it references (Avro named types, JSON Schema `$ref` documents,
/// Protobuf imports), each under the name the schema uses for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaText {
    pub schema_type: SchemaType,
    pub text: String,
    #[serde(default)]
    pub references: Vec<ResolvedReference>,
}

impl SchemaText {
    pub fn new(schema_type: SchemaType, text: impl Into<String>) -> Self {
        SchemaText {
            schema_type,
            text: text.into(),
            references: Vec::new(),
        }
    }

    /// Refuses a schema bigger than `limit` bytes before anything parses
    /// it: its text, each reference's, and all of them together (what a
    /// parse reads), each named in the refusal.
    pub fn within(&self, limit: usize) -> Result<(), TooLarge> {
        let limit = u64::try_from(limit).unwrap_or(u64::MAX);
        let len = |s: &str| u64::try_from(s.len()).unwrap_or(u64::MAX);
        cap("the schema", len(&self.text), limit)?;
        for r in &self.references {
            cap(format!("the reference {:?}", r.name), len(&r.text), limit)?;
        }
        let total = self
            .references
            .iter()
            .fold(len(&self.text), |sum, r| sum.saturating_add(len(&r.text)));
        let what = match self.references.len() {
            1 => "the schema with its reference".to_owned(),
            n => format!("the schema with its {n} references"),
        };
        cap(what, total, limit)
    }
}

/// A referenced schema's text under the name the referring schema uses
/// (a Protobuf import path, a `$ref` URL, an Avro full name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedReference {
    pub name: String,
    pub text: String,
}

/// One reason a reader cannot read a writer's data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Incompatibility {
    /// Confluent's name for the rule, e.g. `READER_FIELD_MISSING_DEFAULT_VALUE`,
    /// `TYPE_NARROWED`, `FIELD_KIND_CHANGED`.
    pub kind: String,
    /// Where in the schema, as Confluent writes it: a JSON Pointer into the
    /// reader schema for Avro (`/fields/1/type`), a `#/`-rooted path for
    /// JSON Schema (`#/properties/age`) and a message path for Protobuf
    /// (`#/Order/3`, field numbers).
    pub location: String,
    /// A sentence a person understands, naming the field or type.
    pub message: String,
}

/// A schema that cannot be checked. Never read as "compatible".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("the {schema_type:?} schema does not parse: {detail}")]
    Parse {
        schema_type: SchemaType,
        detail: String,
    },
    #[error("the schema references {name:?}, which cannot be resolved: {detail}")]
    Reference { name: String, detail: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_refs(text: &str, refs: &[(&str, usize)]) -> SchemaText {
        SchemaText {
            schema_type: SchemaType::Protobuf,
            text: text.to_owned(),
            references: refs
                .iter()
                .map(|(name, len)| ResolvedReference {
                    name: (*name).to_owned(),
                    text: "x".repeat(*len),
                })
                .collect(),
        }
    }

    #[test]
    fn a_schema_within_the_limit_passes() {
        assert_eq!(with_refs("12345", &[("a.proto", 5)]).within(10), Ok(()));
    }

    #[test]
    fn the_text_each_reference_and_the_total_are_capped() {
        let e = with_refs(&"x".repeat(11), &[])
            .within(10)
            .expect_err("text");
        assert_eq!(e.what, "the schema");
        assert_eq!(e.bytes, 11);
        let e = with_refs("x", &[("a.proto", 3), ("b.proto", 11)])
            .within(10)
            .expect_err("reference");
        assert_eq!(e.what, r#"the reference "b.proto""#);
        let e = with_refs("xxxx", &[("a.proto", 4), ("b.proto", 4)])
            .within(10)
            .expect_err("together");
        assert_eq!(e.what, "the schema with its 2 references");
        assert_eq!((e.bytes, e.limit), (12, 10));
        assert!(e.to_string().ends_with("the limit is 10 bytes"), "{e}");
    }
}
