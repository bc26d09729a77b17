//! Connectors: the Kafka Connect clusters of each Kafka cluster (a worker's
//! URL or Confluent Cloud's managed-connector prefix, credentials by
//! reference), their connectors as the status routine last read them
//! (configs masked, traces scrubbed, states with history, owners), and the
//! validation of a draft: the pure rules of `streamkeeper::connect` beside
//! the worker's own validate answer. The rules are in `streamkeeper::connect`;
//! this gathers the facts.

pub mod api;
pub mod cli;
pub mod metrics;
mod password_keys;
pub mod routine;
pub mod store;

use crate::platform::ownership;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};
use streamkeeper::access::ownership as rule;
use streamkeeper::access::stewardship::may_claim;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::connect::finding::Finding;
use streamkeeper::connect::status::first_line;
use streamkeeper::connect::worker::{Row, WorkerAnswer, side_by_side};
use streamkeeper::connect::{Config, Context, Plugin, may_propose, secret, validate};
use streamkeeper::platform::credential::http_transport;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::connect::model::{
    ConnectClusterView, ConnectorDetail, ConnectorSummary, DraftCheck, StateChange, TaskView,
};
use streamkeeper_app::error::AppError;
use utoipa::ToSchema;

use crate::accounts::{audited, record_refusal, require};
use crate::clients::connect::{Auth, ConnectClient, ConnectError, ConnectSettings, Secret};
use crate::clients::egress::Outbound;
use crate::clients::kafka::settings::SecretRef;
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use store::{ConnectRow, ConnectSet, ConnectorRow};

/// The default interval of a Connect cluster's status pass.
pub const DEFAULT_INTERVAL_S: i32 = 30;
/// State changes shown on a connector's page.
const HISTORY: i64 = 50;

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

#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ValidateRequest {
    /// The config: an object of string properties, or `{"name", "config"}`
    /// as `POST /connectors` takes it.
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
    /// With `connect`: the Kafka cluster whose topics, registry and other
    /// connectors the rules look at.
    pub cluster_id: Option<i64>,
    /// The Connect cluster whose worker validates too.
    pub connect: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ValidateReport {
    pub plugin: Plugin,
    pub findings: Vec<Finding>,
    /// The worker's answer (no values echoed), when asked and it answered.
    pub worker: Option<WorkerAnswer>,
    /// Why the worker did not answer.
    pub worker_error: Option<String>,
    /// The rules and the worker per property, errors first.
    pub rows: Vec<Row>,
    /// No error from the rules or the worker.
    pub may_propose: bool,
    /// The config as it would be kept: inline secrets masked.
    pub config: BTreeMap<String, String>,
}

