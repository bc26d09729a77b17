//! The lineage store: raw events (append-only, deduplicated by their hash)
//! and the graph folded from them. Writes come as a graph folded in
//! memory from a batch of events (`streamkeeper::lineage::graph::Graph`),
//! so each row arrives merged once and the SQL applies the same merge
//! rules again against what is stored, in one statement a batch
//! ([`write`]). Reads catch the in-memory adjacency and keys up
//! ([`added_since`]; an impact question in the same statement as the rest
//! of what it reads, [`impact_read`]) and load the nodes a question
//! reached back into a `Graph` for the pure walks.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use sqlx::{FromRow, PgConnection, PgPool};
use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet};
use std::ops::RangeInclusive;
use streamkeeper::lineage::event::EventType;
use streamkeeper::lineage::graph::{
    DatasetInfo, DatasetKey, Detail, FacetSlot, Graph, JobInfo, JobKind, Known, Node, NodeKey,
    Provenance, Seen, Upserts,
};
use streamkeeper::lineage::naming::{NameIssue, RegisteredCluster};
use streamkeeper_app::lineage::model::SentView;

/// One event as it is appended.
pub struct NewEvent<'a> {
    pub hash: &'a [u8; 32],
    pub body: &'a str,
    pub provenance: Provenance,
    pub kind: &'static str,
    pub event_time: DateTime<Utc>,
    pub sender: &'a str,
    pub source: &'a str,
}

pub fn provenance_str(p: Provenance) -> &'static str {
    match p {
        Provenance::Observed => "observed",
        Provenance::Derived => "derived",
    }
}

fn provenance_of(s: &str) -> Provenance {
    if s == "derived" {
        Provenance::Derived
    } else {
        Provenance::Observed
    }
}

/// A stored event for a replay.
#[derive(FromRow)]
pub struct StoredEvent {
    pub id: i64,
    pub body: String,
    pub provenance: String,
    /// Who sent it (a username, or the routine that read it): what an
    /// `ownership` facet it sets may speak for.
    pub sender: String,
}

impl StoredEvent {
    pub fn provenance(&self) -> Provenance {
        provenance_of(&self.provenance)
    }
}

/// Stored events after `after` (an id), oldest first.
pub async fn events_after(
    conn: &mut PgConnection,
    after: i64,
    limit: i64,
) -> Result<Vec<StoredEvent>, Db> {
    Ok(sqlx::query_as(
        "SELECT id, body, provenance, sender FROM lineage_events WHERE id > $1 ORDER BY id LIMIT $2",
    )
    .bind(after)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

pub async fn event_count(pool: &PgPool) -> Result<i64, Db> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM lineage_events")
        .fetch_one(pool)
        .await?)
}

/// Empties the graph (not the events) for a rebuild, in the caller's
/// transaction: folds wait on the lock until it commits. The fold's
/// failures go too: the rebuild tries every event again. Events still
/// waiting for the fold stay queued (folding one twice changes nothing).
pub async fn clear_graph(conn: &mut PgConnection) -> Result<(), Db> {
    sqlx::query("TRUNCATE lineage_aliases, lineage_run_facets, lineage_runs, lineage_edges, lineage_facets, lineage_nodes, lineage_fold_failures")
        .execute(&mut *conn)
        .await?;
    // Node ids change: every in-memory adjacency must read the edges again.
    sqlx::query("UPDATE lineage_state SET generation = generation + 1")
        .execute(conn)
        .await?;
    Ok(())
}

/// The registered clusters as read: what a batch's datasets are named by,
/// and what its statement checks still holds ([`write`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterRows {
    ids: Vec<i64>,
    bootstraps: Vec<String>,
}

impl ClusterRows {
    /// Each cluster with its bootstrap brokers, for naming.
    pub fn registered(&self) -> Vec<RegisteredCluster> {
        self.ids
            .iter()
            .zip(&self.bootstraps)
            .map(|(id, bootstrap)| RegisteredCluster {
                id: id.to_string(),
                brokers: bootstrap
                    .split([',', ';'])
                    .map(str::trim)
                    .filter(|b| !b.is_empty())
                    .map(str::to_string)
                    .collect(),
            })
            .collect()
    }
}

/// The registered clusters, in id order.
pub async fn cluster_rows(conn: impl sqlx::PgExecutor<'_>) -> Result<ClusterRows, Db> {
    let rows: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, bootstrap FROM clusters WHERE removed_at IS NULL ORDER BY id")
            .fetch_all(conn)
            .await?;
    let (ids, bootstraps) = rows.into_iter().unzip();
    Ok(ClusterRows { ids, bootstraps })
}

/// The registered clusters with their bootstrap brokers, for naming.
pub async fn clusters(pool: &PgPool) -> Result<Vec<RegisteredCluster>, Db> {
    Ok(cluster_rows(pool).await?.registered())
}

/// What a folded batch adds that the in-memory graph does not keep: when
/// each alias claim and each run facet was made, and who sent each node
/// facet the graph keeps.
#[derive(Default)]
pub struct Extras {
    /// (alias, dataset) → seen.
    pub alias_seen: HashMap<(DatasetKey, DatasetKey), Seen>,
    /// (run id, facet key) → (at, value; `None` deleted).
    pub run_facets: HashMap<(String, String), (DateTime<Utc>, Option<Value>)>,
    /// (node, facet key) → (at, sender) of the change the graph keeps.
    pub facet_senders: HashMap<(NodeKey, String), (DateTime<Utc>, String)>,
    /// Every `ownership` facet the batch's events sent, in their order:
    /// each is checked, not the latest alone (`fold::hold_ownership`).
    pub ownership_sent: Vec<super::fold::OwnershipSent>,
    /// Nodes whose stored `ownership` facet none of the batch's may
    /// replace (`fold::hold_ownership`).
    pub held_ownership: HashSet<NodeKey>,
}

impl Extras {
    /// Records who sent the node facets of `up`, by the graph's merge
    /// rule (the latest change wins, a later event on a tie), so the
    /// sender stored is the one of the value stored.
    pub fn note_senders(&mut self, up: &Upserts, sender: &str) {
        let datasets = up
            .datasets
            .iter()
            .map(|d| (NodeKey::Dataset(d.key.clone()), &d.facets, d.at));
        let jobs = up
            .jobs
            .iter()
            .map(|j| (NodeKey::Job(j.key.clone()), &j.facets, j.at));
        for (node, facets, at) in datasets.chain(jobs) {
            for f in facets {
                let slot = self
                    .facet_senders
                    .entry((node.clone(), f.key.clone()))
                    .or_insert((at, sender.to_string()));
                if slot.0 <= at {
                    *slot = (at, sender.to_string());
                }
            }
        }
    }

    /// Records what `up` says that the graph will not keep.
    pub fn note(&mut self, up: &Upserts) {
        for a in &up.aliases {
            let seen = self
                .alias_seen
                .entry((a.alias.clone(), a.dataset.clone()))
                .or_insert(Seen {
                    first: a.at,
                    last: a.at,
                });
            seen.first = seen.first.min(a.at);
            seen.last = seen.last.max(a.at);
        }
        if let Some(r) = &up.run {
            for f in &r.facets {
                let slot = self
                    .run_facets
                    .entry((r.run_id.clone(), f.key.clone()))
                    .or_insert((r.at, f.value.clone()));
                if slot.0 <= r.at {
                    *slot = (r.at, f.value.clone());
                }
            }
        }
    }
}

fn kind_str(k: JobKind) -> &'static str {
    match k {
        JobKind::Batch => "BATCH",
        JobKind::Streaming => "STREAMING",
        JobKind::Service => "SERVICE",
    }
}

fn kind_of(s: &str) -> Option<JobKind> {
    match s {
        "BATCH" => Some(JobKind::Batch),
        "STREAMING" => Some(JobKind::Streaming),
        "SERVICE" => Some(JobKind::Service),
        _ => None,
    }
}

fn node_kind(k: &NodeKey) -> &'static str {
    match k {
        NodeKey::Dataset(_) => "dataset",
        NodeKey::Job(_) => "job",
    }
}

fn seen_cols(k: &Known) -> [Option<DateTime<Utc>>; 4] {
    [
        k.observed.map(|s| s.first),
        k.observed.map(|s| s.last),
        k.derived.map(|s| s.first),
        k.derived.map(|s| s.last),
    ]
}

