//! Which fields a producer change touches for one consumer (issue 43,
//! item 3): the fields of the consumer's reader schema that the new
//! writer schema removes, renames or retypes. The compatibility verdict
//! says whether the consumer can still read; this says which of its
//! fields stop arriving as they were, which is what downstream columns
//! (a dbt model selecting `amount`) depend on even when the decoder
//! copes (a Protobuf field removed is wire-compatible, its column is
//! still gone).
//!
//! Top-level fields only: the record's fields (Avro), the root object's
//! properties (JSON Schema), the first message's fields (Protobuf), which
//! is what column lineage names a topic's fields by. Fields are matched
//! the way each format's readers match them: Protobuf by tag number (a
//! new name on the same tag is a rename), Avro by name and then by the
//! aliases either side declares (an alias is how Avro says "renamed"),
//! JSON Schema by name (it has no way to say renamed).

use serde::{Deserialize, Serialize};

/// A top-level field as a format's parser sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldShape {
    pub name: String,
    /// The Protobuf tag; `None` for formats that match fields by name.
    pub number: Option<u32>,
    /// Avro's field aliases (other names the field was known by).
    pub aliases: Vec<String>,
    /// The type in the format's words (`double`, `null|string`, `int64`).
    pub ty: String,
}

/// What the change does to a field the consumer reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum FieldChange {
    Removed,
    Renamed { to: String },
    Retyped { from: String, to: String },
}

/// A field of the reader's that the change touches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TouchedField {
    /// The field's name in the reader schema (the name downstream knows).
    pub field: String,
    #[serde(flatten)]
    pub change: FieldChange,
}

impl TouchedField {
    /// "removing `amount`", "renaming `amount` to `total`", "retyping
    /// `amount` from double to string": the head of a breakage sentence.
    pub fn verb(&self) -> String {
        let f = &self.field;
        match &self.change {
            FieldChange::Removed => format!("removing `{f}`"),
            FieldChange::Renamed { to } => format!("renaming `{f}` to `{to}`"),
            FieldChange::Retyped { from, to } => format!("retyping `{f}` from {from} to {to}"),
        }
    }
}

/// The reader's fields that `writer` removes, renames or retypes, in the
/// reader's order.
pub fn touched_shapes(reader: &[FieldShape], writer: &[FieldShape]) -> Vec<TouchedField> {
    reader
        .iter()
        .filter_map(|r| {
            let change = match counterpart(r, writer) {
                None => FieldChange::Removed,
                Some(w) if w.name != r.name => FieldChange::Renamed { to: w.name.clone() },
                Some(w) if w.ty != r.ty => FieldChange::Retyped {
                    from: r.ty.clone(),
                    to: w.ty.clone(),
                },
                Some(_) => return None,
            };
            Some(TouchedField {
                field: r.name.clone(),
                change,
            })
        })
        .collect()
}

/// The writer's field that carries the reader's `r`: by tag when the
/// format has tags, else by name, else by an alias on either side.
fn counterpart<'a>(r: &FieldShape, writer: &'a [FieldShape]) -> Option<&'a FieldShape> {
    if let Some(n) = r.number {
        return writer.iter().find(|w| w.number == Some(n));
    }
    writer
        .iter()
        .find(|w| w.name == r.name)
        .or_else(|| writer.iter().find(|w| w.aliases.contains(&r.name)))
        .or_else(|| writer.iter().find(|w| r.aliases.contains(&w.name)))
}

/// The union of the touched fields of several consumers, each field once
/// (the first consumer's reading of it kept), in the order met.
pub fn union(per_consumer: &[Vec<TouchedField>]) -> Vec<TouchedField> {
    let mut all: Vec<TouchedField> = Vec::new();
    for t in per_consumer.iter().flatten() {
        if !all.iter().any(|a| a.field == t.field) {
            all.push(t.clone());
        }
    }
    all
}

/// [`touched_shapes`] of two parsed schemas of the same format; nothing
/// for two formats (the check already says the type changed).
#[cfg(feature = "schema")]
pub fn touched(
    reader: &super::check::ParsedSchema,
    writer: &super::check::ParsedSchema,
) -> Vec<TouchedField> {
    use super::check::ParsedSchema as P;
    match (reader, writer) {
        (P::Avro(r), P::Avro(w)) => touched_shapes(&r.top_fields(), &w.top_fields()),
        (P::Json(r), P::Json(w)) => touched_shapes(&r.top_fields(), &w.top_fields()),
        (P::Protobuf(r), P::Protobuf(w)) => touched_shapes(&r.top_fields(), &w.top_fields()),
        _ => Vec::new(),
    }
}

#[cfg(all(test, feature = "schema"))]
mod tests {
    use super::*;
    use crate::schemas::check::ParsedSchema;
    use crate::schemas::{SchemaText, SchemaType};

    fn parsed(t: SchemaType, text: &str) -> ParsedSchema {
        ParsedSchema::parse(&SchemaText::new(t, text)).expect("parses")
    }

    fn diff(t: SchemaType, reader: &str, writer: &str) -> Vec<TouchedField> {
        touched(&parsed(t, reader), &parsed(t, writer))
    }

