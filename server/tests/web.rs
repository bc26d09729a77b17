//! Sign-in, sessions, the security layers and the pages, through the real
//! router over a fresh Postgres per test.

mod support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use std::time::Duration;
use streamkeeper::role::Role;
use support::{ORIGIN, PASSWORD, TestApp, config};

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn nothing_answers_without_a_session(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let r = t.get("/", None).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(r.location(), "/login?next=%2F");
    let r = t.get("/settings/users?page=2", None).await;
    assert_eq!(r.location(), "/login?next=%2Fsettings%2Fusers%3Fpage%3D2");
    let r = t.get("/no/such/page", None).await;
    assert_eq!(
        r.status,
        StatusCode::SEE_OTHER,
        "even a 404 needs a session first"
    );
    for path in [
        "/api/v1/users",
        "/api/v1/me",
        "/api/v1/openapi.json",
        "/api/v1/audit",
    ] {
        let r = t.get(path, None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(r.json()["error"]["code"], "unauthenticated", "{path}");
    }
    let r = t.post_form("/fn/list_users", None, &[("page", "1")]).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = t.get("/login", None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body.contains("Sign in"), "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn wrong_password_fails_uniformly_and_is_audited(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("alice", &[Role::Viewer]).await;
    let wrong = t
        .post_form(
            "/login",
            None,
            &[("username", "alice"), ("password", "nope"), ("next", "/x")],
        )
        .await;
    let unknown = t
        .post_form(
            "/login",
            None,
            &[("username", "nobody"), ("password", "nope"), ("next", "/x")],
        )
        .await;
    assert_eq!(wrong.location(), "/login?error=1&next=%2Fx");
    assert_eq!(
        unknown.location(),
        wrong.location(),
        "same answer for unknown users"
    );
    assert!(wrong.cookie().is_none(), "no session for a failed login");
    assert_eq!(
        t.audit_actions().await,
        vec!["login.failure", "login.failure"]
    );
    let page = t.get(wrong.location(), None).await;
    assert!(
        page.body.contains("Invalid username or password"),
        "{}",
        page.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn login_sets_a_strict_cookie_and_rotates_the_session(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("alice", &[Role::Viewer]).await;
    let r = t
        .post_form(
            "/login",
            None,
            &[
                ("username", "alice"),
                ("password", PASSWORD),
                ("next", "/settings/teams"),
            ],
        )
        .await;
    assert_eq!(
        r.location(),
        "/settings/teams",
        "back to where the user was going"
    );
    let set = r.set_cookie_header();
    assert!(set.contains("HttpOnly"), "{set}");
    assert!(set.contains("SameSite=Strict"), "{set}");
    assert!(
        !set.contains("Secure"),
        "plain http: no Secure flag ({set})"
    );
    let first = r.cookie().expect("cookie");
    let home = t.get("/", Some(&first)).await;
    assert_eq!(home.status, StatusCode::OK);
    assert!(home.body.contains("Welcome, <!>alice"), "{}", home.body);

    // Signing in again, with the old session, gives a new id and kills the old one.
    let r = t
        .post_form(
            "/login",
            Some(&first),
            &[("username", "alice"), ("password", PASSWORD)],
        )
        .await;
    let second = r.cookie().expect("cookie");
    assert_ne!(first, second, "session id rotated at login");
    assert_eq!(t.get("/", Some(&first)).await.status, StatusCode::SEE_OTHER);
    assert_eq!(t.get("/", Some(&second)).await.status, StatusCode::OK);
    assert_eq!(
        t.audit_actions().await,
        vec!["login.success", "login.success"]
    );
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn https_uses_secure_host_cookie_and_hsts(pool: sqlx::PgPool) {
    let mut cfg = config();
    cfg.public_url = url::Url::parse("https://sk.example.com").expect("url");
    let t = TestApp::with_config(pool, cfg).await;
    t.user("alice", &[Role::Viewer]).await;
    let body = "username=alice&password=correct-horse-battery-staple";
    let req = Request::post("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ORIGIN, "https://sk.example.com")
        .body(Body::from(body))
        .expect("request");
    let r = t.send(req).await;
    let set = r.set_cookie_header();
    assert!(set.starts_with("__Host-streamkeeper="), "{set}");
    assert!(
        set.contains("Secure") && set.contains("Path=/") && !set.contains("Domain"),
        "{set}"
    );
    assert!(r.headers.get(header::STRICT_TRANSPORT_SECURITY).is_some());
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn logout_ends_the_session(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("alice", &[Role::Viewer]).await;
    let c = t.login("alice", PASSWORD).await.expect("signed in");
    let r = t.post_form("/logout", Some(&c), &[]).await;
    assert_eq!(r.location(), "/login");
    assert_eq!(t.get("/", Some(&c)).await.status, StatusCode::SEE_OTHER);
    assert_eq!(t.audit_actions().await, vec!["login.success", "logout"]);
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn every_response_carries_security_headers(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    for r in [t.get("/login", None).await, t.get("/api/v1/me", None).await] {
        let csp = r.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .expect("csp");
        assert!(
            csp.contains("frame-ancestors 'none'") && csp.contains("'nonce-"),
            "{csp}"
        );
        assert_eq!(r.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(r.headers[header::REFERRER_POLICY], "same-origin");
        assert!(
            r.headers.get(header::STRICT_TRANSPORT_SECURITY).is_none(),
            "no HSTS on http"
        );
    }
    // The hydration script carries the response's nonce.
    let r = t.get("/login", None).await;
    let csp = r.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .expect("csp");
    let nonce = csp
        .split("'nonce-")
        .nth(1)
        .and_then(|s| s.split('\'').next())
        .expect("nonce");
    assert!(r.body.contains(&format!("nonce=\"{nonce}\"")), "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn cross_site_posts_are_refused_and_recorded(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let alice = t.user("alice", &[Role::Admin]).await;
    let c = t.login("alice", PASSWORD).await.expect("signed in");
    let forged = Request::post("/fn/create_team")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::COOKIE, &c)
        .header(header::ORIGIN, "https://evil.example")
        .body(Body::from("name=evil&description="))
        .expect("request");
    let r = t.send(forged).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.json()["error"]["code"], "cross_site");
    let forged = Request::post("/logout")
        .header(header::COOKIE, &c)
        .header("sec-fetch-site", "cross-site")
        .body(Body::empty())
        .expect("request");
    assert_eq!(t.send(forged).await.status, StatusCode::FORBIDDEN);
    // Still signed in, no team created, both attempts on record.
    assert_eq!(t.get("/", Some(&c)).await.status, StatusCode::OK);
    let token = t.token(alice).await;
    let teams = t.api(Method::GET, "/api/v1/teams", &token, None).await;
    assert_eq!(teams.json()["total"], 0);
    let actions = t.audit_actions().await;
    assert_eq!(
        actions
            .iter()
            .filter(|a| *a == "request.cross_site")
            .count(),
        2
    );
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn logins_are_throttled_per_account(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("alice", &[Role::Viewer]).await;
    for _ in 0..10 {
        assert!(t.login("alice", "wrong-password").await.is_none());
    }
    // The right password no longer helps, and the answer is the same.
    assert!(t.login("alice", PASSWORD).await.is_none());
    let reasons: Vec<String> =
        sqlx::query_scalar("SELECT detail FROM audit_log ORDER BY id DESC LIMIT 1")
            .fetch_all(&t.pool)
            .await
            .expect("audit");
    assert!(reasons[0].contains("throttled"), "{reasons:?}");
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn disabling_or_demoting_a_user_ends_their_sessions(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("root", &[Role::Admin]).await;
    let bob = t.user("bob", &[Role::Viewer, Role::Owner]).await;
    let token = t.token(admin).await;
    let c = t.login("bob", PASSWORD).await.expect("signed in");
    let r = t
        .api(
            Method::PATCH,
            &format!("/api/v1/users/{bob}"),
            &token,
            Some(serde_json::json!({"roles": ["viewer"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t.get("/", Some(&c)).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(r.location(), "/login?next=%2F&expired=1");

    let c = t.login("bob", PASSWORD).await.expect("signed in again");
    let r = t
        .api(
            Method::PATCH,
            &format!("/api/v1/users/{bob}"),
            &token,
            Some(serde_json::json!({"disabled": true})),
        )
        .await;
    assert_eq!(r.json()["disabled"], true);
    assert_eq!(t.get("/", Some(&c)).await.status, StatusCode::SEE_OTHER);
    assert!(
        t.login("bob", PASSWORD).await.is_none(),
        "a disabled user cannot sign in"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn sessions_have_an_absolute_lifetime(pool: sqlx::PgPool) {
    let mut cfg = config();
    // Seconds, not one: a loaded machine can take a second between steps.
    cfg.session_max = Duration::from_secs(3);
    let t = TestApp::with_config(pool, cfg).await;
    t.user("alice", &[Role::Viewer]).await;
    let c = t.login("alice", PASSWORD).await.expect("signed in");
    assert_eq!(t.get("/", Some(&c)).await.status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(4100)).await;
    assert_eq!(t.get("/", Some(&c)).await.status, StatusCode::SEE_OTHER);
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn viewers_see_no_settings(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("vic", &[Role::Viewer]).await;
    t.user("ada", &[Role::Admin]).await;
    let viewer = t.login("vic", PASSWORD).await.expect("signed in");
    let admin = t.login("ada", PASSWORD).await.expect("signed in");
    let home = t.get("/", Some(&viewer)).await;
    assert!(
        !home.body.contains("/settings/users"),
        "no admin links for a viewer"
    );
    let home = t.get("/", Some(&admin)).await;
    assert!(home.body.contains("/settings/users"));
    for path in ["/settings/users", "/settings/teams", "/settings/audit"] {
        let r = t.get(path, Some(&viewer)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}");
        assert!(r.body.contains("You are not allowed"), "{path}");
        assert_eq!(
            t.get(path, Some(&admin)).await.status,
            StatusCode::OK,
            "{path}"
        );
    }
    // Server functions check the role too, not only the pages.
    let r = t
        .post_form(
            "/fn/create_team",
            Some(&viewer),
            &[("name", "x"), ("description", "")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn forms_work_without_javascript(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("ada", &[Role::Admin]).await;
    let c = t.login("ada", PASSWORD).await.expect("signed in");
    // A plain form post (Accept: text/html, Referer) redirects back to the page.
    let send = |body: &'static str| {
        Request::post("/fn/create_team")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "text/html")
            .header(header::REFERER, format!("{ORIGIN}/settings/teams"))
            .header(header::ORIGIN, ORIGIN)
            .header(header::COOKIE, &c)
            .body(Body::from(body))
            .expect("request")
    };
    let r = t
        .send(send("name=payments&description=Payments+team"))
        .await;
    assert_eq!(r.status, StatusCode::FOUND);
    assert_eq!(
        r.location().trim_end_matches('?'),
        format!("{ORIGIN}/settings/teams")
    );
    let page = t.get("/settings/teams", Some(&c)).await;
    assert!(page.body.contains("payments"), "{}", page.body);
    // An error comes back in the URL and shows on the page.
    let r = t.send(send("name=payments&description=again")).await;
    let back = r
        .location()
        .strip_prefix(ORIGIN)
        .expect("same origin")
        .to_string();
    assert!(back.contains("__err="), "{back}");
    let page = t.get(&back, Some(&c)).await;
    assert!(
        page.body.contains("A team named payments already exists."),
        "{}",
        page.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn malformed_input_is_a_400_and_unknown_routes_404(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let c = t.login("ada", PASSWORD).await.expect("signed in");
    let r = t
        .post_form("/fn/create_team", Some(&c), &[("nonsense", "1")])
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = t.post_form("/login", None, &[("user", "x")]).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "bad_request");
    let r = t.get("/no/such/page", Some(&c)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.body.contains("Page not found"));
    let token = t.token(admin).await;
    let r = t.api(Method::GET, "/api/v1/nothing", &token, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.json()["error"]["code"], "not_found");
    let r = t.get("/settings/users/not-a-number", Some(&c)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[sqlx::test(migrator = "streamkeeper_server::db::MIGRATOR")]
async fn admins_test_and_add_clusters_in_settings(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("ada", &[Role::Admin]).await;
    t.user("vic", &[Role::Viewer]).await;
    let admin = t.login("ada", PASSWORD).await.expect("signed in");
    let viewer = t.login("vic", PASSWORD).await.expect("signed in");
    assert_eq!(
        t.get("/settings/clusters", Some(&viewer)).await.status,
        StatusCode::FORBIDDEN
    );
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = dead.local_addr().expect("addr").port();
    drop(dead);
    // The connection test is a GET form: its report renders without wasm.
    let page = t
        .get(
            &format!("/settings/clusters?bootstrap=127.0.0.1%3A{port}&security_protocol=PLAINTEXT"),
            Some(&admin),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("Could not reach the cluster."),
        "{}",
        page.body
    );
    let page = t
        .get("/settings/clusters?bootstrap=x.example%3A9092&security_protocol=SASL_SSL&username_ref=apikey&password_ref=env%3AX", Some(&admin))
        .await;
    assert!(
        page.body.contains("reference like env:"),
        "credentials must be references: {}",
        page.body
    );

    let form = [
        ("name", "prod-eu"),
        ("bootstrap", "127.0.0.1:9092"),
        ("security_protocol", "PLAINTEXT"),
        ("sasl_mechanism", ""),
        ("username_ref", ""),
        ("password_ref", ""),
        ("interval_s", "15"),
    ];
    let r = t.post_form("/fn/add_cluster", Some(&viewer), &form).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t.post_form("/fn/add_cluster", Some(&admin), &form).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let list = t.get("/clusters", Some(&viewer)).await;
    assert!(
        list.body.contains("prod-eu") && list.body.contains("UNKNOWN"),
        "{}",
        list.body
    );
}
