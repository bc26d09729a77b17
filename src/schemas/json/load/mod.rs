//! From JSON to [`Node`]s, the way everit's `SchemaLoader` (which Confluent
//! uses) turns a schema object into schema classes:
//!
//! - `$ref` wins: in draft-07 its sibling keywords are ignored; in 2019-09
//!   and 2020-12 they form an `allOf` with it.
//! - Otherwise each of these, in this order, may contribute a schema:
//!   `enum`; `allOf`, `anyOf`, `oneOf`; `not`; `const`; `type` (with the
//!   keywords of the named types); then, for each type family whose
//!   keywords are present but not claimed by `type`, a schema of that
//!   family (array, object, number, string; `if`/`then`/`else`).
//! - None makes `{}` (anything); one is the node itself; several make a
//!   synthetic `allOf`. So `{"type": "string", "enum": [..]}` is
//!   `allOf[enum, string]`, and `{"type": "integer", "format": "int64"}`
//!   is `allOf[integer, string]` in draft-07 (`format` being a string
//!   keyword there), exactly as Confluent sees them.
//! - `type: [..]` is an `anyOf` of one schema per type, even for one type.
//!
//! Invalid keyword values are [`SchemaError::Parse`] errors naming their
//! place as a JSON Pointer (`#/properties/age`), or as the `$ref` that led
//! there.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::decimal::Decimal;
use super::model::{
    Additional, ArrayRules, Combined, Criterion, Meta, Node, NodeId, NumberRules, ObjectRules,
    Shape, StringRules,
};
use super::refs::{Dialect, Documents, Target};
use crate::schemas::{SchemaError, SchemaType};

/// Loads document 0 and everything it references; the root is node 0.
pub(super) fn load(documents: &Documents) -> Result<Vec<Node>, SchemaError> {
    let mut loader = Loader {
        documents,
        nodes: Vec::new(),
        targets: HashMap::new(),
        pending: Vec::new(),
        regexes: HashMap::new(),
    };
    loader.schema(0, &documents.get(0).json, "#")?;
    while let Some((id, target, reference)) = loader.pending.pop() {
        let json = documents.resolve(&target, &reference)?;
        loader.nodes[id] = loader.node(target.document, json, &reference)?;
    }
    reject_reference_loops(&loader.nodes)?;
    Ok(loader.nodes)
}

/// A `$ref` chain that comes back to itself never reaches a schema. Each
/// node is walked once: chains already known to end are not walked again.
fn reject_reference_loops(nodes: &[Node]) -> Result<(), SchemaError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Walk {
        Unseen,
        OnChain,
        Ends,
    }
    let mut walk = vec![Walk::Unseen; nodes.len()];
    for start in 0..nodes.len() {
        let mut chain = Vec::new();
        let mut at = start;
        while let (Shape::Ref(next), Walk::Unseen) = (&nodes[at].shape, walk[at]) {
            walk[at] = Walk::OnChain;
            chain.push(at);
            at = *next;
        }
        if walk[at] == Walk::OnChain {
            return Err(SchemaError::Reference {
                name: "$ref".into(),
                detail: "a chain of $ref comes back to itself without reaching a schema".into(),
            });
        }
        for node in chain {
            walk[node] = Walk::Ends;
        }
    }
    Ok(())
}

const ARRAY_KEYWORDS_DRAFT7: &[&str] = &[
    "items",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
];
const ARRAY_KEYWORDS_MODERN: &[&str] = &[
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "unevaluatedItems",
];
const OBJECT_KEYWORDS_DRAFT7: &[&str] = &[
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "dependencies",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
];
const OBJECT_KEYWORDS_MODERN: &[&str] = &[
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
];
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
/// `format` makes a string schema in draft-07 only: the 2020-12 loader
/// Confluent uses ignores formats.
const STRING_KEYWORDS_DRAFT7: &[&str] = &["minLength", "maxLength", "pattern", "format"];
const STRING_KEYWORDS_MODERN: &[&str] = &["minLength", "maxLength", "pattern"];
const CONDITIONAL_KEYWORDS: &[&str] = &["if", "then", "else"];

/// The type families whose keywords `type` already read, so that they do
/// not make a second schema.
#[derive(Default)]
struct Claimed {
    array: bool,
    object: bool,
    number: bool,
    string: bool,
}

