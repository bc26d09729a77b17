//! "What breaks if this changes?": everything downstream (or upstream) of
//! a node, each with one shortest path from the start, how the edge that
//! reaches it is known, and a `partial` answer that says what was cut.
//!
//! A breadth-first walk with a visited set over the petgraph adjacency,
//! bounded by a depth cap and a node budget, both clamped to hard maxima
//! (field notes A3: DataHub's unclamped `maxHops` exhausted its heap).
//! Cycles end at the visited set. Owners are the server's to know: it
//! runs the walk, fetches the owners of [`Impact::keys`] in one query and
//! fills them with [`Impact::attach_owners`].

use super::breaks::Break;
use super::graph::{Graph, Known, Node, NodeKey};
use petgraph::Direction as PgDirection;
use petgraph::graph::NodeIndex;
use serde::Serialize;
use std::collections::VecDeque;

/// Depth when the caller gives none (jobs and datasets alternate, so 6
/// hops is three jobs away).
pub const DEFAULT_DEPTH: u32 = 6;
/// Hard depth maximum; a larger request is clamped (and the answer says).
pub const MAX_DEPTH: u32 = 50;
pub const DEFAULT_BUDGET: usize = 5_000;
/// Hard node maximum, whatever is asked.
pub const MAX_BUDGET: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Following edges: who reads what this produces.
    Downstream,
    /// Against edges: where this comes from.
    Upstream,
}

/// How far to walk. [`Limits::clamped`] applies the maxima.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub depth: u32,
    /// Reached nodes at most (the start not counted).
    pub budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            depth: DEFAULT_DEPTH,
            budget: DEFAULT_BUDGET,
        }
    }
}

impl Limits {
    /// The limits within the maxima, and whether anything was lowered.
    pub fn clamped(self) -> (Limits, bool) {
        let l = Limits {
            depth: self.depth.min(MAX_DEPTH),
            budget: self.budget.min(MAX_BUDGET),
        };
        (l, l != self)
    }
}

/// What an answer is missing, if anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// Nodes lie beyond the depth cap.
    pub depth: bool,
    /// The node budget ran out with nodes still to visit.
    pub budget: bool,
    /// The request's depth or budget was over the maximum and lowered.
    pub clamped: bool,
}

impl Cut {
    pub fn any(&self) -> bool {
        self.depth || self.budget || self.clamped
    }
}

/// One reached node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reached {
    pub key: NodeKey,
    /// Hops from the start.
    pub depth: u32,
    /// The previous node of one shortest path: an index into
    /// [`Impact::nodes`], `None` when it is the start. [`Impact::path`]
    /// spells the whole path out; keeping only the step makes a walk of
    /// tens of thousands of nodes cost one key each, not one per hop.
    pub parent: Option<usize>,
    /// How the last edge of the path is known (observed/derived, times).
    pub via: Known,
    /// How the node itself is known.
    pub known: Known,
    /// The owner team, filled by the server ([`Impact::attach_owners`]).
    pub owner: Option<String>,
    /// Pending producer changes that break it, a consumer group's reader
    /// schema (filled by the server: [`Impact::attach_breaks`]).
    pub breaks: Vec<Break>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Impact {
    pub start: NodeKey,
    pub direction: Direction,
    /// In breadth-first order: nearer nodes first, so a node's `parent`
    /// always comes before it.
    pub nodes: Vec<Reached>,
    pub partial: bool,
    pub cut: Cut,
}

impl Impact {
    /// The reached nodes' keys, for the server's owner lookup.
    pub fn keys(&self) -> impl Iterator<Item = &NodeKey> {
        self.nodes.iter().map(|r| &r.key)
    }

    /// One shortest path from the start to `nodes[index]`, both ends
    /// included (empty for an index out of range).
    pub fn path(&self, index: usize) -> Vec<&NodeKey> {
        let mut path = Vec::new();
        let mut at = Some(index);
        while let Some(r) = at.and_then(|i| self.nodes.get(i)) {
            path.push(&r.key);
            at = r.parent;
        }
        if !path.is_empty() {
            path.push(&self.start);
        }
        path.reverse();
        path
    }

