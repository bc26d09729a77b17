//! Objects: properties under open, closed and partially open content
//! models, `required`, `dependencies`, `additionalProperties`, bounds.

use super::*;

#[test]
fn open_content_model() {
    run(&[
        (
            "a property removed",
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "string"}}}"#,
            r#"{"properties": {"foo": {"type": "string"}}}"#,
            &["PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL #/properties/bar"],
            Compatible,
        ),
        (
            "an optional property added: old data may hold it with any type",
            r#"{"properties": {"foo": {"type": "string"}}}"#,
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "number"}}}"#,
            &["OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/bar"],
            LenientOnly,
        ),
        (
            "one property renamed",
            r#"{"properties": {"foo": {"type": "string"}}}"#,
            r#"{"properties": {"bar": {"type": "string"}}}"#,
            &[
                "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/bar",
                "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL #/properties/foo",
            ],
            LenientOnly,
        ),
        (
            "a required property added",
            r#"{"type": "object", "properties": {}}"#,
            r#"{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}"#,
            &["REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/id"],
            Incompatible,
        ),
        (
            "a required property with a default added",
            r#"{"type": "object", "properties": {}}"#,
            r#"{"type": "object", "properties": {"id": {"type": "string", "default": ""}}, "required": ["id"]}"#,
            &["REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL #/properties/id"],
            LenientOnly,
        ),
        (
            "a property with the empty schema added",
            r#"{"additionalProperties": true}"#,
            r#"{"additionalProperties": true, "properties": {"foo": true}}"#,
            &["PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/properties/foo"],
            Compatible,
        ),
        (
            "a property with the empty schema removed",
            r#"{"additionalProperties": true, "properties": {"foo": true}}"#,
            r#"{"additionalProperties": true}"#,
            &["PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL #/properties/foo"],
            Compatible,
        ),
        (
            "a property's type changed",
            r#"{"properties": {"foo": {"type": "string"}}}"#,
            r#"{"properties": {"foo": {"type": "number"}}}"#,
            &["TYPE_CHANGED #/properties/foo"],
            Incompatible,
        ),
    ]);
}

#[test]
fn closed_content_model() {
    run(&[
        (
            "an optional property added",
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": false}"#,
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "number"}}, "additionalProperties": false}"#,
            &["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar"],
            Compatible,
        ),
        (
            "a required property added",
            r#"{"properties": {}, "additionalProperties": false}"#,
            r#"{"properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}"#,
            &["REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/id"],
            Incompatible,
        ),
        (
            "a required property with a default added",
            r#"{"properties": {}, "additionalProperties": false}"#,
            r#"{"properties": {"id": {"type": "string", "default": "x"}}, "required": ["id"], "additionalProperties": false}"#,
            &["REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/id"],
            Compatible,
        ),
        (
            "a property removed: the reader rejects what old data holds",
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "string"}}, "additionalProperties": false}"#,
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": false}"#,
            &["PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/bar"],
            LenientOnly,
        ),
        (
            "a false property added",
            r#"{"additionalProperties": false}"#,
            r#"{"additionalProperties": false, "properties": {"foo": false}}"#,
            &["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/foo"],
            Compatible,
        ),
        (
            "a false property removed",
            r#"{"additionalProperties": false, "properties": {"foo": false}}"#,
            r#"{"additionalProperties": false}"#,
            &["PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/foo"],
            Compatible,
        ),
    ]);
}

