//! The Schema Registry client against the registry double: every endpoint,
//! every error code the contract names, and the failures of the network
//! and of what stands in front of a registry (401, 429, 5xx, hangs,
//! closed connections and ports, answers that are not the registry's).

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper::schemas::{Mode, SchemaType};
use streamkeeper_doubles::registry::{
    self, DoubleAuth, Fault, IncompatibleCode, Options, RegistryHandle,
};
use streamkeeper_server::clients::registry::{
    Auth, CheckOptions, Deleted, NewSchema, RegistryClient, RegistryError, RegistryMode,
    RegistrySettings, SchemaReference, Scope, Secret, SubjectVersion, VersionRef,
};

const V1: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}"#;
const V2_WITH_DEFAULT: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"int","default":0}]}"#;
const V2_NO_DEFAULT: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"int"}]}"#;
const ID_AS_INT: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"int"}]}"#;
const JSON_SCHEMA: &str = r#"{"type":"object","properties":{"id":{"type":"string"}}}"#;

const ORDERS: &str = "orders-value";

/// The double and the impostors run on loopback, which the tests allow.
fn settings(url: &str) -> RegistrySettings {
    RegistrySettings {
        egress: EgressPolicy::LOOPBACK,
        ..RegistrySettings::new(url)
    }
}

fn client(url: &str) -> RegistryClient {
    RegistryClient::new(settings(url)).expect("client")
}

async fn double() -> (RegistryClient, RegistryHandle) {
    let (url, handle) = registry::spawn().await;
    (client(&url), handle)
}

async fn double_with(options: Options) -> (String, RegistryHandle) {
    registry::spawn_with(options).await
}

fn avro(text: &str) -> NewSchema {
    NewSchema::avro(text)
}

/// A plain HTTP call, to see what the double itself answers.
async fn raw(method: reqwest::Method, url: String, body: Option<&str>) -> (u16, String, String) {
    let mut request = reqwest::Client::new().request(method, url);
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/vnd.schemaregistry.v1+json")
            .body(body.to_string());
    }
    let response = request.send().await.expect("the double answers");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (status, content_type, response.text().await.expect("a body"))
}

// Registration, IDs and versions.

#[tokio::test]
async fn ids_are_global_and_versions_count_from_one_per_subject() {
    let (c, _) = double().await;
    let id = c.register(ORDERS, &avro(V1), false).await.expect("v1");
    assert_eq!(
        c.register("audit-value", &avro(V1), false)
            .await
            .expect("same schema elsewhere"),
        id
    );
    // The same schema again, written differently: its ID, no new version.
    let spaced = V1.replace(',', " ,\n ");
    assert_eq!(
        c.register(ORDERS, &avro(&spaced), true)
            .await
            .expect("again"),
        id
    );
    assert_eq!(
        c.versions(ORDERS, Deleted::Hide).await.expect("versions"),
        vec![1]
    );
    let id2 = c
        .register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("v2");
    assert_ne!(id2, id);
    assert_eq!(
        c.versions(ORDERS, Deleted::Hide).await.expect("versions"),
        vec![1, 2]
    );
    assert_eq!(
        c.versions("audit-value", Deleted::Hide)
            .await
            .expect("audit"),
        vec![1]
    );
}

#[tokio::test]
async fn versions_by_number_and_latest_with_their_raw_schema() {
    let (c, _) = double().await;
    let id1 = c.register(ORDERS, &avro(V1), false).await.expect("v1");
    let id2 = c
        .register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("v2");
    let first = c
        .version(ORDERS, VersionRef::Number(1), false)
        .await
        .expect("v1");
    assert_eq!(
        (
            first.subject.as_str(),
            first.version,
            first.id,
            first.schema.as_str()
        ),
        (ORDERS, 1, id1, V1)
    );
    // The double leaves `schemaType` out for Avro, as older registries do.
    assert_eq!(first.schema_type, SchemaType::Avro);
    assert!(first.references.is_empty() && !first.deleted);
    let latest = c
        .version(ORDERS, VersionRef::Latest, false)
        .await
        .expect("latest");
    assert_eq!((latest.version, latest.id), (2, id2));
    assert_eq!(
        c.raw_schema(ORDERS, VersionRef::Latest, false)
            .await
            .expect("raw"),
        V2_WITH_DEFAULT
    );

    let json = NewSchema::new(SchemaType::Json, JSON_SCHEMA);
    c.register("events-value", &json, false)
        .await
        .expect("json schema");
    let v = c
        .version("events-value", 1.into(), false)
        .await
        .expect("json v1");
    assert_eq!(v.schema_type, SchemaType::Json);
    assert_eq!(v.schema, JSON_SCHEMA);
}

#[tokio::test]
async fn subjects_list_with_prefix_and_the_deleted_filters() {
    let (c, _) = double().await;
    for s in ["a-value", "b-value", "other"] {
        c.register(s, &avro(V1), false).await.expect(s);
    }
    c.delete_subject("b-value", false)
        .await
        .expect("soft delete");
    assert_eq!(
        c.subjects(None, Deleted::Hide).await.expect("live"),
        vec!["a-value", "other"]
    );
    assert_eq!(
        c.subjects(None, Deleted::Include).await.expect("all"),
        vec!["a-value", "b-value", "other"]
    );
    assert_eq!(
        c.subjects(None, Deleted::Only).await.expect("deleted"),
        vec!["b-value"]
    );
    assert_eq!(
        c.subjects(Some("b"), Deleted::Include)
            .await
            .expect("prefix"),
        vec!["b-value"]
    );
    assert!(
        c.subjects(Some("b"), Deleted::Hide)
            .await
            .expect("prefix")
            .is_empty()
    );
}

#[tokio::test]
async fn subjects_with_slashes_and_spaces_are_one_path_segment() {
    let (c, _) = double().await;
    let subject = "team/orders value%";
    let id = c
        .register(subject, &avro(V1), false)
        .await
        .expect("register");
    assert_eq!(
        c.versions(subject, Deleted::Hide).await.expect("versions"),
        vec![1]
    );
    assert_eq!(
        c.schema_subjects(id, false).await.expect("subjects"),
        vec![subject]
    );
}

