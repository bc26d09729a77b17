//! The fold: stored events into the graph, behind ingest.
//!
//! Ingest answers 201 once an event is appended (and queued in
//! `lineage_unfolded`, in the same statement); the graph is written from
//! stored events in batches of up to [`BATCH`], where one statement's
//! fixed cost is shared by hundreds of events rather than the handful a
//! request brings (BENCHMARKS, "ninth pass"). Two kinds of fold run:
//!
//! - **The `lineage-fold` routine** ([`super::routine::Fold`]) takes what
//!   is waiting, on every replica, when no other fold has the turn.
//! - **A read** ([`Fold::catch_up`]) first folds every event stored before
//!   it began (waiting for the turn if a fold has it), so an answer asked
//!   right after a 201 holds that event, whichever replica or CLI asks.
//!
//! One fold at a time holds the turn ([`store::fold_turn`]), and deletes
//! the `lineage_unfolded` rows of what it folded in the transaction that
//! writes their graph: an event is folded once, and a crash before the
//! commit leaves it waiting. A rebuild takes the turn too. An event the
//! fold cannot write (it no longer parses; the database refuses it on its
//! own) is recorded in `lineage_fold_failures` and no longer waits: its
//! sender already had a 201, so it is shown rather than retried for ever.

use super::store::{self, StoredEvent};
use crate::platform::errors::{Db, db, unreachable};
use crate::platform::ownership;
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use streamkeeper::lineage::columns;
use streamkeeper::lineage::graph::{FacetSlot, FoldContext, Graph, NodeKey, Upserts, fold};
use streamkeeper::lineage::naming::Clusters;
use streamkeeper::lineage::receive::reread;
use streamkeeper_app::error::AppError;
use tokio::sync::Notify;

/// Events folded in one transaction at most.
pub const BATCH: i64 = 1_000;

/// Tries of a batch, and of a rebuild, that the registered clusters keep
/// changing under (each change is an admin's act: a second in a row is
/// already unlikely).
pub const NAMING_TRIES: usize = 3;

/// Why a fold (or a rebuild) wrote nothing; its transaction rolled back,
/// so its events still wait.
#[derive(Debug, thiserror::Error)]
pub enum FoldError {
    #[error(transparent)]
    Db(#[from] Db),
    #[error("the registered clusters changed during each of {0} tries; try again")]
    ClustersMoving(usize),
}

/// What one round took and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round {
    /// Events taken (folded or failed).
    pub taken: usize,
    /// Those recorded as failed.
    pub failed: Vec<i64>,
}

/// The graph a page of stored events folds into, named by `clusters`, and
/// the events that no longer parse (with why).
pub fn fold_stored(
    events: &[StoredEvent],
    clusters: &Clusters,
) -> (Graph, store::Extras, Vec<(i64, String)>) {
    let mut graph = Graph::new();
    let mut extras = store::Extras::default();
    let mut unreadable = Vec::new();
    for e in events {
        match reread(e.body.as_bytes()) {
            Ok(event) => {
                let up = fold(
                    &event,
                    &FoldContext {
                        provenance: e.provenance(),
                        clusters,
                    },
                );
                extras.note(&up);
                extras.note_senders(&up, &e.sender);
                extras.ownership_sent.extend(ownership_sent(&up, &e.sender));
                graph.apply(&up);
            }
            Err(err) => {
                unreadable.push((e.id, format!("the stored event no longer parses: {err}")))
            }
        }
    }
    (graph, extras, unreadable)
}

/// An `ownership` facet (or its deletion) one event of a batch sent for
/// a node: what [`hold_ownership`] checks, every one of them.
#[derive(Clone, Debug)]
pub struct OwnershipSent {
    pub node: NodeKey,
    pub at: DateTime<Utc>,
    pub value: Option<serde_json::Value>,
    pub sender: String,
}

/// The `ownership` facets of `up`, sent by `sender`.
fn ownership_sent<'a>(
    up: &'a Upserts,
    sender: &'a str,
) -> impl Iterator<Item = OwnershipSent> + 'a {
    let datasets = up
        .datasets
        .iter()
        .map(|d| (NodeKey::Dataset(d.key.clone()), &d.facets, d.at));
    let jobs = up
        .jobs
        .iter()
        .map(|j| (NodeKey::Job(j.key.clone()), &j.facets, j.at));
    datasets.chain(jobs).flat_map(move |(node, facets, at)| {
        facets
            .iter()
            .filter(|f| f.key == "ownership")
            .map(move |f| OwnershipSent {
                node: node.clone(),
                at,
                value: f.value.clone(),
                sender: sender.to_string(),
            })
    })
}

