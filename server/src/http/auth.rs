//! Who is asking: the middleware that resolves a session or bearer token
//! into a principal and turns everyone else away. Signing in and out is in
//! `signin`.

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::Utc;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use streamkeeper::accounts::account::{Credential, Principal};
use streamkeeper::accounts::second_factor::{ACCOUNT_PAGE, Gate, must_change_gate};
use streamkeeper::accounts::signin::touch_due;
use streamkeeper::accounts::token::Refusal;
use streamkeeper::platform::client_addr::client_ip;
use streamkeeper_app::error::AppError;
use streamkeeper_app::port::{ClientAddr, SessionHandle, SessionKeeper};
use streamkeeper_app::ui::flash::KeptForm;
use streamkeeper_app::ui::time::ReaderZone;
use tower_sessions::Session;

use super::AppState;
use crate::accounts::{TokenAuth, principal_of};
use crate::audit::store::Event;
use crate::platform::rest::ApiError;

/// What a session holds: the user, the epoch of their account when they
/// signed in (a disable or password change bumps it) and when they did.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct SessionUser {
    pub user_id: i64,
    pub epoch: i32,
    pub auth_time: i64,
}

pub(super) const SESSION_KEY: &str = "auth";
/// When the session was last saved (Unix milliseconds): saving it pushes
/// its idle timeout back, so it is saved again once this is old enough.
pub(super) const SEEN_KEY: &str = "seen";

/// The session's success note for the next page (`ui::flash`): kept on
/// the server, so a page shows only what this server wrote for it.
const FLASH_KEY: &str = "flash";

/// What a failed form sent, for the page it goes back to
/// (`ui::flash::kept_on_error`): on the server, never in the address.
const KEPT_FORM_KEY: &str = "kept_form";

/// Where the request comes from: the peer, or the client a trusted proxy
/// names (`streamkeeper::platform::client_addr`). The same address is throttled and
/// written to the audit log.
fn client_addr(req: &Request, trusted: &[ipnet::IpNet]) -> String {
    let Some(ConnectInfo(peer)) = req.extensions().get::<ConnectInfo<SocketAddr>>() else {
        return "unknown".into();
    };
    let forwarded_for = header_values(req.headers(), "x-forwarded-for");
    let forwarded = header_values(req.headers(), "forwarded");
    client_ip(peer.ip(), &forwarded_for, &forwarded, trusted).to_string()
}

/// Every value of a header that may appear several times, in order.
fn header_values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

/// Resolves the client address once per request, before anything that
/// records or throttles it.
pub async fn client_address(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    let addr = client_addr(&req, &st.config.trusted_proxies);
    req.extensions_mut().insert(ClientAddr(addr));
    next.run(req).await
}

/// Paths anyone may reach: the sign-in page and its assets.
fn is_public(path: &str) -> bool {
    matches!(
        path,
        "/login"
            | "/login/code"
            | "/login/sso"
            | "/login/sso/callback"
            | "/fn/sign_in_options"
            | "/logout"
            | "/healthz"
            | "/readyz"
            | "/favicon.ico"
    ) || path.starts_with("/pkg/")
}

fn bearer(req: &Request) -> Option<String> {
    req.headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(|t| t.trim().to_string())
}

/// A signed-in session: who, whether they must change their password
/// first, the session's record, and the zone their pages show times in.
struct SignedIn {
    principal: Principal,
    must_change: bool,
    user: SessionUser,
    zone: ReaderZone,
}

async fn session_principal(st: &AppState, session: &Session) -> Result<Option<SignedIn>, AppError> {
    let stored: Option<SessionUser> = session.get(SESSION_KEY).await.map_err(|e| {
        tracing::error!(error = %e, "session store");
        AppError::Unavailable("sessions cannot be read right now".into())
    })?;
    let Some(su) = stored else {
        return Ok(None);
    };
    let user = st.accounts.user_row(su.user_id).await?;
    let age = Utc::now().timestamp() - su.auth_time;
    let max = i64::try_from(st.config.session_max.as_secs()).unwrap_or(i64::MAX);
    match user {
        Some(u) if !u.disabled && u.session_epoch == su.epoch && (0..max).contains(&age) => {
            touch(session, st.config.session_idle).await;
            Ok(Some(SignedIn {
                principal: principal_of(&u, Credential::Session),
                must_change: u.must_change_password,
                user: su,
                zone: ReaderZone(streamkeeper::accounts::time_zone::stored(&u.time_zone)),
            }))
        }
        _ => {
            // Disabled, demoted, password changed or past the absolute
            // lifetime: end the session on the server.
            if let Err(e) = session.flush().await {
                tracing::warn!(error = %e, "could not end a stale session");
            }
            Ok(None)
        }
    }
}