/// A column per time of [`seen_cols`], for `UNNEST`.
#[derive(Default)]
struct SeenColumns([Vec<Option<DateTime<Utc>>>; 4]);

impl SeenColumns {
    fn push(&mut self, k: &Known) {
        for (col, v) in self.0.iter_mut().zip(seen_cols(k)) {
            col.push(v);
        }
    }
}

/// A deleted facet is SQL NULL, whichever way the JSON said it.
fn facet_value(v: &Option<Value>) -> Option<Value> {
    v.clone().filter(|v| !v.is_null())
}

/// Appends `events` (those not stored yet) and queues the new ones for
/// the fold, and the new derived ones for forwarding, in one statement:
/// what a 201 means. Rows go in hash order, so two writers lock in one
/// order. Returns the hashes appended (an event already stored is not).
pub async fn append(conn: &mut PgConnection, events: &[NewEvent<'_>]) -> Result<Vec<Vec<u8>>, Db> {
    let mut events: Vec<&NewEvent> = events.iter().collect();
    events.sort_by_key(|e| e.hash);
    let hashes: Vec<Vec<u8>> = events.iter().map(|e| e.hash.to_vec()).collect();
    let bodies: Vec<&str> = events.iter().map(|e| e.body).collect();
    let provenance: Vec<&str> = events
        .iter()
        .map(|e| provenance_str(e.provenance))
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind).collect();
    let times: Vec<DateTime<Utc>> = events.iter().map(|e| e.event_time).collect();
    let senders: Vec<&str> = events.iter().map(|e| e.sender).collect();
    let sources: Vec<&str> = events.iter().map(|e| e.source).collect();
    Ok(sqlx::query_scalar(
        "WITH appended AS (
             INSERT INTO lineage_events (hash, body, provenance, kind, event_time, sender, source)
             SELECT * FROM UNNEST($1::bytea[], $2::text[], $3::text[], $4::text[],
                                  $5::timestamptz[], $6::text[], $7::text[])
             ORDER BY 1
             ON CONFLICT (hash) DO NOTHING
             RETURNING id, hash, provenance
         ), unfolded AS (
             INSERT INTO lineage_unfolded (event_id) SELECT id FROM appended ORDER BY id
         ), queued AS (
             -- A new derived event also waits to be forwarded: stored and
             -- queued together or not at all.
             INSERT INTO lineage_forward (event_id)
             SELECT id FROM appended WHERE provenance = 'derived' ORDER BY id
         )
         SELECT hash FROM appended",
    )
    .bind(hashes)
    .bind(bodies)
    .bind(provenance)
    .bind(kinds)
    .bind(times)
    .bind(senders)
    .bind(sources)
    .fetch_all(conn)
    .await?)
}

/// Takes the fold's turn for the caller's transaction: one fold at a time
/// on every replica (a rebuild takes it too). `wait`: until the fold
/// holding it commits (a read, which must see what that fold writes);
/// else `false` at once when another holds it (the routine, which looks
/// again later). A lock for the batch, not a row lock for each event:
/// locking a thousand rows writes each of them.
///
/// The transaction commits without waiting for its WAL to reach the disk:
/// a fold lost in a crash loses its deletions from `lineage_unfolded`
/// with it, so its events are folded again (the events themselves were
/// committed durably when they were appended).
pub async fn fold_turn(conn: &mut PgConnection, wait: bool) -> Result<bool, Db> {
    let sql = if wait {
        // The waiting lock returns void: its column says nothing.
        "SELECT set_config('synchronous_commit', 'off', true) IS NOT NULL,
                pg_advisory_xact_lock(hashtext('streamkeeper.lineage.fold')) IS NULL"
    } else {
        "SELECT set_config('synchronous_commit', 'off', true) IS NOT NULL,
                pg_try_advisory_xact_lock(hashtext('streamkeeper.lineage.fold'))"
    };
    let (_, taken): (bool, bool) = sqlx::query_as(sql).fetch_one(conn).await?;
    Ok(wait || taken)
}

/// Stored events waiting for the fold whose ids are in `ids`, oldest
/// first, at most `limit`; the caller holds the fold's turn
/// ([`fold_turn`]).
pub async fn unfolded(
    conn: &mut PgConnection,
    ids: RangeInclusive<i64>,
    limit: i64,
) -> Result<Vec<StoredEvent>, Db> {
    Ok(sqlx::query_as(
        "SELECT e.id, e.body, e.provenance, e.sender
         FROM lineage_unfolded u JOIN lineage_events e ON e.id = u.event_id
         WHERE u.event_id BETWEEN $1 AND $2
         ORDER BY u.event_id LIMIT $3",
    )
    .bind(ids.start())
    .bind(ids.end())
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// The newest event waiting for the fold, if any.
pub async fn last_unfolded(pool: &PgPool) -> Result<Option<i64>, Db> {
    Ok(
        sqlx::query_scalar("SELECT max(event_id) FROM lineage_unfolded")
            .fetch_one(pool)
            .await?,
    )
}

/// About how many events wait for the fold: the span of their ids (two
/// index look-ups, where a count would read them all; gaps left by
/// duplicates only make it larger).
pub async fn unfolded_span(pool: &PgPool) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE(max(event_id) - min(event_id) + 1, 0) FROM lineage_unfolded",
    )
    .fetch_one(pool)
    .await?)
}

/// `events` are in the graph, or recorded as failed: no longer waiting.
pub async fn folded(conn: &mut PgConnection, events: &[i64]) -> Result<(), Db> {
    sqlx::query("DELETE FROM lineage_unfolded WHERE event_id = ANY($1)")
        .bind(events)
        .execute(conn)
        .await?;
    Ok(())
}

/// Records that the fold could not write `event` (why, in words that hold
/// no event content) and stops it waiting.
pub async fn fold_failed(conn: &mut PgConnection, event: i64, error: &str) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO lineage_fold_failures (event_id, error) VALUES ($1, $2)
         ON CONFLICT (event_id) DO UPDATE SET error = EXCLUDED.error, failed_at = now()",
    )
    .bind(event)
    .bind(error)
    .execute(&mut *conn)
    .await?;
    folded(conn, &[event]).await
}

/// A stored event the fold could not write.
#[derive(Clone, Debug, FromRow, Serialize)]
pub struct FoldFailure {
    pub event_id: i64,
    pub error: String,
    pub failed_at: DateTime<Utc>,
}

/// Events waiting for the fold (a queue kept short by the 429 beyond
/// `IngestLimits::max_unfolded`, so counting it is cheap).
pub async fn waiting(pool: &PgPool) -> Result<i64, Db> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM lineage_unfolded")
        .fetch_one(pool)
        .await?)
}

/// The fold's failures, newest first, and how many there are.
pub async fn fold_failures_counted(
    pool: &PgPool,
    limit: i64,
) -> Result<(i64, Vec<FoldFailure>), Db> {
    let total = sqlx::query_scalar("SELECT count(*) FROM lineage_fold_failures")
        .fetch_one(pool)
        .await?;
    Ok((total, fold_failures(pool, limit).await?))
}