/// Decides the `ownership` facet each node of the batch keeps: every one
/// the batch sent is checked in the order the graph merges them (by time,
/// a later event on a tie) against the one before it, the stored one or
/// the last taken (the ownership rule's `facets_taken`, asked of
/// `platform::ownership`). The last taken is written, even when a later
/// one the graph would keep was not; none taken keeps the stored one
/// ([`store::write`] holds it). So one event from another team neither
/// takes a node nor leaves it unowned, whether it comes before or after
/// an allowed one in the batch.
pub async fn hold_ownership(
    conn: &mut PgConnection,
    graph: &mut Graph,
    extras: &mut store::Extras,
) -> Result<(), Db> {
    let mut sent = std::mem::take(&mut extras.ownership_sent);
    // A stable sort: a tie keeps the events' order, as the graph merges.
    sent.sort_by_key(|s| s.at);
    let asked: Vec<ownership::NewFacet> = sent
        .iter()
        .map(|s| ownership::NewFacet {
            node: &s.node,
            team: s.value.as_ref().and_then(ownership::facet_team),
            sender: &s.sender,
        })
        .collect();
    let taken = ownership::facets_taken(conn, &asked).await?;
    let mut last: HashMap<&NodeKey, Option<&OwnershipSent>> = HashMap::new();
    for (s, t) in sent.iter().zip(taken) {
        let slot = last.entry(&s.node).or_default();
        if t {
            *slot = Some(s);
        }
    }
    for (node, kept) in last {
        let Some(s) = kept else {
            extras.held_ownership.insert(node.clone());
            continue;
        };
        if let Some(mut n) = graph.node(node).cloned() {
            let slot = FacetSlot {
                at: s.at,
                value: s.value.clone(),
            };
            n.facets.insert("ownership".to_string(), slot);
            graph.insert_node(n);
        }
        extras.facet_senders.insert(
            (node.clone(), "ownership".to_string()),
            (s.at, s.sender.clone()),
        );
    }
    Ok(())
}

/// A service's fold: the registered clusters it last named by, a wake-up
/// for the routine, and the backlog it last saw.
pub struct Fold {
    pool: PgPool,
    named_by: Mutex<Option<store::ClusterRows>>,
    wake: Notify,
    backlog: AtomicI64,
}

impl Fold {
    pub fn new(pool: PgPool) -> Self {
        Fold {
            pool,
            named_by: Mutex::new(None),
            wake: Notify::new(),
            backlog: AtomicI64::new(0),
        }
    }

    /// Events were appended: the routine need not wait for its next look.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Waits for [`Self::wake`].
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// About how many events wait, as last measured ([`Self::measure`]).
    pub fn backlog(&self) -> i64 {
        self.backlog.load(Ordering::Relaxed)
    }

    /// Measures the backlog (by every replica's appends and folds).
    pub async fn measure(&self) -> Result<i64, Db> {
        let span = store::unfolded_span(&self.pool).await?;
        self.backlog.store(span, Ordering::Relaxed);
        Ok(span)
    }

    /// Folds every event stored before this call (waiting for the turn
    /// while another fold has it): what a read does first. The backlog is
    /// measured again after, so ingest refused for it while the routine
    /// is paused takes events again once a read has folded them.
    pub async fn catch_up(&self) -> Result<(), AppError> {
        let Some(last) = store::last_unfolded(&self.pool).await? else {
            self.backlog.store(0, Ordering::Relaxed);
            return Ok(());
        };
        while self.round(0..=last, true).await.map_err(into_app)?.taken > 0 {}
        self.measure().await?;
        Ok(())
    }

