//! Kafka Connect, over a worker's REST API (`reference/schema-registry-and-connect.md`
//! §4 and `reference/openlineage-and-connect.md` B2): connectors with
//! `expand=status&expand=info`, status with task traces, config, tasks,
//! topics, offsets, plugins, validate, restarts, pause/resume/stop and
//! PUT/PATCH config.
//!
//! [`ConnectClient`] turns every failure into a [`ConnectError`]: Connect's
//! `{"error_code","message"}` bodies, 404, 409 during a rebalance (retried
//! with a doubling backoff a bounded number of times), 5xx, timeouts, and
//! anything outside the contract (an HTML page, a 200 where 204 is due,
//! JSON of the wrong shape) is never a success. Requests go through
//! [`HttpClient`]: no redirects, only allowed addresses, bodies capped.
//!
//! **Confluent Cloud's managed connectors** answer the same shapes under
//! `https://api.confluent.cloud/connect/v1/environments/{env}/clusters/{lkc}`
//! (set that whole URL as the Connect cluster's URL) with a Cloud API key as
//! Basic credentials. The differences, from the Cloud SDK's API docs
//! (`confluentinc/ccloud-sdk-go-v2`, `connect/v1/docs/*ConnectV1Api.md`,
//! `ConnectV1ConnectorError.md`, `ConnectV1ConnectorExpansionId.md`):
//! - errors come as `{"error":{"code","message"}}` (or `{"code","message"}`
//!   on some 400/500s), which this client reads as well as Connect's;
//! - `expand` also takes `id` (`{"id","id_type"}`), sent comma-separated;
//! - there is no root resource (no version to read), and the SDK lists no
//!   `restart`, `stop`, `tasks/{id}/restart` or `topics` endpoints;
//! - offsets are altered with `POST …/offsets/request` and followed at
//!   `…/offsets/request/status`, not with PATCH/DELETE `…/offsets`.

use crate::clients::egress::{BodyError, HttpClient, read_capped};
pub use crate::clients::registry::{Auth, Secret};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;
use streamkeeper::connect::worker::{WorkerAnswer, WorkerAnswerError};
use streamkeeper::platform::egress::EgressPolicy;

/// Room for the listing of a few thousand connectors with their configs.
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// Where the Connect cluster is and how to reach it.
#[derive(Clone, Debug)]
pub struct ConnectSettings {
    /// A worker's base URL (`http://connect:8083`), or Cloud's prefix.
    pub url: String,
    pub auth: Auth,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub egress: EgressPolicy,
    pub max_body: usize,
    /// How many times a 409 (rebalance) is retried before giving up.
    pub conflict_retries: u32,
    /// The first wait after a 409; it doubles on each retry.
    pub conflict_backoff: Duration,
}

