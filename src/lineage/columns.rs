//! Column lineage (issue 43, item 1): the `columnLineage` dataset facet
//! read into column edges, `input dataset.field → this dataset's field`.
//!
//! The facet as the spec has it (ColumnLineageDatasetFacet, 1-0-x to
//! 1-2-x, sent inside 1-x and 2-x events alike):
//! - `fields`: output field → `{inputFields: [{namespace, name, field,
//!   transformations?: [{type: DIRECT|INDIRECT, subtype?, …}]}]}`; 1-0-x
//!   put one `transformationType` (e.g. `IDENTITY`) on the output field
//!   instead, read here as DIRECT with that subtype;
//! - `dataset` (1-1 on): input fields that affect the whole dataset (a
//!   filter, a join key), read as INDIRECT edges into every output field.
//!
//! An input field with no transformation said is DIRECT: it is listed
//! because its value flows into the output. A facet that is not this
//! shape is refused with a reason ([`ColumnLineageError`]); the fold
//! keeps the rest of the event (`graph::upserts`).

use super::graph::{DatasetKey, Graph, NodeKey};
use super::naming::{self, Clusters};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The facet's key in a dataset's `facets`.
pub const FACET: &str = "columnLineage";

/// A field of a dataset: a node of the column graph.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FieldRef {
    pub dataset: DatasetKey,
    pub field: String,
}

impl FieldRef {
    pub fn new(namespace: &str, name: &str, field: &str) -> Self {
        FieldRef {
            dataset: DatasetKey {
                namespace: namespace.into(),
                name: name.into(),
            },
            field: field.into(),
        }
    }
}

/// How an input field shapes an output field (the spec's `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Transform {
    /// The output's value is computed from the input's.
    Direct,
    /// The input decides which rows or how (a filter, a join, a sort).
    Indirect,
}

impl Transform {
    pub fn as_str(self) -> &'static str {
        match self {
            Transform::Direct => "DIRECT",
            Transform::Indirect => "INDIRECT",
        }
    }

    pub fn parse(s: &str) -> Option<Transform> {
        match s {
            "DIRECT" => Some(Transform::Direct),
            "INDIRECT" => Some(Transform::Indirect),
            _ => None,
        }
    }
}

/// `from → to` where `to` is a field of the dataset carrying the facet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnEdge {
    pub from: FieldRef,
    pub to: String,
    /// DIRECT when any transformation of this input is.
    pub kind: Transform,
    /// The spec's subtypes (IDENTITY, AGGREGATION, FILTER, …), sorted.
    pub subtypes: Vec<String>,
}

/// Why a `columnLineage` facet was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ColumnLineageError {
    #[error("the facet is not a JSON object")]
    NotAnObject,
    #[error("`fields` is not an object of output fields")]
    Fields,
    #[error("output field {field:?} is not an object with an `inputFields` list")]
    InputFields { field: String },
    #[error("`dataset` is not a list of input fields")]
    DatasetList,
    #[error("{at}: input field {index} has no `{what}` string")]
    Missing {
        at: String,
        index: usize,
        what: &'static str,
    },
    #[error(
        "{at}: input field {index} has a transformation type {found:?}, not DIRECT or INDIRECT"
    )]
    Type {
        at: String,
        index: usize,
        found: String,
    },
}

/// The edges of a `columnLineage` facet, input datasets as sent.
pub fn parse(facet: &Value) -> Result<Vec<ColumnEdge>, ColumnLineageError> {
    let facet = facet.as_object().ok_or(ColumnLineageError::NotAnObject)?;
    let fields = match facet.get("fields") {
        None => serde_json::Map::new(),
        Some(f) => f.as_object().cloned().ok_or(ColumnLineageError::Fields)?,
    };
    // (input, output field) → (kind, subtypes): one edge per pair however
    // often the facet names it.
    let mut edges: BTreeMap<(FieldRef, String), (Transform, Vec<String>)> = BTreeMap::new();
    for (out, spec) in &fields {
        let bad = || ColumnLineageError::InputFields { field: out.clone() };
        let inputs = spec
            .get("inputFields")
            .and_then(Value::as_array)
            .ok_or_else(bad)?;
        let legacy = spec.get("transformationType").and_then(Value::as_str);
        for (index, input) in inputs.iter().enumerate() {
            let (from, kind, subtypes) = input_field(input, out, index, legacy)?;
            merge(&mut edges, from, out, kind, subtypes);
        }
    }
    if let Some(whole) = facet.get("dataset") {
        let whole = whole.as_array().ok_or(ColumnLineageError::DatasetList)?;
        for (index, input) in whole.iter().enumerate() {
            let (from, _, subtypes) = input_field(input, "`dataset`", index, None)?;
            for out in fields.keys() {
                merge(
                    &mut edges,
                    from.clone(),
                    out,
                    Transform::Indirect,
                    subtypes.clone(),
                );
            }
        }
    }
    Ok(edges
        .into_iter()
        .map(|((from, to), (kind, subtypes))| ColumnEdge {
            from,
            to,
            kind,
            subtypes,
        })
        .collect())
}

