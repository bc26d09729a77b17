//! `$ref` within a schema and to referenced documents, and recursion.

use serde_json::{Value, json};

use super::*;

#[test]
fn local_references_are_followed_without_changing_the_path() {
    run(&[
        (
            "a definition's type changed",
            r##"{"type": "array", "items": {"$ref": "#/definitions/someRef"},
                "definitions": {"someRef": {"type": "string"}}}"##,
            r##"{"type": "array", "items": {"$ref": "#/definitions/someRef"},
                "definitions": {"someRef": {"type": "number"}}}"##,
            &["TYPE_CHANGED #/items"],
            Incompatible,
        ),
        (
            "moving a schema into a definition",
            r#"{"type": "string"}"#,
            r##"{"$ref": "#/definitions/someRef", "definitions": {"someRef": {"type": "string"}}}"##,
            &[],
            Compatible,
        ),
        (
            "moving a schema out of a definition",
            r##"{"$ref": "#/definitions/someRef", "definitions": {"someRef": {"type": "string"}}}"##,
            r#"{"type": "string"}"#,
            &[],
            Compatible,
        ),
        (
            "$defs",
            r##"{"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "integer"}}}"##,
            r##"{"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}}"##,
            &["TYPE_CHANGED #/properties/a"],
            Incompatible,
        ),
        (
            "a $defs pointer finds definitions, as in Confluent",
            r##"{"properties": {"a": {"$ref": "#/$defs/A"}}, "definitions": {"A": {"type": "integer"}}}"##,
            r#"{"properties": {"a": {"type": "number"}}}"#,
            &["TYPE_EXTENDED #/properties/a"],
            Compatible,
        ),
        (
            "draft-07 ignores keywords beside $ref",
            r##"{"properties": {"a": {"$ref": "#/definitions/A", "maxLength": 1}},
                "definitions": {"A": {"type": "string"}}}"##,
            r#"{"properties": {"a": {"type": "string"}}}"#,
            &[],
            Compatible,
        ),
        (
            "a default beside $ref lets the reader require the property",
            r##"{"properties": {"a": {"$ref": "#/definitions/A"}}, "definitions": {"A": {"type": "string"}}}"##,
            r##"{"properties": {"a": {"$ref": "#/definitions/A", "default": "x"}}, "required": ["a"],
                "definitions": {"A": {"type": "string"}}}"##,
            &["REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED #/required/a"],
            Compatible,
        ),
        (
            "an anchor",
            r##"{"properties": {"a": {"$ref": "#num"}}, "definitions": {"n": {"$id": "#num", "type": "integer"}}}"##,
            r#"{"properties": {"a": {"type": "integer", "minimum": 0}}}"#,
            &[
                "ID_CHANGED #/properties/a",
                "MINIMUM_ADDED #/properties/a/minimum",
            ],
            Incompatible,
        ),
        (
            "an escaped pointer",
            r##"{"properties": {"a": {"$ref": "#/definitions/x~1y%20z"}}, "definitions": {"x/y z": {"type": "boolean"}}}"##,
            r#"{"properties": {"a": {"type": "null"}}}"#,
            &["TYPE_CHANGED #/properties/a"],
            Incompatible,
        ),
    ]);
}

const CUSTOMER: &str = r##"{"type": "object", "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/definitions/Address"}},
  "definitions": {"Address": {"type": "object", "properties": {"zip": {"type": "string"}}}}}"##;

const CUSTOMER_V2: &str = r##"{"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 10},
    "address": {"$ref": "#/definitions/Address"}},
  "definitions": {"Address": {"type": "object", "properties": {"zip": {"type": "integer"}}}}}"##;

const ORDER: &str = r#"{"type": "object", "properties": {
    "customer": {"$ref": "customer.json"},
    "shipTo": {"$ref": "customer.json#/definitions/Address"}}}"#;

#[test]
fn references_to_other_documents() {
    let writer = parse_with(ORDER, &[("customer.json", CUSTOMER)]);
    let reader = parse_with(ORDER, &[("customer.json", CUSTOMER_V2)]);
    assert_eq!(
        changes(&writer, &reader),
        [
            "MAX_LENGTH_ADDED #/properties/customer/properties/name/maxLength",
            "TYPE_CHANGED #/properties/customer/properties/address/properties/zip",
            "TYPE_CHANGED #/properties/shipTo/properties/zip",
        ]
    );
    assert!(changes(&writer, &parse_with(ORDER, &[("customer.json", CUSTOMER)])).is_empty());
}

