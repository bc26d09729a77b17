//! The part of the graph around one node that a view draws or the
//! Marquez-compatible API returns: what is up- and downstream of it
//! within a depth, with every edge among those nodes.

use super::graph::{Graph, Known, NodeKey};
use super::impact::{Cut, Direction, ImpactError, Limits, walk};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub struct Neighbourhood {
    /// The centre first, then downstream then upstream nodes, nearer first.
    pub nodes: Vec<NodeKey>,
    /// `(from, to, how known)` as indexes into `nodes`, every edge of the
    /// graph between two included nodes.
    pub edges: Vec<(usize, usize, Known)>,
    pub partial: bool,
    pub cut: Cut,
}

/// The nodes within `limits.depth` hops downstream and upstream of
/// `center` (the budget is shared: downstream first, upstream gets the
/// rest), and the edges among them. Siblings (other readers of an
/// upstream dataset) are not included, unlike Marquez's undirected
/// expansion: they are neither affected by nor feeding the centre.
pub fn neighbourhood(
    graph: &Graph,
    center: &NodeKey,
    limits: Limits,
) -> Result<Neighbourhood, ImpactError> {
    let c = graph
        .index_of(center)
        .ok_or_else(|| ImpactError::UnknownNode(center.clone()))?;
    let (limits, clamped) = limits.clamped();
    let down = walk(graph, c, Direction::Downstream, limits);
    let up = walk(
        graph,
        c,
        Direction::Upstream,
        Limits {
            depth: limits.depth,
            budget: limits.budget.saturating_sub(down.order.len()),
        },
    );
    let mut at: HashMap<usize, usize> = HashMap::new();
    let mut members = vec![c];
    at.insert(c.index(), 0);
    for &(i, _) in down.order.iter().chain(&up.order) {
        at.entry(i.index()).or_insert_with(|| {
            members.push(i);
            members.len() - 1
        });
    }
    let g = graph.petgraph();
    let mut edges = Vec::new();
    for (k, &i) in members.iter().enumerate() {
        for e in g.edges_directed(i, petgraph::Direction::Outgoing) {
            use petgraph::visit::EdgeRef;
            if let Some(&t) = at.get(&e.target().index()) {
                edges.push((k, t, *e.weight()));
            }
        }
    }
    let cut = Cut {
        depth: down.depth_cut || up.depth_cut,
        budget: down.budget_cut || up.budget_cut,
        clamped,
    };
    Ok(Neighbourhood {
        nodes: members.into_iter().map(|i| g[i].key.clone()).collect(),
        edges,
        partial: cut.any(),
        cut,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::event::Event;
    use crate::lineage::graph::{FoldContext, Provenance};
    use crate::lineage::naming::Clusters;
    use serde_json::json;

    #[test]
    fn up_and_down_with_the_edges_between() {
        let c = Clusters::default();
        let cx = FoldContext {
            provenance: Provenance::Observed,
            clusters: &c,
        };
        let mut g = Graph::new();
        for (job, i, o) in [("a", "x", "y"), ("b", "y", "z"), ("other", "x", "w")] {
            let e = Event::from_value(&json!({"eventTime": "2026-01-01T00:00:00Z", "producer": "p",
                "job": {"namespace": "n", "name": job},
                "inputs": [{"namespace": "n", "name": i}], "outputs": [{"namespace": "n", "name": o}]}))
            .expect("event");
            g.fold(&e, &cx);
        }
        let n = neighbourhood(&g, &NodeKey::dataset("n", "y"), Limits::default()).expect("known");
        assert_eq!(n.nodes[0], NodeKey::dataset("n", "y"));
        // y, b, z downstream; a, x upstream; not the sibling `other`/`w`.
        assert_eq!(n.nodes.len(), 5);
        assert!(!n.nodes.contains(&NodeKey::job("n", "other")));
        assert_eq!(n.edges.len(), 4);
        assert!(!n.partial);
    }
}
