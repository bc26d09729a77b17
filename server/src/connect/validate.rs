//! A connector draft checked: the rules (`streamkeeper::connect`) with the
//! Kafka cluster's facts as their context, and with a Connect cluster named,
//! the worker's own validate beside them, property by property.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::connect::finding::Finding;
use streamkeeper::connect::worker::{Row, WorkerAnswer, side_by_side};
use streamkeeper::connect::{Config, Context, Plugin, may_propose, secret, validate};
use streamkeeper_app::connect::model::DraftCheck;
use streamkeeper_app::error::AppError;
use utoipa::ToSchema;

use super::store;
use super::{ConnectService, client, connect_error, sent_config, stored_config};
use crate::accounts::require;

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

impl ConnectService {
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
