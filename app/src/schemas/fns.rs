//! The schemas' server functions: a stream's schemas and the catalog, checking a
//! producer change, and the registries' subjects.

use crate::error::AppError;
use crate::schemas::model::{CompatibilityReport, StreamSchemas};
use leptos::prelude::*;
#[cfg(feature = "ssr")]
use streamkeeper::schemas::SchemaType;

#[server(prefix = "/fn", endpoint = "get_stream_schemas")]
pub async fn get_stream_schemas(id: i64, topic: String) -> Result<StreamSchemas, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.schemas.stream_schemas(&who, id, &topic).await
}

/// Records the stream's schema (`group` empty) or a group's reader schema
/// from text, pasted or loaded from a file, with its references as
/// name/text pairs (`ref_names[i]`, `ref_texts[i]`).
#[server(prefix = "/fn", endpoint = "record_schema")]
pub async fn record_schema(
    cluster_id: i64,
    topic: String,
    group: Option<String>,
    schema_type: String,
    schema: String,
    #[server(default)] ref_names: Vec<String>,
    #[server(default)] ref_texts: Vec<String>,
) -> Result<crate::schemas::model::CatalogSchema, AppError> {
    use crate::schemas::model::NewCatalogSchema;
    let new = NewCatalogSchema::from_text_form(&schema_type, schema, ref_names, ref_texts)?;
    crate::ui::flash::noted(record(cluster_id, topic, group, new).await, recorded).await
}

/// Pins the stream's schema (`group` empty) or a group's reader schema to
/// a registry subject's version (`latest` or blank for the newest).
#[server(prefix = "/fn", endpoint = "pin_schema")]
pub async fn pin_schema(
    cluster_id: i64,
    topic: String,
    group: Option<String>,
    subject: String,
    version: String,
) -> Result<crate::schemas::model::CatalogSchema, AppError> {
    use crate::schemas::model::NewCatalogSchema;
    let new = NewCatalogSchema::from_pin_form(&subject, &version)?;
    crate::ui::flash::noted(record(cluster_id, topic, group, new).await, recorded).await
}

#[cfg(feature = "ssr")]
async fn record(
    cluster_id: i64,
    topic: String,
    group: Option<String>,
    new: crate::schemas::model::NewCatalogSchema,
) -> Result<crate::schemas::model::CatalogSchema, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let group = group.filter(|g| !g.trim().is_empty());
    backend()?
        .schemas
        .record_schema(
            &who,
            &client_addr().await,
            cluster_id,
            &topic,
            group.as_deref(),
            new,
        )
        .await
}

/// The check page's form, as kept when its post fails.
pub const CHECK_FORM: &str = "check_schema";

