//! Who is next to whom in the stored graph, and what each node id names,
//! in memory: what lets an impact question find its nodes and their keys
//! without a round trip per hop, and answer in one round trip.
//!
//! Only what never changes for an id is kept: the topology and each
//! node's key (an edge's or node's times change with every event, and an
//! owner with the catalog; they are read from the store for the nodes and
//! edges an answer shows, in the same statement that catches up). Nodes
//! and edges are only ever added, except by `lineage rebuild`, which
//! empties the graph and bumps `lineage_state.generation`. So each
//! question reads what was added since it last looked
//! ([`store::Delta`]: nodes and edges whose writing transaction was still
//! to come or still running in the snapshot read last time); a new
//! generation loads everything again. This holds whichever replica or CLI
//! process wrote them, and whatever order concurrent writers commit in.

use super::store;
use crate::platform::errors::Db;
use sqlx::PgPool;
use std::collections::{HashMap, HashSet};
use streamkeeper::lineage::graph::NodeKey;
use streamkeeper::lineage::impact::Direction;
use tokio::sync::RwLock;

#[derive(Default)]
struct Edges {
    /// `None` until loaded.
    generation: Option<i64>,
    /// The last read's snapshot: what the next read asks for.
    xmax: i64,
    xip: Vec<i64>,
    out: HashMap<i64, Vec<i64>>,
    inn: HashMap<i64, Vec<i64>>,
    known: HashSet<(i64, i64)>,
    keys: HashMap<i64, NodeKey>,
    ids: HashMap<NodeKey, i64>,
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

/// The stored graph's adjacency and node keys, shared by a service's
/// questions.
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

/// Where the memory stood when a walk ran: what a read asks to catch up
/// from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub generation: i64,
    pub xmax: i64,
    pub xip: Vec<i64>,
}

/// What catching up did to an answer walked before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caught {
    /// Nothing added could change the walk: its answer stands.
    Unchanged,
    /// Edges were added from a node the walk reached: walk again.
    Grown,
    /// A rebuild: ids changed; everything was read again.
    Rebuilt,
}

impl Adjacency {
    /// Brings the memory up to what is committed now (everything, the
    /// first time or after a rebuild).
    pub async fn refresh(&self, pool: &PgPool) -> Result<(), Db> {
        let mut e = self.edges.write().await;
        loop {
            let delta = store::added_since(pool, e.xmax, &e.xip).await?;
            if e.generation.is_some_and(|g| g != delta.generation) {
                // A rebuild: ids changed; read the whole graph again.
                *e = Edges::default();
                continue;
            }
            Self::apply(&mut e, delta);
            return Ok(());
        }
    }

    fn apply(e: &mut Edges, delta: store::Delta) {
        e.generation = Some(delta.generation);
        e.xmax = delta.xmax;
        e.xip = delta.xip;
        let names = delta.node_namespace.into_iter().zip(delta.node_name);
        for ((id, kind), (namespace, name)) in
            delta.node_id.into_iter().zip(delta.node_kind).zip(names)
        {
            let key = store::node_key(&kind, &namespace, &name);
            e.ids.insert(key.clone(), id);
            e.keys.insert(id, key);
        }
        for (src, dst) in delta.src.into_iter().zip(delta.dst) {
            e.add(src, dst);
        }
    }

    /// Applies what a question's read (made from `mark`) says was added,
    /// and says whether the walk over `members` in `direction` made
    /// before it still stands: it does unless an edge added since `mark`
    /// leaves one of them that way (new nodes alone change no walk), or
    /// the generation moved (then everything is read again here).
    pub async fn catch_up(
        &self,
        pool: &PgPool,
        mark: &Mark,
        delta: store::Delta,
        direction: Direction,
        members: &HashSet<i64>,
    ) -> Result<Caught, Db> {
        let mut e = self.edges.write().await;
        match e.generation {
            Some(g) if g == delta.generation => {}
            // Another question already read a newer generation: this read
            // predates it and its ids are gone.
            Some(g) if g > delta.generation => return Ok(Caught::Rebuilt),
            _ => {
                *e = Edges::default();
                drop(e);
                self.refresh(pool).await?;
                return Ok(Caught::Rebuilt);
            }
        }
        if mark.generation != delta.generation {
            // The walk ran on ids of before a rebuild.
            Self::apply(&mut e, delta);
            return Ok(Caught::Rebuilt);
        }
        // Every edge committed since the walk's mark is in the delta (some
        // may be known already: counting them only costs a second walk).
        let grown = delta.src.iter().zip(&delta.dst).any(|(s, d)| {
            members.contains(match direction {
                Direction::Downstream => s,
                Direction::Upstream => d,
            })
        });
        // Whichever snapshot is later stays the mark: the memory holds
        // what both reads saw, so either is a true starting point.
        let keep = (delta.xmax < e.xmax).then(|| (e.xmax, std::mem::take(&mut e.xip)));
        Self::apply(&mut e, delta);
        if let Some((xmax, xip)) = keep {
            e.xmax = xmax;
            e.xip = xip;
        }
        Ok(if grown {
            Caught::Grown
        } else {
            Caught::Unchanged
        })
    }

    /// The id a key names, as far as the memory knows (loaded first if
    /// it never was).
    pub async fn id_of(&self, pool: &PgPool, key: &NodeKey) -> Result<Option<i64>, Db> {
        if self.edges.read().await.generation.is_none() {
            self.refresh(pool).await?;
        }
        Ok(self.edges.read().await.ids.get(key).copied())
    }

    /// The key of each of `ids` (an id the memory does not know is left
    /// out: it cannot happen for a node reached through an edge, which is
    /// written with or after its nodes).
    pub async fn keys(&self, ids: impl Iterator<Item = i64>) -> HashMap<i64, NodeKey> {
        let e = self.edges.read().await;
        ids.filter_map(|i| e.keys.get(&i).map(|k| (i, k.clone())))
            .collect()
    }

    /// The breadth-first reach of `start` in each of `directions`, within
    /// `depth` hops and about `budget` nodes: the members and edges the
    /// store walk loaded level by level, found in memory; and the mark the
    /// memory stood at.
    pub async fn reach(
        &self,
        start: i64,
        directions: &[Direction],
        depth: u32,
        budget: usize,
    ) -> (Found, Mark) {
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
        let mark = Mark {
            generation: e.generation.unwrap_or_default(),
            xmax: e.xmax,
            xip: e.xip.clone(),
        };
        (
            Found {
                members,
                edges,
                beyond,
            },
            mark,
        )
    }

    /// Edges held (for tests and the bench).
    pub async fn edge_count(&self) -> usize {
        self.edges.read().await.known.len()
    }
}