/// The fold's failures, newest first.
pub async fn fold_failures(pool: &PgPool, limit: i64) -> Result<Vec<FoldFailure>, Db> {
    Ok(sqlx::query_as(
        "SELECT event_id, error, failed_at FROM lineage_fold_failures
         ORDER BY failed_at DESC, event_id DESC LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

/// Writes the graph folded from a batch of stored events, merging with
/// what is stored by the fold's rules (see the migration), in ONE
/// statement: a data-modifying CTE per table, the rows of each as typed
/// arrays (one per column, `UNNEST`ed: decoding a JSON record set per
/// table took a fifth of a large batch's time, BENCHMARKS "sixth pass").
/// Nodes are numbered in the batch and the other tables name them by that
/// number, mapped to the ids the node upsert returns.
/// Every table's rows go in its key's order, and every batch runs the same
/// plan, so two folds lock rows in one order and cannot deadlock.
/// Folding an event twice changes nothing (every merge is idempotent).
/// Returns `false` (nothing written) when the registered clusters are no
/// longer `named_by`, those the batch's datasets were named by: fold
/// again with [`cluster_rows`].
pub async fn write(
    conn: &mut PgConnection,
    graph: &Graph,
    extras: &Extras,
    named_by: &ClusterRows,
) -> Result<bool, Db> {
    // Nodes: numbered from 1 in the order sent (UNNEST's ordinality).
    let mut ord: HashMap<&NodeKey, i64> = HashMap::new();
    let (mut n_kind, mut n_ns, mut n_name) = (Vec::new(), Vec::new(), Vec::new());
    let mut n_seen = SeenColumns::default();
    let (mut n_cluster, mut n_raw, mut n_issues) = (Vec::new(), Vec::new(), Vec::new());
    let (mut n_job_kind, mut n_job_kind_at, mut n_integration) =
        (Vec::new(), Vec::new(), Vec::new());
    for n in graph.nodes() {
        ord.insert(&n.key, ord.len() as i64 + 1);
        n_kind.push(node_kind(&n.key));
        n_ns.push(n.key.namespace());
        n_name.push(n.key.name());
        n_seen.push(&n.known);
        let (mut cluster, mut raw, mut issues) = (None, json!([]), json!([]));
        let (mut job_kind, mut job_kind_at, mut integration) = (None, None, None);
        match &n.detail {
            Detail::Dataset(d) => {
                cluster = d.cluster.as_deref();
                raw = json!(d.raw_namespaces);
                issues = serde_json::to_value(&d.issues).unwrap_or_else(|_| json!([]));
            }
            Detail::Job(j) => {
                if let Some((at, kind)) = j.said() {
                    job_kind = Some(kind_str(kind));
                    job_kind_at = Some(at);
                    integration = j.integration.as_deref();
                }
            }
        }
        n_cluster.push(cluster);
        n_raw.push(raw);
        n_issues.push(issues);
        n_job_kind.push(job_kind);
        n_job_kind_at.push(job_kind_at);
        n_integration.push(integration);
    }

    let (mut f_node, mut f_key, mut f_at, mut f_value) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut f_sender, mut f_hold) = (Vec::new(), Vec::new());
    for n in graph.nodes() {
        for (key, slot) in &n.facets {
            f_hold.push(key == "ownership" && extras.held_ownership.contains(&n.key));
            f_node.push(ord[&n.key]);
            f_key.push(key.as_str());
            f_at.push(slot.at);
            f_value.push(facet_value(&slot.value));
            f_sender.push(
                extras
                    .facet_senders
                    .get(&(n.key.clone(), key.clone()))
                    .map(|(_, s)| s.as_str()),
            );
        }
    }

    let (mut e_src, mut e_dst, mut e_seen) = (Vec::new(), Vec::new(), SeenColumns::default());
    for (a, b, k) in graph.edges() {
        e_src.push(ord[a]);
        e_dst.push(ord[b]);
        e_seen.push(k);
    }

    let mut r_id = Vec::new();
    let (mut r_job, mut r_state, mut r_state_at) = (Vec::new(), Vec::new(), Vec::new());
    let (mut r_first, mut r_last) = (Vec::new(), Vec::new());
    let (mut r_parent, mut r_parent_ns, mut r_parent_name) = (Vec::new(), Vec::new(), Vec::new());
    for (run_id, r) in graph.runs() {
        // A run's job is a node of the same fold.
        let Some(&job) = ord.get(&NodeKey::Job(r.job.clone())) else {
            continue;
        };
        let (state_at, state) = r.state.unwrap_or((r.last_seen, EventType::Running));
        r_id.push(run_id);
        r_job.push(job);
        r_state.push(state.as_str());
        r_state_at.push(state_at);
        r_first.push(r.first_seen);
        r_last.push(r.last_seen);
        r_parent.push(r.parent.as_ref().map(|p| p.run_id.as_str()));
        r_parent_ns.push(r.parent.as_ref().map(|p| p.job.namespace.as_str()));
        r_parent_name.push(r.parent.as_ref().map(|p| p.job.name.as_str()));
    }

    let (mut rf_run, mut rf_key, mut rf_at, mut rf_value) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for ((run_id, key), (at, value)) in &extras.run_facets {
        rf_run.push(run_id.as_str());
        rf_key.push(key.as_str());
        rf_at.push(*at);
        rf_value.push(facet_value(value));
    }

    let (mut a_ns, mut a_name, mut a_dataset) = (Vec::new(), Vec::new(), Vec::new());
    let (mut a_source, mut a_first, mut a_last) = (Vec::new(), Vec::new(), Vec::new());
    for (alias, dataset, source) in graph.alias_claims() {
        let Some(seen) = extras.alias_seen.get(&(alias.clone(), dataset.clone())) else {
            continue;
        };
        let Some(&d) = ord.get(&NodeKey::Dataset(dataset.clone())) else {
            continue;
        };
        a_ns.push(alias.namespace.as_str());
        a_name.push(alias.name.as_str());
        a_dataset.push(d);
        a_source.push(json!(source));
        a_first.push(seen.first);
        a_last.push(seen.last);
    }

    let [n_of, n_ol, n_df, n_dl] = n_seen.0;
    let [e_of, e_ol, e_df, e_dl] = e_seen.0;
    let same: bool = sqlx::query_scalar(
        "WITH named AS (
             -- The registered clusters the batch was named by are still
             -- the registered ones (in this statement's snapshot); else it
             -- writes nothing and the caller folds again, so no batch is
             -- named by a stale list and no round trip reads it first.
             SELECT COALESCE(array_agg(id ORDER BY id), '{}') = $43::int8[]
                    AND COALESCE(array_agg(bootstrap ORDER BY id), '{}') = $44::text[] AS same
             FROM clusters WHERE removed_at IS NULL
         ), sent AS (
             SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::timestamptz[],
                 $5::timestamptz[], $6::timestamptz[], $7::timestamptz[], $8::text[],
                 $9::jsonb[], $10::jsonb[], $11::text[], $12::timestamptz[], $13::text[])
                 WITH ORDINALITY AS r(kind, namespace, name, observed_first, observed_last,
                     derived_first, derived_last, cluster, raw_namespaces, issues, job_kind,
                     job_kind_at, integration, ord)
         ), nodes AS (
             INSERT INTO lineage_nodes AS n (kind, namespace, name, observed_first, observed_last,
                 derived_first, derived_last, cluster, raw_namespaces, issues, job_kind, job_kind_at,
                 integration)
             SELECT kind, namespace, name, observed_first, observed_last, derived_first, derived_last,
                    cluster, ARRAY(SELECT jsonb_array_elements_text(raw_namespaces)), issues,
                    job_kind, job_kind_at, integration
             FROM sent
             WHERE (SELECT same FROM named)
             ORDER BY kind, namespace, name
             ON CONFLICT (kind, namespace, name) DO UPDATE SET
                 observed_first = LEAST(n.observed_first, EXCLUDED.observed_first),
                 observed_last = GREATEST(n.observed_last, EXCLUDED.observed_last),
                 derived_first = LEAST(n.derived_first, EXCLUDED.derived_first),
                 derived_last = GREATEST(n.derived_last, EXCLUDED.derived_last),
                 cluster = COALESCE(EXCLUDED.cluster, n.cluster),
                 raw_namespaces = CASE WHEN EXCLUDED.raw_namespaces <@ n.raw_namespaces
                     THEN n.raw_namespaces
                     ELSE ARRAY(SELECT DISTINCT x FROM unnest(n.raw_namespaces || EXCLUDED.raw_namespaces) x ORDER BY x)
                     END,
                 issues = CASE WHEN EXCLUDED.issues <@ n.issues THEN n.issues
                     ELSE (SELECT COALESCE(jsonb_agg(DISTINCT x), '[]')
                           FROM jsonb_array_elements(n.issues || EXCLUDED.issues) x)
                     END,
                 job_kind = CASE WHEN EXCLUDED.job_kind_at IS NOT NULL
                         AND (n.job_kind_at IS NULL OR n.job_kind_at <= EXCLUDED.job_kind_at)
                     THEN EXCLUDED.job_kind ELSE n.job_kind END,
                 integration = CASE WHEN EXCLUDED.job_kind_at IS NOT NULL
                         AND (n.job_kind_at IS NULL OR n.job_kind_at <= EXCLUDED.job_kind_at)
                     THEN EXCLUDED.integration ELSE n.integration END,
                 job_kind_at = GREATEST(n.job_kind_at, EXCLUDED.job_kind_at)
             RETURNING id, kind, namespace, name
         ), ids AS (
             -- Node n of the batch is id[n]: one array, subscripted, as
             -- joining each table to a relation of (n, id) planned as
             -- nested loops (the batch's size is unknown to the plan).
             SELECT array_agg(n.id ORDER BY s.ord) AS id
             FROM nodes n JOIN sent s USING (kind, namespace, name)
         ), facets AS (
             INSERT INTO lineage_facets AS f (node_id, key, at, value, sender)
             SELECT ids.id[r.node], r.key, r.at, r.value, r.sender
             FROM UNNEST($14::int8[], $15::text[], $16::timestamptz[], $17::jsonb[], $45::text[],
                 $46::bool[]) AS r(node, key, at, value, sender, hold), ids
             WHERE (SELECT same FROM named) AND NOT r.hold
             ORDER BY 1, r.key
             ON CONFLICT (node_id, key) DO UPDATE SET at = EXCLUDED.at, value = EXCLUDED.value,
                 sender = EXCLUDED.sender
             WHERE f.at <= EXCLUDED.at
         ), edges AS (
             INSERT INTO lineage_edges AS e (src, dst, observed_first, observed_last, derived_first, derived_last)
             SELECT ids.id[r.src], ids.id[r.dst], r.observed_first, r.observed_last,
                    r.derived_first, r.derived_last
             FROM UNNEST($18::int8[], $19::int8[], $20::timestamptz[], $21::timestamptz[],
                 $22::timestamptz[], $23::timestamptz[])
                 AS r(src, dst, observed_first, observed_last, derived_first, derived_last), ids
             WHERE (SELECT same FROM named)
             ORDER BY 1, 2
             ON CONFLICT (src, dst) DO UPDATE SET
                 observed_first = LEAST(e.observed_first, EXCLUDED.observed_first),
                 observed_last = GREATEST(e.observed_last, EXCLUDED.observed_last),
                 derived_first = LEAST(e.derived_first, EXCLUDED.derived_first),
                 derived_last = GREATEST(e.derived_last, EXCLUDED.derived_last)
             -- An edge seen again within its times is left as it is: no
             -- new row version for a fact already stored.
             WHERE (LEAST(e.observed_first, EXCLUDED.observed_first),
                    GREATEST(e.observed_last, EXCLUDED.observed_last),
                    LEAST(e.derived_first, EXCLUDED.derived_first),
                    GREATEST(e.derived_last, EXCLUDED.derived_last))
                 IS DISTINCT FROM (e.observed_first, e.observed_last, e.derived_first, e.derived_last)
         ), runs AS (
             INSERT INTO lineage_runs AS u (run_id, job_id, state, state_at, first_seen, last_seen,
                 parent_run_id, parent_job_namespace, parent_job_name)
             SELECT r.run_id, ids.id[r.job], r.state, r.state_at, r.first_seen, r.last_seen, r.parent_run_id,
                    r.parent_job_namespace, r.parent_job_name
             FROM UNNEST($24::text[], $25::int8[], $26::text[], $27::timestamptz[],
                 $28::timestamptz[], $29::timestamptz[], $30::text[], $31::text[], $32::text[])
                 AS r(run_id, job, state, state_at, first_seen, last_seen, parent_run_id,
                     parent_job_namespace, parent_job_name), ids
             WHERE (SELECT same FROM named)
             ORDER BY r.run_id
             ON CONFLICT (run_id) DO UPDATE SET
                 state = CASE WHEN u.state_at <= EXCLUDED.state_at THEN EXCLUDED.state ELSE u.state END,
                 state_at = GREATEST(u.state_at, EXCLUDED.state_at),
                 first_seen = LEAST(u.first_seen, EXCLUDED.first_seen),
                 last_seen = GREATEST(u.last_seen, EXCLUDED.last_seen),
                 parent_run_id = COALESCE(EXCLUDED.parent_run_id, u.parent_run_id),
                 parent_job_namespace = COALESCE(EXCLUDED.parent_job_namespace, u.parent_job_namespace),
                 parent_job_name = COALESCE(EXCLUDED.parent_job_name, u.parent_job_name)
             RETURNING run_id
         ), run_facets AS (
             -- Joined to the runs just written: a run's facets go only
             -- with their run (one whose job is not in the fold is not).
             INSERT INTO lineage_run_facets AS f (run_id, key, at, value)
             SELECT r.run_id, r.key, r.at, r.value
             FROM UNNEST($33::text[], $34::text[], $35::timestamptz[], $36::jsonb[])
                 AS r(run_id, key, at, value)
             JOIN runs USING (run_id)
             ORDER BY r.run_id, r.key
             ON CONFLICT (run_id, key) DO UPDATE SET at = EXCLUDED.at, value = EXCLUDED.value
             WHERE f.at <= EXCLUDED.at
         ), aliases AS (
             INSERT INTO lineage_aliases AS a (alias_namespace, alias_name, dataset_id, source, first_seen, last_seen)
             SELECT r.alias_namespace, r.alias_name, ids.id[r.dataset], r.source, r.first_seen,
                    r.last_seen
             FROM UNNEST($37::text[], $38::text[], $39::int8[], $40::jsonb[],
                 $41::timestamptz[], $42::timestamptz[])
                 AS r(alias_namespace, alias_name, dataset, source, first_seen, last_seen), ids
             WHERE (SELECT same FROM named)
             ORDER BY r.alias_namespace, r.alias_name, 3
             ON CONFLICT (alias_namespace, alias_name, dataset_id) DO UPDATE SET
                 first_seen = LEAST(a.first_seen, EXCLUDED.first_seen),
                 last_seen = GREATEST(a.last_seen, EXCLUDED.last_seen)
             WHERE EXCLUDED.first_seen < a.first_seen OR EXCLUDED.last_seen > a.last_seen
         )
         SELECT same FROM named",
    )
    .bind(n_kind)
    .bind(n_ns)
    .bind(n_name)
    .bind(n_of)
    .bind(n_ol)
    .bind(n_df)
    .bind(n_dl)
    .bind(n_cluster)
    .bind(n_raw)
    .bind(n_issues)
    .bind(n_job_kind)
    .bind(n_job_kind_at)
    .bind(n_integration)
    .bind(f_node)
    .bind(f_key)
    .bind(f_at)
    .bind(f_value)
    .bind(e_src)
    .bind(e_dst)
    .bind(e_of)
    .bind(e_ol)
    .bind(e_df)
    .bind(e_dl)
    .bind(r_id)
    .bind(r_job)
    .bind(r_state)
    .bind(r_state_at)
    .bind(r_first)
    .bind(r_last)
    .bind(r_parent)
    .bind(r_parent_ns)
    .bind(r_parent_name)
    .bind(rf_run)
    .bind(rf_key)
    .bind(rf_at)
    .bind(rf_value)
    .bind(a_ns)
    .bind(a_name)
    .bind(a_dataset)
    .bind(a_source)
    .bind(a_first)
    .bind(a_last)
    .bind(&named_by.ids)
    .bind(&named_by.bootstraps)
    .bind(f_sender)
    .bind(f_hold)
    .fetch_one(conn)
    .await?;
    Ok(same)
}

// ---- reads -------------------------------------------------------------

/// A node as stored.
#[derive(Clone, Debug, FromRow)]
pub struct NodeRow {
    pub id: i64,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub observed_first: Option<DateTime<Utc>>,
    pub observed_last: Option<DateTime<Utc>>,
    pub derived_first: Option<DateTime<Utc>>,
    pub derived_last: Option<DateTime<Utc>>,
    pub cluster: Option<String>,
    pub raw_namespaces: Vec<String>,
    pub issues: Value,
    pub job_kind: Option<String>,
    pub job_kind_at: Option<DateTime<Utc>>,
    pub integration: Option<String>,
}

const NODE_COLUMNS: &str =
    "id, kind, namespace, name, observed_first, observed_last, derived_first,
    derived_last, cluster, raw_namespaces, issues, job_kind, job_kind_at, integration";

impl NodeRow {
    pub fn key(&self) -> NodeKey {
        node_key(&self.kind, &self.namespace, &self.name)
    }

    pub fn known(&self) -> Known {
        known(
            [self.observed_first, self.observed_last],
            [self.derived_first, self.derived_last],
        )
    }

    /// This row as the in-memory graph keeps a node, with `facets`.
    fn node(&self, facets: BTreeMap<String, FacetSlot>) -> Node {
        let detail = match self.kind.as_str() {
            "job" => Detail::Job(JobInfo::stored(
                self.job_kind
                    .as_deref()
                    .and_then(kind_of)
                    .zip(self.job_kind_at)
                    .map(|(k, at)| (at, k)),
                self.integration.clone(),
            )),
            _ => Detail::Dataset(DatasetInfo {
                raw_namespaces: self.raw_namespaces.iter().cloned().collect(),
                cluster: self.cluster.clone(),
                issues: serde_json::from_value::<Vec<NameIssue>>(self.issues.clone())
                    .unwrap_or_default(),
            }),
        };
        Node {
            key: self.key(),
            known: self.known(),
            facets,
            detail,
        }
    }
}

/// An edge as stored, by node ids.
#[derive(Clone, Copy, Debug, FromRow)]
pub struct EdgeRow {
    pub src: i64,
    pub dst: i64,
    pub observed_first: Option<DateTime<Utc>>,
    pub observed_last: Option<DateTime<Utc>>,
    pub derived_first: Option<DateTime<Utc>>,
    pub derived_last: Option<DateTime<Utc>>,
}

impl EdgeRow {
    /// An edge whose times are not loaded.
    pub fn untimed(src: i64, dst: i64) -> Self {
        EdgeRow {
            src,
            dst,
            observed_first: None,
            observed_last: None,
            derived_first: None,
            derived_last: None,
        }
    }

    pub fn known(&self) -> Known {
        known(
            [self.observed_first, self.observed_last],
            [self.derived_first, self.derived_last],
        )
    }
}

fn known(observed: [Option<DateTime<Utc>>; 2], derived: [Option<DateTime<Utc>>; 2]) -> Known {
    let seen = |[f, l]: [Option<DateTime<Utc>>; 2]| {
        Some(Seen {
            first: f?,
            last: l?,
        })
    };
    Known {
        observed: seen(observed),
        derived: seen(derived),
    }
}

pub async fn node_by_key(pool: &PgPool, key: &NodeKey) -> Result<Option<i64>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM lineage_nodes WHERE kind = $1 AND namespace = $2 AND name = $3",
    )
    .bind(node_kind(key))
    .bind(key.namespace())
    .bind(key.name())
    .fetch_optional(pool)
    .await?)
}

