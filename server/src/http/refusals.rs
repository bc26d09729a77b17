//! Every refusal is audited: a 403 answered to a signed-in caller (session
//! or token), from the REST API and server functions alike, is written to
//! the audit log with who asked, what they asked for and why it was
//! refused. A refused write is chained entry by entry; a refused read is
//! counted per source and minute (`request.read.refused`), as refusals by
//! unauthenticated sources are, since a crawler walking pages it may not
//! read would otherwise flood the chain. Services that record their own
//! refusals (the review inbox, with the item as target) say so
//! (`audit::refusal_audited`) and are not recorded twice.

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::json;
use streamkeeper::accounts::account::Principal;
use streamkeeper_app::error::AppError;
use streamkeeper_app::port::ClientAddr;

use super::AppState;
use crate::audit::store::Event;
use crate::audit::watch_refusals;

/// Sits inside `authenticate` (so the principal is known) and outside
/// `server_fns::error_status` (so a server function's error is known, even
/// when a form without JavaScript is redirected back with it).
pub async fn audit_refusals(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let writes = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let Some(who) = req.extensions().get::<Principal>().cloned() else {
        return next.run(req).await;
    };
    let from = req
        .extensions()
        .get::<ClientAddr>()
        .map_or_else(|| "unknown".to_string(), |a| a.0.clone());
    // The path only: a query string may hold what the caller typed.
    let target = format!("{} {}", req.method(), req.uri().path());
    let (res, audited) = watch_refusals(next.run(req)).await;
    let error = res.extensions().get::<AppError>().cloned();
    let refused = match &error {
        Some(e) => e.status() == StatusCode::FORBIDDEN.as_u16(),
        None => res.status() == StatusCode::FORBIDDEN,
    };
    if refused && !audited {
        let (code, reason) = error.map_or_else(
            || ("forbidden", "refused".to_string()),
            |e| (e.code(), e.to_string()),
        );
        let event = Event {
            actor: &who.username,
            action: if writes {
                "request.refused"
            } else {
                "request.read.refused"
            },
            target,
            detail: json!({ "code": code, "reason": reason }),
            source: &from,
        };
        let recorded = if writes {
            st.accounts.record(event).await
        } else {
            st.accounts.tally(event).await
        };
        if let Err(e) = recorded {
            tracing::error!(error = %e, "could not record a refused request");
        }
    }
    res
}
