//! Adding, changing, removing, restoring, pausing and testing a cluster:
//! what an admin enters, checked before anything is stored, and audited
//! with its credentials as references (never what they resolve to).

use super::{ClusterService, store};
use crate::accounts::require;
use crate::audit::{audited, record_refusal};
use crate::platform::db::{begin, commit};
use crate::platform::errors;
use crate::store::is_unique_violation;
use chrono::Utc;
use serde_json::json;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::watch::cluster;
use streamkeeper::watch::reach::Unreachable;
use streamkeeper_app::error::AppError;
use streamkeeper_app::watch::model::{ClusterView, ConnectionReport, NewCluster, RemovedCluster};

/// A cluster row from what an admin entered, blanks as absent, for
/// validation and connection tests before anything is stored.
fn probe_row(new: &NewCluster) -> store::ClusterRow {
    let some = |v: &Option<String>| {
        v.clone()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    store::ClusterRow {
        id: 0,
        name: new.name.trim().to_string(),
        bootstrap: new.bootstrap.trim().to_string(),
        security_protocol: new.security_protocol.trim().to_ascii_uppercase(),
        sasl_mechanism: some(&new.sasl_mechanism),
        username_ref: some(&new.username_ref),
        password_ref: some(&new.password_ref),
        ca_ref: some(&new.ca_ref),
        client_cert_ref: some(&new.client_cert_ref),
        client_key_ref: some(&new.client_key_ref),
        insecure_credentials: new.insecure_credentials,
        interval_s: new.interval_s,
        created_at: Utc::now(),
        paused_at: None,
        paused_by: None,
    }
}

/// Checks a cluster as entered and returns it as it would be stored:
/// name, interval, bootstrap, protocol, mechanism, and credentials as
/// references the policy allows, sent only over TLS unless the cluster is
/// marked insecure (resolving them waits for the first pass).
pub(super) fn validate(
    new: &NewCluster,
    policy: &CredentialPolicy,
) -> Result<store::ClusterRow, AppError> {
    let name = streamkeeper::accounts::account::check_team_name(&new.name)
        .map_err(|e| AppError::Invalid(e.to_string().replace("team name", "cluster name")))?;
    if !(5..=3600).contains(&new.interval_s) {
        return Err(AppError::Invalid(
            "The sampling interval must be 5 to 3600 seconds.".into(),
        ));
    }
    let probe = store::ClusterRow {
        name,
        ..probe_row(new)
    };
    let settings = crate::watch::routine::settings_of(&probe, policy).map_err(AppError::Invalid)?;
    if settings.ca.is_some() && !settings.protocol.tls() {
        return Err(AppError::Invalid(format!(
            "A CA bundle is used only over TLS: choose SSL or SASL_SSL, or leave the CA empty ({} does not use TLS).",
            settings.protocol.as_str()
        )));
    }
    if settings.client_cert.is_some() && !settings.protocol.tls() {
        return Err(AppError::Invalid(format!(
            "A client certificate is used only over TLS (mutual TLS): choose SSL or SASL_SSL, or leave the client certificate and key empty ({} does not use TLS).",
            settings.protocol.as_str()
        )));
    }
    Ok(probe)
}

/// An audit entry's detail: `base` with the cluster's credential
/// references (never what they resolve to), the fields among them that
/// changed (for a new cluster, those set), and what those were before.
pub(super) fn with_credentials(
    mut base: serde_json::Value,
    old: Option<&store::ClusterRow>,
    new: &store::ClusterRow,
) -> serde_json::Value {
    let refs = |c: &store::ClusterRow| {
        json!({
            "username_ref": c.username_ref,
            "password_ref": c.password_ref,
            "insecure_credentials": c.insecure_credentials,
        })
    };
    let (now, was) = (refs(new), old.map(refs));
    let changed: Vec<&str> = ["username_ref", "password_ref", "insecure_credentials"]
        .into_iter()
        .filter(|k| match &was {
            Some(w) => w[k] != now[k],
            None => !now[k].is_null() && now[k] != json!(false),
        })
        .collect();
    if let (Some(b), serde_json::Value::Object(n)) = (base.as_object_mut(), now) {
        b.extend(n);
        if let Some(w) = was.filter(|_| !changed.is_empty()) {
            b.insert("credentials_were".into(), w);
        }
        b.insert("credentials_changed".into(), json!(changed));
    }
    base
}

/// What an audit entry says of a cluster's connection (its credentials go
/// through `with_credentials`).
pub(super) fn connection_of(c: &store::ClusterRow) -> serde_json::Value {
    json!({
        "bootstrap": c.bootstrap,
        "security_protocol": c.security_protocol,
        "ca_ref": c.ca_ref,
        "client_cert_ref": c.client_cert_ref,
        "client_key_ref": c.client_key_ref,
        "interval_s": c.interval_s,
    })
}

/// A cluster's name for an audit target, however long it was entered.
pub(super) fn target_of(name: &str) -> String {
    format!(
        "cluster:{}",
        name.trim().chars().take(100).collect::<String>()
    )
}

pub(super) fn stored(c: &store::ClusterRow) -> store::NewCluster<'_> {
    store::NewCluster {
        name: &c.name,
        bootstrap: &c.bootstrap,
        security_protocol: &c.security_protocol,
        sasl_mechanism: c.sasl_mechanism.as_deref(),
        username_ref: c.username_ref.as_deref(),
        password_ref: c.password_ref.as_deref(),
        ca_ref: c.ca_ref.as_deref(),
        client_cert_ref: c.client_cert_ref.as_deref(),
        client_key_ref: c.client_key_ref.as_deref(),
        insecure_credentials: c.insecure_credentials,
        interval_s: c.interval_s,
    }
}