/// The datasets an alias names (several: a conflict).
pub async fn alias_targets(pool: &PgPool, alias: &DatasetKey) -> Result<Vec<i64>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT dataset_id FROM lineage_aliases WHERE alias_namespace = $1 AND alias_name = $2
         ORDER BY dataset_id",
    )
    .bind(&alias.namespace)
    .bind(&alias.name)
    .fetch_all(pool)
    .await?)
}

/// Kafka datasets named `topic`, on the cluster when one is given.
pub async fn topic_nodes(
    pool: &PgPool,
    topic: &str,
    cluster_id: Option<i64>,
) -> Result<Vec<NodeRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {NODE_COLUMNS} FROM lineage_nodes
         WHERE name = $1 AND kind = 'dataset' AND namespace LIKE 'kafka://%'
           AND ($2::text IS NULL OR cluster = $2)
         ORDER BY (cluster IS NULL), id"
    ))
    .bind(topic)
    .bind(cluster_id.map(|c| c.to_string()))
    .fetch_all(pool)
    .await?)
}

pub async fn cluster_id(pool: &PgPool, name: &str) -> Result<Option<i64>, Db> {
    Ok(
        sqlx::query_scalar("SELECT id FROM clusters WHERE name = $1 AND removed_at IS NULL")
            .bind(name)
            .fetch_optional(pool)
            .await?,
    )
}