#[test]
fn references_resolve_against_the_root_id() {
    let order = r#"{"$id": "http://example.com/schemas/order.json",
        "properties": {"c": {"$ref": "http://example.com/schemas/customer.json"}}}"#;
    let writer = parse_with(order, &[("customer.json", CUSTOMER)]);
    let reader = parse_with(order, &[("customer.json", CUSTOMER_V2)]);
    assert_eq!(changes(&writer, &reader).len(), 2);
    // And a referenced document's own relative references resolve
    // against where it was registered.
    let nested = r#"{"properties": {"m": {"$ref": "money.json"}}}"#;
    let money = r#"{"type": "number"}"#;
    let root = r#"{"$id": "http://example.com/a/root.json", "properties": {"x": {"$ref": "sub/nested.json"}}}"#;
    let schema = parse_with(
        root,
        &[("sub/nested.json", nested), ("sub/money.json", money)],
    );
    assert!(changes(&schema, &schema).is_empty());
}

/// Confluent's `testRecursiveOneOfUnionTerminates` and
/// `...DetectsIncompatibleChange`: twelve product types, each with two
/// properties that are a oneOf over all twelve.
fn trade(asset_id_type: &str) -> String {
    let types = [
        "Asset",
        "Basket",
        "Swap",
        "Bond",
        "Option",
        "Future",
        "Forward",
        "Loan",
        "Repo",
        "Equity",
        "Index",
        "CommodityLeg",
    ];
    let union = json!({"oneOf": types.iter().map(|t| json!({"$ref": format!("#/definitions/{t}")})).collect::<Vec<_>>()});
    let mut definitions = serde_json::Map::new();
    for t in types {
        let id_type = if t == "Asset" {
            asset_id_type
        } else {
            "string"
        };
        definitions.insert(
            t.to_owned(),
            json!({"type": "object", "properties": {
                "id": {"type": id_type}, "underlying": union, "referenceProduct": union}}),
        );
    }
    json!({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Trade", "type": "object",
        "additionalProperties": true, "definitions": definitions,
        "properties": {"tradeId": {"type": "string"}, "product": union}})
    .to_string()
}

#[test]
fn recursive_unions_terminate_and_still_find_changes() {
    let original = parse(&trade("string"));
    assert!(changes(&original, &parse(&trade("string"))).is_empty());
    assert_eq!(verdict(&original, &parse(&trade("number"))), Incompatible);
}

/// Confluent's `testRecursiveOneOfMemoizationDoesNotMaskIncompatibility`:
/// the changes sit behind a cycle (T0 → T2 → T0) that a single memoised
/// pass first assumes compatible.
fn masking(t0_id: &str, t1_id: &str) -> String {
    let object = |id: &str, target: &str| {
        json!({"type": "object", "additionalProperties": true, "properties": {
            "id": {"type": id},
            "ref": {"oneOf": [{"$ref": format!("#/definitions/{target}")}]}}})
    };
    json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "additionalProperties": true,
        "definitions": {"T0": object(t0_id, "T2"), "T1": object(t1_id, "T2"), "T2": object("integer", "T0")},
        "properties": {"root": {"oneOf": [{"$ref": "#/definitions/T0"}, {"$ref": "#/definitions/T1"}]}}})
    .to_string()
}

#[test]
fn memoisation_does_not_mask_changes_behind_a_cycle() {
    let writer = parse(&masking("integer", "boolean"));
    let reader = parse(&masking("boolean", "number"));
    assert_eq!(verdict(&writer, &reader), Incompatible);
}

#[test]
fn a_self_referencing_schema_compares_with_itself() {
    let tree = r##"{"type": "object", "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#"}}}}"##;
    let deeper = r##"{"type": "object", "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3}}}"##;
    assert!(changes(&parse(tree), &parse(tree)).is_empty());
    // Found at the top and again at each level the fixpoint unrolls.
    let found = changes(&parse(tree), &parse(deeper));
    assert!(found.contains(&"MAX_ITEMS_ADDED #/properties/children/maxItems".to_owned()));
    assert!(
        found.iter().all(|c| c.starts_with("MAX_ITEMS_ADDED ")),
        "{found:?}"
    );
    // A change inside the recursion is found at its first occurrence.
    let narrowed = tree.replace(
        r#"{"type": "integer"}"#,
        r#"{"type": "integer", "maximum": 9}"#,
    );
    assert!(
        changes(&parse(tree), &parse(&narrowed))
            .contains(&"MAXIMUM_ADDED #/properties/value/maximum".to_owned())
    );
}

