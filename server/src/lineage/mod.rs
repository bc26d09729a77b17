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
//!
//! **Field-level questions** (issue 43) read column edges, kept per
//! dataset from its newest `columnLineage` facet by the same fold, a
//! column hop at a time ([`columns`]).

pub mod adjacency;
pub mod api;
mod breakage;
pub mod cli;
pub mod columns;
pub mod fold;
mod impacts;
mod ingest;
mod owner;
pub mod routine;
pub mod store;
mod views;

pub use ingest::{
    Accepted, IngestLimits, MAX_BATCH, Refused, Stored, WRITERS, accept_one, storable,
};

use streamkeeper_app::lineage::model::{
    DatasetColumnsView, FieldImpactView, GraphView, NodeAsk, NodeHit, SentView,
};
pub use streamkeeper_app::lineage::model::{ImpactNode, ImpactView, NoticeView, TeamNoticeView};
use streamkeeper_app::port::Lineage;

use crate::accounts::require;
use crate::platform::errors::Db;
use fold::{Fold, FoldError, NAMING_TRIES};
use ingest::Pending;
use sqlx::PgPool;
use std::sync::{Arc, OnceLock};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::lineage::graph::NodeKey;
use streamkeeper::lineage::impact::Limits;
use streamkeeper::lineage::marquez::NodeId;
use streamkeeper::lineage::naming::{self, Clusters};
use streamkeeper_app::error::AppError;
use tokio::sync::{Semaphore, mpsc};

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
            let versions = streamkeeper::lineage::columns::versions(&graph, &clusters);
            store::write_columns(&mut tx, &versions).await?;
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

    async fn field_paths(
        &self,
        who: &Principal,
        ask: &NodeAsk,
        field: &str,
    ) -> Result<FieldImpactView, AppError> {
        Ok(FieldImpactView::of(
            &self.field_impact(who, ask, field).await?,
        ))
    }

    async fn dataset_columns(
        &self,
        who: &Principal,
        ask: &NodeAsk,
    ) -> Result<DatasetColumnsView, AppError> {
        self.columns_of(who, ask).await
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
