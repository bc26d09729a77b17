//! A user's own account against real Postgres, through the same HTTP
//! stack as the browser: changing one's password needs the current one
//! (wrong ones refused, audited and throttled), ends the other sessions and
//! revokes the tokens; a password an admin set must be changed before
//! anything else answers; the TOTP second factor makes sign-in two steps,
//! accepts a code once, and takes each recovery code once; an admin resets
//! it for a lost device.

mod support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::second_factor::{STEP_SECONDS, time_step};
use support::{ORIGIN, PASSWORD, Reply, TestApp};

const NEW_PASSWORD: &str = "umbrella-quartz-meadow-lantern";

/// A same-origin JSON request with a session, as the browser's REST calls.
async fn session_json(t: &TestApp, method: Method, path: &str, cookie: &str, body: Value) -> Reply {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header(header::COOKIE, cookie)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ORIGIN, ORIGIN)
        .header("sec-fetch-site", "same-origin")
        .body(Body::from(body.to_string()))
        .expect("request");
    t.send(req).await
}

/// A server function called as the hydrated page calls it (JSON back).
async fn server_fn(t: &TestApp, name: &str, cookie: &str, form: &[(&str, &str)]) -> Reply {
    t.post_form(&format!("/fn/{name}"), Some(cookie), form)
        .await
}

async fn count(t: &TestApp, action: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = $1")
        .bind(action)
        .fetch_one(&t.pool)
        .await
        .expect("audit")
}

async fn tallied(t: &TestApp, action: &str) -> i64 {
    sqlx::query_scalar::<_, Option<i64>>(
        "SELECT sum(count)::bigint FROM audit_refusals WHERE action = $1",
    )
    .bind(action)
    .fetch_one(&t.pool)
    .await
    .expect("refusals")
    .unwrap_or(0)
}

/// Every audit detail, as text: nothing typed may be in there.
async fn all_details(t: &TestApp) -> String {
    let rows: Vec<String> = sqlx::query_scalar("SELECT detail::text FROM audit_log")
        .fetch_all(&t.pool)
        .await
        .expect("audit");
    rows.join("\n")
}

fn code_at(secret: &str, step: u64) -> String {
    let bytes = totp_rs::Secret::try_from_base32(secret).expect("base32");
    let totp = totp_rs::Builder::new()
        .with_secret(bytes.as_ref().to_vec())
        .build()
        .expect("totp");
    totp.generate(step * STEP_SECONDS).to_string()
}

fn now_step() -> u64 {
    time_step(chrono::Utc::now().timestamp())
}

