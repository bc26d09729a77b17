//! What producers write, as the watch pass read it off the wire
//! (`wire_writes`), and where the registry routine placed it.

use super::SubjectRow;
use crate::platform::errors::Db;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::HashMap;

/// Each stream's headers as the last tail read grouped them
/// (`streamkeeper::schemas::drift::Written`s, as JSON).
pub async fn wire_writes(
    pool: &PgPool,
    cluster_id: i64,
) -> Result<Vec<(String, serde_json::Value)>, Db> {
    Ok(sqlx::query_as(
        "SELECT w.topic, w.written FROM wire_writes w
         JOIN streams s ON s.cluster_id = w.cluster_id AND s.topic = w.topic
         WHERE w.cluster_id = $1 ORDER BY w.topic",
    )
    .bind(cluster_id)
    .fetch_all(pool)
    .await?)
}

/// The registry's last reading of the subjects named.
pub async fn value_subjects(
    pool: &PgPool,
    cluster_id: i64,
    names: &[String],
) -> Result<Vec<SubjectRow>, Db> {
    Ok(sqlx::query_as(
        "SELECT subject, versions, latest_id, schema_type, level FROM registry_subjects
         WHERE cluster_id = $1 AND subject = ANY($2)",
    )
    .bind(cluster_id)
    .bind(names)
    .fetch_all(pool)
    .await?)
}

/// A stream's drift as judged: the placed writes, and the sentence.
pub struct DriftRow {
    pub topic: String,
    pub drift: serde_json::Value,
    pub sentence: String,
}

/// Stores each stream's judged drift.
pub async fn record_drift(
    pool: &PgPool,
    cluster_id: i64,
    at: DateTime<Utc>,
    rows: &[DriftRow],
) -> Result<(), Db> {
    Ok(sqlx::query(
        "UPDATE wire_writes w SET drift = u.drift, producers_write = u.sentence, judged_at = $2
         FROM UNNEST($3::text[], $4::jsonb[], $5::text[]) AS u(topic, drift, sentence)
         WHERE w.cluster_id = $1 AND w.topic = u.topic",
    )
    .bind(cluster_id)
    .bind(at)
    .bind(rows.iter().map(|r| r.topic.as_str()).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.drift.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.sentence.as_str()).collect::<Vec<_>>())
    .execute(pool)
    .await
    .map(drop)?)
}

/// What producers write, by value subject (`<topic>-value`), for the
/// subjects named.
pub async fn producers_write(
    pool: &PgPool,
    cluster_id: i64,
    subjects: &[String],
) -> Result<HashMap<String, String>, Db> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT w.topic || '-value', w.producers_write FROM wire_writes w
         WHERE w.cluster_id = $1 AND w.producers_write IS NOT NULL
           AND w.topic || '-value' = ANY($2)",
    )
    .bind(cluster_id)
    .bind(subjects)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().collect())
}
