//! Signing in and out: the password form, the second-factor step, the
//! session begun at either (and by single sign-on), and sign-out, which
//! ends a provider's session too when it offers that. Who is asking on
//! each request is `auth`'s middleware.

use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use chrono::Utc;
use serde::{Deserialize, Serialize};
use serde_json::json;
use streamkeeper::accounts::account::{MAX_USERNAME_LEN, Principal};
use streamkeeper::accounts::second_factor::{ACCOUNT_PAGE, pending_live};
use streamkeeper::accounts::signin::safe_next;
use streamkeeper_app::error::AppError;
use streamkeeper_app::port::ClientAddr;
use tower_sessions::Session;

use super::AppState;
use super::auth::{SEEN_KEY, SESSION_KEY, SessionUser};
use crate::audit::store::Event;
use crate::platform::rest::ApiError;

/// A sign-in that passed the password and waits for the second factor:
/// the session is not signed in until the code is right.
const PENDING_KEY: &str = "pending";

#[derive(Clone, Debug, Serialize, Deserialize)]
struct PendingSignIn {
    user_id: i64,
    username: String,
    /// When the password was right (Unix seconds).
    started: i64,
    next: String,
}

#[derive(Debug, Deserialize)]
pub struct LoginForm {
    username: String,
    password: String,
    #[serde(default)]
    next: String,
}

pub async fn login(
    State(st): State<AppState>,
    session: Session,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    form: Result<Form<LoginForm>, FormRejection>,
) -> Response {
    let Form(form) = match form {
        Ok(f) => f,
        Err(e) => {
            return ApiError(AppError::Request(format!(
                "the sign-in form could not be read: {}",
                e.body_text()
            )))
            .into_response();
        }
    };
    let next = safe_next(&form.next, &st.config.public_url);
    // `wait`: the account or address is locked for that many seconds.
    let failed = |wait: Option<std::time::Duration>| {
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("error", "1");
        if let Some(w) = wait {
            q.append_pair("locked", &w.as_secs().max(1).to_string());
        }
        if next != "/" {
            q.append_pair("next", &next);
        }
        Redirect::to(&format!("/login?{}", q.finish())).into_response()
    };
    // Attempted names are recorded clipped: they may be passwords typed
    // into the wrong field.
    let attempted: String = form
        .username
        .trim()
        .chars()
        .take(MAX_USERNAME_LEN)
        .collect();
    // No username is longer: such a name is refused before it is lowered,
    // hashed or kept as a throttle key (a 2 MB name would stay in memory).
    let too_long = form.username.trim().chars().nth(MAX_USERNAME_LEN).is_some();
    let username = attempted.to_lowercase();
    let wait = if too_long {
        None
    } else {
        st.limiter.wait(&username, &from)
    };
    let throttled = wait.is_some();
    // With local sign-in turned off, only the break-glass account's
    // password is even checked.
    let local_off = !too_long && !st.config.local_login.allows(&username);
    let user = if too_long || throttled || local_off {
        None
    } else {
        match st.accounts.authenticate(&username, &form.password).await {
            Ok(None) => {
                st.limiter.failed(&username, &from);
                None
            }
            Ok(u) => u,
            Err(e) => return ApiError(e).into_response(),
        }
    };
    let Some(user) = user else {
        let reason = if too_long {
            "username too long"
        } else if local_off {
            "local sign-in disabled"
        } else if throttled {
            "throttled"
        } else {
            "invalid credentials"
        };
        // Counted per address and minute, not chained one by one: anyone
        // can send failed sign-ins.
        let event = Event {
            actor: "anonymous",
            action: "login.failure",
            target: format!("user:{attempted}"),
            detail: json!({ "reason": reason }),
            source: &from,
        };
        if let Err(e) = st.accounts.tally(event).await {
            return ApiError(e).into_response();
        }
        return failed(wait);
    };
    if user.has_second_factor() {
        // The password was right; the session waits for the code. A new id
        // now too, so a fixed id does not even reach the second step.
        let pending = PendingSignIn {
            user_id: user.id,
            username: user.username.clone(),
            started: Utc::now().timestamp(),
            next,
        };
        let set = async {
            session.cycle_id().await?;
            session.insert(PENDING_KEY, &pending).await
        };
        if let Err(e) = set.await {
            tracing::error!(error = %e, "could not start a session");
            return ApiError(AppError::Unavailable(
                "sessions cannot be stored right now".into(),
            ))
            .into_response();
        }
        return code_page(&pending.next, false, None);
    }
    sign_in(&st, &session, &from, &user, &next, None).await
}

/// The code page, keeping where the user goes after it.
fn code_page(next: &str, failed: bool, locked: Option<std::time::Duration>) -> Response {
    let mut q = form_urlencoded::Serializer::new(String::new());
    if failed {
        q.append_pair("error", "1");
    }
    if let Some(w) = locked {
        q.append_pair("locked", &w.as_secs().max(1).to_string());
    }
    if next != "/" {
        q.append_pair("next", next);
    }
    let q = q.finish();
    if q.is_empty() {
        Redirect::to("/login/code").into_response()
    } else {
        Redirect::to(&format!("/login/code?{q}")).into_response()
    }
}

