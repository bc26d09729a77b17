//! Schema text into the graph [`super::compatibility`] walks.
//!
//! `apache-avro` parses: it validates names, symbols, defaults and unions,
//! resolves named types across the schema and its references
//! (`Schema::parse_str_with_list`), qualifies aliases with their type's
//! namespace, and keeps what Java's check reads (type aliases, enum
//! defaults, field aliases, field defaults, field order). Three things it
//! does not do are done here, each against Java's parser:
//! - a named type defined twice is an error in Java ("Can't redefine"); the
//!   crate lets the second definition win, so definitions are counted;
//! - a record field that is not a JSON object is an error in Java; the crate
//!   skips it, which would shift every later field's position, so the JSON
//!   is walked for that before the crate sees it;
//! - the crate builds a tree in which a named type is written out once and
//!   referred to by name elsewhere; Java's memo needs one node per named
//!   type, so references are resolved to that node.

use std::collections::HashMap;

use apache_avro::Schema;
use apache_avro::error::Details;
use apache_avro::schema::{
    Alias, DecimalSchema, EnumSchema, FixedSchema, InnerDecimalSchema, Name, RecordSchema,
    UuidSchema,
};
use serde_json::Value;

use super::{AvroSchema, Enum, Field, Fixed, Named, Node, NodeId, Record};
use crate::schemas::{ResolvedReference, SchemaError, SchemaText, SchemaType};

/// How deeply the references may nest, summed over all of them, in
/// levels of JSON. The crate resolves a reference to another reference
/// by recursing into it, so a chain of references costs the stack the
/// nesting of every link: 150 one-field records chained so overflowed
/// the server's 2 MiB stack (found by the long-chain fuzz target).
pub(super) const MAX_REFERENCE_NESTING: usize = 256;

pub(super) fn parse(schema: &SchemaText) -> Result<AvroSchema, SchemaError> {
    let mut nesting = 0_usize;
    for reference in &schema.references {
        nesting = nesting.saturating_add(check_reference(reference)?);
    }
    if nesting > MAX_REFERENCE_NESTING {
        return Err(parse_error(format!(
            "its {} references nest {nesting} levels of JSON together; at most \
             {MAX_REFERENCE_NESTING} are read",
            schema.references.len()
        )));
    }
    check_record_fields_are_objects(&json(&schema.text)?)?;
    let (root, definitions) = Schema::parse_str_with_list(
        &schema.text,
        schema.references.iter().map(|r| r.text.as_str()),
    )
    .map_err(crate_error)?;

    let mut graph = Graph::default();
    for tree in std::iter::once(&root).chain(&definitions) {
        graph.declare(tree)?;
    }
    let root = graph.add(&root)?;
    for tree in &definitions {
        graph.add(tree)?;
    }
    graph.finish(root)
}

fn parse_error(detail: impl Into<String>) -> SchemaError {
    SchemaError::Parse {
        schema_type: SchemaType::Avro,
        detail: detail.into(),
    }
}

fn json(text: &str) -> Result<Value, SchemaError> {
    serde_json::from_str(text).map_err(|e| parse_error(format!("not JSON: {e}")))
}

/// The crate reports a name it cannot resolve as an unknown primitive: that
/// is the unresolved reference (Java: "Undefined name").
fn crate_error(error: apache_avro::Error) -> SchemaError {
    match error.details() {
        Details::ParsePrimitive(name) => SchemaError::Reference {
            name: name.clone(),
            detail: "it is not a primitive type, and neither the schema nor its references \
                     define a type of that name"
                .into(),
        },
        _ => parse_error(error.to_string()),
    }
}

