//! Sign-in, sessions, the security layers and the pages, through the real
//! router over a fresh Postgres per test.

mod support;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, StatusCode, header};
use std::net::SocketAddr;
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper_server::http::{AppState, router};
use support::{ORIGIN, PASSWORD, Reply, TestApp, config};
use tower_sessions_sqlx_store::PostgresStore;

/// The counted refusals: (source, action, count) per row.
async fn refusals(t: &TestApp) -> Vec<(String, String, i64)> {
    sqlx::query_as(
        "SELECT source, action, count FROM audit_refusals ORDER BY minute, source, action",
    )
    .fetch_all(&t.pool)
    .await
    .expect("refusals")
}

/// How many attempts the counted rows of `action` add up to.
fn counted(rows: &[(String, String, i64)], action: &str) -> i64 {
    rows.iter().filter(|r| r.1 == action).map(|r| r.2).sum()
}

/// A sign-in form posted over a connection from `peer`, through a proxy
/// when `forwarded_for` is given.
async fn login_from(
    t: &TestApp,
    peer: &str,
    forwarded_for: Option<&str>,
    username: &str,
    password: &str,
    next: &str,
) -> Reply {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("username", username),
            ("password", password),
            ("next", next),
        ])
        .finish();
    let mut b = Request::post("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ORIGIN, ORIGIN);
    if let Some(xff) = forwarded_for {
        b = b.header("x-forwarded-for", xff);
    }
    let mut req = b.body(Body::from(body)).expect("request");
    let peer: SocketAddr = peer.parse().expect("peer");
    req.extensions_mut().insert(ConnectInfo(peer));
    t.send(req).await
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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
    // Counted per source and minute beside the chain, not chained.
    assert!(t.audit_actions().await.is_empty());
    assert_eq!(counted(&refusals(&t).await, "login.failure"), 2);
    let page = t.get(wrong.location(), None).await;
    assert!(
        page.body.contains("Invalid username or password"),
        "{}",
        page.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn logout_ends_the_session(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("alice", &[Role::Viewer]).await;
    let c = t.login("alice", PASSWORD).await.expect("signed in");
    let r = t.post_form("/logout", Some(&c), &[]).await;
    assert_eq!(r.location(), "/login");
    assert_eq!(t.get("/", Some(&c)).await.status, StatusCode::SEE_OTHER);
    assert_eq!(t.audit_actions().await, vec!["login.success", "logout"]);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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
    // A page without an island loads no wasm (the island scripts carry the
    // nonce: tests/lineage.rs, the graph page).
    let r = t.get("/login", None).await;
    assert!(!r.body.contains("type=\"module\""), "{}", r.body);
    assert!(!r.body.contains(".wasm"), "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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
    assert_eq!(counted(&refusals(&t).await, "request.cross_site"), 2);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn logins_are_throttled_per_account(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("alice", &[Role::Viewer]).await;
    // Good sign-ins cost nothing: the twentieth in a minute still works.
    for _ in 0..20 {
        assert!(t.login("alice", PASSWORD).await.is_some());
    }
    // Ten failures are allowed; the eleventh locks the account.
    for _ in 0..11 {
        assert!(t.login("alice", "wrong-password").await.is_none());
    }
    // The right password no longer helps, and the page says for how long.
    let r = t
        .post_form(
            "/login",
            None,
            &[("username", "alice"), ("password", PASSWORD), ("next", "/")],
        )
        .await;
    assert!(
        r.location().starts_with("/login?error=1&locked="),
        "{}",
        r.location()
    );
    let page = t.get(r.location(), None).await;
    assert!(
        page.body.contains("it is locked for"),
        "the sign-in page says the account is locked: {}",
        page.body
    );
    let reasons: Vec<String> =
        sqlx::query_scalar("SELECT detail FROM audit_refusals ORDER BY last_at DESC LIMIT 1")
            .fetch_all(&t.pool)
            .await
            .expect("audit");
    assert!(reasons[0].contains("throttled"), "{reasons:?}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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
    // The page after it says what was done, once (the session's flash).
    let page = t.get("/settings/teams", Some(&c)).await;
    assert!(page.body.contains("payments"), "{}", page.body);
    assert!(
        page.body.contains(
            "<p role=\"status\" data-testid=\"flash\" class=\"ok\">Created team payments.</p>"
        ),
        "{}",
        page.body
    );
    let again = t.get("/settings/teams", Some(&c)).await;
    assert!(
        !again.body.contains("data-testid=\"flash\""),
        "{}",
        again.body
    );
    // No island on it: no wasm.
    assert!(!page.body.contains(".wasm"), "{}", page.body);
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

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn server_functions_refuse_unknown_list_choices_as_the_api_does(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("vic", &[Role::Viewer]).await;
    let c = t.login("vic", PASSWORD).await.expect("signed in");
    for (path, form, message) in [
        // The inbox used to show the waiting list for any scope.
        (
            "/fn/list_reviews",
            &[("scope", "bogus"), ("page", "1")][..],
            "unknown scope 'bogus' (one of: waiting, mine, all)",
        ),
        (
            "/fn/list_reviews",
            &[("kind", "connector"), ("page", "1")][..],
            "unknown kind 'connector' (one of: producer_change, schema_registration, connector_draft, connector_restart)",
        ),
        (
            "/fn/list_flags",
            &[("scope", "everyone"), ("page", "1")][..],
            "unknown scope 'everyone' (one of: mine, all)",
        ),
        // Streams used to ignore a status they did not know.
        (
            "/fn/list_streams",
            &[("status", "sideways"), ("page", "1")][..],
            "unknown status 'sideways' (one of: trouble, ok)",
        ),
    ] {
        let r = t.post_form(path, Some(&c), form).await;
        assert_eq!(
            r.status,
            StatusCode::BAD_REQUEST,
            "{path} {form:?}: {}",
            r.body
        );
        assert!(r.body.contains(message), "{path} {form:?}: {}", r.body);
    }
    for (path, form) in [
        ("/fn/list_reviews", &[("scope", "Mine"), ("page", "1")][..]),
        (
            "/fn/list_flags",
            &[("scope", "all"), ("state", "any"), ("page", "1")][..],
        ),
        ("/fn/list_flags", &[("page", "1")][..]),
        (
            "/fn/list_streams",
            &[("status", "TROUBLE"), ("page", "1")][..],
        ),
    ] {
        let r = t.post_form(path, Some(&c), form).await;
        assert_eq!(r.status, StatusCode::OK, "{path} {form:?}: {}", r.body);
    }
    // The pages pass the query through, and say what is wrong.
    let r = t.get("/flags?scope=everyone", Some(&c)).await;
    assert!(r.body.contains("unknown scope"), "{}", r.body);
    let r = t.get("/flags?scope=all&state=any", Some(&c)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(!r.body.contains("unknown scope"), "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
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
        page.body.contains("Could not reach the cluster.")
            && page
                .body
                .contains("nothing listens on that port (connection refused)"),
        "{}",
        page.body
    );
    // The form says beforehand what it tries and for how long (the browser
    // waits without JavaScript); the report, how far each step got.
    assert!(
        page.body.contains(
            "Testing: resolving the host, connecting, TLS, signing in, reading metadata — up to 5 s"
        ) && page.body.contains("Test connection (up to 5 s a step)"),
        "{}",
        page.body
    );
    for step in [
        "Resolving the bootstrap host: passed",
        "Connecting to its port: failed",
        "Reading metadata: not tried",
    ] {
        assert!(page.body.contains(step), "{step}: {}", page.body);
    }
    // The test tells the causes apart: a name that does not resolve, TLS
    // spoken to a listener that does not, a listener that never answers.
    let junk = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let junk_port = junk.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        use std::io::Write;
        for mut s in junk.incoming().flatten() {
            let _ = s.write_all(b"HTTP/1.0 400 not kafka\r\n\r\n");
        }
    });
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_port = silent.local_addr().expect("addr").port();
    let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        for s in silent.incoming().flatten() {
            if let Ok(mut k) = keep.lock() {
                k.push(s);
            }
        }
    });
    for (query, says, step) in [
        (
            "bootstrap=nohost.invalid%3A9092&security_protocol=PLAINTEXT".to_string(),
            "does not resolve (DNS)",
            "Resolving the bootstrap host: failed",
        ),
        (
            format!("bootstrap=127.0.0.1%3A{junk_port}&security_protocol=SSL"),
            "The TLS handshake failed",
            "The TLS handshake: failed",
        ),
        (
            format!("bootstrap=127.0.0.1%3A{silent_port}&security_protocol=PLAINTEXT"),
            "Nothing answered in time (timeout)",
            "Connecting to its port: no answer in time",
        ),
    ] {
        let page = t
            .get(&format!("/settings/clusters?{query}"), Some(&admin))
            .await;
        assert!(
            page.body.contains(says) && page.body.contains(step),
            "{query}: {}",
            page.body
        );
    }
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
    // Nothing listens there: adding tests first, and stops with the reason.
    let r = t.post_form("/fn/add_cluster", Some(&admin), &form).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(
        r.body
            .contains("The connection test failed, so prod-eu was not added")
            && r.body.contains("Add it even though the test fails"),
        "{}",
        r.body
    );
    let none: i64 = sqlx::query_scalar("SELECT count(*) FROM clusters WHERE name = 'prod-eu'")
        .fetch_one(&t.pool)
        .await
        .expect("count");
    assert_eq!(none, 0, "not added");
    // Asked to, it is added anyway, unreachable until it answers.
    let mut anyway = form.to_vec();
    anyway.push(("add_anyway", "yes"));
    let r = t.post_form("/fn/add_cluster", Some(&admin), &anyway).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let list = t.get("/clusters", Some(&viewer)).await;
    assert!(
        list.body.contains("prod-eu") && list.body.contains("UNKNOWN"),
        "{}",
        list.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_flood_of_refusals_leaves_a_few_counted_rows(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    t.user("alice", &[Role::Viewer]).await;
    // 1,000 forged posts, each with a 60 KB path.
    let long = format!("/fn/create_team/{}", "x".repeat(60_000));
    for _ in 0..1000 {
        let mut req = Request::post(long.as_str())
            .header("sec-fetch-site", "cross-site")
            .body(Body::from("name=evil"))
            .expect("request");
        req.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([203, 0, 113, 9], 4000))));
        assert_eq!(t.send(req).await.status, StatusCode::FORBIDDEN);
    }
    // 1,000 failed sign-ins from one address (most of them throttled).
    for i in 0..1000 {
        let r = login_from(
            &t,
            "203.0.113.9:4001",
            None,
            "alice",
            &format!("guess-{i}"),
            "/",
        )
        .await;
        assert!(
            r.location().starts_with("/login?error=1"),
            "{}",
            r.location()
        );
    }
    let rows = refusals(&t).await;
    // A minute may turn during the run: a row per minute, no more.
    assert!(rows.len() <= 4, "{rows:?}");
    assert!(rows.iter().all(|r| r.0 == "203.0.113.9"), "{rows:?}");
    assert_eq!(counted(&rows, "request.cross_site"), 1000);
    assert_eq!(counted(&rows, "login.failure"), 1000);
    let longest: i32 = sqlx::query_scalar("SELECT max(length(target)) FROM audit_refusals")
        .fetch_one(&t.pool)
        .await
        .expect("targets");
    assert!(longest <= 256, "targets clipped: {longest}");
    assert!(
        t.audit_actions().await.is_empty(),
        "nothing chained for them"
    );

    // Actions are still chained, and the chain still verifies.
    assert!(
        t.login("alice", PASSWORD).await.is_none(),
        "alice is throttled by now"
    );
    let token = t.token(admin).await;
    t.api(
        Method::POST,
        "/api/v1/teams",
        &token,
        Some(serde_json::json!({"name": "payments"})),
    )
    .await;
    assert_eq!(t.audit_actions().await, vec!["team.create"]);
    assert_eq!(
        streamkeeper_server::audit::store::verify(&t.pool, None)
            .await
            .expect("chain intact")
            .entries,
        1
    );
    // The counted rows can only count up.
    for sql in [
        "UPDATE audit_refusals SET count = 1",
        "DELETE FROM audit_refusals",
        "TRUNCATE audit_refusals",
    ] {
        assert!(sqlx::query(sql).execute(&t.pool).await.is_err(), "{sql}");
    }
    // Admins read them beside the chain, with the count and first/last time.
    let r = t
        .api(
            Method::GET,
            "/api/v1/audit/refusals?action=cross_site",
            &token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = r.json();
    let items = page["items"].as_array().cloned().unwrap_or_default();
    assert!(!items.is_empty(), "{page}");
    for item in &items {
        assert_eq!(item["source"], "203.0.113.9");
        assert!(item["first_at"].is_string() && item["last_at"].is_string());
    }
    let total: i64 = items.iter().filter_map(|i| i["count"].as_i64()).sum();
    assert_eq!(total, 1000);
    let c = t.login("ada", PASSWORD).await.expect("signed in");
    let screen = t.get("/settings/audit", Some(&c)).await;
    assert!(
        screen.body.contains("audit-refusals") && screen.body.contains("203.0.113.9"),
        "{}",
        screen.body
    );
    // Details read as key/value lines, not raw JSON.
    assert!(
        screen.body.contains(r#"<dl class="detail">"#),
        "{}",
        screen.body
    );
    assert!(
        !screen.body.contains(r#"<code class="detail">"#),
        "{}",
        screen.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn overlong_usernames_are_refused_before_any_budget(pool: sqlx::PgPool) {
    // Built by hand to look into the throttle.
    let state = AppState::new(pool.clone(), config());
    let store = PostgresStore::new(pool.clone());
    store.migrate().await.expect("session table");
    let t = TestApp {
        pool,
        app: router(state.clone(), store),
    };
    t.user("alice", &[Role::Viewer]).await;
    let huge = "a".repeat(2_000_000);
    for _ in 0..20 {
        let r = t
            .post_form(
                "/login",
                None,
                &[
                    ("username", huge.as_str()),
                    ("password", "x"),
                    ("next", "/"),
                ],
            )
            .await;
        assert_eq!(r.location(), "/login?error=1", "the uniform answer");
    }
    assert_eq!(state.limiter.keys(), 0, "no throttle key for them");
    // Counted per minute: the attempts may straddle a minute's end.
    let (target, detail, count): (String, String, i64) =
        sqlx::query_as("SELECT max(target), max(detail), sum(count)::bigint FROM audit_refusals")
            .fetch_one(&t.pool)
            .await
            .expect("counted");
    assert_eq!(target, format!("user:{}", "a".repeat(64)));
    assert!(detail.contains("username too long"), "{detail}");
    assert_eq!(count, 20);
    assert!(
        t.login("alice", PASSWORD).await.is_some(),
        "budgets untouched"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn behind_a_trusted_proxy_each_client_has_its_own_budget(pool: sqlx::PgPool) {
    let mut cfg = config();
    cfg.trusted_proxies = vec!["127.0.0.1/32".parse().expect("net")];
    let t = TestApp::with_config(pool, cfg).await;
    t.user("alice", &[Role::Viewer]).await;
    const PROXY: &str = "127.0.0.1:40000";
    // An attacker behind the proxy spends their address's budget, then
    // hammers alice's account; the client's claimed hop is ignored.
    for i in 0..60 {
        login_from(
            &t,
            PROXY,
            Some(&format!("1.1.1.{i}, 203.0.113.66")),
            &format!("guess{i}"),
            "x",
            "/",
        )
        .await;
    }
    for _ in 0..20 {
        login_from(&t, PROXY, Some("203.0.113.66"), "alice", "x", "/").await;
    }
    // Alice, behind the same proxy, signs in.
    let r = login_from(&t, PROXY, Some("198.51.100.5"), "alice", PASSWORD, "/").await;
    assert_eq!(r.location(), "/", "alice is not locked out");
    let sources: Vec<(String, String)> =
        sqlx::query_as("SELECT action, source FROM audit_log ORDER BY id")
            .fetch_all(&t.pool)
            .await
            .expect("audit");
    assert_eq!(
        sources,
        vec![("login.success".to_string(), "198.51.100.5".to_string())]
    );
    let rows = refusals(&t).await;
    assert!(rows.iter().all(|r| r.0 == "203.0.113.66"), "{rows:?}");
    assert_eq!(counted(&rows, "login.failure"), 80);
    // A peer that is not a trusted proxy cannot pick its address.
    let r = login_from(
        &t,
        "192.0.2.1:5000",
        Some("198.51.100.5"),
        "nobody",
        "x",
        "/",
    )
    .await;
    assert!(r.location().starts_with("/login?error=1"));
    let forged: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_refusals WHERE source = '192.0.2.1'")
            .fetch_one(&t.pool)
            .await
            .expect("refusals");
    assert_eq!(forged, 1);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn next_never_leaves_the_console(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("alice", &[Role::Viewer]).await;
    for bad in [
        "/%09/example.org",
        "/\t/example.org",
        "/%0d%0aSet-Cookie:x",
        "/\r\nSet-Cookie:x",
        "//example.org",
        "/\\example.org",
        "https://example.org/",
        // Dot segments that resolve to `//host` (issue 39).
        "/..//evil.example",
        "/a/..//evil.example",
        "/%2e%2e//evil.example",
        "/.//evil.example",
        "/%2E%2E/%2F/evil.example",
        "/..%2f%2fevil.example",
        "/%252e%252e//evil.example",
        "/../\\evil.example",
    ] {
        let r = t
            .post_form(
                "/login",
                None,
                &[("username", "alice"), ("password", PASSWORD), ("next", bad)],
            )
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{bad:?}: {}", r.body);
        assert_eq!(r.location(), "/", "{bad:?}");
    }
    let r = t
        .post_form(
            "/login",
            None,
            &[
                ("username", "alice"),
                ("password", PASSWORD),
                ("next", "/streams?page=2"),
            ],
        )
        .await;
    assert_eq!(r.location(), "/streams?page=2");
    // Look-alike slashes are not slashes to a browser: a path here.
    let r = t
        .post_form(
            "/login",
            None,
            &[
                ("username", "alice"),
                ("password", PASSWORD),
                ("next", "/\u{ff0f}\u{ff0f}evil.example"),
            ],
        )
        .await;
    assert_eq!(r.location(), "/%EF%BC%8F%EF%BC%8Fevil.example");
    // A failed sign-in does not carry a bad `next` along either.
    let r = t
        .post_form(
            "/login",
            None,
            &[
                ("username", "alice"),
                ("password", "wrong"),
                ("next", "/%09/example.org"),
            ],
        )
        .await;
    assert_eq!(r.location(), "/login?error=1");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_active_session_outlives_the_idle_timeout(pool: sqlx::PgPool) {
    let mut cfg = config();
    cfg.session_idle = Duration::from_secs(3);
    let t = TestApp::with_config(pool, cfg).await;
    t.user("alice", &[Role::Viewer]).await;
    let active = t.login("alice", PASSWORD).await.expect("signed in");
    let idle = t.login("alice", PASSWORD).await.expect("signed in");
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let r = t.get("/api/v1/me", Some(&active)).await;
        assert_eq!(r.status, StatusCode::OK, "in use, still signed in");
    }
    // Five seconds after sign-in: past the idle timeout for the other one.
    assert_eq!(
        t.get("/api/v1/me", Some(&idle)).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        t.get("/api/v1/me", Some(&active)).await.status,
        StatusCode::OK
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn refused_server_functions_are_audited(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("vic", &[Role::Viewer]).await;
    let c = t.login("vic", PASSWORD).await.expect("signed in");
    let r = t
        .post_form(
            "/fn/create_team",
            Some(&c),
            &[("name", "x"), ("description", "")],
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    // Without JavaScript the refusal comes back as a redirect, and is
    // audited all the same.
    let req = Request::post("/fn/create_team")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{ORIGIN}/settings/teams"))
        .header(header::ORIGIN, ORIGIN)
        .header(header::COOKIE, &c)
        .body(Body::from("name=y&description="))
        .expect("request");
    let r = t.send(req).await;
    assert_eq!(r.status, StatusCode::FOUND);
    assert!(r.location().contains("__err="), "{}", r.location());
    let rows: Vec<(String, String, String, String)> = sqlx::query_as(
        "SELECT actor, action, target, detail FROM audit_log WHERE action = 'request.refused' ORDER BY id",
    )
    .fetch_all(&t.pool)
    .await
    .expect("audit");
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (actor, _, target, detail) in &rows {
        assert_eq!(actor, "vic");
        assert_eq!(target, "POST /fn/create_team");
        assert!(detail.contains("create teams"), "{detail}");
    }
    // A refused read is not a write: not recorded.
    t.get("/settings/users", Some(&c)).await;
    assert_eq!(
        t.audit_actions().await.len(),
        3,
        "login and the two refusals"
    );
}

/// The home page per role: an admin sees what needs attention (a cluster
/// never read, no platform team), an owner their team's open flag and the
/// streams nobody owns, an approver what waits for them; each part says
/// what to do when it is empty, and nobody sees another role's part.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_home_page_shows_each_role_its_part(pool: sqlx::PgPool) {
    use streamkeeper::flags::{FlagKey, Observation};
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let owner = t.user("olivia", &[Role::Owner]).await;
    t.user("priya", &[Role::Approver]).await;
    t.user("vic", &[Role::Viewer]).await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ('main', '127.0.0.1:1', 'PLAINTEXT') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(&pool)
        .await
        .expect("team");
    sqlx::query("INSERT INTO memberships (team_id, user_id) VALUES ($1, $2)")
        .bind(team)
        .bind(owner)
        .execute(&pool)
        .await
        .expect("member");
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, 'orders', 1, now(), now()), ($1, 'clicks', 1, now(), now())",
    )
    .bind(cluster)
    .execute(&pool)
    .await
    .expect("topics");
    sqlx::query("INSERT INTO streams (cluster_id, topic, owner_team_id) VALUES ($1, 'orders', $2)")
        .bind(cluster)
        .bind(team)
        .execute(&pool)
        .await
        .expect("stream");
    let home = |who: &'static str| {
        let t = &t;
        async move {
            let c = t.login(who, PASSWORD).await.expect("signs in");
            let r = t.get("/", Some(&c)).await;
            assert_eq!(r.status, StatusCode::OK, "{who}: {}", r.body);
            r.body
        }
    };

    let a = home("ada").await;
    assert!(a.contains(r#"data-testid="no-platform-team""#), "{a}");
    let not_up = a
        .split(r#"data-testid="clusters-not-up""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{a}"));
    assert!(
        not_up.contains(">main<") && not_up.contains("UNKNOWN"),
        "{not_up}"
    );
    // A cluster read well and then paused is listed too: it is not watched.
    let edge: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ('edge', '127.0.0.1:2', 'PLAINTEXT') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let now = chrono::Utc::now();
    let good = streamkeeper_server::clients::kafka::reader::Reading {
        started: now,
        finished: now,
        brokers: 1,
        topics: Vec::new(),
        groups: Vec::new(),
        groups_listed: true,
        problems: Vec::new(),
        phases: Vec::new(),
        offsets_by: streamkeeper_server::clients::kafka::reader::OffsetsBy::Librdkafka(
            "a pass the test makes up".into(),
        ),
    };
    streamkeeper_server::watch::store::record_reading(&pool, edge, &good)
        .await
        .expect("pass");
    let a = home("ada").await;
    assert!(!a.contains(">edge<"), "an UP cluster is not listed: {a}");
    let mut conn = pool.acquire().await.expect("conn");
    streamkeeper_server::watch::store::set_paused(&mut conn, edge, Some("ada"))
        .await
        .expect("paused");
    let a = home("ada").await;
    let not_up = a
        .split(r#"data-testid="clusters-not-up""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{a}"));
    assert!(
        not_up.contains(">edge<")
            && not_up.contains("PAUSED")
            && not_up.contains("Not watched: paused since")
            && not_up.contains("by ada"),
        "{not_up}"
    );
    assert!(a.contains("Clusters not up or paused (2 of 2)"), "{a}");
    assert!(
        !a.contains("home-flags") && !a.contains("home-waiting"),
        "{a}"
    );

    // Olivia's team has no flag yet: the empty state says what comes here.
    let o = home("olivia").await;
    assert!(
        o.contains("Open flags of payments") && o.contains("None open."),
        "{o}"
    );
    assert!(o.contains("1 stream without an owner"), "{o}");
    assert!(
        o.contains("Your changes in review") && !o.contains("home-admin"),
        "{o}"
    );
    let row = streamkeeper_server::watch::store::by_id(&pool, cluster)
        .await
        .expect("read")
        .expect("cluster");
    let flag = Observation {
        key: FlagKey {
            subject_kind: "group".into(),
            subject: "billing".into(),
            rule: "lag".into(),
        },
        kind: "STOP".into(),
        reason: "billing stopped committing on orders".into(),
        onset_ms: chrono::Utc::now().timestamp_millis() - 60_000,
        evidence: serde_json::json!({}),
    };
    streamkeeper_server::flags::lifecycle::raise(
        &pool,
        row.id,
        &row.name,
        &flag,
        Some((team, "payments".into(), None)),
    )
    .await
    .expect("raise");
    let o = home("olivia").await;
    let flags = o
        .split(r#"data-testid="flag-list""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{o}"));
    assert!(
        flags.contains("billing stopped committing on orders"),
        "{flags}"
    );

    let p = home("priya").await;
    assert!(
        p.contains("Waiting for your approval") && p.contains("Nothing waits for you."),
        "{p}"
    );
    let v = home("vic").await;
    for part in ["home-admin", "home-flags", "home-waiting", "home-pilot"] {
        assert!(!v.contains(part), "{part}: {v}");
    }

    // With a platform team set, the warning goes.
    let at = t.token(admin).await;
    let r = t
        .api(
            Method::PUT,
            "/api/v1/settings/platform-team",
            &at,
            Some(serde_json::json!({"team": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert!(!home("ada").await.contains("no-platform-team"));
}

/// Forms that only admins may use are shown only to admins: an owner
/// reading Settings sees the refusal or the read-only table, never a
/// create-user form under "not allowed".
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn admin_forms_are_shown_only_to_admins(pool: sqlx::PgPool) {
    let t = TestApp::new(pool.clone()).await;
    t.user("ada", &[Role::Admin]).await;
    t.user("olivia", &[Role::Owner]).await;
    let ada = t.login("ada", PASSWORD).await.expect("ada");
    let olivia = t.login("olivia", PASSWORD).await.expect("olivia");
    for (path, form) in [
        ("/settings/users", r#"data-testid="create-user""#),
        ("/settings/teams", r#"data-testid="create-team""#),
        ("/settings/review", r#"data-testid="new-domain""#),
    ] {
        let admin = t.get(path, Some(&ada)).await;
        assert!(admin.body.contains(form), "{path}: admins get the form");
        let owner = t.get(path, Some(&olivia)).await;
        assert!(!owner.body.contains(form), "{path}: {}", owner.body);
    }
    let owner = t.get("/settings/users", Some(&olivia)).await;
    assert_eq!(owner.status, StatusCode::FORBIDDEN);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn settings_change_a_cluster_keeping_its_credentials_and_remove_it_by_name(
    pool: sqlx::PgPool,
) {
    let t = TestApp::new(pool).await;
    t.user("ada", &[Role::Admin]).await;
    let ada = t.login("ada", PASSWORD).await.expect("ada");
    let r = t
        .post_form(
            "/fn/add_cluster",
            Some(&ada),
            &[
                ("name", "cc"),
                ("bootstrap", "pkc-1.example:9092"),
                ("security_protocol", "SASL_SSL"),
                ("sasl_mechanism", "PLAIN"),
                ("username_ref", "env:STREAMKEEPER_CRED_CC_API_KEY"),
                ("password_ref", "file:/run/secrets/cc-api-secret"),
                ("interval_s", "15"),
                ("add_anyway", "yes"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let id = r.json()["id"].as_i64().expect("id").to_string();
    let page = t.get("/settings/clusters", Some(&ada)).await;
    assert!(
        page.body.contains(r#"data-cluster="cc""#) && page.body.contains("remove-cluster"),
        "{}",
        page.body
    );
    // The removal says what happens: the history kept until a date.
    let until = (chrono::Utc::now() + chrono::Duration::days(90))
        .format("%Y-%m-%d")
        .to_string();
    assert!(
        page.body.contains(&format!(
            "Its history is kept until {until}, then deleted; you can restore it until then."
        )),
        "{}",
        page.body
    );

    // Both references left blank: the credentials stay.
    // Dropping them, the cluster is reached over TLS alone.
    let edit = |interval: &'static str, drop: bool| {
        let mut form = vec![
            ("id", id.as_str()),
            ("bootstrap", "pkc-2.example:9092"),
            ("security_protocol", if drop { "SSL" } else { "SASL_SSL" }),
            ("sasl_mechanism", if drop { "" } else { "PLAIN" }),
            ("username_ref", ""),
            ("password_ref", ""),
            ("interval_s", interval),
        ];
        if drop {
            form.push(("drop_credentials", "yes"));
        }
        form
    };
    let r = t
        .post_form("/fn/update_cluster", Some(&ada), &edit("30", false))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["bootstrap"], "pkc-2.example:9092");
    assert_eq!(v["interval_s"], 30);
    assert_eq!(v["credentials_set"], true, "kept: {v}");
    // Asked to drop them, they go.
    let r = t
        .post_form("/fn/update_cluster", Some(&ada), &edit("30", true))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["credentials_set"], false);

    // The wrong name typed back removes nothing; the right one removes it.
    let r = t
        .post_form(
            "/fn/remove_cluster",
            Some(&ada),
            &[("id", id.as_str()), ("confirm", "prod")],
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("Type the cluster's name, cc"), "{}", r.body);
    let r = t
        .post_form(
            "/fn/remove_cluster",
            Some(&ada),
            &[("id", id.as_str()), ("confirm", "cc")],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = t.get("/settings/clusters", Some(&ada)).await;
    assert!(
        !page
            .body
            .contains(r#"data-testid="cluster-edit" data-cluster="cc""#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("No cluster is watched yet"),
        "{}",
        page.body
    );
    // It is listed as removed, with who removed it and when it is purged,
    // and a restore form; restoring it brings it back.
    let purged_on = (chrono::Utc::now() + chrono::Duration::days(90))
        .format("%Y-%m-%d")
        .to_string();
    let row = page
        .body
        .split(r#"<tr data-testid="removed-cluster" data-cluster="cc">"#)
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or_else(|| panic!("cc is not listed as removed: {}", page.body));
    assert!(row.contains("ada") && row.contains(&purged_on), "{row}");
    assert!(
        row.contains("restore-cluster") && row.contains("Restore cc"),
        "{row}"
    );
    let r = t
        .post_form("/fn/restore_cluster", Some(&ada), &[("id", id.as_str())])
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = t.get("/settings/clusters", Some(&ada)).await;
    assert!(
        page.body
            .contains(r#"data-testid="cluster-edit" data-cluster="cc""#),
        "{}",
        page.body
    );
    assert!(page.body.contains("No removed cluster is kept."));
    assert_eq!(
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM audit_log WHERE action = 'cluster.restore'"
        )
        .fetch_one(&t.pool)
        .await
        .expect("audit"),
        1
    );
}

/// The posting forms of a page (`<form …>` tags), the header's sign-out
/// left out.
fn posting_forms(body: &str) -> Vec<String> {
    body.match_indices("<form")
        .filter_map(|(i, _)| {
            body[i..]
                .find('>')
                .map(|end| body[i..i + end + 1].to_string())
        })
        .filter(|tag| tag.to_ascii_lowercase().contains("method=\"post\""))
        .filter(|tag| !tag.contains("action=\"/logout\""))
        .collect()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn no_settings_page_renders_an_admin_form_for_anyone_else(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("ada", &[Role::Admin]).await;
    let owner = t.user("olga", &[Role::Viewer, Role::Owner]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let team: i64 = sqlx::query_scalar(
        "INSERT INTO teams (name, description) VALUES ('payments', '') RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("team");
    sqlx::query("INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ('east', '127.0.0.1:1', 'PLAINTEXT')")
        .execute(&t.pool)
        .await
        .expect("cluster");
    let pages = |own: i64| {
        [
            "/settings/users".to_string(),
            format!("/settings/users/{own}"),
            "/settings/teams".to_string(),
            format!("/settings/teams/{team}"),
            "/settings/clusters".to_string(),
            "/settings/review".to_string(),
            "/settings/routines".to_string(),
            "/settings/pilot".to_string(),
            "/settings/audit".to_string(),
        ]
    };
    // The same pages as an admin do hold the forms, so the check can fail.
    let admin = t.login("ada", PASSWORD).await.expect("ada signs in");
    let mut with_forms = 0;
    for path in pages(owner) {
        let r = t.get(&path, Some(&admin)).await;
        if !posting_forms(&r.body).is_empty() {
            with_forms += 1;
        }
    }
    assert!(
        with_forms >= 6,
        "an admin sees the forms on {with_forms} pages"
    );
    for (name, id) in [("olga", owner), ("vic", viewer)] {
        let cookie = t.login(name, PASSWORD).await.expect("signs in");
        for path in pages(id) {
            let r = t.get(&path, Some(&cookie)).await;
            let forms = posting_forms(&r.body);
            assert!(forms.is_empty(), "{name} is shown {forms:?} on {path}");
        }
    }
}

/// Each page's title names its thing before its section, so a tab or a
/// bookmark says which stream, cluster or group it was; a list page is
/// named by its section.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn every_title_names_its_page(pool: sqlx::PgPool) {
    let t = TestApp::new(pool.clone()).await;
    t.user("ada", &[Role::Admin]).await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ('main', '127.0.0.1:1', 'PLAINTEXT') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, 'orders', 1, now(), now())",
    )
    .bind(cluster)
    .execute(&pool)
    .await
    .expect("topic");
    sqlx::query("INSERT INTO streams (cluster_id, topic) VALUES ($1, 'orders')")
        .bind(cluster)
        .execute(&pool)
        .await
        .expect("stream");
    let c = t.login("ada", PASSWORD).await.expect("signs in");
    let title = |body: &str| {
        body.split("<title>")
            .nth(1)
            .and_then(|t| t.split("</title>").next())
            .unwrap_or_default()
            .to_owned()
    };
    for (path, want) in [
        (
            format!("/clusters/{cluster}/stream?name=orders"),
            "orders · Streams · Streamkeeper",
        ),
        (
            format!("/clusters/{cluster}"),
            "main · Clusters · Streamkeeper",
        ),
        (
            format!("/clusters/{cluster}/group?name=billing"),
            "billing · Consumer groups · Streamkeeper",
        ),
        ("/streams".to_string(), "Streams · Streamkeeper"),
        ("/settings/routines".to_string(), "Routines · Streamkeeper"),
    ] {
        let r = t.get(&path, Some(&c)).await;
        assert_eq!(title(&r.body), want, "{path}: {}", r.status);
    }
}

/// The admin's home lists the open trouble itself: flags by kind, failed
/// connectors, routines that never ran, a platform team without members;
/// it never calls everything well while a STOP is open on an UP cluster.
/// An owner's home names the group of each flag and marks it acknowledged.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_home_page_lists_open_trouble_and_names_each_flag(pool: sqlx::PgPool) {
    use streamkeeper::flags::{FlagKey, Observation};
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let owner = t.user("olivia", &[Role::Owner]).await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ('main', '127.0.0.1:1', 'PLAINTEXT') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let now = chrono::Utc::now();
    let good = streamkeeper_server::clients::kafka::reader::Reading {
        started: now,
        finished: now,
        brokers: 1,
        topics: Vec::new(),
        groups: Vec::new(),
        groups_listed: true,
        problems: Vec::new(),
        phases: Vec::new(),
        offsets_by: streamkeeper_server::clients::kafka::reader::OffsetsBy::Librdkafka(
            "a pass the test makes up".into(),
        ),
    };
    streamkeeper_server::watch::store::record_reading(&pool, cluster, &good)
        .await
        .expect("pass");
    let mut team = 0;
    for name in ["payments", "platform"] {
        team = sqlx::query_scalar("INSERT INTO teams (name) VALUES ($1) RETURNING id")
            .bind(name)
            .fetch_one(&pool)
            .await
            .expect("team");
    }
    let payments = team - 1;
    sqlx::query("INSERT INTO memberships (team_id, user_id) VALUES ($1, $2)")
        .bind(payments)
        .bind(owner)
        .execute(&pool)
        .await
        .expect("member");
    let at = t.token(admin).await;
    let r = t
        .api(
            Method::PUT,
            "/api/v1/settings/platform-team",
            &at,
            Some(serde_json::json!({"team": "platform"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let connect: i64 = sqlx::query_scalar(
        "INSERT INTO connect_clusters (cluster_id, name, url) VALUES ($1, 'cx', 'http://127.0.0.1:1') RETURNING id",
    )
    .bind(cluster)
    .fetch_one(&pool)
    .await
    .expect("connect");
    sqlx::query(
        "INSERT INTO connectors (connect_id, name, kind, state, config, config_hash, trace)
         VALUES ($1, 's3-sink', 'sink', 'FAILED', '{}', 'x', 'java.lang.IllegalStateException: bucket gone')",
    )
    .bind(connect)
    .execute(&pool)
    .await
    .expect("connector");
    let row = streamkeeper_server::watch::store::by_id(&pool, cluster)
        .await
        .expect("read")
        .expect("cluster");
    let stop = Observation {
        key: FlagKey {
            subject_kind: "group".into(),
            subject: "billing".into(),
            rule: "lag".into(),
        },
        kind: "STOP".into(),
        reason: "billing stopped committing on orders".into(),
        onset_ms: now.timestamp_millis() - 60_000,
        evidence: serde_json::json!({}),
    };
    let flag = streamkeeper_server::flags::lifecycle::raise(
        &pool,
        row.id,
        &row.name,
        &stop,
        Some((payments, "payments".into(), None)),
    )
    .await
    .expect("raise");
    // A routine registered by a replica that has never run it, and one that
    // keeps a row only for runs that found work (none yet: not "never ran").
    sqlx::query(
        "INSERT INTO routines (name, scope, lease, record, every_ms)
         VALUES ('registry-hygiene', 'global', 'exclusive', 'every_run', 3600000),
                ('webhooks', 'global', 'everywhere', 'when_worked', 1000)",
    )
    .execute(&pool)
    .await
    .expect("routine");
    let c = t.login("ada", PASSWORD).await.expect("signs in");
    // A flag's page is titled by its kind and subject.
    let page = t.get(&format!("/flags/{flag}"), Some(&c)).await.body;
    assert!(
        page.contains("<title>STOP group billing · Flags · Streamkeeper</title>"),
        "{page}"
    );
    let a = t.get("/", Some(&c)).await.body;
    let admin_part = a
        .split(r#"data-testid="home-admin""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{a}"));
    assert!(
        !admin_part.contains("all-well") && !admin_part.contains("Every cluster is up"),
        "a STOP is open: {admin_part}"
    );
    let section = |id: &str| {
        admin_part
            .split(&format!(r#"data-testid="{id}""#))
            .nth(1)
            .and_then(|s| s.split("</ul>").next())
            .unwrap_or_else(|| panic!("{id}: {admin_part}"))
            .to_owned()
    };
    let open = section("open-flags");
    assert!(
        open.contains(">STOP<") && open.contains(">1</li>"),
        "{open}"
    );
    let failed = section("failed-connectors");
    assert!(
        failed.contains(">s3-sink<") && failed.contains("bucket gone"),
        "{failed}"
    );
    assert!(
        admin_part.contains(r#"data-testid="platform-team-empty""#)
            && admin_part.contains("The platform team platform has no members"),
        "{admin_part}"
    );
    // Registered, scheduled, never run.
    let never_ran = section("routines-never-ran");
    assert!(
        never_ran.contains("<code>registry-hygiene</code>")
            && !never_ran.contains("<code>webhooks</code>"),
        "{admin_part}"
    );

    // The owner reads which group each flag is about, and which ones a
    // teammate already acknowledged.
    let ot = t.token(owner).await;
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/flags/{flag}/acknowledge"),
            &ot,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let c = t.login("olivia", PASSWORD).await.expect("signs in");
    let o = t.get("/", Some(&c)).await.body;
    let flags = o
        .split(r#"data-testid="flag-list""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{o}"));
    assert!(flags.contains("group billing"), "{flags}");
    assert!(
        flags.contains(r#"data-testid="acknowledged""#) && flags.contains("acknowledged by olivia"),
        "{flags}"
    );
}

/// One time format everywhere: the audit log's refusals, an entry's
/// details and a flag's receipts read their times as every page does
/// (`2026-12-02 00:41:07 UTC`), never as RFC 3339 text nor a bare clock;
/// the audit tables are the ones whose every cell may wrap.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn times_read_alike_on_the_audit_log_and_in_receipts(pool: sqlx::PgPool) {
    use streamkeeper::flags::{FlagKey, Observation};
    let t = TestApp::new(pool.clone()).await;
    t.user("ada", &[Role::Admin]).await;
    assert!(t.login("ada", "not the password").await.is_none());
    let c = t.login("ada", PASSWORD).await.expect("signs in");
    // `2026-12-02 00:41:07 UTC`: digits where the pattern has `9`.
    let stamp = |cell: &str| {
        let shape = "9999-99-99 99:99:99 UTC";
        cell.len() >= shape.len()
            && cell.bytes().zip(shape.bytes()).all(|(c, s)| match s {
                b'9' => c.is_ascii_digit(),
                _ => c == s,
            })
    };

    let audit = t.get("/settings/audit", Some(&c)).await.body;
    assert!(
        audit.contains(r#"data-testid="audit" class="list audit""#)
            && audit.contains(r#"data-testid="audit-refusals" class="list audit""#),
        "{audit}"
    );
    let refusals = audit
        .split(r#"data-testid="audit-refusals""#)
        .nth(1)
        .and_then(|s| s.split("</table>").next())
        .unwrap_or_else(|| panic!("{audit}"));
    let row = refusals
        .split("<tbody>")
        .nth(1)
        .unwrap_or_else(|| panic!("{refusals}"));
    let cells: Vec<&str> = row
        .split("<td>")
        .skip(1)
        .filter_map(|c| c.split("</td>").next())
        .collect();
    // Minute, first and last: each a full moment, not `08:41:07`.
    for i in [0, 4, 5] {
        let cell = cells.get(i).copied().unwrap_or_default();
        assert!(stamp(cell), "cell {i}: {cell:?} of {cells:?}");
    }

    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ('main', '127.0.0.1:1', 'PLAINTEXT') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let quiet = Observation {
        key: FlagKey {
            subject_kind: "topic".into(),
            subject: "orders".into(),
            rule: "freshness".into(),
        },
        kind: "STALE".into(),
        reason: "no message on orders for 2 h".into(),
        onset_ms: chrono::Utc::now().timestamp_millis() - 60_000,
        evidence: serde_json::json!({
            "rule": "freshness",
            "last_message_at": "2026-12-02T00:41:07.250Z",
            "expected_interval_s": 60,
            "log_end_total": 12,
        }),
    };
    let flag = streamkeeper_server::flags::lifecycle::raise(&pool, cluster, "main", &quiet, None)
        .await
        .expect("raise");
    let page = t.get(&format!("/flags/{flag}"), Some(&c)).await.body;
    let receipts = page
        .split(r#"data-testid="receipts""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{page}"));
    assert!(
        receipts.contains(r#"data-testid="receipts-last-message">2026-12-02 00:41:07 UTC<"#),
        "{receipts}"
    );
    assert!(!receipts.contains("T00:41:07"), "{receipts}");
}
