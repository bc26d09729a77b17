//! The registry's compatibility messages, in its formats: one entry per
//! incompatibility (Avro's `Difference.java`, JSON Schema's and Protobuf's
//! `diff/Difference.java`), then the old version and schema
//! (`SchemaValidatorBuilder.formatErrorMessages`) and the level used
//! (`AbstractSchemaRegistry.isCompatibleWithPrevious`).
//!
//! Descriptions are templates whose two `%s` Confluent fills with the
//! reader's and the writer's role: `new`/`old` when the new schema reads
//! (BACKWARD), `old`/`new` when the old one does (FORWARD).

use streamkeeper::schemas::check::Direction;
use streamkeeper::schemas::{Incompatibility, SchemaType};

/// Java's `MAX_SCHEMA_SIZE_FOR_LOGGING`: longer old schemas are cut.
const MAX_SCHEMA_SHOWN: usize = 10 * 1024;

pub const DIFFERENT_SCHEMA_TYPE: &str = "Incompatible because of different schema type";

/// The roles in a description: (reader, writer).
pub fn roles(direction: Direction) -> (&'static str, &'static str) {
    match direction {
        Direction::NewReadsOld => ("new", "old"),
        Direction::OldReadsNew => ("old", "new"),
    }
}

/// One incompatibility as the registry words it. `reader_text` is the
/// reading schema's text, where an Avro location points.
pub fn entry(
    schema_type: SchemaType,
    found: &Incompatibility,
    (reader, writer): (&str, &str),
    reader_text: &str,
) -> String {
    let kind = found.kind.as_str();
    let path = found.location.as_str();
    match schema_type {
        SchemaType::Avro => {
            let info = avro_additional_info(found, reader_text);
            let description = avro_description(kind, path, &info)
                .replacen("%s", reader, 1)
                .replacen("%s", writer, 1);
            format!("{{errorType:'{kind}', description:'{description}', additionalInfo:'{info}'}}")
        }
        SchemaType::Json => {
            let description = json_description(kind, path)
                .replacen("%s", reader, 1)
                .replacen("%s", writer, 1);
            // The closing quote does not match the opening one in
            // Confluent's source either.
            format!("{{errorType:\"{kind}\", description:\"{description}'}}")
        }
        SchemaType::Protobuf => {
            let description = protobuf_description(kind, path)
                .replacen("%s", reader, 1)
                .replacen("%s", writer, 1);
            format!("{{errorType:\"{kind}\", description:\"{description}\"}}")
        }
    }
}

pub fn old_schema_version(version: u32) -> String {
    format!("{{oldSchemaVersion: {version}}}")
}

pub fn old_schema(canonical: &str) -> String {
    match canonical.char_indices().nth(MAX_SCHEMA_SHOWN) {
        Some((cut, _)) => format!("{{oldSchema: <truncated> '{}...'}}", &canonical[..cut]),
        None => format!("{{oldSchema: '{canonical}'}}"),
    }
}

pub fn level_used(level: &str) -> String {
    format!("{{validateFields: 'false', compatibility: '{level}'}}")
}

/// Java's `Incompatibility.getMessage()`. For a reader field without a
/// default it is the field's name, which the location points at in the
/// reader. For the other kinds the engine ends its sentence with Java's
/// message (`reader type: INT not compatible with writer type: STRING`,
/// `expected: ns.Name`, `[A, B]`, …), which is cut out; failing that, the
/// whole sentence.
fn avro_additional_info(found: &Incompatibility, reader_text: &str) -> String {
    let message = found.message.as_str();
    let java = match found.kind.as_str() {
        "READER_FIELD_MISSING_DEFAULT_VALUE" => {
            return serde_json::from_str::<serde_json::Value>(reader_text)
                .ok()
                .and_then(|reader| {
                    reader
                        .pointer(&found.location)?
                        .get("name")?
                        .as_str()
                        .map(str::to_string)
                })
                .unwrap_or_else(|| message.to_string());
        }
        "TYPE_MISMATCH" => message.find("reader type: "),
        "MISSING_UNION_BRANCH" => message.find("reader union lacking writer type: "),
        "NAME_MISMATCH" | "FIXED_SIZE_MISMATCH" => message.rfind("expected: "),
        "MISSING_ENUM_SYMBOLS" => message.rfind(": [").map(|at| at + 2),
        _ => None,
    };
    java.map_or(message, |at| &message[at..]).to_string()
}