#[test]
fn partially_open_content_model() {
    run(&[
        (
            "an added property covered by a pattern property",
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": false,
                "patternProperties": {"^S_": {"type": "string"}, "^I_": {"type": "integer"}}}"#,
            r#"{"properties": {"foo": {"type": "string"}, "I_123": {"type": "number"}}, "additionalProperties": false,
                "patternProperties": {"^S_": {"type": "string"}, "^I_": {"type": "integer"}}}"#,
            &[
                "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/I_123",
                "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/I_123",
                "TYPE_EXTENDED #/properties/I_123",
            ],
            Compatible,
        ),
        (
            "an added property covered by additionalProperties",
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": {"type": "string"}}"#,
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "string"}}, "additionalProperties": {"type": "string"}}"#,
            &[
                "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar",
                "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
            ],
            Compatible,
        ),
        (
            "an added property not covered",
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": {"type": "string"}}"#,
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "number"}}, "additionalProperties": {"type": "string"}}"#,
            &[
                "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar",
                "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
                "TYPE_CHANGED #/properties/bar",
            ],
            Incompatible,
        ),
        (
            "a covered property added as required",
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": {"type": "string"}}"#,
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "string"}}, "required": ["bar"],
                "additionalProperties": {"type": "string"}}"#,
            &[
                "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
                "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/bar",
            ],
            Incompatible,
        ),
        (
            "a removed property covered by a pattern property",
            r#"{"properties": {"foo": {"type": "string"}, "I_123": {"type": "integer"}}, "additionalProperties": false}"#,
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": false,
                "patternProperties": {"^S_": {"type": "string"}, "^I_": {"type": "number"}}}"#,
            &[
                "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/I_123",
                "TYPE_EXTENDED #/properties/I_123",
            ],
            Compatible,
        ),
        (
            "a removed property covered by additionalProperties",
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "string"}}, "additionalProperties": false}"#,
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": {"type": "string"}}"#,
            &[
                "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties",
                "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
            ],
            Compatible,
        ),
        (
            "a removed property not covered",
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "number"}}, "additionalProperties": false}"#,
            r#"{"properties": {"foo": {"type": "string"}}, "additionalProperties": {"type": "string"}}"#,
            &[
                "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties",
                "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
                "TYPE_CHANGED #/properties/bar",
            ],
            Incompatible,
        ),
        (
            "a removed property covered under LENIENT only",
            r#"{"properties": {"bar": {"properties": {"x": {"type": "string"}}}}, "additionalProperties": false}"#,
            r#"{"additionalProperties": {"properties": {"x": {"type": "string"}, "y": {"type": "number"}}}}"#,
            &[
                "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties",
                "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/bar/properties/y",
                "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
            ],
            LenientOnly,
        ),
        (
            "a removed property covered by a wider oneOf",
            r#"{"properties": {"foo": {"type": "string"}, "bar": {"type": "string"}}, "additionalProperties": false}"#,
            r#"{"properties": {"foo": {"type": "string"}},
                "additionalProperties": {"oneOf": [{"type": "null"}, {"type": "string"}]}}"#,
            &[
                "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties",
                "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/bar",
                "SUM_TYPE_EXTENDED #/properties/bar",
            ],
            Compatible,
        ),
        (
            "the first matching pattern decides",
            r#"{"properties": {"ab": {"type": "integer"}}, "additionalProperties": false}"#,
            r#"{"additionalProperties": false, "patternProperties": {"^a": {"type": "string"}, "b$": {"type": "integer"}}}"#,
            &[
                "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/ab",
                "TYPE_CHANGED #/properties/ab",
            ],
            Incompatible,
        ),
    ]);
}

#[test]
fn required() {
    run(&[
        (
            "a requirement removed",
            r#"{"properties": {"foo": {"type": "string"}}, "required": ["foo"]}"#,
            r#"{"properties": {"foo": {"type": "string"}}}"#,
            &["REQUIRED_ATTRIBUTE_REMOVED #/required/foo"],
            Compatible,
        ),
        (
            "a requirement added",
            r#"{"properties": {"foo": {"type": "string"}}}"#,
            r#"{"properties": {"foo": {"type": "string"}}, "required": ["foo"]}"#,
            &["REQUIRED_ATTRIBUTE_ADDED #/required/foo"],
            Incompatible,
        ),
        (
            "a requirement added on a property with a default",
            r#"{"properties": {"foo": {"type": "string"}}}"#,
            r#"{"properties": {"foo": {"type": "string", "default": "x"}}, "required": ["foo"]}"#,
            &[
                "DEFAULT_CHANGED #/properties/foo",
                "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED #/required/foo",
            ],
            Compatible,
        ),
        (
            "a null default counts",
            r#"{"properties": {"foo": {"type": ["string", "null"]}}}"#,
            r#"{"properties": {"foo": {"type": ["string", "null"], "default": null}}, "required": ["foo"]}"#,
            &[
                "DEFAULT_CHANGED #/properties/foo",
                "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED #/required/foo",
            ],
            Compatible,
        ),
        (
            "requiring a property no schema names is not compared",
            r#"{"properties": {"foo": {"type": "string"}}, "required": ["foo"]}"#,
            r#"{"properties": {"foo": {"type": "string"}}, "required": ["bar"]}"#,
            &["REQUIRED_ATTRIBUTE_REMOVED #/required/foo"],
            Compatible,
        ),
    ]);
}