/// Keeps the session that changed its password signed in: the change
/// moved the user's epoch on (ending their other sessions), and this one
/// takes on the new epoch.
struct KeepSession {
    session: Session,
    user: SessionUser,
}

#[async_trait::async_trait]
impl SessionKeeper for KeepSession {
    async fn keep(&self, epoch: i32) -> Result<(), AppError> {
        let user = SessionUser { epoch, ..self.user };
        self.session.insert(SESSION_KEY, user).await.map_err(|e| {
            tracing::error!(error = %e, "could not keep a session");
            AppError::Unavailable("sessions cannot be stored right now".into())
        })
    }

    async fn set_flash(&self, note: &str) -> Result<(), AppError> {
        self.session.insert(FLASH_KEY, note).await.map_err(|e| {
            tracing::error!(error = %e, "could not keep a success note");
            AppError::Unavailable("sessions cannot be stored right now".into())
        })
    }

    async fn take_flash(&self) -> Result<Option<String>, AppError> {
        self.session.remove(FLASH_KEY).await.map_err(|e| {
            tracing::error!(error = %e, "could not read a success note");
            AppError::Unavailable("sessions cannot be read right now".into())
        })
    }

    async fn set_kept_form(&self, form: &KeptForm) -> Result<(), AppError> {
        self.session.insert(KEPT_FORM_KEY, form).await.map_err(|e| {
            tracing::error!(error = %e, "could not keep a failed form");
            AppError::Unavailable("sessions cannot be stored right now".into())
        })
    }

    async fn take_kept_form(&self) -> Result<Option<KeptForm>, AppError> {
        let unreadable = |e: tower_sessions::session::Error| {
            tracing::error!(error = %e, "could not read a failed form");
            AppError::Unavailable("sessions cannot be read right now".into())
        };
        // Looked at first: a removal saves the session even when the key
        // is absent, and most visits to the page follow no failed form.
        let kept = self
            .session
            .get::<KeptForm>(KEPT_FORM_KEY)
            .await
            .map_err(unreadable)?;
        if kept.is_some() {
            self.session
                .remove_value(KEPT_FORM_KEY)
                .await
                .map_err(unreadable)?;
        }
        Ok(kept)
    }
}

/// Slides the idle timeout of a session in use. tower-sessions saves a
/// session (and so pushes back its expiry) only when it changed; saving on
/// every request would write on every request, so the `seen` mark is
/// renewed when it is due (`touch_due`: at most once a minute).
async fn touch(session: &Session, idle: std::time::Duration) {
    let now = Utc::now().timestamp_millis();
    let seen = session.get::<i64>(SEEN_KEY).await.ok().flatten();
    if touch_due(seen, now, idle)
        && let Err(e) = session.insert(SEEN_KEY, now).await
    {
        tracing::warn!(error = %e, "could not renew a session");
    }
}

/// Resolves the principal (bearer token first, then session) and refuses
/// anything but the public paths without one: pages redirect to sign-in and
/// back, APIs answer 401.
pub async fn authenticate(
    State(st): State<AppState>,
    session: Session,
    mut req: Request,
    next: Next,
) -> Response {
    let had_cookie = req
        .headers()
        .get(header::COOKIE)
        .and_then(|c| c.to_str().ok())
        .is_some_and(|c| c.contains(st.config.cookie_name()));
    let principal = match bearer(&req) {
        Some(token) => match st.accounts.token_principal(&token).await {
            Ok(TokenAuth::Live {
                principal,
                token_id,
            }) => {
                // Owned: a request body is not Sync, so no reference to the
                // request may be held across the audit write.
                let asked = (
                    req.method().as_str().to_string(),
                    req.uri().path().to_string(),
                    resolved_addr(&req).to_string(),
                );
                if let Some(refused) = scope_refusal(&st, asked, &principal, token_id).await {
                    return refused;
                }
                Some(principal)
            }
            Ok(TokenAuth::Unknown) => {
                tally_refused_token(&st, token_asked(&req), "unknown token").await;
                return ApiError(AppError::Unauthenticated)
                    .with_message("The bearer token is unknown.")
                    .into_response();
            }
            Ok(TokenAuth::Dead(dead)) => {
                tally_refused_token(&st, token_asked(&req), dead.message()).await;
                return ApiError(AppError::Unauthenticated)
                    .with_message(dead.message())
                    .into_response();
            }
            Err(e) => return ApiError(e).into_response(),
        },
        None => match session_principal(&st, &session).await {
            Ok(Some(SignedIn {
                principal: p,
                must_change,
                user,
                zone,
            })) => {
                let path = req.uri().path().to_string();
                match must_change_gate(must_change, &path) {
                    Gate::Pass => {}
                    Gate::Redirect => return Redirect::to(ACCOUNT_PAGE).into_response(),
                    Gate::Refuse => {
                        let from = resolved_addr(&req).to_string();
                        return password_change_required(&st, &p, &path, &from).await;
                    }
                }
                req.extensions_mut().insert(zone);
                req.extensions_mut()
                    .insert(SessionHandle(Arc::new(KeepSession {
                        session: session.clone(),
                        user,
                    })));
                Some(p)
            }
            Ok(None) => None,
            Err(e) => return ApiError(e).into_response(),
        },
    };
    let path = req.uri().path().to_string();
    match principal {
        Some(p) => {
            req.extensions_mut().insert(p);
        }
        None if is_public(&path) => {}
        None => return turn_away(&req, &path, had_cookie),
    }
    next.run(req).await
}

