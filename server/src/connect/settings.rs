//! A Kafka cluster's Connect clusters: their settings (checked before they
//! are saved: name, credential references, https, the egress rule), set by
//! an admin or from the cluster file, removed, tested, and a client for
//! each with its credentials resolved.

use serde::{Deserialize, Serialize};
use serde_json::json;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::platform::credential::http_transport;
use streamkeeper_app::connect::model::ConnectClusterView;
use streamkeeper_app::error::AppError;
use utoipa::ToSchema;

use super::store::{self, ConnectRow, ConnectSet};
use super::{ConnectService, DEFAULT_INTERVAL_S, connect_error, view};
use crate::accounts::require;
use crate::audit::{audited, record_refusal};
use crate::clients::connect::{Auth, ConnectClient, ConnectSettings, Secret};
use crate::clients::egress::Outbound;
use crate::clients::kafka::settings::SecretRef;
use crate::platform::db::{begin, commit};

/// A Connect cluster as an admin sets it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ConnectSpec {
    /// Unique within the Kafka cluster: letters, digits, `.`, `_`, `-`.
    pub name: String,
    /// A worker (`http://connect:8083`), or Confluent Cloud's
    /// `https://api.confluent.cloud/connect/v1/environments/{env}/clusters/{lkc}`.
    pub url: String,
    /// Basic: references (`env:NAME`, `file:/path`), both or neither; on
    /// Confluent Cloud a Cloud API key and its secret.
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    /// Bearer: a reference to the token (instead of Basic).
    pub token_ref: Option<String>,
    /// Seconds between status passes (5–3600, default 30).
    pub interval_s: Option<i32>,
}

/// What "test connection" could read.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectTest {
    /// The worker's Kafka version; Confluent Cloud has no version to read.
    pub version: Option<String>,
    pub plugins: usize,
    pub connectors: usize,
}

/// A client for a Connect cluster, credentials resolved now: references
/// checked against the policy again, sent only over https unless the Kafka
/// cluster is marked insecure, to addresses the egress rule allows.
pub fn client(r: &ConnectRow, outbound: &Outbound) -> Result<ConnectClient, String> {
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
    let has_credentials = r.username_ref.is_some() || r.token_ref.is_some();
    http_transport(&scheme, has_credentials, r.insecure_credentials).map_err(|e| e.to_string())?;
    let auth = match (
        resolve(&r.username_ref)?,
        resolve(&r.password_ref)?,
        resolve(&r.token_ref)?,
    ) {
        (Some(user), Some(secret), None) => Auth::Basic {
            user,
            secret: Secret::new(secret),
        },
        (None, None, Some(token)) => Auth::Bearer(Secret::new(token)),
        (None, None, None) => Auth::None,
        _ => return Err(
            "the Connect cluster needs a username and a password reference, or a token reference"
                .into(),
        ),
    };
    ConnectClient::new(ConnectSettings {
        auth,
        egress: outbound.egress,
        ..ConnectSettings::new(&r.url)
    })
    .map_err(|e| e.to_string())
}