struct Loader<'d> {
    documents: &'d Documents,
    nodes: Vec<Node>,
    /// One node per `$ref` target, so that recursive references end and
    /// every reference to a target is the same node (Confluent's diff
    /// recognises cycles by node identity).
    targets: HashMap<Target, NodeId>,
    /// `$ref` targets given a node but not loaded yet, with the `$ref` as
    /// written: loaded one after the other rather than recursively, so a
    /// long chain of references does not deepen the stack.
    pending: Vec<(NodeId, Target, String)>,
    /// Compiled patterns by text: large schemas repeat a few patterns.
    regexes: HashMap<String, fancy_regex::Regex>,
}

/// A JSON object being read as a schema, and where it is.
#[derive(Clone, Copy)]
struct Place<'d, 'p> {
    document: usize,
    dialect: Dialect,
    map: &'d Map<String, Value>,
    pointer: &'p str,
}

impl<'d> Loader<'d> {
    fn push(&mut self, shape: Shape) -> NodeId {
        self.nodes.push(Node {
            shape,
            meta: Meta::default(),
        });
        self.nodes.len() - 1
    }

    /// Loads the schema `json` (at `pointer` in `document`) as a new node.
    fn schema(
        &mut self,
        document: usize,
        json: &'d Value,
        pointer: &str,
    ) -> Result<NodeId, SchemaError> {
        let id = self.push(Shape::Any);
        self.nodes[id] = self.node(document, json, pointer)?;
        Ok(id)
    }

    fn reference(&mut self, from: usize, reference: &str) -> Result<NodeId, SchemaError> {
        let target = self.documents.target(from, reference)?;
        if let Some(&id) = self.targets.get(&target) {
            return Ok(id);
        }
        // Checked now, so the error names the `$ref` where it is written.
        self.documents.resolve(&target, reference)?;
        let id = self.push(Shape::Any);
        self.targets.insert(target.clone(), id);
        self.pending.push((id, target, reference.to_owned()));
        Ok(id)
    }

    fn node(
        &mut self,
        document: usize,
        json: &'d Value,
        pointer: &str,
    ) -> Result<Node, SchemaError> {
        match json {
            Value::Bool(true) => Ok(Node {
                shape: Shape::Any,
                meta: Meta::default(),
            }),
            Value::Bool(false) => Ok(Node {
                shape: Shape::Nothing,
                meta: Meta::default(),
            }),
            Value::Object(map) => {
                let at = Place {
                    document,
                    dialect: self.documents.get(document).dialect,
                    map,
                    pointer,
                };
                let meta = meta(at)?;
                let shape = self.shape(at)?;
                Ok(Node { shape, meta })
            }
            _ => Err(invalid(pointer, "a schema must be an object or a boolean")),
        }
    }

    fn shape(&mut self, at: Place<'d, '_>) -> Result<Shape, SchemaError> {
        let mut shapes = Vec::new();
        if let Some(reference) = at.map.get("$ref") {
            let reference = reference
                .as_str()
                .ok_or_else(|| invalid(at.pointer, "'$ref' must be a string"))?;
            let target = self.reference(at.document, reference)?;
            if at.dialect == Dialect::Draft7 {
                return Ok(Shape::Ref(target));
            }
            shapes.push(Shape::Ref(target));
        }
        self.extract(at, &mut shapes)?;
        Ok(match shapes.len() {
            0 => Shape::Any,
            1 => shapes.remove(0),
            _ => {
                let branches: Vec<NodeId> = shapes.into_iter().map(|s| self.push(s)).collect();
                Shape::Combined(Combined {
                    criterion: Criterion::All,
                    distinct: branches.clone(),
                    branches,
                })
            }
        })
    }

