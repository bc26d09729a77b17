//! A cluster's Schema Registry: its settings (checked before they are
//! saved), a client for it with credentials resolved, and what the hygiene
//! routine last read of it.

use serde_json::json;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::platform::credential::http_transport;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_app::error::AppError;
use streamkeeper_app::schemas::model::{
    RegistryFinding, RegistrySpec, RegistryStatus, SubjectSeen,
};

use super::SchemaService;
use super::store::{self, RegistryRow};
use crate::accounts::require;
use crate::audit::{audited, record_refusal};
use crate::clients::egress::Outbound;
use crate::clients::kafka::settings::SecretRef;
use crate::clients::registry::{Auth, RegistryClient, RegistrySettings, Secret};
use crate::platform::db::{begin, commit};

/// A client for a cluster's registry, credentials resolved now: the
/// references checked against the policy again, sent only over https
/// unless the cluster is marked insecure, to addresses the egress rule
/// allows.
pub fn client(r: &RegistryRow, outbound: &Outbound) -> Result<RegistryClient, String> {
    let resolve = |v: &Option<String>| -> Result<Option<String>, String> {
        v.as_deref()
            .map(|s| {
                SecretRef::checked(s, &outbound.credentials)
                    .and_then(|r| r.resolve())
                    .map_err(|e| e.to_string())
            })
            .transpose()
    };
    let scheme = url::Url::parse(r.url.trim())
        .map(|u| u.scheme().to_owned())
        .unwrap_or_default();
    let has_credentials = r.username_ref.is_some() || r.password_ref.is_some();
    http_transport(&scheme, has_credentials, r.insecure_credentials).map_err(|e| e.to_string())?;
    let auth = match (resolve(&r.username_ref)?, resolve(&r.password_ref)?) {
        (Some(user), Some(secret)) => Auth::Basic {
            user,
            secret: Secret::new(secret),
        },
        (None, None) => Auth::None,
        _ => return Err("the registry needs both a username and a password reference".into()),
    };
    RegistryClient::new(RegistrySettings {
        auth,
        egress: outbound.egress,
        ..RegistrySettings::new(&r.url)
    })
    .map_err(|e| e.to_string())
}

/// A registry URL as saved: a URL the client accepts, whose host the egress
/// rule allows, and with nothing a shell would read as syntax (it is
/// pasted into the suggested request for applying a change by hand).
fn check_registry_url(url: &str, egress: EgressPolicy) -> Result<(), String> {
    if let Some(c) = streamkeeper::platform::shell::first_unsafe(url) {
        return Err(format!(
            "The registry URL must not contain {c:?}: whitespace, control characters and shell syntax ($ ` ' \" \\ ; & | < > ( ) {{ }} * ? ! # ^) are refused."
        ));
    }
    RegistryClient::new(RegistrySettings {
        egress,
        ..RegistrySettings::new(url)
    })
    .map_err(|e| e.to_string())?;
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    egress
        .check_saved(&host)
        .map_err(|e| format!("The registry URL cannot be used: {e}."))
}

impl SchemaService {
    /// Sets a cluster's registry (admins).
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    pub async fn set_registry(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        spec: RegistrySpec,
    ) -> Result<RegistrySpec, AppError> {
        require(
            who,
            Action::ManageClusters,
            "set a cluster's Schema Registry",
        )?;
        let cluster = crate::watch::store::by_id(&self.pool, cluster_id)
            .await?
            .ok_or_else(|| AppError::NotFound("That cluster".into()))?;
        let name = cluster.name;
        let blank = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        let row = RegistryRow {
            url: spec.url.trim().to_owned(),
            username_ref: blank(spec.username_ref),
            password_ref: blank(spec.password_ref),
            insecure_credentials: cluster.insecure_credentials,
        };
        if let Err(why) = self.check_registry(&row) {
            let target = format!("cluster:{name}");
            record_refusal(
                &self.pool,
                who,
                from,
                "registry.set.refused",
                target,
                json!({ "refused": why }),
            )
            .await;
            return Err(AppError::Invalid(why));
        }
        let before = store::registry(&self.pool, cluster_id).await?;
        let mut tx = begin(&self.pool).await?;
        store::set_registry(&mut tx, cluster_id, &row).await?;
        // Which references changed, by name and reference (never a value).
        let refs = |r: &RegistryRow| json!({ "username_ref": r.username_ref, "password_ref": r.password_ref });
        let changed: Vec<&str> = ["username_ref", "password_ref"]
            .into_iter()
            .filter(|k| {
                before
                    .as_ref()
                    .map_or(!refs(&row)[k].is_null(), |b| refs(b)[k] != refs(&row)[k])
            })
            .collect();
        audited(
            &mut tx,
            who,
            from,
            "registry.set",
            format!("cluster:{name}"),
            json!({
                "url": row.url,
                "credentials": row.username_ref.is_some(),
                "username_ref": row.username_ref,
                "password_ref": row.password_ref,
                "credentials_changed": changed,
                "credentials_were": before.as_ref().filter(|_| !changed.is_empty()).map(refs),
            }),
        )
        .await?;
        commit(tx).await?;
        Ok(RegistrySpec {
            url: row.url,
            username_ref: row.username_ref,
            password_ref: row.password_ref,
        })
    }