#[tokio::test]
async fn missing_subjects_and_versions_are_typed_errors() {
    let (c, _) = double().await;
    let e = c
        .versions("nope", Deleted::Hide)
        .await
        .expect_err("no subject");
    assert!(
        matches!(&e, RegistryError::SubjectNotFound { subject } if subject == "nope"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "subject 'nope' does not exist in the schema registry"
    );
    let e = c
        .version("nope", VersionRef::Latest, false)
        .await
        .expect_err("no subject");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");

    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    let e = c.version(ORDERS, 9.into(), false).await.expect_err("no v9");
    assert!(
        matches!(
            &e,
            RegistryError::VersionNotFound {
                version: VersionRef::Number(9),
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "subject 'orders-value' has no version 9");
    let e = c
        .raw_schema(ORDERS, 9.into(), false)
        .await
        .expect_err("no v9");
    assert!(matches!(e, RegistryError::VersionNotFound { .. }), "{e:?}");
    let e = c.version(ORDERS, 0.into(), false).await.expect_err("v0");
    assert!(
        matches!(&e, RegistryError::InvalidVersion { message } if message.contains("'0' is not a valid version id")),
        "{e:?}"
    );
}

#[tokio::test]
async fn lookup_finds_the_version_or_says_why_not() {
    let (c, _) = double().await;
    let id = c.register(ORDERS, &avro(V1), false).await.expect("v1");
    c.register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("v2");
    let found = c
        .lookup(ORDERS, &avro(V1), false, false)
        .await
        .expect("found");
    assert_eq!(
        (found.subject.as_str(), found.version, found.id),
        (ORDERS, 1, id)
    );
    assert_eq!(found.schema, V1);

    let e = c
        .lookup(ORDERS, &avro(ID_AS_INT), false, false)
        .await
        .expect_err("not registered");
    assert!(
        matches!(&e, RegistryError::SchemaNotFound { subject: Some(s), id: None } if s == ORDERS),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "this schema is not registered under subject 'orders-value'"
    );
    let e = c
        .lookup("nope", &avro(V1), false, false)
        .await
        .expect_err("no subject");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");

    c.delete_version(ORDERS, 1.into(), false)
        .await
        .expect("soft delete");
    let e = c
        .lookup(ORDERS, &avro(V1), false, false)
        .await
        .expect_err("hidden");
    assert!(matches!(e, RegistryError::SchemaNotFound { .. }), "{e:?}");
    let found = c
        .lookup(ORDERS, &avro(V1), false, true)
        .await
        .expect("with deleted");
    assert_eq!(found.version, 1);

    let e = c
        .lookup(ORDERS, &avro("not json"), false, false)
        .await
        .expect_err("invalid");
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
}

#[tokio::test]
async fn schemas_by_id_with_their_versions_and_subjects() {
    let (c, _) = double().await;
    let id = c.register(ORDERS, &avro(V1), false).await.expect("orders");
    c.register("audit-value", &avro(V1), false)
        .await
        .expect("audit");
    let json_id = c
        .register(
            "events-value",
            &NewSchema::new(SchemaType::Json, JSON_SCHEMA),
            false,
        )
        .await
        .expect("json");

    let s = c.schema(id).await.expect("by id");
    assert_eq!((s.schema_type, s.schema.as_str()), (SchemaType::Avro, V1));
    assert_eq!(
        c.schema(json_id).await.expect("json").schema_type,
        SchemaType::Json
    );
    let both = vec![
        SubjectVersion {
            subject: "audit-value".into(),
            version: 1,
        },
        SubjectVersion {
            subject: ORDERS.into(),
            version: 1,
        },
    ];
    assert_eq!(c.schema_versions(id, false).await.expect("versions"), both);
    assert_eq!(
        c.schema_subjects(id, false).await.expect("subjects"),
        vec!["audit-value", ORDERS]
    );

    c.delete_version("audit-value", 1.into(), false)
        .await
        .expect("soft delete");
    assert_eq!(
        c.schema_subjects(id, false).await.expect("live"),
        vec![ORDERS]
    );
    assert_eq!(c.schema_versions(id, true).await.expect("all"), both);

    let e = c.schema(999).await.expect_err("no such id");
    assert!(
        matches!(e, RegistryError::SchemaNotFound { id: Some(999), .. }),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "no schema has ID 999 in the schema registry");
    let e = c.schema_versions(999, false).await.expect_err("versions");
    assert!(matches!(e, RegistryError::SchemaNotFound { .. }), "{e:?}");
    let e = c.schema_subjects(999, true).await.expect_err("subjects");
    assert!(matches!(e, RegistryError::SchemaNotFound { .. }), "{e:?}");
}

#[tokio::test]
async fn references_are_kept_and_protect_what_they_reference() {
    let (c, _) = double().await;
    let money = r#"{"type":"record","name":"Money","fields":[{"name":"cents","type":"long"}]}"#;
    c.register("money", &avro(money), false)
        .await
        .expect("money");
    let mut order =
        avro(r#"{"type":"record","name":"Priced","fields":[{"name":"total","type":"Money"}]}"#);
    let reference = SchemaReference {
        name: "Money".into(),
        subject: "money".into(),
        version: 1,
    };
    order.references.push(reference.clone());
    let id = c
        .register("priced-value", &order, false)
        .await
        .expect("priced");

    let v = c
        .version("priced-value", 1.into(), false)
        .await
        .expect("v1");
    assert_eq!(v.references, vec![reference]);
    assert_eq!(c.schema(id).await.expect("by id").references.len(), 1);
    assert_eq!(
        c.referenced_by("money", 1.into()).await.expect("refs"),
        vec![id]
    );
    assert!(
        c.referenced_by("priced-value", 1.into())
            .await
            .expect("none")
            .is_empty()
    );

    let e = c
        .delete_version("money", 1.into(), false)
        .await
        .expect_err("referenced");
    assert!(
        matches!(&e, RegistryError::ReferenceExists { message } if message.contains("subject=money,version=1")),
        "{e:?}"
    );
    let e = c
        .delete_subject("money", false)
        .await
        .expect_err("referenced");
    assert!(matches!(e, RegistryError::ReferenceExists { .. }), "{e:?}");

    let mut dangling = order.clone();
    dangling.references[0].version = 7;
    let e = c
        .register("other-value", &dangling, false)
        .await
        .expect_err("dangling");
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
}

// Deletes.

#[tokio::test]
async fn a_version_is_soft_deleted_before_it_is_deleted_for_good() {
    let (c, _) = double().await;
    let id1 = c.register(ORDERS, &avro(V1), false).await.expect("v1");
    c.register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("v2");

    let e = c
        .delete_version(ORDERS, 2.into(), true)
        .await
        .expect_err("not soft-deleted");
    assert!(
        matches!(e, RegistryError::VersionNotSoftDeleted { .. }),
        "{e:?}"
    );
    assert_eq!(
        c.delete_version(ORDERS, 2.into(), false)
            .await
            .expect("soft"),
        2
    );
    assert_eq!(
        c.versions(ORDERS, Deleted::Hide).await.expect("live"),
        vec![1]
    );
    assert_eq!(
        c.versions(ORDERS, Deleted::Include).await.expect("all"),
        vec![1, 2]
    );
    assert_eq!(
        c.versions(ORDERS, Deleted::Only).await.expect("deleted"),
        vec![2]
    );
    let e = c
        .delete_version(ORDERS, 2.into(), false)
        .await
        .expect_err("twice");
    assert!(
        matches!(e, RegistryError::VersionSoftDeleted { .. }),
        "{e:?}"
    );
    let e = c
        .version(ORDERS, 2.into(), false)
        .await
        .expect_err("hidden");
    assert!(matches!(e, RegistryError::VersionNotFound { .. }), "{e:?}");
    let hidden = c
        .version(ORDERS, 2.into(), true)
        .await
        .expect("with deleted");
    assert!(hidden.deleted);
    assert_eq!(
        c.raw_schema(ORDERS, 2.into(), true)
            .await
            .expect("raw deleted"),
        V2_WITH_DEFAULT
    );

    assert_eq!(
        c.delete_version(ORDERS, 2.into(), true)
            .await
            .expect("for good"),
        2
    );
    let e = c.version(ORDERS, 2.into(), true).await.expect_err("gone");
    assert!(matches!(e, RegistryError::VersionNotFound { .. }), "{e:?}");
    let e = c
        .delete_version(ORDERS, 2.into(), true)
        .await
        .expect_err("gone");
    assert!(matches!(e, RegistryError::VersionNotFound { .. }), "{e:?}");

    assert_eq!(
        c.delete_version(ORDERS, VersionRef::Latest, false)
            .await
            .expect("latest"),
        1
    );
    let e = c
        .versions(ORDERS, Deleted::Hide)
        .await
        .expect_err("no live version");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    // Version 1 is soft-deleted, so the next is 2, and the deleted copy
    // of the same schema is dropped.
    for _ in 0..2 {
        assert_eq!(
            c.register(ORDERS, &avro(V1), false).await.expect("again"),
            id1
        );
        assert_eq!(
            c.versions(ORDERS, Deleted::Include).await.expect("all"),
            vec![2]
        );
    }
}

#[tokio::test]
async fn a_subject_is_soft_deleted_before_it_is_deleted_for_good() {
    let (c, _) = double().await;
    let id1 = c.register(ORDERS, &avro(V1), false).await.expect("v1");
    c.register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("v2");

    let e = c
        .delete_subject(ORDERS, true)
        .await
        .expect_err("not soft-deleted");
    assert!(
        matches!(e, RegistryError::SubjectNotSoftDeleted { .. }),
        "{e:?}"
    );
    assert_eq!(
        c.delete_subject(ORDERS, false).await.expect("soft"),
        vec![1, 2]
    );
    let e = c.delete_subject(ORDERS, false).await.expect_err("twice");
    assert!(
        matches!(e, RegistryError::SubjectSoftDeleted { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("soft-deleted already"), "{e}");
    assert!(
        c.subjects(None, Deleted::Hide)
            .await
            .expect("live")
            .is_empty()
    );
    let e = c
        .version(ORDERS, VersionRef::Latest, false)
        .await
        .expect_err("hidden");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    assert_eq!(
        c.lookup(ORDERS, &avro(V2_WITH_DEFAULT), false, true)
            .await
            .expect("deleted")
            .version,
        2
    );

    assert_eq!(
        c.delete_subject(ORDERS, true).await.expect("for good"),
        vec![1, 2]
    );
    assert!(
        c.subjects(None, Deleted::Include)
            .await
            .expect("all")
            .is_empty()
    );
    let e = c.delete_subject(ORDERS, true).await.expect_err("gone");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    let e = c
        .lookup(ORDERS, &avro(V1), false, true)
        .await
        .expect_err("gone");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");

    // The subject starts again from version 1; the schema keeps its ID.
    assert_eq!(
        c.register(ORDERS, &avro(V1), false).await.expect("anew"),
        id1
    );
    assert_eq!(
        c.versions(ORDERS, Deleted::Include).await.expect("all"),
        vec![1]
    );
}

#[tokio::test]
async fn registering_after_a_soft_delete_continues_the_numbering() {
    let (c, _) = double().await;
    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    c.register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("v2");
    c.delete_subject(ORDERS, false).await.expect("soft");
    c.register(ORDERS, &avro(V1), false).await.expect("v3");
    c.register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("v4");
    assert_eq!(
        c.versions(ORDERS, Deleted::Hide).await.expect("live"),
        vec![3, 4]
    );
    let e = c
        .version(ORDERS, 1.into(), false)
        .await
        .expect_err("v1 deleted");
    assert!(matches!(e, RegistryError::VersionNotFound { .. }), "{e:?}");
}

#[tokio::test]
async fn deleting_what_does_not_exist() {
    let (c, _) = double().await;
    for permanent in [false, true] {
        let e = c
            .delete_subject("nope", permanent)
            .await
            .expect_err("no subject");
        assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    }
    let e = c
        .delete_version("nope", 1.into(), false)
        .await
        .expect_err("no subject");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    let e = c
        .delete_version(ORDERS, 7.into(), false)
        .await
        .expect_err("no v7");
    assert!(matches!(e, RegistryError::VersionNotFound { .. }), "{e:?}");
}

// Compatibility levels and modes.

#[tokio::test]
async fn config_global_and_per_subject() {
    let (c, _) = double().await;
    let level = |cfg: streamkeeper_server::clients::registry::Config| cfg.compatibility_level;
    assert_eq!(
        level(c.config(Scope::Global, false).await.expect("global")),
        Some(Mode::Backward)
    );
    let e = c
        .config(Scope::Subject(ORDERS), false)
        .await
        .expect_err("none of its own");
    assert!(
        matches!(&e, RegistryError::NoSubjectConfig { subject } if subject == ORDERS),
        "{e:?}"
    );
    assert_eq!(
        level(
            c.config(Scope::Subject(ORDERS), true)
                .await
                .expect("default")
        ),
        Some(Mode::Backward)
    );

    assert_eq!(
        c.set_config(Scope::Global, Mode::Full)
            .await
            .expect("global"),
        Mode::Full
    );
    assert_eq!(
        level(
            c.config(Scope::Subject(ORDERS), true)
                .await
                .expect("default")
        ),
        Some(Mode::Full)
    );
    // A subject's level may be set before the subject exists.
    assert_eq!(
        c.set_config(Scope::Subject(ORDERS), Mode::ForwardTransitive)
            .await
            .expect("subject"),
        Mode::ForwardTransitive
    );
    assert_eq!(
        level(c.config(Scope::Subject(ORDERS), false).await.expect("own")),
        Some(Mode::ForwardTransitive)
    );
    assert_eq!(
        level(
            c.delete_config(Scope::Subject(ORDERS))
                .await
                .expect("delete")
        ),
        Some(Mode::ForwardTransitive)
    );
    let e = c
        .config(Scope::Subject(ORDERS), false)
        .await
        .expect_err("gone");
    assert!(matches!(e, RegistryError::NoSubjectConfig { .. }), "{e:?}");
    let e = c
        .delete_config(Scope::Subject(ORDERS))
        .await
        .expect_err("nothing to delete");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");

    assert_eq!(
        level(c.delete_config(Scope::Global).await.expect("reset")),
        Some(Mode::Full)
    );
    assert_eq!(
        level(c.config(Scope::Global, false).await.expect("default")),
        Some(Mode::Backward)
    );
}

#[tokio::test]
async fn an_invalid_level_or_mode_is_422_with_its_code() {
    let (url, _) = double_with(Options::default()).await;
    let (status, content_type, body) = raw(
        reqwest::Method::PUT,
        format!("{url}/config"),
        Some(r#"{"compatibility":"SIDEWAYS"}"#),
    )
    .await;
    assert_eq!(
        (status, content_type.as_str()),
        (422, registry::CONTENT_TYPE_V1)
    );
    let body: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(body["error_code"], 42203);
    let (status, _, body) = raw(
        reqwest::Method::PUT,
        format!("{url}/mode"),
        Some(r#"{"mode":"SIDEWAYS"}"#),
    )
    .await;
    assert_eq!(status, 422);
    assert!(body.contains("\"error_code\":42204"), "{body}");
    // Levels are case-insensitive, as Java's `forName` uppercases.
    let (status, _, body) = raw(
        reqwest::Method::PUT,
        format!("{url}/config/s"),
        Some(r#"{"compatibility":"full"}"#),
    )
    .await;
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"compatibility":"FULL"}"#)
    );

    let c = client(&url);
    let e = c
        .set_mode(Scope::Subject(ORDERS), RegistryMode::Forward, false)
        .await
        .expect_err("forward is global only");
    assert!(
        matches!(&e, RegistryError::InvalidMode { message } if message == "Forward mode only supported on global level"),
        "{e:?}"
    );
}

#[tokio::test]
async fn modes_global_and_per_subject() {
    let (c, _) = double().await;
    assert_eq!(
        c.mode(Scope::Global, false).await.expect("global"),
        RegistryMode::ReadWrite
    );
    let e = c
        .mode(Scope::Subject(ORDERS), false)
        .await
        .expect_err("none of its own");
    assert!(matches!(e, RegistryError::NoSubjectMode { .. }), "{e:?}");
    assert_eq!(
        c.mode(Scope::Subject(ORDERS), true).await.expect("default"),
        RegistryMode::ReadWrite
    );

    c.set_mode(Scope::Global, RegistryMode::ReadOnly, false)
        .await
        .expect("global");
    c.set_mode(Scope::Subject(ORDERS), RegistryMode::ReadWrite, false)
        .await
        .expect("subject");
    assert_eq!(
        c.mode(Scope::Subject(ORDERS), false).await.expect("own"),
        RegistryMode::ReadWrite
    );
    c.register(ORDERS, &avro(V1), false)
        .await
        .expect("its own mode allows it");
    assert_eq!(
        c.delete_mode(Scope::Subject(ORDERS)).await.expect("delete"),
        RegistryMode::ReadWrite
    );
    assert_eq!(
        c.mode(Scope::Subject(ORDERS), true).await.expect("global"),
        RegistryMode::ReadOnly
    );
    let e = c
        .delete_mode(Scope::Subject(ORDERS))
        .await
        .expect_err("nothing to delete");
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");

    // READONLY_OVERRIDE beats a subject's own READWRITE.
    c.set_mode(Scope::Subject(ORDERS), RegistryMode::ReadWrite, false)
        .await
        .expect("subject");
    c.set_mode(Scope::Global, RegistryMode::ReadOnlyOverride, false)
        .await
        .expect("override");
    assert_eq!(
        c.mode(Scope::Subject(ORDERS), true)
            .await
            .expect("in scope"),
        RegistryMode::ReadOnlyOverride
    );
    assert_eq!(
        c.delete_mode(Scope::Global).await.expect("reset"),
        RegistryMode::ReadOnlyOverride
    );
    assert_eq!(
        c.mode(Scope::Global, false).await.expect("global"),
        RegistryMode::ReadWrite
    );

    // IMPORT needs an empty subject, unless forced.
    let e = c
        .set_mode(Scope::Subject(ORDERS), RegistryMode::Import, false)
        .await
        .expect_err("has schemas");
    assert!(
        matches!(&e, RegistryError::OperationNotPermitted { message } if message == "Cannot import since found existing subjects"),
        "{e:?}"
    );
    assert_eq!(
        c.set_mode(Scope::Subject(ORDERS), RegistryMode::Import, true)
            .await
            .expect("forced"),
        RegistryMode::Import
    );
    let e = c
        .register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect_err("import");
    assert!(
        matches!(&e, RegistryError::OperationNotPermitted { message } if message.contains("is not in read-write mode")),
        "{e:?}"
    );
}

#[tokio::test]
async fn read_only_mode_refuses_registration_and_deletes() {
    let (c, _) = double().await;
    let id = c.register(ORDERS, &avro(V1), false).await.expect("v1");
    c.set_mode(Scope::Subject(ORDERS), RegistryMode::ReadOnly, false)
        .await
        .expect("read-only");

    let e = c
        .register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect_err("read-only");
    assert!(
        matches!(&e, RegistryError::OperationNotPermitted { message } if message == "Subject orders-value in context  is in read-only mode"),
        "{e:?}"
    );
    assert!(e.to_string().contains("does not permit"), "{e}");
    // A schema the subject holds already is found, not registered.
    assert_eq!(
        c.register(ORDERS, &avro(V1), false)
            .await
            .expect("existing"),
        id
    );
    let e = c
        .delete_version(ORDERS, 1.into(), false)
        .await
        .expect_err("version");
    assert!(
        matches!(e, RegistryError::OperationNotPermitted { .. }),
        "{e:?}"
    );
    let e = c.delete_subject(ORDERS, false).await.expect_err("subject");
    assert!(
        matches!(e, RegistryError::OperationNotPermitted { .. }),
        "{e:?}"
    );
    // Another subject is not affected.
    c.register("audit-value", &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("other subject");
}

// Compatibility.

#[tokio::test]
async fn compatibility_endpoint_quirks() {
    let (url, _) = double_with(Options::default()).await;
    let c = client(&url);
    let verbose = CheckOptions {
        verbose: true,
        normalize: false,
    };

    // The latest version of a subject that does not exist: compatible.
    let r = c
        .check_compatibility(
            "nope",
            VersionRef::Latest,
            &avro(V1),
            CheckOptions::default(),
        )
        .await
        .expect("missing subject");
    assert!(r.is_compatible && r.messages.is_empty());
    let r = c
        .check_compatibility_all("nope", &avro(V1), verbose)
        .await
        .expect("missing subject");
    assert!(r.is_compatible && r.messages.is_empty());
    // A numbered version of a subject that does not exist: 40402.
    let e = c
        .check_compatibility("nope", 1.into(), &avro(V1), verbose)
        .await
        .expect_err("no version");
    assert!(matches!(e, RegistryError::VersionNotFound { .. }), "{e:?}");

    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    let r = c
        .check_compatibility(ORDERS, 1.into(), &avro(V2_WITH_DEFAULT), verbose)
        .await
        .expect("compatible");
    assert!(r.is_compatible);
    assert!(r.messages.is_empty(), "{:?}", r.messages);
    let e = c
        .check_compatibility(ORDERS, 5.into(), &avro(V1), verbose)
        .await
        .expect_err("no v5");
    assert!(matches!(e, RegistryError::VersionNotFound { .. }), "{e:?}");
    let e = c
        .check_compatibility(ORDERS, 0.into(), &avro(V1), verbose)
        .await
        .expect_err("v0");
    assert!(matches!(e, RegistryError::InvalidVersion { .. }), "{e:?}");
    let (status, _, body) = raw(
        reqwest::Method::POST,
        format!("{url}/compatibility/subjects/{ORDERS}/versions/earliest"),
        Some(&serde_json::json!({ "schema": V1 }).to_string()),
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        body.contains("\"error_code\":42202") && body.contains("'earliest'"),
        "{body}"
    );

    // An unparseable schema: 42201, or with verbose an incompatible answer.
    let e = c
        .check_compatibility(
            ORDERS,
            VersionRef::Latest,
            &avro("{not json"),
            CheckOptions::default(),
        )
        .await
        .expect_err("invalid");
    assert!(
        matches!(&e, RegistryError::InvalidSchema { message } if message.starts_with("Invalid schema")),
        "{e:?}"
    );
    let e = c
        .check_compatibility_all(ORDERS, &avro("{not json"), CheckOptions::default())
        .await
        .expect_err("invalid");
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
    let r = c
        .check_compatibility(ORDERS, VersionRef::Latest, &avro("{not json"), verbose)
        .await
        .expect("verbose");
    assert!(!r.is_compatible);
    assert_eq!(r.messages.len(), 1);
    assert!(
        r.messages[0].starts_with("Invalid schema"),
        "{:?}",
        r.messages
    );
}

#[tokio::test]
async fn a_schema_of_another_type_is_incompatible() {
    let (c, _) = double().await;
    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    let json = NewSchema::new(SchemaType::Json, JSON_SCHEMA);
    let r = c
        .check_compatibility_all(
            ORDERS,
            &json,
            CheckOptions {
                verbose: true,
                normalize: false,
            },
        )
        .await
        .expect("checked");
    assert!(!r.is_compatible);
    assert_eq!(
        r.messages,
        vec![
            "Incompatible because of different schema type".to_string(),
            "{validateFields: 'false', compatibility: 'BACKWARD'}".to_string(),
        ]
    );
    let e = c
        .register(ORDERS, &json, false)
        .await
        .expect_err("incompatible");
    assert!(
        matches!(
            e,
            RegistryError::Incompatible {
                error_code: 40901,
                ..
            }
        ),
        "{e:?}"
    );
    // NONE checks nothing.
    c.set_config(Scope::Subject(ORDERS), Mode::None)
        .await
        .expect("none");
    c.register(ORDERS, &json, false)
        .await
        .expect("registered under NONE");
}

/// Needs the Avro engine (`schema-avro`): the placeholder finds nothing
/// incompatible.
#[tokio::test]
async fn an_incompatible_schema_is_409_with_the_legacy_code() {
    let (url, _) = double_with(Options {
        incompatible_code: IncompatibleCode::Legacy,
        ..Options::default()
    })
    .await;
    let c = client(&url);
    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    let e = c
        .register(ORDERS, &avro(V2_NO_DEFAULT), false)
        .await
        .expect_err("incompatible");
    let RegistryError::Incompatible {
        subject,
        error_code,
        message,
    } = &e
    else {
        panic!("not Incompatible: {e:?}");
    };
    assert_eq!((subject.as_str(), *error_code), (ORDERS, 409));
    assert!(
        message.starts_with(
            "Schema being registered is incompatible with an earlier schema for subject \"orders-value\", details: [{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE'"
        ),
        "{message}"
    );
    assert!(e.to_string().starts_with(
        "the schema is incompatible with an earlier version of subject 'orders-value'"
    ));
    assert_eq!(
        c.versions(ORDERS, Deleted::Hide).await.expect("unchanged"),
        vec![1]
    );
}

/// Needs the Avro engine (`schema-avro`).
#[tokio::test]
async fn an_incompatible_schema_is_409_with_the_current_code() {
    let (url, _) = double_with(Options {
        incompatible_code: IncompatibleCode::Current,
        ..Options::default()
    })
    .await;
    let c = client(&url);
    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    let e = c
        .register(ORDERS, &avro(V2_NO_DEFAULT), false)
        .await
        .expect_err("incompatible");
    assert!(
        matches!(&e, RegistryError::Incompatible { error_code: 40901, message, .. } if message.contains("{oldSchemaVersion: 1}")),
        "{e:?}"
    );
    let (status, _, body) = raw(
        reqwest::Method::POST,
        format!("{url}/subjects/{ORDERS}/versions"),
        Some(&serde_json::json!({ "schema": V2_NO_DEFAULT }).to_string()),
    )
    .await;
    assert_eq!(status, 409);
    assert!(body.starts_with("{\"error_code\":40901,"), "{body}");
}

/// Needs the Avro engine (`schema-avro`).
#[tokio::test]
async fn verbose_messages_are_in_confluents_format() {
    let (c, _) = double().await;
    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    let expected = vec![
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'amount' at path '/fields/1' in the new schema has no default value and is missing in the old schema', additionalInfo:'amount'}".to_string(),
        "{oldSchemaVersion: 1}".to_string(),
        format!("{{oldSchema: '{V1}'}}"),
        "{validateFields: 'false', compatibility: 'BACKWARD'}".to_string(),
    ];
    let verbose = CheckOptions {
        verbose: true,
        normalize: false,
    };
    let one = c
        .check_compatibility(ORDERS, VersionRef::Latest, &avro(V2_NO_DEFAULT), verbose)
        .await
        .expect("checked");
    assert!(!one.is_compatible);
    assert_eq!(one.messages, expected);
    let all = c
        .check_compatibility_all(ORDERS, &avro(V2_NO_DEFAULT), verbose)
        .await
        .expect("checked");
    assert_eq!(all.messages, expected);
    let quiet = c
        .check_compatibility(
            ORDERS,
            1.into(),
            &avro(V2_NO_DEFAULT),
            CheckOptions::default(),
        )
        .await
        .expect("checked");
    assert!(!quiet.is_compatible && quiet.messages.is_empty());

    // FORWARD: the old schema reads the new one; the roles swap.
    c.set_config(Scope::Subject(ORDERS), Mode::Forward)
        .await
        .expect("forward");
    let forward = c
        .check_compatibility_all(ORDERS, &avro(ID_AS_INT), verbose)
        .await
        .expect("checked");
    assert!(!forward.is_compatible);
    assert!(
        forward.messages[0].starts_with("{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the old schema does not match with the new schema'"),
        "{:?}",
        forward.messages
    );
    assert_eq!(
        forward.messages.last().map(String::as_str),
        Some("{validateFields: 'false', compatibility: 'FORWARD'}")
    );
}

/// Needs the Avro engine (`schema-avro`).
#[tokio::test]
async fn compatibility_checks_skip_soft_deleted_versions() {
    let (c, _) = double().await;
    c.register(ORDERS, &avro(V1), false).await.expect("v1");
    c.set_config(Scope::Subject(ORDERS), Mode::None)
        .await
        .expect("none");
    c.register(ORDERS, &avro(ID_AS_INT), false)
        .await
        .expect("v2 under NONE");
    c.set_config(Scope::Subject(ORDERS), Mode::Backward)
        .await
        .expect("backward");
    let before = c
        .check_compatibility_all(ORDERS, &avro(V2_WITH_DEFAULT), CheckOptions::default())
        .await
        .expect("checked");
    assert!(
        !before.is_compatible,
        "v2 (id: int) cannot be read as a string"
    );
    c.delete_version(ORDERS, 2.into(), false)
        .await
        .expect("soft delete v2");
    let after = c
        .check_compatibility_all(ORDERS, &avro(V2_WITH_DEFAULT), CheckOptions::default())
        .await
        .expect("checked");
    assert!(after.is_compatible);
    c.register(ORDERS, &avro(V2_WITH_DEFAULT), false)
        .await
        .expect("registers now");
}

// Authentication, faults and answers that are not the registry's.

#[tokio::test]
async fn basic_auth_is_sent_and_wrong_credentials_are_unauthorized() {
    let (url, _) = double_with(Options {
        auth: DoubleAuth::Basic {
            user: "SR-KEY".into(),
            password: "sr-secret".into(),
        },
        ..Options::default()
    })
    .await;
    let with = |secret: &str| {
        let mut settings = settings(url.as_str());
        settings.auth = Auth::Basic {
            user: "SR-KEY".into(),
            secret: Secret::new(secret),
        };
        RegistryClient::new(settings).expect("client")
    };
    let e = client(&url)
        .subjects(None, Deleted::Hide)
        .await
        .expect_err("no credentials");
    assert!(matches!(e, RegistryError::Unauthorized { .. }), "{e:?}");
    let wrong = with("not-it");
    let e = wrong
        .subjects(None, Deleted::Hide)
        .await
        .expect_err("wrong secret");
    assert!(matches!(e, RegistryError::Unauthorized { .. }), "{e:?}");
    assert!(!e.to_string().contains("not-it") && !format!("{e:?}").contains("not-it"));
    assert!(!format!("{wrong:?}").contains("not-it"), "{wrong:?}");

    let right = with("sr-secret");
    right
        .register(ORDERS, &avro(V1), false)
        .await
        .expect("registered");
    assert_eq!(
        right.subjects(None, Deleted::Hide).await.expect("subjects"),
        vec![ORDERS]
    );
}

#[tokio::test]
async fn a_bearer_token_is_sent() {
    let (url, _) = double_with(Options {
        auth: DoubleAuth::Bearer("t0ken".into()),
        ..Options::default()
    })
    .await;
    let mut settings = settings(url.as_str());
    settings.auth = Auth::Bearer(Secret::new("t0ken"));
    let c = RegistryClient::new(settings).expect("client");
    assert!(
        c.subjects(None, Deleted::Hide)
            .await
            .expect("admitted")
            .is_empty()
    );
    let e = client(&url)
        .mode(Scope::Global, false)
        .await
        .expect_err("no token");
    assert!(matches!(e, RegistryError::Unauthorized { .. }), "{e:?}");
}

#[tokio::test]
async fn injected_401_429_and_500_are_errors_and_then_it_recovers() {
    let (c, faults) = double().await;
    faults.fail_next(1, Fault::Unauthorized);
    faults.fail_next(
        1,
        Fault::RateLimited {
            retry_after_secs: 7,
        },
    );
    faults.fail_next(2, Fault::ServerError);

    let e = c.register(ORDERS, &avro(V1), false).await.expect_err("401");
    assert!(matches!(e, RegistryError::Unauthorized { .. }), "{e:?}");
    let e = c.register(ORDERS, &avro(V1), false).await.expect_err("429");
    assert!(
        matches!(e, RegistryError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(7)),
        "{e:?}"
    );
    assert!(e.to_string().contains("retry in 7 s"), "{e}");
    let e = c.register(ORDERS, &avro(V1), false).await.expect_err("500");
    assert!(
        matches!(
            &e,
            RegistryError::Server {
                status: 500,
                error_code: Some(50001),
                ..
            }
        ),
        "{e:?}"
    );
    let e = c
        .subjects(None, Deleted::Hide)
        .await
        .expect_err("500 again");
    assert!(matches!(e, RegistryError::Server { .. }), "{e:?}");
    // Nothing was registered by the failed attempts.
    assert!(
        c.subjects(None, Deleted::Include)
            .await
            .expect("recovered")
            .is_empty()
    );
    c.register(ORDERS, &avro(V1), false)
        .await
        .expect("registers");
}

#[tokio::test]
async fn a_registry_that_never_answers_times_out() {
    let (url, faults) = double_with(Options::default()).await;
    let mut settings = settings(url.as_str());
    settings.timeout = Duration::from_millis(300);
    let c = RegistryClient::new(settings).expect("client");
    faults.fail_next(1, Fault::Hang);
    let e = c.subjects(None, Deleted::Hide).await.expect_err("hung");
    let RegistryError::Unreachable { url: named, reason } = &e else {
        panic!("not Unreachable: {e:?}");
    };
    assert!(named.starts_with(&url), "{named}");
    assert!(reason.contains("no answer within 0.3 s"), "{reason}");
    assert!(
        c.subjects(None, Deleted::Hide)
            .await
            .expect("next one")
            .is_empty()
    );
}

#[tokio::test]
async fn a_connection_closed_without_an_answer_is_unreachable() {
    let (c, faults) = double().await;
    faults.fail_next(1, Fault::Close);
    let e = c
        .register(ORDERS, &avro(V1), false)
        .await
        .expect_err("closed");
    assert!(matches!(e, RegistryError::Unreachable { .. }), "{e:?}");
    c.register(ORDERS, &avro(V1), false)
        .await
        .expect("next one");
}

#[tokio::test]
async fn a_closed_port_is_unreachable_and_named() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("port");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let url = format!("http://{addr}");
    let e = client(&url)
        .subjects(None, Deleted::Hide)
        .await
        .expect_err("closed port");
    let RegistryError::Unreachable { url: named, .. } = &e else {
        panic!("not Unreachable: {e:?}");
    };
    assert_eq!(named, &format!("{url}/subjects"));
    assert!(e.to_string().contains(&url), "{e}");
}

/// A server that answers every request with `status`, `content_type` and
/// `body`, and keeps the headers and query of what it was sent.
async fn impostor(
    status: StatusCode,
    content_type: &'static str,
    body: &'static str,
) -> (String, Arc<Mutex<Vec<(HeaderMap, Option<String>)>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let app = Router::new().fallback(move |headers: HeaderMap, uri: axum::http::Uri| {
        let kept = Arc::clone(&kept);
        async move {
            kept.lock()
                .expect("lock")
                .push((headers, uri.query().map(str::to_string)));
            (status, [("content-type", content_type)], body)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("port");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), seen)
}

#[tokio::test]
async fn the_client_speaks_the_registry_media_type() {
    let (url, seen) = impostor(
        StatusCode::OK,
        "application/vnd.schemaregistry.v1+json",
        r#"{"id":42,"version":3,"guid":"newer-servers-add-fields"}"#,
    )
    .await;
    let id = client(&url)
        .register(ORDERS, &avro(V1), true)
        .await
        .expect("registered");
    assert_eq!(id, 42);
    let seen = seen.lock().expect("lock");
    let (headers, query) = &seen[0];
    assert_eq!(headers["accept"], "application/vnd.schemaregistry.v1+json");
    assert_eq!(
        headers["content-type"],
        "application/vnd.schemaregistry.v1+json"
    );
    assert_eq!(query.as_deref(), Some("normalize=true"));
}

#[tokio::test]
async fn plain_json_answers_are_accepted() {
    let (url, _) = impostor(StatusCode::OK, "application/json", r#"["a","b"]"#).await;
    assert_eq!(
        client(&url)
            .subjects(None, Deleted::Hide)
            .await
            .expect("subjects"),
        vec!["a", "b"]
    );
}

#[tokio::test]
async fn an_html_page_is_never_a_success() {
    let (url, _) = impostor(StatusCode::OK, "text/html", "<html>Welcome</html>").await;
    let c = client(&url);
    let e = c
        .subjects(None, Deleted::Hide)
        .await
        .expect_err("html list");
    assert!(
        matches!(e, RegistryError::UnexpectedResponse { status: 200, .. }),
        "{e:?}"
    );
    let e = c
        .raw_schema(ORDERS, VersionRef::Latest, false)
        .await
        .expect_err("html schema");
    assert!(
        matches!(e, RegistryError::UnexpectedResponse { .. }),
        "{e:?}"
    );
    let e = c
        .register(ORDERS, &avro(V1), false)
        .await
        .expect_err("html register");
    assert!(
        matches!(e, RegistryError::UnexpectedResponse { .. }),
        "{e:?}"
    );
}

#[tokio::test]
async fn a_404_page_is_not_a_missing_subject() {
    let (url, _) = impostor(StatusCode::NOT_FOUND, "text/html", "<html>Not Found</html>").await;
    let e = client(&url)
        .versions(ORDERS, Deleted::Hide)
        .await
        .expect_err("404 page");
    assert!(
        matches!(e, RegistryError::UnexpectedResponse { status: 404, .. }),
        "{e:?}"
    );
    // What it sent is kept for admins, out of the text everyone sees.
    assert_eq!(e.upstream().as_deref(), Some("<html>Not Found</html>"));
    assert!(!e.to_string().contains("<html>"), "{e}");
}

#[tokio::test]
async fn a_bad_gateway_without_a_registry_body_is_a_server_error() {
    let (url, _) = impostor(StatusCode::BAD_GATEWAY, "text/plain", "upstream down").await;
    let e = client(&url)
        .subjects(None, Deleted::Hide)
        .await
        .expect_err("502");
    assert!(
        matches!(&e, RegistryError::Server { status: 502, error_code: None, body: Some(body), .. } if body == "upstream down"),
        "{e:?}"
    );
}

// The double's own wire format.

#[tokio::test]
async fn the_double_answers_in_the_registry_wire_format() {
    let (url, _) = double_with(Options::default()).await;
    let (status, content_type, body) = raw(
        reqwest::Method::GET,
        format!("{url}/subjects/missing/versions"),
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(content_type, "application/vnd.schemaregistry.v1+json");
    assert_eq!(
        body,
        r#"{"error_code":40401,"message":"Subject 'missing' not found."}"#
    );

    let (status, _, body) = raw(
        reqwest::Method::POST,
        format!("{url}/subjects/{ORDERS}/versions"),
        Some(&serde_json::json!({ "schema": V1 }).to_string()),
    )
    .await;
    assert_eq!((status, body.as_str()), (200, r#"{"id":1}"#));
    let (status, content_type, body) = raw(
        reqwest::Method::GET,
        format!("{url}/subjects/{ORDERS}/versions/1"),
        None,
    )
    .await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, registry::CONTENT_TYPE_V1)
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).expect("json"),
        serde_json::json!({"subject": ORDERS, "version": 1, "id": 1, "schema": V1})
    );

    let response = reqwest::Client::new()
        .post(format!("{url}/subjects/{ORDERS}/versions"))
        .header("Content-Type", "text/plain")
        .body("{}")
        .send()
        .await
        .expect("answer");
    assert_eq!(response.status().as_u16(), 415);
    let (status, _, body) = raw(reqwest::Method::PATCH, format!("{url}/config"), None).await;
    assert_eq!(
        (status, body.as_str()),
        (
            405,
            r#"{"error_code":405,"message":"HTTP 405 Method Not Allowed"}"#
        )
    );
    let (status, _, body) = raw(reqwest::Method::GET, format!("{url}/nowhere"), None).await;
    assert_eq!(
        (status, body.as_str()),
        (404, r#"{"error_code":404,"message":"HTTP 404 Not Found"}"#)
    );
}

// Where the client goes, and what it reads: no redirects, capped bodies,
// the egress rule.

/// Serves `app` on a free loopback port; its base URL.
async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("port");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_what_it_said_is_for_admins() {
    // Where the redirect points: it must never be asked.
    let (elsewhere, asked) = impostor(StatusCode::OK, "application/json", r#"["stolen"]"#).await;
    let to = format!("{elsewhere}/latest/meta-data");
    let url = serve(Router::new().fallback(move || {
        let to = to.clone();
        async move {
            (
                StatusCode::FOUND,
                [("location", to), ("content-type", "text/html".into())],
                "<html>moved; internal-token-123</html>",
            )
        }
    }))
    .await;
    let c = client(&url);
    let e = c
        .subjects(None, Deleted::Hide)
        .await
        .expect_err("a redirect is no answer");
    let RegistryError::Redirected {
        status, location, ..
    } = &e
    else {
        panic!("not Redirected: {e:?}");
    };
    assert_eq!(*status, 302);
    assert!(
        location
            .as_deref()
            .is_some_and(|l| l.contains("/latest/meta-data")),
        "{e:?}"
    );
    let e2 = c
        .register(ORDERS, &avro(V1), false)
        .await
        .expect_err("nor for a POST");
    assert!(matches!(e2, RegistryError::Redirected { .. }), "{e2:?}");
    assert!(asked.lock().expect("lock").is_empty(), "never followed");
    for shown in [e.to_string(), e.for_viewer(false)] {
        assert!(shown.contains("does not follow"), "{shown}");
        assert!(
            !shown.contains("internal-token-123") && !shown.contains("meta-data"),
            "a viewer sees the status only: {shown}"
        );
    }
    let admin = e.for_viewer(true);
    assert!(
        admin.contains("internal-token-123") && admin.contains("/latest/meta-data"),
        "{admin}"
    );
}

/// A server that answers every request with a 200 whose body never ends
/// (chunked, or under a `Content-Length` of a terabyte), and counts the
/// bytes of body it got out.
async fn flood(chunked: bool) -> (String, Arc<std::sync::atomic::AtomicU64>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("port");
    let addr = listener.local_addr().expect("addr");
    let sent = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&sent);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let mut request = [0_u8; 8192];
                let _ = socket.read(&mut request).await;
                let head = if chunked {
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
                } else {
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000000000\r\n\r\n"
                };
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let data = vec![b' '; 64 * 1024];
                loop {
                    let frame = if chunked {
                        [
                            format!("{:x}\r\n", data.len()).into_bytes(),
                            data.clone(),
                            b"\r\n".to_vec(),
                        ]
                        .concat()
                    } else {
                        data.clone()
                    };
                    if socket.write_all(&frame).await.is_err() {
                        return;
                    }
                    counter.fetch_add(data.len() as u64, Ordering::Relaxed);
                }
            });
        }
    });
    (format!("http://{addr}"), sent)
}

#[tokio::test]
async fn an_endless_answer_is_refused_without_being_read_whole() {
    for chunked in [true, false] {
        let (url, sent) = flood(chunked).await;
        let c = RegistryClient::new(RegistrySettings {
            max_body: 1024 * 1024,
            ..settings(&url)
        })
        .expect("client");
        let e = c
            .subjects(None, Deleted::Hide)
            .await
            .expect_err("too large");
        assert!(
            matches!(e, RegistryError::TooLarge { limit, .. } if limit == 1024 * 1024),
            "chunked {chunked}: {e:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        let out = sent.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            out < 64 * 1024 * 1024,
            "the client hung up early, {out} bytes out"
        );
    }
}

#[tokio::test]
async fn connections_go_only_where_the_egress_rule_allows() {
    use streamkeeper::platform::egress::AddressClass;
    let (url, _handle) = registry::spawn().await;
    let port = url.rsplit(':').next().expect("a port");
    // By name, the addresses it resolves to are checked when connecting.
    let by_name = format!("http://localhost:{port}");
    let strict = RegistryClient::new(RegistrySettings::new(by_name.as_str()))
        .expect("a name is checked when it resolves");
    let e = strict
        .subjects(None, Deleted::Hide)
        .await
        .expect_err("loopback is refused by default");
    assert!(
        matches!(&e, RegistryError::Egress { refusal, .. } if refusal.class == AddressClass::Loopback),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("STREAMKEEPER_EGRESS_ALLOW=loopback"),
        "{e}"
    );
    assert!(
        client(&by_name)
            .subjects(None, Deleted::Hide)
            .await
            .expect("allowed")
            .is_empty()
    );
    // A literal address is refused before any connection.
    let e = RegistryClient::new(RegistrySettings::new(url.as_str())).expect_err("127.0.0.1");
    assert!(matches!(e, RegistryError::Egress { .. }), "{e:?}");
    // Metadata addresses, whatever is allowed.
    let everything = EgressPolicy {
        loopback: true,
        private: true,
    };
    for metadata in ["http://169.254.169.254/", "http://[fd00:ec2::254]/"] {
        let e = RegistryClient::new(RegistrySettings {
            egress: everything,
            ..RegistrySettings::new(metadata)
        })
        .expect_err(metadata);
        assert!(
            matches!(&e, RegistryError::Egress { refusal, .. } if refusal.class == AddressClass::LinkLocal),
            "{e:?}"
        );
    }
}