    /// everit's extractors, in everit's order.
    fn extract(&mut self, at: Place<'d, '_>, shapes: &mut Vec<Shape>) -> Result<(), SchemaError> {
        if let Some(values) = at.map.get("enum") {
            let values = values
                .as_array()
                .ok_or_else(|| invalid(at.pointer, "'enum' must be an array"))?;
            shapes.push(Shape::Enum(values.clone()));
        }
        for criterion in [Criterion::All, Criterion::Any, Criterion::One] {
            if let Some(branches) = at.map.get(criterion.keyword()) {
                shapes.push(self.combined(at, criterion, branches)?);
            }
        }
        if let Some(not) = at.map.get("not") {
            let pointer = format!("{}/not", at.pointer);
            shapes.push(Shape::Not(self.schema(at.document, not, &pointer)?));
        }
        if let Some(value) = at.map.get("const") {
            shapes.push(Shape::Const(value.clone()));
        }
        let mut claimed = Claimed::default();
        if let Some(types) = at.map.get("type") {
            shapes.push(self.typed(at, types, &mut claimed)?);
        }
        self.sniff(at, &claimed, shapes)
    }

    /// The schemas everit infers from keywords when `type` does not name
    /// their family.
    fn sniff(
        &mut self,
        at: Place<'d, '_>,
        claimed: &Claimed,
        shapes: &mut Vec<Shape>,
    ) -> Result<(), SchemaError> {
        let (array, object, string) = match at.dialect {
            Dialect::Draft7 => (
                ARRAY_KEYWORDS_DRAFT7,
                OBJECT_KEYWORDS_DRAFT7,
                STRING_KEYWORDS_DRAFT7,
            ),
            Dialect::Modern => (
                ARRAY_KEYWORDS_MODERN,
                OBJECT_KEYWORDS_MODERN,
                STRING_KEYWORDS_MODERN,
            ),
        };
        let present = |keywords: &[&str]| keywords.iter().any(|k| at.map.contains_key(*k));
        if !claimed.array && present(array) {
            shapes.push(Shape::Array(Box::new(self.array(at)?)));
        }
        if !claimed.object && present(object) {
            shapes.push(Shape::Object(Box::new(self.object(at)?)));
        }
        if !claimed.number && present(NUMBER_KEYWORDS) {
            shapes.push(Shape::Number(number(at, false)?));
        }
        if !claimed.string && present(string) {
            shapes.push(Shape::String(self.string_rules(at)?));
        }
        if present(CONDITIONAL_KEYWORDS) {
            for keyword in CONDITIONAL_KEYWORDS {
                self.validate_subschema(at, keyword)?;
            }
            shapes.push(Shape::Conditional);
        }
        Ok(())
    }

