//! Short descriptions of schemas and values for messages: `integer`,
//! `string or null`, `enum ["a", "b"]`.

use serde_json::Value;

use super::JsonSchema;
use super::model::{Criterion, NodeId, Shape};

/// Values longer than this are cut, so a message stays a sentence.
const MAX_TEXT: usize = 80;

/// What kind of values a schema describes, one level deep.
pub(super) fn shape(schema: &JsonSchema, id: NodeId) -> String {
    match &schema.nodes[id].shape {
        Shape::Combined(c) => {
            let branches: Vec<String> = c.distinct.iter().map(|&b| branch(schema, b)).collect();
            match c.criterion {
                Criterion::Any => branches.join(" or "),
                Criterion::One => format!("one of {}", branches.join(", ")),
                Criterion::All => format!("all of {}", branches.join(", ")),
            }
        }
        _ => branch(schema, id),
    }
}

fn branch(schema: &JsonSchema, id: NodeId) -> String {
    match &schema.nodes[id].shape {
        Shape::Any => "any value".into(),
        Shape::Nothing => "no value".into(),
        Shape::Boolean => "boolean".into(),
        Shape::Null => "null".into(),
        Shape::String(_) => "string".into(),
        Shape::Number(n) if n.integer => "integer".into(),
        Shape::Number(_) => "number".into(),
        Shape::Object(_) => "object".into(),
        Shape::Array(_) => "array".into(),
        Shape::Enum(values) => format!("enum {}", self::values(values)),
        Shape::Const(v) => format!("const {}", value(v)),
        Shape::Combined(c) => c.criterion.keyword().into(),
        Shape::Not(_) => "not".into(),
        Shape::Conditional => "if/then/else".into(),
        Shape::Ref(target) => branch(schema, *target),
    }
}

pub(super) fn values(values: &[Value]) -> String {
    cut(Value::Array(values.to_vec()).to_string())
}

pub(super) fn value(value: &Value) -> String {
    cut(value.to_string())
}

fn cut(text: String) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}