/// The client address `client_address` resolved for this request.
fn resolved_addr(req: &Request) -> &str {
    req.extensions()
        .get::<ClientAddr>()
        .map_or("unknown", |a| a.0.as_str())
}

/// A token that is unknown or dead, counted per source and minute:
/// guessing tokens must leave a trace without flooding the chain.
/// What a refused token's record needs of the request, owned: a request
/// body is not Sync, so no reference to it may be held across the write.
fn token_asked(req: &Request) -> (String, String) {
    (
        format!("path:{}", req.uri().path()),
        resolved_addr(req).to_string(),
    )
}

async fn tally_refused_token(st: &AppState, (target, from): (String, String), reason: &str) {
    let event = Event {
        actor: "anonymous",
        action: "token.refused",
        target,
        detail: json!({ "reason": reason }),
        source: &from,
    };
    if let Err(e) = st.accounts.tally(event).await {
        tracing::error!(error = %e, "could not record a refused token");
    }
}

/// The one place a token's scopes are checked (its user's roles are still
/// checked by the services): a request outside them answers 403 naming the
/// missing scope, and is audited. `None` when the scopes allow it.
async fn scope_refusal(
    st: &AppState,
    (method, path, from): (String, String, String),
    who: &Principal,
    token_id: i64,
) -> Option<Response> {
    let refusal = who.scopes.as_ref()?.allow(&method, &path).err()?;
    let needed = match refusal {
        Refusal::Missing(scope) => scope.as_str(),
        Refusal::SessionOnly => "session",
        Refusal::PersonOnly => "person",
    };
    let event = Event {
        actor: &who.username,
        action: "token.scope.refused",
        // The audit store clips it: the path is the caller's to choose.
        target: format!("path:{path}"),
        detail: json!({
            "method": method,
            "token_id": token_id,
            "needed": needed,
            "scopes": who.scopes,
        }),
        source: &from,
    };
    if let Err(e) = st.accounts.record(event).await {
        return Some(ApiError(e).into_response());
    }
    Some(
        ApiError(AppError::Forbidden(String::new()))
            .with_message(&refusal.to_string())
            .into_response(),
    )
}

/// A must-change user's call to anything but the account page: 403
/// `password_change_required`, audited like every refusal.
async fn password_change_required(
    st: &AppState,
    who: &Principal,
    path: &str,
    from: &str,
) -> Response {
    let event = Event {
        actor: &who.username,
        action: "password_change.required",
        target: format!("path:{path}"),
        detail: json!({ "page": ACCOUNT_PAGE }),
        source: from,
    };
    if let Err(e) = st.accounts.record(event).await {
        return ApiError(e).into_response();
    }
    ApiError(AppError::PasswordChangeRequired).into_response()
}

fn turn_away(req: &Request, path: &str, expired: bool) -> Response {
    if path.starts_with("/api/") || path.starts_with("/fn/") {
        let mut res = ApiError(AppError::Unauthenticated).into_response();
        res.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return res;
    }
    if matches!(*req.method(), Method::GET | Method::HEAD) {
        let next = req
            .uri()
            .path_and_query()
            .map(|pq| pq.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("next", &next);
        if expired {
            q.append_pair("expired", "1");
        }
        return Redirect::to(&format!("/login?{}", q.finish())).into_response();
    }
    (StatusCode::UNAUTHORIZED, "Sign in first.").into_response()
}
