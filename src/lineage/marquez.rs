//! Marquez's read shape, for scripts and UIs that already speak it:
//! `GET /api/v1/lineage?nodeId=…&depth=` answering
//! `{graph: [{id, type, data, inEdges, outEdges}]}` (reference A3), with
//! the depth clamped and a `partial` flag added.

use super::graph::{Detail, Graph, JobKind, Node, NodeKey};
use super::impact::{ImpactError, Limits};
use super::neighbourhood::neighbourhood;
use serde::Serialize;
use serde_json::{Value, json};
use std::fmt;

/// Marquez's default `depth`.
pub const DEFAULT_DEPTH: u32 = 20;

/// A `nodeId`: `dataset:<ns>:<name>` or `job:<ns>:<name>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeId(pub NodeKey);

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NodeIdError {
    #[error("a nodeId starts with `dataset:` or `job:`")]
    Kind,
    #[error("a nodeId is `<kind>:<namespace>:<name>`; no `:` separates a namespace from a name")]
    NoName,
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.0 {
            NodeKey::Dataset(_) => "dataset",
            NodeKey::Job(_) => "job",
        };
        write!(f, "{kind}:{}:{}", self.0.namespace(), self.0.name())
    }
}

impl NodeId {
    /// The best reading of a nodeId. The text is ambiguous (namespaces
    /// hold `:` in `kafka://host:port`, names may too), so after a
    /// `scheme://` the colon before a port (`:` + digits, or Spark's
    /// `:-1`) is skipped when the port is followed by another `:`, and
    /// the next colon splits. Unlike Marquez's splitting, a topic name
    /// starting with a digit (`kafka://b:9092:1orders`) reads right.
    /// The server should try [`NodeId::readings`] against the store when
    /// this one names nothing.
    pub fn parse(s: &str) -> Result<NodeId, NodeIdError> {
        let (make, rest) = split_kind(s)?;
        let split = best_split(rest).ok_or(NodeIdError::NoName)?;
        Ok(NodeId(make(&rest[..split], &rest[split + 1..])))
    }

    /// Every reading of a nodeId (one per `:` in what follows the kind),
    /// best first, for a server that looks each up until one exists.
    pub fn readings(s: &str) -> Result<Vec<NodeId>, NodeIdError> {
        let (make, rest) = split_kind(s)?;
        let best = best_split(rest);
        let mut out: Vec<NodeId> = best
            .into_iter()
            .chain(
                rest.match_indices(':')
                    .map(|(i, _)| i)
                    .filter(|i| Some(*i) != best),
            )
            .map(|i| NodeId(make(&rest[..i], &rest[i + 1..])))
            .collect();
        out.dedup();
        if out.is_empty() {
            return Err(NodeIdError::NoName);
        }
        Ok(out)
    }
}

type Make = fn(&str, &str) -> NodeKey;

fn split_kind(s: &str) -> Result<(Make, &str), NodeIdError> {
    if let Some(rest) = s.strip_prefix("dataset:") {
        Ok((NodeKey::dataset as Make, rest))
    } else if let Some(rest) = s.strip_prefix("job:") {
        Ok((NodeKey::job as Make, rest))
    } else {
        Err(NodeIdError::Kind)
    }
}

/// The byte offset of the `:` between namespace and name.
fn best_split(rest: &str) -> Option<usize> {
    let from = rest.find("://").map_or(0, |i| i + 3);
    let mut search = from;
    while let Some(off) = rest[search..].find(':') {
        let i = search + off;
        let after = &rest[i + 1..];
        let port = after.strip_prefix('-').unwrap_or(after);
        let digits = port.bytes().take_while(u8::is_ascii_digit).count();
        let port_end = after.len() - port.len() + digits;
        // `:9092:` or `:9092,b2:9092:` is a port; what follows decides.
        if digits > 0
            && let Some(next) = after[port_end..].chars().next()
            && matches!(next, ':' | ',' | ';')
        {
            search = i + 1 + port_end;
            if next == ':' {
                return Some(search);
            }
            continue;
        }
        return Some(i);
    }
    None
}

