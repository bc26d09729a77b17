//! What the registry sends and receives, spelled as its JSON spells it.
//! Responses may carry more fields than these (newer servers add `guid`,
//! `metadata`, `ruleSet`, `ts`); they are ignored.

use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt;
use streamkeeper::schemas::{Mode, SchemaType};

/// A version of a subject: a number from 1, or the newest one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionRef {
    Latest,
    Number(u32),
}

impl fmt::Display for VersionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionRef::Latest => f.write_str("latest"),
            VersionRef::Number(n) => write!(f, "{n}"),
        }
    }
}

impl From<u32> for VersionRef {
    fn from(n: u32) -> Self {
        VersionRef::Number(n)
    }
}

/// Which soft-deleted entries a listing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Deleted {
    /// Live entries only (the registry's default).
    #[default]
    Hide,
    /// Live and soft-deleted entries (`deleted=true`).
    Include,
    /// Soft-deleted entries only (`deletedOnly=true`).
    Only,
}

/// Whether a config or mode call is about the whole registry or a subject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    Global,
    Subject(&'a str),
}

/// Another subject's schema that a schema uses: an Avro named type, a JSON
/// Schema `$ref` document or a Protobuf import, under `name`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct SchemaReference {
    pub name: String,
    pub subject: String,
    pub version: u32,
}

/// A schema to register, look up or check (the registry's
/// `RegisterSchemaRequest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSchema {
    pub schema_type: SchemaType,
    /// The schema's text; sent as a JSON string, never embedded.
    pub schema: String,
    pub references: Vec<SchemaReference>,
}

impl NewSchema {
    pub fn new(schema_type: SchemaType, schema: impl Into<String>) -> Self {
        NewSchema {
            schema_type,
            schema: schema.into(),
            references: Vec::new(),
        }
    }

    pub fn avro(schema: impl Into<String>) -> Self {
        Self::new(SchemaType::Avro, schema)
    }

    /// The request body. `schemaType` is left out for Avro: registries
    /// older than 5.5 know no such field, and a missing one means Avro
    /// everywhere.
    pub(crate) fn to_json(&self) -> Value {
        let mut body = Map::new();
        if self.schema_type != SchemaType::Avro {
            body.insert("schemaType".into(), self.schema_type.as_str().into());
        }
        body.insert("schema".into(), self.schema.clone().into());
        if !self.references.is_empty() {
            let references = self
                .references
                .iter()
                .map(|r| {
                    Value::Object(Map::from_iter([
                        ("name".to_string(), Value::from(r.name.clone())),
                        ("subject".to_string(), Value::from(r.subject.clone())),
                        ("version".to_string(), Value::from(r.version)),
                    ]))
                })
                .collect();
            body.insert("references".into(), Value::Array(references));
        }
        Value::Object(body)
    }
}

fn avro() -> SchemaType {
    SchemaType::Avro
}

/// One registered version of a subject.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct SchemaVersion {
    pub subject: String,
    pub version: u32,
    /// The registry-wide schema ID.
    pub id: u32,
    #[serde(rename = "schemaType", default = "avro")]
    pub schema_type: SchemaType,
    #[serde(default)]
    pub references: Vec<SchemaReference>,
    pub schema: String,
    /// Set when the version was soft-deleted (shown with `deleted=true`).
    #[serde(default)]
    pub deleted: bool,
}

/// A schema fetched by its ID.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct SchemaById {
    #[serde(rename = "schemaType", default = "avro")]
    pub schema_type: SchemaType,
    #[serde(default)]
    pub references: Vec<SchemaReference>,
    pub schema: String,
}

/// A subject and version that use a schema ID.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct SubjectVersion {
    pub subject: String,
    pub version: u32,
}

/// A compatibility configuration (`GET /config`). The level is absent when
/// the configuration sets only other keys.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Config {
    #[serde(rename = "compatibilityLevel")]
    pub compatibility_level: Option<Mode>,
    pub normalize: Option<bool>,
    #[serde(rename = "compatibilityPolicy")]
    pub compatibility_policy: Option<CompatibilityPolicy>,
}

/// Which JSON Schema changes the registry counts as compatible
/// (`compatibilityPolicy`; Avro and Protobuf ignore it). Absent means
/// STRICT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CompatibilityPolicy {
    Strict,
    Lenient,
    /// Named by the contract without saying what it relaxes.
    Logical,
    /// A value newer than the contract: kept rather than failing the
    /// whole configuration.
    #[serde(other)]
    Other,
}

