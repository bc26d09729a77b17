//! A test harness: the real router over a fresh Postgres database (one per
//! test, made by `#[sqlx::test]`), driven through `oneshot` with a small
//! cookie jar, as a browser would.

#![allow(dead_code)] // each test file uses a different part of the harness

pub mod alertmanager;
pub mod kafka;
pub mod oidc;
pub mod secure;
pub mod smtp;
pub mod stop_flag;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use sqlx::PgPool;
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_server::clients::egress::Outbound;
use streamkeeper_server::config::ServeConfig;
use streamkeeper_server::http::{AppState, router};
use tower::ServiceExt;
use tower_sessions_sqlx_store::PostgresStore;

pub const ORIGIN: &str = "http://127.0.0.1:3000";
pub const PASSWORD: &str = "correct-horse-battery-staple";

/// What the tests allow outbound: loopback (the registry double and
/// webhook receivers run on 127.0.0.1), the default credential policy.
pub fn outbound() -> Outbound {
    Outbound {
        egress: EgressPolicy::LOOPBACK,
        ..Outbound::default()
    }
}

/// Settings for a registry client of the tests' own, to the double.
pub fn registry_settings(url: &str) -> streamkeeper_server::clients::registry::RegistrySettings {
    streamkeeper_server::clients::registry::RegistrySettings {
        egress: EgressPolicy::LOOPBACK,
        ..streamkeeper_server::clients::registry::RegistrySettings::new(url)
    }
}

pub fn config() -> ServeConfig {
    ServeConfig {
        bind: "127.0.0.1:3000".parse().expect("addr"),
        public_url: url::Url::parse(ORIGIN).expect("url"),
        site: streamkeeper_server::http::site::Site::Folder("target/site".into()),
        session_idle: Duration::from_secs(1800),
        session_max: Duration::from_secs(12 * 3600),
        trusted_proxies: Vec::new(),
        clusters_file: None,
        outbound: outbound(),
        max_schema_bytes: streamkeeper_server::platform::limits::DEFAULT_MAX_SCHEMA_BYTES,
        metrics_max_series: streamkeeper_server::platform::metrics::DEFAULT_MAX_SERIES,
        lineage_forward: None,
        sso: None,
        local_login: Default::default(),
        smtp: None,
    }
}

pub struct TestApp {
    pub pool: PgPool,
    pub app: Router,
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    pub fn location(&self) -> &str {
        self.headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The session cookie set by this reply, as `name=value`.
    pub fn cookie(&self) -> Option<String> {
        self.headers
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|c| c.contains("streamkeeper="))
            .and_then(|c| c.split(';').next())
            .map(str::to_string)
    }

    pub fn set_cookie_header(&self) -> String {
        self.headers
            .get(header::SET_COOKIE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    }
}

impl TestApp {
    pub async fn new(pool: PgPool) -> Self {
        Self::with_config(pool, config()).await
    }

    pub async fn with_config(pool: PgPool, cfg: ServeConfig) -> Self {
        Self::with_state(pool.clone(), AppState::new(pool, cfg)).await
    }

    /// The router over a state the test prepared (a runner's health set).
    pub async fn with_state(pool: PgPool, state: AppState) -> Self {
        let store = PostgresStore::new(pool.clone());
        store.migrate().await.expect("session table");
        let app = router(state, store);
        Self { pool, app }
    }

    pub async fn send(&self, req: Request<Body>) -> Reply {
        // A hung request fails the test instead of hanging the run.
        let res = tokio::time::timeout(Duration::from_secs(30), self.app.clone().oneshot(req))
            .await
            .expect("the request answered within 30 s")
            .expect("infallible");
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = to_bytes(res.into_body(), 16 * 1024 * 1024)
            .await
            .expect("body");
        Reply {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn get(&self, path: &str, cookie: Option<&str>) -> Reply {
        let mut b = Request::get(path);
        if let Some(c) = cookie {
            b = b.header(header::COOKIE, c);
        }
        self.send(b.body(Body::empty()).expect("request")).await
    }

    /// A same-origin form post, as a browser sends it.
    pub async fn post_form(
        &self,
        path: &str,
        cookie: Option<&str>,
        form: &[(&str, &str)],
    ) -> Reply {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut b = Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ORIGIN, ORIGIN)
            .header("sec-fetch-site", "same-origin");
        if let Some(c) = cookie {
            b = b.header(header::COOKIE, c);
        }
        self.send(b.body(Body::from(body)).expect("request")).await
    }

    /// A machine's API call with a bearer token.
    pub async fn api(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<serde_json::Value>,
    ) -> Reply {
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
        self.send(b.body(body).expect("request")).await
    }

    /// Creates a user directly in the store, with the test password.
    pub async fn user(&self, username: &str, roles: &[Role]) -> i64 {
        let hash = streamkeeper_server::platform::password::hash(PASSWORD).expect("hash");
        let mut conn = self.pool.acquire().await.expect("conn");
        streamkeeper_server::accounts::store::users::insert(
            &mut conn, username, username, &hash, roles, false,
        )
        .await
        .expect("insert user")
        .id
    }

    /// A bearer token for the user with the scopes the tests of the whole
    /// API use: everything a new token may hold but `lineage:write` and
    /// `metrics`.
    pub async fn token(&self, user_id: i64) -> String {
        use streamkeeper::accounts::token::Scope;
        let scopes = [Scope::Read, Scope::Write, Scope::Check, Scope::Propose];
        self.token_with(user_id, &scopes).await
    }

    /// A bearer token for the user holding just `scopes`.
    pub async fn token_with(
        &self,
        user_id: i64,
        scopes: &[streamkeeper::accounts::token::Scope],
    ) -> String {
        let token = streamkeeper_server::accounts::store::tokens::generate();
        let scopes =
            streamkeeper::accounts::token::Scopes::new(scopes.iter().copied()).expect("scopes");
        let mut conn = self.pool.acquire().await.expect("conn");
        streamkeeper_server::accounts::store::tokens::insert(
            &mut conn, user_id, "test", &token, &scopes, None,
        )
        .await
        .expect("insert token");
        token
    }

    /// A POST the token's user makes in person: signed in through the form,
    /// confirming with the password, from the console's origin. Approving
    /// and rejecting take nothing less (no token does); tests that name
    /// people by their tokens approve and reject this way.
    pub async fn in_person(&self, path: &str, token: &str, mut body: serde_json::Value) -> Reply {
        let found = streamkeeper_server::accounts::store::tokens::find_with_user(&self.pool, token)
            .await
            .expect("token lookup")
            .expect("a token the test made");
        let cookie = self
            .login(&found.user.username, PASSWORD)
            .await
            .expect("the token's user signs in");
        body["password"] = PASSWORD.into();
        let req = Request::post(path)
            .header(header::COOKIE, cookie)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ORIGIN, ORIGIN)
            .header("sec-fetch-site", "same-origin")
            .body(Body::from(body.to_string()))
            .expect("request");
        self.send(req).await
    }

    /// Signs in through the form and returns the session cookie.
    pub async fn login(&self, username: &str, password: &str) -> Option<String> {
        let r = self
            .post_form(
                "/login",
                None,
                &[
                    ("username", username),
                    ("password", password),
                    ("next", "/"),
                ],
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::SEE_OTHER,
            "login answers with a redirect"
        );
        if r.location().starts_with("/login") {
            None
        } else {
            r.cookie()
        }
    }

    pub async fn audit_actions(&self) -> Vec<String> {
        sqlx::query_scalar("SELECT action FROM audit_log ORDER BY id")
            .fetch_all(&self.pool)
            .await
            .expect("audit")
    }
}