fn avro_description(kind: &str, path: &str, info: &str) -> String {
    match kind {
        "FIXED_SIZE_MISMATCH" => format!(
            "The size of FIXED type field at path '{path}' in the %s schema does not match with the %s schema"
        ),
        "TYPE_MISMATCH" => format!(
            "The type (path '{path}') of a field in the %s schema does not match with the %s schema"
        ),
        "NAME_MISMATCH" => format!("The name of the schema has changed (path '{path}')"),
        "MISSING_ENUM_SYMBOLS" => format!(
            "The %s schema is missing enum symbols '{info}' at path '{path}' in the %s schema"
        ),
        "MISSING_UNION_BRANCH" => format!(
            "The %s schema is missing a type inside a union field at path '{path}' in the %s schema"
        ),
        "READER_FIELD_MISSING_DEFAULT_VALUE" => format!(
            "The field '{info}' at path '{path}' in the %s schema has no default value and is missing in the %s schema"
        ),
        _ => String::new(),
    }
}

fn json_description(kind: &str, path: &str) -> String {
    const KEYWORD_ADDED_OR_REMOVED: &[&str] = &[
        "MAXIMUM_ADDED",
        "MINIMUM_ADDED",
        "EXCLUSIVE_MAXIMUM_ADDED",
        "EXCLUSIVE_MINIMUM_ADDED",
        "MULTIPLE_OF_ADDED",
        "MAX_LENGTH_ADDED",
        "MIN_LENGTH_ADDED",
        "PATTERN_ADDED",
        "REQUIRED_ATTRIBUTE_ADDED",
        "MAX_PROPERTIES_ADDED",
        "MIN_PROPERTIES_ADDED",
        "DEPENDENCY_ARRAY_ADDED",
        "DEPENDENCY_SCHEMA_ADDED",
        "MAX_ITEMS_ADDED",
        "MIN_ITEMS_ADDED",
        "MAX_CONTAINS_ADDED",
        "MIN_CONTAINS_ADDED",
        "UNIQUE_ITEMS_ADDED",
        "ADDITIONAL_ITEMS_REMOVED",
        "ADDITIONAL_PROPERTIES_REMOVED",
        "UNEVALUATED_PROPERTIES_REMOVED",
        "UNEVALUATED_ITEMS_REMOVED",
    ];
    const VALUE_INCREASED: &[&str] = &[
        "MIN_LENGTH_INCREASED",
        "MINIMUM_INCREASED",
        "EXCLUSIVE_MINIMUM_INCREASED",
        "MIN_PROPERTIES_INCREASED",
        "MULTIPLE_OF_EXPANDED",
        "MIN_ITEMS_INCREASED",
        "MIN_CONTAINS_INCREASED",
    ];
    const VALUE_DECREASED: &[&str] = &[
        "MAX_LENGTH_DECREASED",
        "MAXIMUM_DECREASED",
        "MAX_ITEMS_DECREASED",
        "MAX_CONTAINS_DECREASED",
        "EXCLUSIVE_MAXIMUM_DECREASED",
        "MAX_PROPERTIES_DECREASED",
    ];
    const VALUE_CHANGED: &[&str] = &[
        "PATTERN_CHANGED",
        "MULTIPLE_OF_CHANGED",
        "DEPENDENCY_ARRAY_CHANGED",
    ];
    const TYPE_NARROWED: &[&str] = &[
        "ADDITIONAL_ITEMS_NARROWED",
        "ENUM_ARRAY_NARROWED",
        "SUM_TYPE_NARROWED",
        "ADDITIONAL_PROPERTIES_NARROWED",
        "UNEVALUATED_PROPERTIES_NARROWED",
        "UNEVALUATED_ITEMS_NARROWED",
    ];
    const TYPE_EXTENDED: &[&str] = &[
        "DEPENDENCY_ARRAY_EXTENDED",
        "PRODUCT_TYPE_EXTENDED",
        "SUM_TYPE_EXTENDED",
        "NOT_TYPE_EXTENDED",
    ];
    const TYPE_CHANGED: &[&str] = &[
        "TYPE_CHANGED",
        "TYPE_NARROWED",
        "COMBINED_TYPE_CHANGED",
        "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
        "ENUM_ARRAY_CHANGED",
    ];
    const ADDED_TO_OPEN: &[&str] = &[
        "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
        "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL",
        "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
    ];
    let is = |set: &[&str]| set.contains(&kind);
    if is(KEYWORD_ADDED_OR_REMOVED) {
        format!("The keyword at path '{path}' in the %s schema is not present in the %s schema")
    } else if is(VALUE_INCREASED) {
        format!(
            "The value at path '{path}' in the %s schema is more than its value in the %s schema"
        )
    } else if is(VALUE_DECREASED) {
        format!(
            "The value at path '{path}' in the %s schema is less than its value in the %s schema"
        )
    } else if is(VALUE_CHANGED) {
        format!("The value at path '{path}' is different between the %s and %s schema")
    } else if is(TYPE_NARROWED) {
        format!(
            "An array or combined type at path '{path}' has fewer elements in the %s schema than the %s schema"
        )
    } else if is(TYPE_EXTENDED) {
        format!(
            "An array or combined type at path '{path}' has more elements in the %s schema than the %s schema"
        )
    } else if is(TYPE_CHANGED) {
        format!("A type at path '{path}' is different between the %s schema and the %s schema")
    } else if is(ADDED_TO_OPEN) {
        format!(
            "The %s schema has an open content model and has a property or item at path '{path}' which is missing in the %s schema"
        )
    } else {
        match kind {
            "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL" => format!(
                "The %s schema has an unopen content model and has a required property at path '{path}' which is missing in the %s schema"
            ),
            "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"
            | "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL" => {
                format!(
                    "The %s has a closed content model and is missing a property or item present at path '{path}' in the %s schema"
                )
            }
            "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            | "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" => format!(
                "A property or item is missing in the %s schema but present at path '{path}' in the %s schema and is not covered by its partially open content model"
            ),
            "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            | "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL" => format!(
                "The %s schema has a property or item at path '{path}' which is missing in the %s schema and is not covered by its partially open content model"
            ),
            "RESERVED_PROPERTY_REMOVED" => format!(
                "The %s schema has reserved property '{path}' removed from its metadata which is present in the %s schema."
            ),
            "RESERVED_PROPERTY_CONFLICTS_WITH_PROPERTY" => format!(
                "The %s schema has property at path '{path}' that conflicts with the reserved properties which is missing in the %s schema."
            ),
            _ => String::new(),
        }
    }
}