const EDGE_COLUMNS: &str = "src, dst, observed_first, observed_last, derived_first, derived_last";

/// What was added since a read's snapshot, the new snapshot and the
/// graph's generation: what the in-memory adjacency and keys read to
/// catch up.
#[derive(FromRow)]
pub struct Delta {
    pub generation: i64,
    /// This statement's snapshot: every transaction below `xmax` and not
    /// in `xip` had ended, so its rows are in this read; the next read
    /// asks for the transactions at or past `xmax` and those of `xip`.
    pub xmax: i64,
    pub xip: Vec<i64>,
    /// Edges added, as two columns.
    pub src: Vec<i64>,
    pub dst: Vec<i64>,
    /// Nodes added (their keys never change for an id).
    pub node_id: Vec<i64>,
    pub node_kind: Vec<String>,
    pub node_namespace: Vec<String>,
    pub node_name: Vec<String>,
}

/// The key a stored node's columns spell.
pub fn node_key(kind: &str, namespace: &str, name: &str) -> NodeKey {
    if kind == "job" {
        NodeKey::job(namespace, name)
    } else {
        NodeKey::dataset(namespace, name)
    }
}

/// The select list of a [`Delta`], over [`DELTA_FROM`].
const DELTA_COLUMNS: &str = "s.generation,
         pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax,
         ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(pg_current_snapshot()) x) AS xip,
         COALESCE(e.src, '{}') AS src, COALESCE(e.dst, '{}') AS dst,
         COALESCE(a.id, '{}') AS node_id, COALESCE(a.kind, '{}') AS node_kind,
         COALESCE(a.namespace, '{}') AS node_namespace, COALESCE(a.name, '{}') AS node_name";

/// The tables of a [`Delta`] (binding `$1` xmax and `$2` xip of the last
/// read): the generation, and the edges and nodes written by a
/// transaction at or past `xmax` or among `xip`. Only transactions still
/// running then are read again, however long one of them (in any
/// database) runs.
const DELTA_FROM: &str = "lineage_state s,
          LATERAL (SELECT array_agg(src) AS src, array_agg(dst) AS dst
                   FROM lineage_edges WHERE added_xid >= $1 OR added_xid = ANY($2)) e,
          LATERAL (SELECT array_agg(id) AS id, array_agg(kind) AS kind,
                          array_agg(namespace) AS namespace, array_agg(name) AS name
                   FROM lineage_nodes WHERE added_xid >= $1 OR added_xid = ANY($2)) a";

/// One statement, one snapshot: what was added since the last read's
/// `xmax` and `xip`.
pub async fn added_since(pool: &PgPool, xmax: i64, xip: &[i64]) -> Result<Delta, Db> {
    Ok(
        sqlx::query_as(&format!("SELECT {DELTA_COLUMNS} FROM {DELTA_FROM}"))
            .bind(xmax)
            .bind(xip)
            .fetch_one(pool)
            .await?,
    )
}

/// What an impact answer shows of a node that changes: how it is known
/// (its owner is the ownership rule's, read with it).
pub struct NodeFacts {
    pub known: Known,
    /// The registered cluster of a Kafka dataset, whose pending producer
    /// changes the answer shows.
    pub cluster: Option<i64>,
}

/// An impact question's one read: what was added since the memory's last
/// read, the facts of the nodes the answer shows, and the times of the
/// edges that reach them.
pub struct ImpactRead {
    pub delta: Delta,
    pub nodes: HashMap<i64, NodeFacts>,
    pub edges: HashMap<(i64, i64), Known>,
}

#[derive(FromRow)]
struct ImpactRow {
    #[sqlx(flatten)]
    delta: Delta,
    fact_id: Vec<i64>,
    fact_observed_first: Vec<Option<DateTime<Utc>>>,
    fact_observed_last: Vec<Option<DateTime<Utc>>>,
    fact_derived_first: Vec<Option<DateTime<Utc>>>,
    fact_derived_last: Vec<Option<DateTime<Utc>>>,
    fact_cluster: Vec<Option<i64>>,
    via_src: Vec<i64>,
    via_dst: Vec<i64>,
    via_observed_first: Vec<Option<DateTime<Utc>>>,
    via_observed_last: Vec<Option<DateTime<Utc>>>,
    via_derived_first: Vec<Option<DateTime<Utc>>>,
    via_derived_last: Vec<Option<DateTime<Utc>>>,
}

