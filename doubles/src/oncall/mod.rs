//! Doubles of the on-call receivers that cannot run here, each answering
//! as its published contract says and recording exactly what was sent:
//! PagerDuty's Events API v2 ([`pagerduty`]), a Slack incoming webhook
//! with Block Kit's limits ([`slack`]), a Microsoft Teams Workflows
//! webhook taking an Adaptive Card ([`teams`]). Their checks are their
//! own, written from the receivers' documentation, never the product's.
//!
//! [`spawn`] starts all three on one free loopback port: PagerDuty at
//! `/v2/enqueue`, Slack at `/services/…`, Teams at `/workflows/…`.

pub mod pagerduty;
pub mod slack;
pub mod teams;

use axum::Router;
use axum::http::HeaderMap;
use serde_json::Value;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::net::TcpListener;

/// One request received: which receiver, its path, its headers of
/// interest, its body as sent, and the status answered.
#[derive(Clone, Debug)]
pub struct Received {
    pub receiver: &'static str,
    pub path: String,
    pub idempotency_key: Option<String>,
    /// The `X-Streamkeeper-Signature` header, if any.
    pub signature: Option<String>,
    /// The body's bytes as sent (a signature covers exactly these).
    pub raw: Vec<u8>,
    pub body: Value,
    pub status: u16,
}

/// What the doubles got, and how they are told to misbehave.
#[derive(Clone, Default)]
pub struct Recorder {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    got: Vec<Received>,
    /// PagerDuty answers 429 to this many requests first.
    throttle: usize,
    /// Slack paths whose webhook was revoked (404 `no_service`).
    revoked: Vec<String>,
    /// Answer nothing for this long before answering.
    hang_ms: u64,
}

impl Recorder {
    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Everything received so far, in order.
    pub fn got(&self) -> Vec<Received> {
        self.with(|i| i.got.clone())
    }

    /// What one receiver got.
    pub fn of(&self, receiver: &str) -> Vec<Received> {
        self.got()
            .into_iter()
            .filter(|r| r.receiver == receiver)
            .collect()
    }

    /// PagerDuty throttles the next `n` requests (429).
    pub fn throttle(&self, n: usize) {
        self.with(|i| i.throttle = n);
    }

    /// A Slack webhook at `path` is revoked (404 `no_service`).
    pub fn revoke(&self, path: &str) {
        self.with(|i| i.revoked.push(path.to_owned()));
    }

    /// Every receiver waits this long before answering.
    pub fn hang(&self, ms: u64) {
        self.with(|i| i.hang_ms = ms);
    }

    fn take_throttle(&self) -> bool {
        self.with(|i| {
            let t = i.throttle > 0;
            i.throttle = i.throttle.saturating_sub(1);
            t
        })
    }

    fn revoked(&self, path: &str) -> bool {
        self.with(|i| i.revoked.iter().any(|p| p == path))
    }

    async fn wait(&self) {
        let ms = self.with(|i| i.hang_ms);
        if ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
    }

    fn record(
        &self,
        receiver: &'static str,
        path: &str,
        headers: &HeaderMap,
        raw: &[u8],
        status: u16,
    ) {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let received = Received {
            receiver,
            path: path.to_owned(),
            idempotency_key: header("idempotency-key"),
            signature: header("x-streamkeeper-signature"),
            raw: raw.to_vec(),
            body: serde_json::from_slice(raw).unwrap_or(Value::Null),
            status,
        };
        self.with(|i| i.got.push(received));
    }
}

/// The three doubles as one router.
pub fn router(rec: Recorder, routing_keys: Vec<String>) -> Router {
    Router::new()
        .merge(pagerduty::router(rec.clone(), routing_keys))
        .merge(slack::router(rec.clone()))
        .merge(teams::router(rec))
}

/// Starts the doubles on a free loopback port: their base URL and recorder.
/// PagerDuty accepts only `routing_keys`.
pub async fn spawn(routing_keys: Vec<String>) -> (String, Recorder) {
    let rec = Recorder::default();
    let app = router(rec.clone(), routing_keys);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rec)
}
