//! Avro compatibility as Confluent Schema Registry decides it: Java's
//! `org.apache.avro.SchemaCompatibility.checkReaderWriterCompatibility(reader,
//! writer)` (Avro 1.12), which the registry's `AvroSchema.isBackwardCompatible`
//! calls, rather than the bare "Schema Resolution" section of the
//! specification or `apache-avro`'s own `SchemaCompatibility`.
//!
//! - `parse`: the schema text and its references into a graph of types in
//!   which, as in Java, a named type (record, enum, fixed) is one node however
//!   often it is used, and every other type is a node of its own.
//! - `compatibility`: Java's reader/writer walk over two such graphs, with
//!   its JSON Pointer locations and its memo of reader/writer pairs.

mod compatibility;
mod parse;
#[cfg(test)]
mod tests;

use super::{Incompatibility, SchemaError, SchemaText};

/// A parsed Avro schema, ready to be compared with another.
#[derive(Debug)]
pub struct AvroSchema {
    nodes: Vec<Node>,
    root: NodeId,
}

impl AvroSchema {
    /// Parses the schema with the named types its references define.
    pub fn parse(schema: &SchemaText) -> Result<AvroSchema, SchemaError> {
        parse::parse(schema)
    }

    fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0]
    }
}

/// Why a consumer reading with `reader` cannot read data written with
/// `writer`: every incompatibility Java finds, in Java's order; empty when it
/// can.
pub fn can_read(reader: &AvroSchema, writer: &AvroSchema) -> Vec<Incompatibility> {
    compatibility::check(reader, writer)
        .into_iter()
        .map(|finding| Incompatibility {
            kind: finding.kind.as_str().to_string(),
            location: finding.location,
            message: finding.message,
        })
        .collect()
}

/// Java's `SchemaIncompatibilityType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncompatibilityKind {
    ReaderFieldMissingDefaultValue,
    TypeMismatch,
    NameMismatch,
    MissingEnumSymbols,
    MissingUnionBranch,
    FixedSizeMismatch,
    /// Not Java's: the walk stopped at its depth or work limit (see
    /// `compatibility`), so the schemas cannot be called compatible.
    TooComplexToCheck,
}

impl IncompatibilityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IncompatibilityKind::ReaderFieldMissingDefaultValue => {
                "READER_FIELD_MISSING_DEFAULT_VALUE"
            }
            IncompatibilityKind::TypeMismatch => "TYPE_MISMATCH",
            IncompatibilityKind::NameMismatch => "NAME_MISMATCH",
            IncompatibilityKind::MissingEnumSymbols => "MISSING_ENUM_SYMBOLS",
            IncompatibilityKind::MissingUnionBranch => "MISSING_UNION_BRANCH",
            IncompatibilityKind::FixedSizeMismatch => "FIXED_SIZE_MISMATCH",
            IncompatibilityKind::TooComplexToCheck => "TOO_COMPLEX_TO_CHECK",
        }
    }
}

/// A node of [`AvroSchema::nodes`]. Node ids of two schemas never meet: a
/// pair of them (reader, writer) is what Java memoises by object identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct NodeId(usize);

/// An Avro type with its logical type dropped: Java ignores logical types
/// when checking compatibility, so a decimal is its bytes or fixed, a date
/// its int.
#[derive(Debug)]
enum Node {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Array(NodeId),
    Map(NodeId),
    Union(Vec<NodeId>),
    Record(Record),
    Enum(Enum),
    Fixed(Fixed),
}

impl Node {
    fn avro_type(&self) -> AvroType {
        match self {
            Node::Null => AvroType::Null,
            Node::Boolean => AvroType::Boolean,
            Node::Int => AvroType::Int,
            Node::Long => AvroType::Long,
            Node::Float => AvroType::Float,
            Node::Double => AvroType::Double,
            Node::Bytes => AvroType::Bytes,
            Node::String => AvroType::String,
            Node::Array(_) => AvroType::Array,
            Node::Map(_) => AvroType::Map,
            Node::Union(_) => AvroType::Union,
            Node::Record(_) => AvroType::Record,
            Node::Enum(_) => AvroType::Enum,
            Node::Fixed(_) => AvroType::Fixed,
        }
    }
}

/// Java's `Schema.Type`: what the walk compares first, and how messages name
/// a type (`reader type: INT not compatible with writer type: STRING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AvroType {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Array,
    Map,
    Union,
    Record,
    Enum,
    Fixed,
}

impl AvroType {
    fn as_str(self) -> &'static str {
        match self {
            AvroType::Null => "NULL",
            AvroType::Boolean => "BOOLEAN",
            AvroType::Int => "INT",
            AvroType::Long => "LONG",
            AvroType::Float => "FLOAT",
            AvroType::Double => "DOUBLE",
            AvroType::Bytes => "BYTES",
            AvroType::String => "STRING",
            AvroType::Array => "ARRAY",
            AvroType::Map => "MAP",
            AvroType::Union => "UNION",
            AvroType::Record => "RECORD",
            AvroType::Enum => "ENUM",
            AvroType::Fixed => "FIXED",
        }
    }
}

/// The name of a record, enum or fixed.
#[derive(Debug)]
struct Named {
    /// Without its namespace: what Java's `schemaNameEquals` compares.
    name: String,
    /// With its namespace: what reader aliases are matched against.
    full_name: String,
    /// Full names, each qualified with this type's namespace when written
    /// without one, as Java's `getAliases()` returns them.
    aliases: Vec<String>,
}

#[derive(Debug)]
struct Record {
    named: Named,
    fields: Vec<Field>,
    /// Field positions by name: Java's `getField(name)`, aliases excluded.
    positions: std::collections::HashMap<String, usize>,
}

#[derive(Debug)]
struct Field {
    name: String,
    /// As written: field aliases have no namespace.
    aliases: Vec<String>,
    /// A `default` is present, `null` included (Java's `hasDefaultValue()`).
    has_default: bool,
    schema: NodeId,
}

#[derive(Debug)]
struct Enum {
    named: Named,
    symbols: Vec<String>,
    default: Option<String>,
}

#[derive(Debug)]
struct Fixed {
    named: Named,
    size: usize,
}

impl AvroSchema {
    /// The fields of the record at the root (none when the root is not a
    /// record), each with its aliases and its type in Avro's words.
    pub fn top_fields(&self) -> Vec<super::fields::FieldShape> {
        let Node::Record(r) = self.node(self.root) else {
            return Vec::new();
        };
        r.fields
            .iter()
            .map(|f| super::fields::FieldShape {
                name: f.name.clone(),
                number: None,
                aliases: f.aliases.clone(),
                ty: self.type_words(f.schema, 0),
            })
            .collect()
    }

    /// `int`, `array<string>`, `null|double`, a named type by its full
    /// name; nested types to a few levels (a recursive type would not end).
    fn type_words(&self, id: NodeId, depth: usize) -> String {
        if depth > 4 {
            return "…".into();
        }
        match self.node(id) {
            Node::Array(i) => format!("array<{}>", self.type_words(*i, depth + 1)),
            Node::Map(v) => format!("map<{}>", self.type_words(*v, depth + 1)),
            Node::Union(bs) => bs
                .iter()
                .map(|b| self.type_words(*b, depth + 1))
                .collect::<Vec<_>>()
                .join("|"),
            Node::Record(r) => r.named.full_name.clone(),
            Node::Enum(e) => e.named.full_name.clone(),
            Node::Fixed(f) => format!("{}[{}]", f.named.full_name, f.size),
            other => other.avro_type().as_str().to_lowercase(),
        }
    }
}
