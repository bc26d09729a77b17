//! A Microsoft Teams Workflows webhook ("Post to a channel when a webhook
//! request is received"; learn.microsoft.com "Create incoming webhooks
//! with Workflows"): a `message` whose `attachments` hold Adaptive Cards
//! (`contentType` `application/vnd.microsoft.card.adaptive`, `content` of
//! `type` `AdaptiveCard` with a `version` and a `body` array; an
//! `Action.OpenUrl` needs a `url`). Answers 202 with an empty body; 400
//! for a body that is not such a message; 413 past Teams' 28 KB limit.

use super::Recorder;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::Value;

fn card_ok(c: &Value) -> bool {
    let actions_ok = c.get("actions").and_then(Value::as_array).is_none_or(|a| {
        a.iter()
            .all(|x| x["type"] != "Action.OpenUrl" || x["url"].is_string())
    });
    c["type"] == "AdaptiveCard"
        && c["version"].is_string()
        && c["body"]
            .as_array()
            .is_some_and(|b| b.iter().all(|e| e["type"].is_string()))
        && actions_ok
}

/// Teams' answer to a body of `len` bytes.
pub fn answer(v: Option<&Value>, len: usize) -> StatusCode {
    if len > 28 * 1024 {
        return StatusCode::PAYLOAD_TOO_LARGE;
    }
    let ok = v.is_some_and(|v| {
        v["type"] == "message"
            && v["attachments"].as_array().is_some_and(|a| {
                !a.is_empty()
                    && a.iter().all(|x| {
                        x["contentType"] == "application/vnd.microsoft.card.adaptive"
                            && card_ok(&x["content"])
                    })
            })
    });
    if ok {
        StatusCode::ACCEPTED
    } else {
        StatusCode::BAD_REQUEST
    }
}

async fn hook(
    State(rec): State<Recorder>,
    Path(rest): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    rec.wait().await;
    let v: Option<Value> = serde_json::from_slice(&body).ok();
    let status = answer(v.as_ref(), body.len());
    rec.record(
        "teams",
        &format!("/workflows/{rest}"),
        &headers,
        &body,
        status.as_u16(),
    );
    status
}

pub fn router(rec: Recorder) -> Router {
    Router::new()
        .route("/workflows/{*rest}", post(hook))
        .with_state(rec)
}