    /// A registry's settings as they would be saved: references the policy
    /// allows, both or neither, sent only over https unless the cluster is
    /// marked insecure, and a URL that may be used (its values are not
    /// resolved: they may exist only where the server runs).
    fn check_registry(&self, row: &RegistryRow) -> Result<(), String> {
        for r in [&row.username_ref, &row.password_ref].into_iter().flatten() {
            self.outbound
                .credentials
                .check(r)
                .map_err(|e| format!("Registry credentials: {e}."))?;
        }
        if row.username_ref.is_some() != row.password_ref.is_some() {
            return Err(
                "Give both the registry's username and password references, or neither.".into(),
            );
        }
        check_registry_url(&row.url, self.outbound.egress)?;
        let scheme = url::Url::parse(&row.url)
            .map(|u| u.scheme().to_owned())
            .unwrap_or_default();
        http_transport(
            &scheme,
            row.username_ref.is_some(),
            row.insecure_credentials,
        )
        .map_err(|e| format!("Registry credentials: {e}."))
    }

    /// A cluster's registry with its hygiene findings; `None` without one.
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    pub async fn registry_status(
        &self,
        who: &Principal,
        cluster_id: i64,
    ) -> Result<Option<RegistryStatus>, AppError> {
        require(who, Action::Read, "see registries")?;
        let cluster = self.cluster_name(cluster_id).await?;
        Ok(store::registry_status(&self.pool, cluster_id).await?.map(
            |(url, checked_at, last_error, findings)| RegistryStatus {
                cluster_id,
                cluster,
                url,
                checked_at,
                last_error,
                findings: findings
                    .into_iter()
                    .map(|o| RegistryFinding {
                        kind: o.finding.kind,
                        subject: o.finding.subject,
                        topic: o.finding.topic,
                        owner: o.owner,
                        detail: o.finding.detail,
                        found_at: o.finding.found_at,
                    })
                    .collect(),
            },
        ))
    }

    pub(super) async fn registry_client(
        &self,
        cluster_id: i64,
    ) -> Result<RegistryClient, AppError> {
        let r = store::registry(&self.pool, cluster_id)
            .await?
            .ok_or_else(|| AppError::NotFound("This cluster's Schema Registry".into()))?;
        client(&r, &self.outbound).map_err(AppError::Unavailable)
    }

    /// The cluster's registry client; `None` when it has no registry.
    #[tracing::instrument(skip_all, fields(cluster_id = cluster_id))]
    pub async fn registry_client_of(
        &self,
        cluster_id: i64,
    ) -> Result<Option<RegistryClient>, AppError> {
        match store::registry(&self.pool, cluster_id).await? {
            Some(r) => client(&r, &self.outbound)
                .map(Some)
                .map_err(AppError::Unavailable),
            None => Ok(None),
        }
    }

    /// The registry's base URL, for the request to apply a change by hand.
    pub async fn registry_url(&self, cluster_id: i64) -> Result<Option<String>, AppError> {
        Ok(store::registry(&self.pool, cluster_id)
            .await?
            .map(|r| r.url))
    }

    /// The subject's latest version as the registry was last read, if it
    /// has been read.
    pub(crate) async fn subject_latest(
        &self,
        cluster_id: i64,
        subject: &str,
    ) -> Result<Option<SubjectSeen>, AppError> {
        Ok(store::subject_latest(&self.pool, cluster_id, subject)
            .await?
            .map(|(read_at, latest)| SubjectSeen {
                latest: latest.and_then(|v| u32::try_from(v).ok()),
                read_at,
            }))
    }
}
