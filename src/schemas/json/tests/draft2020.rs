//! 2019-09 and 2020-12: `prefixItems` and `items`, `dependentRequired`,
//! `dependentSchemas`, `unevaluatedProperties`, `unevaluatedItems`,
//! `$ref` beside other keywords, `format` ignored, `contains` counts.

use super::*;

/// A 2020-12 schema from the keywords given.
macro_rules! d2020 {
    ($body:literal) => {
        concat!(
            r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "#,
            $body,
            "}"
        )
    };
}

#[test]
fn prefix_items_and_items() {
    run(&[
        (
            "items is for every item without prefixItems",
            d2020!(r#""items": {"type": "string"}"#),
            d2020!(r#""items": {"type": "number"}"#),
            &["TYPE_CHANGED #/items"],
            Incompatible,
        ),
        (
            "items false closes the array",
            d2020!(r#""items": true"#),
            d2020!(r#""items": false"#),
            &["ADDITIONAL_ITEMS_REMOVED #/additionalItems"],
            Incompatible,
        ),
        (
            "prefixItems is the tuple",
            d2020!(r#""type": "array", "prefixItems": [{"type": "string"}]"#),
            d2020!(r#""type": "array", "prefixItems": [{"type": "number"}]"#),
            &["TYPE_CHANGED #/items/0"],
            Incompatible,
        ),
        (
            "a position added, covered by items after the prefix",
            d2020!(
                r#""type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "string"}"#
            ),
            d2020!(
                r#""type": "array", "prefixItems": [{"type": "string"}, {"type": "string"}], "items": {"type": "string"}"#
            ),
            &["ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1"],
            Compatible,
        ),
        (
            "a position removed from a prefix closed by items false",
            d2020!(
                r#""type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": false"#
            ),
            d2020!(r#""type": "array", "prefixItems": [{"type": "string"}], "items": false"#),
            &["ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL #/items/1"],
            Incompatible,
        ),
        (
            "a position added, not covered by unevaluatedItems",
            d2020!(
                r#""type": "array", "prefixItems": [{"type": "string"}], "unevaluatedItems": {"type": "string"}"#
            ),
            d2020!(
                r#""type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "unevaluatedItems": {"type": "string"}"#
            ),
            &[
                "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1",
                "TYPE_CHANGED #/items/1",
            ],
            Incompatible,
        ),
        (
            "unevaluatedItems false added",
            d2020!(r#""type": "array""#),
            d2020!(r#""type": "array", "unevaluatedItems": false"#),
            &["UNEVALUATED_ITEMS_REMOVED #/unevaluatedItems"],
            Incompatible,
        ),
    ]);
}

#[test]
fn contains_counts() {
    run(&[
        (
            "minContains 1 is the default",
            d2020!(r#""type": "array", "contains": {"type": "number"}, "minContains": 1"#),
            d2020!(r#""type": "array", "contains": {"type": "number"}"#),
            &[],
            Compatible,
        ),
        (
            "minContains increased",
            d2020!(r#""type": "array", "contains": {"type": "number"}, "minContains": 1"#),
            d2020!(r#""type": "array", "contains": {"type": "number"}, "minContains": 2"#),
            &["MIN_CONTAINS_INCREASED #/minContains"],
            Incompatible,
        ),
        (
            "minContains decreased",
            d2020!(r#""type": "array", "contains": {"type": "number"}, "minContains": 2"#),
            d2020!(r#""type": "array", "contains": {"type": "number"}, "minContains": 1"#),
            &["MIN_CONTAINS_DECREASED #/minContains"],
            Compatible,
        ),
    ]);
}

#[test]
fn dependent_keywords() {
    run(&[
        (
            "dependentRequired moved",
            d2020!(
                r#""properties": {"foo": {"type": "number"}, "bar": {"type": "string"}}, "dependentRequired": {"foo": ["bar"]}"#
            ),
            d2020!(
                r#""properties": {"foo": {"type": "number"}, "bar": {"type": "string"}}, "dependentRequired": {"bar": ["foo"]}"#
            ),
            &[
                "DEPENDENCY_ARRAY_ADDED #/dependencies/bar",
                "DEPENDENCY_ARRAY_REMOVED #/dependencies/foo",
            ],
            Incompatible,
        ),
        (
            "dependentSchemas removed",
            d2020!(r#""dependentSchemas": {"foo": {"type": "string"}}"#),
            d2020!(r#""dependentSchemas": {}"#),
            &["DEPENDENCY_SCHEMA_REMOVED #/dependencies/foo"],
            Compatible,
        ),
        (
            "dependentSchemas changed",
            d2020!(r#""dependentSchemas": {"foo": {"type": "string"}}"#),
            d2020!(r#""dependentSchemas": {"foo": {"type": "number"}}"#),
            &["TYPE_CHANGED #/dependencies/foo"],
            Incompatible,
        ),
    ]);
}

#[test]
fn unevaluated_properties_as_a_content_model() {
    run(&[
        (
            "an optional property added to a model closed by unevaluatedProperties",
            d2020!(r#""properties": {"foo": {"type": "string"}}, "unevaluatedProperties": false"#),
            d2020!(
                r#""properties": {"foo": {"type": "string"}, "bar": {"type": "number"}}, "unevaluatedProperties": false"#
            ),
            &["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar"],
            Compatible,
        ),
        (
            "an added property covered by unevaluatedProperties",
            d2020!(
                r#""properties": {"foo": {"type": "string"}}, "unevaluatedProperties": {"type": "string"}"#
            ),
            d2020!(
                r#""properties": {"foo": {"type": "string"}, "bar": {"type": "string"}}, "unevaluatedProperties": {"type": "string"}"#
            ),
            &[
                "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar",
                "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
            ],
            Compatible,
        ),
        (
            "an added required property not covered by unevaluatedProperties",
            d2020!(
                r#""properties": {"foo": {"type": "string"}}, "unevaluatedProperties": {"type": "string"}"#
            ),
            d2020!(
                r#""properties": {"foo": {"type": "string"}, "bar": {"type": "number"}}, "required": ["bar"], "unevaluatedProperties": {"type": "string"}"#
            ),
            &[
                "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
                "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar",
                "TYPE_CHANGED #/properties/bar",
            ],
            Incompatible,
        ),
        (
            "unevaluatedProperties false added",
            d2020!(r#""type": "object""#),
            d2020!(r#""type": "object", "unevaluatedProperties": false"#),
            &["UNEVALUATED_PROPERTIES_REMOVED #/unevaluatedProperties"],
            LenientOnly,
        ),
        (
            "unevaluatedProperties narrowed to a schema",
            d2020!(r#""type": "object", "unevaluatedProperties": true"#),
            d2020!(r#""type": "object", "unevaluatedProperties": {"type": "string"}"#),
            &["UNEVALUATED_PROPERTIES_NARROWED #/unevaluatedProperties"],
            LenientOnly,
        ),
        (
            "unevaluatedProperties false removed",
            d2020!(r#""type": "object", "unevaluatedProperties": false"#),
            d2020!(r#""type": "object""#),
            &["UNEVALUATED_PROPERTIES_ADDED #/unevaluatedProperties"],
            Compatible,
        ),
        (
            "draft-07 does not read unevaluatedProperties",
            r#"{"type": "object"}"#,
            r#"{"type": "object", "unevaluatedProperties": false}"#,
            &[],
            Compatible,
        ),
    ]);
}

#[test]
fn ref_beside_keywords_and_format() {
    run(&[
        (
            "keywords beside $ref form an allOf with it",
            d2020!(
                r##""properties": {"a": {"$ref": "#/$defs/S"}}, "$defs": {"S": {"type": "string"}}"##
            ),
            d2020!(
                r##""properties": {"a": {"$ref": "#/$defs/S", "maxLength": 3}}, "$defs": {"S": {"type": "string"}}"##
            ),
            &["TYPE_CHANGED #/properties/a"],
            Incompatible,
        ),
        (
            "format is ignored",
            d2020!(r#""type": "integer""#),
            d2020!(r#""type": "integer", "format": "int64""#),
            &[],
            Compatible,
        ),
    ]);
}
