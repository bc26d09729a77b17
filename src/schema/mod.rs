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
//! - [`hygiene`]: unregistered topics, orphan subjects, level drift.
//! - [`verdict`]: one answer from each consumer's, the history's and the
//!   registry's.
//! - [`check`]: the modes (BACKWARD, FORWARD, FULL, transitive, NONE) over
//!   a subject's history, and the per-consumer check.

#[cfg(feature = "schema")]
pub mod avro;
#[cfg(feature = "schema")]
pub mod check;
pub mod hygiene;
#[cfg(feature = "schema")]
pub mod json;
#[cfg(feature = "schema")]
pub mod protobuf;
pub mod reader;
pub mod subject;
pub mod verdict;

pub use verdict::Verdict;

use serde::{Deserialize, Serialize};

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
