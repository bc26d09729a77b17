//! Column lineage (issue 43): each dataset's column edges as its newest
//! `columnLineage` facet says, and the reads of a field-level question.

use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{PgConnection, PgPool};
use std::collections::{HashMap, HashSet};
use streamkeeper::lineage::column_walk::Reader;
use streamkeeper::lineage::columns::{ColumnEdge, ColumnVersion, FieldRef, Transform};
use streamkeeper::lineage::graph::{DatasetKey, JobKey, NodeKey};
use streamkeeper::lineage::impact::Direction;

/// Writes the column lineage of a folded batch in the caller's
/// transaction: a dataset's edges are replaced only when its version is
/// at least as new as the stored one, the merge rule of every facet, so
/// batches folded in any order leave the newest.
pub async fn write_columns(conn: &mut PgConnection, versions: &[ColumnVersion]) -> Result<(), Db> {
    if versions.is_empty() {
        return Ok(());
    }
    let namespaces: Vec<&str> = versions
        .iter()
        .map(|v| v.dataset.namespace.as_str())
        .collect();
    let names: Vec<&str> = versions.iter().map(|v| v.dataset.name.as_str()).collect();
    let ats: Vec<DateTime<Utc>> = versions.iter().map(|v| v.at).collect();
    let won: HashSet<(String, String)> = sqlx::query_as::<_, (String, String)>(
        "INSERT INTO lineage_column_versions AS v (namespace, name, at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
         ON CONFLICT (namespace, name) DO UPDATE SET at = EXCLUDED.at WHERE v.at <= EXCLUDED.at
         RETURNING namespace, name",
    )
    .bind(&namespaces)
    .bind(&names)
    .bind(&ats)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .collect();
    if won.is_empty() {
        return Ok(());
    }
    let (won_ns, won_names): (Vec<String>, Vec<String>) = won.iter().cloned().unzip();
    sqlx::query(
        "DELETE FROM lineage_column_edges e USING unnest($1::text[], $2::text[]) AS w(ns, name)
         WHERE e.dst_namespace = w.ns AND e.dst_name = w.name",
    )
    .bind(&won_ns)
    .bind(&won_names)
    .execute(&mut *conn)
    .await?;
    let mut rows = EdgeColumns::default();
    for v in versions {
        let key = (v.dataset.namespace.clone(), v.dataset.name.clone());
        if won.contains(&key) {
            v.edges.iter().for_each(|e| rows.push(&v.dataset, e));
        }
    }
    sqlx::query(
        "INSERT INTO lineage_column_edges
             (dst_namespace, dst_name, dst_field, src_namespace, src_name, src_field, kind, subtypes)
         SELECT dn, dm, df, sn, sm, sf, k,
                ARRAY(SELECT jsonb_array_elements_text(st))
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                     $7::text[], $8::jsonb[]) AS r(dn, dm, df, sn, sm, sf, k, st)
         ON CONFLICT DO NOTHING",
    )
    .bind(&rows.dst_ns)
    .bind(&rows.dst_name)
    .bind(&rows.dst_field)
    .bind(&rows.src_ns)
    .bind(&rows.src_name)
    .bind(&rows.src_field)
    .bind(&rows.kind)
    .bind(&rows.subtypes)
    .execute(conn)
    .await?;
    Ok(())
}

/// The edges' columns, for one `unnest`.
#[derive(Default)]
pub struct EdgeColumns {
    dst_ns: Vec<String>,
    dst_name: Vec<String>,
    dst_field: Vec<String>,
    src_ns: Vec<String>,
    src_name: Vec<String>,
    src_field: Vec<String>,
    kind: Vec<&'static str>,
    subtypes: Vec<Value>,
}

impl EdgeColumns {
    pub fn push(&mut self, dst: &DatasetKey, e: &ColumnEdge) {
        self.dst_ns.push(dst.namespace.clone());
        self.dst_name.push(dst.name.clone());
        self.dst_field.push(e.to.clone());
        self.src_ns.push(e.from.dataset.namespace.clone());
        self.src_name.push(e.from.dataset.name.clone());
        self.src_field.push(e.from.field.clone());
        self.kind.push(e.kind.as_str());
        self.subtypes.push(Value::from(e.subtypes.clone()));
    }
}

type EdgeRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    Vec<String>,
);