impl ConnectSettings {
    pub fn new(url: impl Into<String>) -> Self {
        ConnectSettings {
            url: url.into(),
            auth: Auth::None,
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            egress: EgressPolicy::STRICT,
            max_body: MAX_BODY,
            conflict_retries: 4,
            conflict_backoff: Duration::from_millis(250),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// 404: the connector, task or plugin does not exist.
    #[error("{message}")]
    NotFound { message: String },
    #[error("connector '{name}' exists already")]
    AlreadyExists { name: String },
    /// 409 after every retry: a rebalance that did not end in time.
    #[error(
        "the Connect cluster at {url} was rebalancing and refused the request {attempts} times (HTTP 409); try again shortly"
    )]
    Rebalancing { url: String, attempts: u32 },
    /// Another 4xx Connect explained: an invalid config, a name that does
    /// not match, offsets of a connector that is not stopped. Values in
    /// "Invalid value … for configuration" are cut out (they may be secrets).
    #[error("the Connect cluster refused the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    /// Validate refused to start: Connect's text echoes the whole config,
    /// secrets included, so it is not kept.
    #[error(
        "the Connect cluster refused to validate for plugin '{plugin}': connector.class is missing, is not installed there or does not match the plugin"
    )]
    ValidateRefused { plugin: String },
    #[error(
        "the Connect cluster at {url} did not accept the credentials (HTTP 401); check the user and password, the Cloud API key, or the token"
    )]
    Unauthorized { url: String },
    #[error("the credentials may not do this on the Connect cluster at {url} (HTTP 403){}", detail(message.as_deref()))]
    Forbidden {
        url: String,
        message: Option<String>,
    },
    #[error("the Connect cluster at {url} failed (HTTP {status}): {message}")]
    Server {
        url: String,
        status: u16,
        message: String,
        /// The start of a body that was not a Connect error (admins only).
        body: Option<String>,
    },
    #[error("the Connect cluster at {url} could not be reached: {reason}")]
    Unreachable { url: String, reason: String },
    #[error(
        "the Connect cluster at {url} answered HTTP {status} with something its API never sends: {detail}"
    )]
    UnexpectedResponse {
        url: String,
        status: u16,
        detail: String,
        /// What it said instead, clipped (admins only).
        body: Option<String>,
    },
    #[error(
        "the Connect cluster at {url} answered HTTP {status}, a redirect, which Streamkeeper does not follow: set the Connect URL to where the worker is"
    )]
    Redirected {
        url: String,
        status: u16,
        location: Option<String>,
    },
    #[error(
        "the Connect cluster at {url} answered with more than {limit} bytes; nothing of it was used"
    )]
    TooLarge { url: String, limit: usize },
    #[error("the Connect cluster at {url} may not be reached: {refusal}")]
    Egress {
        url: String,
        refusal: streamkeeper::platform::egress::EgressRefusal,
    },
    #[error("the Connect URL '{url}' cannot be used: {reason}")]
    BadUrl { url: String, reason: String },
}

fn detail(message: Option<&str>) -> String {
    message.map(|m| format!(": {m}")).unwrap_or_default()
}

impl ConnectError {
    /// What the other side sent that the error's text leaves out.
    pub fn upstream(&self) -> Option<String> {
        match self {
            ConnectError::Server { body, .. } | ConnectError::UnexpectedResponse { body, .. } => {
                body.clone()
            }
            ConnectError::Redirected { location, .. } => {
                location.as_ref().map(|l| format!("Location {l}"))
            }
            _ => None,
        }
    }

    /// As an HTTP status of Streamkeeper's own answer: the thing is not
    /// there (404), Connect judged the request and said no (422), or the
    /// Connect cluster could not be used (503).
    pub fn status(&self) -> u16 {
        match self {
            ConnectError::NotFound { .. } => 404,
            ConnectError::AlreadyExists { .. }
            | ConnectError::Rejected { .. }
            | ConnectError::ValidateRefused { .. } => 422,
            _ => 503,
        }
    }

    /// Everyone gets the text; admins also what the other side sent.
    pub fn for_viewer(&self, admin: bool) -> String {
        match self.upstream().filter(|_| admin) {
            Some(sent) => format!("{self} (it sent: {sent})"),
            None => self.to_string(),
        }
    }
}

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

/// An async client for one Connect cluster. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ConnectClient {
    http: HttpClient,
    base: Url,
    auth: Auth,
    timeout: Duration,
    max_body: usize,
    conflict_retries: u32,
    conflict_backoff: Duration,
}

struct Call<'a> {
    method: Method,
    path: Vec<&'a str>,
    query: Vec<(&'static str, String)>,
    body: Option<Vec<u8>>,
    /// A 409 that says "already exists" is an answer, not a rebalance.
    creating: Option<&'a str>,
}

impl<'a> Call<'a> {
    fn new(method: Method, path: &[&'a str]) -> Self {
        Call {
            method,
            path: path.to_vec(),
            query: Vec::new(),
            body: None,
            creating: None,
        }
    }

    fn body(mut self, body: &impl Serialize) -> Self {
        self.body = serde_json::to_vec(body).ok();
        self
    }

    fn flag(mut self, name: &'static str, on: bool) -> Self {
        if on {
            self.query.push((name, "true".into()));
        }
        self
    }
}

struct Answer {
    url: String,
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn unexpected(self, detail: &str) -> ConnectError {
        ConnectError::UnexpectedResponse {
            detail: detail.to_owned(),
            body: Some(snippet(&self.body)),
            url: self.url,
            status: self.status.as_u16(),
        }
    }