/// A reference must be a JSON object naming a record, enum or fixed at its
/// top level. The crate files references by their `name` and, were `type`
/// an object, by that object's name instead, and then panics looking for
/// the first; Java rejects such a reference too ("No type"). Answers how
/// deeply it nests (see [`MAX_REFERENCE_NESTING`]).
fn check_reference(reference: &ResolvedReference) -> Result<usize, SchemaError> {
    let unusable = |detail: String| SchemaError::Reference {
        name: reference.name.clone(),
        detail,
    };
    let value: Value = serde_json::from_str(&reference.text)
        .map_err(|e| unusable(format!("its text is not JSON: {e}")))?;
    match value.get("type") {
        Some(Value::String(t)) if matches!(t.as_str(), "record" | "enum" | "fixed") => {}
        _ => {
            return Err(unusable(
                "its text does not define a record, enum or fixed at its top level".into(),
            ));
        }
    }
    check_record_fields_are_objects(&value)
        .map_err(|e| unusable(format!("its text does not parse: {e}")))?;
    Ok(json_depth(&value))
}

/// Levels of arrays and objects in `value`, counted without recursion.
fn json_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        deepest = deepest.max(depth);
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    deepest
}

/// Walks the places a schema can sit in (a union's branches, a field's,
/// array's or map's type) and rejects a record whose `fields` holds
/// something other than objects.
fn check_record_fields_are_objects(schema: &Value) -> Result<(), SchemaError> {
    match schema {
        Value::Array(branches) => branches
            .iter()
            .try_for_each(check_record_fields_are_objects),
        Value::Object(object) => {
            if let Some(Value::Array(fields)) = object.get("fields") {
                for (position, field) in fields.iter().enumerate() {
                    if !field.is_object() {
                        return Err(parse_error(format!(
                            "field {position} of record {} is not a JSON object: {field}",
                            object.get("name").unwrap_or(&Value::Null)
                        )));
                    }
                    if let Some(field_type) = field.get("type") {
                        check_record_fields_are_objects(field_type)?;
                    }
                }
            }
            ["type", "items", "values"]
                .iter()
                .filter_map(|key| object.get(*key))
                .try_for_each(check_record_fields_are_objects)
        }
        _ => Ok(()),
    }
}

/// The graph under construction. Named types get their node when declared,
/// so that a reference can be resolved before or after its definition is
/// added; the node is filled when the definition is added.
#[derive(Default)]
struct Graph {
    nodes: Vec<Option<Node>>,
    named: HashMap<String, NodeId>,
}

impl Graph {
    fn push(&mut self, node: Option<Node>) -> NodeId {
        self.nodes.push(node);
        NodeId(self.nodes.len() - 1)
    }

    /// Reserves a node for each named type a tree defines (rather than
    /// refers to), and rejects a name defined twice.
    fn declare(&mut self, schema: &Schema) -> Result<(), SchemaError> {
        match schema {
            Schema::Array(array) => self.declare(&array.items),
            Schema::Map(map) => self.declare(&map.types),
            Schema::Union(union) => union.variants().iter().try_for_each(|v| self.declare(v)),
            Schema::Record(record) => {
                self.declare_name(&record.name)?;
                record
                    .fields
                    .iter()
                    .try_for_each(|f| self.declare(&f.schema))
            }
            Schema::Enum(EnumSchema { name, .. }) => self.declare_name(name),
            _ => match fixed_of(schema) {
                Some(fixed) => self.declare_name(&fixed.name),
                None => Ok(()),
            },
        }
    }

    fn declare_name(&mut self, name: &Name) -> Result<(), SchemaError> {
        let full_name = name.fullname(None);
        if self.named.contains_key(&full_name) {
            return Err(parse_error(format!(
                "the type {full_name} is defined more than once"
            )));
        }
        let id = self.push(None);
        self.named.insert(full_name, id);
        Ok(())
    }