async fn me(t: &TestApp, cookie: &str) -> StatusCode {
    t.get("/api/v1/me", Some(cookie)).await.status
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_password_change_needs_the_current_one_and_ends_the_other_sessions(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let alice = t.user("alice", &[Role::Viewer]).await;
    let token = t.token(alice).await;
    let here = t.login("alice", PASSWORD).await.expect("signs in");
    let elsewhere = t.login("alice", PASSWORD).await.expect("signs in again");
    assert_eq!(me(&t, &elsewhere).await, StatusCode::OK);

    let change =
        |current: &str, new: &str| json!({"current_password": current, "new_password": new});
    let r = session_json(
        &t,
        Method::POST,
        "/api/v1/me/password",
        &here,
        change("wrong-guess-1234", NEW_PASSWORD),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(
        r.body.contains("The current password is not right"),
        "{}",
        r.body
    );
    assert_eq!(
        count(&t, "account.password.refused").await,
        1,
        "the refusal is audited"
    );
    assert_eq!(count(&t, "request.refused").await, 0, "once");

    let r = session_json(
        &t,
        Method::POST,
        "/api/v1/me/password",
        &here,
        change(PASSWORD, "password1234"),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "the policy holds: {}",
        r.body
    );

    // A token cannot change it, even with the current password.
    let r = t
        .api(
            Method::POST,
            "/api/v1/me/password",
            &token,
            Some(change(PASSWORD, NEW_PASSWORD)),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    let doc = t
        .api(Method::GET, "/api/v1/openapi.json", &token, None)
        .await
        .json();
    assert!(
        doc["paths"].get("/api/v1/me/password").is_some(),
        "documented"
    );
    assert!(
        doc["paths"]
            .get("/api/v1/users/{id}/second-factor")
            .is_some()
    );
    let r = session_json(
        &t,
        Method::POST,
        "/api/v1/me/password",
        &here,
        change(PASSWORD, NEW_PASSWORD),
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(
        me(&t, &here).await,
        StatusCode::OK,
        "this session stays signed in"
    );
    assert_eq!(
        me(&t, &elsewhere).await,
        StatusCode::UNAUTHORIZED,
        "the other one ended"
    );
    let r = t.api(Method::GET, "/api/v1/me", &token, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "the token is revoked");
    assert!(
        t.login("alice", PASSWORD).await.is_none(),
        "the old password is gone"
    );
    assert!(t.login("alice", NEW_PASSWORD).await.is_some());
    assert_eq!(count(&t, "account.password").await, 1);
    let details = all_details(&t).await;
    assert!(
        !details.contains(NEW_PASSWORD) && !details.contains(PASSWORD),
        "{details}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_change_password_form_works_and_wrong_current_passwords_are_throttled(
    pool: sqlx::PgPool,
) {
    let t = TestApp::new(pool).await;
    t.user("alice", &[Role::Viewer]).await;
    let here = t.login("alice", PASSWORD).await.expect("signs in");
    let page = t.get("/account", Some(&here)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("/fn/change_password"),
        "the form posts to the server function"
    );

    let form = |current: &'static str| {
        [
            ("current_password", current),
            ("new_password", NEW_PASSWORD),
            ("confirm_password", NEW_PASSWORD),
        ]
    };
    let r = server_fn(&t, "change_password", &here, &form("wrong-guess-1234")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    // Sign-in's budget: ten failures, and the eleventh locks the account
    // for a minute, right or wrong (signing in cost nothing).
    for _ in 0..10 {
        server_fn(&t, "change_password", &here, &form("wrong-guess-1234")).await;
    }
    let r = server_fn(&t, "change_password", &here, &form(PASSWORD)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(
        r.body
            .contains("Too many failed attempts for this account: it is locked for"),
        "{}",
        r.body
    );
    assert!(
        t.login("alice", NEW_PASSWORD).await.is_none(),
        "nothing changed"
    );
    assert!(count(&t, "account.password.refused").await >= 10);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_password_an_admin_set_must_be_changed_first(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("root", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/users",
            &at,
            Some(json!({"username": "nina", "password": PASSWORD, "roles": ["viewer"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.json()["must_change_password"], true);
    let nina = r.json()["id"].as_i64().expect("id");

    let r = t
        .post_form(
            "/login",
            None,
            &[
                ("username", "nina"),
                ("password", PASSWORD),
                ("next", "/streams"),
            ],
        )
        .await;
    assert_eq!(
        r.location(),
        "/account",
        "sign-in lands on the account page"
    );
    let cookie = r.cookie().expect("signed in");
    let r = t.get("/streams", Some(&cookie)).await;
    assert_eq!(
        (r.status, r.location()),
        (StatusCode::SEE_OTHER, "/account"),
        "pages redirect"
    );
    let r = t.get("/api/v1/me", Some(&cookie)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.json()["error"]["code"], "password_change_required");
    assert!(
        r.body.contains("/account"),
        "the answer names the page: {}",
        r.body
    );
    let r = server_fn(&t, "list_streams", &cookie, &[]).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.json()["error"]["code"], "password_change_required");
    assert_eq!(
        count(&t, "password_change.required").await,
        2,
        "refusals are audited"
    );
    let page = t.get("/account", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("must-change"), "the page says why");

    let r = server_fn(
        &t,
        "change_password",
        &cookie,
        &[
            ("current_password", PASSWORD),
            ("new_password", NEW_PASSWORD),
            ("confirm_password", NEW_PASSWORD),
        ],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(me(&t, &cookie).await, StatusCode::OK, "free to go");
    assert_eq!(
        t.get("/streams", Some(&cookie)).await.status,
        StatusCode::OK
    );

    // An admin's new password is temporary again; signing out still works.
    let r = t
        .api(
            Method::PATCH,
            &format!("/api/v1/users/{nina}"),
            &at,
            Some(json!({"password": PASSWORD})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        me(&t, &cookie).await,
        StatusCode::UNAUTHORIZED,
        "her sessions ended"
    );
    let cookie = t.login("nina", PASSWORD).await.expect("signs in");
    assert_eq!(
        t.get("/api/v1/me", Some(&cookie)).await.status,
        StatusCode::FORBIDDEN
    );
    let r = t.post_form("/logout", Some(&cookie), &[]).await;
    assert_eq!(r.location(), "/login");
    assert!(!all_details(&t).await.contains(PASSWORD));
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_cli_sets_temporary_passwords_only_when_asked(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    for (name, temporary) in [("scripted", false), ("handed-over", true)] {
        streamkeeper_server::accounts::cli::user(
            &t.pool,
            streamkeeper_server::accounts::cli::UserCommand::Add {
                username: name.into(),
                display_name: String::new(),
                roles: vec![Role::Viewer],
                password_stdin: false,
                temporary,
            },
        )
        .await
        .expect("user add");
        let must: bool =
            sqlx::query_scalar("SELECT must_change_password FROM users WHERE username = $1")
                .bind(name)
                .fetch_one(&t.pool)
                .await
                .expect("user");
        assert_eq!(must, temporary, "{name}");
    }
}

/// Enrols the signed-in user through the account page's server functions;
/// answers the secret, the recovery codes and the step the enrolment used.
async fn enrol(t: &TestApp, cookie: &str) -> (String, Vec<String>, u64) {
    let r = server_fn(t, "start_second_factor", cookie, &[]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = server_fn(t, "account_status", cookie, &[]).await;
    let pending = r.json()["pending"].clone();
    let secret = pending["secret_base32"]
        .as_str()
        .expect("secret")
        .to_owned();
    let codes: Vec<String> = pending["recovery_codes"]
        .as_array()
        .expect("codes")
        .iter()
        .filter_map(|c| c.as_str().map(str::to_owned))
        .collect();
    assert_eq!(codes.len(), 10);
    let r = server_fn(t, "confirm_second_factor", cookie, &[("code", "000000")]).await;
    assert_eq!(
        r.status,
        StatusCode::FORBIDDEN,
        "a wrong code does not enrol: {}",
        r.body
    );
    let step = now_step();
    let r = server_fn(
        t,
        "confirm_second_factor",
        cookie,
        &[("code", &code_at(&secret, step))],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = server_fn(t, "account_status", cookie, &[]).await;
    assert_eq!(r.json()["second_factor"], true);
    assert!(
        r.json()["pending"].is_null(),
        "nothing secret is shown again"
    );
    (secret, codes, step)
}

/// Signs in with the password: answers the pending session's cookie.
async fn password_step(t: &TestApp, user: &str) -> String {
    let r = t
        .post_form(
            "/login",
            None,
            &[
                ("username", user),
                ("password", PASSWORD),
                ("next", "/streams"),
            ],
        )
        .await;
    assert_eq!(
        r.location(),
        "/login/code?next=%2Fstreams",
        "the code comes next"
    );
    r.cookie().expect("a pending session")
}

async fn code_step(t: &TestApp, pending: &str, code: &str) -> Reply {
    t.post_form("/login/code", Some(pending), &[("code", code)])
        .await
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_totp_sign_in_takes_a_code_once(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("tess", &[Role::Viewer]).await;
    let cookie = t.login("tess", PASSWORD).await.expect("signs in");
    let (secret, _, step) = enrol(&t, &cookie).await;
    assert_eq!(count(&t, "account.second_factor.enable").await, 1);
    let details = all_details(&t).await;
    assert!(!details.contains(&secret), "{details}");

    let pending = password_step(&t, "tess").await;
    assert_eq!(
        me(&t, &pending).await,
        StatusCode::UNAUTHORIZED,
        "not signed in yet"
    );
    let r = t.get("/streams", Some(&pending)).await;
    assert!(r.location().starts_with("/login"), "{}", r.location());

    // The enrolment's code is used up, and so is a wrong one.
    let r = code_step(&t, &pending, &code_at(&secret, step)).await;
    assert_eq!(
        r.location(),
        "/login/code?error=1&next=%2Fstreams",
        "a replay is refused"
    );
    let r = code_step(&t, &pending, "123456").await;
    assert!(r.location().starts_with("/login/code?error=1"));
    assert_eq!(
        tallied(&t, "login.second_factor.failure").await,
        2,
        "counted"
    );

    let next = code_at(&secret, step + 1);
    let r = code_step(&t, &pending, &next).await;
    assert_eq!(r.location(), "/streams", "{}", r.body);
    let signed_in = r.cookie().expect("a new session");
    assert_ne!(signed_in, pending, "a new session id");
    assert_eq!(me(&t, &signed_in).await, StatusCode::OK);

    // The same code a second time, in another sign-in, is refused.
    let again = password_step(&t, "tess").await;
    let r = code_step(&t, &again, &next).await;
    assert!(
        r.location().starts_with("/login/code?error=1"),
        "{}",
        r.location()
    );
    assert_eq!(me(&t, &again).await, StatusCode::UNAUTHORIZED);

    // Without the password first, a code signs nobody in.
    let r = t
        .post_form(
            "/login/code",
            None,
            &[("code", &code_at(&secret, now_step()))],
        )
        .await;
    assert_eq!(r.location(), "/login?expired=1");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_recovery_code_works_once_and_disabling_needs_password_and_code(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("tess", &[Role::Viewer]).await;
    let cookie = t.login("tess", PASSWORD).await.expect("signs in");
    let (_, codes, _) = enrol(&t, &cookie).await;
    let details = all_details(&t).await;
    assert!(
        codes.iter().all(|c| !details.contains(c.as_str())),
        "{details}"
    );

    let pending = password_step(&t, "tess").await;
    let r = code_step(&t, &pending, &codes[0].to_lowercase()).await;
    assert_eq!(r.location(), "/streams", "a recovery code signs in");
    let signed_in = r.cookie().expect("session");
    let pending = password_step(&t, "tess").await;
    let r = code_step(&t, &pending, &codes[0]).await;
    assert!(r.location().starts_with("/login/code?error=1"), "but once");
    let r = server_fn(&t, "account_status", &signed_in, &[]).await;
    assert_eq!(r.json()["recovery_codes_left"], 9);

    let r = server_fn(
        &t,
        "disable_second_factor",
        &signed_in,
        &[("password", PASSWORD), ("code", "000000")],
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = server_fn(
        &t,
        "disable_second_factor",
        &signed_in,
        &[("password", "wrong-guess-1234"), ("code", &codes[1])],
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    // Both, and the wrong code the enrolment was first given.
    assert_eq!(count(&t, "account.second_factor.refused").await, 3);
    let r = server_fn(
        &t,
        "disable_second_factor",
        &signed_in,
        &[("password", PASSWORD), ("code", &codes[1])],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // (Sign-in's budget is spent by now: the account page says it.)
    let r = server_fn(&t, "account_status", &signed_in, &[]).await;
    assert_eq!(r.json()["second_factor"], false, "one step again");
    assert_eq!(r.json()["recovery_codes_left"], 0);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_admin_resets_a_lost_second_factor(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("root", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let tess = t.user("tess", &[Role::Viewer]).await;
    let cookie = t.login("tess", PASSWORD).await.expect("signs in");
    enrol(&t, &cookie).await;
    let path = format!("/api/v1/users/{tess}/second-factor");
    let r = t
        .api(Method::DELETE, &path, &t.token(viewer).await, None)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        count(&t, "request.refused").await,
        1,
        "the refusal is audited"
    );
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/users/{tess}"),
            &t.token(admin).await,
            None,
        )
        .await;
    assert_eq!(r.json()["user"]["second_factor"], true);
    assert!(
        !r.body.contains("secret"),
        "no secret in what admins read: {}",
        r.body
    );
    let r = t
        .api(Method::DELETE, &path, &t.token(admin).await, None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(count(&t, "user.second_factor.reset").await, 1);
    let r = t
        .post_form(
            "/login",
            None,
            &[("username", "tess"), ("password", PASSWORD), ("next", "/")],
        )
        .await;
    assert_eq!(r.location(), "/", "the password alone signs in again");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn admins_route_flags_in_settings_and_unrouted_trouble_is_warned_about(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("ada", &[Role::Admin]).await;
    t.user("vic", &[Role::Viewer]).await;
    let admin = t.login("ada", PASSWORD).await.expect("ada signs in");
    let viewer = t.login("vic", PASSWORD).await.expect("vic signs in");
    let r = server_fn(
        &t,
        "create_team",
        &admin,
        &[("name", "platform"), ("description", "")],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let team: i64 = sqlx::query_scalar("SELECT id FROM teams WHERE name = 'platform'")
        .fetch_one(&t.pool)
        .await
        .expect("team");

    // Nobody receives unowned flags yet: the teams and flags pages say so.
    let teams = t.get("/settings/teams", Some(&admin)).await;
    assert!(
        teams.body.contains("data-testid=\"no-platform-team\""),
        "{}",
        teams.body
    );
    let flags = t.get("/flags", Some(&viewer)).await;
    assert!(
        flags.body.contains("data-testid=\"no-platform-team\""),
        "{}",
        flags.body
    );

    // The webhook is set in the browser; only its host is shown back.
    let hook = "http://127.0.0.1:9/services/T000/B000/very-secret-token";
    let tid = team.to_string();
    let r = server_fn(
        &t,
        "set_team_webhook",
        &admin,
        &[("team_id", &tid), ("url", hook)],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = t
        .get(&format!("/settings/teams/{team}"), Some(&admin))
        .await;
    assert!(
        page.body.contains("a webhook at 127.0.0.1"),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains("very-secret-token"),
        "the URL is never shown back"
    );
    // A viewer cannot set one, and the refusal says why.
    let r = server_fn(
        &t,
        "set_team_webhook",
        &viewer,
        &[("team_id", &tid), ("url", hook)],
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let before = count(&t, "request.refused").await;
    let r = server_fn(&t, "set_platform_team", &viewer, &[("team", "platform")]).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        count(&t, "request.refused").await,
        before + 1,
        "a refused setting is audited"
    );
    assert!(before >= 1, "so was the refused webhook");

    // Made the platform team: the warnings go.
    let r = server_fn(&t, "set_platform_team", &admin, &[("team", "platform")]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let teams = t.get("/settings/teams", Some(&admin)).await;
    assert!(!teams.body.contains("no-platform-team"), "{}", teams.body);
    assert!(teams.body.contains("receives them"), "{}", teams.body);
    let flags = t.get("/flags", Some(&viewer)).await;
    assert!(!flags.body.contains("no-platform-team"), "{}", flags.body);
    assert_eq!(count(&t, "team.webhook").await, 1);
    assert_eq!(count(&t, "settings.platform_team").await, 1);
    assert!(
        !all_details(&t).await.contains("very-secret-token"),
        "the audit keeps the host only"
    );

    // Cleared in the browser too.
    let r = server_fn(
        &t,
        "set_team_webhook",
        &admin,
        &[("team_id", &tid), ("url", "")],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = t
        .get(&format!("/settings/teams/{team}"), Some(&admin))
        .await;
    assert!(page.body.contains("No webhook"), "{}", page.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn each_reader_sees_times_in_the_zone_they_chose(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let ada_id = t.user("ada", &[Role::Admin]).await;
    t.user("bob", &[Role::Admin]).await;
    let ada = t.login("ada", PASSWORD).await.expect("ada signs in");
    let bob = t.login("bob", PASSWORD).await.expect("bob signs in");

    // UTC until chosen; the account page offers the zones, UTC selected.
    let page = t.get("/account", Some(&ada)).await;
    assert!(
        page.body.contains("data-testid=\"time-zone\"")
            && page.body.contains("<option value=\"UTC\" selected")
            && page.body.contains("<option value=\"Asia/Kolkata\""),
        "{}",
        page.body
    );

    // An unknown zone is refused with a reason, and nothing changes.
    let r = server_fn(&t, "set_time_zone", &ada, &[("time_zone", "Mars/Olympus")]).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        r.body.contains("not a time zone this server knows"),
        "{}",
        r.body
    );
    let r = server_fn(&t, "set_time_zone", &ada, &[("time_zone", "Asia/Kolkata")]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = t.get("/account", Some(&ada)).await;
    assert!(
        page.body
            .contains("<option value=\"Asia/Kolkata\" selected"),
        "{}",
        page.body
    );

    // The audit page shows ada's sign-in at Kolkata's time (UTC+5:30, no
    // daylight saving) and bob, who chose nothing, at UTC.
    let signed_in: chrono::DateTime<chrono::Utc> = sqlx::query_scalar(
        "SELECT at FROM audit_log WHERE action = 'login.success' AND actor = 'ada' ORDER BY id DESC LIMIT 1",
    )
    .fetch_one(&t.pool)
    .await
    .expect("ada's sign-in");
    let kolkata = (signed_in + chrono::Duration::minutes(330))
        .format("%Y-%m-%d %H:%M:%S IST")
        .to_string();
    let utc = signed_in.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    let hers = t.get("/settings/audit", Some(&ada)).await;
    assert!(hers.body.contains(&kolkata), "{kolkata} in {}", hers.body);
    assert!(!hers.body.contains(&utc), "{}", hers.body);
    let his = t.get("/settings/audit", Some(&bob)).await;
    assert!(his.body.contains(&utc), "{utc} in {}", his.body);

    // The API sets it too (a token acts for its owner); the change is
    // audited with what it was and what it became.
    let token = t.token(ada_id).await;
    let r = t
        .api(
            Method::PUT,
            "/api/v1/me/time-zone",
            &token,
            Some(json!({ "time_zone": "nowhere" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            "/api/v1/me/time-zone",
            &token,
            Some(json!({ "time_zone": "europe/berlin" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let details: Vec<Value> = sqlx::query_scalar(
        "SELECT detail::jsonb FROM audit_log WHERE action = 'account.time_zone' ORDER BY id",
    )
    .fetch_all(&t.pool)
    .await
    .expect("audit");
    assert_eq!(
        details,
        vec![
            json!({ "from": "UTC", "to": "Asia/Kolkata" }),
            json!({ "from": "Asia/Kolkata", "to": "Europe/Berlin" }),
        ]
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn each_person_sets_their_own_email_and_what_they_hear(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let ada_id = t.user("ada", &[Role::Approver]).await;
    let ada = t.login("ada", PASSWORD).await.expect("ada signs in");

    // Both kinds on, no address, until chosen.
    let page = t.get("/account", Some(&ada)).await;
    assert!(
        page.body.contains("data-testid=\"mail-preferences\""),
        "{}",
        page.body
    );

    // A bad address is a 422 with a reason, refused in the audit log
    // without what was typed, and nothing changes.
    let bad = "ada@example.com\r\nBcc: eve@example.com";
    let r = server_fn(
        &t,
        "set_mail_preferences",
        &ada,
        &[("email", bad), ("waiting", "on")],
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(count(&t, "account.mail.refused").await, 1);
    assert!(!all_details(&t).await.contains("eve@example.com"));

    // The form as a browser without JS posts it: an unticked box is absent.
    let r = server_fn(
        &t,
        "set_mail_preferences",
        &ada,
        &[("email", " ada@example.com "), ("waiting", "on")],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let (email, waiting, outcomes): (Option<String>, bool, bool) =
        sqlx::query_as("SELECT email, mail_waiting, mail_outcomes FROM users WHERE id = $1")
            .bind(ada_id)
            .fetch_one(&t.pool)
            .await
            .expect("prefs");
    assert_eq!(
        (email.as_deref(), waiting, outcomes),
        (Some("ada@example.com"), true, false)
    );
    let page = t.get("/account", Some(&ada)).await;
    assert!(
        page.body.contains("value=\"ada@example.com\""),
        "{}",
        page.body
    );
    assert_eq!(count(&t, "account.mail").await, 1);
    assert!(
        !all_details(&t).await.contains("ada@example.com"),
        "the address is not audited"
    );

    // An empty address turns mail off.
    let r = server_fn(&t, "set_mail_preferences", &ada, &[("email", "")]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let email: Option<String> = sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
        .bind(ada_id)
        .fetch_one(&t.pool)
        .await
        .expect("email");
    assert_eq!(email, None);
}
