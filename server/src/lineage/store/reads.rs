//! Reading the graph back: nodes and edges as stored, what was added since
//! a snapshot (the in-memory adjacency's catch-up), an impact question's one
//! read, a `Graph` of what a question reached, and the Marquez-style lists
//! and counts.

use super::writes::{kind_of, node_kind};
use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{FromRow, PgPool};
use std::collections::BTreeMap;
use std::collections::HashMap;
use streamkeeper::lineage::graph::{
    DatasetInfo, DatasetKey, Detail, FacetSlot, Graph, JobInfo, Known, Node, NodeKey, Seen,
};
use streamkeeper::lineage::naming::NameIssue;

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

pub(super) const NODE_COLUMNS: &str =
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