/// ONE statement, one snapshot, for an impact question walked in memory:
/// the [`Delta`] since `xmax`/`xip` (which says whether the walk still
/// stands), and for `ids` their times and registered cluster, and the
/// times of the edges `pairs` (`(src, dst)`, one index lookup each).
pub async fn impact_read(
    pool: &PgPool,
    xmax: i64,
    xip: &[i64],
    ids: &[i64],
    pairs: &[(i64, i64)],
) -> Result<ImpactRead, Db> {
    let (src, dst): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
    let r: ImpactRow = sqlx::query_as(&format!(
        "SELECT {DELTA_COLUMNS}, nf.*, ev.* FROM {DELTA_FROM},
          LATERAL (SELECT COALESCE(array_agg(n.id), '{{}}') AS fact_id,
                  COALESCE(array_agg(n.observed_first), '{{}}') AS fact_observed_first,
                  COALESCE(array_agg(n.observed_last), '{{}}') AS fact_observed_last,
                  COALESCE(array_agg(n.derived_first), '{{}}') AS fact_derived_first,
                  COALESCE(array_agg(n.derived_last), '{{}}') AS fact_derived_last,
                  COALESCE(array_agg(r.cluster_id), '{{}}') AS fact_cluster
              FROM lineage_nodes n
              CROSS JOIN LATERAL (
                  SELECT CASE WHEN n.kind = 'dataset' AND n.cluster ~ '^[0-9]{{1,18}}$'
                      THEN n.cluster::bigint END AS cluster_id) r
              WHERE n.id = ANY($3)) nf,
          LATERAL (SELECT COALESCE(array_agg(e.src), '{{}}') AS via_src,
                  COALESCE(array_agg(e.dst), '{{}}') AS via_dst,
                  COALESCE(array_agg(e.observed_first), '{{}}') AS via_observed_first,
                  COALESCE(array_agg(e.observed_last), '{{}}') AS via_observed_last,
                  COALESCE(array_agg(e.derived_first), '{{}}') AS via_derived_first,
                  COALESCE(array_agg(e.derived_last), '{{}}') AS via_derived_last
              FROM UNNEST($4::bigint[], $5::bigint[]) AS p(src, dst),
                   LATERAL (SELECT {EDGE_COLUMNS} FROM lineage_edges
                            WHERE src = p.src AND dst = p.dst) e) ev"
    ))
    .bind(xmax)
    .bind(xip)
    .bind(ids)
    .bind(src)
    .bind(dst)
    .fetch_one(pool)
    .await?;
    let nodes = r
        .fact_id
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let facts = NodeFacts {
                known: known(
                    [r.fact_observed_first[i], r.fact_observed_last[i]],
                    [r.fact_derived_first[i], r.fact_derived_last[i]],
                ),
                cluster: r.fact_cluster[i],
            };
            (*id, facts)
        })
        .collect();
    let edges = r
        .via_src
        .iter()
        .zip(&r.via_dst)
        .enumerate()
        .map(|(i, (s, d))| {
            let k = known(
                [r.via_observed_first[i], r.via_observed_last[i]],
                [r.via_derived_first[i], r.via_derived_last[i]],
            );
            ((*s, *d), k)
        })
        .collect();
    Ok(ImpactRead {
        delta: r.delta,
        nodes,
        edges,
    })
}

/// Every edge between two of `ids`.
pub async fn edges_among(pool: &PgPool, ids: &[i64]) -> Result<Vec<EdgeRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {EDGE_COLUMNS} FROM lineage_edges WHERE src = ANY($1) AND dst = ANY($1)"
    ))
    .bind(ids)
    .fetch_all(pool)
    .await?)
}

pub async fn nodes(pool: &PgPool, ids: &[i64]) -> Result<Vec<NodeRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {NODE_COLUMNS} FROM lineage_nodes WHERE id = ANY($1)"
    ))
    .bind(ids)
    .fetch_all(pool)
    .await?)
}

/// Facets of `ids` (only `keys` when given), live or deleted.
pub async fn facets(
    pool: &PgPool,
    ids: &[i64],
    keys: Option<&[&str]>,
) -> Result<Vec<(i64, String, DateTime<Utc>, Option<Value>)>, Db> {
    Ok(sqlx::query_as(
        "SELECT node_id, key, at, value FROM lineage_facets
         WHERE node_id = ANY($1) AND ($2::text[] IS NULL OR key = ANY($2))",
    )
    .bind(ids)
    .bind(keys.map(|k| k.iter().map(|s| s.to_string()).collect::<Vec<_>>()))
    .fetch_all(pool)
    .await?)
}

/// A `Graph` holding exactly `nodes`, their `facets` and `edges`, each as
/// stored: what the pure walks run over.
pub fn graph_of(
    nodes: &[NodeRow],
    facets: Vec<(i64, String, DateTime<Utc>, Option<Value>)>,
    edges: &[EdgeRow],
) -> Graph {
    let mut by_node: HashMap<i64, BTreeMap<String, FacetSlot>> = HashMap::new();
    for (id, key, at, value) in facets {
        by_node
            .entry(id)
            .or_default()
            .insert(key, FacetSlot { at, value });
    }
    let key_of: HashMap<i64, NodeKey> = nodes.iter().map(|n| (n.id, n.key())).collect();
    let mut g = Graph::new();
    for n in nodes {
        g.insert_node(n.node(by_node.remove(&n.id).unwrap_or_default()));
    }
    for e in edges {
        if let (Some(from), Some(to)) = (key_of.get(&e.src), key_of.get(&e.dst)) {
            g.insert_edge(from.clone(), to.clone(), e.known());
        }
    }
    g
}

/// A namespace as Marquez lists it.
#[derive(Clone, Debug, FromRow, Serialize)]
pub struct NamespaceRow {
    pub name: String,
    pub created_at: Option<DateTime<Utc>>,
    pub updated_at: Option<DateTime<Utc>>,
}

pub async fn namespaces(pool: &PgPool) -> Result<Vec<NamespaceRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT namespace AS name,
                min(LEAST(observed_first, derived_first)) AS created_at,
                max(GREATEST(observed_last, derived_last)) AS updated_at
         FROM lineage_nodes GROUP BY namespace ORDER BY namespace",
    )
    .fetch_all(pool)
    .await?)
}

/// A page of one namespace's datasets or jobs by name, and their total.
pub async fn list(
    pool: &PgPool,
    kind: &str,
    namespace: &str,
    limit: i64,
    offset: i64,
) -> Result<(i64, Vec<NodeRow>), Db> {
    let total: i64 =
        sqlx::query_scalar("SELECT count(*) FROM lineage_nodes WHERE kind = $1 AND namespace = $2")
            .bind(kind)
            .bind(namespace)
            .fetch_one(pool)
            .await?;
    let rows = sqlx::query_as(&format!(
        "SELECT {NODE_COLUMNS} FROM lineage_nodes WHERE kind = $1 AND namespace = $2
         ORDER BY name LIMIT $3 OFFSET $4"
    ))
    .bind(kind)
    .bind(namespace)
    .bind(limit)
    .bind(offset)
    .fetch_all(pool)
    .await?;
    Ok((total, rows))
}

/// How much is stored.
#[derive(Clone, Copy, Debug, FromRow, PartialEq, Eq)]
pub struct Counts {
    pub events: i64,
    pub nodes: i64,
    pub edges: i64,
    pub runs: i64,
    pub aliases: i64,
    /// Stored events the fold has not reached yet.
    pub unfolded: i64,
    /// Stored events the fold could not write ([`fold_failures`]).
    pub fold_failures: i64,
}

pub async fn counts(pool: &PgPool) -> Result<Counts, Db> {
    Ok(sqlx::query_as(
        "SELECT (SELECT count(*) FROM lineage_events) AS events,
                (SELECT count(*) FROM lineage_nodes) AS nodes,
                (SELECT count(*) FROM lineage_edges) AS edges,
                (SELECT count(*) FROM lineage_runs) AS runs,
                (SELECT count(*) FROM lineage_aliases) AS aliases,
                (SELECT count(*) FROM lineage_unfolded) AS unfolded,
                (SELECT count(*) FROM lineage_fold_failures) AS fold_failures",
    )
    .fetch_one(pool)
    .await?)
}