    fn combined(
        &mut self,
        at: Place<'d, '_>,
        criterion: Criterion,
        branches: &'d Value,
    ) -> Result<Shape, SchemaError> {
        let keyword = criterion.keyword();
        let branches = branches
            .as_array()
            .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be an array")))?;
        let mut ids = Vec::with_capacity(branches.len());
        let mut distinct = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let pointer = format!("{}/{keyword}/{i}", at.pointer);
            let id = self.schema(at.document, branch, &pointer)?;
            ids.push(id);
            // Confluent drops branches equal as JSON to an earlier one.
            if !branches[..i].contains(branch) {
                distinct.push(id);
            }
        }
        Ok(Shape::Combined(Combined {
            criterion,
            branches: ids,
            distinct,
        }))
    }

    fn typed(
        &mut self,
        at: Place<'d, '_>,
        types: &Value,
        claimed: &mut Claimed,
    ) -> Result<Shape, SchemaError> {
        match types {
            Value::String(name) => self.explicit_type(at, name, claimed),
            Value::Array(names) => {
                let mut branches = Vec::with_capacity(names.len());
                let mut distinct = Vec::new();
                for (i, name) in names.iter().enumerate() {
                    let name = name.as_str().ok_or_else(|| {
                        invalid(at.pointer, "'type' must list type names as strings")
                    })?;
                    let shape = self.explicit_type(at, name, claimed)?;
                    let id = self.push(shape);
                    branches.push(id);
                    if !names[..i].iter().any(|earlier| earlier == name) {
                        distinct.push(id);
                    }
                }
                Ok(Shape::Combined(Combined {
                    criterion: Criterion::Any,
                    branches,
                    distinct,
                }))
            }
            _ => Err(invalid(
                at.pointer,
                "'type' must be a type name or an array of type names",
            )),
        }
    }

    fn explicit_type(
        &mut self,
        at: Place<'d, '_>,
        name: &str,
        claimed: &mut Claimed,
    ) -> Result<Shape, SchemaError> {
        Ok(match name {
            "string" => {
                claimed.string = true;
                Shape::String(self.string_rules(at)?)
            }
            "integer" | "number" => {
                claimed.number = true;
                Shape::Number(number(at, name == "integer")?)
            }
            "boolean" => Shape::Boolean,
            "null" => Shape::Null,
            "array" => {
                claimed.array = true;
                Shape::Array(Box::new(self.array(at)?))
            }
            "object" => {
                claimed.object = true;
                Shape::Object(Box::new(self.object(at)?))
            }
            other => return Err(invalid(at.pointer, &format!("unknown type '{other}'"))),
        })
    }

    fn object(&mut self, at: Place<'d, '_>) -> Result<ObjectRules, SchemaError> {
        let mut rules = ObjectRules {
            min_properties: count(at, "minProperties")?,
            max_properties: count(at, "maxProperties")?,
            required: string_set(at, "required")?,
            ..ObjectRules::default()
        };
        for (name, schema) in self.schema_map(at, "properties")? {
            rules.properties.insert(name, schema);
        }
        if let Some(additional) = self.additional(at, "additionalProperties")? {
            rules.additional = additional;
        }
        for (pattern, schema) in self.schema_map(at, "patternProperties")? {
            let regex = self.regex(at, &pattern)?;
            rules.pattern_properties.push((regex, schema));
        }
        match at.dialect {
            Dialect::Draft7 => self.dependencies(at, &mut rules)?,
            Dialect::Modern => {
                rules.schema_dependencies = self
                    .schema_map(at, "dependentSchemas")?
                    .into_iter()
                    .collect();
                if let Some(deps) = object_of(at, "dependentRequired")? {
                    for (name, required) in deps {
                        let pointer = format!("{}/dependentRequired/{}", at.pointer, escape(name));
                        let at = Place {
                            pointer: &pointer,
                            ..at
                        };
                        rules
                            .property_dependencies
                            .insert(name.clone(), strings(at, required)?);
                    }
                }
                rules.unevaluated = self.subschema(at, "unevaluatedProperties")?;
            }
        }
        self.validate_subschema(at, "propertyNames")?;
        Ok(rules)
    }

    /// draft-07 `dependencies`: an array of names or a schema per name.
    fn dependencies(
        &mut self,
        at: Place<'d, '_>,
        rules: &mut ObjectRules,
    ) -> Result<(), SchemaError> {
        let Some(deps) = object_of(at, "dependencies")? else {
            return Ok(());
        };
        for (name, dependency) in deps {
            let pointer = format!("{}/dependencies/{}", at.pointer, escape(name));
            if dependency.is_array() {
                let at = Place {
                    pointer: &pointer,
                    ..at
                };
                rules
                    .property_dependencies
                    .insert(name.clone(), strings(at, dependency)?);
            } else {
                let schema = self.schema(at.document, dependency, &pointer)?;
                rules.schema_dependencies.insert(name.clone(), schema);
            }
        }
        Ok(())
    }

    fn array(&mut self, at: Place<'d, '_>) -> Result<ArrayRules, SchemaError> {
        let mut rules = ArrayRules {
            min_items: count(at, "minItems")?,
            max_items: count(at, "maxItems")?,
            unique_items: flag(at, "uniqueItems")?,
            min_contains: count(at, "minContains")?,
            max_contains: count(at, "maxContains")?,
            ..ArrayRules::default()
        };
        self.validate_subschema(at, "contains")?;
        match at.dialect {
            Dialect::Draft7 => {
                match at.map.get("items") {
                    Some(Value::Array(tuple)) => {
                        rules.tuple = self.schema_list(at, "items", tuple)?
                    }
                    Some(_) => rules.all_items = self.subschema(at, "items")?,
                    None => {}
                }
                if let Some(additional) = self.additional(at, "additionalItems")? {
                    rules.additional = additional;
                }
            }
            Dialect::Modern => self.modern_items(at, &mut rules)?,
        }
        Ok(rules)
    }

    /// 2020-12 `prefixItems` and `items`, as Confluent translates them:
    /// `items` is for every item without a prefix, and for the items after
    /// it otherwise; `items: false` closes the array, `items: true` says
    /// nothing. A `contains` requires one match unless `minContains` says
    /// otherwise.
    fn modern_items(
        &mut self,
        at: Place<'d, '_>,
        rules: &mut ArrayRules,
    ) -> Result<(), SchemaError> {
        if let Some(prefix) = at.map.get("prefixItems") {
            let prefix = prefix
                .as_array()
                .ok_or_else(|| invalid(at.pointer, "'prefixItems' must be an array"))?;
            rules.tuple = self.schema_list(at, "prefixItems", prefix)?;
        }
        match at.map.get("items") {
            Some(Value::Bool(false)) => rules.additional = Additional::Forbidden,
            Some(Value::Bool(true)) | None => {}
            Some(_) => {
                let items = self.subschema(at, "items")?;
                if rules.tuple.is_empty() {
                    rules.all_items = items;
                } else if let Some(items) = items {
                    rules.additional = Additional::Schema(items);
                }
            }
        }
        if at.map.contains_key("contains") && rules.min_contains.is_none() {
            rules.min_contains = Some(1);
        }
        rules.unevaluated = self.subschema(at, "unevaluatedItems")?;
        Ok(())
    }

    /// `additionalProperties` or `additionalItems`: a boolean or a schema.
    fn additional(
        &mut self,
        at: Place<'d, '_>,
        keyword: &str,
    ) -> Result<Option<Additional>, SchemaError> {
        Ok(match at.map.get(keyword) {
            None => None,
            Some(Value::Bool(true)) => Some(Additional::Allowed),
            Some(Value::Bool(false)) => Some(Additional::Forbidden),
            Some(_) => self.subschema(at, keyword)?.map(Additional::Schema),
        })
    }

    fn subschema(
        &mut self,
        at: Place<'d, '_>,
        keyword: &str,
    ) -> Result<Option<NodeId>, SchemaError> {
        match at.map.get(keyword) {
            None => Ok(None),
            Some(json) => {
                let pointer = format!("{}/{keyword}", at.pointer);
                self.schema(at.document, json, &pointer).map(Some)
            }
        }
    }

    /// Loads a subschema Confluent's diff ignores, for its errors alone
    /// (everit loads it, so an invalid one makes the schema invalid).
    fn validate_subschema(&mut self, at: Place<'d, '_>, keyword: &str) -> Result<(), SchemaError> {
        self.subschema(at, keyword).map(|_| ())
    }

    fn schema_map(
        &mut self,
        at: Place<'d, '_>,
        keyword: &str,
    ) -> Result<Vec<(String, NodeId)>, SchemaError> {
        let Some(map) = object_of(at, keyword)? else {
            return Ok(Vec::new());
        };
        let mut schemas = Vec::with_capacity(map.len());
        for (name, json) in map {
            let pointer = format!("{}/{keyword}/{}", at.pointer, escape(name));
            schemas.push((name.clone(), self.schema(at.document, json, &pointer)?));
        }
        Ok(schemas)
    }

    fn schema_list(
        &mut self,
        at: Place<'d, '_>,
        keyword: &str,
        list: &'d [Value],
    ) -> Result<Vec<NodeId>, SchemaError> {
        list.iter()
            .enumerate()
            .map(|(i, json)| {
                let pointer = format!("{}/{keyword}/{i}", at.pointer);
                self.schema(at.document, json, &pointer)
            })
            .collect()
    }

    fn string_rules(&mut self, at: Place<'_, '_>) -> Result<StringRules, SchemaError> {
        if let Some(format) = at.map.get("format")
            && !format.is_string()
        {
            return Err(invalid(at.pointer, "'format' must be a string"));
        }
        let pattern = text(at, "pattern")?;
        if let Some(pattern) = &pattern {
            self.regex(at, pattern)?;
        }
        Ok(StringRules {
            min_length: count(at, "minLength")?,
            max_length: count(at, "maxLength")?,
            pattern,
        })
    }

    /// Java regular expressions, compiled with `fancy-regex`, which shares
    /// their look-around and back-reference syntax. A pattern that does not
    /// compile makes the schema invalid, as it does for Confluent.
    fn regex(
        &mut self,
        at: Place<'_, '_>,
        pattern: &str,
    ) -> Result<fancy_regex::Regex, SchemaError> {
        if let Some(regex) = self.regexes.get(pattern) {
            return Ok(regex.clone());
        }
        let regex = fancy_regex::Regex::new(pattern)
            .map_err(|e| invalid(at.pointer, &format!("invalid pattern '{pattern}': {e}")))?;
        self.regexes.insert(pattern.to_owned(), regex.clone());
        Ok(regex)
    }
}