fn merge(
    edges: &mut BTreeMap<(FieldRef, String), (Transform, Vec<String>)>,
    from: FieldRef,
    to: &str,
    kind: Transform,
    subtypes: Vec<String>,
) {
    let slot = edges
        .entry((from, to.to_string()))
        .or_insert((kind, Vec::new()));
    slot.0 = slot.0.min(kind);
    slot.1.extend(subtypes);
    slot.1.sort();
    slot.1.dedup();
}

type Input = (FieldRef, Transform, Vec<String>);

/// One `inputFields` entry: where it comes from, DIRECT unless every
/// transformation said is INDIRECT, and the subtypes said.
fn input_field(
    v: &Value,
    at: &str,
    index: usize,
    legacy: Option<&str>,
) -> Result<Input, ColumnLineageError> {
    let text = |what: &'static str| {
        v.get(what)
            .and_then(Value::as_str)
            .ok_or_else(|| ColumnLineageError::Missing {
                at: at.to_string(),
                index,
                what,
            })
    };
    let from = FieldRef::new(text("namespace")?, text("name")?, text("field")?);
    let mut kinds = Vec::new();
    let mut subtypes: Vec<String> = legacy.map(str::to_string).into_iter().collect();
    let said = v.get("transformations").and_then(Value::as_array);
    for t in said.into_iter().flatten() {
        let found = t.get("type").and_then(Value::as_str).unwrap_or_default();
        let kind = Transform::parse(found).ok_or_else(|| ColumnLineageError::Type {
            at: at.to_string(),
            index,
            found: found.to_string(),
        })?;
        kinds.push(kind);
        if let Some(s) = t.get("subtype").and_then(Value::as_str) {
            subtypes.push(s.to_string());
        }
    }
    let kind = kinds.into_iter().min().unwrap_or(Transform::Direct);
    Ok((from, kind, subtypes))
}

/// The column edges of one dataset as a fold left them: the facet's
/// newest version (`at`), input datasets named by the graph's rules so
/// they meet the nodes they mean; none when the facet was deleted.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnVersion {
    pub dataset: DatasetKey,
    pub at: DateTime<Utc>,
    pub edges: Vec<ColumnEdge>,
}

/// Every dataset of `graph` with a `columnLineage` facet (or its
/// tombstone), with its edges: what a store writes after a batch.
pub fn versions(graph: &Graph, clusters: &Clusters) -> Vec<ColumnVersion> {
    graph
        .nodes()
        .filter_map(|n| {
            let NodeKey::Dataset(dataset) = &n.key else {
                return None;
            };
            let slot = n.facets.get(FACET)?;
            // The fold refuses a facet that does not parse, so a value
            // kept here does; a tombstone has no edges.
            let edges = slot
                .value
                .as_ref()
                .and_then(|v| parse(v).ok())
                .unwrap_or_default();
            Some(ColumnVersion {
                dataset: dataset.clone(),
                at: slot.at,
                edges: edges.into_iter().map(|e| named(e, clusters)).collect(),
            })
        })
        .collect()
}