    /// Only the listed statuses are answers of this endpoint.
    fn expect(self, statuses: &[u16]) -> Result<Answer, ConnectError> {
        if statuses.contains(&self.status.as_u16()) {
            Ok(self)
        } else {
            let expected: Vec<String> = statuses.iter().map(u16::to_string).collect();
            let detail = format!("HTTP {} was expected", expected.join(" or "));
            Err(self.unexpected(&detail))
        }
    }

    fn is_json(&self) -> bool {
        let essence = self
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        essence == "application/json" || essence.ends_with("+json")
    }

    fn json<T: DeserializeOwned>(self) -> Result<T, ConnectError> {
        if !self.is_json() {
            return Err(self.unexpected("a JSON answer was expected"));
        }
        match serde_json::from_slice(&self.body) {
            Ok(v) => Ok(v),
            Err(e) => {
                let detail = format!("the body is not the expected JSON ({e})");
                Err(self.unexpected(&detail))
            }
        }
    }

    fn text(self) -> Result<String, ConnectError> {
        if !self.is_json() {
            return Err(self.unexpected("a JSON answer was expected"));
        }
        String::from_utf8(self.body.clone()).map_err(|_| self.unexpected("the body is not UTF-8"))
    }
}

/// The start of a body, for admins: enough to recognise an HTML page.
fn snippet(body: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None if text.is_empty() => "(empty)".into(),
        None => text.to_owned(),
    }
}

