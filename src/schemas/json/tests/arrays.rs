//! Arrays: the item schema, tuples under their content models,
//! `additionalItems`, bounds and `uniqueItems` (draft-07 keywords).

use super::*;

#[test]
fn item_schema() {
    run(&[
        (
            "an item schema added",
            r#"{"type": "array"}"#,
            r#"{"type": "array", "items": {"type": "string"}}"#,
            &["SCHEMA_ADDED #/items"],
            Incompatible,
        ),
        (
            "an item schema removed",
            r#"{"type": "array", "items": {"type": "string"}}"#,
            r#"{"type": "array"}"#,
            &["SCHEMA_REMOVED #/items"],
            Compatible,
        ),
        (
            "the item type changed",
            r#"{"type": "array", "items": {"type": "string"}}"#,
            r#"{"type": "array", "items": {"type": "integer"}}"#,
            &["TYPE_CHANGED #/items"],
            Incompatible,
        ),
        (
            "the items of an array property widened",
            r#"{"properties": {"ids": {"type": "array", "items": {"type": "integer"}}}}"#,
            r#"{"properties": {"ids": {"type": "array", "items": {"type": "number"}}}}"#,
            &["TYPE_EXTENDED #/properties/ids/items"],
            Compatible,
        ),
    ]);
}

#[test]
fn tuples_under_content_models() {
    run(&[
        (
            "a position's type changed",
            r#"{"type": "array", "items": [{"type": "string"}]}"#,
            r#"{"type": "array", "items": [{"type": "number"}]}"#,
            &["TYPE_CHANGED #/items/0"],
            Incompatible,
        ),
        (
            "positions removed from an open tuple",
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "number"}]}"#,
            r#"{"type": "array"}"#,
            &[
                "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/0",
                "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/1",
            ],
            Compatible,
        ),
        (
            "a position added to an open tuple",
            r#"{"type": "array", "items": [{"type": "number"}]}"#,
            r#"{"type": "array", "items": [{"type": "number"}, {"type": "string"}]}"#,
            &["ITEM_ADDED_TO_OPEN_CONTENT_MODEL #/items/1"],
            Incompatible,
        ),
        (
            "an empty-schema position added to an open tuple",
            r#"{"type": "array", "additionalItems": true, "items": [{"type": "number"}]}"#,
            r#"{"type": "array", "additionalItems": true, "items": [{"type": "number"}, true]}"#,
            &["ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/items/1"],
            Compatible,
        ),
        (
            "a position added to a closed tuple",
            r#"{"type": "array", "items": [{"type": "string"}], "additionalItems": false}"#,
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": false}"#,
            &["ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/1"],
            Compatible,
        ),
        (
            "a position removed from a closed tuple",
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": false}"#,
            r#"{"type": "array", "items": [{"type": "string"}], "additionalItems": false}"#,
            &["ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL #/items/1"],
            Incompatible,
        ),
        (
            "a false position removed from a closed tuple",
            r#"{"type": "array", "additionalItems": false, "items": [{"type": "number"}, false]}"#,
            r#"{"type": "array", "additionalItems": false, "items": [{"type": "number"}]}"#,
            &["ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL #/items/1"],
            Compatible,
        ),
        (
            "a closed tuple opened while losing a position",
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}], "additionalItems": false}"#,
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": true}"#,
            &[
                "ADDITIONAL_ITEMS_ADDED #/additionalItems",
                "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/2",
            ],
            Compatible,
        ),
        (
            "a position added, covered by additionalItems",
            r#"{"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "string"}}"#,
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "string"}], "additionalItems": {"type": "string"}}"#,
            &["ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1"],
            Compatible,
        ),
        (
            "a position added, not covered",
            r#"{"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "string"}}"#,
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": {"type": "string"}}"#,
            &[
                "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1",
                "TYPE_CHANGED #/items/1",
            ],
            Incompatible,
        ),
        (
            "a position removed, covered by a wider oneOf",
            r#"{"type": "array", "items": [{"type": "string"}, {"oneOf": [{"type": "null"}, {"type": "string"}]}],
                "additionalItems": {"oneOf": [{"type": "null"}, {"type": "string"}]}}"#,
            r#"{"type": "array", "items": [{"type": "string"}],
                "additionalItems": {"oneOf": [{"type": "null"}, {"type": "string"}]}}"#,
            &["ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1"],
            Compatible,
        ),
        (
            "a position removed, not covered",
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": {"type": "string"}}"#,
            r#"{"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "string"}}"#,
            &[
                "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1",
                "TYPE_CHANGED #/items/1",
            ],
            Incompatible,
        ),
    ]);
}

