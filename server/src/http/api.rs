//! The REST API under `/api/v1`, for machines (bearer tokens) and scripts,
//! described by the OpenAPI document at `/api/v1/openapi.json`.

use axum::routing::get;
use axum::{Json, Router};
use std::sync::Arc;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;

use crate::accounts::api as accounts;
use crate::audit::api as audit;
use crate::connect::api as connect;
use crate::flags::api as flags;
use crate::http::AppState;
use crate::lineage::api as lineage;
use crate::notify::api as notify;
use crate::pilot::api as pilot;
use crate::platform::rest::{ApiError, ErrorBody, ErrorDetail};
use crate::platform::routine::api as routines;
use crate::review::api as review;
use crate::schemas::api as schemas;
use crate::watch::api as clusters;

#[derive(OpenApi)]
#[openapi(
    info(title = "Streamkeeper API", description = "Read-only watch over Kafka streams, and the changes named approvers sign off."),
    components(schemas(ErrorBody, ErrorDetail)),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// Unknown API paths answer a JSON 404, not the HTML page.
async fn not_found() -> ApiError {
    ApiError(streamkeeper_app::error::AppError::NotFound(
        "That API route".into(),
    ))
}

/// Every feature's routes, each with its OpenAPI paths (relative to
/// `/api/v1`); a feature adds its own in its `api.rs`, not here.
fn features() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(accounts::routes())
        .merge(audit::routes())
        .merge(clusters::routes())
        .merge(schemas::routes())
        .merge(connect::routes())
        .merge(flags::routes())
        .merge(notify::routes())
        .merge(review::routes())
        .merge(routines::routes())
        .merge(lineage::routes())
        .merge(pilot::routes())
}

/// The OpenAPI document: the API's info and security, and every feature's
/// paths under `/api/v1`.
pub fn doc() -> utoipa::openapi::OpenApi {
    split().1
}

fn split() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (routes, mut doc) = features().split_for_parts();
    let paths = std::mem::take(&mut doc.paths.paths);
    doc.paths.paths = paths
        .into_iter()
        .map(|(path, item)| (format!("/api/v1{path}"), item))
        .collect();
    (routes, doc)
}

/// The REST API, nested under `/api/v1` by the router: the features'
/// routes, the OpenAPI document at `/openapi.json`, and a JSON 404 for
/// anything else.
pub fn router() -> Router<AppState> {
    let (routes, doc) = split();
    let doc = Arc::new(doc);
    routes
        .route(
            "/openapi.json",
            get(move || {
                let doc = doc.clone();
                async move { Json(doc.as_ref().clone()) }
            }),
        )
        .fallback(not_found)
}

#[cfg(test)]
mod tests {
    use streamkeeper::accounts::token::{Required, Scope, required_scope};

    /// The scope rule sees only a method and a path; this holds it to the
    /// routes the API really documents, with their parameters filled in.
    #[test]
    fn every_documented_route_needs_the_scope_of_its_family() {
        let doc = super::doc();
        let mut approvals = 0;
        for (template, item) in &doc.paths.paths {
            let path: String = template
                .split('/')
                .map(|s| if s.starts_with('{') { "1" } else { s })
                .collect::<Vec<_>>()
                .join("/");
            let methods = [
                ("GET", item.get.is_some()),
                ("POST", item.post.is_some()),
                ("PUT", item.put.is_some()),
                ("PATCH", item.patch.is_some()),
                ("DELETE", item.delete.is_some()),
            ];
            for (method, _) in methods.iter().filter(|(_, has)| *has) {
                let expected = if *method == "GET" {
                    Scope::Read
                } else if path.ends_with("/compatibility") {
                    Scope::Check
                } else if path.ends_with("/approvals") || path.ends_with("/rejections") {
                    approvals += 1;
                    assert_eq!(
                        required_scope(method, &path),
                        Required::Person,
                        "{template}"
                    );
                    continue;
                } else if path.starts_with("/api/v1/review-items") {
                    Scope::Propose
                } else if path == "/api/v1/lineage" || path == "/api/v1/lineage/batch" {
                    Scope::LineageWrite
                } else {
                    Scope::Write
                };
                assert_eq!(
                    required_scope(method, &path),
                    Required::Scope(expected),
                    "{method} {template}"
                );
            }
        }
        assert_eq!(approvals, 2, "approvals and rejections are documented");
    }
}