    fn removed(f: &str) -> TouchedField {
        TouchedField {
            field: f.into(),
            change: FieldChange::Removed,
        }
    }

    const AVRO: &str = r#"{"type":"record","name":"Order","fields":[
        {"name":"id","type":"string"},{"name":"amount","type":"double"},
        {"name":"note","type":["null","string"],"default":null}]}"#;

    #[test]
    fn avro_removed_retyped_and_renamed_by_alias() {
        let writer = r#"{"type":"record","name":"Order","fields":[
            {"name":"id","type":"long"},
            {"name":"remark","aliases":["note"],"type":["null","string"],"default":null}]}"#;
        assert_eq!(
            diff(SchemaType::Avro, AVRO, writer),
            vec![
                TouchedField {
                    field: "id".into(),
                    change: FieldChange::Retyped {
                        from: "string".into(),
                        to: "long".into()
                    }
                },
                removed("amount"),
                TouchedField {
                    field: "note".into(),
                    change: FieldChange::Renamed {
                        to: "remark".into()
                    }
                },
            ]
        );
        // A field with a default removed is compatible, and still gone
        // for whatever downstream selects it.
        let without_note = r#"{"type":"record","name":"Order","fields":[
            {"name":"id","type":"string"},{"name":"amount","type":"double"}]}"#;
        assert_eq!(
            diff(SchemaType::Avro, AVRO, without_note),
            vec![removed("note")]
        );
        assert!(diff(SchemaType::Avro, AVRO, AVRO).is_empty());
    }

    #[test]
    fn avro_nested_types_are_compared_whole() {
        let r = r#"{"type":"record","name":"R","fields":[{"name":"tags","type":{"type":"array","items":"string"}}]}"#;
        let w = r#"{"type":"record","name":"R","fields":[{"name":"tags","type":{"type":"array","items":"int"}}]}"#;
        assert_eq!(
            diff(SchemaType::Avro, r, w)[0].change,
            FieldChange::Retyped {
                from: "array<string>".into(),
                to: "array<int>".into()
            }
        );
        // A root that is not a record has no fields to touch.
        assert!(diff(SchemaType::Avro, r#""string""#, r#""int""#).is_empty());
    }

    const JSON: &str = r#"{"type":"object","properties":{
        "id":{"type":"string"},"amount":{"type":"number"},"qty":{"type":"integer"}}}"#;

    #[test]
    fn json_schema_removed_and_retyped_by_name() {
        let writer = r#"{"type":"object","properties":{
            "id":{"type":"string"},"qty":{"type":"number"},"total":{"type":"number"}}}"#;
        assert_eq!(
            diff(SchemaType::Json, JSON, writer),
            vec![
                removed("amount"),
                TouchedField {
                    field: "qty".into(),
                    change: FieldChange::Retyped {
                        from: "integer".into(),
                        to: "number".into()
                    }
                },
            ]
        );
    }

    #[test]
    fn json_schema_follows_a_root_ref() {
        let r = r##"{"$ref":"#/definitions/O","definitions":{"O":{"type":"object","properties":{"amount":{"type":"number"}}}}}"##;
        let w = r#"{"type":"object","properties":{"amount":{"type":"string"}}}"#;
        assert_eq!(
            diff(SchemaType::Json, r, w)[0].verb(),
            "retyping `amount` from number to string"
        );
    }

    const PROTO: &str = r#"syntax = "proto3";
        message Order { string id = 1; double amount = 2; int32 qty = 3;
          oneof pay { string card = 4; } }"#;

    #[test]
    fn protobuf_fields_by_tag() {
        let writer = r#"syntax = "proto3";
            message Order { string id = 1; string qty = 3; string credit_card = 4; }"#;
        assert_eq!(
            diff(SchemaType::Protobuf, PROTO, writer),
            vec![
                removed("amount"),
                TouchedField {
                    field: "qty".into(),
                    change: FieldChange::Retyped {
                        from: "int32".into(),
                        to: "string".into()
                    }
                },
                TouchedField {
                    field: "card".into(),
                    change: FieldChange::Renamed {
                        to: "credit_card".into()
                    }
                },
            ]
        );
        assert!(diff(SchemaType::Protobuf, PROTO, PROTO).is_empty());
    }

    #[test]
    fn two_formats_touch_nothing_and_the_union_keeps_each_field_once() {
        assert!(
            touched(
                &parsed(SchemaType::Json, JSON),
                &parsed(SchemaType::Avro, AVRO)
            )
            .is_empty()
        );
        let u = union(&[
            vec![removed("amount")],
            vec![removed("amount"), removed("id")],
        ]);
        assert_eq!(u, vec![removed("amount"), removed("id")]);
    }

    #[test]
    fn the_verbs_read_as_the_head_of_a_sentence() {
        assert_eq!(removed("amount").verb(), "removing `amount`");
        let t = TouchedField {
            field: "a".into(),
            change: FieldChange::Renamed { to: "b".into() },
        };
        assert_eq!(t.verb(), "renaming `a` to `b`");
    }
}
