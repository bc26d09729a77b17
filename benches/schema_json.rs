//! JSON Schema compatibility of a large producer schema: a 1,000-property
//! object (strings, numbers, enums, nested objects, arrays, unions, a
//! shared definition) checked against 50 reader schemas, the way one
//! proposed schema is checked against every consumer group's.
//! `cargo bench -p streamkeeper --features schema --bench schema_json`
//! prints the figures.

use std::hint::black_box;
use std::time::Instant;

use serde_json::{Map, Value, json};
use streamkeeper::schemas::json::{JsonSchema, can_read};
use streamkeeper::schemas::{SchemaText, SchemaType};

const PROPERTIES: usize = 1_000;
const READERS: usize = 50;

/// A deterministic mix of property schemas.
fn property(i: usize) -> Value {
    match i % 8 {
        0 => json!({"type": "string", "maxLength": 64 + i % 32}),
        1 => json!({"type": "integer", "minimum": 0, "maximum": 1_000_000}),
        2 => json!({"type": "number", "multipleOf": 0.01}),
        3 => json!({"type": "string", "enum": ["red", "green", "blue", "cyan", "magenta"]}),
        4 => {
            json!({"type": "object", "additionalProperties": false, "required": ["id"], "properties": {
            "id": {"type": "string", "pattern": "^[a-z0-9-]+$"},
            "count": {"type": "integer"},
            "flag": {"type": "boolean"},
            "note": {"type": ["string", "null"]},
            "at": {"type": "string", "format": "date-time"}}})
        }
        5 => json!({"type": "array", "items": {"type": "string"}, "maxItems": 100}),
        6 => json!({"oneOf": [{"type": "null"}, {"$ref": "#/definitions/Money"}]}),
        _ => json!({"type": "array", "items": {"type": "object", "properties": {
            "sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}}}),
    }
}

fn writer() -> Value {
    let properties: Map<String, Value> = (0..PROPERTIES)
        .map(|i| (format!("p{i:04}"), property(i)))
        .collect();
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": properties,
        "required": ["p0000", "p0001"],
        "definitions": {"Money": {"type": "object", "properties": {
            "amount": {"type": "number"}, "currency": {"type": "string", "minLength": 3, "maxLength": 3}}}}
    })
}

/// Reader `v`: a variation of the writer, one in five incompatible.
fn reader(v: usize) -> Value {
    let mut schema = writer();
    let Some(properties) = schema["properties"].as_object_mut() else {
        return schema;
    };
    // The name of a property of kind `kind` (see `property`), chosen by `seed`.
    let slot =
        |seed: usize, kind: usize| format!("p{:04}", (seed * 37) % (PROPERTIES / 8) * 8 + kind);
    match v % 5 {
        // Identical.
        0 => {}
        // Relaxed: string limits raised, integers widened to numbers.
        1 => {
            for (name, p) in properties.iter_mut() {
                if p["maxLength"].is_u64() {
                    p["maxLength"] = json!(1024);
                }
                if p["type"] == "integer" && name.ends_with('1') {
                    p["type"] = json!("number");
                }
            }
        }
        // Properties dropped from the open root model.
        2 => {
            for k in 0..20 {
                properties.remove(&slot(v + k, k % 8));
            }
        }
        // A descriptive change deep inside every nested object.
        3 => {
            for p in properties.values_mut() {
                if let Some(nested) = p.get_mut("properties") {
                    nested["note"]["description"] = json!("free text");
                }
            }
        }
        // Incompatible: a type changed and an enum narrowed.
        _ => {
            properties.insert(slot(v, 0), json!({"type": "boolean"}));
            properties.insert(slot(v, 3), json!({"type": "string", "enum": ["red"]}));
        }
    }
    schema
}

fn parse(text: &str) -> JsonSchema {
    JsonSchema::parse(&SchemaText::new(SchemaType::Json, text)).expect("the bench schemas parse")
}

fn main() {
    let writer_text = writer().to_string();
    let reader_texts: Vec<String> = (0..READERS).map(|v| reader(v).to_string()).collect();
    let start = Instant::now();
    let writer = parse(&writer_text);
    let readers: Vec<JsonSchema> = reader_texts.iter().map(|text| parse(text)).collect();
    let parse_s = start.elapsed().as_secs_f64();
    println!(
        "parse: {} schemas of {PROPERTIES} properties ({} KiB of JSON each) in {:.1} ms ({:.2} ms each)",
        READERS + 1,
        writer_text.len() / 1024,
        parse_s * 1e3,
        parse_s * 1e3 / (READERS + 1) as f64
    );

    for round in 0..3 {
        let start = Instant::now();
        let mut incompatible = 0;
        let mut findings = 0;
        for reader in &readers {
            let found = can_read(black_box(reader), black_box(&writer));
            incompatible += usize::from(!found.is_empty());
            findings += found.len();
        }
        let total_s = start.elapsed().as_secs_f64();
        println!(
            "round {round}: {READERS} checks of a {PROPERTIES}-property schema in {:.1} ms ({:.2} ms each; \
             {incompatible} readers incompatible, {findings} findings)",
            total_s * 1e3,
            total_s * 1e3 / READERS as f64,
        );
    }
}
