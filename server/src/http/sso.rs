//! Single sign-on's pages: off to the provider, and back.
//!
//! The session cookie is `SameSite=Strict`, so the browser sends it neither
//! on the provider's redirect back nor on a redirect that follows it. The
//! attempt is therefore kept in Postgres and bound to the browser by a
//! `Lax` cookie of its own (`streamkeeper_sso`, on `/login/sso` only), and
//! the callback answers with a page that moves on by itself (a meta
//! refresh, no script) rather than a redirect: that next request starts on
//! our own page, so it carries the new session cookie.

use axum::Extension;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use serde::Deserialize;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::signin::safe_next;
use streamkeeper_app::port::ClientAddr;
use tower_sessions::Session;

use super::AppState;
use crate::accounts::sso::{BROWSER_COOKIE, Finished, SsoError, Started};

#[derive(Debug, Deserialize)]
pub struct StartQuery {
    #[serde(default)]
    next: String,
}

/// `GET /login/sso`: off to the provider to sign in.
pub async fn start(
    State(st): State<AppState>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    Query(q): Query<StartQuery>,
) -> Response {
    let Some(sso) = st.sso.clone() else {
        return (StatusCode::NOT_FOUND, "Single sign-on is not set up here.").into_response();
    };
    let next = safe_next(&q.next, &st.config.public_url);
    match sso.start(&next, None).await {
        Ok(started) => to_provider(&st, started),
        Err(e) => {
            sso.refused(&e, &from).await;
            back_to_login(&e)
        }
    }
}

/// `GET /login/sso/reauth`: a fresh sign-in at the provider, which an
/// approval by a single-sign-on user asks for instead of a password.
pub async fn reauth(
    State(st): State<AppState>,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    Extension(who): Extension<Principal>,
    Query(q): Query<StartQuery>,
) -> Response {
    let Some(sso) = st.sso.clone() else {
        return (StatusCode::NOT_FOUND, "Single sign-on is not set up here.").into_response();
    };
    match crate::accounts::store::sso::is_single_sign_on(&st.pool, who.user_id).await {
        Ok(true) => {}
        Ok(false) => {
            return (
                StatusCode::BAD_REQUEST,
                "Your account signs in with a password: confirm approvals with it.",
            )
                .into_response();
        }
        Err(e) => return crate::platform::rest::ApiError(e.into()).into_response(),
    }
    let next = safe_next(&q.next, &st.config.public_url);
    match sso.start(&next, Some(who.user_id)).await {
        Ok(started) => to_provider(&st, started),
        Err(e) => {
            sso.refused(&e, &from).await;
            back_to_login(&e)
        }
    }
}

/// The session key of the ID token a single sign-on session began with.
pub(super) const ID_TOKEN_KEY: &str = "sso_id_token";

fn to_provider(st: &AppState, started: Started) -> Response {
    let secure = if st.config.https() { "; Secure" } else { "" };
    let cookie = format!(
        "{BROWSER_COOKIE}={}; Path=/login/sso; Max-Age=600; HttpOnly; SameSite=Lax{secure}",
        started.browser
    );
    let mut res = Redirect::to(started.authorize.as_str()).into_response();
    if let Ok(v) = cookie.parse() {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res
}

/// The sign-in page with why single sign-on did not sign the person in.
fn back_to_login(e: &SsoError) -> Response {
    let code = match e {
        SsoError::Unreachable(_) => "unreachable",
        // Our own database, not the provider: said so, not blamed on it.
        SsoError::Store(_) => "unavailable",
        SsoError::UnknownAttempt | SsoError::OtherBrowser => "expired",
        // The console's own registration at the provider is wrong: an
        // admin's to fix, which the audit log says.
        SsoError::Provider(code)
            if matches!(
                code.as_str(),
                "invalid_client" | "unauthorized_client" | "invalid_grant"
            ) =>
        {
            "refused"
        }
        SsoError::Provider(_) => "denied",
        SsoError::NameTaken(_) => "taken",
        SsoError::Disabled => "disabled",
        SsoError::NoUsername | SsoError::Token(_) => "refused",
        SsoError::SomeoneElse | SsoError::NotFresh => "reauth",
    };
    Redirect::to(&format!("/login?sso={code}")).into_response()
}

#[derive(Debug, Deserialize)]
pub struct CallbackQuery {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    state: Option<String>,
    /// The provider's refusal (`access_denied`, `login_required`).
    #[serde(default)]
    error: Option<String>,
}

fn browser_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == BROWSER_COOKIE)
        .map(|(_, v)| v.to_string())
}

/// `GET /login/sso/callback`: the provider's answer.
pub async fn callback(
    State(st): State<AppState>,
    session: Session,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    headers: HeaderMap,
    Query(q): Query<CallbackQuery>,
) -> Response {
    let Some(sso) = st.sso.clone() else {
        return (StatusCode::NOT_FOUND, "Single sign-on is not set up here.").into_response();
    };
    let browser = browser_cookie(&headers);
    let outcome = match (q.state.as_deref(), q.code.as_deref(), q.error.as_deref()) {
        (_, _, Some(error)) => Err(SsoError::Provider(error.chars().take(64).collect())),
        (Some(state), Some(code), None) => sso.finish(state, code, browser.as_deref(), &from).await,
        _ => Err(SsoError::UnknownAttempt),
    };
    // The binding cookie has done its work either way.
    let clear = format!("{BROWSER_COOKIE}=; Path=/login/sso; Max-Age=0; HttpOnly; SameSite=Lax");
    let mut res = match outcome {
        Ok(Finished::SignedIn {
            user,
            next,
            id_token,
        }) => {
            if let Err(e) = super::signin::begin_session(&session, &user).await {
                return crate::platform::rest::ApiError(e).into_response();
            }
            // The hint a sign-out sends the provider; a session that
            // cannot keep it still signs in (sign-out then ends only ours).
            if let Err(e) = session.insert(ID_TOKEN_KEY, id_token).await {
                tracing::warn!(error = %e, "could not keep the ID token for sign-out");
            }
            onward(&next)
        }
        Ok(Finished::Reauthenticated { next, .. }) => onward(&next),
        Err(e) => {
            sso.refused(&e, &from).await;
            back_to_login(&e)
        }
    };
    if let Ok(v) = clear.parse() {
        res.headers_mut().append(header::SET_COOKIE, v);
    }
    res
}

/// A page that moves on to `next` at once, with a link for a browser that
/// does not follow meta refreshes. `next` passed `safe_next`: a path on
/// this console.
fn onward(next: &str) -> Response {
    let href = html_escape(next);
    Html(format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"0;url={href}\"><title>Signed in</title></head>\
         <body><p>Signed in. <a href=\"{href}\" data-testid=\"sso-continue\">Continue</a></p></body></html>"
    ))
    .into_response()
}

/// After a sign-out here, the way on to the provider's end-session page:
/// a page, not a redirect, as the sign-in's way back is — the sign-out is
/// a form post, and `form-action 'self'` stops a form's redirect to
/// another origin.
pub(super) fn on_to_provider_logout(url: &str) -> Response {
    let href = html_escape(url);
    Html(format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"0;url={href}\"><title>Signed out</title></head>\
         <body><p>Signed out here. <a href=\"{href}\" data-testid=\"sso-sign-out\">Sign out at your identity provider too</a></p></body></html>"
    ))
    .into_response()
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
