//! Lineage (issue 14): OpenLineage events in (HTTP, drop-in for Marquez),
//! stored raw and folded into the graph; impact and the Marquez read API
//! out. The rules are `streamkeeper::lineage`'s; this stores, batches and
//! loads.
//!
//! **Ingest.** A request's events are parsed, redacted and hashed where
//! they arrive, then handed to [`WRITERS`] writer tasks; each takes
//! whatever is queued (up to [`MAX_BATCH`] events) and appends the raw
//! events (a hash already stored is a duplicate, stored nothing twice),
//! queueing the new ones for the fold, in one statement; each request is
//! answered after that commit, so a 201 means stored. The graph is folded
//! from stored events behind it, in batches of hundreds ([`fold`]), and
//! every read first folds what was stored before it began, so a 201 is in
//! the next answer. Queued events are bounded
//! ([`IngestLimits::max_pending`]), and so is the fold's backlog
//! ([`IngestLimits::max_unfolded`]): beyond either a request is answered
//! 429 with `Retry-After` at once, before anything waits. Every statement
//! takes its rows in key order, so two writers never lock the same rows
//! in different orders (no deadlocks), and batching is what makes
//! thousands of events a second cheap: one statement per table per batch,
//! not per event.
//!
//! **A bad event never costs a good one.** Parsing is per event; a batch
//! whose transaction fails is retried event by event, so only the event
//! the database refuses is lost, and it is answered as such. The fold
//! does the same, and records the event it cannot write for admins.
//!
//! **Reads** find the part of the graph a question needs in an in-memory
//! adjacency of node ids ([`adjacency`]: a visited set, the depth cap and
//! node budget of [`streamkeeper::lineage::impact`]), brought up to date
//! from the edges table at each question, so every replica and the CLI
//! answer alike from the same tables; then load those nodes (and the
//! times of the edges the answer shows) into a `Graph` the pure walks
//! run over: a handful of queries whatever the depth, none per hop. An
//! impact question needs one: the memory also holds each node's key, so
//! the walk runs first and a single statement both catches the memory up
//! and reads the times and owners of what the answer shows
//! ([`LineageService::impact`]).

pub mod adjacency;
pub mod api;
pub mod cli;
pub mod fold;
mod owner;
pub mod routine;
pub mod store;

use streamkeeper::access::ownership::Owner;
use streamkeeper::lineage::kinds::{NodeKind, kind_of};
use streamkeeper::lineage::layout::{LayoutOptions, layout};
use streamkeeper::lineage::neighbourhood::neighbourhood;
use streamkeeper_app::lineage::model::{
    CutView, GraphEdge, GraphNode, GraphView, NodeAsk, NodeHit, SentView, known_as,
};
pub use streamkeeper_app::lineage::model::{ImpactNode, ImpactView, NoticeView, TeamNoticeView};
use streamkeeper_app::port::Lineage;

use crate::accounts::require;
use crate::audit::audited;
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::errors::{Db, internal};
use crate::schemas;
use adjacency::Caught;
use fold::{Fold, FoldError, NAMING_TRIES};
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, OnceLock};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::lineage::breaks::{BrokenReader, ItemRef, PendingChange};
use streamkeeper::lineage::event::{Event, EventError, Kind};
use streamkeeper::lineage::graph::{Graph, Known, Node, NodeKey, Provenance};
use streamkeeper::lineage::impact::{Direction, Impact, Limits, impact};
use streamkeeper::lineage::marquez::{LineageAnswer, NodeId, lineage};
use streamkeeper::lineage::naming::{self, Clusters};
use streamkeeper::lineage::notify;
use streamkeeper::lineage::receive::{Received, receive, timely};
use streamkeeper_app::error::AppError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

/// Events written in one transaction at most.
pub const MAX_BATCH: usize = 1_000;

/// Writer tasks taking batches from the one queue: while one waits on
/// Postgres, the next gathers and writes the following batch. A few are
/// enough to keep Postgres busy; more would only make the batches smaller.
pub const WRITERS: usize = 3;

/// How much ingest may queue, and how far a gzip body may inflate.
#[derive(Clone, Copy, Debug)]
pub struct IngestLimits {
    /// Events accepted but not yet stored; more is a 429.
    pub max_pending: usize,
    /// Events stored but not yet folded (about); more is a 429, so reads,
    /// which fold what is waiting first, stay quick.
    pub max_unfolded: i64,
    /// The largest body after inflating a gzip one.
    pub max_inflated: usize,
}

