//! What the connectors' screens and the REST API show: Connect clusters,
//! connectors with their tasks and state history. Secrets in configs are
//! masked before they reach these shapes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ConnectClusterView {
    pub id: i64,
    pub name: String,
    pub url: String,
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    pub token_ref: Option<String>,
    pub interval_s: i32,
    /// Confluent Cloud's managed connectors.
    pub cloud: bool,
    /// The last pass that read the worker; null before the first.
    pub read_at: Option<DateTime<Utc>>,
    /// Why the last pass could not read it (a gap: states are as of `read_at`).
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
    pub failed_passes: i32,
    pub connectors: i64,
    /// Connectors FAILED or with a FAILED task.
    pub failing: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ConnectorSummary {
    pub name: String,
    pub class: Option<String>,
    /// source, sink or unknown.
    pub kind: String,
    pub state: String,
    /// Named apart from the detail's `tasks` list, which it is flattened
    /// beside: one key twice would not read back.
    pub tasks_total: i64,
    pub tasks_failed: i64,
    pub tasks_running: i64,
    pub owner: Option<String>,
    /// `claimed`, or `stream` (the owner of a topic it reads or writes).
    pub owner_source: Option<String>,
    /// Why the owner owns it, as the ownership rule says ("by stream
    /// orders", "claimed on 2026-12-01"); `None` when unowned.
    #[serde(default)]
    pub owner_reason: Option<String>,
    /// FAILED, or something UNASSIGNED or RESTARTING: listed first.
    pub trouble: bool,
    /// The first line of the failure's trace.
    pub failure: Option<String>,
    pub seen_at: DateTime<Utc>,
    /// When a pass stopped listing it (deleted on the worker).
    pub gone_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TaskView {
    pub task: i32,
    pub state: String,
    pub worker_id: Option<String>,
    pub trace: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StateChange {
    /// Null: the connector itself.
    pub task: Option<i32>,
    pub state: String,
    pub first_line: Option<String>,
    pub trace: Option<String>,
    pub at: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ConnectorDetail {
    pub connect: String,
    #[serde(flatten)]
    pub summary: ConnectorSummary,
    pub worker_id: Option<String>,
    pub trace: Option<String>,
    /// Inline secrets as `********`; `${…}` references as written.
    pub config: BTreeMap<String, String>,
    pub config_hash: String,
    /// The Kafka topics it reads or writes, from its config.
    pub topics: Vec<String>,
    pub tasks: Vec<TaskView>,
    /// Newest first.
    pub history: Vec<StateChange>,
    /// States are as of this pass.
    pub read_at: Option<DateTime<Utc>>,
}

/// A draft checked: the rules of `streamkeeper::connect` beside the
/// worker's own validate answer, and the config as it may be kept (inline
/// secrets masked, `${…}` references as written).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DraftCheck {
    pub plugin: streamkeeper::connect::Plugin,
    pub findings: Vec<streamkeeper::connect::Finding>,
    /// The rules and the worker per property, errors first.
    pub rows: Vec<streamkeeper::connect::worker::Row>,
    /// How many errors the worker counted; `None`: it was not asked or did
    /// not answer (then `worker_error` says why).
    pub worker_errors: Option<u32>,
    pub worker_error: Option<String>,
    /// No error from the rules or the worker.
    pub may_propose: bool,
    /// Inline secrets as `********`.
    pub config: BTreeMap<String, String>,
}

/// The draft form checked as it is typed: whether it may be proposed, and
/// its check (findings and the config as kept) as the form shows it, drawn
/// by the server, so the draft's island draws none of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveCheck {
    pub may_propose: bool,
    pub html: String,
}

/// What a connector review item shows of the connector once applied: its
/// state from the first status pass after the apply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RunAfterApply {
    /// RUNNING, FAILED, …; `None` until a status pass has read the worker
    /// since the apply, or when that pass did not list the connector.
    pub state: Option<String>,
    /// Its tasks that FAILED, by that pass.
    pub tasks_failed: i64,
    /// The first line of the trace when it or a task FAILED.
    pub failure: Option<String>,
    /// The pass the state is from.
    pub read_at: Option<DateTime<Utc>>,
    /// The status pass's interval, to say when the answer comes.
    pub interval_s: i32,
}
