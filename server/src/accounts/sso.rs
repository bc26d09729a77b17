//! Single sign-on through an OpenID Connect provider: the authorization code
//! flow with PKCE, `state` and `nonce`, the ID token checked by the
//! `openidconnect` crate (signature over the provider's JWKS, `iss`, `aud`,
//! `exp`, `nonce`), users made on their first sign-in, and the provider's
//! groups mapped to roles and teams at every sign-in. Every refusal is
//! audited with its reason; no token, code or secret reaches a log, an
//! error or the audit log.

use super::store::sso::{self as store, NewAttempt, NewSsoUser};
use super::store::users::UserRow;
use crate::audit::store::Event;
use crate::platform::errors::Db;
use base64::Engine;
use chrono::{DateTime, Utc};
use openidconnect::core::{
    CoreAuthPrompt, CoreAuthenticationFlow, CoreClient, CoreIdToken, CoreJsonWebKeySet,
};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken, IssuerUrl,
    LogoutRequest, Nonce, PkceCodeChallenge, PkceCodeVerifier, PostLogoutRedirectUrl,
    ProviderMetadataWithLogout, RedirectUrl, Scope, SignatureVerificationError, TokenResponse,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use std::collections::BTreeSet;
use std::str::FromStr;
use std::time::{Duration, Instant};
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::sso::{
    GroupMapping, display_name_from, fresh_sign_in, groups_at, username_from,
};
use tokio::sync::Mutex;
use url::Url;

/// Where the provider sends the browser back, under the public URL.
pub const CALLBACK_PATH: &str = "/login/sso/callback";
/// The cookie that binds a sign-in to the browser that started it.
pub const BROWSER_COOKIE: &str = "streamkeeper_sso";
/// An SSO user's password hash: not a PHC string, so no password matches.
const NO_PASSWORD: &str = "!single-sign-on";
/// A JWKS is fetched again for a key it lacks at most this often, so
/// tokens signed by unknown keys cannot make us hammer the provider.
const JWKS_REFETCH: Duration = Duration::from_secs(10);

/// The validated single sign-on settings.
#[derive(Clone)]
pub struct SsoSettings {
    pub issuer: Url,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// Asked for beside `openid`.
    pub scopes: Vec<String>,
    /// Dotted path of the groups in the ID token's claims.
    pub groups_claim: String,
    pub username_claim: String,
    pub mapping: GroupMapping,
    /// What the sign-in button says: "Sign in with <name>".
    pub provider_name: String,
    pub redirect: Url,
    /// Whether signing out here also ends the session at the provider
    /// (RP-initiated logout, when it offers an `end_session_endpoint`).
    pub provider_logout: bool,
}

impl std::fmt::Debug for SsoSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoSettings")
            .field("issuer", &self.issuer.as_str())
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<set>"),
            )
            .field("scopes", &self.scopes)
            .field("groups_claim", &self.groups_claim)
            .field("provider_name", &self.provider_name)
            .field("provider_logout", &self.provider_logout)
            .finish()
    }
}

/// Why a single sign-on did not sign anyone in. `reason` is what the
/// audit log says; `Display` is what the person is told.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    #[error("The identity provider cannot be reached right now; try again in a minute.")]
    Unreachable(String),
    #[error("This sign-in was used already or took too long. Start again.")]
    UnknownAttempt,
    #[error("This sign-in was started in another browser. Start again here.")]
    OtherBrowser,
    #[error("The identity provider did not sign you in: {0}")]
    Provider(String),
    #[error(
        "The identity provider's answer could not be accepted. Start again; if it keeps failing, an admin can read why in the audit log."
    )]
    Token(String),
    #[error(
        "The name '{0}' belongs to a local account; an admin must rename one of them before you can sign in."
    )]
    NameTaken(String),
    #[error("Your account is disabled.")]
    Disabled,
    #[error("The identity provider named no usable username for you.")]
    NoUsername,
    #[error("The identity provider signed in someone else than you.")]
    SomeoneElse,
    #[error("The identity provider did not show a fresh sign-in. Confirm again.")]
    NotFresh,
    #[error(transparent)]
    Store(#[from] Db),
}

