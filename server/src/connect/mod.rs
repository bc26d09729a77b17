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
mod settings;
pub mod store;
mod validate;

pub use settings::{ConnectSpec, ConnectTest, client};
pub use validate::{ValidateReport, ValidateRequest};

use crate::platform::ownership;
use serde_json::json;
use sqlx::PgPool;
use streamkeeper::access::ownership as rule;
use streamkeeper::access::stewardship::may_claim;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::connect::Config;
use streamkeeper::connect::status::first_line;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper_app::connect::model::{
    ConnectClusterView, ConnectorDetail, ConnectorSummary, DraftCheck, StateChange, TaskView,
};
use streamkeeper_app::error::AppError;

use crate::accounts::require;
use crate::audit::audited;
use crate::clients::connect::{ConnectClient, ConnectError};
use crate::clients::egress::Outbound;
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use store::{ConnectRow, ConnectorRow};

/// The default interval of a Connect cluster's status pass.
pub const DEFAULT_INTERVAL_S: i32 = 30;
/// State changes shown on a connector's page.
const HISTORY: i64 = 50;

/// A Connect failure as the person asking sees it (upstream text for admins).
pub fn connect_error(who: &Principal, e: &ConnectError) -> AppError {
    let text = format!("Kafka Connect: {}", e.for_viewer(who.has(Role::Admin)));
    match e.status() {
        404 => AppError::NotFound(e.to_string()),
        422 => AppError::Invalid(text),
        _ => AppError::Unavailable(text),
    }
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

/// A connector as lists show it, with its owner by the ownership rule.
fn summary(r: &ConnectorRow, owner: Option<&rule::Owner>) -> ConnectorSummary {
    ConnectorSummary {
        name: r.name.clone(),
        class: r.class.clone(),
        kind: r.kind.clone(),
        state: r.shown_state(),
        tasks_total: r.tasks,
        tasks_failed: r.tasks_failed,
        tasks_running: r.tasks_running,
        owner: owner.map(|o| o.team.name.clone()),
        owner_source: owner.map(|o| if o.is_claimed() { "claimed" } else { "stream" }.to_string()),
        owner_reason: owner.map(|o| o.reason.to_string()),
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
                crate::audit::record_refusal(
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
        let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
        let owners = ownership::connectors(&self.pool, connect.id, &names).await?;
        Ok(Page::new(
            rows.iter()
                .map(|r| summary(r, owners.get(&r.name).and_then(Option::as_ref)))
                .collect(),
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
        let owner = ownership::connector(&self.pool, connect.id, connector)
            .await?
            .flatten();
        Ok(ConnectorDetail {
            connect: connect.name,
            summary: summary(&row, owner.as_ref()),
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
