//! `allOf`, `anyOf`, `oneOf`: criteria, branch counts, and branches
//! matched by compatibility rather than position.

use super::*;

/// `{"type": "object", "properties": {"p": <branch>}}`, as Confluent's
/// combined-schema resources write their cases.
macro_rules! prop {
    ($p:literal) => {
        concat!(r#"{"type": "object", "properties": {"p": "#, $p, "}}")
    };
}

#[test]
fn branches_match_by_compatibility_not_position() {
    run(&[
        (
            "allOf reordered",
            prop!(r#"{"allOf": [{"enum": ["one", "two"]}, {"type": "string"}, {"maxLength": 5}]}"#),
            prop!(r#"{"allOf": [{"maxLength": 5}, {"enum": ["one", "two"]}, {"type": "string"}]}"#),
            &[],
            Compatible,
        ),
        (
            "allOf with a branch changed",
            prop!(r#"{"allOf": [{"enum": ["one", "two"]}, {"type": "string"}, {"maxLength": 5}]}"#),
            prop!(r#"{"allOf": [{"maxLength": 5}, {"enum": ["one", "two"]}, {"type": "number"}]}"#),
            &["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/properties/p"],
            Incompatible,
        ),
        (
            "duplicates in the writer collapse",
            prop!(r#"{"allOf": [{"type": "string"}, {"type": "string"}]}"#),
            prop!(r#"{"allOf": [{"type": "string"}]}"#),
            &[],
            Compatible,
        ),
        (
            "duplicates in the reader collapse",
            prop!(r#"{"allOf": [{"type": "string"}]}"#),
            prop!(r#"{"allOf": [{"type": "string"}, {"type": "string"}]}"#),
            &[],
            Compatible,
        ),
        (
            "a singleton's branch changed",
            r#"{"oneOf": [{"type": "string"}]}"#,
            r#"{"oneOf": [{"type": "number"}]}"#,
            &["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"],
            Incompatible,
        ),
        (
            "a branch's compatible changes are kept, at the writer's index",
            prop!(r#"{"oneOf": [{"type": "string", "maxLength": 5}]}"#),
            prop!(
                r#"{"oneOf": [{"type": "boolean"}, {"type": "number"}, {"title": "s", "type": "string", "maxLength": 8}]}"#
            ),
            &[
                "MAX_LENGTH_INCREASED #/properties/p/oneOf/0/maxLength",
                "SUM_TYPE_EXTENDED #/properties/p",
                "TITLE_CHANGED #/properties/p/oneOf/0",
            ],
            Compatible,
        ),
        (
            "an object branch changed inside a oneOf",
            r#"{"oneOf": [{"properties": {"foo": {"type": "string"}}}]}"#,
            r#"{"oneOf": [{"properties": {"foo": {"type": "number"}}}]}"#,
            &["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"],
            Incompatible,
        ),
    ]);
}

#[test]
fn sums_and_products() {
    run(&[
        (
            "a oneOf branch added",
            prop!(r#"{"oneOf": [{"type": "string"}]}"#),
            prop!(r#"{"oneOf": [{"type": "boolean"}, {"type": "number"}, {"type": "string"}]}"#),
            &["SUM_TYPE_EXTENDED #/properties/p"],
            Compatible,
        ),
        (
            "a oneOf branch removed",
            prop!(r#"{"oneOf": [{"type": "number"}, {"type": "string"}]}"#),
            prop!(r#"{"oneOf": [{"type": "string"}]}"#),
            &["SUM_TYPE_NARROWED #/properties/p"],
            Incompatible,
        ),
        (
            "an anyOf branch removed",
            r#"{"anyOf": [{"type": "number"}, {"type": "string"}]}"#,
            r#"{"anyOf": [{"type": "string"}]}"#,
            &["SUM_TYPE_NARROWED #/"],
            Incompatible,
        ),
        (
            "an allOf branch removed",
            prop!(r#"{"allOf": [{"enum": ["one", "two"]}, {"type": "string"}]}"#),
            prop!(r#"{"allOf": [{"type": "string"}]}"#),
            &["PRODUCT_TYPE_NARROWED #/properties/p"],
            Compatible,
        ),
        (
            "an allOf branch added",
            prop!(r#"{"allOf": [{"type": "string"}]}"#),
            prop!(r#"{"allOf": [{"enum": ["one", "two"]}, {"type": "string"}]}"#),
            &["PRODUCT_TYPE_EXTENDED #/properties/p"],
            Incompatible,
        ),
        (
            "a plain schema into an anyOf",
            prop!(r#"{"type": "string"}"#),
            prop!(r#"{"anyOf": [{"type": "number"}, {"type": "string"}]}"#),
            &["SUM_TYPE_EXTENDED #/properties/p"],
            Compatible,
        ),
        (
            "a plain schema into a oneOf, with a relaxed constraint",
            r#"{"type": "string", "maxLength": 3}"#,
            r#"{"oneOf": [{"type": "number"}, {"type": "string"}]}"#,
            &["MAX_LENGTH_REMOVED #/maxLength", "SUM_TYPE_EXTENDED #/"],
            Compatible,
        ),
        (
            "null into an optional oneOf",
            r#"{"type": "null"}"#,
            r#"{"oneOf": [{"type": "number"}, {"type": "null"}]}"#,
            &["SUM_TYPE_EXTENDED #/"],
            Compatible,
        ),
        (
            "a plain schema into a singleton allOf",
            prop!(r#"{"type": "string"}"#),
            prop!(r#"{"allOf": [{"type": "string"}]}"#),
            &[],
            Compatible,
        ),
        (
            "a plain schema into a larger allOf",
            prop!(r#"{"type": "string"}"#),
            prop!(r#"{"allOf": [{"type": "number"}, {"type": "string"}]}"#),
            &["TYPE_CHANGED #/properties/p"],
            Incompatible,
        ),
        (
            "a singleton oneOf to its branch",
            r#"{"oneOf": [{"type": "string"}]}"#,
            r#"{"type": "string"}"#,
            &[],
            Compatible,
        ),
        (
            "a oneOf to one of its branches",
            r#"{"oneOf": [{"type": "string"}, {"type": "null"}]}"#,
            r#"{"type": "string"}"#,
            &["TYPE_CHANGED #/"],
            Incompatible,
        ),
    ]);
}

#[test]
fn criteria() {
    run(&[
        (
            "oneOf to anyOf",
            prop!(r#"{"oneOf": [{"type": "string"}]}"#),
            prop!(r#"{"anyOf": [{"type": "string"}]}"#),
            &["COMBINED_TYPE_EXTENDED #/properties/p"],
            Compatible,
        ),
        (
            "oneOf to a larger anyOf",
            prop!(r#"{"oneOf": [{"type": "string"}]}"#),
            prop!(r#"{"anyOf": [{"type": "number"}, {"type": "string"}]}"#),
            &[
                "COMBINED_TYPE_EXTENDED #/properties/p",
                "SUM_TYPE_EXTENDED #/properties/p",
            ],
            Compatible,
        ),
        (
            "oneOf to a smaller anyOf",
            prop!(r#"{"oneOf": [{"type": "number"}, {"type": "string"}]}"#),
            prop!(r#"{"anyOf": [{"type": "string"}]}"#),
            &[
                "COMBINED_TYPE_EXTENDED #/properties/p",
                "SUM_TYPE_NARROWED #/properties/p",
            ],
            Incompatible,
        ),
        (
            "allOf to a smaller anyOf",
            prop!(r#"{"allOf": [{"type": "number"}, {"type": "string"}]}"#),
            prop!(r#"{"anyOf": [{"type": "string"}]}"#),
            &[
                "COMBINED_TYPE_EXTENDED #/properties/p",
                "PRODUCT_TYPE_NARROWED #/properties/p",
            ],
            Compatible,
        ),
        (
            "anyOf to a smaller oneOf",
            prop!(r#"{"anyOf": [{"type": "number"}, {"type": "string"}]}"#),
            prop!(r#"{"oneOf": [{"type": "string"}]}"#),
            &["COMBINED_TYPE_CHANGED #/properties/p"],
            Incompatible,
        ),
        (
            "singleton anyOf to a larger oneOf",
            prop!(r#"{"anyOf": [{"type": "string"}]}"#),
            prop!(r#"{"oneOf": [{"type": "number"}, {"type": "string"}]}"#),
            &[
                "COMBINED_TYPE_EXTENDED #/properties/p",
                "SUM_TYPE_EXTENDED #/properties/p",
            ],
            Compatible,
        ),
        (
            "allOf to a smaller oneOf",
            prop!(r#"{"allOf": [{"type": "number"}, {"type": "string"}]}"#),
            prop!(r#"{"oneOf": [{"type": "string"}]}"#),
            &[
                "COMBINED_TYPE_EXTENDED #/properties/p",
                "PRODUCT_TYPE_NARROWED #/properties/p",
            ],
            Compatible,
        ),
        (
            "singleton anyOf to singleton allOf",
            prop!(r#"{"anyOf": [{"type": "string"}]}"#),
            prop!(r#"{"allOf": [{"type": "string"}]}"#),
            &["COMBINED_TYPE_EXTENDED #/properties/p"],
            Compatible,
        ),
        (
            "singleton oneOf to a larger allOf",
            prop!(r#"{"oneOf": [{"type": "string"}]}"#),
            prop!(r#"{"allOf": [{"type": "number"}, {"type": "string"}]}"#),
            &["COMBINED_TYPE_CHANGED #/properties/p"],
            Incompatible,
        ),
        (
            "oneOf to a singleton allOf",
            r#"{"oneOf": [{"type": "string"}, {"type": "integer"}]}"#,
            r#"{"allOf": [{"type": "string"}]}"#,
            &["COMBINED_TYPE_CHANGED #/"],
            Incompatible,
        ),
    ]);
}