    /// Folds one batch of the waiting events whose ids are in `ids`,
    /// waiting for the turn (`wait`) or, when another fold has it, doing
    /// nothing. A batch the database refuses is folded event by event, so
    /// only the event it refuses on its own is recorded as failed; one it
    /// cannot reach is left waiting (the error is returned).
    pub async fn round(&self, ids: RangeInclusive<i64>, wait: bool) -> Result<Round, FoldError> {
        let mut tx = self.pool.begin().await.map_err(Db)?;
        if !store::fold_turn(&mut tx, wait).await? {
            return Ok(Round::default());
        }
        let page = store::unfolded(&mut tx, ids, BATCH).await?;
        if page.is_empty() {
            return Ok(Round::default());
        }
        let taken: Vec<i64> = page.iter().map(|e| e.id).collect();
        match self.write(&mut tx, &page).await {
            Ok(failed) => {
                store::folded(&mut tx, &taken).await?;
                tx.commit().await.map_err(Db)?;
                return Ok(Round {
                    taken: taken.len(),
                    failed,
                });
            }
            Err(FoldError::Db(e)) => {
                drop(tx);
                tracing::warn!(error = %e, events = taken.len(), "a lineage fold failed; folding its events one by one");
            }
            Err(e) => return Err(e),
        }
        let mut round = Round::default();
        for id in taken {
            round.taken += 1;
            if let Some(failed) = self.one(id).await? {
                round.failed.push(failed);
            }
        }
        Ok(round)
    }

    /// Folds event `id` alone (if it still waits); `Some(id)` when the
    /// database refused it and it was recorded.
    async fn one(&self, id: i64) -> Result<Option<i64>, FoldError> {
        let mut tx = self.pool.begin().await.map_err(Db)?;
        store::fold_turn(&mut tx, true).await?;
        let page = store::unfolded(&mut tx, id..=id, 1).await?;
        if page.is_empty() {
            return Ok(None);
        }
        let refused = match self.write(&mut tx, &page).await {
            Ok(failed) => {
                store::folded(&mut tx, &[id]).await?;
                tx.commit().await.map_err(Db)?;
                return Ok(failed.first().copied());
            }
            // A database that does not answer is not the event's fault:
            // it stays waiting.
            Err(FoldError::Db(Db(e))) if !unreachable(&e) => e,
            Err(e) => return Err(e),
        };
        drop(tx);
        // The database's text goes to the log under a reference, and the
        // record says only that (it may quote the event).
        let reference = match db(refused) {
            AppError::Internal(reference) => reference,
            other => other.to_string(),
        };
        let mut tx = self.pool.begin().await.map_err(Db)?;
        let why = format!(
            "the database refused the event when folded on its own (log reference {reference})"
        );
        store::fold_failed(&mut tx, id, &why).await?;
        tx.commit().await.map_err(Db)?;
        Ok(Some(id))
    }

    /// Writes the graph of `page` in the caller's transaction, recording
    /// the events that no longer parse; returns those.
    async fn write(
        &self,
        tx: &mut PgConnection,
        page: &[StoredEvent],
    ) -> Result<Vec<i64>, FoldError> {
        for _ in 0..NAMING_TRIES {
            let cached = self
                .named_by
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let names = match cached {
                Some(names) => names,
                None => store::cluster_rows(&mut *tx).await?,
            };
            let clusters = Clusters::new(&names.registered());
            let (mut graph, mut extras, unreadable) = fold_stored(page, &clusters);
            hold_ownership(tx, &mut graph, &mut extras).await?;
            let written = store::write(tx, &graph, &extras, &names).await?;
            if written {
                store::write_columns(tx, &columns::versions(&graph, &clusters)).await?;
            }
            // Kept when they still stood; else registered or removed since
            // they were read.
            *self.named_by.lock().unwrap_or_else(|p| p.into_inner()) = written.then_some(names);
            if !written {
                continue;
            }
            let mut failed = Vec::with_capacity(unreadable.len());
            for (id, why) in unreadable {
                tracing::warn!(event = id, error = %why, "a stored lineage event is not in the graph");
                store::fold_failed(tx, id, &why).await?;
                failed.push(id);
            }
            return Ok(failed);
        }
        Err(FoldError::ClustersMoving(NAMING_TRIES))
    }
}

fn into_app(e: FoldError) -> AppError {
    match e {
        FoldError::Db(e) => e.into(),
        FoldError::ClustersMoving(_) => AppError::Unavailable(e.to_string()),
    }
}
