//! Who is next to whom in the stored graph, by node id, in memory: what
//! lets an impact question find its nodes without a round trip per hop.
//!
//! Only the topology is kept (an edge's times change with every event;
//! they are read from the store for the edges an answer shows). Edges are
//! only ever added, except by `lineage rebuild`, which empties the graph
//! and bumps `lineage_state.generation`. So each question first reads what
//! was added since it last looked ([`store::edges_since`]: edges whose
//! writing transaction was still to come or still running in the snapshot
//! read last time), in one statement; a new generation loads everything
//! again. This holds
//! whichever replica or CLI process wrote the edges, and whatever order
//! concurrent writers commit in.

use super::store;
use crate::platform::errors::Db;
use sqlx::PgPool;
use std::collections::{HashMap, HashSet};
use streamkeeper::lineage::impact::Direction;
use tokio::sync::RwLock;

#[derive(Default)]
struct Edges {
    /// `None` until loaded.
    generation: Option<i64>,
    /// The last read's snapshot: what the next read asks for
    /// ([`store::edges_since`]).
    xmax: i64,
    xip: Vec<i64>,
    out: HashMap<i64, Vec<i64>>,
    inn: HashMap<i64, Vec<i64>>,
    known: HashSet<(i64, i64)>,
}

impl Edges {
    fn add(&mut self, src: i64, dst: i64) {
        // A read after a long transaction may return edges seen before.
        if self.known.insert((src, dst)) {
            self.out.entry(src).or_default().push(dst);
            self.inn.entry(dst).or_default().push(src);
        }
    }
}

/// The stored graph's adjacency, shared by a service's questions.
#[derive(Default)]
pub struct Adjacency {
    edges: RwLock<Edges>,
}

/// What a walk found: the members, the edges it followed (as `(src, dst)`),
/// and whether anything lies past the depth cap.
pub struct Found {
    pub members: HashSet<i64>,
    pub edges: Vec<(i64, i64)>,
    pub beyond: bool,
}

impl Adjacency {
    /// Brings the adjacency up to what is committed now.
    pub async fn refresh(&self, pool: &PgPool) -> Result<(), Db> {
        let mut e = self.edges.write().await;
        loop {
            let delta = store::edges_since(pool, e.xmax, &e.xip).await?;
            if e.generation.is_some_and(|g| g != delta.generation) {
                // A rebuild: ids changed; read the whole graph again.
                *e = Edges::default();
                continue;
            }
            e.generation = Some(delta.generation);
            e.xmax = delta.xmax;
            e.xip = delta.xip;
            for (src, dst) in delta.src.into_iter().zip(delta.dst) {
                e.add(src, dst);
            }
            return Ok(());
        }
    }

    /// The breadth-first reach of `start` in each of `directions`, within
    /// `depth` hops and about `budget` nodes: the members and edges the
    /// store walk loaded level by level, found in memory.
    pub async fn reach(
        &self,
        start: i64,
        directions: &[Direction],
        depth: u32,
        budget: usize,
    ) -> Found {
        let e = self.edges.read().await;
        let mut members: HashSet<i64> = HashSet::from([start]);
        let mut edges = Vec::new();
        let mut beyond = false;
        for dir in directions {
            let (next_of, downstream) = match dir {
                Direction::Downstream => (&e.out, true),
                Direction::Upstream => (&e.inn, false),
            };
            let mut seen: HashSet<i64> = HashSet::from([start]);
            let mut frontier = vec![start];
            for hop in 0..=depth {
                if frontier.is_empty() {
                    break;
                }
                if hop == depth {
                    // Past the cap only whether anything lies there matters.
                    beyond |= frontier.iter().any(|n| {
                        next_of
                            .get(n)
                            .is_some_and(|o| o.iter().any(|x| !seen.contains(x)))
                    });
                    break;
                }
                let mut next = Vec::new();
                for n in &frontier {
                    for &other in next_of.get(n).map(Vec::as_slice).unwrap_or_default() {
                        if seen.insert(other) {
                            next.push(other);
                        }
                        edges.push(if downstream { (*n, other) } else { (other, *n) });
                    }
                }
                // Past the budget the walk stops; nothing further is needed.
                if seen.len() > budget + 1 {
                    break;
                }
                frontier = next;
            }
            members.extend(seen);
        }
        Found {
            members,
            edges,
            beyond,
        }
    }

    /// Edges held (for tests and the bench).
    pub async fn edge_count(&self) -> usize {
        self.edges.read().await.known.len()
    }
}