/// The body of `PUT /config`, which the registry echoes.
#[derive(Debug, Deserialize)]
pub(crate) struct ConfigUpdate {
    pub compatibility: Mode,
}

impl ConfigUpdate {
    pub fn to_json(level: Mode) -> Value {
        Value::Object(Map::from_iter([(
            "compatibility".to_string(),
            Value::from(level.as_str()),
        )]))
    }
}

/// The registry's answer to a compatibility check.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct CompatibilityCheck {
    pub is_compatible: bool,
    /// With `verbose`, one entry per incompatibility in the registry's own
    /// format, then the old version and schema and the level used; kept
    /// exactly as sent. Empty without `verbose`.
    #[serde(default)]
    pub messages: Vec<String>,
}

/// What a compatibility check asks for besides the schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Ask for the reasons (`verbose=true`).
    pub verbose: bool,
    /// Normalize the schema before checking (`normalize=true`).
    pub normalize: bool,
}

/// Whether a registry or subject accepts writes (`/mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum RegistryMode {
    #[serde(rename = "READWRITE")]
    ReadWrite,
    #[serde(rename = "READONLY")]
    ReadOnly,
    /// Read-only, overriding any subject's own mode.
    #[serde(rename = "READONLY_OVERRIDE")]
    ReadOnlyOverride,
    /// Registering with given IDs and versions, for migrations.
    #[serde(rename = "IMPORT")]
    Import,
    /// Global only: requests forwarded to another registry.
    #[serde(rename = "FORWARD")]
    Forward,
}

impl RegistryMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RegistryMode::ReadWrite => "READWRITE",
            RegistryMode::ReadOnly => "READONLY",
            RegistryMode::ReadOnlyOverride => "READONLY_OVERRIDE",
            RegistryMode::Import => "IMPORT",
            RegistryMode::Forward => "FORWARD",
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct ModeBody {
    pub mode: RegistryMode,
}

impl ModeBody {
    pub fn to_json(mode: RegistryMode) -> Value {
        Value::Object(Map::from_iter([(
            "mode".to_string(),
            Value::from(mode.as_str()),
        )]))
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct Registered {
    pub id: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avro_requests_leave_the_type_out_and_others_name_it() {
        let avro = NewSchema::avro("\"string\"").to_json();
        assert_eq!(avro, serde_json::json!({"schema": "\"string\""}));
        let mut proto = NewSchema::new(SchemaType::Protobuf, "syntax = \"proto3\";");
        proto.references.push(SchemaReference {
            name: "common.proto".into(),
            subject: "common".into(),
            version: 2,
        });
        assert_eq!(
            proto.to_json(),
            serde_json::json!({
                "schemaType": "PROTOBUF",
                "schema": "syntax = \"proto3\";",
                "references": [{"name": "common.proto", "subject": "common", "version": 2}]
            })
        );
    }

    #[test]
    fn a_missing_schema_type_means_avro_and_extra_fields_are_ignored() {
        let v: SchemaVersion = serde_json::from_str(
            r#"{"subject":"s","version":1,"id":7,"schema":"\"int\"","guid":"x","ts":1}"#,
        )
        .expect("parses");
        assert_eq!(v.schema_type, SchemaType::Avro);
        assert!(v.references.is_empty());
        assert!(!v.deleted);
    }

    #[test]
    fn a_config_carries_its_policy_and_tolerates_new_ones() {
        let c: Config = serde_json::from_str(
            r#"{"compatibilityLevel":"BACKWARD","compatibilityPolicy":"LENIENT"}"#,
        )
        .expect("config");
        assert_eq!(c.compatibility_policy, Some(CompatibilityPolicy::Lenient));
        let c: Config = serde_json::from_str(r#"{"compatibilityPolicy":"SOMEDAY"}"#)
            .expect("an unknown policy is not an error");
        assert_eq!(c.compatibility_policy, Some(CompatibilityPolicy::Other));
        assert_eq!(c.compatibility_level, None);
    }

    #[test]
    fn modes_use_the_registry_spelling_both_ways() {
        for mode in [
            RegistryMode::ReadWrite,
            RegistryMode::ReadOnly,
            RegistryMode::ReadOnlyOverride,
            RegistryMode::Import,
            RegistryMode::Forward,
        ] {
            let body = ModeBody::to_json(mode).to_string();
            let back: ModeBody = serde_json::from_str(&body).expect("mode");
            assert_eq!(back.mode, mode, "{body}");
        }
        assert_eq!(
            ModeBody::to_json(RegistryMode::ReadOnlyOverride).to_string(),
            r#"{"mode":"READONLY_OVERRIDE"}"#
        );
    }
}