/// Marquez's approach, as the benchmark's yardstick: one recursive CTE
/// from `start` downstream to `depth` hops over the same tables, each
/// reached node with its least depth and its topic's owner team.
/// Returns (node id, depth, owner).
pub async fn downstream_by_recursive_cte(
    pool: &PgPool,
    start: i64,
    depth: i32,
) -> Result<Vec<(i64, i32, Option<String>)>, Db> {
    Ok(sqlx::query_as(
        "WITH RECURSIVE walk(id, depth) AS (
             SELECT $1::bigint, 0
             UNION
             SELECT e.dst, w.depth + 1 FROM walk w JOIN lineage_edges e ON e.src = w.id
             WHERE w.depth < $2
         )
         SELECT n.id, min(w.depth)::int, min(t.name)
         FROM walk w JOIN lineage_nodes n ON n.id = w.id
         LEFT JOIN streams s ON n.cluster IS NOT NULL AND s.cluster_id::text = n.cluster
                            AND s.topic = n.name
         LEFT JOIN teams t ON t.id = s.owner_team_id
         WHERE w.id <> $1
         GROUP BY n.id",
    )
    .bind(start)
    .bind(depth)
    .fetch_all(pool)
    .await?)
}

/// Marquez's approach asked the whole question, as the benchmark's
/// second yardstick: the reach of [`downstream_by_recursive_cte`], then
/// for each reached node what an impact answer shows: its least depth, the
/// edge from a node one hop nearer (its path's last step) with that edge's
/// times, the node's times, its topic's owner team and its `ownership`
/// facet. Returns the rows' count.
pub async fn downstream_answer_by_recursive_cte(
    pool: &PgPool,
    start: i64,
    depth: i32,
) -> Result<usize, Db> {
    type Time = Option<DateTime<Utc>>;
    // Decoded whole, as an answer's rows are.
    #[allow(clippy::type_complexity)]
    let rows: Vec<(
        i64,
        i32,
        Option<i64>,
        Time,
        Time,
        Time,
        Time,
        Option<String>,
        Option<Value>,
        Time,
        Time,
        Time,
        Time,
    )> = sqlx::query_as(
        "WITH RECURSIVE walk(id, depth) AS (
             SELECT $1::bigint, 0
             UNION
             SELECT e.dst, w.depth + 1 FROM walk w JOIN lineage_edges e ON e.src = w.id
             WHERE w.depth < $2
         ), reached AS MATERIALIZED (
             SELECT id, min(depth) AS depth FROM walk GROUP BY id
         ), out_edges AS MATERIALIZED (
             -- Materialized: joined to `reached` in one step, the plan
             -- probed the edges once per pair of reached nodes.
             SELECT p.depth, e.* FROM reached p JOIN lineage_edges e ON e.src = p.id
         ), via AS (
             SELECT DISTINCT ON (o.dst) o.*
             FROM out_edges o JOIN reached c ON c.id = o.dst AND c.depth = o.depth + 1
             ORDER BY o.dst, o.src
         )
         SELECT r.id, r.depth, v.src, n.observed_first, n.observed_last, n.derived_first,
                n.derived_last, t.name, f.value, v.observed_first, v.observed_last,
                v.derived_first, v.derived_last
         FROM reached r JOIN lineage_nodes n ON n.id = r.id
         LEFT JOIN streams s ON n.cluster IS NOT NULL AND s.cluster_id::text = n.cluster
                            AND s.topic = n.name
         LEFT JOIN teams t ON t.id = s.owner_team_id
         LEFT JOIN lineage_facets f ON f.node_id = n.id AND f.key = 'ownership'
         LEFT JOIN via v ON v.dst = r.id
         WHERE r.id <> $1",
    )
    .bind(start)
    .bind(depth)
    .fetch_all(pool)
    .await?;
    Ok(rows.len())
}

/// The cluster's lineage topic, when its Kafka transport is on.
pub async fn lineage_topic(pool: &PgPool, cluster_id: i64) -> Result<Option<String>, Db> {
    Ok(sqlx::query_scalar(
        "SELECT lineage_topic FROM clusters WHERE id = $1 AND removed_at IS NULL",
    )
    .bind(cluster_id)
    .fetch_optional(pool)
    .await?
    .flatten())
}

/// A record of the lineage topic that was skipped, and why.
pub struct RejectedRecord<'a> {
    pub partition: i32,
    pub offset: i64,
    pub bytes: i32,
    pub reason: &'a str,
}

/// Notes skipped records (a record noted before, as after a replay, once).
pub async fn reject_records(
    pool: &PgPool,
    cluster_id: i64,
    topic: &str,
    rows: &[RejectedRecord<'_>],
) -> Result<(), Db> {
    if rows.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO lineage_rejected (cluster_id, topic, partition, \"offset\", bytes, reason)
         SELECT $1, $2, * FROM UNNEST($3::int[], $4::bigint[], $5::int[], $6::text[])
         ON CONFLICT DO NOTHING",
    )
    .bind(cluster_id)
    .bind(topic)
    .bind(rows.iter().map(|r| r.partition).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.offset).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.bytes).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.reason).collect::<Vec<_>>())
    .execute(pool)
    .await?;
    Ok(())
}

/// A consumer group as the sampler last saw it, with its cluster's
/// bootstrap list.
#[derive(FromRow)]
pub struct SeenGroup {
    pub bootstrap: String,
    pub name: String,
    pub topics: Vec<String>,
    pub last_seen: DateTime<Utc>,
}

/// Every group seen reading a topic.
pub async fn seen_groups(pool: &PgPool) -> Result<Vec<SeenGroup>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.bootstrap, g.name, g.topics, g.last_seen
         FROM consumer_groups g JOIN clusters c ON c.id = g.cluster_id AND c.removed_at IS NULL
         WHERE cardinality(g.topics) > 0 ORDER BY g.cluster_id, g.name",
    )
    .fetch_all(pool)
    .await?)
}

/// A connector as the status routine last read it (its config masked),
/// with its Connect cluster's name and its Kafka cluster's bootstrap list.
#[derive(FromRow)]
pub struct SeenConnector {
    pub bootstrap: String,
    pub connect: String,
    pub name: String,
    pub config: Value,
    pub seen_at: DateTime<Utc>,
}

/// Every connector its worker still lists.
pub async fn seen_connectors(pool: &PgPool) -> Result<Vec<SeenConnector>, Db> {
    Ok(sqlx::query_as(
        "SELECT c.bootstrap, cc.name AS connect, k.name, k.config, k.seen_at
         FROM connectors k JOIN connect_clusters cc ON cc.id = k.connect_id
         JOIN clusters c ON c.id = cc.cluster_id AND c.removed_at IS NULL
         WHERE k.gone_at IS NULL ORDER BY k.id",
    )
    .fetch_all(pool)
    .await?)
}

/// A derived event due to be forwarded.
#[derive(FromRow)]
pub struct DueForward {
    pub event_id: i64,
    pub body: String,
    pub attempts: i32,
}