/// Checks a proposed producer schema, then shows its report; or, when the
/// form's "Propose for review" button sent `propose`, puts the change in
/// review (checked there too, under `title`) and shows the review item.
/// Either way a redirect, so the form works without JavaScript too.
/// Answers with where it went. When it fails, what was pasted is kept for
/// the page it goes back to (`ui::flash::kept_on_error`).
#[server(prefix = "/fn", endpoint = "check_schema")]
pub async fn check_schema(
    cluster_id: i64,
    topic: String,
    schema_type: String,
    schema: String,
    #[server(default)] title: Option<String>,
    propose: Option<String>,
) -> Result<String, AppError> {
    use crate::ui::flash::{KeptForm, kept_on_error};
    let kept = KeptForm {
        form: CHECK_FORM.to_string(),
        fields: [
            ("schema_type", schema_type.clone()),
            ("schema", schema.clone()),
            ("title", title.clone().unwrap_or_default()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
    };
    let to = check_or_propose(cluster_id, topic, schema_type, schema, title, propose).await;
    let to = kept_on_error(to, || kept).await?;
    leptos_axum::redirect(&to);
    Ok(to)
}

#[cfg(feature = "ssr")]
async fn check_or_propose(
    cluster_id: i64,
    topic: String,
    schema_type: String,
    schema: String,
    title: Option<String>,
    propose: Option<String>,
) -> Result<String, AppError> {
    use crate::port::{backend, client_addr, principal};
    use crate::schemas::model::ProposedSchema;
    let who = principal().await?;
    let t = SchemaType::parse(&schema_type)
        .ok_or_else(|| AppError::Invalid(format!("Unknown schema type {schema_type:?}.")))?;
    if propose.is_some() {
        let new = crate::review::model::NewReviewItem {
            kind: streamkeeper::review::Kind::ProducerChange,
            cluster_id,
            topic,
            subject: None,
            schema_type: t,
            schema,
            references: Vec::new(),
            title: title.filter(|t| !t.trim().is_empty()),
        };
        let item = backend()?
            .reviews
            .propose(&who, &client_addr().await, new)
            .await?;
        let id = item.summary.id;
        crate::ui::flash::noted(Ok(format!("/review/{id}")), |_| {
            format!("Proposed for review as item {id}.")
        })
        .await
    } else {
        let proposed = ProposedSchema {
            schema_type: t,
            schema,
            references: Default::default(),
            subject_references: Vec::new(),
        };
        let report = backend()?
            .schemas
            .check(&who, cluster_id, &topic, proposed)
            .await?;
        Ok(format!("/schema-checks/{}", report.id))
    }
}

/// Proposes for review the schema a recorded check was made of (the check
/// report's form), then shows the new item.
#[server(prefix = "/fn", endpoint = "propose_checked")]
pub async fn propose_checked(
    check_id: i64,
    #[server(default)] title: Option<String>,
) -> Result<i64, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let title = title.filter(|t| !t.trim().is_empty());
    let item = backend()?
        .reviews
        .propose_check(&who, &client_addr().await, check_id, title)
        .await?;
    let id = item.summary.id;
    leptos_axum::redirect(&format!("/review/{id}"));
    crate::ui::flash::noted(Ok(id), |id| format!("Proposed for review as item {id}.")).await
}

/// "Notify owners" on a check's report: sends its downstream breakage to
/// the owner teams it reaches, then shows the report again with a note.
#[server(prefix = "/fn", endpoint = "notify_check_owners")]
pub async fn notify_check_owners(
    check_id: i64,
) -> Result<crate::schemas::model::OwnersNotice, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let sent = backend()?
        .schemas
        .notify_owners(&who, &client_addr().await, check_id)
        .await?;
    leptos_axum::redirect(&format!("/schema-checks/{check_id}"));
    crate::ui::flash::noted(Ok(sent), |n| {
        format!(
            "Sent to {} ({} channel message(s)).",
            n.teams.join(", "),
            n.messages
        )
    })
    .await
}

#[server(prefix = "/fn", endpoint = "get_schema_check")]
pub async fn get_schema_check(id: i64) -> Result<CompatibilityReport, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    backend()?
        .schemas
        .check_report(&who, &client_addr().await, id)
        .await
}

#[server(prefix = "/fn", endpoint = "list_registries")]
pub async fn list_registries() -> Result<Vec<crate::schemas::model::RegistryStatus>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.schemas.registries(&who).await
}

#[server(prefix = "/fn", endpoint = "get_registry_subjects")]
pub async fn get_registry_subjects(
    id: i64,
    q: Option<String>,
    sort: Option<String>,
    page: u32,
) -> Result<crate::schemas::model::RegistrySubjects, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    backend()?
        .schemas
        .registry_subjects(&who, id, q, sort, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_subject_diff")]
pub async fn get_subject_diff(
    id: i64,
    subject: String,
    left: Option<u32>,
    right: Option<u32>,
) -> Result<crate::schemas::model::SubjectDiff, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?
        .schemas
        .subject_diff(&who, id, &subject, left, right)
        .await
}

#[cfg(feature = "ssr")]
fn recorded(s: &crate::schemas::model::CatalogSchema) -> String {
    let whose = s
        .group
        .as_deref()
        .map_or("stream's".to_string(), |g| format!("{g} reader"));
    match (&s.subject, s.version) {
        (Some(subject), Some(v)) => format!("Pinned the {whose} schema to {subject} v{v}."),
        _ => format!("Recorded the {whose} schema."),
    }
}
