//! What a revision rebased onto a moved base leaves out: the fields the new
//! base has that the proposed schema does not. A change written against
//! version 1 and sent back to review on version 2 would, once registered,
//! drop whatever version 2 added — its approvers should read that by name.

use crate::schemas::SchemaType;
use serde_json::Value;
use std::collections::BTreeSet;

/// The fields of `base` (dotted paths: `address.city`) that `proposed`
/// lacks, sorted. Empty when either does not parse: the check says why.
pub fn dropped_fields(schema_type: SchemaType, base: &str, proposed: &str) -> Vec<String> {
    match schema_type {
        SchemaType::Avro | SchemaType::Json => {
            let fields = |text: &str| -> Option<BTreeSet<String>> {
                let v: Value = serde_json::from_str(text).ok()?;
                let mut out = BTreeSet::new();
                match schema_type {
                    SchemaType::Avro => avro_fields(&v, "", &mut out, 0),
                    _ => json_fields(&v, "", &mut out, 0),
                }
                Some(out)
            };
            match (fields(base), fields(proposed)) {
                (Some(b), Some(p)) => b.difference(&p).cloned().collect(),
                _ => Vec::new(),
            }
        }
        #[cfg(feature = "schema")]
        SchemaType::Protobuf => protobuf_dropped(base, proposed),
        // Only the server parses Protobuf.
        #[cfg(not(feature = "schema"))]
        SchemaType::Protobuf => Vec::new(),
    }
}

/// Nesting deeper than this is not followed (a schema is bounded in size,
/// but a walk should be too).
const MAX_DEPTH: usize = 32;

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// A record's fields and those of records nested in their types (through
/// unions, arrays and maps).
fn avro_fields(v: &Value, prefix: &str, out: &mut BTreeSet<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Array(branches) => {
            for b in branches {
                avro_fields(b, prefix, out, depth + 1);
            }
        }
        Value::Object(o) => {
            if let Some(Value::Array(fields)) = o.get("fields") {
                for f in fields {
                    if let Some(name) = f.get("name").and_then(Value::as_str) {
                        let path = join(prefix, name);
                        out.insert(path.clone());
                        if let Some(t) = f.get("type") {
                            avro_fields(t, &path, out, depth + 1);
                        }
                    }
                }
            }
            for inner in ["items", "values"] {
                if let Some(t) = o.get(inner) {
                    avro_fields(t, prefix, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// An object schema's properties and those of objects nested in them.
fn json_fields(v: &Value, prefix: &str, out: &mut BTreeSet<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Value::Object(o) = v else { return };
    if let Some(Value::Object(props)) = o.get("properties") {
        for (name, sub) in props {
            let path = join(prefix, name);
            out.insert(path.clone());
            json_fields(sub, &path, out, depth + 1);
        }
    }
    if let Some(items) = o.get("items") {
        json_fields(items, prefix, out, depth + 1);
    }
}

#[cfg(feature = "schema")]
/// Protobuf's own diff already names each field the writer (the base) has
/// and the reader (the proposal) lacks: `message.field`.
fn protobuf_dropped(base: &str, proposed: &str) -> Vec<String> {
    use crate::schemas::protobuf::DifferenceKind;
    use crate::schemas::{SchemaText, check::ParsedSchema};
    let parse = |text: &str| match ParsedSchema::parse(&SchemaText::new(SchemaType::Protobuf, text))
    {
        Ok(ParsedSchema::Protobuf(p)) => Some(p),
        _ => None,
    };
    let (Some(b), Some(p)) = (parse(base), parse(proposed)) else {
        return Vec::new();
    };
    let removed: BTreeSet<String> = crate::schemas::protobuf::compare(&b, &p)
        .into_iter()
        .filter(|d| {
            matches!(
                d.kind,
                DifferenceKind::FieldRemoved
                    | DifferenceKind::RequiredFieldRemoved
                    | DifferenceKind::OneofFieldRemoved
            )
        })
        .filter_map(|d| message_and_field(&d.message))
        .collect();
    removed.into_iter().collect()
}

#[cfg(feature = "schema")]
/// `message.field` from "In message `Order`, field `note` (3) …".
fn message_and_field(message: &str) -> Option<String> {
    let mut quoted = message.split('`').skip(1).step_by(2);
    let m = quoted.next()?;
    let f = quoted.next()?;
    Some(format!("{m}.{f}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V2: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"tag","type":["null","string"],"default":null},{"name":"ship","type":{"type":"record","name":"Ship","fields":[{"name":"city","type":"string"}]}}]}"#;
    const NOTE: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"note","type":["null","string"],"default":null},{"name":"ship","type":{"type":"record","name":"Ship","fields":[]}}]}"#;

    #[test]
    fn an_avro_revision_names_the_base_fields_it_leaves_out() {
        assert_eq!(
            dropped_fields(SchemaType::Avro, V2, NOTE),
            vec!["ship.city".to_owned(), "tag".to_owned()]
        );
        assert!(dropped_fields(SchemaType::Avro, NOTE, NOTE).is_empty());
        assert!(dropped_fields(SchemaType::Avro, "{not json", NOTE).is_empty());
    }

    #[test]
    fn a_json_schema_revision_names_the_properties_it_leaves_out() {
        let base = r#"{"type":"object","properties":{"id":{"type":"string"},"tag":{"type":"string"},"ship":{"type":"object","properties":{"city":{"type":"string"}}}}}"#;
        let new =
            r#"{"type":"object","properties":{"id":{"type":"string"},"ship":{"type":"object"}}}"#;
        assert_eq!(
            dropped_fields(SchemaType::Json, base, new),
            vec!["ship.city".to_owned(), "tag".to_owned()]
        );
    }

    #[cfg(feature = "schema")]
    #[test]
    fn a_protobuf_revision_names_the_fields_it_leaves_out() {
        let base =
            "syntax = \"proto3\";\nmessage Order {\n  string id = 1;\n  string tag = 2;\n}\n";
        let new = "syntax = \"proto3\";\nmessage Order {\n  string id = 1;\n}\n";
        assert_eq!(
            dropped_fields(SchemaType::Protobuf, base, new),
            vec!["Order.tag".to_owned()]
        );
    }
}
