//! Types, annotations, string and number constraints, enums, `const`,
//! `not`, boolean schemas, and the schemas everit infers from keywords.

use super::*;

#[test]
fn annotations_change_compatibly() {
    run(&[
        (
            "$id",
            r#"{"$id": "a"}"#,
            r#"{"$id": "b"}"#,
            &["ID_CHANGED #/"],
            Compatible,
        ),
        (
            "title",
            r#"{"title": "a"}"#,
            r#"{"title": "b"}"#,
            &["TITLE_CHANGED #/"],
            Compatible,
        ),
        (
            "description",
            r#"{"type": "string", "description": "a"}"#,
            r#"{"type": "string", "description": "b"}"#,
            &["DESCRIPTION_CHANGED #/"],
            Compatible,
        ),
        (
            "default",
            r#"{"type": "integer", "default": 1}"#,
            r#"{"type": "integer", "default": 2}"#,
            &["DEFAULT_CHANGED #/"],
            Compatible,
        ),
    ]);
}

#[test]
fn types_change_narrow_and_widen() {
    run(&[
        (
            "object to array",
            r#"{"type": "object"}"#,
            r#"{"type": "array"}"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
        (
            "number to integer narrows",
            r#"{"type": "number"}"#,
            r#"{"type": "integer"}"#,
            &["TYPE_NARROWED #/"],
            Incompatible,
        ),
        (
            "integer to number widens",
            r#"{"type": "integer"}"#,
            r#"{"type": "number"}"#,
            &["TYPE_EXTENDED #/"],
            Compatible,
        ),
        (
            "a type added to the type array",
            r#"{"type": ["object"]}"#,
            r#"{"type": ["object", "array"]}"#,
            &["SUM_TYPE_EXTENDED #/"],
            Compatible,
        ),
        (
            "a type removed from the type array",
            r#"{"type": ["string", "null"]}"#,
            r#"{"type": ["string"]}"#,
            &["SUM_TYPE_NARROWED #/"],
            Incompatible,
        ),
        (
            "a plain type into a type array",
            r#"{"type": "string"}"#,
            r#"{"type": ["string", "null"]}"#,
            &["SUM_TYPE_EXTENDED #/"],
            Compatible,
        ),
        (
            "a type array to one of its types",
            r#"{"type": ["string", "null"]}"#,
            r#"{"type": "string"}"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
        (
            "keywords of the type go into each branch of a type array",
            r#"{"type": ["string", "null"], "maxLength": 5}"#,
            r#"{"type": ["string", "null"], "maxLength": 3}"#,
            &["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"],
            Incompatible,
        ),
    ]);
}

#[test]
fn empty_and_boolean_schemas() {
    run(&[
        (
            "anything can become the empty schema",
            r#"{"properties": {}}"#,
            r#"{}"#,
            &[],
            Compatible,
        ),
        (
            "anything can become true",
            r#"{"type": "string"}"#,
            r#"true"#,
            &[],
            Compatible,
        ),
        (
            "false can become anything",
            r#"false"#,
            r#"{"type": "string"}"#,
            &[],
            Compatible,
        ),
        (
            "the empty schema cannot become an object schema",
            r#"{}"#,
            r#"{"properties": {}}"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
        (
            "nothing but false reads as false",
            r#"{"type": "string"}"#,
            r#"false"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
    ]);
}

#[test]
fn string_constraints() {
    run(&[
        (
            "minLength increased",
            r#"{"type": "string", "minLength": 10}"#,
            r#"{"type": "string", "minLength": 11}"#,
            &["MIN_LENGTH_INCREASED #/minLength"],
            Incompatible,
        ),
        (
            "minLength decreased",
            r#"{"type": "string", "minLength": 11}"#,
            r#"{"type": "string", "minLength": 10}"#,
            &["MIN_LENGTH_DECREASED #/minLength"],
            Compatible,
        ),
        (
            "minLength added",
            r#"{"type": "string"}"#,
            r#"{"type": "string", "minLength": 1}"#,
            &["MIN_LENGTH_ADDED #/minLength"],
            Incompatible,
        ),
        (
            "minLength removed",
            r#"{"type": "string", "minLength": 1}"#,
            r#"{"type": "string"}"#,
            &["MIN_LENGTH_REMOVED #/minLength"],
            Compatible,
        ),
        (
            "maxLength increased",
            r#"{"type": "string", "maxLength": 10}"#,
            r#"{"type": "string", "maxLength": 12}"#,
            &["MAX_LENGTH_INCREASED #/maxLength"],
            Compatible,
        ),
        (
            "maxLength decreased",
            r#"{"type": "string", "maxLength": 12}"#,
            r#"{"type": "string", "maxLength": 10}"#,
            &["MAX_LENGTH_DECREASED #/maxLength"],
            Incompatible,
        ),
        (
            "maxLength added",
            r#"{"type": "string"}"#,
            r#"{"type": "string", "maxLength": 10}"#,
            &["MAX_LENGTH_ADDED #/maxLength"],
            Incompatible,
        ),
        (
            "maxLength removed",
            r#"{"type": "string", "maxLength": 10}"#,
            r#"{"type": "string"}"#,
            &["MAX_LENGTH_REMOVED #/maxLength"],
            Compatible,
        ),
        (
            "pattern added",
            r#"{"type": "string"}"#,
            r#"{"type": "string", "pattern": "^[a-z]+$"}"#,
            &["PATTERN_ADDED #/pattern"],
            Incompatible,
        ),
        (
            "pattern removed",
            r#"{"type": "string", "pattern": "uuid"}"#,
            r#"{"type": "string"}"#,
            &["PATTERN_REMOVED #/pattern"],
            Compatible,
        ),
        (
            "pattern changed",
            r#"{"type": "string", "pattern": "date-time"}"#,
            r#"{"type": "string", "pattern": "uuid"}"#,
            &["PATTERN_CHANGED #/pattern"],
            Incompatible,
        ),
        (
            "pattern unchanged",
            r#"{"type": "string", "pattern": "date-time"}"#,
            r#"{"type": "string", "pattern": "date-time"}"#,
            &[],
            Compatible,
        ),
    ]);
}

#[test]
fn number_constraints() {
    run(&[
        (
            "maximum removed",
            r#"{"type": "number", "maximum": 10}"#,
            r#"{"type": "number"}"#,
            &["MAXIMUM_REMOVED #/maximum"],
            Compatible,
        ),
        (
            "maximum increased",
            r#"{"type": "number", "maximum": 10}"#,
            r#"{"type": "number", "maximum": 11}"#,
            &["MAXIMUM_INCREASED #/maximum"],
            Compatible,
        ),
        (
            "maximum decreased",
            r#"{"type": "number", "maximum": 11}"#,
            r#"{"type": "number", "maximum": 10}"#,
            &["MAXIMUM_DECREASED #/maximum"],
            Incompatible,
        ),
        (
            "maximum added",
            r#"{"type": "number"}"#,
            r#"{"type": "number", "maximum": 10}"#,
            &["MAXIMUM_ADDED #/maximum"],
            Incompatible,
        ),
        (
            "minimum removed",
            r#"{"type": "number", "minimum": 10}"#,
            r#"{"type": "number"}"#,
            &["MINIMUM_REMOVED #/minimum"],
            Compatible,
        ),
        (
            "minimum increased",
            r#"{"type": "number", "minimum": 10}"#,
            r#"{"type": "number", "minimum": 11}"#,
            &["MINIMUM_INCREASED #/minimum"],
            Incompatible,
        ),
        (
            "minimum decreased",
            r#"{"type": "number", "minimum": 11}"#,
            r#"{"type": "number", "minimum": 10}"#,
            &["MINIMUM_DECREASED #/minimum"],
            Compatible,
        ),
        (
            "minimum added",
            r#"{"type": "integer"}"#,
            r#"{"type": "integer", "minimum": 0}"#,
            &["MINIMUM_ADDED #/minimum"],
            Incompatible,
        ),
        (
            "the same bound written as an integer and as a float",
            r#"{"type": "number", "minimum": 10}"#,
            r#"{"type": "number", "minimum": 10.0}"#,
            &[],
            Compatible,
        ),
        (
            "exclusiveMaximum added",
            r#"{"type": "number"}"#,
            r#"{"type": "number", "exclusiveMaximum": 10}"#,
            &["EXCLUSIVE_MAXIMUM_ADDED #/exclusiveMaximum"],
            Incompatible,
        ),
        (
            "exclusiveMaximum decreased",
            r#"{"type": "number", "exclusiveMaximum": 10}"#,
            r#"{"type": "number", "exclusiveMaximum": 5}"#,
            &["EXCLUSIVE_MAXIMUM_DECREASED #/exclusiveMaximum"],
            Incompatible,
        ),
        (
            "exclusiveMaximum increased",
            r#"{"type": "number", "exclusiveMaximum": 5}"#,
            r#"{"type": "number", "exclusiveMaximum": 10}"#,
            &["EXCLUSIVE_MAXIMUM_INCREASED #/exclusiveMaximum"],
            Compatible,
        ),
        (
            "exclusiveMinimum increased",
            r#"{"type": "number", "exclusiveMinimum": 0}"#,
            r#"{"type": "number", "exclusiveMinimum": 1}"#,
            &["EXCLUSIVE_MINIMUM_INCREASED #/exclusiveMinimum"],
            Incompatible,
        ),
        (
            "exclusiveMinimum removed",
            r#"{"type": "number", "exclusiveMinimum": 0}"#,
            r#"{"type": "number"}"#,
            &["EXCLUSIVE_MINIMUM_REMOVED #/exclusiveMinimum"],
            Compatible,
        ),
        (
            "draft-04 boolean exclusiveMinimum is not compared",
            r#"{"type": "number", "minimum": 0}"#,
            r#"{"type": "number", "minimum": 0, "exclusiveMinimum": true}"#,
            &[],
            Compatible,
        ),
    ]);
}

#[test]
fn multiple_of() {
    run(&[
        (
            "removed",
            r#"{"type": "number", "multipleOf": 10}"#,
            r#"{"type": "number"}"#,
            &["MULTIPLE_OF_REMOVED #/multipleOf"],
            Compatible,
        ),
        (
            "added",
            r#"{"type": "number"}"#,
            r#"{"type": "number", "multipleOf": 10}"#,
            &["MULTIPLE_OF_ADDED #/multipleOf"],
            Incompatible,
        ),
        (
            "reduced to a divisor",
            r#"{"type": "number", "multipleOf": 10}"#,
            r#"{"type": "number", "multipleOf": 2}"#,
            &["MULTIPLE_OF_REDUCED #/multipleOf"],
            Compatible,
        ),
        (
            "expanded to a multiple",
            r#"{"type": "number", "multipleOf": 0.5}"#,
            r#"{"type": "number", "multipleOf": 10}"#,
            &["MULTIPLE_OF_EXPANDED #/multipleOf"],
            Incompatible,
        ),
        (
            "changed to neither",
            r#"{"type": "number", "multipleOf": 10}"#,
            r#"{"type": "number", "multipleOf": 11}"#,
            &["MULTIPLE_OF_CHANGED #/multipleOf"],
            Incompatible,
        ),
        (
            "decimals divide exactly",
            r#"{"type": "number", "multipleOf": 0.3}"#,
            r#"{"type": "number", "multipleOf": 0.1}"#,
            &["MULTIPLE_OF_REDUCED #/multipleOf"],
            Compatible,
        ),
        (
            "the same value at another scale is no change",
            r#"{"type": "number", "multipleOf": 0.5}"#,
            r#"{"type": "number", "multipleOf": 0.50}"#,
            &[],
            Compatible,
        ),
    ]);
}

#[test]
fn enums_and_const() {
    run(&[
        (
            "enum extended",
            r#"{"enum": ["red"]}"#,
            r#"{"enum": ["red", "blue"]}"#,
            &["ENUM_ARRAY_EXTENDED #/enum"],
            Compatible,
        ),
        (
            "enum narrowed",
            r#"{"enum": ["red", "blue"]}"#,
            r#"{"enum": ["red"]}"#,
            &["ENUM_ARRAY_NARROWED #/enum"],
            Incompatible,
        ),
        (
            "enum changed",
            r#"{"enum": ["red", "green"]}"#,
            r#"{"enum": ["red", "blue"]}"#,
            &["ENUM_ARRAY_CHANGED #/enum"],
            Incompatible,
        ),
        (
            "enum reordered",
            r#"{"enum": ["red", 1, {"a": [true]}]}"#,
            r#"{"enum": [{"a": [true]}, 1, "red"]}"#,
            &[],
            Compatible,
        ),
        (
            "a typed enum is allOf[enum, type]: narrowing fails the match",
            r#"{"type": "string", "enum": ["red", "blue"]}"#,
            r#"{"type": "string", "enum": ["red"]}"#,
            &["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"],
            Incompatible,
        ),
        (
            "a typed enum extended",
            r#"{"type": "string", "enum": ["red"]}"#,
            r#"{"type": "string", "enum": ["red", "blue"]}"#,
            &["ENUM_ARRAY_EXTENDED #/allOf/0/enum"],
            Compatible,
        ),
        (
            "enum removed from a typed enum",
            r#"{"type": "string", "enum": ["red"]}"#,
            r#"{"type": "string"}"#,
            &["PRODUCT_TYPE_NARROWED #/"],
            Compatible,
        ),
        (
            "enum added to a type",
            r#"{"type": "string"}"#,
            r#"{"type": "string", "enum": ["red"]}"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
        (
            "const changed, reported as an enum change",
            r#"{"properties": {"foo": {"const": "red"}}}"#,
            r#"{"properties": {"foo": {"const": "blue"}}}"#,
            &["ENUM_ARRAY_CHANGED #/properties/foo/const"],
            Incompatible,
        ),
        (
            "const unchanged",
            r#"{"const": {"a": 1}}"#,
            r#"{"const": {"a": 1}}"#,
            &[],
            Compatible,
        ),
        (
            "const to enum is a change of type",
            r#"{"const": "red"}"#,
            r#"{"enum": ["red", "blue"]}"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
    ]);
}

#[test]
fn not_compares_the_excluded_schemas_the_other_way() {
    run(&[
        (
            "the reader excludes less",
            r#"{"not": {"type": "number"}}"#,
            r#"{"not": {"type": "integer"}}"#,
            &["NOT_TYPE_NARROWED #/not"],
            Compatible,
        ),
        (
            "the reader excludes more",
            r#"{"not": {"type": "integer"}}"#,
            r#"{"not": {"type": "number"}}"#,
            &["NOT_TYPE_EXTENDED #/not"],
            Incompatible,
        ),
        (
            "the same exclusion",
            r#"{"not": {"type": "null"}}"#,
            r#"{"not": {"type": "null"}}"#,
            &["NOT_TYPE_NARROWED #/not"],
            Compatible,
        ),
    ]);
}

/// What everit makes of keywords outside the type `type` names, which
/// decides how Confluent compares them.
#[test]
fn inferred_schemas_follow_everit() {
    run(&[
        (
            "keywords alone make a schema of their type",
            r#"{"maxProperties": 2}"#,
            r#"{"maxProperties": 1}"#,
            &["MAX_PROPERTIES_DECREASED #/maxProperties"],
            Incompatible,
        ),
        (
            "an inferred and an explicit string are the same type",
            r#"{"minLength": 1}"#,
            r#"{"type": "string"}"#,
            &["MIN_LENGTH_REMOVED #/minLength"],
            Compatible,
        ),
        (
            "format on an integer makes allOf[integer, string] in draft-07",
            r#"{"type": "integer"}"#,
            r#"{"type": "integer", "format": "int64"}"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
        (
            "and dropping that format keeps the integer branch",
            r#"{"type": "integer", "format": "int64"}"#,
            r#"{"type": "integer"}"#,
            &["PRODUCT_TYPE_NARROWED #/"],
            Compatible,
        ),
        (
            "format on a string is part of the string",
            r#"{"type": "string"}"#,
            r#"{"type": "string", "format": "uuid"}"#,
            &[],
            Compatible,
        ),
        (
            "if/then/else is not looked into",
            r#"{"if": {"type": "string"}, "then": {"maxLength": 3}}"#,
            r#"{"if": {"type": "string"}, "then": {"maxLength": 1}}"#,
            &[],
            Compatible,
        ),
        (
            "Connect decimals may move between string and number",
            r#"{"type": "string", "connect.type": "bytes"}"#,
            r#"{"type": "number", "connect.type": "bytes"}"#,
            &[],
            Compatible,
        ),
        (
            "other type moves may not",
            r#"{"type": "string"}"#,
            r#"{"type": "number", "connect.type": "bytes"}"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
    ]);
}
