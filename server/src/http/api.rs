//! The REST API under `/api/v1`, for machines (bearer tokens) and scripts,
//! described by the OpenAPI document at `/api/v1/openapi.json`.

use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::accounts::api as accounts;
use crate::platform::rest::{ApiError, ErrorBody, ErrorDetail};
use crate::platform::routine::api as routines;
use crate::audit::api as audit;
use crate::connect::api as connect;
use crate::flags::api as flags;
use crate::lineage::api as lineage;
use crate::review::api as review;
use crate::schemas::api as schemas;
use crate::watch::api as clusters;
use crate::http::AppState;

#[derive(OpenApi)]
#[openapi(
    info(title = "Streamkeeper API", description = "Read-only watch over Kafka streams, and the changes named approvers sign off."),
    paths(
        accounts::me,
        accounts::change_password,
        accounts::reset_second_factor,
        accounts::list_users,
        accounts::create_user,
        accounts::get_user,
        accounts::update_user,
        accounts::list_teams,
        accounts::create_team,
        accounts::get_team,
        accounts::add_member,
        accounts::remove_member,
        audit::list,
        audit::refusals,
        clusters::list,
        clusters::create,
        clusters::get,
        clusters::groups,
        clusters::group,
        clusters::streams,
        clusters::describe_stream,
        schemas::stream_schemas,
        schemas::record_stream_schema,
        schemas::record_reader_schema,
        schemas::check,
        schemas::check_report,
        schemas::set_registry,
        schemas::registry_status,
        schemas::registry_subjects,
        schemas::subject_diff,
        connect::list,
        connect::set,
        connect::delete,
        connect::test,
        connect::connectors,
        connect::connector,
        connect::set_owner,
        connect::validate,
        flags::list,
        flags::get,
        flags::acknowledge,
        flags::dismiss,
        flags::set_owner,
        flags::set_webhook,
        flags::set_platform_team,
        review::list,
        review::propose,
        review::get,
        review::edit,
        review::approve,
        review::reject,
        review::withdraw,
        review::comment,
        review::apply,
        review::domains,
        review::set_domain,
        review::notifications,
        review::mark_read,
        review::counts,
        routines::list,
        lineage::ingest,
        lineage::ingest_batch,
        lineage::marquez_lineage,
        lineage::namespaces,
        lineage::datasets,
        lineage::jobs,
        lineage::impact,
    ),
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

async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

/// Unknown API paths answer a JSON 404, not the HTML page.
async fn not_found() -> ApiError {
    ApiError(streamkeeper_app::error::AppError::NotFound(
        "That API route".into(),
    ))
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", get(openapi))
        .route("/me", get(accounts::me))
        .route("/me/password", post(accounts::change_password))
        .route(
            "/users/{id}/second-factor",
            delete(accounts::reset_second_factor),
        )
        .route(
            "/users",
            get(accounts::list_users).post(accounts::create_user),
        )
        .route(
            "/users/{id}",
            get(accounts::get_user).patch(accounts::update_user),
        )
        .route(
            "/teams",
            get(accounts::list_teams).post(accounts::create_team),
        )
        .route("/teams/{id}", get(accounts::get_team))
        .route("/teams/{id}/members", post(accounts::add_member))
        .route(
            "/teams/{id}/members/{user_id}",
            delete(accounts::remove_member),
        )
        .route("/audit", get(audit::list))
        .route("/audit/refusals", get(audit::refusals))
        .route("/clusters", get(clusters::list).post(clusters::create))
        .route("/clusters/{id}", get(clusters::get))
        .route("/clusters/{id}/groups", get(clusters::groups))
        .route("/clusters/{id}/groups/{group}", get(clusters::group))
        .route("/clusters/{id}/streams", get(clusters::streams))
        .route(
            "/clusters/{id}/streams/{topic}",
            put(clusters::describe_stream),
        )
        .route("/clusters/{id}/groups/{group}/owner", put(flags::set_owner))
        .route(
            "/clusters/{id}/streams/{topic}/schemas",
            get(schemas::stream_schemas),
        )
        .route(
            "/clusters/{id}/streams/{topic}/schema",
            put(schemas::record_stream_schema),
        )
        .route(
            "/clusters/{id}/groups/{group}/reader-schemas/{topic}",
            put(schemas::record_reader_schema),
        )
        .route(
            "/clusters/{id}/streams/{topic}/compatibility",
            post(schemas::check),
        )
        .route("/schema-checks/{id}", get(schemas::check_report))
        .route(
            "/clusters/{id}/registry",
            put(schemas::set_registry).get(schemas::registry_status),
        )
        .route(
            "/clusters/{id}/registry/subjects",
            get(schemas::registry_subjects),
        )
        .route(
            "/clusters/{id}/registry/subjects/{subject}/diff",
            get(schemas::subject_diff),
        )
        .route(
            "/clusters/{id}/connect",
            get(connect::list).put(connect::set),
        )
        .route("/clusters/{id}/connect/{name}", delete(connect::delete))
        .route("/clusters/{id}/connect/{name}/test", post(connect::test))
        .route(
            "/clusters/{id}/connect/{name}/connectors",
            get(connect::connectors),
        )
        .route(
            "/clusters/{id}/connect/{name}/connectors/{connector}",
            get(connect::connector),
        )
        .route(
            "/clusters/{id}/connect/{name}/connectors/{connector}/owner",
            put(connect::set_owner),
        )
        .route("/connect/validate", post(connect::validate))
        .route("/flags", get(flags::list))
        .route("/flags/{id}", get(flags::get))
        .route("/flags/{id}/acknowledge", post(flags::acknowledge))
        .route("/flags/{id}/dismiss", post(flags::dismiss))
        .route("/teams/{id}/webhook", put(flags::set_webhook))
        .route("/settings/platform-team", put(flags::set_platform_team))
        .route("/review-items", get(review::list).post(review::propose))
        .route("/review-items/{id}", get(review::get).put(review::edit))
        .route("/review-items/{id}/approvals", post(review::approve))
        .route("/review-items/{id}/rejections", post(review::reject))
        .route("/review-items/{id}/withdraw", post(review::withdraw))
        .route("/review-items/{id}/comments", post(review::comment))
        .route("/review-items/{id}/apply", post(review::apply))
        .route("/review-domains", get(review::domains))
        .route("/review-domains/{domain}", put(review::set_domain))
        .route("/notifications", get(review::notifications))
        .route("/notifications/read", post(review::mark_read))
        .route("/me/inbox", get(review::counts))
        .route("/routines", get(routines::list))
        .route(
            "/lineage",
            get(lineage::marquez_lineage).post(lineage::ingest),
        )
        .route("/lineage/batch", post(lineage::ingest_batch))
        .route("/lineage/impact", get(lineage::impact))
        .route("/namespaces", get(lineage::namespaces))
        .route("/namespaces/{namespace}/datasets", get(lineage::datasets))
        .route("/namespaces/{namespace}/jobs", get(lineage::jobs))
        .fallback(not_found)
}

#[cfg(test)]
mod tests {
    use super::ApiDoc;
    use streamkeeper::token::{Required, Scope, required_scope};
    use utoipa::OpenApi;

    /// The scope rule sees only a method and a path; this holds it to the
    /// routes the API really documents, with their parameters filled in.
    #[test]
    fn every_documented_route_needs_the_scope_of_its_family() {
        let doc = ApiDoc::openapi();
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
                    Scope::Approve
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