/// The column edges out of `fields` (downstream) or into them
/// (upstream), each as (the dataset it belongs to, the edge), at most
/// `limit` of them: a dataset-wide INDIRECT fan-out cannot load more
/// than the walk may take.
pub async fn column_edges(
    pool: &PgPool,
    fields: &[FieldRef],
    direction: Direction,
    limit: i64,
) -> Result<Vec<(DatasetKey, ColumnEdge)>, Db> {
    let (ns, name, field) = split(fields);
    let side = match direction {
        Direction::Downstream => "src",
        Direction::Upstream => "dst",
    };
    let rows: Vec<EdgeRow> = sqlx::query_as(&format!(
        "SELECT e.dst_namespace, e.dst_name, e.dst_field, e.src_namespace, e.src_name,
                e.src_field, e.kind, e.subtypes
         FROM unnest($1::text[], $2::text[], $3::text[]) AS f(ns, name, field)
         JOIN lineage_column_edges e
           ON e.{side}_namespace = f.ns AND e.{side}_name = f.name AND e.{side}_field = f.field
         LIMIT $4"
    ))
    .bind(&ns)
    .bind(&name)
    .bind(&field)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(dn, dm, df, sn, sm, sf, kind, subtypes)| {
            let dst = DatasetKey {
                namespace: dn,
                name: dm,
            };
            let edge = ColumnEdge {
                from: FieldRef::new(&sn, &sm, &sf),
                to: df,
                kind: Transform::parse(&kind).unwrap_or(Transform::Direct),
                subtypes,
            };
            (dst, edge)
        })
        .collect())
}

/// Whether a column edge (on either side) or its dataset's `schema`
/// facet names any of `fields`: a field nothing names is likely
/// misspelled, not safe to remove.
pub async fn any_field_named(pool: &PgPool, fields: &[FieldRef]) -> Result<bool, Db> {
    let (ns, name, field) = split(fields);
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (
             SELECT 1 FROM unnest($1::text[], $2::text[], $3::text[]) AS f(ns, name, field)
             WHERE EXISTS (SELECT 1 FROM lineage_column_edges e
                           WHERE e.src_namespace = f.ns AND e.src_name = f.name
                             AND e.src_field = f.field)
                OR EXISTS (SELECT 1 FROM lineage_column_edges e
                           WHERE e.dst_namespace = f.ns AND e.dst_name = f.name
                             AND e.dst_field = f.field)
                OR EXISTS (SELECT 1 FROM lineage_nodes n
                           JOIN lineage_facets s ON s.node_id = n.id AND s.key = 'schema'
                           WHERE n.kind = 'dataset' AND n.namespace = f.ns AND n.name = f.name
                             AND jsonb_path_exists(s.value, '$.fields[*] ? (@.name == $f)',
                                                   jsonb_build_object('f', f.field))))",
    )
    .bind(&ns)
    .bind(&name)
    .bind(&field)
    .fetch_one(pool)
    .await?)
}

fn split(fields: &[FieldRef]) -> (Vec<&str>, Vec<&str>, Vec<&str>) {
    let ns = fields
        .iter()
        .map(|f| f.dataset.namespace.as_str())
        .collect();
    let name = fields.iter().map(|f| f.dataset.name.as_str()).collect();
    let field = fields.iter().map(|f| f.field.as_str()).collect();
    (ns, name, field)
}

/// Of `datasets`, those the graph has as nodes, each with the jobs that
/// read it (dataset-level edges), every output of each job, and whether
/// that output has column edges.
pub async fn readers(
    pool: &PgPool,
    datasets: &[DatasetKey],
) -> Result<(Vec<DatasetKey>, Vec<(DatasetKey, Reader)>), Db> {
    let ns: Vec<&str> = datasets.iter().map(|d| d.namespace.as_str()).collect();
    let names: Vec<&str> = datasets.iter().map(|d| d.name.as_str()).collect();
    type Row = (
        String,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<bool>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT d.namespace, d.name, j.namespace, j.name, o.namespace, o.name,
                EXISTS (SELECT 1 FROM lineage_column_edges c
                        WHERE c.dst_namespace = o.namespace AND c.dst_name = o.name)
         FROM unnest($1::text[], $2::text[]) AS q(ns, name)
         JOIN lineage_nodes d ON d.kind = 'dataset' AND d.namespace = q.ns AND d.name = q.name
         LEFT JOIN lineage_edges r ON r.src = d.id
         LEFT JOIN lineage_nodes j ON j.id = r.dst AND j.kind = 'job'
         LEFT JOIN lineage_edges w ON w.src = j.id
         LEFT JOIN lineage_nodes o ON o.id = w.dst AND o.kind = 'dataset'",
    )
    .bind(&ns)
    .bind(&names)
    .fetch_all(pool)
    .await?;
    let mut known = Vec::new();
    let mut readers: HashMap<(DatasetKey, JobKey), Vec<(DatasetKey, bool)>> = HashMap::new();
    for (dn, dm, jn, jm, on, om, has) in rows {
        let d = DatasetKey {
            namespace: dn,
            name: dm,
        };
        if !known.contains(&d) {
            known.push(d.clone());
        }
        let (Some(jn), Some(jm)) = (jn, jm) else {
            continue;
        };
        let outputs = readers
            .entry((
                d,
                JobKey {
                    namespace: jn,
                    name: jm,
                },
            ))
            .or_default();
        if let (Some(on), Some(om)) = (on, om) {
            let o = DatasetKey {
                namespace: on,
                name: om,
            };
            outputs.push((o, has.unwrap_or(false)));
        }
    }
    let readers = readers
        .into_iter()
        .map(|((d, job), outputs)| (d, Reader::new(job, outputs)))
        .collect();
    Ok((known, readers))
}