    /// The node of a type, logical types dropped for their underlying type.
    fn add(&mut self, schema: &Schema) -> Result<NodeId, SchemaError> {
        let node = match schema {
            Schema::Null => Node::Null,
            Schema::Boolean => Node::Boolean,
            Schema::Int | Schema::Date | Schema::TimeMillis => Node::Int,
            Schema::Long
            | Schema::TimeMicros
            | Schema::TimestampMillis
            | Schema::TimestampMicros
            | Schema::TimestampNanos
            | Schema::LocalTimestampMillis
            | Schema::LocalTimestampMicros
            | Schema::LocalTimestampNanos => Node::Long,
            Schema::Float => Node::Float,
            Schema::Double => Node::Double,
            Schema::Bytes
            | Schema::BigDecimal
            | Schema::Uuid(UuidSchema::Bytes)
            | Schema::Decimal(DecimalSchema {
                inner: InnerDecimalSchema::Bytes,
                ..
            }) => Node::Bytes,
            Schema::String | Schema::Uuid(UuidSchema::String) => Node::String,
            Schema::Array(array) => Node::Array(self.add(&array.items)?),
            Schema::Map(map) => Node::Map(self.add(&map.types)?),
            Schema::Union(union) => Node::Union(
                union
                    .variants()
                    .iter()
                    .map(|v| self.add(v))
                    .collect::<Result<_, _>>()?,
            ),
            Schema::Record(record) => return self.add_record(record),
            Schema::Enum(schema) => return self.define(&schema.name, Node::Enum(enum_of(schema))),
            Schema::Ref { name } => return self.resolve(name),
            Schema::Fixed(fixed)
            | Schema::Duration(fixed)
            | Schema::Uuid(UuidSchema::Fixed(fixed))
            | Schema::Decimal(DecimalSchema {
                inner: InnerDecimalSchema::Fixed(fixed),
                ..
            }) => {
                let node = Node::Fixed(Fixed {
                    named: named(&fixed.name, &fixed.aliases),
                    size: fixed.size,
                });
                return self.define(&fixed.name, node);
            }
        };
        Ok(self.push(Some(node)))
    }

    fn add_record(&mut self, record: &RecordSchema) -> Result<NodeId, SchemaError> {
        let mut fields = Vec::with_capacity(record.fields.len());
        let mut positions = HashMap::with_capacity(record.fields.len());
        for (position, field) in record.fields.iter().enumerate() {
            positions.insert(field.name.clone(), position);
            fields.push(Field {
                name: field.name.clone(),
                aliases: field.aliases.clone(),
                has_default: field.default.is_some(),
                schema: self.add(&field.schema)?,
            });
        }
        let node = Node::Record(Record {
            named: named(&record.name, &record.aliases),
            fields,
            positions,
        });
        self.define(&record.name, node)
    }

    /// Fills the node [`Graph::declare`] reserved for a named type.
    fn define(&mut self, name: &Name, node: Node) -> Result<NodeId, SchemaError> {
        let id = self.resolve(name)?;
        self.nodes[id.0] = Some(node);
        Ok(id)
    }

    fn resolve(&self, name: &Name) -> Result<NodeId, SchemaError> {
        let full_name = name.fullname(None);
        self.named
            .get(&full_name)
            .copied()
            .ok_or_else(|| SchemaError::Reference {
                name: full_name,
                detail: "neither the schema nor its references define a type of that name".into(),
            })
    }

    fn finish(self, root: NodeId) -> Result<AvroSchema, SchemaError> {
        let nodes = self
            .nodes
            .into_iter()
            .collect::<Option<Vec<Node>>>()
            .ok_or_else(|| parse_error("a named type was declared but never defined"))?;
        Ok(AvroSchema { nodes, root })
    }
}

/// The fixed type under a schema, logical type or not.
fn fixed_of(schema: &Schema) -> Option<&FixedSchema> {
    match schema {
        Schema::Fixed(fixed)
        | Schema::Duration(fixed)
        | Schema::Uuid(UuidSchema::Fixed(fixed))
        | Schema::Decimal(DecimalSchema {
            inner: InnerDecimalSchema::Fixed(fixed),
            ..
        }) => Some(fixed),
        _ => None,
    }
}

fn enum_of(schema: &EnumSchema) -> Enum {
    Enum {
        named: named(&schema.name, &schema.aliases),
        symbols: schema.symbols.clone(),
        default: schema.default.clone(),
    }
}

/// The crate has already qualified each alias with its type's namespace.
fn named(name: &Name, aliases: &Option<Vec<Alias>>) -> Named {
    Named {
        name: name.name().to_string(),
        full_name: name.fullname(None),
        aliases: aliases
            .iter()
            .flatten()
            .map(|alias| alias.fullname(None))
            .collect(),
    }
}