fn protobuf_description(kind: &str, path: &str) -> String {
    match kind {
        "PACKAGE_CHANGED" => format!(
            "The package at '{path}' in the %s schema does not match the package in the %s schema"
        ),
        "MESSAGE_REMOVED" => {
            format!("The %s schema is missing a MESSAGE type at path '{path}' in the %s schema")
        }
        "FIELD_KIND_CHANGED" => format!(
            "The type of a field at path '{path}' in the %s schema does not match the %s schema"
        ),
        "FIELD_SCALAR_KIND_CHANGED" => format!(
            "The kind of a SCALAR field at path '{path}' in the %s schema does not match its kind in the %s schema"
        ),
        "FIELD_NAMED_TYPE_CHANGED" => format!(
            "The type of a MESSAGE field at path '{path}' in the %s schema does not match its type in the %s schema"
        ),
        "FIELD_NUMERIC_LABEL_CHANGED" => format!(
            "The label for a NUMERIC field at path '{path}' in the %s schema does not match its label in the %s schema"
        ),
        // Two spaces after "field": Confluent's.
        "REQUIRED_FIELD_ADDED" => format!(
            "A required field  at path '{path}' in the %s schema is missing in the %s schema"
        ),
        "REQUIRED_FIELD_REMOVED" => {
            format!("The %s schema is missing a required field at path: '{path}' in the %s schema")
        }
        "ONEOF_FIELD_REMOVED" => {
            format!("The %s schema is missing a oneof field at path '{path}' in the %s schema")
        }
        "ONEOF_FIELD_MOVED_TO_TOP_LEVEL" => format!(
            "The oneof field at path '{path}' in the %s schema was moved out of its oneof to a top-level field in the %s schema"
        ),
        "MULTIPLE_FIELDS_MOVED_TO_ONEOF" => format!(
            "Multiple fields in the oneof at path '{path}' in the %s schema are outside a oneof in the %s schema"
        ),
        "FIELD_MOVED_TO_EXISTING_ONEOF" => format!(
            "A field in the oneof at path '{path}' in the %s schema is outside an existing oneof in the %s schema"
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(kind: &str, location: &str, message: &str) -> Incompatibility {
        Incompatibility {
            kind: kind.into(),
            location: location.into(),
            message: message.into(),
        }
    }

    #[test]
    fn avro_missing_default_names_the_reader_field() {
        let reader = r#"{"type":"record","name":"r","fields":[{"name":"a","type":"string"},{"name":"f2","type":"int"}]}"#;
        let e = entry(
            SchemaType::Avro,
            &found(
                "READER_FIELD_MISSING_DEFAULT_VALUE",
                "/fields/1",
                "f2 has no default",
            ),
            roles(Direction::NewReadsOld),
            reader,
        );
        assert_eq!(
            e,
            "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'f2' at path '/fields/1' in the new schema has no default value and is missing in the old schema', additionalInfo:'f2'}"
        );
    }

    #[test]
    fn avro_additional_info_is_javas_message() {
        let cases = [
            (
                "TYPE_MISMATCH",
                "The type at path '/fields/0/type' of field 'id' in the reader schema does not match the writer schema: reader type: INT not compatible with writer type: STRING",
                "reader type: INT not compatible with writer type: STRING",
            ),
            (
                "MISSING_UNION_BRANCH",
                "The union at path '/fields/0/type' in the reader schema has no branch for a type of the writer schema: reader union lacking writer type: STRING",
                "reader union lacking writer type: STRING",
            ),
            (
                "NAME_MISMATCH",
                "The name of the record 'a.B' at path '/name' in the reader schema is not the writer schema's, nor one of the reader's aliases: expected: a.C",
                "expected: a.C",
            ),
            (
                "FIXED_SIZE_MISMATCH",
                "The size of the fixed 'F' at path '/size' in the reader schema does not match the writer schema: expected: 16, found: 8",
                "expected: 16, found: 8",
            ),
            (
                "MISSING_ENUM_SYMBOLS",
                "The enum 'E' at path '/symbols' in the reader schema lacks symbols of the writer schema and has no default symbol: [C, D]",
                "[C, D]",
            ),
        ];
        for (kind, sentence, java) in cases {
            let e = entry(
                SchemaType::Avro,
                &found(kind, "/x", sentence),
                roles(Direction::NewReadsOld),
                "{}",
            );
            assert!(e.ends_with(&format!(", additionalInfo:'{java}'}}")), "{e}");
        }
    }

    #[test]
    fn json_and_protobuf_entries_keep_confluents_quotes() {
        let j = entry(
            SchemaType::Json,
            &found("TYPE_NARROWED", "#/properties/a", ""),
            roles(Direction::OldReadsNew),
            "{}",
        );
        assert_eq!(
            j,
            "{errorType:\"TYPE_NARROWED\", description:\"A type at path '#/properties/a' is different between the old schema and the new schema'}"
        );
        let p = entry(
            SchemaType::Protobuf,
            &found("FIELD_KIND_CHANGED", "#/Order/3", ""),
            roles(Direction::NewReadsOld),
            "",
        );
        assert_eq!(
            p,
            "{errorType:\"FIELD_KIND_CHANGED\", description:\"The type of a field at path '#/Order/3' in the new schema does not match the old schema\"}"
        );
    }

    #[test]
    fn long_old_schemas_are_truncated() {
        let long = "x".repeat(MAX_SCHEMA_SHOWN + 5);
        let shown = old_schema(&long);
        assert!(shown.starts_with("{oldSchema: <truncated> 'xxx"));
        assert!(shown.ends_with("...'}"));
        assert_eq!(old_schema("\"int\""), "{oldSchema: '\"int\"'}");
    }
}