/// Signs the session in as `user` under a new id (no session fixation).
pub(super) async fn begin_session(
    session: &Session,
    user: &crate::accounts::store::users::UserRow,
) -> Result<(), AppError> {
    let session_set = async {
        session.cycle_id().await?;
        session.remove::<PendingSignIn>(PENDING_KEY).await?;
        let now = Utc::now();
        session
            .insert(
                SESSION_KEY,
                SessionUser {
                    user_id: user.id,
                    epoch: user.session_epoch,
                    auth_time: now.timestamp(),
                },
            )
            .await?;
        session.insert(SEEN_KEY, now.timestamp_millis()).await
    };
    session_set.await.map_err(|e| {
        tracing::error!(error = %e, "could not start a session");
        AppError::Unavailable("sessions cannot be stored right now".into())
    })
}

/// Signs the session in as `user` and sends them on (to the account page
/// when an admin set their password).
async fn sign_in(
    st: &AppState,
    session: &Session,
    from: &str,
    user: &crate::accounts::store::users::UserRow,
    next: &str,
    factor: Option<crate::accounts::second_factor::Factor>,
) -> Response {
    if let Err(e) = begin_session(session, user).await {
        return ApiError(e).into_response();
    }
    let event = Event {
        actor: &user.username,
        action: "login.success",
        target: format!("user:{}", user.username),
        detail: match factor {
            Some(f) => json!({ "second_factor": f.as_str() }),
            None => json!({}),
        },
        source: from,
    };
    if let Err(e) = st.accounts.record(event).await {
        return ApiError(e).into_response();
    }
    if user.must_change_password {
        return Redirect::to(ACCOUNT_PAGE).into_response();
    }
    Redirect::to(next).into_response()
}

#[derive(Debug, Deserialize)]
pub struct CodeForm {
    code: String,
}

/// The second step of signing in: a TOTP code or a recovery code for the
/// sign-in the session holds, within a few minutes of its password. Wrong
/// codes are throttled with the password's budget and counted.
pub async fn login_code(
    State(st): State<AppState>,
    session: Session,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    form: Result<Form<CodeForm>, FormRejection>,
) -> Response {
    let Form(form) = match form {
        Ok(f) => f,
        Err(e) => {
            return ApiError(AppError::Request(format!(
                "the code form could not be read: {}",
                e.body_text()
            )))
            .into_response();
        }
    };
    let pending = match session.get::<PendingSignIn>(PENDING_KEY).await {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(error = %e, "session store");
            return ApiError(AppError::Unavailable(
                "sessions cannot be read right now".into(),
            ))
            .into_response();
        }
    };
    let Some(pending) = pending.filter(|p| pending_live(p.started, Utc::now().timestamp())) else {
        if let Err(e) = session.flush().await {
            tracing::warn!(error = %e, "could not end a stale sign-in");
        }
        return Redirect::to("/login?expired=1").into_response();
    };
    let wait = st.limiter.wait(&pending.username, &from);
    let throttled = wait.is_some();
    let passed = if throttled {
        None
    } else {
        match st
            .accounts
            .second_factor_sign_in(pending.user_id, &form.code)
            .await
        {
            Ok(None) => {
                st.limiter.failed(&pending.username, &from);
                None
            }
            Ok(p) => p,
            Err(e) => return ApiError(e).into_response(),
        }
    };
    let Some((user, factor)) = passed else {
        // Counted like failed passwords: the caller is not signed in yet.
        let event = Event {
            actor: "anonymous",
            action: "login.second_factor.failure",
            target: format!("user:{}", pending.username),
            detail: json!({ "reason": if throttled { "throttled" } else { "code not accepted" } }),
            source: &from,
        };
        if let Err(e) = st.accounts.tally(event).await {
            return ApiError(e).into_response();
        }
        return code_page(&pending.next, true, wait);
    };
    sign_in(&st, &session, &from, &user, &pending.next, Some(factor)).await
}

pub async fn logout(
    State(st): State<AppState>,
    session: Session,
    Extension(ClientAddr(from)): Extension<ClientAddr>,
    principal: Option<Extension<Principal>>,
) -> Response {
    // A session begun at the identity provider ends there too, when it
    // offers that: the browser goes on to its end-session page and comes
    // back to /login.
    let id_token: Option<String> = session.get(super::sso::ID_TOKEN_KEY).await.ok().flatten();
    let mut at_provider = None;
    if let (Some(sso), Some(token)) = (st.sso.as_ref(), id_token.as_deref()) {
        let mut back = st.config.public_url.clone();
        back.set_path("/login");
        back.set_query(None);
        at_provider = sso.end_session_url(token, &back).await;
    }
    if let Some(Extension(p)) = principal {
        let event = Event {
            actor: &p.username,
            action: "logout",
            target: format!("user:{}", p.username),
            detail: json!({ "at_provider": at_provider.is_some() }),
            source: &from,
        };
        if let Err(e) = st.accounts.record(event).await {
            tracing::error!(error = %e, "could not record a sign-out");
        }
    }
    if let Err(e) = session.flush().await {
        tracing::error!(error = %e, "could not end a session");
    }
    match at_provider {
        Some(url) => super::sso::on_to_provider_logout(url.as_str()),
        None => Redirect::to("/login").into_response(),
    }
}