    /// Fills each node's owner from `owner` (the server's lookup).
    pub fn attach_owners(&mut self, owner: impl Fn(&NodeKey) -> Option<String>) {
        for r in &mut self.nodes {
            r.owner = owner(&r.key);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImpactError {
    #[error("no dataset or job {0:?} in the lineage graph")]
    UnknownNode(NodeKey),
}

/// The nodes reachable from `start` in `direction` within `limits`.
///
/// Contract: every node appears once, at its shortest distance, with one
/// shortest path (the first found; ties broken by edge insertion order);
/// `partial` is true when `cut` says anything was left out. Runs in
/// O(reached nodes + their edges); the budget bounds both.
pub fn impact(
    graph: &Graph,
    start: &NodeKey,
    direction: Direction,
    limits: Limits,
) -> Result<Impact, ImpactError> {
    let s = graph
        .index_of(start)
        .ok_or_else(|| ImpactError::UnknownNode(start.clone()))?;
    let (limits, clamped) = limits.clamped();
    let walk = walk(graph, s, direction, limits);
    let g = graph.petgraph();
    // Position of each reached node in the answer, by graph index.
    let mut slot = vec![NONE; g.node_count()];
    for (k, &(i, _)) in walk.order.iter().enumerate() {
        slot[i.index()] = k as u32;
    }
    let nodes = walk
        .order
        .iter()
        .map(|&(i, depth)| {
            let p = walk.parent_of(i).unwrap_or(s);
            let via = match direction {
                Direction::Downstream => edge_known(graph, p, i),
                Direction::Upstream => edge_known(graph, i, p),
            };
            let node: &Node = &g[i];
            Reached {
                key: node.key.clone(),
                depth,
                parent: walk
                    .parent_of(i)
                    .map(|p| slot[p.index()])
                    .filter(|k| *k != NONE)
                    .map(|k| k as usize),
                via,
                known: node.known,
                owner: None,
                breaks: Vec::new(),
            }
        })
        .collect();
    let cut = Cut {
        depth: walk.depth_cut,
        budget: walk.budget_cut,
        clamped,
    };
    Ok(Impact {
        start: start.clone(),
        direction,
        nodes,
        partial: cut.any(),
        cut,
    })
}

fn edge_known(graph: &Graph, from: NodeIndex, to: NodeIndex) -> Known {
    let g = graph.petgraph();
    g.find_edge(from, to).map(|e| g[e]).unwrap_or_default()
}

/// The bare walk: reached nodes in order with their depth, parents, and
/// what was cut. Shared with the neighbourhood of the graph view.
pub(crate) struct Walk {
    pub order: Vec<(NodeIndex, u32)>,
    parent: Vec<u32>,
    pub depth_cut: bool,
    pub budget_cut: bool,
}

const NONE: u32 = u32::MAX;

impl Walk {
    fn parent_of(&self, i: NodeIndex) -> Option<NodeIndex> {
        let p = self.parent[i.index()];
        (p != NONE).then(|| NodeIndex::new(p as usize))
    }
}

pub(crate) fn walk(graph: &Graph, start: NodeIndex, direction: Direction, limits: Limits) -> Walk {
    let g = graph.petgraph();
    let dir = match direction {
        Direction::Downstream => PgDirection::Outgoing,
        Direction::Upstream => PgDirection::Incoming,
    };
    // Parent per node index (NONE for the start and the unvisited): paths
    // are rebuilt from it at the end instead of copied along every hop.
    let mut parent = vec![NONE; g.node_count()];
    let mut seen = vec![false; g.node_count()];
    seen[start.index()] = true;
    let mut queue = VecDeque::from([(start, 0u32)]);
    let mut order = Vec::new();
    let (mut depth_cut, mut budget_cut) = (false, false);
    'walk: while let Some((i, d)) = queue.pop_front() {
        for n in g.neighbors_directed(i, dir) {
            if seen[n.index()] {
                continue;
            }
            if d >= limits.depth {
                depth_cut = true;
                continue;
            }
            if order.len() >= limits.budget {
                budget_cut = true;
                break 'walk;
            }
            seen[n.index()] = true;
            parent[n.index()] = i.index() as u32;
            order.push((n, d + 1));
            queue.push_back((n, d + 1));
        }
    }
    Walk {
        order,
        parent,
        depth_cut,
        budget_cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::fixtures::graph_in;

    fn graph(jobs: &[(&str, &[&str], &[&str])]) -> Graph {
        graph_in("n", jobs)
    }

    fn d(name: &str) -> NodeKey {
        NodeKey::dataset("n", name)
    }

    fn j(name: &str) -> NodeKey {
        NodeKey::job("n", name)
    }

    #[test]
    fn downstream_with_shortest_paths() {
        let g = graph(&[
            ("enrich", &["orders"], &["enriched"]),
            ("load", &["enriched"], &["table"]),
            ("shortcut", &["orders"], &["table"]),
        ]);
        let i = impact(&g, &d("orders"), Direction::Downstream, Limits::default()).expect("known");
        assert!(!i.partial);
        let table = i
            .nodes
            .iter()
            .find(|r| r.key == d("table"))
            .expect("table reached");
        assert_eq!(table.depth, 2);
        let at = i
            .nodes
            .iter()
            .position(|r| r.key == d("table"))
            .expect("table");
        assert_eq!(i.path(at), vec![&d("orders"), &j("shortcut"), &d("table")]);
        assert_eq!(i.path(0), vec![&d("orders"), &i.nodes[0].key]);
        assert!(i.path(99).is_empty());
        assert!(table.via.observed.is_some());
        assert_eq!(i.nodes.len(), 5);
        let up = impact(&g, &d("table"), Direction::Upstream, Limits::default()).expect("known");
        assert!(up.keys().any(|k| *k == d("orders")));
        assert_eq!(up.nodes.len(), 5);
    }

    #[test]
    fn cycles_end_and_every_node_appears_once() {
        let g = graph(&[("a", &["x"], &["y"]), ("b", &["y"], &["x"])]);
        let i = impact(&g, &d("x"), Direction::Downstream, Limits::default()).expect("known");
        let keys: Vec<&NodeKey> = i.keys().collect();
        assert_eq!(keys, vec![&j("a"), &d("y"), &j("b")]);
        assert!(!i.partial);
    }

    #[test]
    fn depth_and_budget_cuts_are_said() {
        let g = graph(&[("a", &["x"], &["y"]), ("b", &["y"], &["z"])]);
        let i = impact(
            &g,
            &d("x"),
            Direction::Downstream,
            Limits {
                depth: 2,
                budget: 100,
            },
        )
        .expect("known");
        assert_eq!(i.nodes.len(), 2);
        assert!(i.partial && i.cut.depth && !i.cut.budget);
        let i = impact(
            &g,
            &d("x"),
            Direction::Downstream,
            Limits {
                depth: 10,
                budget: 3,
            },
        )
        .expect("known");
        assert_eq!(i.nodes.len(), 3);
        assert!(i.partial && i.cut.budget && !i.cut.depth);
        // Exactly enough budget is not a cut.
        let i = impact(
            &g,
            &d("x"),
            Direction::Downstream,
            Limits {
                depth: 4,
                budget: 4,
            },
        )
        .expect("known");
        assert!(!i.partial, "{:?}", i.cut);
        let i = impact(
            &g,
            &d("x"),
            Direction::Downstream,
            Limits {
                depth: 1_000,
                budget: 4,
            },
        )
        .expect("known");
        assert!(i.partial && i.cut.clamped);
    }

    #[test]
    fn owners_come_from_the_servers_lookup() {
        let g = graph(&[("a", &["x"], &["y"])]);
        let mut i = impact(&g, &d("x"), Direction::Downstream, Limits::default()).expect("known");
        i.attach_owners(|k| (k == &d("y")).then(|| "payments".to_string()));
        assert_eq!(i.nodes[1].owner.as_deref(), Some("payments"));
        assert_eq!(i.nodes[0].owner, None);
        assert_eq!(
            impact(&g, &d("nope"), Direction::Downstream, Limits::default()),
            Err(ImpactError::UnknownNode(d("nope")))
        );
    }
}
