//! PagerDuty's Events API v2 (`POST /v2/enqueue`, developer.pagerduty.com
//! "Send an Alert Event"): `routing_key` (32 characters, an integration's
//! key), `event_action` trigger/acknowledge/resolve, `dedup_key` (at most
//! 255 characters; required to acknowledge or resolve), and for a trigger
//! a `payload` with `summary` (at most 1,024), `source` and `severity`
//! (critical, error, warning or info). Answers 202 `{"status":"success",
//! "message":"Event processed","dedup_key":…}`, 400 `{"status":"invalid
//! event","message":"Event object is invalid","errors":[…]}`, 429 when
//! throttled.

use super::Recorder;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};

#[derive(Clone)]
struct Double {
    rec: Recorder,
    keys: Vec<String>,
}

fn errors(v: &Value, keys: &[String]) -> Vec<String> {
    let mut e = Vec::new();
    let text = |k: &str| v.get(k).and_then(Value::as_str);
    match text("routing_key") {
        None => e.push("'routing_key' is missing or blank".to_owned()),
        Some(k) if k.len() != 32 => e.push("'routing_key' must be 32 characters".to_owned()),
        Some(k) if !keys.iter().any(|x| x == k) => e.push("Invalid routing key".to_owned()),
        _ => {}
    }
    let action = text("event_action");
    if !matches!(action, Some("trigger" | "acknowledge" | "resolve")) {
        e.push("'event_action' must be one of trigger, acknowledge or resolve".to_owned());
    }
    match text("dedup_key") {
        Some(d) if d.len() > 255 => e.push("'dedup_key' must be at most 255 characters".to_owned()),
        None if action != Some("trigger") => {
            e.push("'dedup_key' is required to acknowledge or resolve".to_owned())
        }
        _ => {}
    }
    if action == Some("trigger") {
        let p = v.get("payload").cloned().unwrap_or(Value::Null);
        let field = |k: &str| p.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        match field("summary") {
            None => e.push("'payload.summary' is missing or blank".to_owned()),
            Some(s) if s.chars().count() > 1024 => {
                e.push("'payload.summary' must be at most 1024 characters".to_owned())
            }
            _ => {}
        }
        if field("source").is_none() {
            e.push("'payload.source' is missing or blank".to_owned());
        }
        if !matches!(
            field("severity"),
            Some("critical" | "error" | "warning" | "info")
        ) {
            e.push("'payload.severity' must be one of critical, error, warning or info".to_owned());
        }
    }
    e
}

async fn enqueue(
    State(d): State<Double>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, axum::Json<Value>) {
    d.rec.wait().await;
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (status, answer) = if d.rec.take_throttle() {
        (
            StatusCode::TOO_MANY_REQUESTS,
            json!({ "status": "throttle event",
            "message": "Requests for this service are arriving too quickly. Please retry later." }),
        )
    } else if v.is_null() {
        (
            StatusCode::BAD_REQUEST,
            json!({ "status": "invalid event",
            "message": "Event object is invalid", "errors": ["Malformed JSON"] }),
        )
    } else {
        match errors(&v, &d.keys) {
            e if e.is_empty() => {
                let dedup = v
                    .get("dedup_key")
                    .and_then(Value::as_str)
                    .unwrap_or("generated")
                    .to_owned();
                (
                    StatusCode::ACCEPTED,
                    json!({ "status": "success", "message": "Event processed", "dedup_key": dedup }),
                )
            }
            e => (
                StatusCode::BAD_REQUEST,
                json!({ "status": "invalid event",
                "message": "Event object is invalid", "errors": e }),
            ),
        }
    };
    d.rec
        .record("pagerduty", "/v2/enqueue", &headers, &body, status.as_u16());
    (status, axum::Json(answer))
}

pub fn router(rec: Recorder, keys: Vec<String>) -> Router {
    Router::new()
        .route("/v2/enqueue", post(enqueue))
        .with_state(Double { rec, keys })
}