#[test]
fn additional_items() {
    run(&[
        (
            "removed",
            r#"{"additionalItems": true}"#,
            r#"{"additionalItems": false}"#,
            &["ADDITIONAL_ITEMS_REMOVED #/additionalItems"],
            Incompatible,
        ),
        (
            "narrowed to a schema",
            r#"{"type": "array", "items": [{"type": "string"}]}"#,
            r#"{"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "string"}}"#,
            &["ADDITIONAL_ITEMS_NARROWED #/additionalItems"],
            Incompatible,
        ),
        (
            "extended from a schema",
            r#"{"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "number"}}"#,
            r#"{"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": true}"#,
            &[
                "ADDITIONAL_ITEMS_EXTENDED #/additionalItems",
                "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1",
            ],
            Compatible,
        ),
        (
            "the schema changed",
            r#"{"additionalItems": {"type": "string"}}"#,
            r#"{"additionalItems": {"type": "number"}}"#,
            &["TYPE_CHANGED #/additionalItems"],
            Incompatible,
        ),
    ]);
}

#[test]
fn bounds_and_uniqueness() {
    run(&[
        (
            "maxItems decreased",
            r#"{"type": "array", "maxItems": 2}"#,
            r#"{"type": "array", "maxItems": 1}"#,
            &["MAX_ITEMS_DECREASED #/maxItems"],
            Incompatible,
        ),
        (
            "maxItems added",
            r#"{"type": "array"}"#,
            r#"{"type": "array", "maxItems": 10}"#,
            &["MAX_ITEMS_ADDED #/maxItems"],
            Incompatible,
        ),
        (
            "maxItems increased",
            r#"{"type": "array", "maxItems": 1}"#,
            r#"{"type": "array", "maxItems": 2}"#,
            &["MAX_ITEMS_INCREASED #/maxItems"],
            Compatible,
        ),
        (
            "minItems removed",
            r#"{"type": "array", "minItems": 1}"#,
            r#"{"type": "array"}"#,
            &["MIN_ITEMS_REMOVED #/minItems"],
            Compatible,
        ),
        (
            "minItems increased",
            r#"{"type": "array", "minItems": 1}"#,
            r#"{"type": "array", "minItems": 2}"#,
            &["MIN_ITEMS_INCREASED #/minItems"],
            Incompatible,
        ),
        (
            "minItems decreased",
            r#"{"type": "array", "minItems": 2}"#,
            r#"{"type": "array", "minItems": 1}"#,
            &["MIN_ITEMS_DECREASED #/minItems"],
            Compatible,
        ),
        (
            "uniqueItems removed",
            r#"{"type": "array", "uniqueItems": true}"#,
            r#"{"type": "array"}"#,
            &["UNIQUE_ITEMS_REMOVED #/uniqueItems"],
            Compatible,
        ),
        (
            "uniqueItems added",
            r#"{"type": "array"}"#,
            r#"{"type": "array", "uniqueItems": true}"#,
            &["UNIQUE_ITEMS_ADDED #/uniqueItems"],
            Incompatible,
        ),
        (
            "uniqueItems false is no constraint",
            r#"{"type": "array"}"#,
            r#"{"type": "array", "uniqueItems": false}"#,
            &[],
            Compatible,
        ),
        (
            "maxContains decreased",
            r#"{"type": "array", "contains": {"type": "number"}, "maxContains": 3}"#,
            r#"{"type": "array", "contains": {"type": "number"}, "maxContains": 2}"#,
            &["MAX_CONTAINS_DECREASED #/maxContains"],
            Incompatible,
        ),
    ]);
}
