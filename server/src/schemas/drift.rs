//! Schema drift, after each registry reading: what each stream's producers
//! write (the wire-format headers the watch pass read off its last
//! records) placed against the registry (each ID looked up where it is
//! registered, `GET /schemas/ids/{id}/versions`), stored for the schema
//! page and the API, and raised as a DRIFT flag to the stream's owner
//! (`streamkeeper::schemas::drift`). An ID the registry could not be asked
//! about holds its stream's flag as it stands.

use chrono::Utc;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};
use streamkeeper::schemas::drift::{
    DriftCall, Lookup, ValueSubject, Written, drift_key, observe_drift, place,
};
use streamkeeper::schemas::subject::value_subject;

use super::routine::HygieneError;
use super::store::{self, DriftRow};
use crate::clients::registry::{RegistryClient, RegistryError};
use crate::watch::judge;
use crate::watch::store::ClusterRow;

/// Places every stream's writes, stores them and reconciles the flags.
pub async fn judge(
    pool: &PgPool,
    registry: &RegistryClient,
    cluster: &ClusterRow,
) -> Result<(), HygieneError> {
    let streams: Vec<(String, Vec<Written>)> = store::wire_writes(pool, cluster.id)
        .await?
        .into_iter()
        .map(|(topic, w)| {
            // A row this build cannot read is as if never read.
            (topic, serde_json::from_value(w).unwrap_or_default())
        })
        .collect();
    let names: Vec<String> = streams.iter().map(|(t, _)| value_subject(t)).collect();
    let subjects: BTreeMap<String, ValueSubject> = store::value_subjects(pool, cluster.id, &names)
        .await?
        .into_iter()
        .map(|r| {
            let s = ValueSubject {
                name: r.subject.clone(),
                versions: r.versions,
                latest_id: u32::try_from(r.latest_id).unwrap_or_default(),
                schema_type: r.schema_type,
            };
            (r.subject, s)
        })
        .collect();
    let ids: BTreeSet<u32> = streams
        .iter()
        .flat_map(|(_, w)| w.iter().filter_map(|w| w.carried.id()))
        .collect();
    let mut found = BTreeMap::new();
    for id in ids {
        found.insert(id, lookup(registry, id).await);
    }
    let now = Utc::now();
    let (mut observed, mut evaluated, mut rows) = (Vec::new(), BTreeSet::new(), Vec::new());
    for (topic, written) in &streams {
        let name = value_subject(topic);
        let drift = place(&name, subjects.get(&name), written, |id| {
            found
                .get(&id)
                .cloned()
                .unwrap_or_else(|| Lookup::NotKnown("not looked up".into()))
        });
        match observe_drift(topic, &drift, now.timestamp_millis()) {
            DriftCall::Flag(o) => {
                evaluated.insert(drift_key(topic));
                observed.push(o);
            }
            DriftCall::Clear => {
                evaluated.insert(drift_key(topic));
            }
            DriftCall::Held => {}
        }
        rows.push(DriftRow {
            topic: topic.clone(),
            sentence: drift.sentence(),
            drift: serde_json::to_value(&drift).unwrap_or_default(),
        });
    }
    store::record_drift(pool, cluster.id, now, &rows).await?;
    judge::reconcile(pool, cluster, observed, &evaluated).await?;
    Ok(())
}

/// Where the registry has schema `id`.
async fn lookup(registry: &RegistryClient, id: u32) -> Lookup {
    match registry.schema_versions(id, false).await {
        Ok(at) => Lookup::Registered(
            at.into_iter()
                .map(|v| (v.subject, i32::try_from(v.version).unwrap_or(i32::MAX)))
                .collect(),
        ),
        Err(RegistryError::SchemaNotFound { .. }) => Lookup::Unknown,
        Err(e) => Lookup::NotKnown(e.to_string()),
    }
}
