//! A dataset's columns as the store knows them: its `schema` facet's
//! field names, the column edges into it, and its fields that column
//! edges downstream read.

use crate::platform::errors::Db;
use sqlx::PgPool;
use streamkeeper::lineage::columns::{ColumnEdge, FieldRef, Transform};
use streamkeeper::lineage::graph::DatasetKey;

/// Rows read per part at most: a dataset of thousands of columns lists
/// the first ones, not every edge.
const MAX_ROWS: i64 = 5000;

type IntoRow = (String, String, String, String, String, Vec<String>);

/// (schema fields in order, edges into the dataset, fields read from it).
pub async fn dataset_columns(
    pool: &PgPool,
    d: &DatasetKey,
) -> Result<(Vec<String>, Vec<ColumnEdge>, Vec<String>), Db> {
    let schema = sqlx::query_scalar(
        "SELECT f.v #>> '{}' FROM lineage_nodes n
         JOIN lineage_facets s ON s.node_id = n.id AND s.key = 'schema'
         CROSS JOIN LATERAL jsonb_path_query(s.value, '$.fields[*].name') WITH ORDINALITY AS f(v, i)
         WHERE n.kind = 'dataset' AND n.namespace = $1 AND n.name = $2
         ORDER BY f.i LIMIT $3",
    );
    let schema: Vec<String> = schema
        .bind(&d.namespace)
        .bind(&d.name)
        .bind(MAX_ROWS)
        .fetch_all(pool)
        .await?;
    let into: Vec<IntoRow> = sqlx::query_as(
        "SELECT dst_field, src_namespace, src_name, src_field, kind, subtypes
         FROM lineage_column_edges WHERE dst_namespace = $1 AND dst_name = $2
         ORDER BY dst_field, src_namespace, src_name, src_field LIMIT $3",
    )
    .bind(&d.namespace)
    .bind(&d.name)
    .bind(MAX_ROWS)
    .fetch_all(pool)
    .await?;
    let read: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT src_field FROM lineage_column_edges
         WHERE src_namespace = $1 AND src_name = $2 ORDER BY 1 LIMIT $3",
    )
    .bind(&d.namespace)
    .bind(&d.name)
    .bind(MAX_ROWS)
    .fetch_all(pool)
    .await?;
    let into = into
        .into_iter()
        .map(|(to, ns, name, field, kind, subtypes)| ColumnEdge {
            from: FieldRef::new(&ns, &name, &field),
            to,
            kind: Transform::parse(&kind).unwrap_or(Transform::Direct),
            subtypes,
        })
        .collect();
    Ok((schema, into, read))
}
