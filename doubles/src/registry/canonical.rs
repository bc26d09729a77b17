//! The form a schema is stored and compared in, so that the same schema
//! written differently gets the same ID, as the registry's
//! `canonicalString()` does. Avro and JSON Schema are JSON, compacted with
//! their keys in the order written; Protobuf is its text with blank lines
//! and indentation dropped.

use streamkeeper::schemas::SchemaType;

/// The canonical text, or why the text is not a schema of its type.
pub fn canonical(schema_type: SchemaType, text: &str) -> Result<String, String> {
    match schema_type {
        SchemaType::Avro | SchemaType::Json => {
            serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| e.to_string())?;
            Ok(compact_json(text))
        }
        SchemaType::Protobuf => Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")),
    }
}

/// Valid JSON without the whitespace between tokens. Re-serialising
/// through `serde_json::Value` would sort object keys, which the registry
/// does not do.
fn compact_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_outside_strings_goes_and_key_order_stays() {
        let text = "{   \"type\":   \"record\", \"name\" : \"a b\",\n \"fields\": [ ],\"doc\":\"say \\\" hi \"}";
        assert_eq!(
            canonical(SchemaType::Avro, text).expect("valid"),
            r#"{"type":"record","name":"a b","fields":[],"doc":"say \" hi "}"#
        );
    }

    #[test]
    fn invalid_json_is_not_a_schema() {
        assert!(canonical(SchemaType::Json, "{\"type\": ").is_err());
        assert!(canonical(SchemaType::Avro, "not json").is_err());
    }

    #[test]
    fn protobuf_drops_indentation_and_blank_lines() {
        let text = "syntax = \"proto3\";\n\n  message A {\n    string a = 1;\n  }\n";
        assert_eq!(
            canonical(SchemaType::Protobuf, text).expect("text"),
            "syntax = \"proto3\";\nmessage A {\nstring a = 1;\n}"
        );
    }
}