/// The connectors that write into `datasets`, each as a reader of one of
/// its inputs copying into that dataset: what an upstream walk follows
/// back through a connector's by-name copy.
pub async fn copiers_into(
    pool: &PgPool,
    datasets: &[DatasetKey],
) -> Result<Vec<(DatasetKey, Reader)>, Db> {
    if datasets.is_empty() {
        return Ok(Vec::new());
    }
    let ns: Vec<&str> = datasets.iter().map(|d| d.namespace.as_str()).collect();
    let names: Vec<&str> = datasets.iter().map(|d| d.name.as_str()).collect();
    let rows: Vec<(String, String, String, String, String, String)> = sqlx::query_as(
        "SELECT i.namespace, i.name, j.namespace, j.name, o.namespace, o.name
         FROM unnest($1::text[], $2::text[]) AS q(ns, name)
         JOIN lineage_nodes o ON o.kind = 'dataset' AND o.namespace = q.ns AND o.name = q.name
         JOIN lineage_edges w ON w.dst = o.id
         JOIN lineage_nodes j ON j.id = w.src AND j.kind = 'job'
                             AND j.namespace LIKE 'kafka-connect://%'
         JOIN lineage_edges r ON r.dst = j.id
         JOIN lineage_nodes i ON i.id = r.src AND i.kind = 'dataset'",
    )
    .bind(&ns)
    .bind(&names)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(i_ns, i_name, j_ns, j_name, o_ns, o_name)| {
            let input = DatasetKey {
                namespace: i_ns,
                name: i_name,
            };
            let job = JobKey {
                namespace: j_ns,
                name: j_name,
            };
            let out = DatasetKey {
                namespace: o_ns,
                name: o_name,
            };
            (input, Reader::new(job, vec![(out, false)]))
        })
        .collect())
}

/// The ids of the nodes of `keys` the graph has.
pub async fn node_ids(pool: &PgPool, keys: &[NodeKey]) -> Result<HashMap<NodeKey, i64>, Db> {
    let kinds: Vec<&str> = keys.iter().map(super::writes::node_kind).collect();
    let ns: Vec<&str> = keys.iter().map(NodeKey::namespace).collect();
    let names: Vec<&str> = keys.iter().map(NodeKey::name).collect();
    let rows: Vec<(i64, String, String, String)> = sqlx::query_as(
        "SELECT n.id, n.kind, n.namespace, n.name
         FROM unnest($1::text[], $2::text[], $3::text[]) AS q(kind, ns, name)
         JOIN lineage_nodes n ON n.kind = q.kind AND n.namespace = q.ns AND n.name = q.name",
    )
    .bind(&kinds)
    .bind(&ns)
    .bind(&names)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, kind, ns, name)| {
            let key = match kind.as_str() {
                "job" => NodeKey::job(&ns, &name),
                _ => NodeKey::dataset(&ns, &name),
            };
            (key, id)
        })
        .collect())
}

/// The same downstream question as the in-memory walk, as one recursive
/// CTE: how many distinct fields lie within `depth` column hops of
/// `start`. The benchmark's yardstick, not a product path.
pub async fn column_reach_cte(pool: &PgPool, start: &FieldRef, depth: i32) -> Result<i64, Db> {
    Ok(sqlx::query_scalar(
        "WITH RECURSIVE reach(ns, name, field, depth) AS (
             SELECT $1::text, $2::text, $3::text, 0
             UNION
             SELECT e.dst_namespace, e.dst_name, e.dst_field, r.depth + 1
             FROM reach r
             JOIN lineage_column_edges e
               ON e.src_namespace = r.ns AND e.src_name = r.name AND e.src_field = r.field
             WHERE r.depth < $4
         )
         SELECT count(DISTINCT (ns, name, field)) - 1 FROM reach",
    )
    .bind(&start.dataset.namespace)
    .bind(&start.dataset.name)
    .bind(&start.field)
    .bind(depth)
    .fetch_one(pool)
    .await?)
}