pub(super) fn same_settings(a: &store::ClusterRow, b: &store::ClusterRow) -> bool {
    (
        &a.bootstrap,
        &a.security_protocol,
        &a.sasl_mechanism,
        &a.username_ref,
        &a.password_ref,
        &a.ca_ref,
        &a.client_cert_ref,
        &a.client_key_ref,
        a.insecure_credentials,
        a.interval_s,
    ) == (
        &b.bootstrap,
        &b.security_protocol,
        &b.sasl_mechanism,
        &b.username_ref,
        &b.password_ref,
        &b.ca_ref,
        &b.client_cert_ref,
        &b.client_key_ref,
        b.insecure_credentials,
        b.interval_s,
    )
}

impl ClusterService {
    pub(super) async fn create(
        &self,
        who: &Principal,
        from: &str,
        new: NewCluster,
    ) -> Result<ClusterView, AppError> {
        require(who, Action::ManageClusters, "add clusters")?;
        let probe = match validate(&new, &self.credentials) {
            Ok(p) => p,
            Err(e) => {
                let why = e.to_string();
                let target = target_of(&new.name);
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.create.refused",
                    target,
                    json!({ "refused": why }),
                )
                .await;
                return Err(e);
            }
        };
        let name = probe.name.clone();
        let mut tx = begin(&self.pool).await?;
        let row = store::insert(&mut tx, &stored(&probe)).await.map_err(|e| {
            if is_unique_violation(&e) {
                AppError::Conflict(format!("A cluster named {name} already exists."))
            } else {
                e.into()
            }
        })?;
        audited(
            &mut tx,
            who,
            from,
            "cluster.create",
            format!("cluster:{name}"),
            with_credentials(connection_of(&row), None, &row),
        )
        .await?;
        commit(tx).await?;
        self.view(row).await
    }

    pub(super) async fn update(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        mut new: NewCluster,
        keep_credentials: bool,
    ) -> Result<ClusterView, AppError> {
        require(who, Action::ManageClusters, "change clusters")?;
        let old = store::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        // The name is how the clusters file, the CLI and every audit entry
        // know the cluster: it stays.
        new.name = old.name.clone();
        if keep_credentials {
            new.username_ref = old.username_ref.clone();
            new.password_ref = old.password_ref.clone();
            new.insecure_credentials = old.insecure_credentials;
        }
        // The forms do not show the CA reference either: blank keeps it,
        // unless the credentials are being removed ("Remove the credentials
        // and the CA"), or the cluster no longer uses TLS.
        let blank = |r: &Option<String>| r.as_deref().is_none_or(|r| r.trim().is_empty());
        let dropping = !keep_credentials && blank(&new.username_ref) && blank(&new.password_ref);
        let tls = new
            .security_protocol
            .trim()
            .to_ascii_uppercase()
            .contains("SSL");
        if blank(&new.ca_ref) && !dropping && tls {
            new.ca_ref = old.ca_ref.clone();
        }
        // So are the client certificate and key (mutual TLS), as a pair.
        if blank(&new.client_cert_ref) && blank(&new.client_key_ref) && !dropping && tls {
            new.client_cert_ref = old.client_cert_ref.clone();
            new.client_key_ref = old.client_key_ref.clone();
        }
        let probe = match validate(&new, &self.credentials) {
            Ok(p) => p,
            Err(e) => {
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.update.refused",
                    target_of(&old.name),
                    json!({ "refused": e.to_string() }),
                )
                .await;
                return Err(e);
            }
        };
        if same_settings(&old, &probe) {
            return self.view(old).await;
        }
        let mut tx = begin(&self.pool).await?;
        let row = store::update(&mut tx, id, &stored(&probe)).await?;
        audited(
            &mut tx,
            who,
            from,
            "cluster.update",
            format!("cluster:{}", row.name),
            with_credentials(
                {
                    let mut d = connection_of(&row);
                    d["was"] = connection_of(&old);
                    d
                },
                Some(&old),
                &row,
            ),
        )
        .await?;
        commit(tx).await?;
        self.view(row).await
    }

    /// Soft: the cluster is no longer watched and is gone from every list
    /// and page, but its history stays until housekeeping purges it
    /// ([`cluster::HISTORY_DAYS`] on); the audit entry says when.
    pub(super) async fn remove(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<RemovedCluster, AppError> {
        require(who, Action::ManageClusters, "remove clusters")?;
        let old = store::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        let mut tx = begin(&self.pool).await?;
        // Removed meanwhile by someone else: gone, as for a second remove.
        let removed_at = store::remove(&mut tx, id, &who.username)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        let purged_on = cluster::purged_on(removed_at);
        audited(
            &mut tx,
            who,
            from,
            "cluster.remove",
            format!("cluster:{}", old.name),
            {
                let mut d = connection_of(&old);
                d["id"] = json!(id);
                d["history_kept_until"] = json!(purged_on);
                d
            },
        )
        .await?;
        commit(tx).await?;
        Ok(RemovedCluster {
            id,
            name: old.name,
            bootstrap: old.bootstrap,
            removed_at,
            removed_by: who.username.clone(),
            purged_on,
        })
    }

    /// Watched again from the routines' next look at the clusters; its lag
    /// windows start with its next pass (`store::restore`).
    pub(super) async fn restore(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<ClusterView, AppError> {
        require(who, Action::ManageClusters, "restore clusters")?;
        let old = store::removed_by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Removed cluster {id}")))?;
        let mut tx = begin(&self.pool).await?;
        let restored = match store::restore(&mut tx, id).await {
            Ok(r) => r,
            Err(e) if is_unique_violation(&e) => {
                drop(tx);
                let e = AppError::Conflict(format!(
                    "A watched cluster is named {} now: remove or rename it first.",
                    old.name
                ));
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "cluster.restore.refused",
                    target_of(&old.name),
                    json!({ "id": id, "refused": e.to_string() }),
                )
                .await;
                return Err(e);
            }
            Err(e) => return Err(e.into()),
        };
        if !restored {
            return Err(AppError::NotFound(format!("Removed cluster {id}")));
        }
        audited(
            &mut tx,
            who,
            from,
            "cluster.restore",
            format!("cluster:{}", old.name),
            json!({ "id": id, "removed_at": old.removed_at, "removed_by": old.removed_by }),
        )
        .await?;
        commit(tx).await?;
        self.get(who, id).await
    }

    pub(super) async fn pause(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        paused: bool,
    ) -> Result<ClusterView, AppError> {
        let verb = if paused { "pause" } else { "resume" };
        require(who, Action::ManageClusters, &format!("{verb} clusters"))?;
        let old = store::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Cluster {id}")))?;
        let mut tx = begin(&self.pool).await?;
        let by = paused.then_some(who.username.as_str());
        // Asking for the state it is already in changes and audits nothing.
        if store::set_paused(&mut tx, id, by).await? {
            audited(
                &mut tx,
                who,
                from,
                &format!("cluster.{verb}"),
                format!("cluster:{}", old.name),
                serde_json::json!({}),
            )
            .await?;
        }
        commit(tx).await?;
        self.get(who, id).await
    }

    pub(super) async fn try_connect(
        &self,
        who: &Principal,
        new: NewCluster,
    ) -> Result<ConnectionReport, AppError> {
        require(who, Action::ManageClusters, "test cluster connections")?;
        let row = probe_row(&new);
        let mut settings = crate::watch::routine::settings_of(&row, &self.credentials)
            .map_err(AppError::Invalid)?;
        settings.timeout =
            std::time::Duration::from_secs(streamkeeper::watch::reach::TEST_TIMEOUT_S);
        let diagnosed = settings.clone();
        let started = Utc::now();
        // One metadata request first: when it fails, librdkafka's reasons
        // on the way say why (the read's own error says only that it did).
        let read = tokio::task::spawn_blocking(move || {
            crate::clients::kafka::probe::attempt(&settings).map(|()| {
                crate::clients::kafka::reader::read(
                    &settings,
                    &Default::default(),
                    &Default::default(),
                )
            })
        })
        .await
        .map_err(|e| errors::internal("the lag reader's task", e))?;
        let took_ms = (Utc::now() - started).num_milliseconds();
        let failed = |why: Option<Unreachable>, problems: Vec<String>| ConnectionReport {
            reachable: false,
            brokers: 0,
            topics: 0,
            partitions: 0,
            partitions_with_offsets: 0,
            groups: 0,
            groups_with_offsets: 0,
            took_ms,
            unreachable: why,
            problems,
        };
        Ok(match read {
            Err(reasons) => {
                let (why, sentence) =
                    crate::clients::kafka::probe::explain(&diagnosed, &reasons).await;
                let mut problems = vec![sentence];
                problems.extend(reasons);
                failed(Some(why), problems)
            }
            Ok(Err(e)) => failed(None, vec![e.to_string()]),
            Ok(Ok(r)) => {
                let parts = r.topics.iter().flat_map(|t| &t.partitions);
                ConnectionReport {
                    reachable: true,
                    brokers: r.brokers,
                    topics: r.topics.len(),
                    partitions: parts.clone().count(),
                    partitions_with_offsets: parts.filter(|p| p.log_end.is_some()).count(),
                    groups: r.groups.len(),
                    groups_with_offsets: r.groups.iter().filter(|g| g.error.is_none()).count(),
                    took_ms,
                    unreachable: None,
                    problems: r.problems,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(protocol: &str, ca: Option<&str>) -> NewCluster {
        NewCluster {
            name: "prod".into(),
            bootstrap: "broker-1.example:9093".into(),
            security_protocol: protocol.into(),
            sasl_mechanism: None,
            username_ref: None,
            password_ref: None,
            ca_ref: ca.map(Into::into),
            client_cert_ref: None,
            client_key_ref: None,
            insecure_credentials: false,
            interval_s: 15,
        }
    }

    #[test]
    fn a_ca_bundle_is_taken_only_for_a_cluster_spoken_to_over_tls() {
        let policy = CredentialPolicy::default();
        let ca = Some("file:/run/secrets/prod-ca.pem");
        assert!(validate(&cluster("SSL", ca), &policy).is_ok());
        match validate(&cluster("PLAINTEXT", ca), &policy) {
            Err(AppError::Invalid(why)) => assert!(why.contains("only over TLS"), "{why}"),
            other => panic!("refused with a reason, not {other:?}"),
        }
        assert!(validate(&cluster("PLAINTEXT", None), &policy).is_ok());
    }

    #[test]
    fn a_client_certificate_comes_with_its_key_and_only_over_tls() {
        let policy = CredentialPolicy::default();
        let mtls = |protocol: &str, key: Option<&str>| NewCluster {
            client_cert_ref: Some("file:/run/secrets/console.pem".into()),
            client_key_ref: key.map(Into::into),
            ..cluster(protocol, None)
        };
        let key = Some("file:/run/secrets/console.key");
        assert!(validate(&mtls("SSL", key), &policy).is_ok());
        let refused = |new: &NewCluster| match validate(new, &policy) {
            Err(AppError::Invalid(why)) => why,
            other => panic!("refused with a reason, not {other:?}"),
        };
        assert!(refused(&mtls("PLAINTEXT", key)).contains("only over TLS"));
        assert!(refused(&mtls("SSL", None)).contains("both a client certificate reference"));
    }
}