impl SsoError {
    /// What the audit log records (never a token, a code or a secret).
    pub fn reason(&self) -> String {
        match self {
            SsoError::Unreachable(why) => format!("provider unreachable: {why}"),
            SsoError::UnknownAttempt => "unknown, used or expired state".into(),
            SsoError::OtherBrowser => "state from another browser".into(),
            SsoError::Provider(e) => format!("provider error: {e}"),
            SsoError::Token(why) => format!("ID token refused: {why}"),
            SsoError::NameTaken(n) => format!("username {n} belongs to a local account"),
            SsoError::Disabled => "account disabled".into(),
            SsoError::NoUsername => "no usable username claim".into(),
            SsoError::SomeoneElse => "re-authentication by another subject".into(),
            SsoError::NotFresh => "re-authentication without a fresh auth_time".into(),
            SsoError::Store(e) => format!("store: {e}"),
        }
    }
}

/// Who the provider vouched for, from a verified ID token.
#[derive(Debug, Clone)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    pub auth_time: Option<i64>,
    /// The token's claims, read after its signature was checked.
    pub claims: Value,
}

/// Where a finished sign-in leads.
#[derive(Debug)]
pub enum Finished {
    /// `id_token` is kept in the session (server-side) as the hint a
    /// sign-out sends the provider.
    SignedIn {
        user: Box<UserRow>,
        next: String,
        id_token: String,
    },
    Reauthenticated {
        next: String,
    },
}

/// The start of a sign-in: where to send the browser, and the cookie value
/// that binds the attempt to it.
pub struct Started {
    pub authorize: Url,
    pub browser: String,
}

/// Discovery's answer with the RP-initiated logout field
/// (`end_session_endpoint`) read too.
type Metadata = ProviderMetadataWithLogout;

struct Provider {
    metadata: Metadata,
    jwks_fetched: Instant,
}

pub struct SsoService {
    settings: SsoSettings,
    pool: PgPool,
    http: reqwest::Client,
    /// Discovered on first use (the provider may be down when we start)
    /// and kept; the JWKS is fetched again when a token names a key it
    /// lacks (the provider rotated its keys).
    provider: Mutex<Option<Provider>>,
    /// Dropped when a sign-in changes a user's roles (`token_cache`).
    tokens: super::token_cache::TokenCache,
}

fn sha256(s: &str) -> Vec<u8> {
    Sha256::digest(s.as_bytes()).to_vec()
}

/// A random value for the browser cookie, as `CsrfToken` makes them.
fn random_token() -> String {
    CsrfToken::new_random().secret().clone()
}

impl SsoService {
    pub fn new(
        settings: SsoSettings,
        pool: PgPool,
        tokens: super::token_cache::TokenCache,
    ) -> Self {
        let http = reqwest::Client::builder()
            // Following redirects would let the provider's answers send us
            // anywhere (SSRF).
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            // Building reads no system setting (rustls with its own roots),
            // so it fails only on a broken build of reqwest itself.
            .expect("an HTTP client without redirects builds");
        Self {
            settings,
            pool,
            http,
            provider: Mutex::new(None),
            tokens,
        }
    }

    pub fn provider_name(&self) -> &str {
        &self.settings.provider_name
    }

