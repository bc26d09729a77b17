//! JSON Schema compatibility with the semantics of Confluent Schema
//! Registry's `json-schema-provider` (`SchemaDiff` and its per-type
//! diffs), on schemas loaded the way its everit loader loads them.
//!
//! [`can_read`] runs Confluent's `compare(original, update)` with the
//! writer's schema as the original and the reader's as the update (for
//! BACKWARD, the old schema wrote the data the new one reads), and reports
//! the differences the policy does not accept.
//!
//! Each [`Incompatibility`] has:
//! - `kind`: the name of Confluent's `Difference.Type`
//!   (`TYPE_CHANGED`, `REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL`, ...);
//! - `location`: Confluent's `jsonPath`, a JSON Pointer written as a URI
//!   fragment, to the place the diff was at while walking both schemas side
//!   by side: `#/` for the root, `#/properties/age`,
//!   `#/properties/tags/items` (every item), `#/properties/pair/items/0`
//!   (a tuple position), `#/properties/p/oneOf/1/maxLength` (a branch, by
//!   its index in the writer's schema), `#/required/age`,
//!   `#/dependencies/age`, `#/additionalProperties`. A keyword that changed
//!   ends the pointer (`/maxLength`, `/enum`, `/pattern`); a change of type
//!   or of a whole property points at the schema itself. `$ref`s are
//!   followed without adding to the path. Unlike Confluent, a `/` or `~`
//!   in a property name is escaped as RFC 6901 says (`~1`, `~0`);
//! - `message`: a sentence naming the place and what differs, in terms of
//!   the writer's and the reader's schema.
//!
//! Drafts 4 to 7 are read as draft-07; a `$schema` of 2019-09 or 2020-12
//! switches to those drafts' keywords (`prefixItems`, `dependentRequired`,
//! `dependentSchemas`, `unevaluatedProperties`, `unevaluatedItems`, `$ref`
//! beside other keywords).

mod array;
mod combined;
mod compare;
mod content_model;
mod decimal;
mod describe;
mod difference;
mod limit;
mod load;
mod message;
mod model;
mod number;
mod object;
mod refs;
mod string;
#[cfg(test)]
mod tests;
mod values;

pub use difference::Policy;

use serde_json::Value;

use super::{Incompatibility, SchemaError, SchemaText, SchemaType};
use model::Node;
use refs::Documents;

/// A parsed JSON Schema with the schemas it references.
#[derive(Debug)]
pub struct JsonSchema {
    /// The root is node 0.
    nodes: Vec<Node>,
}

impl JsonSchema {
    /// Parses the schema and loads every `$ref` it reaches, in itself or in
    /// `schema.references` (looked up by the `$ref`'s document part).
    pub fn parse(schema: &SchemaText) -> Result<JsonSchema, SchemaError> {
        let root = parse_json(&schema.text, "the schema")?;
        let references = schema
            .references
            .iter()
            .map(|r| {
                Ok((
                    r.name.clone(),
                    parse_json(&r.text, &format!("reference {:?}", r.name))?,
                ))
            })
            .collect::<Result<Vec<_>, SchemaError>>()?;
        let nodes = load::load(&Documents::new(root, references))?;
        Ok(JsonSchema { nodes })
    }
}

fn parse_json(text: &str, what: &str) -> Result<Value, SchemaError> {
    serde_json::from_str(text).map_err(|e| SchemaError::Parse {
        schema_type: SchemaType::Json,
        detail: format!("{what} is not valid JSON: {e}"),
    })
}

/// Why `reader` cannot read data written with `writer` under Confluent's
/// default (STRICT) policy; empty when it can.
pub fn can_read(reader: &JsonSchema, writer: &JsonSchema) -> Vec<Incompatibility> {
    can_read_with(reader, writer, Policy::Strict)
}

/// [`can_read`] under a chosen policy.
pub fn can_read_with(
    reader: &JsonSchema,
    writer: &JsonSchema,
    policy: Policy,
) -> Vec<Incompatibility> {
    compare::differences(writer, reader, policy)
        .into_iter()
        .filter(|d| !policy.allows(d.kind))
        .map(|d| Incompatibility {
            kind: d.kind.name().to_owned(),
            location: format!("#/{}", d.path),
            message: message::sentence(&d),
        })
        .collect()
}

impl JsonSchema {
    /// The properties of the object at the root (`$ref`s followed; none
    /// when the root is not an object), each with its type in JSON
    /// Schema's words.
    pub fn top_fields(&self) -> Vec<super::fields::FieldShape> {
        let Some(model::Shape::Object(o)) = self.followed(0).map(|n| &n.shape) else {
            return Vec::new();
        };
        o.properties
            .iter()
            .map(|(name, id)| super::fields::FieldShape {
                name: name.clone(),
                number: None,
                aliases: Vec::new(),
                ty: self.type_words(*id),
            })
            .collect()
    }

    /// The node `id` names, through `$ref`s (a loop of them ends as none).
    fn followed(&self, mut id: model::NodeId) -> Option<&Node> {
        for _ in 0..=self.nodes.len() {
            match &self.nodes.get(id)?.shape {
                model::Shape::Ref(to) => id = *to,
                _ => return self.nodes.get(id),
            }
        }
        None
    }

    fn type_words(&self, id: model::NodeId) -> String {
        use model::Shape;
        match self.followed(id).map(|n| &n.shape) {
            Some(Shape::Any) => "any",
            Some(Shape::Nothing) => "nothing",
            Some(Shape::Boolean) => "boolean",
            Some(Shape::Null) => "null",
            Some(Shape::String(_)) => "string",
            Some(Shape::Number(n)) if n.integer => "integer",
            Some(Shape::Number(_)) => "number",
            Some(Shape::Object(_)) => "object",
            Some(Shape::Array(_)) => "array",
            Some(Shape::Enum(_)) => "enum",
            Some(Shape::Const(_)) => "const",
            Some(Shape::Combined(_)) => "combined",
            Some(Shape::Not(_)) => "not",
            Some(Shape::Conditional) => "conditional",
            Some(Shape::Ref(_)) | None => "unresolved",
        }
        .to_owned()
    }
}