#[test]
fn dependencies() {
    run(&[
        (
            "property dependencies moved",
            r#"{"properties": {"foo": {"type": "number"}, "bar": {"type": "string"}}, "dependencies": {"foo": ["bar"]}}"#,
            r#"{"properties": {"foo": {"type": "number"}, "bar": {"type": "string"}}, "dependencies": {"bar": ["foo"]}}"#,
            &[
                "DEPENDENCY_ARRAY_ADDED #/dependencies/bar",
                "DEPENDENCY_ARRAY_REMOVED #/dependencies/foo",
            ],
            Incompatible,
        ),
        (
            "a property dependency extended",
            r#"{"dependencies": {"foo": ["bar"]}}"#,
            r#"{"dependencies": {"foo": ["bar", "baz"]}}"#,
            &["DEPENDENCY_ARRAY_EXTENDED #/dependencies/foo"],
            Incompatible,
        ),
        (
            "a property dependency narrowed",
            r#"{"dependencies": {"foo": ["bar", "baz"]}}"#,
            r#"{"dependencies": {"foo": ["bar"]}}"#,
            &["DEPENDENCY_ARRAY_NARROWED #/dependencies/foo"],
            Compatible,
        ),
        (
            "a property dependency changed",
            r#"{"dependencies": {"foo": ["bar"]}}"#,
            r#"{"dependencies": {"foo": ["baz"]}}"#,
            &["DEPENDENCY_ARRAY_CHANGED #/dependencies/foo"],
            Incompatible,
        ),
        (
            "a schema dependency removed",
            r#"{"dependencies": {"foo": {"type": "string"}, "bar": {"type": "string"}}}"#,
            r#"{"dependencies": {"foo": {"type": "string"}}}"#,
            &["DEPENDENCY_SCHEMA_REMOVED #/dependencies/bar"],
            Compatible,
        ),
        (
            "a schema dependency changed",
            r#"{"dependencies": {"foo": {"type": "string"}}}"#,
            r#"{"dependencies": {"foo": {"type": "number"}}}"#,
            &["TYPE_CHANGED #/dependencies/foo"],
            Incompatible,
        ),
        (
            "schema dependencies moved",
            r#"{"dependencies": {"foo": {"type": "string"}}}"#,
            r#"{"dependencies": {"bar": {"type": "string"}}}"#,
            &[
                "DEPENDENCY_SCHEMA_ADDED #/dependencies/bar",
                "DEPENDENCY_SCHEMA_REMOVED #/dependencies/foo",
            ],
            Incompatible,
        ),
    ]);
}

#[test]
fn additional_properties_and_bounds() {
    run(&[
        (
            "closed to open",
            r#"{"properties": {}, "additionalProperties": false}"#,
            r#"{"properties": {}}"#,
            &["ADDITIONAL_PROPERTIES_ADDED #/additionalProperties"],
            Compatible,
        ),
        (
            "open to closed",
            r#"{"additionalProperties": true}"#,
            r#"{"additionalProperties": false}"#,
            &["ADDITIONAL_PROPERTIES_REMOVED #/additionalProperties"],
            LenientOnly,
        ),
        (
            "open to a schema",
            r#"{"additionalProperties": true}"#,
            r#"{"additionalProperties": {"type": "number"}}"#,
            &["ADDITIONAL_PROPERTIES_NARROWED #/additionalProperties"],
            LenientOnly,
        ),
        (
            "a schema to open",
            r#"{"additionalProperties": {"type": "number"}}"#,
            r#"{"additionalProperties": true}"#,
            &["ADDITIONAL_PROPERTIES_EXTENDED #/additionalProperties"],
            Compatible,
        ),
        (
            "the schema changed",
            r#"{"additionalProperties": {"type": "string"}}"#,
            r#"{"additionalProperties": {"type": "number"}}"#,
            &["TYPE_CHANGED #/additionalProperties"],
            Incompatible,
        ),
        (
            "maxProperties removed",
            r#"{"properties": {}, "maxProperties": 1}"#,
            r#"{"properties": {}}"#,
            &["MAX_PROPERTIES_REMOVED #/maxProperties"],
            Compatible,
        ),
        (
            "maxProperties increased",
            r#"{"maxProperties": 1}"#,
            r#"{"maxProperties": 2}"#,
            &["MAX_PROPERTIES_INCREASED #/maxProperties"],
            Compatible,
        ),
        (
            "minProperties added",
            r#"{"type": "object"}"#,
            r#"{"type": "object", "minProperties": 1}"#,
            &["MIN_PROPERTIES_ADDED #/minProperties"],
            Incompatible,
        ),
        (
            "minProperties increased",
            r#"{"minProperties": 1}"#,
            r#"{"minProperties": 2}"#,
            &["MIN_PROPERTIES_INCREASED #/minProperties"],
            Incompatible,
        ),
        (
            "minProperties decreased",
            r#"{"minProperties": 2}"#,
            r#"{"minProperties": 1}"#,
            &["MIN_PROPERTIES_DECREASED #/minProperties"],
            Compatible,
        ),
    ]);
}

#[test]
fn nested_objects_report_the_full_path() {
    run(&[(
        "a nested property narrowed",
        r#"{"type": "object", "properties": {"address": {"type": "object",
            "properties": {"zip": {"type": "string", "maxLength": 10}}}}}"#,
        r#"{"type": "object", "properties": {"address": {"type": "object",
            "properties": {"zip": {"type": "string", "maxLength": 5}}}}}"#,
        &["MAX_LENGTH_DECREASED #/properties/address/properties/zip/maxLength"],
        Incompatible,
    )]);
}
