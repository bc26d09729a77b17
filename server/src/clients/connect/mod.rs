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

mod error;
mod model;

pub use error::ConnectError;
use error::{error_body, scrub, snippet};
pub use model::*;

use crate::clients::egress::{BodyError, HttpClient, endpoint, media_type, read_capped};
pub use crate::clients::registry::{Auth, Secret};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
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
        let essence = media_type(&self.headers);
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
        endpoint(&self.base, &call.path, &call.query).ok_or_else(|| ConnectError::BadUrl {
            url: self.base.to_string(),
            reason: "it cannot take a path".into(),
        })
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