/// `ConfigException`'s "Invalid value <v> for configuration <k>" quotes
/// the value, which may be a secret: every such value is cut out.
fn scrub(message: &str) -> String {
    const START: &str = "Invalid value ";
    const END: &str = " for configuration";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(START) {
        let after = &rest[start + START.len()..];
        match after.find(END) {
            Some(end) => {
                out.push_str(&rest[..start]);
                out.push_str("Invalid value (hidden)");
                rest = &after[end..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// Connect's `{"error_code","message"}`, or Cloud's `{"error":{"code",
/// "message"}}` / `{"code","message"}`.
fn error_body(body: &[u8]) -> Option<(u16, String)> {
    #[derive(Deserialize)]
    struct Connect {
        error_code: u16,
        #[serde(default)]
        message: String,
    }
    #[derive(Deserialize)]
    struct Inner {
        code: u16,
        #[serde(default)]
        message: String,
    }
    #[derive(Deserialize)]
    struct Cloud {
        error: Inner,
    }
    if let Ok(c) = serde_json::from_slice::<Connect>(body) {
        return Some((c.error_code, c.message));
    }
    if let Ok(c) = serde_json::from_slice::<Cloud>(body) {
        return Some((c.error.code, c.error.message));
    }
    serde_json::from_slice::<Inner>(body)
        .ok()
        .map(|c| (c.code, c.message))
}

impl ConnectClient {
    pub fn new(settings: ConnectSettings) -> Result<Self, ConnectError> {
        let base =
            crate::clients::egress::base_url(&settings.url, "the Connect cluster's auth settings")
                .map_err(|b| ConnectError::BadUrl {
                    url: b.url,
                    reason: b.reason,
                })?;
        settings
            .egress
            .check_literal(base.host_str().unwrap_or(""))
            .map_err(|refusal| ConnectError::Egress {
                url: settings.url.clone(),
                refusal,
            })?;
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let builder = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(settings.timeout)
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("streamkeeper/", env!("CARGO_PKG_VERSION")));
        let http = HttpClient::new(settings.egress, builder).map_err(|e| ConnectError::BadUrl {
            url: settings.url.clone(),
            reason: format!("no HTTP client: {e}"),
        })?;
        Ok(ConnectClient {
            http,
            base,
            auth: settings.auth,
            timeout: settings.timeout,
            max_body: settings.max_body,
            conflict_retries: settings.conflict_retries,
            conflict_backoff: settings.conflict_backoff,
        })
    }

    /// Whether this is Confluent Cloud's managed-connector prefix.
    pub fn is_cloud(&self) -> bool {
        self.base.path().contains("/connect/v1/environments/")
    }

    fn url(&self, call: &Call<'_>) -> Result<Url, ConnectError> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ConnectError::BadUrl {
                url: self.base.to_string(),
                reason: "it cannot take a path".into(),
            })?
            .pop_if_empty()
            .extend(&call.path);
        if !call.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&call.query);
        }
        Ok(url)
    }

    /// Sends the call, retrying a rebalance's 409 with a doubling backoff.
    async fn send(&self, call: Call<'_>) -> Result<Answer, ConnectError> {
        let mut attempt = 0;
        loop {
            match self.send_once(&call).await {
                Err(ConnectError::Rebalancing { url, .. }) => {
                    if attempt >= self.conflict_retries {
                        return Err(ConnectError::Rebalancing {
                            url,
                            attempts: attempt + 1,
                        });
                    }
                    tokio::time::sleep(self.conflict_backoff * 2u32.saturating_pow(attempt)).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    #[tracing::instrument(skip_all, fields(method = %call.method))]
    async fn send_once(&self, call: &Call<'_>) -> Result<Answer, ConnectError> {
        let url = self.url(call)?;
        let shown = url.to_string();
        let mut request = self
            .http
            .request(call.method.clone(), url)
            .map_err(|refusal| ConnectError::Egress {
                url: shown.clone(),
                refusal,
            })?;
        if let Some(body) = &call.body {
            request = request
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(body.clone());
        }
        let response = self.auth.apply(request).send().await.map_err(|e| {
            match crate::clients::egress::refusal_of(&e) {
                Some(refusal) => ConnectError::Egress {
                    url: shown.clone(),
                    refusal,
                },
                None => self.unreachable(&shown, &e),
            }
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        if status.is_redirection() {
            return Err(ConnectError::Redirected {
                url: shown,
                status: status.as_u16(),
                location: headers
                    .get(reqwest::header::LOCATION)
                    .map(|l| snippet(l.as_bytes())),
            });
        }
        let body = read_capped(response, self.max_body)
            .await
            .map_err(|e| match e {
                BodyError::TooLarge { limit } => ConnectError::TooLarge {
                    url: shown.clone(),
                    limit,
                },
                BodyError::Read(e) => self.unreachable(&shown, &e),
            })?;
        if status.is_success() {
            return Ok(Answer {
                url: shown,
                status,
                headers,
                body,
            });
        }
        Err(self.failure(shown, status, &body, call))
    }

    fn failure(
        &self,
        url: String,
        status: StatusCode,
        body: &[u8],
        call: &Call<'_>,
    ) -> ConnectError {
        let parsed = error_body(body);
        let code = status.as_u16();
        match code {
            401 => return ConnectError::Unauthorized { url },
            403 => {
                return ConnectError::Forbidden {
                    url,
                    message: parsed.map(|(_, m)| scrub(&m)).filter(|m| !m.is_empty()),
                };
            }
            _ => {}
        }
        let Some((_, message)) = parsed else {
            return if status.is_server_error() {
                ConnectError::Server {
                    url,
                    status: code,
                    message: "it sent no Connect error".into(),
                    body: Some(snippet(body)),
                }
            } else {
                ConnectError::UnexpectedResponse {
                    url,
                    status: code,
                    detail: "no Connect error body".into(),
                    body: Some(snippet(body)),
                }
            };
        };
        let message = scrub(&message);
        match code {
            404 => ConnectError::NotFound { message },
            409 => match call.creating {
                Some(name) if message.contains("already exists") => ConnectError::AlreadyExists {
                    name: name.to_owned(),
                },
                _ => ConnectError::Rebalancing { url, attempts: 1 },
            },
            400 if call.path.last() == Some(&"validate") => ConnectError::ValidateRefused {
                plugin: call
                    .path
                    .get(1)
                    .map(|p| (*p).to_owned())
                    .unwrap_or_default(),
            },
            // "Connector config {…} contains no connector type" echoes the config.
            400 if message.starts_with("Connector config {") => ConnectError::Rejected {
                status: code,
                message: "the config names no connector.class".into(),
            },
            c if c >= 500 => ConnectError::Server {
                url,
                status: c,
                message,
                body: None,
            },
            c => ConnectError::Rejected { status: c, message },
        }
    }

    fn unreachable(&self, url: &str, e: &reqwest::Error) -> ConnectError {
        let reason = crate::clients::egress::unreachable_reason(e, self.timeout);
        ConnectError::Unreachable {
            url: url.to_owned(),
            reason,
        }
    }

    // The worker.

    /// `GET /`: the worker's version. Confluent Cloud has no such resource.
    pub async fn worker(&self) -> Result<WorkerInfo, ConnectError> {
        self.send(Call::new(Method::GET, &[]))
            .await?
            .expect(&[200])?
            .json()
    }

    /// `GET /connector-plugins[?connectorsOnly=false]`.
    pub async fn plugins(&self, connectors_only: bool) -> Result<Vec<PluginInfo>, ConnectError> {
        let mut call = Call::new(Method::GET, &["connector-plugins"]);
        if !connectors_only {
            call.query.push(("connectorsOnly", "false".into()));
        }
        self.send(call).await?.expect(&[200])?.json()
    }

    /// `PUT /connector-plugins/{p}/config/validate`: the worker's verdict,
    /// read by the product's parser (which keeps no echoed value). 200 even
    /// when invalid; `error_count` says.
    pub async fn validate(
        &self,
        plugin: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<WorkerAnswer, ConnectError> {
        let call = Call::new(
            Method::PUT,
            &["connector-plugins", plugin, "config", "validate"],
        )
        .body(config);
        let answer = self.send(call).await?.expect(&[200])?;
        let (url, status) = (answer.url.clone(), answer.status.as_u16());
        let text = answer.text()?;
        WorkerAnswer::parse(&text).map_err(|e| ConnectError::UnexpectedResponse {
            url,
            status,
            detail: match e {
                WorkerAnswerError::NotJson { .. } | WorkerAnswerError::Shape { .. } => {
                    e.to_string()
                }
            },
            // The body echoes the config, resolved secrets with it.
            body: None,
        })
    }

    // Connectors.

    /// `GET /connectors`: names.
    pub async fn connectors(&self) -> Result<Vec<String>, ConnectError> {
        self.send(Call::new(Method::GET, &["connectors"]))
            .await?
            .expect(&[200])?
            .json()
    }

    /// `GET /connectors?expand=status&expand=info` (either or both).
    pub async fn connectors_expanded(
        &self,
        status: bool,
        info: bool,
    ) -> Result<BTreeMap<String, Expanded>, ConnectError> {
        let mut call = Call::new(Method::GET, &["connectors"]);
        if status {
            call.query.push(("expand", "status".into()));
        }
        if info {
            call.query.push(("expand", "info".into()));
        }
        self.send(call).await?.expect(&[200])?.json()
    }

    /// `POST /connectors`: 201 with the new connector.
    pub async fn create(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
        initial: Option<InitialState>,
    ) -> Result<ConnectorInfo, ConnectError> {
        let mut body = serde_json::json!({"name": name, "config": config});
        if let Some(state) = initial {
            body["initial_state"] = Value::from(match state {
                InitialState::Running => "RUNNING",
                InitialState::Paused => "PAUSED",
                InitialState::Stopped => "STOPPED",
            });
        }
        let mut call = Call::new(Method::POST, &["connectors"]).body(&body);
        call.creating = Some(name);
        self.send(call).await?.expect(&[201])?.json()
    }

    /// `GET /connectors/{n}`.
    pub async fn connector(&self, name: &str) -> Result<ConnectorInfo, ConnectError> {
        self.send(Call::new(Method::GET, &["connectors", name]))
            .await?
            .expect(&[200])?
            .json()
    }

    /// `GET /connectors/{n}/config`, in clear.
    pub async fn config(&self, name: &str) -> Result<PlainConfig, ConnectError> {
        self.send(Call::new(Method::GET, &["connectors", name, "config"]))
            .await?
            .expect(&[200])?
            .json()
    }

    /// `PUT /connectors/{n}/config`: true when it created the connector
    /// (201), false when it updated it (200).
    pub async fn put_config(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<(bool, ConnectorInfo), ConnectError> {
        let call = Call::new(Method::PUT, &["connectors", name, "config"]).body(config);
        let answer = self.send(call).await?.expect(&[200, 201])?;
        let created = answer.status == StatusCode::CREATED;
        Ok((created, answer.json()?))
    }

    /// `PATCH /connectors/{n}/config`: `None` removes the key (KIP-477).
    pub async fn patch_config(
        &self,
        name: &str,
        patch: &BTreeMap<String, Option<String>>,
    ) -> Result<ConnectorInfo, ConnectError> {
        let call = Call::new(Method::PATCH, &["connectors", name, "config"]).body(patch);
        self.send(call).await?.expect(&[200])?.json()
    }

    /// `DELETE /connectors/{n}`.
    pub async fn delete(&self, name: &str) -> Result<(), ConnectError> {
        self.send(Call::new(Method::DELETE, &["connectors", name]))
            .await?
            .expect(&[204])
            .map(drop)
    }

    /// `GET /connectors/{n}/status`.
    pub async fn status(&self, name: &str) -> Result<ConnectorStatus, ConnectError> {
        self.send(Call::new(Method::GET, &["connectors", name, "status"]))
            .await?
            .expect(&[200])?
            .json()
    }

    /// `GET /connectors/{n}/tasks`, each task's config in clear.
    pub async fn tasks(&self, name: &str) -> Result<Vec<TaskInfo>, ConnectError> {
        self.send(Call::new(Method::GET, &["connectors", name, "tasks"]))
            .await?
            .expect(&[200])?
            .json()
    }

    /// `GET /connectors/{n}/tasks/{id}/status`.
    pub async fn task_status(&self, name: &str, task: u32) -> Result<TaskStatus, ConnectError> {
        let id = task.to_string();
        self.send(Call::new(
            Method::GET,
            &["connectors", name, "tasks", &id, "status"],
        ))
        .await?
        .expect(&[200])?
        .json()
    }

    /// `POST /connectors/{n}/restart?includeTasks=&onlyFailed=`.
    pub async fn restart(
        &self,
        name: &str,
        options: RestartOptions,
    ) -> Result<Restarted, ConnectError> {
        let call = Call::new(Method::POST, &["connectors", name, "restart"])
            .flag("includeTasks", options.include_tasks)
            .flag("onlyFailed", options.only_failed);
        let both_off = !options.include_tasks && !options.only_failed;
        let answer = self
            .send(call)
            .await?
            .expect(if both_off { &[204] } else { &[202] })?;
        if both_off {
            Ok(Restarted::Connector)
        } else {
            answer.json().map(Restarted::Accepted)
        }
    }

    /// `POST /connectors/{n}/tasks/{id}/restart`: 204.
    pub async fn restart_task(&self, name: &str, task: u32) -> Result<(), ConnectError> {
        let id = task.to_string();
        self.send(Call::new(
            Method::POST,
            &["connectors", name, "tasks", &id, "restart"],
        ))
        .await?
        .expect(&[204])
        .map(drop)
    }

    /// `PUT /connectors/{n}/pause`: 202.
    pub async fn pause(&self, name: &str) -> Result<(), ConnectError> {
        self.send(Call::new(Method::PUT, &["connectors", name, "pause"]))
            .await?
            .expect(&[202])
            .map(drop)
    }

    /// `PUT /connectors/{n}/resume`: 202.
    pub async fn resume(&self, name: &str) -> Result<(), ConnectError> {
        self.send(Call::new(Method::PUT, &["connectors", name, "resume"]))
            .await?
            .expect(&[202])
            .map(drop)
    }

    /// `PUT /connectors/{n}/stop`: 204, idempotent.
    pub async fn stop(&self, name: &str) -> Result<(), ConnectError> {
        self.send(Call::new(Method::PUT, &["connectors", name, "stop"]))
            .await?
            .expect(&[204])
            .map(drop)
    }

    /// `GET /connectors/{n}/topics`: the topics the worker saw it use.
    pub async fn topics(&self, name: &str) -> Result<Vec<String>, ConnectError> {
        #[derive(Deserialize)]
        struct Topics {
            topics: Vec<String>,
        }
        let answer = self
            .send(Call::new(Method::GET, &["connectors", name, "topics"]))
            .await?
            .expect(&[200])?;
        let url = answer.url.clone();
        let mut by_name: BTreeMap<String, Topics> = answer.json()?;
        by_name
            .remove(name)
            .map(|t| t.topics)
            .ok_or(ConnectError::UnexpectedResponse {
                url,
                status: 200,
                detail: format!("the answer is not about connector '{name}'"),
                body: None,
            })
    }

    /// `PUT /connectors/{n}/topics/reset`: 202.
    pub async fn reset_topics(&self, name: &str) -> Result<(), ConnectError> {
        self.send(Call::new(
            Method::PUT,
            &["connectors", name, "topics", "reset"],
        ))
        .await?
        .expect(&[202])
        .map(drop)
    }

    /// `GET /connectors/{n}/offsets`.
    pub async fn offsets(&self, name: &str) -> Result<Vec<Offset>, ConnectError> {
        #[derive(Deserialize)]
        struct Offsets {
            offsets: Vec<Offset>,
        }
        let o: Offsets = self
            .send(Call::new(Method::GET, &["connectors", name, "offsets"]))
            .await?
            .expect(&[200])?
            .json()?;
        Ok(o.offsets)
    }

    /// `PATCH /connectors/{n}/offsets` (the connector must be STOPPED).
    pub async fn alter_offsets(
        &self,
        name: &str,
        offsets: &[Offset],
    ) -> Result<String, ConnectError> {
        let call = Call::new(Method::PATCH, &["connectors", name, "offsets"])
            .body(&serde_json::json!({ "offsets": offsets }));
        self.message(call).await
    }

    /// `DELETE /connectors/{n}/offsets` (the connector must be STOPPED).
    pub async fn reset_offsets(&self, name: &str) -> Result<String, ConnectError> {
        self.message(Call::new(Method::DELETE, &["connectors", name, "offsets"]))
            .await
    }

    async fn message(&self, call: Call<'_>) -> Result<String, ConnectError> {
        #[derive(Deserialize)]
        struct Message {
            message: String,
        }
        let m: Message = self.send(call).await?.expect(&[200])?.json()?;
        Ok(m.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_config_exceptions_are_cut_out() {
        assert_eq!(
            scrub(
                "Invalid value hunter2 for configuration database.password: bad; Invalid value x y for configuration a"
            ),
            "Invalid value (hidden) for configuration database.password: bad; Invalid value (hidden) for configuration a"
        );
        assert_eq!(scrub("A value is required"), "A value is required");
        assert_eq!(
            scrub("Invalid value without end"),
            "Invalid value without end"
        );
    }

    #[test]
    fn all_three_error_shapes_are_read() {
        assert_eq!(
            error_body(br#"{"error_code":404,"message":"Connector a not found"}"#),
            Some((404, "Connector a not found".into()))
        );
        assert_eq!(
            error_body(br#"{"error":{"code":409,"message":"busy"}}"#),
            Some((409, "busy".into()))
        );
        assert_eq!(
            error_body(br#"{"code":400,"message":"bad"}"#),
            Some((400, "bad".into()))
        );
        assert_eq!(error_body(b"<html>"), None);
    }

    #[test]
    fn plain_configs_show_keys_only_in_debug() {
        let c = PlainConfig(BTreeMap::from([(
            "database.password".to_owned(),
            "hunter2".to_owned(),
        )]));
        let shown = format!("{c:?}");
        assert!(shown.contains("database.password") && !shown.contains("hunter2"));
    }
}