fn meta(at: Place<'_, '_>) -> Result<Meta, SchemaError> {
    Ok(Meta {
        id: text(at, "$id")?,
        title: text(at, "title")?,
        description: text(at, "description")?,
        default: at.map.get("default").cloned(),
        connect_bytes: at.map.get("connect.type").and_then(Value::as_str) == Some("bytes"),
    })
}

fn number(at: Place<'_, '_>, integer: bool) -> Result<NumberRules, SchemaError> {
    let multiple_of = match at.map.get("multipleOf") {
        None => None,
        Some(value) => {
            let decimal = value
                .as_number()
                .and_then(Decimal::from_json)
                .ok_or_else(|| invalid(at.pointer, "'multipleOf' must be a number"))?;
            if decimal.is_zero() {
                return Err(invalid(at.pointer, "'multipleOf' must not be 0"));
            }
            Some(decimal)
        }
    };
    Ok(NumberRules {
        minimum: limit(at, "minimum")?,
        maximum: limit(at, "maximum")?,
        exclusive_minimum: exclusive_limit(at, "exclusiveMinimum")?,
        exclusive_maximum: exclusive_limit(at, "exclusiveMaximum")?,
        multiple_of,
        integer,
    })
}

fn limit(at: Place<'_, '_>, keyword: &str) -> Result<Option<f64>, SchemaError> {
    at.map
        .get(keyword)
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be a number")))
        })
        .transpose()
}

