//! The resources: requests in, [`Store`] calls, answers out in the
//! registry's JSON and content type.

use super::errors::ApiError;
use super::store::{
    Listing, Policy, Reference, RegistryMode, Schema, Store, Submission, Version, VersionSpec,
    parse_level,
};
use super::{CONTENT_TYPE_V1, Options};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use streamkeeper::schemas::{Mode, SchemaType};

pub(super) struct Shared {
    store: Mutex<Store>,
    options: Options,
}

type Registry = State<Arc<Shared>>;
type Params = Query<HashMap<String, String>>;

impl Shared {
    fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

pub(super) fn router(options: Options) -> Router {
    let shared = Arc::new(Shared {
        store: Mutex::new(Store::default()),
        options,
    });
    Router::new()
        .route("/subjects", get(subjects))
        .route("/subjects/{subject}", post(lookup).delete(delete_subject))
        .route("/subjects/{subject}/versions", get(versions).post(register))
        .route(
            "/subjects/{subject}/versions/{version}",
            get(version).delete(delete_version),
        )
        .route(
            "/subjects/{subject}/versions/{version}/schema",
            get(raw_schema),
        )
        .route(
            "/subjects/{subject}/versions/{version}/referencedby",
            get(referenced_by),
        )
        .route("/schemas/ids/{id}", get(schema_by_id))
        .route("/schemas/ids/{id}/versions", get(versions_by_id))
        .route("/schemas/ids/{id}/subjects", get(subjects_by_id))
        .route(
            "/config",
            get(global_config)
                .put(set_global_config)
                .delete(delete_global_config),
        )
        .route(
            "/config/{subject}",
            get(subject_config)
                .put(set_subject_config)
                .delete(delete_subject_config),
        )
        .route(
            "/compatibility/subjects/{subject}/versions",
            post(check_all),
        )
        .route(
            "/compatibility/subjects/{subject}/versions/{version}",
            post(check_version),
        )
        .route(
            "/mode",
            get(global_mode)
                .put(set_global_mode)
                .delete(delete_global_mode),
        )
        .route(
            "/mode/{subject}",
            get(subject_mode)
                .put(set_subject_mode)
                .delete(delete_subject_mode),
        )
        .fallback(|| async { ApiError::no_such_resource() })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .with_state(shared)
}

/// Java's boolean query parameters: `true` in any case, else false.
fn flag(params: &Params, name: &str) -> bool {
    params
        .get(name)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

fn reply(body: &impl Serialize) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => ([(header::CONTENT_TYPE, CONTENT_TYPE_V1)], bytes).into_response(),
        Err(e) => ApiError::new(50001, e.to_string()).into_response(),
    }
}

fn answer<T: Serialize>(result: Result<T, ApiError>) -> Response {
    match result {
        Ok(body) => reply(&body),
        Err(e) => e.into_response(),
    }
}

/// A request body in one of the content types the registry consumes;
/// Jackson's 400 for broken JSON and 422 for JSON of the wrong shape.
fn body<T: DeserializeOwned>(headers: &HeaderMap, bytes: &[u8]) -> Result<T, ApiError> {
    const CONSUMED: [&str; 4] = [
        "application/vnd.schemaregistry.v1+json",
        "application/vnd.schemaregistry+json",
        "application/json",
        "application/octet-stream",
    ];
    if let Some(given) = headers.get(header::CONTENT_TYPE) {
        let essence = given
            .to_str()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if !CONSUMED.contains(&essence.as_str()) {
            return Err(ApiError::unsupported_media_type());
        }
    }
    serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => ApiError::new(422, e.to_string()),
        _ => ApiError::new(400, e.to_string()),
    })
}

// Wire shapes.

#[derive(Deserialize)]
struct SchemaRequest {
    schema: Option<String>,
    #[serde(rename = "schemaType")]
    schema_type: Option<String>,
    references: Option<Vec<ReferenceWire>>,
}

#[derive(Serialize, Deserialize)]
struct ReferenceWire {
    name: String,
    subject: String,
    version: i64,
}