/// An edge as Marquez writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edge {
    pub origin: String,
    pub destination: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MarquezNode {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub data: Value,
    pub in_edges: Vec<Edge>,
    pub out_edges: Vec<Edge>,
}

/// The answer of `GET /api/v1/lineage`, plus `partial`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineageAnswer {
    /// Sorted by id, as Marquez sorts them.
    pub graph: Vec<MarquezNode>,
    /// True when the depth was clamped or a cap cut the graph.
    pub partial: bool,
}

/// Marquez's lineage of `id` to `depth` (its default 20 when `None`),
/// clamped to [`super::impact::MAX_DEPTH`]. Depth counts hops (dataset → job is one).
/// Owners and other server facts are not in Marquez's shape; an unknown
/// node is the caller's 404, as in Marquez.
pub fn lineage(
    graph: &Graph,
    id: &NodeId,
    depth: Option<u32>,
) -> Result<LineageAnswer, ImpactError> {
    let n = neighbourhood(
        graph,
        &id.0,
        Limits {
            depth: depth.unwrap_or(DEFAULT_DEPTH),
            ..Limits::default()
        },
    )?;
    let ids: Vec<String> = n
        .nodes
        .iter()
        .map(|k| NodeId(k.clone()).to_string())
        .collect();
    let mut nodes: Vec<MarquezNode> = n
        .nodes
        .iter()
        .zip(&ids)
        .filter_map(|(k, id)| {
            let node = graph.node(k)?;
            Some(MarquezNode {
                id: id.clone(),
                kind: match k {
                    NodeKey::Dataset(_) => "DATASET",
                    NodeKey::Job(_) => "JOB",
                },
                data: data(node),
                in_edges: Vec::new(),
                out_edges: Vec::new(),
            })
        })
        .collect();
    for &(a, b, _) in &n.edges {
        let e = Edge {
            origin: ids[a].clone(),
            destination: ids[b].clone(),
        };
        if let Some(x) = nodes.get_mut(a) {
            x.out_edges.push(e.clone());
        }
        if let Some(x) = nodes.get_mut(b) {
            x.in_edges.push(e);
        }
    }
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(LineageAnswer {
        graph: nodes,
        partial: n.partial,
    })
}

