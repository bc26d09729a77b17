//! What `can_read` returns: only what the policy rejects, with Confluent's
//! kinds and paths, and sentences neutral about which schema is new.

use super::*;
use crate::schemas::json::can_read;

#[test]
fn only_incompatible_differences_are_reported() {
    let writer = parse(
        r#"{"type": "object", "title": "a", "properties": {
        "age": {"type": "integer"}, "name": {"type": "string", "maxLength": 5}}}"#,
    );
    let reader = parse(
        r#"{"type": "object", "title": "b", "properties": {
        "age": {"type": "string"}, "name": {"type": "string", "maxLength": 10}}}"#,
    );
    let found = can_read(&reader, &writer);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, "TYPE_CHANGED");
    assert_eq!(found[0].location, "#/properties/age");
    assert_eq!(
        found[0].message,
        "The type of 'age' differs: integer in the writer's schema, string in the reader's schema."
    );
}

#[test]
fn lenient_accepts_what_strict_rejects_about_open_and_closed_models() {
    let writer = parse(r#"{"properties": {"a": {"type": "string"}}}"#);
    let reader = parse(r#"{"properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}"#);
    assert_eq!(can_read(&reader, &writer).len(), 1);
    assert_eq!(
        can_read_with(&reader, &writer, Policy::Strict),
        can_read(&reader, &writer)
    );
    assert!(can_read_with(&reader, &writer, Policy::Lenient).is_empty());
    // A type change is rejected by both.
    let reader = parse(r#"{"properties": {"a": {"type": "integer"}}}"#);
    assert_eq!(can_read_with(&reader, &writer, Policy::Lenient).len(), 1);
}

#[test]
fn the_root_is_hash_slash() {
    let found = can_read(
        &parse(r#"{"type": "number"}"#),
        &parse(r#"{"type": "string"}"#),
    );
    assert_eq!(found[0].location, "#/");
    assert_eq!(
        found[0].message,
        "The type of the root schema differs: string in the writer's schema, number in the reader's schema."
    );
}

#[test]
fn property_names_are_escaped_in_locations() {
    let found = can_read(
        &parse(r#"{"properties": {"a/b": {"type": "number"}}}"#),
        &parse(r#"{"properties": {"a/b": {"type": "string"}}}"#),
    );
    assert_eq!(found[0].location, "#/properties/a~1b");
    assert!(found[0].message.contains("'a/b'"), "{}", found[0].message);
}

/// One message per family, checked for the facts a person needs.
#[test]
fn messages_name_the_place_and_the_values() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            r#"{"properties": {"name": {"type": "string", "maxLength": 10}}}"#,
            r#"{"properties": {"name": {"type": "string", "maxLength": 5}}}"#,
            "MAX_LENGTH_DECREASED",
            &["maxLength", "'name'", "5", "10"],
        ),
        (
            r#"{"properties": {"n": {"type": "number"}}}"#,
            r#"{"properties": {"n": {"type": "number", "minimum": 1}}}"#,
            "MINIMUM_ADDED",
            &["minimum", "'n'", "1"],
        ),
        (
            r#"{"properties": {"n": {"type": "number"}}}"#,
            r#"{"properties": {"n": {"type": "integer"}}}"#,
            "TYPE_NARROWED",
            &["'n'", "integer"],
        ),
        (
            r#"{"properties": {"c": {"enum": ["red", "blue"]}}}"#,
            r#"{"properties": {"c": {"enum": ["red"]}}}"#,
            "ENUM_ARRAY_NARROWED",
            &["'c'", r#"["red"]"#, r#"["red","blue"]"#],
        ),
        (
            r#"{"properties": {"id": {"type": "string"}}}"#,
            r#"{"properties": {"id": {"type": "string"}}, "required": ["id"]}"#,
            "REQUIRED_ATTRIBUTE_ADDED",
            &["'id'", "required", "no default"],
        ),
        (
            r#"{"properties": {}, "additionalProperties": false}"#,
            r#"{"properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}"#,
            "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
            &["'id'", "required", "not defined in the writer's schema"],
        ),
        (
            r#"{"properties": {"a": {}, "b": {}}, "additionalProperties": false}"#,
            r#"{"properties": {"a": {}}, "additionalProperties": false}"#,
            "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
            &["'b'", "no additional properties"],
        ),
        (
            r#"{"properties": {"m": {"type": "object"}}}"#,
            r#"{"properties": {"m": {"type": "object", "additionalProperties": false}}}"#,
            "ADDITIONAL_PROPERTIES_REMOVED",
            &["'m'", "no additional properties"],
        ),
        (
            r#"{"properties": {"p": {"oneOf": [{"type": "string"}, {"type": "null"}]}}}"#,
            r#"{"properties": {"p": {"oneOf": [{"type": "string"}]}}}"#,
            "SUM_TYPE_NARROWED",
            &["'p'", "fewer alternatives"],
        ),
        (
            r#"{"properties": {"c": {"type": "string", "enum": ["a", "b"]}}}"#,
            r#"{"properties": {"c": {"type": "string", "enum": ["a"]}}}"#,
            "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
            &["'c'", r#"enum ["a","b"]"#, r#"enum ["a"]"#],
        ),
        (
            r#"{"properties": {"tags": {"type": "array", "items": {"type": "string"}}}}"#,
            r#"{"properties": {"tags": {"type": "array", "items": {"type": "string", "pattern": "^x"}}}}"#,
            "PATTERN_ADDED",
            &["'tags[]'", "^x"],
        ),
        (
            r#"{"properties": {"m": {"dependencies": {"a": ["b"]}}}}"#,
            r#"{"properties": {"m": {"dependencies": {"a": ["b", "c"]}}}}"#,
            "DEPENDENCY_ARRAY_EXTENDED",
            &["'a'", "'m'", "[b, c]", "[b]"],
        ),
    ];
    for (writer, reader, kind, facts) in cases {
        let found = can_read(&parse(reader), &parse(writer));
        let found = found
            .iter()
            .find(|i| i.kind == *kind)
            .unwrap_or_else(|| panic!("{kind} in {found:?}"));
        for fact in *facts {
            assert!(
                found.message.contains(fact),
                "{kind}: {:?} lacks {fact:?}",
                found.message
            );
        }
        for side_word in ["new", "old"] {
            assert!(
                !found
                    .message
                    .split(|c: char| !c.is_alphanumeric())
                    .any(|w| w == side_word),
                "{kind}: {:?} says {side_word:?}",
                found.message
            );
        }
    }
}