    async fn discover(&self) -> Result<Provider, SsoError> {
        let issuer = IssuerUrl::new(self.settings.issuer.as_str().trim_end_matches('/').into())
            .map_err(|e| SsoError::Unreachable(e.to_string()))?;
        let metadata = Metadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| SsoError::Unreachable(format!("discovery: {e}")))?;
        Ok(Provider {
            metadata,
            jwks_fetched: Instant::now(),
        })
    }

    /// The provider's metadata, discovered once.
    async fn metadata(&self) -> Result<Metadata, SsoError> {
        let mut provider = self.provider.lock().await;
        if provider.is_none() {
            *provider = Some(self.discover().await?);
        }
        provider
            .as_ref()
            .map(|p| p.metadata.clone())
            .ok_or_else(|| SsoError::Unreachable("no metadata".into()))
    }

    /// Fetches the JWKS again, unless it was fetched moments ago; `true`
    /// when there is a new one to try.
    async fn refresh_keys(&self) -> Result<bool, SsoError> {
        let mut provider = self.provider.lock().await;
        let Some(p) = provider.as_mut() else {
            return Ok(false);
        };
        if p.jwks_fetched.elapsed() < JWKS_REFETCH {
            return Ok(false);
        }
        let jwks = CoreJsonWebKeySet::fetch_async(p.metadata.jwks_uri(), &self.http)
            .await
            .map_err(|e| SsoError::Unreachable(format!("keys: {e}")))?;
        p.metadata = p.metadata.clone().set_jwks(jwks);
        p.jwks_fetched = Instant::now();
        Ok(true)
    }

    fn client(&self, metadata: Metadata) -> Result<SsoClient, SsoError> {
        let redirect = RedirectUrl::from_url(self.settings.redirect.clone());
        Ok(CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.settings.client_id.clone()),
            self.settings.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(redirect))
    }

    /// Starts a sign-in (or, with `reauth_user`, a fresh sign-in at the
    /// provider for an approval: `prompt=login`, `max_age=0`).
    pub async fn start(&self, next: &str, reauth_user: Option<i64>) -> Result<Started, SsoError> {
        let client = self.client(self.metadata().await?)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in &self.settings.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        request = request.set_pkce_challenge(challenge);
        if reauth_user.is_some() {
            request = request
                .add_prompt(CoreAuthPrompt::Login)
                .set_max_age(Duration::ZERO);
        }
        let (authorize, state, nonce) = request.url();
        let browser = random_token();
        store::start(
            &self.pool,
            NewAttempt {
                state_hash: &sha256(state.secret()),
                browser_hash: &sha256(&browser),
                nonce: nonce.secret(),
                pkce_verifier: verifier.secret(),
                next,
                reauth_user,
            },
        )
        .await?;
        Ok(Started { authorize, browser })
    }

    /// Where to send a browser that signed out here so that its session at
    /// the provider ends too (OpenID Connect RP-Initiated Logout 1.0), with
    /// the ID token it signed in with as the hint and `back` (registered
    /// at the provider as a post-logout redirect URI) as the way back;
    /// `None` when that is turned off, the provider offers no
    /// `end_session_endpoint`, or it cannot be asked right now (the
    /// session here has ended either way).
    pub async fn end_session_url(&self, id_token: &str, back: &Url) -> Option<Url> {
        if !self.settings.provider_logout {
            return None;
        }
        let metadata = match self.metadata().await {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "signed out here only: the identity provider cannot be asked");
                return None;
            }
        };
        let endpoint = metadata
            .additional_metadata()
            .end_session_endpoint
            .clone()?;
        let hint = CoreIdToken::from_str(id_token).ok()?;
        Some(
            LogoutRequest::from(endpoint)
                .set_id_token_hint(&hint)
                .set_client_id(ClientId::new(self.settings.client_id.clone()))
                .set_post_logout_redirect_uri(PostLogoutRedirectUrl::from_url(back.clone()))
                .http_get_url(),
        )
    }

    /// The provider's redirect back: the attempt `state` names (once, from
    /// this browser), the code exchanged, the ID token checked, and the
    /// user found or made with the roles and teams their groups give.
    pub async fn finish(
        &self,
        state: &str,
        code: &str,
        browser: Option<&str>,
        from: &str,
    ) -> Result<Finished, SsoError> {
        let attempt = store::take(&self.pool, &sha256(state))
            .await?
            .ok_or(SsoError::UnknownAttempt)?;
        let same_browser = browser.is_some_and(|b| sha256(b) == attempt.browser_hash);
        if !same_browser {
            return Err(SsoError::OtherBrowser);
        }
        let client = self.client(self.metadata().await?)?;
        let http = &self.http;
        let token = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| SsoError::Unreachable(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(attempt.pkce_verifier.clone()))
            .request_async(http)
            .await
            .map_err(|e| token_error(&e))?;
        let id_token = token
            .id_token()
            .ok_or_else(|| SsoError::Token("no ID token in the answer".into()))?
            .to_string();
        let identity = self.admit(&id_token, &attempt.nonce, Utc::now()).await?;
        match attempt.reauth_user {
            Some(user_id) => {
                self.reauthenticated(user_id, &identity, attempt.started, from)
                    .await?;
                Ok(Finished::Reauthenticated { next: attempt.next })
            }
            None => {
                let user = self.sign_in(&identity, from).await?;
                Ok(Finished::SignedIn {
                    user: Box::new(user),
                    next: attempt.next,
                    id_token,
                })
            }
        }
    }

    /// Checks an ID token as of `now`: signature over the provider's keys
    /// (fetched again once when the token names a key they lack), issuer,
    /// audience, expiry and nonce.
    pub async fn admit(
        &self,
        id_token: &str,
        nonce: &str,
        now: DateTime<Utc>,
    ) -> Result<Identity, SsoError> {
        let token = CoreIdToken::from_str(id_token)
            .map_err(|e| SsoError::Token(format!("not a JWT: {e}")))?;
        let nonce = Nonce::new(nonce.to_string());
        let mut retried = false;
        loop {
            let client = self.client(self.metadata().await?)?;
            let verifier = client.id_token_verifier().set_time_fn(move || now);
            match token.claims(&verifier, &nonce) {
                Ok(claims) => {
                    return Ok(Identity {
                        issuer: claims.issuer().to_string(),
                        subject: claims.subject().to_string(),
                        auth_time: claims.auth_time().map(|t| t.timestamp()),
                        claims: payload(id_token)?,
                    });
                }
                Err(ClaimsVerificationError::SignatureVerification(e))
                    if !retried && key_may_have_rotated(&e) =>
                {
                    retried = true;
                    if !self.refresh_keys().await? {
                        return Err(SsoError::Token(signature_reason(&e)));
                    }
                }
                Err(ClaimsVerificationError::SignatureVerification(e)) => {
                    return Err(SsoError::Token(signature_reason(&e)));
                }
                Err(e) => return Err(SsoError::Token(e.to_string())),
            }
        }
    }

    /// Finds or makes the user the identity names, and gives them what
    /// their groups give now. Every change is audited in the same
    /// transaction.
    async fn sign_in(&self, id: &Identity, from: &str) -> Result<UserRow, SsoError> {
        let groups = groups_at(&id.claims, &self.settings.groups_claim);
        let grant = self.settings.mapping.grant(&groups);
        let roles: Vec<Role> = grant.roles.iter().copied().collect();
        let mut tx = self.pool.begin().await.map_err(Db::from)?;
        let existing = store::by_identity(&mut tx, &id.issuer, &id.subject).await?;
        let mut roles_changed = false;
        let user = match existing {
            Some(u) if u.disabled => return Err(SsoError::Disabled),
            Some(u) => {
                let before: BTreeSet<Role> = u.roles().into_iter().collect();
                if before != grant.roles {
                    let u = store::set_roles(&mut tx, u.id, &roles).await?;
                    roles_changed = true;
                    append(
                        &mut tx,
                        &u.username,
                        "sso.roles.changed",
                        &u.username,
                        json!({ "from": before, "to": grant.roles, "groups": groups }),
                        from,
                    )
                    .await?;
                    u
                } else {
                    u
                }
            }
            None => {
                let username = username_from(&id.claims, &self.settings.username_claim)
                    .ok_or(SsoError::NoUsername)?;
                if super::store::users::by_username_in(&mut tx, &username)
                    .await?
                    .is_some()
                {
                    return Err(SsoError::NameTaken(username));
                }
                let display = display_name_from(&id.claims).unwrap_or_else(|| username.clone());
                let u = store::insert(
                    &mut tx,
                    NewSsoUser {
                        username: &username,
                        display_name: &display,
                        password_hash: NO_PASSWORD,
                        roles: &roles,
                        issuer: &id.issuer,
                        subject: &id.subject,
                    },
                )
                .await?;
                append(
                    &mut tx,
                    &u.username,
                    "sso.user.created",
                    &u.username,
                    json!({ "issuer": id.issuer, "roles": grant.roles, "groups": groups }),
                    from,
                )
                .await?;
                u
            }
        };
        let before = store::team_names(&mut tx, user.id).await?;
        let mut keep = Vec::new();
        for team in &grant.teams {
            let (team_id, made) = store::team_for(&mut tx, team).await?;
            if made {
                append(
                    &mut tx,
                    &user.username,
                    "sso.team.created",
                    team,
                    json!({ "group_mapping": true }),
                    from,
                )
                .await?;
            }
            crate::accounts::store::teams::add_member(&mut tx, team_id, user.id).await?;
            keep.push(team_id);
        }
        store::leave_teams_but(&mut tx, user.id, &keep).await?;
        let after: Vec<String> = grant.teams.iter().cloned().collect();
        if before != after {
            append(
                &mut tx,
                &user.username,
                "sso.teams.changed",
                &user.username,
                json!({ "from": before, "to": after, "groups": groups }),
                from,
            )
            .await?;
        }
        append(
            &mut tx,
            &user.username,
            "login.success",
            &user.username,
            json!({ "via": "sso", "issuer": id.issuer }),
            from,
        )
        .await?;
        tx.commit().await.map_err(Db::from)?;
        if roles_changed {
            // The user's tokens act with the new roles from now on.
            self.tokens.drop_all();
        }
        Ok(user)
    }

    /// A re-authentication for an approval: the same person, freshly
    /// signed in at the provider after it was asked for.
    async fn reauthenticated(
        &self,
        user_id: i64,
        id: &Identity,
        asked_at: i64,
        from: &str,
    ) -> Result<(), SsoError> {
        let mut conn = self.pool.acquire().await.map_err(Db::from)?;
        let same = store::by_identity(&mut conn, &id.issuer, &id.subject)
            .await?
            .filter(|u| u.id == user_id && !u.disabled);
        drop(conn);
        let Some(user) = same else {
            return Err(SsoError::SomeoneElse);
        };
        if !fresh_sign_in(id.auth_time, asked_at) {
            return Err(SsoError::NotFresh);
        }
        store::mark_reauthenticated(&self.pool, user.id).await?;
        crate::audit::store::record(
            &self.pool,
            Event {
                actor: &user.username,
                action: "sso.reauthenticated",
                target: format!("user:{}", user.username),
                detail: json!({ "auth_time": id.auth_time }),
                source: from,
            },
        )
        .await?;
        Ok(())
    }

    /// Audits a refused sign-in. What anyone can send (a made-up or
    /// replayed state, a refusal at the provider) is counted per address
    /// and minute like a failed password; a refusal of someone the
    /// provider vouched for is chained one by one.
    pub async fn refused(&self, error: &SsoError, from: &str) {
        let event = Event {
            actor: "anonymous",
            action: "sso.login.refused",
            target: format!("issuer:{}", self.settings.issuer),
            detail: json!({ "reason": error.reason() }),
            source: from,
        };
        let anyone = matches!(
            error,
            SsoError::UnknownAttempt
                | SsoError::OtherBrowser
                | SsoError::Provider(_)
                | SsoError::Unreachable(_)
        );
        let recorded = if anyone {
            crate::audit::store::tally(&self.pool, event).await
        } else {
            crate::audit::store::record(&self.pool, event)
                .await
                .map(drop)
        };
        match recorded {
            Ok(()) => crate::audit::refusal_audited(),
            Err(e) => tracing::error!(error = %e, "could not record a refused sign-in"),
        }
    }
}