impl ConnectService {
    /// A Connect cluster's settings as they would be saved: references the
    /// policy allows (Basic both or neither, or a token, not both), sent
    /// only over https unless the cluster is marked insecure, a URL the
    /// client accepts and the egress rule allows. Values are not resolved.
    fn check(&self, set: &ConnectSet<'_>, insecure: bool) -> Result<(), String> {
        if !(1..=64).contains(&set.name.len())
            || !set
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(
                "A Connect cluster's name is 1 to 64 letters, digits, '.', '_' or '-'.".into(),
            );
        }
        for r in [set.username_ref, set.password_ref, set.token_ref]
            .into_iter()
            .flatten()
        {
            self.outbound
                .credentials
                .check(r)
                .map_err(|e| format!("Connect credentials: {e}."))?;
        }
        if set.username_ref.is_some() != set.password_ref.is_some() {
            return Err(
                "Give both the Connect cluster's username and password references, or neither."
                    .into(),
            );
        }
        if set.token_ref.is_some() && set.username_ref.is_some() {
            return Err("Give Basic credentials or a token reference, not both.".into());
        }
        if !(5..=3600).contains(&set.interval_s) {
            return Err("The status interval is 5 to 3600 seconds.".into());
        }
        if let Some(c) = streamkeeper::platform::shell::first_unsafe(set.url) {
            return Err(format!(
                "The Connect URL must not contain {c:?}: whitespace, control characters and shell syntax are refused (it goes into suggested requests)."
            ));
        }
        ConnectClient::new(ConnectSettings {
            egress: self.outbound.egress,
            ..ConnectSettings::new(set.url)
        })
        .map_err(|e| e.to_string())?;
        let url = url::Url::parse(set.url).map_err(|e| e.to_string())?;
        self.outbound
            .egress
            .check_saved(url.host_str().unwrap_or(""))
            .map_err(|e| format!("The Connect URL cannot be used: {e}."))?;
        let credentials = set.username_ref.is_some() || set.token_ref.is_some();
        http_transport(url.scheme(), credentials, insecure)
            .map_err(|e| format!("Connect credentials: {e}."))
    }

    /// Adds or changes a Connect cluster of a Kafka cluster (admins).
    pub async fn set(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        spec: ConnectSpec,
    ) -> Result<ConnectClusterView, AppError> {
        require(who, Action::ManageClusters, "set a cluster's Kafka Connect")?;
        let cluster = self.cluster(cluster_id).await?;
        let blank = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let (username, password, token) = (
            blank(&spec.username_ref),
            blank(&spec.password_ref),
            blank(&spec.token_ref),
        );
        let name = spec.name.trim();
        let url = spec.url.trim();
        let set = ConnectSet {
            name,
            url,
            username_ref: username.as_deref(),
            password_ref: password.as_deref(),
            token_ref: token.as_deref(),
            interval_s: spec.interval_s.unwrap_or(DEFAULT_INTERVAL_S),
        };
        let target = format!("cluster:{}/connect:{name}", cluster.name);
        if let Err(why) = self.check(&set, cluster.insecure_credentials) {
            record_refusal(
                &self.pool,
                who,
                from,
                "connect.set.refused",
                target,
                json!({ "refused": why }),
            )
            .await;
            return Err(AppError::Invalid(why));
        }
        let mut tx = begin(&self.pool).await?;
        let (_, created) = store::upsert(&mut tx, cluster_id, &set).await?;
        // References by name, never a value.
        audited(
            &mut tx,
            who,
            from,
            if created {
                "connect.create"
            } else {
                "connect.update"
            },
            target,
            json!({
                "url": set.url,
                "username_ref": set.username_ref,
                "password_ref": set.password_ref,
                "token_ref": set.token_ref,
                "interval_s": set.interval_s,
            }),
        )
        .await?;
        commit(tx).await?;
        self.connect(cluster_id, name).await.map(view)
    }

    /// Applies a clusters file's `[[cluster.connect]]` tables: every entry
    /// is checked before any is written, so one bad entry changes nothing;
    /// each set is audited. Returns a line per entry.
    pub async fn apply_file(
        &self,
        who: &Principal,
        from: &str,
        entries: Vec<crate::watch::cluster_file::ConnectFileEntry>,
        dry_run: bool,
    ) -> Result<Vec<String>, AppError> {
        let mut checked = Vec::with_capacity(entries.len());
        for e in entries {
            let found = store::cluster_by_name(&self.pool, &e.cluster).await?;
            let Some((cluster_id, insecure)) = found else {
                if dry_run {
                    // The clusters part of the same file would create it.
                    continue;
                }
                return Err(AppError::NotFound(format!("Cluster {}", e.cluster)));
            };
            let set = ConnectSet {
                name: e.name.trim(),
                url: e.url.trim(),
                username_ref: e.username_ref.as_deref(),
                password_ref: e.password_ref.as_deref(),
                token_ref: e.token_ref.as_deref(),
                interval_s: e.interval_s.unwrap_or(DEFAULT_INTERVAL_S),
            };
            self.check(&set, insecure)
                .map_err(|why| AppError::Invalid(format!("{}/{}: {why}", e.cluster, e.name)))?;
            checked.push((cluster_id, e));
        }
        let mut report = Vec::with_capacity(checked.len());
        for (cluster_id, e) in checked {
            let line = format!("{}/{}", e.cluster, e.name);
            if !dry_run {
                let spec = ConnectSpec {
                    name: e.name,
                    url: e.url,
                    username_ref: e.username_ref,
                    password_ref: e.password_ref,
                    token_ref: e.token_ref,
                    interval_s: e.interval_s,
                };
                self.set(who, from, cluster_id, spec).await?;
            }
            report.push(line);
        }
        Ok(report)
    }

    pub async fn delete(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        name: &str,
    ) -> Result<(), AppError> {
        require(
            who,
            Action::ManageClusters,
            "remove a cluster's Kafka Connect",
        )?;
        let cluster = self.cluster(cluster_id).await?;
        let mut tx = begin(&self.pool).await?;
        if !store::delete(&mut tx, cluster_id, name).await? {
            return Err(AppError::NotFound(format!("Connect cluster {name}")));
        }
        audited(
            &mut tx,
            who,
            from,
            "connect.delete",
            format!("cluster:{}/connect:{name}", cluster.name),
            json!({}),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    /// Reads the worker's version, plugins and connectors (admins: it
    /// uses the saved credentials and shows what the worker answered).
    pub async fn test(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
    ) -> Result<ConnectTest, AppError> {
        require(
            who,
            Action::ManageClusters,
            "test a Kafka Connect connection",
        )?;
        let row = self.connect(cluster_id, name).await?;
        let c = client(&row, &self.outbound).map_err(AppError::Invalid)?;
        let version = if c.is_cloud() {
            None
        } else {
            Some(
                c.worker()
                    .await
                    .map_err(|e| connect_error(who, &e))?
                    .version,
            )
        };
        let plugins = c.plugins(true).await.map_err(|e| connect_error(who, &e))?;
        let connectors = c.connectors().await.map_err(|e| connect_error(who, &e))?;
        Ok(ConnectTest {
            version,
            plugins: plugins.len(),
            connectors: connectors.len(),
        })
    }
}
