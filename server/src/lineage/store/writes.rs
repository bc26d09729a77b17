//! Writing the graph folded from a batch of events, in one statement, and
//! the registered clusters its datasets were named by.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::{PgConnection, PgPool};
use std::collections::{HashMap, HashSet};
use streamkeeper::lineage::event::EventType;
use streamkeeper::lineage::graph::{
    DatasetKey, Detail, Graph, JobKind, Known, NodeKey, Seen, Upserts,
};
use streamkeeper::lineage::naming::RegisteredCluster;

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
    /// Nodes whose stored `ownership` facet the batch's may not replace
    /// (`fold::hold_ownership`).
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

pub(super) fn kind_of(s: &str) -> Option<JobKind> {
    match s {
        "BATCH" => Some(JobKind::Batch),
        "STREAMING" => Some(JobKind::Streaming),
        "SERVICE" => Some(JobKind::Service),
        _ => None,
    }
}

pub(super) fn node_kind(k: &NodeKey) -> &'static str {
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