/// A Connect failure as the person asking sees it (upstream text for admins).
pub fn connect_error(who: &Principal, e: &ConnectError) -> AppError {
    let text = format!("Kafka Connect: {}", e.for_viewer(who.has(Role::Admin)));
    match e.status() {
        404 => AppError::NotFound(e.to_string()),
        422 => AppError::Invalid(text),
        _ => AppError::Unavailable(text),
    }
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

fn view(r: ConnectRow) -> ConnectClusterView {
    ConnectClusterView {
        cloud: r.url.contains("/connect/v1/environments/"),
        id: r.id,
        name: r.name,
        url: r.url,
        username_ref: r.username_ref,
        password_ref: r.password_ref,
        token_ref: r.token_ref,
        interval_s: r.interval_s,
        read_at: r.read_at,
        last_error: r.last_error,
        last_error_at: r.last_error_at,
        failed_passes: r.failed_passes,
        connectors: r.connectors,
        failing: r.failing,
    }
}

fn summary(r: &ConnectorRow) -> ConnectorSummary {
    ConnectorSummary {
        name: r.name.clone(),
        class: r.class.clone(),
        kind: r.kind.clone(),
        state: r.shown_state(),
        tasks_total: r.tasks,
        tasks_failed: r.tasks_failed,
        tasks_running: r.tasks_running,
        owner: r.owner.clone(),
        owner_source: r.owner_source.clone(),
        trouble: r.trouble <= 1,
        failure: r.failed_trace.as_deref().map(|t| first_line(t).to_owned()),
        seen_at: r.seen_at,
        gone_at: r.gone_at,
    }
}

/// A config someone sent (to validate, propose or edit): its shape, then
/// its size, before any rule reads it or the worker is asked. A value over
/// 100 KiB or a config over 1 MiB is a 422 naming the key and the limit.
pub fn sent_config(v: &serde_json::Value) -> Result<Config, AppError> {
    let config = Config::from_value(v).map_err(|e| AppError::Invalid(e.to_string()))?;
    config
        .within_limits()
        .map_err(|e| AppError::Invalid(crate::platform::limits::sentence(&e.to_string())))?;
    Ok(config)
}

/// A stored (masked) config back as a config.
fn stored_config(v: &serde_json::Value) -> Config {
    Config::from_value(v).unwrap_or_default()
}

#[derive(Clone)]
pub struct ConnectService {
    pool: PgPool,
    outbound: Outbound,
}

impl ConnectService {
    pub fn new(pool: PgPool, outbound: Outbound) -> Self {
        Self { pool, outbound }
    }

    async fn cluster(&self, cluster_id: i64) -> Result<crate::watch::store::ClusterRow, AppError> {
        crate::watch::store::by_id(&self.pool, cluster_id)
            .await?
            .ok_or_else(|| AppError::NotFound("That cluster".into()))
    }

    /// A Connect cluster of a watched Kafka cluster (a removed one's are gone
    /// with it).
    async fn connect(&self, cluster_id: i64, name: &str) -> Result<ConnectRow, AppError> {
        self.cluster(cluster_id).await?;
        store::by_name(&self.pool, cluster_id, name)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Connect cluster {name}")))
    }

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

    /// Sets or clears a connector's owner: admins anything; an owner may
    /// claim a connector for a team they belong to when it is unowned or
    /// their team's through a stream it reads or writes (`may_claim`). A
    /// claim refused, or on a connector or team that does not exist, is
    /// audited and changes nothing.
    pub async fn set_owner(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        name: &str,
        connector: &str,
        team: Option<&str>,
    ) -> Result<(), AppError> {
        require(who, Action::Read, "claim connectors")?;
        let connect = self.connect(cluster_id, name).await?;
        let target = format!("connector:{}/{connector}", connect.name);
        let team_id = match self.claim(who, connect.id, connector, team).await {
            Ok(t) => t,
            // A 403 the web layer audits with its reason; a claim on a
            // connector or team that does not exist is recorded here.
            Err(e @ AppError::Forbidden(_)) => return Err(e),
            Err(e) => {
                let detail =
                    json!({ "cluster_id": cluster_id, "team": team, "refused": e.to_string() });
                crate::accounts::record_refusal(
                    &self.pool,
                    who,
                    from,
                    "connector.owner.refused",
                    target,
                    detail,
                )
                .await;
                return Err(e);
            }
        };
        let mut tx = begin(&self.pool).await?;
        let at = crate::platform::clock::now();
        store::set_owner(&mut tx, connect.id, connector, team_id, at).await?;
        audited(
            &mut tx,
            who,
            from,
            "connector.owner",
            target,
            json!({ "cluster_id": cluster_id, "team": team }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    /// The team `who` may give the connector to, or why not.
    async fn claim(
        &self,
        who: &Principal,
        connect_id: i64,
        connector: &str,
        team: Option<&str>,
    ) -> Result<Option<i64>, AppError> {
        let current = ownership::connector(&self.pool, connect_id, connector)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Connector {connector}")))?;
        let team_id = match team {
            Some(t) => Some(
                store::team_id(&self.pool, t)
                    .await?
                    .ok_or_else(|| AppError::NotFound(format!("Team {t}")))?,
            ),
            None => None,
        };
        let mine = Facts::load(&self.pool, who).await?;
        if !may_claim(mine.steward(who), current.as_ref(), team_id) {
            return Err(AppError::Forbidden(format!(
                "change this connector's owner: it is {} (owners may claim unowned connectors, or their own team's, for their own team)",
                rule::describe(current.as_ref())
            )));
        }
        Ok(team_id)
    }

    /// The rules on a draft, and with a Connect cluster named, the worker's
    /// validate beside them and the cluster's facts in the rules' context.
    pub async fn validate(
        &self,
        who: &Principal,
        req: ValidateRequest,
    ) -> Result<ValidateReport, AppError> {
        require(who, Action::Read, "validate connector configs")?;
        self.validate_for(who.has(Role::Admin), req).await
    }

    /// "Change this connector": its running config as the worker answers
    /// it now, as a draft (inline secrets masked, to be given as `${…}`
    /// references before it can be proposed) with its findings.
    pub async fn import(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        connector: &str,
    ) -> Result<ValidateReport, AppError> {
        require(who, Action::Read, "draft connector changes")?;
        let (_, c) = self.client_of(cluster_id, name).await?;
        let running = c
            .config(connector)
            .await
            .map_err(|e| connect_error(who, &e))?;
        let config: Config = running.0.iter().collect();
        self.validate_for(
            who.has(Role::Admin),
            ValidateRequest {
                config: config.to_json(),
                cluster_id: Some(cluster_id),
                connect: Some(name.to_owned()),
            },
        )
        .await
    }

    /// A Connect cluster and a client for it, credentials resolved now; a
    /// cluster whose settings cannot make a client is unavailable.
    pub async fn client_of(
        &self,
        cluster_id: i64,
        name: &str,
    ) -> Result<(ConnectRow, ConnectClient), AppError> {
        let row = self.connect(cluster_id, name).await?;
        let c = client(&row, &self.outbound)
            .map_err(|e| AppError::Unavailable(format!("Kafka Connect {name}: {e}")))?;
        Ok((row, c))
    }

    /// The Kafka cluster's bootstrap servers and a known connector's
    /// owner team and topics (none when no pass has seen it).
    pub async fn facts_of(
        &self,
        cluster_id: i64,
        connect_id: i64,
        name: &str,
    ) -> Result<(String, Option<ConnectorRow>), AppError> {
        let cluster = self.cluster(cluster_id).await?;
        let row = store::connector(&self.pool, connect_id, name).await?;
        Ok((cluster.bootstrap, row))
    }

    /// [`ConnectService::validate`] with the worker's error worded for an
    /// admin (`admin`) or for everyone (what a review item keeps).
    pub async fn validate_for(
        &self,
        admin: bool,
        req: ValidateRequest,
    ) -> Result<ValidateReport, AppError> {
        let config = sent_config(&req.config)?;
        let plugin = config
            .plugin()
            .map_err(|e| AppError::Invalid(e.to_string()))?;
        let mut others = Vec::new();
        let mut topics = None;
        let mut registry = None;
        let mut bootstrap = None;
        let mut worker = None;
        let mut worker_error = None;
        if let Some(cluster_id) = req.cluster_id {
            let cluster = self.cluster(cluster_id).await?;
            bootstrap = Some(cluster.bootstrap.clone());
            let seen = crate::watch::store::topics(&self.pool, cluster_id).await?;
            if !seen.is_empty() {
                topics = Some(
                    seen.iter()
                        .map(|t| (t.name.clone(), u32::try_from(t.partitions).unwrap_or(0)))
                        .collect::<BTreeMap<_, _>>(),
                );
            }
            registry = crate::schemas::store::registry(&self.pool, cluster_id)
                .await?
                .map(|r| r.url);
            if let Some(name) = req.connect.as_deref() {
                let connect = self.connect(cluster_id, name).await?;
                others = store::current(&self.pool, connect.id)
                    .await?
                    .iter()
                    .map(|r| stored_config(&r.config))
                    .collect();
                match client(&connect, &self.outbound) {
                    Err(e) => worker_error = Some(e),
                    Ok(c) => {
                        let plain: BTreeMap<String, String> = config
                            .iter()
                            .map(|(k, v)| (k.to_owned(), v.to_owned()))
                            .collect();
                        match c.validate(plugin.class(), &plain).await {
                            Ok(a) => worker = Some(a),
                            Err(e) => {
                                worker_error = Some(e.for_viewer(admin));
                            }
                        }
                    }
                }
            }
        } else if req.connect.is_some() {
            return Err(AppError::Invalid(
                "Name the Kafka cluster (cluster_id) of the Connect cluster.".into(),
            ));
        }
        let password_keys: BTreeSet<String> = worker
            .as_ref()
            .map(WorkerAnswer::password_keys)
            .unwrap_or_default();
        let ctx = Context {
            connectors: &others,
            topics: topics.as_ref(),
            registry_url: registry.as_deref(),
            bootstrap_servers: bootstrap.as_deref(),
            brokers: None,
            password_keys: password_keys.clone(),
            secrets_file: None,
        };
        let findings = validate(&config, &ctx);
        let rows = side_by_side(&findings, worker.as_ref());
        let ok = may_propose(&findings) && worker.as_ref().is_none_or(|w| w.error_count == 0);
        Ok(ValidateReport {
            plugin,
            rows,
            may_propose: ok,
            worker,
            worker_error,
            config: secret::mask(&config, &password_keys)
                .iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            findings,
        })
    }
}

/// The clusters file's Connect entries, as watch hands them over.
#[async_trait::async_trait]
impl crate::watch::cluster_file::ConnectEntries for ConnectService {
    async fn apply(
        &self,
        who: &Principal,
        from: &str,
        entries: Vec<crate::watch::cluster_file::ConnectFileEntry>,
        dry_run: bool,
    ) -> Result<Vec<String>, AppError> {
        self.apply_file(who, from, entries, dry_run).await
    }
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Connect for ConnectService {
    async fn connect_clusters(
        &self,
        who: &Principal,
        cluster_id: i64,
    ) -> Result<Vec<ConnectClusterView>, AppError> {
        require(who, Action::Read, "read Connect clusters")?;
        self.cluster(cluster_id).await?;
        Ok(store::of_cluster(&self.pool, cluster_id)
            .await?
            .into_iter()
            .map(view)
            .collect())
    }

    async fn connectors(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        q: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<ConnectorSummary>, AppError> {
        require(who, Action::Read, "read connectors")?;
        let connect = self.connect(cluster_id, name).await?;
        let q = q.map(str::trim).filter(|q| !q.is_empty());
        let (rows, total) = store::page(
            &self.pool,
            connect.id,
            q,
            i64::from(page.per_page),
            page.offset(),
        )
        .await?;
        Ok(Page::new(
            rows.iter().map(summary).collect(),
            page,
            u64::try_from(total).unwrap_or(0),
        ))
    }

    async fn connector(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        connector: &str,
    ) -> Result<ConnectorDetail, AppError> {
        require(who, Action::Read, "read connectors")?;
        let connect = self.connect(cluster_id, name).await?;
        let row = store::connector(&self.pool, connect.id, connector)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Connector {connector}")))?;
        let tasks = store::tasks(&self.pool, &[row.id]).await?;
        let history = store::history(&self.pool, row.id, HISTORY).await?;
        let config = stored_config(&row.config);
        Ok(ConnectorDetail {
            connect: connect.name,
            summary: summary(&row),
            worker_id: row.worker_id.clone(),
            trace: row.trace.clone(),
            config: config
                .iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            config_hash: row.config_hash.clone(),
            topics: row.topics.clone(),
            tasks: tasks
                .into_iter()
                .map(|t| TaskView {
                    task: t.task,
                    state: t.state,
                    worker_id: t.worker_id,
                    trace: t.trace,
                })
                .collect(),
            history: history
                .into_iter()
                .map(|h| StateChange {
                    task: h.task,
                    state: h.state,
                    first_line: h.trace.as_deref().map(|t| first_line(t).to_owned()),
                    trace: h.trace,
                    at: h.at,
                })
                .collect(),
            read_at: connect.read_at,
        })
    }

    async fn check_draft(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        config: serde_json::Value,
    ) -> Result<DraftCheck, AppError> {
        let req = ValidateRequest {
            config,
            cluster_id: Some(cluster_id),
            connect: Some(name.to_owned()),
        };
        Ok(self.validate(who, req).await?.into())
    }

    async fn import_draft(
        &self,
        who: &Principal,
        cluster_id: i64,
        name: &str,
        connector: &str,
    ) -> Result<DraftCheck, AppError> {
        Ok(self.import(who, cluster_id, name, connector).await?.into())
    }
}

impl From<ValidateReport> for DraftCheck {
    fn from(r: ValidateReport) -> DraftCheck {
        DraftCheck {
            plugin: r.plugin,
            findings: r.findings,
            rows: r.rows,
            worker_errors: r.worker.as_ref().map(|w| w.error_count),
            worker_error: r.worker_error,
            may_propose: r.may_propose,
            config: r.config,
        }
    }
}
