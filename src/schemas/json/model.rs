//! A loaded JSON Schema, shaped like the schema objects of the everit
//! library that Confluent's diff walks: one node per schema, whose
//! [`Shape`] plays the part of everit's class (`StringSchema`,
//! `ObjectSchema`, `CombinedSchema`, ...). Two nodes are "of the same type"
//! exactly when Confluent would find the same class, which is what its diff
//! compares first.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::decimal::Decimal;

/// An index into [`JsonSchema::nodes`](super::JsonSchema).
pub(super) type NodeId = usize;

#[derive(Debug)]
pub(super) struct Node {
    pub shape: Shape,
    pub meta: Meta,
}

/// The annotations Confluent compares (and reports as compatible changes),
/// plus the two it reads to decide compatibility: `default` and Kafka
/// Connect's `connect.type`.
#[derive(Debug, Default)]
pub(super) struct Meta {
    pub id: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    /// `Some(Value::Null)` for `"default": null`, which counts as a default.
    pub default: Option<Value>,
    /// `"connect.type": "bytes"`: Connect's decimals, which Confluent lets
    /// change between string and number.
    pub connect_bytes: bool,
}

#[derive(Debug)]
pub(super) enum Shape {
    /// `true`, `{}`, or an object with no constraining keyword.
    Any,
    /// `false`.
    Nothing,
    Boolean,
    Null,
    String(StringRules),
    /// `number` and `integer` are one shape: Confluent sees integer→number
    /// as a change of `requiresInteger` inside the same type.
    Number(NumberRules),
    Object(Box<ObjectRules>),
    Array(Box<ArrayRules>),
    Enum(Vec<Value>),
    Const(Value),
    Combined(Combined),
    Not(NodeId),
    /// `if`/`then`/`else`, which Confluent's diff does not look into.
    Conditional,
    /// A `$ref`, followed before comparing.
    Ref(NodeId),
}

impl Shape {
    /// Whether two shapes are what Confluent calls the same schema type.
    pub fn same_type(&self, other: &Shape) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

#[derive(Debug, Default)]
pub(super) struct StringRules {
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<String>,
}

#[derive(Debug, Default)]
pub(super) struct NumberRules {
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
    pub exclusive_maximum: Option<f64>,
    pub multiple_of: Option<Decimal>,
    pub integer: bool,
}

/// What an object or array allows beyond the members it names
/// (`additionalProperties`, `additionalItems`, or 2020-12 `items` after
/// `prefixItems`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Additional {
    /// Absent or `true`.
    #[default]
    Allowed,
    /// `false`.
    Forbidden,
    /// A schema the extra members must match.
    Schema(NodeId),
}

impl Additional {
    pub fn permits(self) -> bool {
        self != Additional::Forbidden
    }

    pub fn schema(self) -> Option<NodeId> {
        match self {
            Additional::Schema(id) => Some(id),
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct ObjectRules {
    pub properties: BTreeMap<String, NodeId>,
    pub required: BTreeSet<String>,
    pub additional: Additional,
    /// In document order: the first pattern that matches a name wins.
    pub pattern_properties: Vec<(fancy_regex::Regex, NodeId)>,
    /// `dependencies` with an array value, or `dependentRequired`.
    pub property_dependencies: BTreeMap<String, BTreeSet<String>>,
    /// `dependencies` with a schema value, or `dependentSchemas`.
    pub schema_dependencies: BTreeMap<String, NodeId>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    /// 2019-09 and later only.
    pub unevaluated: Option<NodeId>,
}

#[derive(Debug, Default)]
pub(super) struct ArrayRules {
    /// `items` as one schema for every item.
    pub all_items: Option<NodeId>,
    /// `items` as an array (draft-07) or `prefixItems` (2020-12).
    pub tuple: Vec<NodeId>,
    pub additional: Additional,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    /// 2019-09 and later only.
    pub unevaluated: Option<NodeId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Criterion {
    All,
    Any,
    One,
}

impl Criterion {
    /// The keyword, which is also how Confluent names it in paths.
    pub fn keyword(self) -> &'static str {
        match self {
            Criterion::All => "allOf",
            Criterion::Any => "anyOf",
            Criterion::One => "oneOf",
        }
    }

    /// `anyOf` and `oneOf`: a value matches when some branch matches.
    pub fn is_sum(self) -> bool {
        self != Criterion::All
    }
}

#[derive(Debug)]
pub(super) struct Combined {
    pub criterion: Criterion,
    /// As written: Confluent's singleton checks count these.
    pub branches: Vec<NodeId>,
    /// Without structural duplicates, first occurrence kept: Confluent
    /// matches and indexes these.
    pub distinct: Vec<NodeId>,
}
