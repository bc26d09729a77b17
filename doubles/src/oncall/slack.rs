//! A Slack incoming webhook (`POST /services/T…/B…/…`, api.slack.com
//! "Sending messages using incoming webhooks" and its error list; Block
//! Kit's reference for the limits): answers 200 `ok` as text; 400
//! `invalid_payload` for a body that is not JSON, `no_text` for one with
//! neither text nor blocks, `invalid_blocks` for blocks past the limits
//! (more than 50; a header's text over 150 characters or not plain_text;
//! a section's text over 3,000; a button's text over 75 or URL over
//! 3,000); 404 `no_service` for a revoked webhook.

use super::Recorder;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::Value;

fn chars(v: &Value) -> usize {
    v.as_str().map_or(0, |s| s.chars().count())
}

fn block_ok(b: &Value) -> bool {
    match b.get("type").and_then(Value::as_str) {
        Some("header") => {
            b["text"]["type"] == "plain_text" && (1..=150).contains(&chars(&b["text"]["text"]))
        }
        Some("section") => {
            let t = &b["text"];
            t.is_object() && (1..=3000).contains(&chars(&t["text"]))
        }
        Some("context") => b["elements"]
            .as_array()
            .is_some_and(|e| !e.is_empty() && e.len() <= 10),
        Some("actions") => b["elements"].as_array().is_some_and(|e| {
            !e.is_empty()
                && e.len() <= 25
                && e.iter()
                    .all(|x| chars(&x["text"]["text"]) <= 75 && chars(&x["url"]) <= 3000)
        }),
        Some("divider") => true,
        _ => false,
    }
}

/// Slack's answer to a body: the status and its text.
pub fn answer(v: Option<&Value>) -> (StatusCode, &'static str) {
    let Some(v) = v else {
        return (StatusCode::BAD_REQUEST, "invalid_payload");
    };
    let blocks = v.get("blocks").and_then(Value::as_array);
    let text = v
        .get("text")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    match (text, blocks) {
        (None, None) => (StatusCode::BAD_REQUEST, "no_text"),
        (_, Some(b)) if b.len() > 50 || !b.iter().all(block_ok) => {
            (StatusCode::BAD_REQUEST, "invalid_blocks")
        }
        _ => (StatusCode::OK, "ok"),
    }
}

async fn hook(
    State(rec): State<Recorder>,
    Path(rest): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, &'static str) {
    rec.wait().await;
    let path = format!("/services/{rest}");
    let v: Option<Value> = serde_json::from_slice(&body).ok();
    let (status, text) = if rec.revoked(&path) {
        (StatusCode::NOT_FOUND, "no_service")
    } else {
        answer(v.as_ref())
    };
    rec.record("slack", &path, &headers, &body, status.as_u16());
    (status, text)
}

pub fn router(rec: Recorder) -> Router {
    Router::new()
        .route("/services/{*rest}", post(hook))
        .with_state(rec)
}