impl IngestLimits {
    /// 20,000 events queued (a few seconds of the writer's pace), 50,000
    /// waiting for the fold (about ten seconds of its pace), and bodies
    /// inflated to twice the request body limit: events reach hundreds of
    /// KB uncompressed (Trino's are about 200 KB).
    pub fn for_body_limit(body_limit: usize) -> Self {
        IngestLimits {
            max_pending: 20_000,
            max_unfolded: 50_000,
            max_inflated: body_limit.saturating_mul(2).max(16 << 20),
        }
    }
}

/// Why one event was not stored.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("{0}")]
    Event(#[from] EventError),
    /// Postgres cannot keep U+0000 in text or JSONB.
    #[error("the event contains a NUL character (\\u0000), which cannot be stored")]
    Nul,
    /// Ingest is saturated: try again after a second.
    #[error("lineage ingest is saturated; retry after a second")]
    Saturated,
    /// The store failed (retriable).
    #[error("{0}")]
    Store(AppError),
}

impl Refused {
    /// Whether sending the same event again may succeed.
    pub fn retriable(&self) -> bool {
        matches!(self, Refused::Saturated | Refused::Store(_))
    }
}

/// An event ready to store.
pub struct Accepted {
    pub received: Received,
    pub provenance: Provenance,
    /// The account (username) or routine it came from.
    pub sender: String,
    /// `http`, or `kafka:<cluster id>`.
    pub source: String,
}

/// Parses one event and checks it can be stored.
pub fn accept_one(body: &[u8]) -> Result<Received, Refused> {
    let r = receive(body)?;
    storable(&r)?;
    Ok(r)
}

/// A parsed event the store can keep: dated no more than a day ahead
/// (`receive::timely`), and no NUL anywhere (the canonical bytes spell it
/// `\u0000`; an escaped backslash before it is not one).
pub fn storable(r: &Received) -> Result<(), Refused> {
    timely(&r.event, crate::platform::clock::now())?;
    let c = &r.canonical;
    let nul = c.windows(6).enumerate().any(|(i, w)| {
        w == b"\\u0000" && c[..i].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0
    });
    if nul { Err(Refused::Nul) } else { Ok(()) }
}

fn kind_str(e: &Event) -> &'static str {
    match e.kind() {
        Kind::RunEvent => "run",
        Kind::DatasetEvent => "dataset",
        Kind::JobEvent => "job",
    }
}

/// What became of one stored event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    New,
    /// The same canonical event was stored before (or earlier in the batch).
    Duplicate,
}

struct Pending {
    events: Vec<Accepted>,
    _permit: OwnedSemaphorePermit,
    done: oneshot::Sender<Vec<Result<Stored, Refused>>>,
}

pub struct LineageService {
    pool: PgPool,
    limits: IngestLimits,
    pending: Arc<Semaphore>,
    writer: OnceLock<mpsc::UnboundedSender<Pending>>,
    fold: Arc<Fold>,
    adjacency: adjacency::Adjacency,
}

impl LineageService {
    pub fn new(pool: PgPool, limits: IngestLimits) -> Self {
        LineageService {
            fold: Arc::new(Fold::new(pool.clone())),
            pool,
            pending: Arc::new(Semaphore::new(limits.max_pending)),
            limits,
            writer: OnceLock::new(),
            adjacency: adjacency::Adjacency::default(),
        }
    }

    pub fn limits(&self) -> IngestLimits {
        self.limits
    }

    /// The fold of stored events into the graph.
    pub fn fold(&self) -> &Fold {
        &self.fold
    }

    /// May `who` send lineage? Refused is a 403 (audited by the web layer).
    pub fn may_send(&self, who: &Principal) -> Result<(), AppError> {
        require(who, Action::SendLineage, "send lineage events")
    }