/// Marquez's `data` for a node: the fields its UI reads, also what its
/// dataset and job lists hold. Topics are `STREAM` (Marquez calls every
/// OpenLineage dataset `DB_TABLE`).
pub fn data(node: &Node) -> Value {
    let ns = node.key.namespace();
    let name = node.key.name();
    let created = node
        .known
        .observed
        .map(|s| s.first)
        .into_iter()
        .chain(node.known.derived.map(|s| s.first))
        .min()
        .map(|t| t.to_rfc3339());
    let updated = node.known.last_seen().map(|t| t.to_rfc3339());
    let description = node
        .facet("documentation")
        .and_then(|d| d.get("description"))
        .cloned()
        .unwrap_or(Value::Null);
    match &node.detail {
        Detail::Dataset(_) => {
            let fields: Vec<Value> = node
                .facet("schema")
                .and_then(|s| s.get("fields"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|f| {
                    json!({"name": f.get("name"), "type": f.get("type"), "tags": [],
                        "description": f.get("description")})
                })
                .collect();
            json!({
                "id": {"namespace": ns, "name": name},
                "type": if ns.starts_with("kafka://") { "STREAM" } else { "DB_TABLE" },
                "name": name, "physicalName": name, "namespace": ns, "sourceName": ns,
                "fields": fields, "tags": [], "createdAt": created, "updatedAt": updated,
                "lastModifiedAt": null, "description": description,
                "facets": facets(node),
            })
        }
        Detail::Job(j) => json!({
            "id": {"namespace": ns, "name": name},
            "type": match j.kind() {
                JobKind::Batch => "BATCH",
                JobKind::Streaming => "STREAM",
                JobKind::Service => "SERVICE",
            },
            "name": name, "simpleName": name, "namespace": ns,
            "createdAt": created, "updatedAt": updated, "description": description,
            "facets": facets(node),
        }),
    }
}

fn facets(node: &Node) -> Value {
    Value::Object(
        node.facets
            .iter()
            .filter_map(|(k, s)| Some((k.clone(), s.value.clone()?)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::event::Event;
    use crate::lineage::fixtures;
    use crate::lineage::graph::{FoldContext, Provenance};
    use crate::lineage::naming::{Clusters, RegisteredCluster};

    #[test]
    fn node_ids_print_and_parse_back() {
        for (text, ns, name) in [
            ("dataset:kafka://b:9092:orders", "kafka://b:9092", "orders"),
            (
                "dataset:kafka://b:9092:1orders",
                "kafka://b:9092",
                "1orders",
            ),
            (
                "dataset:kafka://null:-1:orders",
                "kafka://null:-1",
                "orders",
            ),
            (
                "dataset:kafka://b1:9092,b2:9092:t",
                "kafka://b1:9092,b2:9092",
                "t",
            ),
            (
                "dataset:postgres://h:5432:shop.public.t",
                "postgres://h:5432",
                "shop.public.t",
            ),
            (
                "dataset:s3://bucket:key/with:colon",
                "s3://bucket",
                "key/with:colon",
            ),
            ("dataset:bigquery:p.d.t", "bigquery", "p.d.t"),
            (
                "dataset:namespace:commonDataset",
                "namespace",
                "commonDataset",
            ),
        ] {
            let id = NodeId::parse(text).expect(text);
            assert_eq!(id.0, NodeKey::dataset(ns, name), "{text}");
            assert_eq!(id.to_string(), text);
        }
        assert_eq!(
            NodeId::parse("job:sk-test:orders_enricher").map(|i| i.0),
            Ok(NodeKey::job("sk-test", "orders_enricher"))
        );
        assert_eq!(NodeId::parse("run:1234"), Err(NodeIdError::Kind));
        assert_eq!(NodeId::parse("dataset:nocolon"), Err(NodeIdError::NoName));
        // A namespace with a colon of its own reads wrong at first; the
        // other readings let the server find it.
        assert_eq!(
            NodeId::parse("dataset:my:ns:t").map(|i| i.0),
            Ok(NodeKey::dataset("my", "ns:t"))
        );
        let r = NodeId::readings("dataset:my:ns:t").expect("readings");
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].0, NodeKey::dataset("my:ns", "t"));
    }

    #[test]
    fn answers_in_marquezs_shape() {
        let c = Clusters::new(&[RegisteredCluster {
            id: "local".into(),
            brokers: vec!["127.0.0.1:9092".into()],
        }]);
        let cx = FoldContext {
            provenance: Provenance::Observed,
            clusters: &c,
        };
        let mut g = Graph::new();
        let e = Event::from_value(&serde_json::from_str(fixtures::STREAMING_START).expect("json"))
            .expect("event");
        g.fold(&e, &cx);
        let id = NodeId::parse("dataset:kafka://127.0.0.1:9092:orders").expect("id");
        let a = lineage(&g, &id, Some(1_000)).expect("known");
        assert!(a.partial, "depth 1000 is clamped");
        let v = serde_json::to_value(&a).expect("serialises");
        let ids: Vec<&str> = a.graph.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "dataset:kafka://127.0.0.1:9092:orders",
                "dataset:postgres://127.0.0.1:5432:shop.public.orders_enriched",
                "job:sk-test:orders_enricher",
            ]
        );
        let topic = &v["graph"][0];
        assert_eq!(topic["type"], "DATASET");
        assert_eq!(topic["data"]["type"], "STREAM");
        assert_eq!(topic["data"]["fields"][0]["name"], "order_id");
        assert_eq!(
            topic["outEdges"][0],
            json!({"origin": "dataset:kafka://127.0.0.1:9092:orders", "destination": "job:sk-test:orders_enricher"})
        );
        assert_eq!(v["graph"][2]["data"]["type"], "STREAM");
        assert_eq!(v["graph"][2]["inEdges"].as_array().map(Vec::len), Some(1));
        assert!(!lineage(&g, &id, None).expect("known").partial);
    }
}
