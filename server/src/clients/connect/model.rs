//! The Connect REST API's shapes as a worker answers them: states, statuses,
//! connector and task info, plugins, offsets, restart options.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// A connector's or task's state (`AbstractStatus.State`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum State {
    Unassigned,
    Running,
    Paused,
    Failed,
    Restarting,
    Stopped,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Unassigned => "UNASSIGNED",
            State::Running => "RUNNING",
            State::Paused => "PAUSED",
            State::Failed => "FAILED",
            State::Restarting => "RESTARTING",
            State::Stopped => "STOPPED",
        }
    }

    pub fn parse(s: &str) -> Option<State> {
        serde_json::from_value(Value::String(s.to_owned())).ok()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorType {
    Source,
    Sink,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct InstanceStatus {
    pub state: State,
    pub worker_id: String,
    /// Present only when FAILED.
    #[serde(default)]
    pub trace: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct TaskStatus {
    pub id: u32,
    pub state: State,
    pub worker_id: String,
    #[serde(default)]
    pub trace: Option<String>,
}

/// ConnectorStateInfo.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ConnectorStatus {
    pub name: String,
    pub connector: InstanceStatus,
    /// Empty for a STOPPED connector: its tasks vanish from status.
    pub tasks: Vec<TaskStatus>,
    #[serde(rename = "type")]
    pub kind: ConnectorType,
}

/// A config as the worker holds it: **in clear**, secrets and all
/// (`info.config` is not masked, KAFKA-5117). `Debug` shows keys only.
#[derive(Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(transparent)]
pub struct PlainConfig(pub BTreeMap<String, String>);

impl fmt::Debug for PlainConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct TaskId {
    pub connector: String,
    pub task: u32,
}

/// ConnectorInfo.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ConnectorInfo {
    pub name: String,
    pub config: PlainConfig,
    pub tasks: Vec<TaskId>,
    #[serde(rename = "type")]
    pub kind: ConnectorType,
}

/// One entry of `GET /connectors?expand=…`: only the parts asked for, and
/// a connector may lack one (just created or deleted mid-listing, B2).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Expanded {
    #[serde(default)]
    pub status: Option<ConnectorStatus>,
    #[serde(default)]
    pub info: Option<ConnectorInfo>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct TaskInfo {
    pub id: TaskId,
    pub config: PlainConfig,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct PluginInfo {
    pub class: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub version: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct Offset {
    pub partition: Value,
    pub offset: Value,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct WorkerInfo {
    pub version: String,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub kafka_cluster_id: Option<String>,
}

/// `POST /connectors/{n}/restart` flags (KIP-745).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestartOptions {
    pub include_tasks: bool,
    pub only_failed: bool,
}

/// What a restart answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restarted {
    /// 204: the connector alone (both flags false).
    Connector,
    /// 202: the instances being restarted, in RESTARTING.
    Accepted(ConnectorStatus),
}

/// The state a connector is created in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialState {
    Running,
    Paused,
    Stopped,
}