impl SchemaRequest {
    fn submission(self) -> Result<Submission, ApiError> {
        let schema_type = match &self.schema_type {
            None => SchemaType::Avro,
            Some(t) => SchemaType::parse(t)
                .ok_or_else(|| ApiError::invalid_schema(format!("Invalid schema type {t}")))?,
        };
        let references = self
            .references
            .unwrap_or_default()
            .into_iter()
            .map(|r| {
                let version = u32::try_from(r.version).map_err(|_| {
                    ApiError::invalid_schema(format!(
                        "Invalid reference {}: version {} is not a version",
                        r.name, r.version
                    ))
                })?;
                Ok(Reference {
                    name: r.name,
                    subject: r.subject,
                    version,
                })
            })
            .collect::<Result<_, ApiError>>()?;
        Ok(Submission {
            schema_type,
            text: self.schema.unwrap_or_default(),
            references,
        })
    }
}

fn references_out(schema: &Schema) -> Vec<ReferenceWire> {
    schema
        .references
        .iter()
        .map(|r| ReferenceWire {
            name: r.name.clone(),
            subject: r.subject.clone(),
            version: i64::from(r.version),
        })
        .collect()
}

/// A missing `schemaType` means Avro, and the double leaves it out there,
/// as registries before 8.x do.
fn type_out(schema: &Schema) -> Option<&'static str> {
    (schema.schema_type != SchemaType::Avro).then(|| schema.schema_type.as_str())
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Serialize)]
struct VersionOut<'a> {
    subject: &'a str,
    version: u32,
    id: u32,
    #[serde(rename = "schemaType", skip_serializing_if = "Option::is_none")]
    schema_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    references: Vec<ReferenceWire>,
    schema: &'a str,
    #[serde(skip_serializing_if = "is_false")]
    deleted: bool,
}

impl<'a> VersionOut<'a> {
    fn of(subject: &'a str, v: &'a Version) -> Self {
        VersionOut {
            subject,
            version: v.number,
            id: v.id,
            schema_type: type_out(&v.schema),
            references: references_out(&v.schema),
            schema: &v.schema.text,
            deleted: v.deleted,
        }
    }
}

#[derive(Serialize)]
struct SchemaOut<'a> {
    #[serde(rename = "schemaType", skip_serializing_if = "Option::is_none")]
    schema_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    references: Vec<ReferenceWire>,
    schema: &'a str,
}

#[derive(Serialize)]
struct SubjectVersionOut {
    subject: String,
    version: u32,
}

#[derive(Serialize)]
struct Registered {
    id: u32,
}

#[derive(Serialize)]
struct CompatibilityOut {
    is_compatible: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<Vec<String>>,
}

#[derive(Serialize)]
struct ConfigOut {
    #[serde(rename = "compatibilityLevel", skip_serializing_if = "Option::is_none")]
    compatibility_level: Option<&'static str>,
    #[serde(
        rename = "compatibilityPolicy",
        skip_serializing_if = "Option::is_none"
    )]
    compatibility_policy: Option<&'static str>,
}

impl ConfigOut {
    fn new((level, policy): (Option<Mode>, Option<Policy>)) -> Self {
        ConfigOut {
            compatibility_level: level.map(Mode::as_str),
            compatibility_policy: policy.map(Policy::as_str),
        }
    }
}

#[derive(Deserialize)]
struct ConfigRequest {
    compatibility: Option<String>,
    #[serde(rename = "compatibilityPolicy")]
    compatibility_policy: Option<String>,
}

#[derive(Serialize)]
struct ConfigEcho {
    #[serde(skip_serializing_if = "Option::is_none")]
    compatibility: Option<&'static str>,
    #[serde(
        rename = "compatibilityPolicy",
        skip_serializing_if = "Option::is_none"
    )]
    compatibility_policy: Option<&'static str>,
}

#[derive(Serialize, Deserialize)]
struct ModeWire {
    mode: String,
}

fn mode_out(mode: RegistryMode) -> ModeWire {
    ModeWire {
        mode: mode.as_str().into(),
    }
}

// Subjects and versions.

async fn subjects(State(r): Registry, params: Params) -> Response {
    let listing = Listing::from_flags(flag(&params, "deleted"), flag(&params, "deletedOnly"));
    let prefix = params.get("subjectPrefix").map(String::as_str);
    reply(&r.store().subjects(prefix, listing))
}

async fn versions(State(r): Registry, Path(subject): Path<String>, params: Params) -> Response {
    let listing = Listing::from_flags(flag(&params, "deleted"), flag(&params, "deletedOnly"));
    answer(r.store().versions(&subject, listing))
}

