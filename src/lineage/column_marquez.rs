//! Marquez's column lineage read, for scripts and UIs that speak it:
//! `GET /api/v1/column-lineage?nodeId=datasetField:<ns>:<name>:<field>
//! &depth=&withDownstream=` answering `{graph: [{id, type: DATASET_FIELD,
//! data, inEdges, outEdges}]}`, upstream of the field, and downstream too
//! when `withDownstream` is true (Marquez's default is upstream only).
//!
//! The shape follows Marquez's models (MarquezProject/marquez,
//! `api/src/main/java/marquez/db/models/ColumnLineageNodeData.java` and
//! `InputFieldNodeData.java`): `data` is `{namespace, dataset,
//! datasetVersion, field, fieldType, transformationDescription,
//! transformationType, inputFields: [{namespace, dataset, datasetVersion,
//! field, transformationDescription, transformationType}]}`. Streamkeeper
//! keeps no dataset versions (`datasetVersion` is null) and reads no field
//! types here (`fieldType` is null); each input's `transformationType` is
//! DIRECT or INDIRECT and its description the spec's subtypes.

use super::column_walk::{ColumnGraph, FieldImpact};
use super::columns::FieldRef;
use super::graph::NodeKey;
use super::impact::Direction;
use super::marquez::{NodeId, NodeIdError};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// A `datasetField:<namespace>:<name>:<field>` nodeId.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldId(pub FieldRef);

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldIdError {
    #[error("a column nodeId is `datasetField:<namespace>:<name>:<field>`")]
    Shape,
    #[error(transparent)]
    Dataset(#[from] NodeIdError),
}

impl FieldId {
    /// The field is what follows the last `:` (namespaces and names hold
    /// colons, a column name seldom does); the rest reads as a dataset
    /// nodeId ([`NodeId::parse`]).
    pub fn parse(s: &str) -> Result<FieldId, FieldIdError> {
        let rest = s.strip_prefix("datasetField:").ok_or(FieldIdError::Shape)?;
        let (dataset, field) = rest.rsplit_once(':').ok_or(FieldIdError::Shape)?;
        if field.is_empty() {
            return Err(FieldIdError::Shape);
        }
        match NodeId::parse(&format!("dataset:{dataset}"))?.0 {
            NodeKey::Dataset(d) => Ok(FieldId(FieldRef {
                dataset: d,
                field: field.to_string(),
            })),
            NodeKey::Job(_) => Err(FieldIdError::Shape),
        }
    }
}

/// Marquez's id of a field node.
pub fn node_id(f: &FieldRef) -> String {
    format!(
        "datasetField:{}:{}:{}",
        f.dataset.namespace, f.dataset.name, f.field
    )
}

/// The answer of `GET /api/v1/column-lineage`, plus `partial`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColumnLineageAnswer {
    /// Sorted by id.
    pub graph: Vec<Value>,
    pub partial: bool,
}

/// The nodes of the walks (the start, upstream, and downstream when
/// asked), each with its inputs in `g` and the edges among them.
pub fn answer(g: &ColumnGraph, walks: &[FieldImpact]) -> ColumnLineageAnswer {
    let mut fields: BTreeSet<FieldRef> = BTreeSet::new();
    for w in walks {
        fields.insert(w.start.clone());
        fields.extend(w.fields.iter().map(|r| r.field.clone()));
    }
    let mut graph: Vec<Value> = fields.iter().map(|f| node(g, f, &fields)).collect();
    graph.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    ColumnLineageAnswer {
        graph,
        partial: walks.iter().any(|w| w.partial),
    }
}

fn node(g: &ColumnGraph, f: &FieldRef, among: &BTreeSet<FieldRef>) -> Value {
    let id = node_id(f);
    let inputs = g.hops(f, Direction::Upstream);
    let input_fields: Vec<Value> = inputs
        .iter()
        .map(|h| {
            json!({
                "namespace": h.field.dataset.namespace,
                "dataset": h.field.dataset.name,
                "datasetVersion": null,
                "field": h.field.field,
                "transformationDescription": (!h.subtypes.is_empty()).then(|| h.subtypes.join(", ")),
                "transformationType": h.kind.as_str(),
            })
        })
        .collect();
    let in_edges: Vec<Value> = inputs
        .iter()
        .filter(|h| among.contains(&h.field))
        .map(|h| json!({"origin": node_id(&h.field), "destination": id}))
        .collect();
    let out_edges: Vec<Value> = g
        .hops(f, Direction::Downstream)
        .iter()
        .filter(|h| among.contains(&h.field))
        .map(|h| json!({"origin": id, "destination": node_id(&h.field)}))
        .collect();
    json!({
        "id": id,
        "type": "DATASET_FIELD",
        "data": {
            "namespace": f.dataset.namespace,
            "dataset": f.dataset.name,
            "datasetVersion": null,
            "field": f.field,
            "fieldType": null,
            "transformationDescription": null,
            "transformationType": null,
            "inputFields": input_fields,
        },
        "inEdges": in_edges,
        "outEdges": out_edges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::column_walk::walk;
    use crate::lineage::columns::{ColumnEdge, Transform};
    use crate::lineage::impact::Limits;

    #[test]
    fn a_field_node_id_reads_with_colons_in_the_namespace() {
        let id = FieldId::parse("datasetField:kafka://b1:9092:orders:amount").expect("parses");
        assert_eq!(id.0, FieldRef::new("kafka://b1:9092", "orders", "amount"));
        assert_eq!(node_id(&id.0), "datasetField:kafka://b1:9092:orders:amount");
        assert_eq!(
            FieldId::parse("dataset:pg:t:a"),
            Err(FieldIdError::Shape),
            "a dataset nodeId is not a field's"
        );
        assert_eq!(
            FieldId::parse("datasetField:pg:t:"),
            Err(FieldIdError::Shape)
        );
        assert!(FieldId::parse("datasetField:onlyname").is_err());
    }

    #[test]
    fn the_answer_is_in_marquez_shape() {
        let mut g = ColumnGraph::new();
        let amount = FieldRef::new("kafka://b:9092", "orders", "amount");
        let revenue = FieldRef::new("pg", "daily", "revenue");
        g.add_edge(
            &revenue.dataset,
            &ColumnEdge {
                from: amount.clone(),
                to: "revenue".into(),
                kind: Transform::Direct,
                subtypes: vec!["AGGREGATION".into()],
            },
        );
        let up = walk(&g, &revenue, Direction::Upstream, Limits::default());
        let a = answer(&g, &[up]);
        assert!(!a.partial);
        let v = serde_json::to_value(&a).expect("json");
        let daily = &v["graph"][1];
        assert_eq!(daily["id"], "datasetField:pg:daily:revenue");
        assert_eq!(daily["type"], "DATASET_FIELD");
        assert_eq!(daily["data"]["dataset"], "daily");
        assert_eq!(
            daily["data"]["inputFields"],
            json!([{"namespace": "kafka://b:9092", "dataset": "orders", "datasetVersion": null,
                "field": "amount", "transformationDescription": "AGGREGATION",
                "transformationType": "DIRECT"}])
        );
        assert_eq!(
            daily["inEdges"],
            json!([{"origin": "datasetField:kafka://b:9092:orders:amount",
                "destination": "datasetField:pg:daily:revenue"}])
        );
        assert_eq!(
            v["graph"][0]["outEdges"][0]["destination"],
            "datasetField:pg:daily:revenue"
        );
    }
}