/// Confluent's `CircularRefSchemaDiffTest`: 2020-12, twelve branches,
/// five circular properties each, `$ref` beside `properties`.
#[test]
fn wide_circular_unions_stay_fast() {
    let branches = 12;
    let mut defs = serde_json::Map::new();
    defs.insert(
        "SimpleId".into(),
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
    );
    defs.insert(
        "Base".into(),
        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
    );
    defs.insert(
        "ProductOrId".into(),
        json!({"oneOf": [{"$ref": "#/$defs/SimpleId"}, {"$ref": "#/$defs/Product"}]}),
    );
    for i in 0..branches {
        let mut properties: serde_json::Map<String, Value> = (0..5)
            .map(|p| (format!("ref{p}"), json!({"$ref": "#/$defs/ProductOrId"})))
            .collect();
        properties.insert(
            "tag".into(),
            json!({"type": "string", "const": format!("type{i}")}),
        );
        defs.insert(
            format!("Type{i}"),
            json!({"$ref": "#/$defs/Base", "type": "object", "properties": properties, "required": ["ref0", "tag"]}),
        );
    }
    let product: Vec<Value> = (0..branches)
        .map(|i| json!({"$ref": format!("#/$defs/Type{i}")}))
        .collect();
    defs.insert("Product".into(), json!({"oneOf": product}));
    let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs,
        "$ref": "#/$defs/Product"})
    .to_string();
    let start = std::time::Instant::now();
    assert!(changes(&parse(&schema), &parse(&schema)).is_empty());
    assert!(start.elapsed().as_secs() < 10, "took {:?}", start.elapsed());
}

/// Long chains of `$ref` load and compare without deep recursion.
#[test]
fn long_reference_chains() {
    let chain = |length: usize, end: &str| {
        let mut definitions = serde_json::Map::new();
        for i in 0..length {
            definitions.insert(
                format!("d{i}"),
                json!({"$ref": format!("#/definitions/d{}", i + 1)}),
            );
        }
        definitions.insert(format!("d{length}"), json!({"type": end}));
        json!({"$ref": "#/definitions/d0", "definitions": definitions}).to_string()
    };
    let writer = parse(&chain(5_000, "integer"));
    assert!(changes(&writer, &parse(&chain(5_000, "number"))) == ["TYPE_EXTENDED #/"]);
    let looping = json!({"$ref": "#/definitions/a", "definitions": {
        "a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/c"}, "c": {"$ref": "#/definitions/a"}}});
    let error = JsonSchema::parse(&SchemaText::new(SchemaType::Json, looping.to_string()));
    assert!(matches!(
        error,
        Err(crate::schemas::SchemaError::Reference { .. })
    ));
}

/// Found by the long-chain fuzz target: definitions each holding a
/// property that refers to the next nest the comparison once per link,
/// and 1,000 links overflowed the server's 2 MiB stack. Past the depth
/// limit the check stops and says so; within it, it compares as before.
#[test]
fn chains_of_properties_deeper_than_the_limit_stop_the_comparison() {
    let chain = |length: usize, end: &str| {
        let mut definitions = serde_json::Map::new();
        for i in 0..length {
            definitions.insert(
                format!("d{i}"),
                json!({"type": "object", "properties": {
                    "next": {"$ref": format!("#/definitions/d{}", i + 1)}}}),
            );
        }
        definitions.insert(format!("d{length}"), json!({"type": end}));
        json!({"$ref": "#/definitions/d0", "definitions": definitions}).to_string()
    };
    let found = changes(&parse(&chain(50, "number")), &parse(&chain(50, "integer")));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("TYPE_NARROWED #/properties/next"),
        "{found:?}"
    );
    let deep = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            changes(
                &parse(&chain(5_000, "number")),
                &parse(&chain(5_000, "integer")),
            )
        })
        .expect("thread")
        .join()
        .expect("no overflow");
    assert_eq!(deep.len(), 1, "{deep:?}");
    assert!(deep[0].starts_with("TOO_COMPLEX_TO_CHECK"), "{deep:?}");
}
