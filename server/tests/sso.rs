//! Single sign-on against a real OpenID Connect provider
//! (`oidc-provider-mock`, started per test): users made on their first
//! sign-in with the roles and teams their groups give, groups taken away
//! at the provider taken away here at the next sign-in; a replayed
//! `state`, another browser's callback and a provider's refusal turned
//! away and audited; ID tokens with a wrong audience, past their expiry,
//! with a bad signature or an unknown key refused; a provider that rotated
//! its key still signs people in; local sign-in turned off but for the
//! break-glass admin; signing out ends the session at the provider too
//! (RP-initiated logout) unless that is turned off; a client set up
//! without the secret its provider wants is refused there, and said so.

mod support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper_server::accounts::sso::SsoError;
use streamkeeper_server::http::AppState;
use support::oidc::{self, Provider};
use support::{PASSWORD, TestApp};

fn person(name: &str, groups: &[&str]) -> Value {
    json!({
        "preferred_username": name,
        "name": format!("{name} at the provider"),
        "email": format!("{name}@example.com"),
        "groups": groups,
    })
}

async fn me(t: &TestApp, cookie: &str) -> Value {
    let r = t.get("/api/v1/me", Some(cookie)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.json()
}

fn roles_of(me: &Value) -> Vec<String> {
    let roles = me["principal"]["roles"]
        .as_array()
        .or_else(|| me["roles"].as_array())
        .unwrap_or_else(|| panic!("roles in {me}"));
    roles
        .iter()
        .filter_map(|r| r.as_str().map(str::to_string))
        .collect()
}

async fn teams_of(t: &TestApp, username: &str) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT t.name FROM teams t JOIN memberships m ON m.team_id = t.id
         JOIN users u ON u.id = m.user_id WHERE u.username = $1 ORDER BY t.name",
    )
    .bind(username)
    .fetch_all(&t.pool)
    .await
    .expect("teams")
}

/// Refused sign-ins of someone the provider vouched for, chained.
async fn refusals(t: &TestApp) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT detail::jsonb->>'reason' FROM audit_log WHERE action = 'sso.login.refused' ORDER BY id",
    )
    .fetch_all(&t.pool)
    .await
    .expect("refusals")
}

/// The latest refusal anyone could send, counted per address and minute
/// (the row keeps the latest reason).
async fn last_counted(t: &TestApp) -> String {
    sqlx::query_scalar(
        "SELECT detail::jsonb->>'reason' FROM audit_refusals WHERE action = 'sso.login.refused'
         ORDER BY last_at DESC LIMIT 1",
    )
    .fetch_one(&t.pool)
    .await
    .expect("a counted refusal")
}