async fn version(
    State(r): Registry,
    Path((subject, version)): Path<(String, String)>,
    params: Params,
) -> Response {
    let store = r.store();
    answer(
        VersionSpec::parse(&version)
            .and_then(|spec| store.version(&subject, spec, flag(&params, "deleted")))
            .map(|v| VersionOut::of(&subject, v)),
    )
}

async fn raw_schema(
    State(r): Registry,
    Path((subject, version)): Path<(String, String)>,
    params: Params,
) -> Response {
    let store = r.store();
    match VersionSpec::parse(&version)
        .and_then(|spec| store.version(&subject, spec, flag(&params, "deleted")))
    {
        Ok(v) => (
            [(header::CONTENT_TYPE, CONTENT_TYPE_V1)],
            v.schema.text.clone(),
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

async fn referenced_by(
    State(r): Registry,
    Path((subject, version)): Path<(String, String)>,
    params: Params,
) -> Response {
    answer(VersionSpec::parse(&version).and_then(|spec| {
        r.store()
            .referenced_by(&subject, spec, flag(&params, "deleted"))
    }))
}

async fn register(
    State(r): Registry,
    Path(subject): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let code = r.options.incompatible_code.code();
    answer(
        body::<SchemaRequest>(&headers, &bytes)
            .and_then(SchemaRequest::submission)
            .and_then(|s| r.store().register(&subject, &s, code))
            .map(|id| Registered { id }),
    )
}

async fn lookup(
    State(r): Registry,
    Path(subject): Path<String>,
    params: Params,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let submission =
        match body::<SchemaRequest>(&headers, &bytes).and_then(SchemaRequest::submission) {
            Ok(s) => s,
            Err(e) => return e.into_response(),
        };
    let store = r.store();
    answer(
        store
            .lookup(&subject, &submission, flag(&params, "deleted"))
            .map(|v| VersionOut::of(&subject, v)),
    )
}

async fn delete_subject(
    State(r): Registry,
    Path(subject): Path<String>,
    params: Params,
) -> Response {
    answer(
        r.store()
            .delete_subject(&subject, flag(&params, "permanent")),
    )
}

async fn delete_version(
    State(r): Registry,
    Path((subject, version)): Path<(String, String)>,
    params: Params,
) -> Response {
    answer(VersionSpec::parse(&version).and_then(|spec| {
        r.store()
            .delete_version(&subject, spec, flag(&params, "permanent"))
    }))
}

// Schemas by ID.

/// A path ID that is no integer matches no resource, as in Jersey.
fn id(text: &str) -> Result<u32, ApiError> {
    text.parse().map_err(|_| ApiError::no_such_resource())
}

async fn schema_by_id(State(r): Registry, Path(raw): Path<String>) -> Response {
    answer(id(&raw).and_then(|id| {
        let schema = r
            .store()
            .schema_by_id(id)
            .ok_or_else(|| ApiError::schema_id_not_found(&raw))?;
        let out = SchemaOut {
            schema_type: type_out(&schema),
            references: references_out(&schema),
            schema: &schema.text,
        };
        serde_json::to_value(out).map_err(|e| ApiError::new(50001, e.to_string()))
    }))
}

async fn versions_by_id(State(r): Registry, Path(raw): Path<String>, params: Params) -> Response {
    answer(id(&raw).and_then(|id| {
        r.store()
            .versions_by_id(id, flag(&params, "deleted"))
            .map(|found| {
                found
                    .into_iter()
                    .map(|(subject, version)| SubjectVersionOut { subject, version })
                    .collect::<Vec<_>>()
            })
            .ok_or_else(ApiError::schema_not_found)
    }))
}

async fn subjects_by_id(State(r): Registry, Path(raw): Path<String>, params: Params) -> Response {
    answer(id(&raw).and_then(|id| {
        let found = r
            .store()
            .versions_by_id(id, flag(&params, "deleted"))
            .ok_or_else(ApiError::schema_not_found)?;
        let mut subjects: Vec<String> = Vec::new();
        for (subject, _) in found {
            if !subjects.contains(&subject) {
                subjects.push(subject);
            }
        }
        Ok(subjects)
    }))
}

// Compatibility.

fn check(
    r: &Shared,
    subject: &str,
    version: Option<&str>,
    params: &Params,
    headers: &HeaderMap,
    bytes: &[u8],
) -> Response {
    let verbose = flag(params, "verbose");
    answer(
        version
            .map(VersionSpec::parse)
            .transpose()
            .and_then(|spec| {
                let submission = body::<SchemaRequest>(headers, bytes)?.submission()?;
                r.store().check(subject, spec, &submission, verbose)
            })
            .map(|messages| CompatibilityOut {
                is_compatible: messages.is_empty(),
                messages: verbose.then_some(messages),
            }),
    )
}

async fn check_all(
    State(r): Registry,
    Path(subject): Path<String>,
    params: Params,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    check(&r, &subject, None, &params, &headers, &bytes)
}

async fn check_version(
    State(r): Registry,
    Path((subject, version)): Path<(String, String)>,
    params: Params,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    check(&r, &subject, Some(&version), &params, &headers, &bytes)
}

// Compatibility levels.

async fn global_config(State(r): Registry) -> Response {
    reply(&ConfigOut::new(r.store().global_config()))
}

async fn subject_config(
    State(r): Registry,
    Path(subject): Path<String>,
    params: Params,
) -> Response {
    answer(
        r.store()
            .subject_config(&subject, flag(&params, "defaultToGlobal"))
            .map(ConfigOut::new),
    )
}

fn set_config(r: &Shared, subject: Option<&str>, headers: &HeaderMap, bytes: &[u8]) -> Response {
    answer(body::<ConfigRequest>(headers, bytes).and_then(|request| {
        let level = request
            .compatibility
            .map(|text| parse_level(&text).ok_or_else(ApiError::invalid_compatibility_level))
            .transpose()?;
        // An unknown policy is refused like an unknown level (42203).
        let policy = request
            .compatibility_policy
            .map(|text| Policy::parse(&text).ok_or_else(ApiError::invalid_compatibility_level))
            .transpose()?;
        r.store().set_config(subject, level, policy);
        Ok(ConfigEcho {
            compatibility: level.map(Mode::as_str),
            compatibility_policy: policy.map(Policy::as_str),
        })
    }))
}

async fn set_global_config(State(r): Registry, headers: HeaderMap, bytes: Bytes) -> Response {
    set_config(&r, None, &headers, &bytes)
}

async fn set_subject_config(
    State(r): Registry,
    Path(subject): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    set_config(&r, Some(&subject), &headers, &bytes)
}

async fn delete_global_config(State(r): Registry) -> Response {
    answer(r.store().delete_config(None).map(ConfigOut::new))
}

async fn delete_subject_config(State(r): Registry, Path(subject): Path<String>) -> Response {
    answer(r.store().delete_config(Some(&subject)).map(ConfigOut::new))
}

// Modes.

async fn global_mode(State(r): Registry) -> Response {
    reply(&mode_out(r.store().global_mode()))
}

async fn subject_mode(State(r): Registry, Path(subject): Path<String>, params: Params) -> Response {
    answer(
        r.store()
            .subject_mode(&subject, flag(&params, "defaultToGlobal"))
            .map(mode_out),
    )
}

/// Echoes the request as given, as `ModeResource` does.
fn set_mode(
    r: &Shared,
    subject: Option<&str>,
    params: &Params,
    headers: &HeaderMap,
    bytes: &[u8],
) -> Response {
    answer(body::<ModeWire>(headers, bytes).and_then(|request| {
        let mode = RegistryMode::parse(&request.mode).ok_or_else(|| {
            ApiError::invalid_mode(
                "Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD.",
            )
        })?;
        if request.mode == "FORWARD" && subject.is_some() {
            return Err(ApiError::invalid_mode(
                "Forward mode only supported on global level",
            ));
        }
        r.store().set_mode(subject, mode, flag(params, "force"))?;
        Ok(request)
    }))
}

async fn set_global_mode(
    State(r): Registry,
    params: Params,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    set_mode(&r, None, &params, &headers, &bytes)
}

async fn set_subject_mode(
    State(r): Registry,
    Path(subject): Path<String>,
    params: Params,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    set_mode(&r, Some(&subject), &params, &headers, &bytes)
}

async fn delete_global_mode(State(r): Registry) -> Response {
    answer(r.store().delete_mode(None).map(mode_out))
}

async fn delete_subject_mode(State(r): Registry, Path(subject): Path<String>) -> Response {
    answer(r.store().delete_mode(Some(&subject)).map(mode_out))
}
