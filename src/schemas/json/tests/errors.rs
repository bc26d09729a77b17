//! Schemas that cannot be checked: invalid JSON, values that are not
//! schemas, and `$ref`s that lead nowhere.

use super::*;
use crate::schemas::SchemaError;

fn error(text: &str) -> SchemaError {
    JsonSchema::parse(&SchemaText::new(SchemaType::Json, text)).expect_err(text)
}

#[test]
fn invalid_json_and_non_schemas_are_parse_errors() {
    for text in [
        "{",
        "",
        "7",
        r#""string""#,
        "[]",
        r#"{"type": 7}"#,
        r#"{"type": "text"}"#,
        r#"{"type": ["string", 1]}"#,
        r#"{"properties": []}"#,
        r#"{"properties": {"a": 1}}"#,
        r#"{"required": "a"}"#,
        r#"{"required": [1]}"#,
        r#"{"maxLength": -1}"#,
        r#"{"maxLength": "10"}"#,
        r#"{"minimum": "0"}"#,
        r#"{"multipleOf": 0}"#,
        r#"{"enum": "a"}"#,
        r#"{"allOf": {}}"#,
        r#"{"items": 1}"#,
        r#"{"additionalProperties": "no"}"#,
        r#"{"uniqueItems": "yes"}"#,
        r#"{"pattern": "("}"#,
        r#"{"patternProperties": {"[": {}}}"#,
        r#"{"title": 1}"#,
        r#"{"$ref": 1}"#,
        r#"{"not": []}"#,
        r#"{"contains": 3}"#,
        r#"{"dependencies": {"a": 1}}"#,
    ] {
        assert!(
            matches!(
                error(text),
                SchemaError::Parse {
                    schema_type: SchemaType::Json,
                    ..
                }
            ),
            "{text}"
        );
    }
}

#[test]
fn parse_errors_say_where() {
    let SchemaError::Parse { detail, .. } = error(r#"{"properties": {"age": {"type": "int"}}}"#)
    else {
        panic!("a parse error");
    };
    assert!(detail.contains("#/properties/age"), "{detail}");
    assert!(detail.contains("unknown type 'int'"), "{detail}");
}

#[test]
fn an_invalid_reference_document_is_a_parse_error() {
    let mut schema = SchemaText::new(SchemaType::Json, r#"{"$ref": "other.json"}"#);
    schema.references.push(ResolvedReference {
        name: "other.json".into(),
        text: "{".into(),
    });
    let error = JsonSchema::parse(&schema).expect_err("the reference does not parse");
    assert!(matches!(error, SchemaError::Parse { .. }), "{error}");
}

#[test]
fn unresolvable_references_are_reference_errors() {
    for text in [
        r##"{"$ref": "#/definitions/missing"}"##,
        r##"{"properties": {"a": {"$ref": "#/definitions/missing"}}, "definitions": {}}"##,
        r##"{"$ref": "#nowhere"}"##,
        r#"{"$ref": "other.json"}"#,
        r#"{"$ref": "http://example.com/other.json#/definitions/a"}"#,
        r##"{"$ref": "#/definitions/a", "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}}}"##,
        r##"{"$ref": "#"}"##,
    ] {
        assert!(
            matches!(error(text), SchemaError::Reference { .. }),
            "{text}"
        );
    }
    let SchemaError::Reference { name, .. } =
        error(r#"{"properties": {"a": {"$ref": "other.json#/x"}}}"#)
    else {
        panic!("a reference error");
    };
    assert_eq!(name, "other.json#/x");
}

#[test]
fn unreferenced_definitions_are_not_loaded() {
    // As with everit, a definition nothing points at is never read.
    let schema = parse(r#"{"type": "string", "definitions": {"broken": {"type": 7}}}"#);
    assert!(changes(&schema, &schema).is_empty());
}

#[test]
fn a_reference_into_a_missing_document_part_is_an_error() {
    let mut schema = SchemaText::new(SchemaType::Json, r#"{"$ref": "other.json#/definitions/a"}"#);
    schema.references.push(ResolvedReference {
        name: "other.json".into(),
        text: r#"{"definitions": {}}"#.into(),
    });
    assert!(matches!(
        JsonSchema::parse(&schema),
        Err(SchemaError::Reference { .. })
    ));
}