fn named(mut e: ColumnEdge, clusters: &Clusters) -> ColumnEdge {
    let n = naming::dataset(&e.from.dataset.namespace, &e.from.dataset.name, clusters);
    e.from.dataset = DatasetKey {
        namespace: n.namespace,
        name: n.name,
    };
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(field: &str, ts: Value) -> Value {
        json!({"namespace": "kafka://b:9092", "name": "orders", "field": field, "transformations": ts})
    }

    #[test]
    fn spec_1_2_fields_and_dataset_inputs_become_edges() {
        let facet = json!({
            "fields": {
                "revenue": {"inputFields": [
                    input("amount", json!([{"type": "DIRECT", "subtype": "AGGREGATION"}])),
                    input("status", json!([{"type": "INDIRECT", "subtype": "FILTER"}]))
                ]},
                "day": {"inputFields": [input("ts", json!([{"type": "DIRECT", "subtype": "TRANSFORMATION"}]))]}
            },
            "dataset": [input("region", json!([{"type": "INDIRECT", "subtype": "GROUP_BY"}]))]
        });
        let edges = parse(&facet).expect("parses");
        let find = |from: &str, to: &str| {
            edges
                .iter()
                .find(|e| e.from.field == from && e.to == to)
                .cloned()
        };
        let amount = find("amount", "revenue").expect("amount → revenue");
        assert_eq!(amount.kind, Transform::Direct);
        assert_eq!(amount.subtypes, vec!["AGGREGATION"]);
        assert_eq!(
            find("status", "revenue").map(|e| e.kind),
            Some(Transform::Indirect)
        );
        // The dataset-wide input reaches every output field, INDIRECT.
        assert_eq!(
            find("region", "day").map(|e| e.kind),
            Some(Transform::Indirect)
        );
        assert_eq!(
            find("region", "revenue").map(|e| e.kind),
            Some(Transform::Indirect)
        );
        assert_eq!(edges.len(), 5);
    }

    #[test]
    fn spec_1_0_transformation_type_reads_as_direct_with_its_subtype() {
        let facet = json!({"fields": {"id": {
            "inputFields": [{"namespace": "pg", "name": "t", "field": "id"}],
            "transformationType": "IDENTITY", "transformationDescription": "identical"
        }}});
        let edges = parse(&facet).expect("parses");
        assert_eq!(edges[0].kind, Transform::Direct);
        assert_eq!(edges[0].subtypes, vec!["IDENTITY"]);
    }

    #[test]
    fn one_direct_transformation_makes_the_edge_direct() {
        let facet = json!({"fields": {"x": {"inputFields": [input("a", json!([
            {"type": "INDIRECT", "subtype": "FILTER"}, {"type": "DIRECT", "subtype": "IDENTITY"}
        ]))]}}});
        let edges = parse(&facet).expect("parses");
        assert_eq!(edges[0].kind, Transform::Direct);
        assert_eq!(edges[0].subtypes, vec!["FILTER", "IDENTITY"]);
    }

    #[test]
    fn malformed_facets_are_refused_with_a_reason() {
        let cases = [
            (json!([]), "not a JSON object"),
            (json!({"fields": []}), "`fields`"),
            (json!({"fields": {"x": {}}}), "output field \"x\""),
            (
                json!({"fields": {"x": {"inputFields": [{"namespace": "n", "name": "t"}]}}}),
                "has no `field`",
            ),
            (
                json!({"fields": {"x": {"inputFields": [input("a", json!([{"type": "SIDEWAYS"}]))]}}}),
                "\"SIDEWAYS\"",
            ),
            (json!({"dataset": {}}), "`dataset`"),
        ];
        for (facet, says) in cases {
            let e = parse(&facet).expect_err("refused");
            assert!(e.to_string().contains(says), "{e} should say {says}");
        }
    }

    #[test]
    fn a_malformed_facet_is_refused_and_the_event_still_folds() {
        let text = crate::lineage::fixtures::DBT_COMPLETE.replace(
            r#""fields": {"customer_id": {"inputFields""#,
            r#""fields": {"customer_id": {"notInputFields""#,
        );
        let event =
            crate::lineage::event::Event::from_value(&serde_json::from_str(&text).expect("json"))
                .expect("event");
        let clusters = Clusters::new(&[]);
        let mut g = Graph::new();
        g.fold(
            &event,
            &crate::lineage::graph::FoldContext {
                provenance: crate::lineage::graph::Provenance::Observed,
                clusters: &clusters,
            },
        );
        let model = NodeKey::dataset(
            "postgres://127.0.0.1:5432",
            "shop.analytics.customer_orders",
        );
        let node = g.node(&model).expect("the output is kept");
        assert!(node.facet(FACET).is_none(), "the bad facet is refused");
        assert!(node.facet("schema").is_some(), "the other facets are kept");
        let crate::lineage::graph::Detail::Dataset(info) = &node.detail else {
            panic!("a dataset")
        };
        assert!(matches!(
            &info.issues[..],
            [naming::NameIssue::ColumnLineageRefused { reason }] if reason.contains("customer_id")
        ));
        let job = NodeKey::job("dbt", "shop.analytics.customer_orders");
        assert!(g.edge(&job, &model).is_some(), "dataset-level lineage kept");
        assert!(versions(&g, &clusters).is_empty());
    }

    #[test]
    fn versions_name_inputs_by_the_graph_rules() {
        let dbt: Value =
            serde_json::from_str(crate::lineage::fixtures::DBT_COMPLETE).expect("json");
        let event = crate::lineage::event::Event::from_value(&dbt).expect("event");
        let clusters = Clusters::new(&[]);
        let mut g = Graph::new();
        g.fold(
            &event,
            &crate::lineage::graph::FoldContext {
                provenance: crate::lineage::graph::Provenance::Observed,
                clusters: &clusters,
            },
        );
        let v = versions(&g, &clusters);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].dataset.name, "shop.analytics.customer_orders");
        assert_eq!(v[0].edges.len(), 1);
        assert_eq!(
            v[0].edges[0].from,
            FieldRef::new("postgres://127.0.0.1:5432", "shop.public.customers", "id")
        );
        assert_eq!(v[0].edges[0].to, "customer_id");
    }
}