type SsoClient = CoreClient<
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;

async fn append(
    conn: &mut sqlx::PgConnection,
    actor: &str,
    action: &str,
    target: &str,
    detail: Value,
    from: &str,
) -> Result<(), Db> {
    crate::audit::store::append(
        conn,
        Event {
            actor,
            action,
            target: format!("user:{target}"),
            detail,
            source: from,
        },
    )
    .await
    .map(drop)
}

/// A key the JWKS lacks, or a signature that fails over the key we have
/// (a provider without key ids rotated its one key): the JWKS may have
/// moved on since we fetched it.
fn key_may_have_rotated(e: &SignatureVerificationError) -> bool {
    matches!(
        e,
        SignatureVerificationError::NoMatchingKey | SignatureVerificationError::CryptoError(_)
    )
}

fn signature_reason(e: &SignatureVerificationError) -> String {
    match e {
        SignatureVerificationError::NoMatchingKey => {
            "signed by a key the provider does not publish (unknown kid)".into()
        }
        SignatureVerificationError::CryptoError(_) => "bad signature".into(),
        other => format!("signature: {other}"),
    }
}

/// The token endpoint's refusal by its error code only: its description
/// and any body are the provider's to fill, and are not echoed.
fn token_error<RE: std::error::Error + 'static, T: openidconnect::ErrorResponse + 'static>(
    e: &openidconnect::RequestTokenError<RE, T>,
) -> SsoError {
    match e {
        openidconnect::RequestTokenError::ServerResponse(r) => {
            let code = serde_json::to_value(r)
                .ok()
                .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| "error".into());
            SsoError::Provider(code.chars().take(64).collect())
        }
        openidconnect::RequestTokenError::Request(_) => {
            SsoError::Unreachable("token endpoint unreachable".into())
        }
        openidconnect::RequestTokenError::Parse(..) => {
            SsoError::Token("the token endpoint's answer is not a token response".into())
        }
        openidconnect::RequestTokenError::Other(_) => {
            SsoError::Token("the token endpoint's answer was refused".into())
        }
    }
}

/// The claims of a token whose signature was checked: its middle part.
fn payload(id_token: &str) -> Result<Value, SsoError> {
    let middle = id_token
        .split('.')
        .nth(1)
        .ok_or_else(|| SsoError::Token("not a JWT".into()))?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(middle.trim_end_matches('='))
        .map_err(|e| SsoError::Token(format!("claims: {e}")))?;
    serde_json::from_slice(&bytes).map_err(|e| SsoError::Token(format!("claims: {e}")))
}