/// The session cookie the callback's page set, after checking it moves
/// on to `next` by itself.
fn signed_in(r: &support::Reply, next: &str) -> String {
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.body.contains(&format!("content=\"0;url={next}\"")),
        "the page moves on to {next}: {}",
        r.body
    );
    r.cookie().expect("a session cookie")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn signing_in_at_the_provider_gives_the_groups_roles_and_teams_at_every_sign_in(
    pool: sqlx::PgPool,
) {
    let p = Provider::start().await;
    let t = TestApp::with_config(pool, oidc::config(&p)).await;

    // The sign-in page offers the provider, with JavaScript off.
    let page = t.get("/login?next=/streams", None).await;
    assert!(page.body.contains("Sign in with Test IdP"), "{}", page.body);
    assert!(
        page.body.contains("/login/sso?next=%2Fstreams"),
        "{}",
        page.body
    );

    p.set_user("u-1", person("alice", &["team-payments", "kafka-admins"]))
        .await;
    let start = t.get("/login/sso?next=/streams", None).await;
    assert_eq!(start.status, StatusCode::SEE_OTHER);
    let authorize = url::Url::parse(start.location()).expect("authorize URL");
    let q: std::collections::HashMap<_, _> = authorize.query_pairs().into_owned().collect();
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], oidc::CLIENT_ID);
    assert_eq!(q["code_challenge_method"], "S256", "PKCE");
    assert!(q["scope"].split(' ').any(|s| s == "openid"), "{q:?}");
    assert!(!q["state"].is_empty() && !q["nonce"].is_empty(), "{q:?}");
    let cookie_line = start.set_cookie_header();
    assert!(
        cookie_line.contains("HttpOnly") && cookie_line.contains("SameSite=Lax"),
        "{cookie_line}"
    );
    let browser = oidc::browser_cookie(&start);
    let back = p.sign_in_at(start.location(), "u-1").await;
    let r = t.get(&oidc::local(&back), Some(&browser)).await;
    let cookie = signed_in(&r, "/streams");
    let who = me(&t, &cookie).await;
    let roles = roles_of(&who);
    for role in ["admin", "owner", "viewer"] {
        assert!(roles.contains(&role.to_string()), "{role} in {roles:?}");
    }
    assert!(!roles.contains(&"approver".to_string()), "{roles:?}");
    assert_eq!(teams_of(&t, "alice").await, ["payments"]);
    let account = t.get("/account", Some(&cookie)).await;
    assert!(
        account.body.contains("data-testid=\"single-sign-on\""),
        "{}",
        account.body
    );
    assert!(
        !account.body.contains("change-password"),
        "no password to change here"
    );
    let display: String =
        sqlx::query_scalar("SELECT display_name FROM users WHERE username = 'alice'")
            .fetch_one(&t.pool)
            .await
            .expect("user");
    assert_eq!(display, "alice at the provider");
    let trail = t.audit_actions().await;
    for action in [
        "sso.user.created",
        "sso.team.created",
        "sso.teams.changed",
        "login.success",
    ] {
        assert!(trail.contains(&action.to_string()), "{action} in {trail:?}");
    }

    // A group taken away at the provider is taken away at the next sign-in.
    p.set_user("u-1", person("alice", &["team-payments"])).await;
    let r = oidc::sign_in(&t, &p, "/login/sso", None, "u-1").await;
    let cookie = signed_in(&r, "/");
    let roles = roles_of(&me(&t, &cookie).await);
    assert!(!roles.contains(&"admin".to_string()), "{roles:?}");
    assert!(roles.contains(&"owner".to_string()), "{roles:?}");
    p.set_user("u-1", person("alice", &[])).await;
    let r = oidc::sign_in(&t, &p, "/login/sso", None, "u-1").await;
    let cookie = signed_in(&r, "/");
    assert_eq!(roles_of(&me(&t, &cookie).await), ["viewer"]);
    assert!(teams_of(&t, "alice").await.is_empty());
    let changes: Vec<Value> = sqlx::query_scalar(
        "SELECT detail::jsonb FROM audit_log WHERE action = 'sso.roles.changed' ORDER BY id",
    )
    .fetch_all(&t.pool)
    .await
    .expect("changes");
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert_eq!(changes[1]["to"], json!(["viewer"]));
    // An admin's edit of the roles would be undone at the next sign-in:
    // refused, saying where they come from.
    let admin = t.user("root", &[Role::Admin]).await;
    let token = t.token(admin).await;
    let alice: i64 = sqlx::query_scalar("SELECT id FROM users WHERE username = 'alice'")
        .fetch_one(&t.pool)
        .await
        .expect("alice");
    let r = t
        .api(
            axum::http::Method::PATCH,
            &format!("/api/v1/users/{alice}"),
            &token,
            Some(json!({"roles": ["admin"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("follow their groups"), "{}", r.body);
    let payments: i64 = sqlx::query_scalar("SELECT id FROM teams WHERE name = 'payments'")
        .fetch_one(&t.pool)
        .await
        .expect("payments");
    let r = t
        .api(
            axum::http::Method::DELETE,
            &format!("/api/v1/teams/{payments}/members/{alice}"),
            &token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("follow their groups"), "{}", r.body);
    let users = t
        .api(
            axum::http::Method::GET,
            "/api/v1/users?q=alice",
            &token,
            None,
        )
        .await;
    assert_eq!(
        users.json()["items"][0]["single_sign_on"],
        true,
        "{}",
        users.body
    );
    // Still one user: known by issuer and subject, not by name.
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE oidc_subject = 'u-1'")
        .fetch_one(&t.pool)
        .await
        .expect("count");
    assert_eq!(users, 1);
    // No password signs an SSO user in.
    let r = t
        .post_form(
            "/login",
            None,
            &[("username", "alice"), ("password", "!single-sign-on")],
        )
        .await;
    assert!(r.location().starts_with("/login?error"), "{}", r.location());

    // A local account's name is not handed to whoever the provider calls so.
    t.user("bob", &[Role::Admin]).await;
    p.set_user("u-2", person("bob", &["kafka-admins"])).await;
    let r = oidc::sign_in(&t, &p, "/login/sso", None, "u-2").await;
    assert_eq!(r.location(), "/login?sso=taken", "{}", r.body);
    assert!(r.cookie().is_none());
    let page = t.get("/login?sso=taken", None).await;
    assert!(
        page.body.contains("belongs to a local account"),
        "{}",
        page.body
    );
    assert!(
        refusals(&t)
            .await
            .iter()
            .any(|r| r.contains("local account")),
        "{:?}",
        refusals(&t).await
    );
}

/// The same `next` rule as the password sign-in: a destination that
/// resolves to another host (dot segments, encodings) lands on `/`.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn next_after_single_sign_on_never_leaves_the_console(pool: sqlx::PgPool) {
    let p = Provider::start().await;
    let t = TestApp::with_config(pool, oidc::config(&p)).await;
    p.set_user("u-1", person("alice", &["team-payments"])).await;
    let cases = [
        ("/..//evil.example", "/"),
        ("/a/..//evil.example", "/"),
        ("/%2e%2e//evil.example", "/"),
        ("/.//evil.example", "/"),
        ("/%2E%2E/%2F/evil.example", "/"),
        ("/%252e%252e//evil.example", "/"),
        ("/../%5Cevil.example", "/"),
        ("/%09/evil.example", "/"),
        ("//evil.example", "/"),
        ("/streams/a/../b?page=2", "/streams/b?page=2"),
    ];
    for (given, lands) in cases {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        q.append_pair("next", given);
        let start = t.get(&format!("/login/sso?{}", q.finish()), None).await;
        assert_eq!(start.status, StatusCode::SEE_OTHER, "{given:?}");
        let browser = oidc::browser_cookie(&start);
        let back = p.sign_in_at(start.location(), "u-1").await;
        let r = t.get(&oidc::local(&back), Some(&browser)).await;
        signed_in(&r, lands);
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_replayed_state_another_browser_and_a_refusal_at_the_provider_are_turned_away(
    pool: sqlx::PgPool,
) {
    let p = Provider::start().await;
    let t = TestApp::with_config(pool, oidc::config(&p)).await;
    p.set_user("u-1", person("carol", &[])).await;

    let start = t.get("/login/sso", None).await;
    let browser = oidc::browser_cookie(&start);
    let back = oidc::local(&p.sign_in_at(start.location(), "u-1").await);
    signed_in(&t.get(&back, Some(&browser)).await, "/");
    // The same answer again (a replayed state): nothing is found.
    let again = t.get(&back, Some(&browser)).await;
    assert_eq!(again.location(), "/login?sso=expired");
    assert!(again.cookie().is_none());
    assert_eq!(last_counted(&t).await, "unknown, used or expired state");

    // The callback in a browser that did not start it (login CSRF).
    let start = t.get("/login/sso", None).await;
    let back = oidc::local(&p.sign_in_at(start.location(), "u-1").await);
    let r = t.get(&back, Some("streamkeeper_sso=someone-elses")).await;
    assert_eq!(r.location(), "/login?sso=expired");
    assert_eq!(last_counted(&t).await, "state from another browser");
    let r = t.get(&back, None).await;
    assert_eq!(
        r.location(),
        "/login?sso=expired",
        "the attempt was used up"
    );

    // Denied at the provider.
    let start = t.get("/login/sso", None).await;
    let browser = oidc::browser_cookie(&start);
    let back = oidc::local(&p.deny_at(start.location()).await);
    let r = t.get(&back, Some(&browser)).await;
    assert_eq!(r.location(), "/login?sso=denied", "{back}");
    assert_eq!(last_counted(&t).await, "provider error: access_denied");
    let page = t.get("/login?sso=denied", None).await;
    assert!(page.body.contains("did not sign you in"), "{}", page.body);

    // A made-up callback.
    let r = t
        .get("/login/sso/callback?code=x&state=made-up", None)
        .await;
    assert_eq!(r.location(), "/login?sso=expired");

    assert_eq!(last_counted(&t).await, "unknown, used or expired state");
    // Nothing secret in what was recorded.
    let details: Vec<String> = sqlx::query_scalar(
        "SELECT detail::text FROM audit_refusals UNION ALL SELECT detail::text FROM audit_log",
    )
    .fetch_all(&t.pool)
    .await
    .expect("details");
    assert!(
        details
            .iter()
            .all(|d| !d.contains("client-secret") && !d.contains("code=")),
        "{details:?}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn id_tokens_with_a_wrong_audience_past_expiry_a_bad_signature_or_an_unknown_key_are_refused(
    pool: sqlx::PgPool,
) {
    let p = Provider::start().await;
    let state = AppState::new(pool.clone(), oidc::config(&p));
    let sso = state.sso.clone().expect("single sign-on is on");
    p.set_user("u-1", person("dave", &[])).await;
    let now = chrono::Utc::now();

    let good = p.id_token_for(oidc::CLIENT_ID, "u-1", "n-1").await;
    let id = sso
        .admit(&good, "n-1", now)
        .await
        .expect("the provider's own token");
    assert_eq!(id.subject, "u-1");
    assert_eq!(id.claims["preferred_username"], "dave");
    assert!(id.auth_time.is_some());

    // Each refusal is checked for its reason, then recorded as the
    // callback records it.
    let refused = |r: Result<_, SsoError>, words: &str| match r {
        Err(e @ SsoError::Token(_)) => {
            assert!(e.reason().contains(words), "{words} in {}", e.reason());
            (e, words.to_string())
        }
        other => panic!("{words}: {other:?}"),
    };
    let mut refusals = Vec::new();
    refusals.push(refused(sso.admit(&good, "n-2", now).await, "nonce"));
    refusals.push(refused(
        sso.admit(&good, "n-1", now + chrono::Duration::hours(2))
            .await,
        "Expired",
    ));
    let other = p.id_token_for("another-client", "u-1", "n-1").await;
    refusals.push(refused(sso.admit(&other, "n-1", now).await, "audience"));
    // A signature that is not the provider's.
    let mut parts: Vec<String> = good.split('.').map(str::to_string).collect();
    let sig = parts[2].clone();
    let flipped = if sig.starts_with('A') { "B" } else { "A" };
    parts[2] = format!("{flipped}{}", &sig[1..]);
    refusals.push(refused(
        sso.admit(&parts.join("."), "n-1", now).await,
        "signature",
    ));
    // The right claims under a key the provider never published.
    let claims = json!({
        "iss": p.issuer(), "aud": [oidc::CLIENT_ID], "sub": "u-1", "nonce": "n-1",
        "iat": now.timestamp(), "exp": now.timestamp() + 600, "auth_time": now.timestamp(),
    });
    let forged = p.forged_token("rotated-out", claims.clone()).await;
    refusals.push(refused(sso.admit(&forged, "n-1", now).await, "kid"));
    // And with no key id, signed by some other key.
    let forged = p.forged_token("", claims).await;
    match sso.admit(&forged, "n-1", now).await {
        Err(SsoError::Token(_)) => {}
        other => panic!("a token of another key: {other:?}"),
    }
    refusals.push(refused(sso.admit("not-a-token", "n-1", now).await, "JWT"));
    for (e, _) in &refusals {
        sso.refused(e, "192.0.2.7").await;
    }
    let recorded: Vec<String> = sqlx::query_scalar(
        "SELECT detail::jsonb->>'reason' FROM audit_log
         WHERE action = 'sso.login.refused' AND source = '192.0.2.7' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("recorded");
    assert_eq!(recorded.len(), refusals.len(), "{recorded:?}");
    for (reason, (_, words)) in recorded.iter().zip(&refusals) {
        assert!(
            reason.starts_with("ID token refused") && reason.contains(words.as_str()),
            "{reason}"
        );
        assert!(!reason.contains(&good), "no token in the trail");
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_provider_that_rotated_its_key_still_signs_people_in(pool: sqlx::PgPool) {
    let mut p = Provider::start().await;
    let t = TestApp::with_config(pool, oidc::config(&p)).await;
    p.set_user("u-1", person("erin", &[])).await;
    signed_in(&oidc::sign_in(&t, &p, "/login/sso", None, "u-1").await, "/");
    // A new key: tokens are signed by a key the console has not fetched.
    p.restart().await;
    p.set_user("u-1", person("erin", &[])).await;
    // The keys are fetched again at most every 10 s.
    tokio::time::sleep(Duration::from_secs(11)).await;
    signed_in(&oidc::sign_in(&t, &p, "/login/sso", None, "u-1").await, "/");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn with_local_sign_in_off_only_the_break_glass_admin_uses_a_password(pool: sqlx::PgPool) {
    let p = Provider::start().await;
    let mut cfg = oidc::config(&p);
    cfg.local_login = streamkeeper::accounts::sso::LocalLogin::Only(Some("root".into()));
    let t = TestApp::with_config(pool, cfg).await;
    t.user("root", &[Role::Admin]).await;
    t.user("frank", &[Role::Admin]).await;
    assert!(
        t.login("frank", PASSWORD).await.is_none(),
        "a local password is refused"
    );
    assert!(
        t.login("root", PASSWORD).await.is_some(),
        "the break-glass admin signs in"
    );
    let reason: String = sqlx::query_scalar(
        "SELECT detail::jsonb->>'reason' FROM audit_refusals WHERE action = 'login.failure'",
    )
    .fetch_one(&t.pool)
    .await
    .expect("refusal");
    assert_eq!(reason, "local sign-in disabled");
    let page = t.get("/login", None).await;
    assert!(page.body.contains("Sign in with Test IdP"), "{}", page.body);
    assert!(page.body.contains("Break-glass sign-in"), "{}", page.body);
}

/// The provider's end-session URL on the page a sign-out answers with.
fn end_session_link(body: &str) -> String {
    let start = body.find("content=\"0;url=").expect("a way on") + "content=\"0;url=".len();
    let end = body[start..].find('"').expect("its end") + start;
    body[start..end].replace("&amp;", "&")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn signing_out_ends_the_session_at_the_provider_too_unless_turned_off(pool: sqlx::PgPool) {
    let p = Provider::start().await;
    let t = TestApp::with_config(pool.clone(), oidc::config(&p)).await;
    p.set_user("u-1", person("alice", &[])).await;
    let cookie = signed_in(&oidc::sign_in(&t, &p, "/login/sso", None, "u-1").await, "/");

    let r = t.post_form("/logout", Some(&cookie), &[]).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "a page on to the provider: {}",
        r.body
    );
    let url = url::Url::parse(&end_session_link(&r.body)).expect("end-session URL");
    assert_eq!(
        url.as_str().split('?').next(),
        Some(format!("{}/oauth2/end_session", p.issuer()).as_str())
    );
    let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(q["client_id"], oidc::CLIENT_ID);
    assert_eq!(
        q["post_logout_redirect_uri"],
        format!("{}/login", support::ORIGIN)
    );
    assert_eq!(
        q["id_token_hint"].split('.').count(),
        3,
        "the ID token as the hint"
    );
    // Ours has ended before the browser leaves.
    let after = t.get("/api/v1/me", Some(&cookie)).await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
    let back = p.end_session_at(url.as_str()).await;
    assert_eq!(back, format!("{}/login", support::ORIGIN));
    let detail: Value = sqlx::query_scalar(
        "SELECT detail::jsonb FROM audit_log WHERE action = 'logout' ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&t.pool)
    .await
    .expect("the sign-out");
    assert_eq!(detail["at_provider"], true);

    // Turned off, or a password user: ours ends, the provider is not asked.
    let mut cfg = oidc::config(&p);
    if let Some(sso) = cfg.sso.as_mut() {
        sso.provider_logout = false;
    }
    let off = TestApp::with_config(pool, cfg).await;
    let cookie = signed_in(
        &oidc::sign_in(&off, &p, "/login/sso", None, "u-1").await,
        "/",
    );
    let r = off.post_form("/logout", Some(&cookie), &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(r.location(), "/login");
    off.user("bob", &[Role::Viewer]).await;
    let bob = off.login("bob", PASSWORD).await.expect("bob signs in");
    let r = off.post_form("/logout", Some(&bob), &[]).await;
    assert_eq!(r.location(), "/login");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_client_set_up_without_the_secret_its_provider_wants_is_refused_and_said_so(
    pool: sqlx::PgPool,
) {
    let p = Provider::start().await;
    p.set_user("u-1", person("alice", &["team-payments"])).await;
    // Registered at the provider as a confidential client, but the
    // console's settings leave its secret out (a public client's): the
    // provider refuses the code exchange, and the person is told the
    // console's registration is at fault (an admin's to fix).
    let (confidential, secret) = p.register_client("client_secret_basic").await;
    assert!(!secret.is_empty());
    let mut cfg = oidc::config(&p);
    if let Some(sso) = cfg.sso.as_mut() {
        sso.client_id = confidential.clone();
        sso.client_secret = None;
    }
    let t = TestApp::with_config(pool.clone(), cfg).await;
    let r = oidc::sign_in(&t, &p, "/login/sso", None, "u-1").await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(r.location(), "/login?sso=refused");
    assert!(r.cookie().is_none(), "no session");
    // A provider's error is what anyone could make happen: counted.
    assert_eq!(last_counted(&t).await, "provider error: invalid_client");
    let page = t.get("/login?sso=refused", None).await;
    assert!(
        page.body.contains("data-testid=\"sso-error\""),
        "{}",
        page.body
    );

    // With its secret, the same registration signs people in.
    let mut cfg = oidc::config(&p);
    if let Some(sso) = cfg.sso.as_mut() {
        sso.client_id = confidential;
        sso.client_secret = Some(secret);
    }
    let t = TestApp::with_config(pool, cfg).await;
    signed_in(&oidc::sign_in(&t, &p, "/login/sso", None, "u-1").await, "/");
    assert_eq!(teams_of(&t, "alice").await, ["payments"]);
}