/// Up to `limit` derived events due to be forwarded, oldest first.
pub async fn forward_due(pool: &PgPool, limit: i64) -> Result<Vec<DueForward>, Db> {
    Ok(sqlx::query_as(
        "SELECT f.event_id, e.body, f.attempts FROM lineage_forward f
         JOIN lineage_events e ON e.id = f.event_id
         WHERE f.sent_at IS NULL AND f.next_at <= now()
         ORDER BY f.event_id LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

/// Records one attempt: sent, or failed and due again after `retry_in_s`.
pub async fn forward_attempted(
    pool: &PgPool,
    event_id: i64,
    error: Option<&str>,
    retry_in_s: f64,
) -> Result<(), Db> {
    sqlx::query(
        "UPDATE lineage_forward SET attempts = attempts + 1, last_error = $2,
             sent_at = CASE WHEN $2::text IS NULL THEN now() END,
             next_at = now() + make_interval(secs => $3)
         WHERE event_id = $1",
    )
    .bind(event_id)
    .bind(error)
    .bind(retry_in_s)
    .execute(pool)
    .await?;
    Ok(())
}

/// A team an impact reaches, as "notify owners" tells it.
#[derive(Clone, Debug, FromRow)]
pub struct NoticeTeam {
    pub id: i64,
    pub name: String,
    pub webhook_url: Option<String>,
    /// Its members' user ids.
    pub members: Vec<i64>,
}

/// The teams named `names` (names not in the catalog are left out).
pub async fn teams_named(pool: &PgPool, names: &[&str]) -> Result<Vec<NoticeTeam>, Db> {
    Ok(sqlx::query_as(
        "SELECT t.id, t.name, t.webhook_url,
                ARRAY(SELECT m.user_id FROM memberships m WHERE m.team_id = t.id ORDER BY 1) AS members
         FROM teams t WHERE t.name = ANY($1) ORDER BY t.name",
    )
    .bind(names)
    .fetch_all(pool)
    .await?)
}

/// The team a name says, if it is in the catalog.
pub async fn team_named(pool: &PgPool, name: &str) -> Result<Option<i64>, Db> {
    Ok(sqlx::query_scalar("SELECT id FROM teams WHERE name = $1")
        .bind(name)
        .fetch_optional(pool)
        .await?)
}

/// Gives the node `key` to `team_id` (set by `by`, now), or clears the
/// owner set on it.
pub async fn set_node_owner(
    conn: &mut PgConnection,
    key: &NodeKey,
    team_id: Option<i64>,
    by: &str,
) -> Result<(), Db> {
    sqlx::query(
        "WITH gone AS (
             DELETE FROM lineage_owners
             WHERE kind = $1 AND namespace = $2 AND name = $3 AND $4::bigint IS NULL
         )
         INSERT INTO lineage_owners (kind, namespace, name, team_id, set_by, set_at)
         SELECT $1, $2, $3, $4, $5, streamkeeper_now() WHERE $4::bigint IS NOT NULL
         ON CONFLICT (kind, namespace, name) DO UPDATE SET
             team_id = EXCLUDED.team_id, set_by = EXCLUDED.set_by, set_at = EXCLUDED.set_at",
    )
    .bind(node_kind(key))
    .bind(key.namespace())
    .bind(key.name())
    .bind(team_id)
    .bind(by)
    .execute(conn)
    .await?;
    Ok(())
}

/// A lineage question as asked, answered and sent.
pub struct NewQuestion<'a> {
    pub node: &'a str,
    pub direction: &'a str,
    pub asked_by: &'a str,
    pub asked_at: DateTime<Utc>,
    pub answered_at: DateTime<Utc>,
    pub reached: i32,
    pub partial: bool,
    pub teams: Vec<&'a str>,
    pub answer: Value,
    /// Some owner team is told by webhook: the question is notified when
    /// the last webhook gets its 2xx (stamped by the flags' deliveries),
    /// not now.
    pub by_webhook: bool,
}

/// Records a question, its answer sent now; returns its id and when its
/// owners were notified (now, by their inboxes alone; `None` while a
/// webhook is to be delivered).
pub async fn insert_question(
    conn: &mut PgConnection,
    q: &NewQuestion<'_>,
) -> Result<(i64, Option<DateTime<Utc>>), Db> {
    Ok(sqlx::query_as(
        "INSERT INTO lineage_questions (node, direction, asked_by, asked_at, answered_at,
             notified_at, reached, partial, teams, answer)
         VALUES ($1, $2, $3, $4, $5, CASE WHEN NOT $10 THEN streamkeeper_now() END, $6, $7, $8, $9)
         RETURNING id, notified_at",
    )
    .bind(q.node)
    .bind(q.direction)
    .bind(q.asked_by)
    .bind(q.asked_at)
    .bind(q.answered_at)
    .bind(q.reached)
    .bind(q.partial)
    .bind(&q.teams)
    .bind(&q.answer)
    .bind(q.by_webhook)
    .fetch_one(conn)
    .await?)
}

/// An inbox line for each of `users` about question `question`.
pub async fn notify_users(
    conn: &mut PgConnection,
    users: &[i64],
    question: i64,
    message: &str,
) -> Result<(), Db> {
    sqlx::query(
        "INSERT INTO notifications (user_id, lineage_question_id, message)
         SELECT DISTINCT unnest($1::bigint[]), $2, $3",
    )
    .bind(users)
    .bind(question)
    .bind(message)
    .execute(conn)
    .await?;
    Ok(())
}

/// Datasets and jobs whose name contains `q` (case-insensitive), exact
/// matches first, then the shorter names, at most `limit`.
pub async fn search(pool: &PgPool, q: &str, limit: i64) -> Result<Vec<NodeRow>, Db> {
    Ok(sqlx::query_as(&format!(
        "SELECT {NODE_COLUMNS} FROM lineage_nodes
         WHERE strpos(lower(name), lower($1)) > 0
         ORDER BY lower(name) <> lower($1), length(name), name, kind, namespace
         LIMIT $2"
    ))
    .bind(q)
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

/// Live (open or acknowledged) flags on each of `ids`: a topic's on its
/// dataset, a consumer group's on its job (named in its cluster's Kafka
/// namespace, the cluster found from a dataset of that namespace).
pub async fn live_flags(pool: &PgPool, ids: &[i64]) -> Result<HashMap<i64, i64>, Db> {
    // The flags' own query counts them (no file outside flags/ reads
    // their table).
    let rows: Vec<(i64, i64)> = sqlx::query_as(&format!(
        "WITH n AS (
             SELECT n.id, n.kind, n.name,
                    CASE WHEN n.kind = 'dataset' THEN
                             CASE WHEN n.cluster ~ '^[0-9]{{1,18}}$' THEN n.cluster::bigint END
                         ELSE (SELECT d.cluster::bigint FROM lineage_nodes d
                               WHERE d.kind = 'dataset' AND d.namespace = n.namespace
                                 AND d.cluster ~ '^[0-9]{{1,18}}$' LIMIT 1)
                    END AS cluster_id,
                    CASE n.kind WHEN 'dataset' THEN 'topic' ELSE 'group' END AS subject_kind
             FROM lineage_nodes n WHERE n.id = ANY($1))
         SELECT n.id, live.n FROM n CROSS JOIN LATERAL ({}) live(n) WHERE live.n > 0",
        crate::flags::store::live_count_on("n")
    ))
    .bind(ids)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Of these nodes, the topics whose watched cluster's latest UP pass did
/// not list them: named by a connector or an event, not in the cluster. A
/// cluster never read fully says nothing either way.
pub async fn not_in_cluster(pool: &PgPool, ids: &[i64]) -> Result<HashSet<i64>, Db> {
    let rows: Vec<i64> = sqlx::query_scalar(
        "WITH n AS (
             SELECT id, name, CASE WHEN cluster ~ '^[0-9]{1,18}$' THEN cluster::bigint END AS cluster_id
             FROM lineage_nodes WHERE id = ANY($1) AND kind = 'dataset')
         SELECT n.id FROM n
         JOIN LATERAL (SELECT p.finished_at FROM cluster_passes p
                       WHERE p.cluster_id = n.cluster_id AND p.outcome = 'UP'
                       ORDER BY p.started_at DESC LIMIT 1) p ON true
         WHERE NOT EXISTS (SELECT 1 FROM topics t WHERE t.cluster_id = n.cluster_id
                           AND t.name = n.name AND t.last_seen >= p.finished_at)",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}

#[derive(FromRow)]
struct SentRow {
    id: i64,
    asked_by: String,
    notified_at: Option<DateTime<Utc>>,
    teams: Vec<String>,
    reached: i32,
    partial: bool,
}

/// The impacts of `node` in `direction` sent to owners, newest first.
pub async fn sent(
    pool: &PgPool,
    node: &str,
    direction: &str,
    limit: i64,
) -> Result<Vec<SentView>, Db> {
    let rows: Vec<SentRow> = sqlx::query_as(
        "SELECT id, asked_by, notified_at, teams, reached, partial FROM lineage_questions
         WHERE node = $1 AND direction = $2 ORDER BY asked_at DESC, id DESC LIMIT $3",
    )
    .bind(node)
    .bind(direction)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| SentView {
            question: r.id,
            asked_by: r.asked_by,
            notified_at: r.notified_at,
            teams: r.teams,
            reached: r.reached,
            partial: r.partial,
        })
        .collect())
}
