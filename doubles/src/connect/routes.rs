//! The worker's resources (`ConnectorsResource`, `ConnectorPluginsResource`
//! and the root), served under both prefixes. Messages are Connect's.

use super::state::{State as Lifecycle, Store};
use super::validate::{self, OTHER_PLUGINS, PLUGINS};
use super::{ConnectHandle, Options};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub(super) struct Shared {
    options: Options,
    handle: ConnectHandle,
}

type Worker = State<Arc<Shared>>;
type Params = Path<HashMap<String, String>>;

/// Connect's error body; Confluent Cloud's under its prefix.
pub(super) fn error(cloud: bool, code: u16, message: String) -> Response {
    let body = if cloud {
        json!({"error": {"code": code, "message": message}})
    } else {
        json!({"error_code": code, "message": message})
    };
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// An error answer not yet rendered: small, so helpers can return it.
pub(super) struct Refusal {
    cloud: bool,
    code: u16,
    message: String,
}

impl Refusal {
    fn new(cloud: bool, code: u16, message: String) -> Self {
        Refusal {
            cloud,
            code,
            message,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        error(self.cloud, self.code, self.message)
    }
}

fn ok(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn empty(status: StatusCode) -> Response {
    status.into_response()
}

/// The request's prefix, checked: the Cloud prefix answers only for the
/// environment and cluster the double was given.
struct Ctx {
    cloud: bool,
    name: String,
}

impl Shared {
    fn ctx(&self, params: &HashMap<String, String>) -> Result<Ctx, Refusal> {
        let cloud = params.contains_key("env");
        if cloud
            && (params.get("env") != Some(&self.options.cloud.environment)
                || params.get("cluster") != Some(&self.options.cloud.cluster))
        {
            return Err(Refusal::new(
                true,
                404,
                "The requested environment or cluster was not found".into(),
            ));
        }
        Ok(Ctx {
            cloud,
            name: params.get("name").cloned().unwrap_or_default(),
        })
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.handle.store()
    }
}

fn api() -> Router<Arc<Shared>> {
    Router::new()
        .route("/connectors", get(list).post(create))
        .route("/connectors/{name}", get(info).delete(delete))
        .route(
            "/connectors/{name}/config",
            get(config).put(put_config).patch(patch_config),
        )
        .route("/connectors/{name}/status", get(status))
        .route("/connectors/{name}/tasks", get(tasks))
        .route("/connectors/{name}/tasks/{task}/status", get(task_status))
        .route(
            "/connectors/{name}/tasks/{task}/restart",
            post(restart_task),
        )
        .route("/connectors/{name}/restart", post(restart))
        .route("/connectors/{name}/pause", put(pause))
        .route("/connectors/{name}/resume", put(resume))
        .route("/connectors/{name}/stop", put(stop))
        .route("/connectors/{name}/topics", get(topics))
        .route("/connectors/{name}/topics/reset", put(reset_topics))
        .route(
            "/connectors/{name}/offsets",
            get(offsets).patch(alter_offsets).delete(reset_offsets),
        )
        .route("/connector-plugins", get(plugins))
        .route("/connector-plugins/{plugin}/config/validate", put(validate))
}

pub(super) fn router(options: Options, handle: ConnectHandle) -> Router {
    let shared = Arc::new(Shared { options, handle });
    Router::new()
        .route("/", get(root))
        .merge(api())
        .nest("/connect/v1/environments/{env}/clusters/{cluster}", api())
        .with_state(shared)
}

async fn root() -> Response {
    ok(
        StatusCode::OK,
        &json!({"version": "3.9.0", "commit": "a60e31147e6b01ee", "kafka_cluster_id": "MkU3OEVBNTcwNTJENDM2Qk"}),
    )
}

/// Query pairs, repeated keys kept (`expand=status&expand=info`); Cloud's
/// SDK sends `expand=info,status,id`, so commas split too.
fn pairs(query: Option<&str>) -> Vec<(String, String)> {
    query
        .unwrap_or("")
        .split('&')
        .filter_map(|p| p.split_once('=').or(Some((p, ""))))
        .filter(|(k, _)| !k.is_empty())
        .flat_map(|(k, v)| {
            v.split("%2C")
                .flat_map(|v| v.split(','))
                .map(|v| (k.to_owned(), v.to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn flag(query: &[(String, String)], name: &str) -> bool {
    query
        .iter()
        .any(|(k, v)| k == name && v.eq_ignore_ascii_case("true"))
}

/// A flat map of properties; Jackson turns scalars into strings and
/// refuses objects and arrays.
fn flat(value: &Value, cloud: bool) -> Result<BTreeMap<String, Option<String>>, Refusal> {
    let Value::Object(map) = value else {
        return Err(Refusal::new(
            cloud,
            500,
            "Cannot deserialize value of type `java.util.LinkedHashMap<java.lang.String,java.lang.String>` from non-object value".into(),
        ));
    };
    map.iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                Value::Bool(b) => Some(b.to_string()),
                Value::Number(n) => Some(n.to_string()),
                Value::Array(_) | Value::Object(_) => {
                    return Err(Refusal::new(
                        cloud,
                        500,
                        "Cannot deserialize value of type `java.lang.String` from Array or Object value".into(),
                    ));
                }
            };
            Ok((k.clone(), v))
        })
        .collect()
}

fn json_body(body: &Bytes, cloud: bool) -> Result<Value, Refusal> {
    serde_json::from_slice(body).map_err(|e| {
        Refusal::new(
            cloud,
            500,
            format!(
                "Unrecognized token: was expecting JSON (line {}, column {})",
                e.line(),
                e.column()
            ),
        )
    })
}

fn strings(map: BTreeMap<String, Option<String>>) -> BTreeMap<String, String> {
    map.into_iter().filter_map(|(k, v)| Some((k, v?))).collect()
}

/// Refuses a config that fails validation, as create and update do.
fn invalid(config: &BTreeMap<String, String>, cloud: bool) -> Option<Response> {
    let kind = config.get("connector.class").cloned().unwrap_or_default();
    match validate::validate(config) {
        Err(refused) => Some(error(cloud, 400, refused.message())),
        Ok(v) if v.errors.is_empty() => None,
        Ok(v) => Some(error(
            cloud,
            400,
            format!(
                "Connector configuration is invalid and contains the following {} error(s):\n{}\nYou can also find the above list of errors at the endpoint `/connector-plugins/{kind}/config/validate`",
                v.errors.len(),
                v.errors.join("\n")
            ),
        )),
    }
}

fn not_found(ctx: &Ctx) -> Response {
    error(ctx.cloud, 404, format!("Connector {} not found", ctx.name))
}

async fn list(State(w): Worker, Path(params): Params, RawQuery(q): RawQuery) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let q = pairs(q.as_deref());
    let expand: Vec<&str> = q
        .iter()
        .filter(|(k, _)| k == "expand")
        .map(|(_, v)| v.as_str())
        .collect();
    let mut store = w.store();
    store.settle();
    let (status, info) = (expand.contains(&"status"), expand.contains(&"info"));
    let id = ctx.cloud && expand.contains(&"id");
    // Unknown expand values are ignored (KIP-465): nothing asked for, names.
    if !status && !info && !id {
        let names: Vec<&String> = store.names().map(|(n, _)| n).collect();
        return ok(StatusCode::OK, &json!(names));
    }
    let mut out = serde_json::Map::new();
    for (name, c) in store.names() {
        let mut entry = serde_json::Map::new();
        if status {
            entry.insert("status".into(), c.status(name));
        }
        if info {
            entry.insert("info".into(), c.info(name));
        }
        if id {
            entry.insert(
                "id".into(),
                json!({"id": format!("lcc-{name}"), "id_type": "ID"}),
            );
        }
        out.insert(name.clone(), Value::Object(entry));
    }
    ok(StatusCode::OK, &Value::Object(out))
}

async fn create(State(w): Worker, Path(params): Params, body: Bytes) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let body = match json_body(&body, ctx.cloud) {
        Ok(b) => b,
        Err(r) => return r.into_response(),
    };
    let Some(name) = body.get("name").and_then(Value::as_str).map(str::to_owned) else {
        return error(
            ctx.cloud,
            400,
            "Connector name and config are required".into(),
        );
    };
    let mut config = match body.get("config").map(|c| flat(c, ctx.cloud)) {
        Some(Ok(c)) => strings(c),
        Some(Err(r)) => return r.into_response(),
        None => {
            return error(
                ctx.cloud,
                400,
                "Connector name and config are required".into(),
            );
        }
    };
    if let Some(inner) = config.get("name")
        && *inner != name
    {
        return error(
            ctx.cloud,
            400,
            format!(
                "Connector name configuration ({inner}) doesn't match connector name in the URL ({name})"
            ),
        );
    }
    config.insert("name".into(), name.clone());
    let initial = match body.get("initial_state").and_then(Value::as_str) {
        None => Lifecycle::Running,
        Some(s) => match Lifecycle::parse(s) {
            Some(s) => s,
            None => {
                return error(
                    ctx.cloud,
                    400,
                    format!("Invalid initial state {s}; must be one of RUNNING, PAUSED, STOPPED"),
                );
            }
        },
    };
    if w.store().get(&name).is_some() {
        return error(ctx.cloud, 409, format!("Connector {name} already exists"));
    }
    if let Some(refusal) = invalid(&config, ctx.cloud) {
        return refusal;
    }
    let mut store = w.store();
    store.upsert(&name, config, initial);
    let info = store
        .get(&name)
        .map(|c| c.info(&name))
        .unwrap_or(Value::Null);
    let mut response = ok(StatusCode::CREATED, &info);
    if let Ok(location) = format!("/connectors/{name}").parse() {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

async fn info(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    match w.store().get(&ctx.name) {
        Some(c) => ok(StatusCode::OK, &c.info(&ctx.name)),
        None => not_found(&ctx),
    }
}

async fn delete(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    if w.store().remove(&ctx.name) {
        empty(StatusCode::NO_CONTENT)
    } else {
        not_found(&ctx)
    }
}

async fn config(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    match w.store().get(&ctx.name) {
        Some(c) => ok(StatusCode::OK, &json!(c.config)),
        None => not_found(&ctx),
    }
}

fn write_config(w: &Shared, ctx: &Ctx, mut config: BTreeMap<String, String>) -> Response {
    if let Some(inner) = config.get("name")
        && *inner != ctx.name
    {
        return error(
            ctx.cloud,
            400,
            format!(
                "Connector name configuration ({inner}) doesn't match connector name in the URL ({})",
                ctx.name
            ),
        );
    }
    config.insert("name".into(), ctx.name.clone());
    if let Some(refusal) = invalid(&config, ctx.cloud) {
        return refusal;
    }
    let mut store = w.store();
    let created = store.upsert(&ctx.name, config, Lifecycle::Running);
    let info = store
        .get(&ctx.name)
        .map(|c| c.info(&ctx.name))
        .unwrap_or(Value::Null);
    ok(
        if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        },
        &info,
    )
}

async fn put_config(State(w): Worker, Path(params): Params, body: Bytes) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let config = match json_body(&body, ctx.cloud).and_then(|b| flat(&b, ctx.cloud)) {
        Ok(c) => strings(c),
        Err(r) => return r.into_response(),
    };
    write_config(&w, &ctx, config)
}

async fn patch_config(State(w): Worker, Path(params): Params, body: Bytes) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let patch = match json_body(&body, ctx.cloud).and_then(|b| flat(&b, ctx.cloud)) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let Some(mut config) = w.store().get(&ctx.name).map(|c| c.config.clone()) else {
        return not_found(&ctx);
    };
    // KIP-477: a null removes the key.
    for (k, v) in patch {
        match v {
            Some(v) => config.insert(k, v),
            None => config.remove(&k),
        };
    }
    match write_config(&w, &ctx, config) {
        r if r.status() == StatusCode::CREATED => {
            let (mut parts, body) = r.into_parts();
            parts.status = StatusCode::OK;
            Response::from_parts(parts, body)
        }
        r => r,
    }
}

async fn status(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let mut store = w.store();
    store.settle();
    match store.get(&ctx.name) {
        Some(c) => ok(StatusCode::OK, &c.status(&ctx.name)),
        None => error(
            ctx.cloud,
            404,
            format!("No status found for connector {}", ctx.name),
        ),
    }
}

async fn tasks(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    match w.store().get(&ctx.name) {
        Some(c) => {
            let tasks: Vec<Value> = (0..c.tasks.len())
                .map(|i| json!({"id": {"connector": ctx.name, "task": i}, "config": c.config}))
                .collect();
            ok(StatusCode::OK, &json!(tasks))
        }
        None => not_found(&ctx),
    }
}

fn task_id(params: &HashMap<String, String>) -> Option<usize> {
    params.get("task")?.parse().ok()
}

async fn task_status(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let mut store = w.store();
    store.settle();
    let id = task_id(&params);
    let found = store.get(&ctx.name).and_then(|c| {
        let i = id?;
        let status = c.status(&ctx.name);
        status["tasks"].get(i).cloned()
    });
    match found {
        Some(t) => ok(StatusCode::OK, &t),
        None => error(
            ctx.cloud,
            404,
            format!(
                "No status found for task {}-{}",
                ctx.name,
                params.get("task").map(String::as_str).unwrap_or("")
            ),
        ),
    }
}

async fn restart_task(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let id = task_id(&params);
    let mut store = w.store();
    let Some(c) = store.get_mut(&ctx.name) else {
        return not_found(&ctx);
    };
    match id.and_then(|i| c.tasks.get_mut(i)) {
        Some(t) => {
            t.state = Lifecycle::Restarting;
            t.trace = None;
            c.restarts += 1;
            empty(StatusCode::NO_CONTENT)
        }
        None => error(
            ctx.cloud,
            404,
            format!(
                "Unknown task: {}-{}",
                ctx.name,
                params.get("task").map(String::as_str).unwrap_or("")
            ),
        ),
    }
}

/// KIP-745: both flags false restarts the connector alone and answers 204;
/// otherwise 202 with the instances being restarted in RESTARTING.
async fn restart(State(w): Worker, Path(params): Params, RawQuery(q): RawQuery) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let q = pairs(q.as_deref());
    let (include_tasks, only_failed) = (flag(&q, "includeTasks"), flag(&q, "onlyFailed"));
    let mut store = w.store();
    let Some(c) = store.get_mut(&ctx.name) else {
        return error(ctx.cloud, 404, format!("Unknown connector: {}", ctx.name));
    };
    c.restarts += 1;
    if !include_tasks && !only_failed {
        c.connector.state = Lifecycle::Restarting;
        c.connector.trace = None;
        return empty(StatusCode::NO_CONTENT);
    }
    let pick = |s: Lifecycle| !only_failed || s == Lifecycle::Failed;
    if pick(c.connector.state) {
        c.connector.state = Lifecycle::Restarting;
        c.connector.trace = None;
    }
    if include_tasks {
        for t in &mut c.tasks {
            if pick(t.state) {
                t.state = Lifecycle::Restarting;
                t.trace = None;
            }
        }
    }
    ok(StatusCode::ACCEPTED, &c.status(&ctx.name))
}

fn lifecycle(
    w: &Shared,
    params: &HashMap<String, String>,
    to: Lifecycle,
    code: StatusCode,
) -> Response {
    let ctx = match w.ctx(params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    match w.store().get_mut(&ctx.name) {
        Some(c) => {
            c.set_state(to);
            empty(code)
        }
        None => error(ctx.cloud, 404, format!("Unknown connector {}", ctx.name)),
    }
}

async fn pause(State(w): Worker, Path(params): Params) -> Response {
    lifecycle(&w, &params, Lifecycle::Paused, StatusCode::ACCEPTED)
}

async fn resume(State(w): Worker, Path(params): Params) -> Response {
    lifecycle(&w, &params, Lifecycle::Running, StatusCode::ACCEPTED)
}

async fn stop(State(w): Worker, Path(params): Params) -> Response {
    lifecycle(&w, &params, Lifecycle::Stopped, StatusCode::NO_CONTENT)
}

async fn topics(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    match w.store().get(&ctx.name) {
        Some(c) => ok(
            StatusCode::OK,
            &json!({ctx.name.clone(): {"topics": c.topics}}),
        ),
        None => not_found(&ctx),
    }
}

async fn reset_topics(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    match w.store().get_mut(&ctx.name) {
        Some(c) => {
            c.topics.clear();
            empty(StatusCode::ACCEPTED)
        }
        None => not_found(&ctx),
    }
}

async fn offsets(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    match w.store().get(&ctx.name) {
        Some(c) => ok(StatusCode::OK, &json!({"offsets": c.offsets})),
        None => not_found(&ctx),
    }
}

fn must_be_stopped(ctx: &Ctx) -> Response {
    error(
        ctx.cloud,
        400,
        format!(
            "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/{}/stop' endpoint",
            ctx.name
        ),
    )
}

async fn alter_offsets(State(w): Worker, Path(params): Params, body: Bytes) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let body = match json_body(&body, ctx.cloud) {
        Ok(b) => b,
        Err(r) => return r.into_response(),
    };
    let Some(offsets) = body.get("offsets").and_then(Value::as_array).cloned() else {
        return error(
            ctx.cloud,
            400,
            "Offsets must be specified and should not be empty".into(),
        );
    };
    let mut store = w.store();
    let Some(c) = store.get_mut(&ctx.name) else {
        return not_found(&ctx);
    };
    if c.connector.state != Lifecycle::Stopped {
        return must_be_stopped(&ctx);
    }
    c.offsets = offsets;
    ok(
        StatusCode::OK,
        &json!({"message": "The offsets for this connector have been altered successfully"}),
    )
}

async fn reset_offsets(State(w): Worker, Path(params): Params) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let mut store = w.store();
    let Some(c) = store.get_mut(&ctx.name) else {
        return not_found(&ctx);
    };
    if c.connector.state != Lifecycle::Stopped {
        return must_be_stopped(&ctx);
    }
    c.offsets.clear();
    ok(
        StatusCode::OK,
        &json!({"message": "The offsets for this connector have been reset successfully"}),
    )
}