/// A number since draft-06; draft-04's boolean form is accepted and, as in
/// Confluent's diff, not compared.
fn exclusive_limit(at: Place<'_, '_>, keyword: &str) -> Result<Option<f64>, SchemaError> {
    match at.map.get(keyword) {
        Some(Value::Bool(_)) => Ok(None),
        _ => limit(at, keyword),
    }
}

/// A non-negative integer keyword (`minLength`, `maxItems`, ...).
fn count(at: Place<'_, '_>, keyword: &str) -> Result<Option<u64>, SchemaError> {
    let Some(value) = at.map.get(keyword) else {
        return Ok(None);
    };
    let whole_float = value
        .as_f64()
        .filter(|f| f.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(f))
        // Exact: the float is whole and in range.
        .map(|f| f as u64);
    value.as_u64().or(whole_float).map(Some).ok_or_else(|| {
        invalid(
            at.pointer,
            &format!("'{keyword}' must be a non-negative integer"),
        )
    })
}

fn flag(at: Place<'_, '_>, keyword: &str) -> Result<bool, SchemaError> {
    match at.map.get(keyword) {
        None => Ok(false),
        Some(value) => value
            .as_bool()
            .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be a boolean"))),
    }
}

fn text(at: Place<'_, '_>, keyword: &str) -> Result<Option<String>, SchemaError> {
    at.map
        .get(keyword)
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be a string")))
        })
        .transpose()
}

fn object_of<'d>(
    at: Place<'d, '_>,
    keyword: &str,
) -> Result<Option<&'d Map<String, Value>>, SchemaError> {
    at.map
        .get(keyword)
        .map(|v| {
            v.as_object()
                .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be an object")))
        })
        .transpose()
}

fn string_set(at: Place<'_, '_>, keyword: &str) -> Result<BTreeSet<String>, SchemaError> {
    match at.map.get(keyword) {
        None => Ok(BTreeSet::new()),
        Some(list) => {
            let pointer = format!("{}/{keyword}", at.pointer);
            strings(
                Place {
                    pointer: &pointer,
                    ..at
                },
                list,
            )
        }
    }
}

fn strings(at: Place<'_, '_>, list: &Value) -> Result<BTreeSet<String>, SchemaError> {
    let not_strings = || invalid(at.pointer, "must be an array of strings");
    list.as_array()
        .ok_or_else(not_strings)?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(not_strings))
        .collect()
}

/// A property name as a JSON Pointer segment (RFC 6901).
pub(super) fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn invalid(pointer: &str, problem: &str) -> SchemaError {
    SchemaError::Parse {
        schema_type: SchemaType::Json,
        detail: format!("at {pointer}: {problem}"),
    }
}
