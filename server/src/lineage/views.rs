//! The Marquez read API (lineage, namespaces, lists, a question's answer)
//! and the lineage page's graph view and search.

use streamkeeper::lineage::kinds::{NodeKind, kind_of};
use streamkeeper::lineage::layout::{LayoutOptions, layout};
use streamkeeper::lineage::neighbourhood::neighbourhood;
use streamkeeper_app::lineage::model::{
    CutView, GraphEdge, GraphNode, GraphView, NodeAsk, NodeHit, known_as,
};

use super::{GRAPH_DEFAULTS, GRAPH_MAX, LineageService, SEARCH_LIMIT, store};
use crate::accounts::require;
use crate::platform::errors::internal;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::lineage::graph::NodeKey;
use streamkeeper::lineage::impact::{Direction, Limits};
use streamkeeper::lineage::marquez::{LineageAnswer, NodeId, lineage};
use streamkeeper_app::error::AppError;

impl LineageService {
    /// Marquez's `GET /api/v1/lineage`: the node's neighbourhood in its
    /// shape, the depth clamped and `partial` added.
    pub async fn marquez_lineage(
        &self,
        who: &Principal,
        node_id: &str,
        depth: Option<u32>,
    ) -> Result<LineageAnswer, AppError> {
        require(who, Action::Read, "read lineage")?;
        self.fold.catch_up().await?;
        let readings = NodeId::readings(node_id).map_err(|e| AppError::Invalid(e.to_string()))?;
        // The text is ambiguous; the first reading that names a node wins.
        let mut found = None;
        for r in readings {
            match self.resolve(&r.0).await {
                Ok(id) => {
                    found = Some((id, r));
                    break;
                }
                Err(AppError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let Some((start, _)) = found else {
            return Err(AppError::NotFound(format!("The lineage node {node_id}")));
        };
        let limits = Limits {
            depth: depth.unwrap_or(streamkeeper::lineage::marquez::DEFAULT_DEPTH),
            ..Limits::default()
        };
        let loaded = self
            .load(
                start,
                &[Direction::Downstream, Direction::Upstream],
                limits,
                true,
                None,
            )
            .await?;
        let mut answer = lineage(&loaded.graph, &NodeId(loaded.start), depth)
            .map_err(|e| AppError::NotFound(e.to_string()))?;
        answer.partial |= loaded.beyond;
        Ok(answer)
    }

    /// Marquez's namespaces: every namespace a dataset or job is in.
    pub async fn namespaces(&self, who: &Principal) -> Result<Vec<store::NamespaceRow>, AppError> {
        require(who, Action::Read, "read lineage")?;
        self.fold.catch_up().await?;
        Ok(store::namespaces(&self.pool).await?)
    }

    /// A page of a namespace's datasets or jobs in Marquez's `data` shape,
    /// with the total.
    pub async fn list(
        &self,
        who: &Principal,
        namespace: &str,
        jobs: bool,
        limit: i64,
        offset: i64,
    ) -> Result<(i64, Vec<serde_json::Value>), AppError> {
        require(who, Action::Read, "read lineage")?;
        self.fold.catch_up().await?;
        let kind = if jobs { "job" } else { "dataset" };
        let (total, rows) = store::list(&self.pool, kind, namespace, limit, offset).await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        let facets = store::facets(&self.pool, &ids, None).await?;
        let graph = store::graph_of(&rows, facets, &[]);
        let data = rows
            .iter()
            .filter_map(|r| graph.node(&r.key()))
            .map(streamkeeper::lineage::marquez::data)
            .collect();
        Ok((total, data))
    }

    /// The node a question names (a nodeId, or a topic with its cluster
    /// by name or id), its direction and its limits (`defaults` where the
    /// question gives none).
    pub async fn question(
        &self,
        ask: &NodeAsk,
        defaults: Limits,
    ) -> Result<(NodeKey, Direction, Limits), AppError> {
        let direction = match ask.direction.as_deref() {
            None | Some("" | "downstream") => Direction::Downstream,
            Some("upstream") => Direction::Upstream,
            Some(other) => {
                return Err(AppError::Request(format!(
                    "direction {other:?} is not downstream or upstream"
                )));
            }
        };
        let node = ask.node.as_deref().filter(|n| !n.is_empty());
        let topic = ask.topic.as_deref().filter(|t| !t.is_empty());
        let key = match (node, topic) {
            (Some(node), None) => {
                NodeId::parse(node)
                    .map_err(|e| AppError::Request(e.to_string()))?
                    .0
            }
            (None, Some(topic)) => match (ask.cluster.as_deref(), ask.cluster_id) {
                (Some(name), None) => self.topic(Some(name), topic).await?,
                (None, id) => self.topic_in(id, topic).await?,
                (Some(_), Some(_)) => {
                    return Err(AppError::Request(
                        "give the cluster by name or by id, not both".into(),
                    ));
                }
            },
            _ => {
                return Err(AppError::Request(
                    "give either node (a nodeId) or topic".into(),
                ));
            }
        };
        let limits = Limits {
            depth: ask.depth.unwrap_or(defaults.depth),
            budget: ask.budget.unwrap_or(defaults.budget),
        };
        Ok((key, direction, limits))
    }

    /// The graph view: the node's neighbourhood both ways within the
    /// depth and node budget (each within the view's maxima: a drawing of
    /// thousands of boxes helps nobody), laid out in layers, with each
    /// node's kind, owner team and live flags.
    pub(super) async fn graph_view(
        &self,
        who: &Principal,
        ask: &NodeAsk,
    ) -> Result<GraphView, AppError> {
        require(who, Action::Read, "read lineage")?;
        self.fold.catch_up().await?;
        let (key, _, asked) = self.question(ask, GRAPH_DEFAULTS).await?;
        let limits = Limits {
            depth: asked.depth.min(GRAPH_MAX.depth),
            budget: asked.budget.min(GRAPH_MAX.budget),
        };
        let clamped = limits != asked;
        let start = self.resolve(&key).await?;
        let loaded = self
            .load(
                start,
                &[Direction::Downstream, Direction::Upstream],
                limits,
                true,
                Some(&["ownership", "jobType", "datasetType"]),
            )
            .await?;
        let hood = neighbourhood(&loaded.graph, &loaded.start, limits)
            .map_err(|e| AppError::NotFound(e.to_string()))?;
        let owners = Self::owners(hood.nodes.iter(), &loaded.ids, &loaded.ruled);
        let ids: Vec<i64> = hood
            .nodes
            .iter()
            .filter_map(|k| loaded.ids.get(k).copied())
            .collect();
        let flags = store::live_flags(&self.pool, &ids).await?;
        let absent = store::not_in_cluster(&self.pool, &ids).await?;
        let opts = LayoutOptions::default();
        let pairs: Vec<(usize, usize)> = hood.edges.iter().map(|&(a, b, _)| (a, b)).collect();
        let drawn =
            layout(hood.nodes.len(), &pairs, &opts).map_err(|e| internal("lineage layout", e))?;
        let id = |k: &NodeKey| NodeId(k.clone()).to_string();
        let nodes = hood
            .nodes
            .iter()
            .zip(&drawn.nodes)
            .map(|(k, p)| {
                let node = loaded.graph.node(k);
                GraphNode {
                    id: id(k),
                    kind: node.map_or(NodeKind::Job, kind_of).as_str().to_string(),
                    namespace: k.namespace().to_string(),
                    name: k.name().to_string(),
                    owner: owners.get(k).cloned(),
                    flags: loaded
                        .ids
                        .get(k)
                        .and_then(|i| flags.get(i))
                        .copied()
                        .unwrap_or(0),
                    known_as: node.map_or("observed", |n| known_as(&n.known)).to_string(),
                    last_seen: node.and_then(|n| n.known.last_seen()),
                    not_in_cluster: loaded.ids.get(k).is_some_and(|i| absent.contains(i)),
                    x: p.x,
                    y: p.y,
                }
            })
            .collect();
        let edges = hood
            .edges
            .iter()
            .zip(drawn.edges)
            .map(|(&(from, to, k), r)| GraphEdge {
                from,
                to,
                points: r.points,
                reversed: r.reversed,
                known_as: known_as(&k).to_string(),
            })
            .collect();
        let cut = CutView {
            depth: hood.cut.depth || loaded.beyond,
            budget: hood.cut.budget,
            clamped: hood.cut.clamped || clamped,
        };
        Ok(GraphView {
            center: id(&loaded.start),
            depth: limits.depth,
            budget: limits.budget,
            nodes,
            edges,
            width: drawn.width,
            height: drawn.height,
            node_width: opts.node_width,
            node_height: opts.node_height,
            partial: hood.partial || loaded.beyond || clamped,
            cut,
        })
    }

    /// Datasets and jobs by name.
    pub(super) async fn search_nodes(
        &self,
        who: &Principal,
        q: &str,
    ) -> Result<Vec<NodeHit>, AppError> {
        require(who, Action::Read, "read lineage")?;
        let q = q.trim();
        if q.is_empty() {
            return Ok(Vec::new());
        }
        self.fold.catch_up().await?;
        let rows = store::search(&self.pool, q, SEARCH_LIMIT).await?;
        Ok(rows
            .iter()
            .map(|r| NodeHit {
                id: NodeId(r.key()).to_string(),
                kind: r.kind.clone(),
                namespace: r.namespace.clone(),
                name: r.name.clone(),
                last_seen: r.known().last_seen(),
            })
            .collect())
    }
}