/// `connectorsOnly` defaults to true, as in `ConnectorPluginsResource`.
async fn plugins(State(w): Worker, Path(params): Params, RawQuery(q): RawQuery) -> Response {
    if let Err(r) = w.ctx(&params) {
        return r.into_response();
    }
    let q = pairs(q.as_deref());
    let connectors_only = !q
        .iter()
        .any(|(k, v)| k == "connectorsOnly" && v.eq_ignore_ascii_case("false"));
    let mut out: Vec<Value> = PLUGINS
        .iter()
        .map(|(class, kind, version, _)| json!({"class": class, "type": kind, "version": version}))
        .collect();
    if !connectors_only {
        out.extend(
            OTHER_PLUGINS
                .iter()
                .map(|(class, kind)| json!({"class": class, "type": kind, "version": "3.9.0"})),
        );
    }
    ok(StatusCode::OK, &json!(out))
}

async fn validate(State(w): Worker, Path(params): Params, body: Bytes) -> Response {
    let ctx = match w.ctx(&params) {
        Ok(c) => c,
        Err(r) => return r.into_response(),
    };
    let plugin = params.get("plugin").cloned().unwrap_or_default();
    let config = match json_body(&body, ctx.cloud).and_then(|b| flat(&b, ctx.cloud)) {
        Ok(c) => strings(c),
        Err(r) => return r.into_response(),
    };
    if let Some(class) = config.get("connector.class")
        && !class.trim().ends_with(plugin.as_str())
    {
        return error(
            ctx.cloud,
            400,
            format!("Included connector type {class} does not match request type {plugin}"),
        );
    }
    match validate::validate(&config) {
        Ok(v) => ok(StatusCode::OK, &v.infos),
        Err(refused) => error(ctx.cloud, 400, refused.message()),
    }
}