    fn writer(&self) -> &mpsc::UnboundedSender<Pending> {
        self.writer.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let rx = Arc::new(tokio::sync::Mutex::new(rx));
            for _ in 0..WRITERS {
                tokio::spawn(write_loop(self.pool.clone(), self.fold.clone(), rx.clone()));
            }
            tx
        })
    }

    /// Stores `events`, answering each once it is committed (or why not).
    /// All or none are queued: a saturated ingest refuses the lot at once.
    pub async fn ingest(&self, events: Vec<Accepted>) -> Vec<Result<Stored, Refused>> {
        let n = events.len();
        if n == 0 {
            return Vec::new();
        }
        let permits = u32::try_from(n.min(self.limits.max_pending)).unwrap_or(u32::MAX);
        let permit = match self.pending.clone().try_acquire_many_owned(permits) {
            Ok(permit) if self.fold.backlog() <= self.limits.max_unfolded => permit,
            _ => return (0..n).map(|_| Err(Refused::Saturated)).collect(),
        };
        let (done, answer) = oneshot::channel();
        let sent = self.writer().send(Pending {
            events,
            _permit: permit,
            done,
        });
        if sent.is_err() {
            let e = internal("lineage writer", "the writer task has stopped");
            return (0..n).map(|_| Err(Refused::Store(e.clone()))).collect();
        }
        match answer.await {
            Ok(results) => results,
            Err(e) => {
                let e = internal("lineage writer", e);
                (0..n).map(|_| Err(Refused::Store(e.clone()))).collect()
            }
        }
    }

    /// Empties the graph and folds every stored event again, in one
    /// transaction (readers see the old graph until it commits; writers
    /// wait). Returns (events replayed, events that no longer parse).
    pub async fn rebuild(&self) -> Result<(usize, usize), FoldError> {
        for _ in 0..NAMING_TRIES {
            let named_by = store::cluster_rows(&self.pool).await?;
            if let Some(counts) = self.replay(&named_by).await? {
                return Ok(counts);
            }
        }
        Err(FoldError::ClustersMoving(NAMING_TRIES))
    }

    /// One try of [`Self::rebuild`], naming by `named_by`; `None` (rolled
    /// back) when the registered clusters changed meanwhile.
    async fn replay(&self, named_by: &store::ClusterRows) -> Result<Option<(usize, usize)>, Db> {
        let clusters = Clusters::new(&named_by.registered());
        let mut tx = self.pool.begin().await?;
        // Folds wait until it commits: it folds every stored event, so
        // their work meanwhile would be done twice.
        store::fold_turn(&mut tx, true).await?;
        store::clear_graph(&mut tx).await?;
        let (mut after, mut replayed, mut unreadable) = (0i64, 0usize, 0usize);
        loop {
            let page = store::events_after(&mut tx, after, 2_000).await?;
            let Some(last) = page.last() else { break };
            after = last.id;
            let (mut graph, mut extras, failed) = fold::fold_stored(&page, &clusters);
            fold::hold_ownership(&mut tx, &mut graph, &mut extras).await?;
            if !store::write(&mut tx, &graph, &extras, named_by).await? {
                return Ok(None);
            }
            for (id, why) in &failed {
                tracing::warn!(event = id, error = %why, "a stored lineage event no longer parses");
                store::fold_failed(&mut tx, *id, why).await?;
            }
            replayed += page.len() - failed.len();
            unreadable += failed.len();
        }
        tx.commit().await?;
        Ok(Some((replayed, unreadable)))
    }

    async fn clusters(&self) -> Result<Clusters, AppError> {
        Ok(Clusters::new(&store::clusters(&self.pool).await?))
    }

    /// The stored node a key names: itself, or (a dataset) its canonical
    /// name, or the one dataset claiming it as an alias. Several claimants
    /// are a conflict, shown rather than guessed.
    pub async fn resolve(&self, key: &NodeKey) -> Result<i64, AppError> {
        if let Some(id) = store::node_by_key(&self.pool, key).await? {
            return Ok(id);
        }
        if let NodeKey::Dataset(d) = key {
            let named = naming::dataset(&d.namespace, &d.name, &self.clusters().await?);
            let canonical = NodeKey::dataset(&named.namespace, &named.name);
            if let Some(id) = store::node_by_key(&self.pool, &canonical).await? {
                return Ok(id);
            }
            let claims = store::alias_targets(&self.pool, d).await?;
            match claims.as_slice() {
                [one] => return Ok(*one),
                [] => {}
                _ => {
                    return Err(AppError::Conflict(format!(
                        "{} {} is claimed as an alias by {} datasets; ask for one of them by its own name",
                        d.namespace,
                        d.name,
                        claims.len()
                    )));
                }
            }
        }
        Err(AppError::NotFound(format!(
            "The lineage node {}",
            NodeId(key.clone())
        )))
    }

    /// The topic's dataset: on the named cluster, or the one Kafka dataset
    /// of that name (several on different clusters: name the cluster).
    pub async fn topic(&self, cluster: Option<&str>, topic: &str) -> Result<NodeKey, AppError> {
        let cluster_id = match cluster {
            Some(name) => Some(
                store::cluster_id(&self.pool, name)
                    .await?
                    .ok_or_else(|| AppError::NotFound(format!("The cluster {name:?}")))?,
            ),
            None => None,
        };
        self.topic_in(cluster_id, topic).await
    }

    /// The topic's dataset on the cluster of that id, or the one Kafka
    /// dataset of that name.
    async fn topic_in(&self, cluster_id: Option<i64>, topic: &str) -> Result<NodeKey, AppError> {
        self.fold.catch_up().await?;
        let found = store::topic_nodes(&self.pool, topic, cluster_id).await?;
        match found.as_slice() {
            [] => Err(AppError::NotFound(format!(
                "A lineage dataset for the topic {topic:?}"
            ))),
            [one] => Ok(one.key()),
            [first, ..] if cluster_id.is_some() => Ok(first.key()),
            many => Err(AppError::Conflict(format!(
                "The topic {topic:?} is on {} clusters in the lineage graph; name one with cluster",
                many.len()
            ))),
        }
    }

    /// The part of the stored graph within `limits` of `start` in
    /// `directions`, found in the in-memory adjacency (brought up to date
    /// first), with every edge among its nodes and their times when
    /// `among`, else the edges the walk followed without times (an impact
    /// reads the times of the edges its answer shows), and the facets
    /// named in `facets` (all when `None`), and each node's owner by the
    /// ownership rule.
    async fn load(
        &self,
        start: i64,
        directions: &[Direction],
        limits: Limits,
        among: bool,
        facets: Option<&[&str]>,
    ) -> Result<Loaded, Db> {
        let (limits, _) = limits.clamped();
        self.adjacency.refresh(&self.pool).await?;
        let (found, _) = self
            .adjacency
            .reach(start, directions, limits.depth, limits.budget)
            .await;
        let ids: Vec<i64> = found.members.into_iter().collect();
        let edges = if among {
            store::edges_among(&self.pool, &ids).await?
        } else {
            found
                .edges
                .iter()
                .map(|&(src, dst)| store::EdgeRow::untimed(src, dst))
                .collect()
        };
        // Independent reads at once: one round trip's wait, not three.
        let (nodes, facets, ruled) = tokio::try_join!(
            store::nodes(&self.pool, &ids),
            store::facets(&self.pool, &ids, facets),
            crate::platform::ownership::lineage_nodes(&self.pool, &ids),
        )?;
        let start_key = nodes
            .iter()
            .find(|n| n.id == start)
            .map(store::NodeRow::key)
            .ok_or(Db(sqlx::Error::RowNotFound))?;
        Ok(Loaded {
            ruled,
            ids: nodes.iter().map(|n| (n.key(), n.id)).collect(),
            graph: store::graph_of(&nodes, facets, &edges),
            start: start_key,
            beyond: found.beyond,
        })
    }

    /// Everything downstream (or upstream) of `key` within `limits`, each
    /// node with one shortest path and its owner team.
    pub async fn impact(
        &self,
        who: &Principal,
        key: &NodeKey,
        direction: Direction,
        limits: Limits,
    ) -> Result<Impact, AppError> {
        Ok(self.answer(who, key, direction, limits).await?.0)
    }

    /// The impact, and the owner team of the node asked about, in one
    /// round trip: the walk runs over the in-memory adjacency and keys as
    /// they stand, then one statement reads what was added since they were
    /// last caught up together with the times and owners of the nodes the
    /// answer shows and the times of the edges that reach them. When
    /// something added leaves a node the walk reached, the walk runs again
    /// on the memory that read brought up to date (so the answer holds
    /// every commit made before the question), with a second read.
    async fn answer(
        &self,
        who: &Principal,
        key: &NodeKey,
        direction: Direction,
        limits: Limits,
    ) -> Result<(Impact, Option<String>), AppError> {
        require(who, Action::Read, "read lineage")?;
        self.fold.catch_up().await?;
        let (walk, _) = limits.clamped();
        let mut grown = false;
        // A rebuild between the walk and its read changes every id; two in
        // a row during one question would be a rebuild loop, not traffic.
        for _ in 0..3 {
            let start = match self.adjacency.id_of(&self.pool, key).await? {
                Some(id) => id,
                // Not a node the memory knows: a new one, or a name the
                // store resolves (a raw namespace, an alias).
                None => {
                    self.adjacency.refresh(&self.pool).await?;
                    match self.adjacency.id_of(&self.pool, key).await? {
                        Some(id) => id,
                        None => self.resolve(key).await?,
                    }
                }
            };
            let (found, mark) = self
                .adjacency
                .reach(start, &[direction], walk.depth, walk.budget)
                .await;
            let keys = self.adjacency.keys(found.members.iter().copied()).await;
            let Some(start_key) = keys.get(&start).cloned() else {
                // Resolved by the store after the memory last looked.
                self.adjacency.refresh(&self.pool).await?;
                continue;
            };
            // The pure walk over the reached part, its times still unknown.
            let mut graph = Graph::new();
            graph.insert_node(Node::bare(start_key.clone()));
            for (src, dst) in &found.edges {
                if let (Some(a), Some(b)) = (keys.get(src), keys.get(dst)) {
                    graph.insert_edge(a.clone(), b.clone(), Known::default());
                }
            }
            let mut answer = impact(&graph, &start_key, direction, limits)
                .map_err(|e| AppError::NotFound(e.to_string()))?;
            answer.cut.depth |= found.beyond;
            answer.partial |= found.beyond;
            let ids: HashMap<&NodeKey, i64> = keys.iter().map(|(id, k)| (k, *id)).collect();
            let id = |k: &NodeKey| ids.get(k).copied().unwrap_or_default();
            let shown: Vec<i64> = answer.nodes.iter().map(|r| id(&r.key)).collect();
            let pairs: Vec<(i64, i64)> = answer
                .nodes
                .iter()
                .zip(&shown)
                .map(|(r, &node)| {
                    let parent = r.parent.map_or(start, |p| shown[p]);
                    match direction {
                        Direction::Downstream => (parent, node),
                        Direction::Upstream => (node, parent),
                    }
                })
                .collect();
            let asked: Vec<i64> = shown.iter().copied().chain([start]).collect();
            let read = store::impact_read(&self.pool, mark.xmax, &mark.xip, &asked, &pairs).await?;
            let caught = self
                .adjacency
                .catch_up(&self.pool, &mark, read.delta, direction, &found.members)
                .await?;
            match caught {
                Caught::Unchanged => {}
                // Once: the second walk ran on memory caught up after the
                // question was asked; what its read adds is the next one's.
                Caught::Grown if !grown => {
                    grown = true;
                    continue;
                }
                Caught::Grown => {}
                Caught::Rebuilt => continue,
            }
            let ruled = crate::platform::ownership::lineage_nodes(&self.pool, &asked).await?;
            let owner = |id: &i64| ruled.get(id).map(|o| o.team.name.clone());
            for ((r, node), pair) in answer.nodes.iter_mut().zip(&shown).zip(&pairs) {
                r.via = read.edges.get(pair).copied().unwrap_or_default();
                r.known = read.nodes.get(node).map(|f| f.known).unwrap_or_default();
            }
            answer.attach_owners(|k| owner(&id(k)));
            // The answer's topics of registered clusters, from the same read.
            let topics: Vec<(&NodeKey, i64)> = answer
                .datasets()
                .filter_map(|k| Some((k, read.nodes.get(&id(k))?.cluster?)))
                .collect();
            let pending = self.pending_changes(who, &topics).await?;
            answer.attach_breaks(&pending);
            return Ok((answer, owner(&start)));
        }
        Err(internal(
            "lineage impact",
            "the lineage graph was rebuilt three times during one question",
        ))
    }

    /// The pending producer changes on `topics` (an answer's datasets that
    /// are topics of a registered cluster, with its id), with the consumer
    /// groups their checks found cannot read them; what `who` may not read
    /// of a change (its item and reasons) is left out.
    async fn pending_changes(
        &self,
        who: &Principal,
        topics: &[(&NodeKey, i64)],
    ) -> Result<Vec<PendingChange>, AppError> {
        if topics.is_empty() {
            return Ok(Vec::new());
        }
        let namespace: HashMap<(i64, &str), &str> = topics
            .iter()
            .map(|(key, cluster)| ((*cluster, key.name()), key.namespace()))
            .collect();
        let pairs: Vec<(i64, String)> = topics
            .iter()
            .map(|(key, cluster)| (*cluster, key.name().to_string()))
            .collect();
        let reader = schemas::store::Reader {
            user_id: who.user_id,
            username: &who.username,
            admin: who.has(Role::Admin),
        };
        let rows = schemas::store::pending_breaks(&self.pool, &pairs, reader).await?;
        // One change per item (by id, whether or not `who` may see it),
        // its broken groups in the query's order.
        let mut changes: BTreeMap<i64, PendingChange> = BTreeMap::new();
        for row in rows {
            let Some(ns) = namespace.get(&(row.cluster_id, row.topic.as_str())) else {
                continue;
            };
            let change = changes.entry(row.item_id).or_insert_with(|| PendingChange {
                topic: NodeKey::dataset(ns, &row.topic),
                item: row.readable.then(|| ItemRef {
                    id: row.item_id,
                    title: row.title.clone(),
                }),
                broken: Vec::new(),
            });
            change.broken.push(BrokenReader {
                group: row.group_name,
                reasons: if row.readable {
                    reason_messages(&row.reasons)
                } else {
                    Vec::new()
                },
            });
        }
        Ok(changes.into_values().collect())
    }

    /// "Notify owners": answers the impact of `key` and sends it to every
    /// owner team it reaches, an inbox line to each member and the team's
    /// webhook (delivered with the flags' retries), recorded as a question
    /// asked and answered, audited. Only an admin or an owner of the
    /// node's own team may (`streamkeeper::lineage::notify::may_notify`).
    pub async fn notify_owners(
        &self,
        who: &Principal,
        from: &str,
        key: &NodeKey,
        direction: Direction,
        limits: Limits,
    ) -> Result<NoticeView, AppError> {
        let asked_at = crate::platform::clock::now();
        let (answer, start_owner) = self.answer(who, key, direction, limits).await?;
        let answered_at = crate::platform::clock::now();
        let view = ImpactView::of(&answer);
        let owner_team = match &start_owner {
            Some(name) => store::team_named(&self.pool, name).await?,
            None => None,
        };
        let facts = Facts::load(&self.pool, who).await?;
        if !notify::may_notify(facts.steward(who), owner_team) {
            // A 403, audited by the web layer like every refused write; the
            // CLI acts as an admin.
            return Err(AppError::Forbidden(format!(
                "send the impact of {} to its owners (owners of its team and admins may)",
                view.start
            )));
        }
        let groups = notify::by_owner(&answer);
        // The rule's owners are teams of the catalog, every one.
        let names: Vec<&str> = groups.keys().copied().collect();
        let teams = store::teams_named(&self.pool, &names).await?;
        let mut tx = begin(&self.pool).await?;
        let (question, notified_at) = store::insert_question(
            &mut tx,
            &store::NewQuestion {
                node: &view.start,
                direction: &view.direction,
                asked_by: &who.username,
                asked_at,
                answered_at,
                reached: i32::try_from(view.nodes.len()).unwrap_or(i32::MAX),
                partial: view.partial,
                teams: teams.iter().map(|t| t.name.as_str()).collect(),
                answer: serde_json::to_value(&view).unwrap_or_default(),
                by_webhook: teams.iter().any(|t| t.webhook_url.is_some()),
            },
        )
        .await?;
        let mut told = Vec::new();
        for team in &teams {
            let mine: Vec<&ImpactNode> = groups
                .get(team.name.as_str())
                .map(|ix| ix.iter().filter_map(|i| view.nodes.get(*i)).collect())
                .unwrap_or_default();
            let message = notify::message(&view.start, &team.name, mine.len(), view.partial);
            store::notify_users(&mut tx, &team.members, question, &message).await?;
            if let Some(url) = &team.webhook_url {
                let body = serde_json::json!({
                    "kind": "lineage.impact", "question": question, "start": view.start,
                    "direction": view.direction, "team": team.name, "message": message,
                    "partial": view.partial, "nodes": mine,
                });
                crate::flags::store::enqueue_question(&mut tx, question, url, &body).await?;
            }
            told.push(TeamNoticeView {
                team: team.name.clone(),
                nodes: mine.len(),
                members: team.members.len(),
                webhook: team.webhook_url.is_some(),
            });
        }
        audited(
            &mut tx,
            who,
            from,
            "lineage.impact.notify",
            format!("lineage:{}", view.start),
            serde_json::json!({"question": question, "direction": view.direction,
                "reached": view.nodes.len(), "partial": view.partial,
                "teams": told.iter().map(|t| &t.team).collect::<Vec<_>>()}),
        )
        .await?;
        commit(tx).await?;
        Ok(NoticeView {
            question,
            asked_at,
            answered_at,
            notified_at,
            teams: told,
            impact: view,
        })
    }

    /// Owner teams by the ownership rule (`ruled`, by node id, as
    /// [`Self::load`] read it), and nothing else.
    fn owners<'a>(
        keys: impl Iterator<Item = &'a NodeKey>,
        ids: &HashMap<NodeKey, i64>,
        ruled: &HashMap<i64, Owner>,
    ) -> HashMap<NodeKey, String> {
        keys.filter_map(|k| Some((k.clone(), ruled.get(ids.get(k)?)?.team.name.clone())))
            .collect()
    }

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
    async fn graph_view(&self, who: &Principal, ask: &NodeAsk) -> Result<GraphView, AppError> {
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
            owner: self.owner_view(who, start).await?,
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
    async fn search_nodes(&self, who: &Principal, q: &str) -> Result<Vec<NodeHit>, AppError> {
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

    /// Loads the in-memory adjacency now (serve does at start), so the
    /// first impact question does not.
    pub async fn warm(&self) -> Result<(), Db> {
        self.adjacency.refresh(&self.pool).await
    }

    /// The fold, for admins: how many stored events wait for it, and the
    /// ones it could not write (the newest 100; `failed` counts them all).
    pub async fn fold_state(&self, who: &Principal) -> Result<FoldState, AppError> {
        require(who, Action::SeeRoutines, "see the lineage fold")?;
        let waiting = store::waiting(&self.pool).await?;
        let (failed, failures) = store::fold_failures_counted(&self.pool, 100).await?;
        Ok(FoldState {
            waiting,
            failed,
            failures,
        })
    }

    /// Stored counts (events, nodes, edges), for tests and the CLI, once
    /// the fold has caught up with what was stored before.
    pub async fn counts(&self) -> Result<store::Counts, AppError> {
        self.fold.catch_up().await?;
        Ok(store::counts(&self.pool).await?)
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

/// What [`LineageService::fold_state`] answers.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FoldState {
    /// Stored events not in the graph yet.
    pub waiting: i64,
    /// Stored events the fold could not write.
    pub failed: i64,
    pub failures: Vec<store::FoldFailure>,
}

/// The graph view's depth and node budget when the question gives none:
/// two hops each way is a job and its datasets on either side.
pub const GRAPH_DEFAULTS: Limits = Limits {
    depth: 2,
    budget: 200,
};
/// The graph view's maxima; more is lowered and the view says `partial`.
pub const GRAPH_MAX: Limits = Limits {
    depth: 12,
    budget: 500,
};
/// Search hits shown at most.
const SEARCH_LIMIT: i64 = 50;
/// Sent impacts listed at most.
const SENT_LIMIT: i64 = 10;

#[async_trait::async_trait]
impl Lineage for LineageService {
    async fn set_node_owner(
        &self,
        who: &Principal,
        from: &str,
        node: &str,
        team: Option<&str>,
    ) -> Result<Option<String>, AppError> {
        Ok(self
            .give_node(who, from, node, team)
            .await?
            .map(|o| o.to_string()))
    }

    async fn graph(&self, who: &Principal, ask: &NodeAsk) -> Result<GraphView, AppError> {
        self.graph_view(who, ask).await
    }

    async fn search(&self, who: &Principal, q: &str) -> Result<Vec<NodeHit>, AppError> {
        self.search_nodes(who, q).await
    }

    async fn what_breaks(&self, who: &Principal, ask: &NodeAsk) -> Result<ImpactView, AppError> {
        let (key, direction, limits) = self.question(ask, Limits::default()).await?;
        Ok(ImpactView::of(
            &self.impact(who, &key, direction, limits).await?,
        ))
    }

    async fn send_to_owners(
        &self,
        who: &Principal,
        from: &str,
        ask: &NodeAsk,
    ) -> Result<NoticeView, AppError> {
        let (key, direction, limits) = self.question(ask, Limits::default()).await?;
        self.notify_owners(who, from, &key, direction, limits).await
    }

    async fn sent(
        &self,
        who: &Principal,
        node: &str,
        direction: &str,
    ) -> Result<Vec<SentView>, AppError> {
        require(who, Action::Read, "read lineage")?;
        Ok(store::sent(&self.pool, node, direction, SENT_LIMIT).await?)
    }
}

/// The sentences of a check's reasons for one consumer group, as its
/// stored report holds them (`Incompatibility`'s `message`).
fn reason_messages(reasons: &serde_json::Value) -> Vec<String> {
    reasons
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|r| r.get("message").and_then(|m| m.as_str()))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The part of the graph a question needs, as loaded from the store.
struct Loaded {
    /// Each loaded node's owner by the ownership rule, by node id.
    ruled: HashMap<i64, Owner>,
    /// Each loaded node's id.
    ids: HashMap<NodeKey, i64>,
    graph: Graph,
    start: NodeKey,
    /// Nodes lie past the depth cap (not loaded: the walk cannot see them).
    beyond: bool,
}

/// Takes what is queued (at least one request, at most [`MAX_BATCH`]
/// events unless one request brings more); `None` once the queue closed.
async fn next_batch(
    rx: &tokio::sync::Mutex<mpsc::UnboundedReceiver<Pending>>,
) -> Option<Vec<Pending>> {
    // One writer gathers at a time; the others wait for the lock, not for
    // the queue, so each batch takes everything queued while it gathers.
    let mut rx = rx.lock().await;
    let first = rx.recv().await?;
    let mut n = first.events.len();
    let mut batch = vec![first];
    while n < MAX_BATCH {
        match rx.try_recv() {
            Ok(p) => {
                n += p.events.len();
                batch.push(p);
            }
            Err(_) => break,
        }
    }
    Some(batch)
}

/// A writer task: batches what is queued, writes, answers. Writers run
/// side by side; each statement takes its rows in key order
/// ([`store::write`]), so they do not deadlock, and if Postgres
/// ever picks one of them as a deadlock's victim its batch is stored event
/// by event like any failed batch.
async fn write_loop(
    pool: PgPool,
    fold: Arc<Fold>,
    rx: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Pending>>>,
) {
    while let Some(batch) = next_batch(&rx).await {
        let events: Vec<&Accepted> = batch.iter().flat_map(|p| &p.events).collect();
        let mut results = match write(&pool, &events).await {
            Ok(stored) => stored.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => {
                tracing::warn!(error = %e, events = events.len(), "a lineage batch failed; storing its events one by one");
                let mut one_by_one = Vec::with_capacity(events.len());
                for ev in &events {
                    one_by_one.push(match write(&pool, &[*ev]).await {
                        Ok(s) => Ok(s.into_iter().next().unwrap_or(Stored::Duplicate)),
                        Err(e) => Err(Refused::Store(e)),
                    });
                }
                one_by_one
            }
        }
        .into_iter();
        if results
            .as_slice()
            .iter()
            .any(|r| matches!(r, Ok(Stored::New)))
        {
            fold.wake();
        }
        for Pending {
            events,
            _permit,
            done,
        } in batch
        {
            let mine: Vec<_> = results.by_ref().take(events.len()).collect();
            // Room in the queue before the answer: a producer told "stored"
            // may send again at once without a 429.
            drop(_permit);
            // A client that gave up does not stop the others' answers.
            let _ = done.send(mine);
        }
    }
}

/// Appends `events` (one statement: no transaction to open and commit,
/// one round trip); an event already stored is answered as a duplicate.
async fn write(pool: &PgPool, events: &[&Accepted]) -> Result<Vec<Stored>, AppError> {
    let rows: Vec<store::NewEvent> = events
        .iter()
        .map(|e| store::NewEvent {
            hash: &e.received.hash,
            body: std::str::from_utf8(&e.received.canonical).unwrap_or(""),
            provenance: e.provenance,
            kind: kind_str(&e.received.event),
            event_time: e.received.event.header().event_time,
            sender: &e.sender,
            source: &e.source,
        })
        .collect();
    let mut conn = pool.acquire().await.map_err(Db)?;
    let appended = store::append(&mut conn, &rows).await?;
    let mut new: HashSet<Vec<u8>> = appended.into_iter().collect();
    // The first of equal events in the batch is the new one.
    Ok(events
        .iter()
        .map(|e| {
            if new.remove(e.received.hash.as_slice()) {
                Stored::New
            } else {
                Stored::Duplicate
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event_with(text: &str) -> Vec<u8> {
        format!(
            r#"{{"eventTime": "2026-01-01T00:00:00Z", "producer": "p", "dataset": {{"namespace": "n", "name": {text}, "facets": {{}}}}}}"#
        )
        .into_bytes()
    }

    #[test]
    fn a_nul_is_refused_but_an_escaped_backslash_before_u0000_is_not_one() {
        assert!(matches!(
            accept_one(&event_with(r#""a\u0000b""#)),
            Err(Refused::Nul)
        ));
        // The text `\u0000` (a backslash, then u0000): storable.
        assert!(accept_one(&event_with(r#""a\\u0000b""#)).is_ok());
        // A backslash, then a real NUL.
        assert!(matches!(
            accept_one(&event_with(r#""a\\\u0000b""#)),
            Err(Refused::Nul)
        ));
        assert!(!Refused::Nul.retriable() && Refused::Saturated.retriable());
    }
}
