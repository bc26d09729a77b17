//! The history player's console and relay: the router `serve` runs, in
//! process, called over REST with the script's people's tokens (and an
//! approver signing in to approve), and the receiver of the team's
//! webhooks, up or down as the script says.

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tower::ServiceExt;

use super::HistoryError;

/// The receiver of the team's webhooks: takes them (200) while the relay
/// is up, refuses them (503) while it is down.
pub(super) struct Relay {
    pub(super) up: Arc<AtomicBool>,
    pub(super) taken: Arc<std::sync::atomic::AtomicUsize>,
    pub(super) url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    pub(super) async fn start() -> Result<Self, HistoryError> {
        let up = Arc::new(AtomicBool::new(true));
        let taken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (u, t) = (up.clone(), taken.clone());
        let app = Router::new().route(
            "/hook",
            axum::routing::post(move || {
                let (u, t) = (u.clone(), t.clone());
                async move {
                    if u.load(Ordering::Relaxed) {
                        t.fetch_add(1, Ordering::Relaxed);
                        StatusCode::OK
                    } else {
                        StatusCode::SERVICE_UNAVAILABLE
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(HistoryError::Receiver)?;
        let addr = listener.local_addr().map_err(HistoryError::Receiver)?;
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the history's webhook receiver stopped");
            }
        });
        Ok(Self {
            up,
            taken,
            url: format!("http://{addr}/hook"),
            task,
        })
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The REST API of the console, in process, over the player's pool.
pub(super) struct Console {
    pub(super) app: Router,
}

impl Console {
    pub(super) async fn call(
        &self,
        what: &str,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> Result<Value, HistoryError> {
        let mut b = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        let body = match body {
            Some(v) => {
                b = b.header(header::CONTENT_TYPE, "application/json");
                Body::from(v.to_string())
            }
            None => Body::empty(),
        };
        self.send(what, b, body).await
    }

    /// An approval as the approver makes it in the console (no token
    /// approves): signed in with the password, confirming with it again.
    pub(super) async fn approve(
        &self,
        (username, password): (&str, &str),
        path: &str,
        content_hash: &Value,
    ) -> Result<Value, HistoryError> {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("username", username),
                ("password", password),
                ("next", "/"),
            ])
            .finish();
        let login = Request::post("/login")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ORIGIN, CONSOLE_ORIGIN)
            .header("sec-fetch-site", "same-origin")
            .body(Body::from(form))
            .map_err(|e| HistoryError::Setup(format!("signing in: {e}")))?;
        let res = match self.app.clone().oneshot(login).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        // The session's cookie, among any others the answer sets.
        let cookie = res
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|c| c.to_str().ok())
            .find(|c| c.starts_with("streamkeeper="))
            .and_then(|c| c.split(';').next())
            .ok_or_else(|| HistoryError::Refused {
                what: format!("{username} signing in"),
                status: res.status(),
                body: String::new(),
            })?
            .to_string();
        let b = Request::post(path)
            .header(header::COOKIE, cookie)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ORIGIN, CONSOLE_ORIGIN)
            .header("sec-fetch-site", "same-origin");
        let body = json!({ "content_hash": content_hash, "password": password });
        self.send("an approval", b, Body::from(body.to_string()))
            .await
    }

    async fn send(
        &self,
        what: &str,
        b: axum::http::request::Builder,
        body: Body,
    ) -> Result<Value, HistoryError> {
        let refused = |status, body: String| HistoryError::Refused {
            what: what.to_string(),
            status,
            body,
        };
        let req = b
            .body(body)
            .map_err(|e| HistoryError::Setup(format!("{what}: {e}")))?;
        let res = match self.app.clone().oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = res.status();
        let bytes = to_bytes(res.into_body(), 16 * 1024 * 1024)
            .await
            .map_err(|e| refused(status, e.to_string()))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if !status.is_success() {
            return Err(refused(status, text));
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// The in-process console's origin, as its `public_url` gives it.
pub(super) const CONSOLE_ORIGIN: &str = "http://127.0.0.1";
