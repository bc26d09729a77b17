//! Applying a clusters file (every entry checked before anything changes)
//! and setting the clusters' lineage topics.

use super::admin::{connection_of, same_settings, stored, target_of, validate, with_credentials};
use super::{ClusterService, store};
use crate::accounts::require;
use crate::audit::{audited, record_refusal};
use crate::platform::db::{begin, commit};
use serde_json::json;
use std::collections::BTreeMap;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::watch::topic_name::topic_issue;
use streamkeeper_app::error::AppError;
use streamkeeper_app::watch::model::NewCluster;

/// What applying a clusters file did (or, in a dry run, would do).
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ApplyReport {
    pub created: Vec<String>,
    pub updated: Vec<String>,
    pub unchanged: Vec<String>,
    /// Clusters in the console the file does not name: left alone.
    pub not_in_file: Vec<String>,
}
impl ClusterService {
    /// Makes the clusters named in a clusters file match it, in one
    /// transaction: every entry is validated before anything changes, so a
    /// bad file changes nothing. Clusters not in the file are left alone
    /// and listed. With `dry_run`, says what would change.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn apply(
        &self,
        who: &Principal,
        from: &str,
        entries: Vec<NewCluster>,
        dry_run: bool,
    ) -> Result<ApplyReport, AppError> {
        require(who, Action::ManageClusters, "apply a clusters file")?;
        let wanted = entries
            .iter()
            .map(|e| {
                validate(e, &self.credentials).map_err(|err| match err {
                    AppError::Invalid(m) => {
                        (e, AppError::Invalid(format!("Cluster {:?}: {m}", e.name)))
                    }
                    other => (e, other),
                })
            })
            .collect::<Result<Vec<_>, _>>();
        let wanted = match wanted {
            Ok(w) => w,
            Err((entry, e)) => {
                let why = e.to_string();
                let target = target_of(&entry.name);
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.apply.refused",
                    target,
                    json!({ "refused": why }),
                )
                .await;
                return Err(e);
            }
        };
        let existing: BTreeMap<String, store::ClusterRow> = store::all(&self.pool)
            .await?
            .into_iter()
            .map(|c| (c.name.clone(), c))
            .collect();
        let mut report = ApplyReport::default();
        let mut tx = begin(&self.pool).await?;
        for w in &wanted {
            let (action, old, row) = match existing.get(&w.name) {
                Some(old) if same_settings(old, w) => {
                    report.unchanged.push(w.name.clone());
                    continue;
                }
                Some(old) => {
                    report.updated.push(w.name.clone());
                    if dry_run {
                        continue;
                    }
                    let row = store::update(&mut tx, old.id, &stored(w)).await?;
                    ("cluster.update", Some(old), row)
                }
                None => {
                    report.created.push(w.name.clone());
                    if dry_run {
                        continue;
                    }
                    let row = store::insert(&mut tx, &stored(w)).await?;
                    ("cluster.create", None, row)
                }
            };
            audited(
                &mut tx,
                who,
                from,
                action,
                format!("cluster:{}", row.name),
                with_credentials(
                    {
                        let mut d = connection_of(&row);
                        d["source"] = json!("clusters file");
                        d
                    },
                    old,
                    &row,
                ),
            )
            .await?;
        }
        commit(tx).await?;
        report.not_in_file = existing
            .into_keys()
            .filter(|n| !wanted.iter().any(|w| &w.name == n))
            .collect();
        Ok(report)
    }

    /// Sets each named cluster's lineage topic as a clusters file says
    /// (absent: the Kafka transport off), audited per change; clusters not
    /// named are left alone. A bad topic name changes nothing. Returns the
    /// clusters changed (that would change, with `dry_run`).
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn set_lineage_topics(
        &self,
        who: &Principal,
        from: &str,
        wanted: Vec<(String, Option<String>)>,
        dry_run: bool,
    ) -> Result<Vec<String>, AppError> {
        require(who, Action::ManageClusters, "apply a clusters file")?;
        for (name, topic) in &wanted {
            if let Some(t) = topic
                && let Some(why) = topic_issue(t)
            {
                let e = AppError::Invalid(format!(
                    "Cluster {name:?}: the lineage topic {t:?} is not a Kafka topic name: {why}"
                ));
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.apply.refused",
                    target_of(name),
                    json!({ "refused": e.to_string() }),
                )
                .await;
                return Err(e);
            }
        }
        let existing = store::lineage_topics(&self.pool).await?;
        let mut changed = Vec::new();
        let mut tx = begin(&self.pool).await?;
        for (name, topic) in wanted {
            let Some((id, old)) = existing.get(&name) else {
                continue;
            };
            if *old == topic {
                continue;
            }
            changed.push(name.clone());
            if dry_run {
                continue;
            }
            store::set_lineage_topic(&mut tx, *id, topic.as_deref()).await?;
            audited(
                &mut tx,
                who,
                from,
                "cluster.lineage_topic",
                format!("cluster:{name}"),
                json!({ "from": old, "to": topic, "group": "streamkeeper-lineage" }),
            )
            .await?;
        }
        commit(tx).await?;
        Ok(changed)
    }

    /// Sets one cluster's lineage topic (`None`: the Kafka transport off),
    /// admin only, with the clusters file's validation (a bad name is
    /// refused and audited as one), audited. Returns whether it changed.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn set_lineage_topic(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        topic: Option<&str>,
    ) -> Result<bool, AppError> {
        // A refusal is a 403, audited by the web layer like every refused write.
        require(who, Action::ManageClusters, "set a cluster's lineage topic")?;
        let existing = store::lineage_topics(&self.pool).await?;
        let Some(name) = existing
            .iter()
            .find(|(_, (id, _))| *id == cluster_id)
            .map(|(name, _)| name.clone())
        else {
            return Err(AppError::NotFound(format!("Cluster {cluster_id}")));
        };
        let topic = topic.map(str::trim).filter(|t| !t.is_empty());
        let changed = self
            .set_lineage_topics(who, from, vec![(name, topic.map(str::to_owned))], false)
            .await?;
        Ok(!changed.is_empty())
    }
}
