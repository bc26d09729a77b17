//! What a pass read off the wire of each stream's last records: the
//! headers grouped by what they carry (`streamkeeper::schemas::drift::written`),
//! replacing what an earlier pass read of the same stream.

use crate::clients::kafka::reader::Reading;
use crate::platform::errors::Db;
use streamkeeper::schemas::drift::written;

/// Replaces the stored headers of the topics whose tail this pass read.
pub(super) async fn replace_wire(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    cluster_id: i64,
    r: &Reading,
) -> Result<(), Db> {
    // What follows a schema ID is a Protobuf record's message indexes, but
    // an Avro or JSON record's first values: only a stream whose value
    // subject is Protobuf keeps them, so no payload is ever stored.
    let protobuf: Vec<String> = sqlx::query_scalar(
        "SELECT left(subject, -length('-value')) FROM registry_subjects
          WHERE cluster_id = $1 AND schema_type = 'PROTOBUF' AND subject LIKE '%-value'",
    )
    .bind(cluster_id)
    .fetch_all(&mut **tx)
    .await?;
    let (mut names, mut writes) = (Vec::new(), Vec::new());
    for t in &r.topics {
        let Some(records) = &t.wire else {
            continue;
        };
        let mut w = written(records);
        if !protobuf.contains(&t.name) {
            w.iter_mut().for_each(|w| w.indexes = None);
        }
        names.push(t.name.as_str());
        writes.push(serde_json::to_value(w).unwrap_or_default());
    }
    if names.is_empty() {
        return Ok(());
    }
    Ok(sqlx::query(
        "INSERT INTO wire_writes (cluster_id, topic, written, read_at)
         SELECT $1, u.topic, u.written, $2
         FROM UNNEST($3::text[], $4::jsonb[]) AS u(topic, written)
         ON CONFLICT (cluster_id, topic) DO UPDATE
            SET written = EXCLUDED.written, read_at = EXCLUDED.read_at",
    )
    .bind(cluster_id)
    .bind(r.finished)
    .bind(&names)
    .bind(&writes)
    .execute(&mut **tx)
    .await
    .map(drop)?)
}
