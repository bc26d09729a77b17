//! The REST API with bearer tokens: users, teams, memberships, audit.

mod support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;
use streamkeeper_server::accounts::token_cache::TOKEN_CACHE_TTL;
use support::{PASSWORD, TestApp};

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn tokens_authenticate_and_roles_authorize(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, vt) = (t.token(admin).await, t.token(viewer).await);

    let me = t.api(Method::GET, "/api/v1/me", &vt, None).await;
    assert_eq!(me.status, StatusCode::OK);
    assert_eq!(me.json()["principal"]["username"], "vic");
    assert_eq!(me.json()["principal"]["via"], "token");

    let r = t.api(Method::GET, "/api/v1/users", &vt, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(r.json()["error"]["code"], "forbidden");
    // Object level: a viewer reads their own account, not another's.
    assert_eq!(
        t.api(Method::GET, &format!("/api/v1/users/{viewer}"), &vt, None)
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        t.api(Method::GET, &format!("/api/v1/users/{admin}"), &vt, None)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let r = t.api(Method::POST, "/api/v1/users", &vt, Some(json!({"username": "x", "password": "correct-horse-battery-staple", "roles": ["admin"]}))).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "no self-service admin");

    let r = t
        .api(Method::GET, "/api/v1/users?per_page=1&page=2", &at, None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let page = r.json();
    assert_eq!(
        (page["total"].as_i64(), page["per_page"].as_i64()),
        (Some(2), Some(1))
    );
    assert_eq!(page["items"][0]["username"], "vic");
    assert!(page["items"][0].get("password_hash").is_none());

    let r = t
        .api(Method::GET, "/api/v1/me", "sk_not-a-real-token", None)
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("token")
    );
    // Guessed tokens are counted per source and minute, not chained.
    let guessed: i64 = sqlx::query_scalar(
        "SELECT sum(count)::bigint FROM audit_refusals WHERE action = 'token.refused'",
    )
    .fetch_one(&t.pool)
    .await
    .expect("refusals");
    assert_eq!(guessed, 1);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn unknown_list_choices_are_a_400_naming_the_allowed_values(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let vt = t.token(viewer).await;
    for (path, message) in [
        (
            "/api/v1/review-items?scope=bogus",
            "unknown scope 'bogus' (one of: waiting, mine, all)",
        ),
        (
            "/api/v1/review-items?state=approved!",
            "unknown state 'approved!' (one of: in_review, approved, rejected, withdrawn, applied, apply_failed)",
        ),
        (
            "/api/v1/review-items?kind=connector",
            "unknown kind 'connector' (one of: producer_change, schema_registration, connector_draft, connector_restart)",
        ),
        // Flags used to fall back to mine and live without a word.
        (
            "/api/v1/flags?scope=everyone",
            "unknown scope 'everyone' (one of: mine, all)",
        ),
        (
            "/api/v1/flags?state=open",
            "unknown state 'open' (one of: live, any)",
        ),
    ] {
        let r = t.api(Method::GET, path, &vt, None).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{path}: {}", r.body);
        assert_eq!(r.json()["error"]["code"], "bad_request", "{path}");
        let said = r.json()["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(said.contains(message), "{path}: {said}");
    }
    // Known values in any case, padded, or empty (the default) all answer.
    for path in [
        "/api/v1/review-items?scope=MINE&state=%20approved%20&kind=Producer_Change",
        "/api/v1/review-items?scope=&state=&kind=",
        "/api/v1/flags?scope=All&state=ANY",
        "/api/v1/flags?scope=&state=",
    ] {
        let r = t.api(Method::GET, path, &vt, None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn revoked_tokens_and_disabled_users_are_refused(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let bot = t.user("ci-bot", &[Role::Viewer]).await;
    let (at, bt) = (t.token(admin).await, t.token(bot).await);
    assert_eq!(
        t.api(Method::GET, "/api/v1/me", &bt, None).await.status,
        StatusCode::OK
    );
    t.api(
        Method::PATCH,
        &format!("/api/v1/users/{bot}"),
        &at,
        Some(json!({"disabled": true})),
    )
    .await;
    assert_eq!(
        t.api(Method::GET, "/api/v1/me", &bt, None).await.status,
        StatusCode::UNAUTHORIZED
    );
    let mut conn = t.pool.acquire().await.expect("conn");
    let id: i64 = sqlx::query_scalar("SELECT id FROM api_tokens WHERE user_id = $1")
        .bind(admin)
        .fetch_one(&mut *conn)
        .await
        .expect("token id");
    // Revoked by another process (the CLI, another replica): refused
    // within the token cache's bound, however often it is used meanwhile.
    streamkeeper_server::accounts::store::tokens::revoke(&mut conn, id)
        .await
        .expect("revoke");
    let revoked = std::time::Instant::now();
    loop {
        let status = t.api(Method::GET, "/api/v1/me", &at, None).await.status;
        if status == StatusCode::UNAUTHORIZED {
            break;
        }
        assert_eq!(status, StatusCode::OK);
        assert!(
            revoked.elapsed() <= TOKEN_CACHE_TTL,
            "a revoked token was let through for {:?}",
            revoked.elapsed()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A token kept in the cache is judged again at every use: one that
/// expires while kept is refused at its expiry, not the cache's.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_cached_token_is_refused_once_it_expires(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let bot = t.user("ci-bot", &[Role::Viewer]).await;
    let token = streamkeeper_server::accounts::store::tokens::generate();
    let expires = chrono::Utc::now() + chrono::Duration::milliseconds(1500);
    let mut conn = t.pool.acquire().await.expect("conn");
    streamkeeper_server::accounts::store::tokens::insert(
        &mut conn,
        bot,
        "short",
        &token,
        &streamkeeper::accounts::token::Scopes::new([Scope::Read]).expect("scopes"),
        Some(expires),
    )
    .await
    .expect("insert");
    drop(conn);
    assert_eq!(
        t.api(Method::GET, "/api/v1/me", &token, None).await.status,
        StatusCode::OK
    );
    let wait = (expires - chrono::Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(wait + std::time::Duration::from_millis(50)).await;
    assert!(std::time::Duration::from_millis(1550) < TOKEN_CACHE_TTL);
    let r = t.api(Method::GET, "/api/v1/me", &token, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
    assert!(message(&r).contains("expired"), "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn users_are_created_validated_and_changed(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let new = json!({"username": "bob", "display_name": "Bob B", "password": "correct-horse-battery-staple", "roles": ["owner", "viewer", "owner"]});
    let r = t
        .api(Method::POST, "/api/v1/users", &at, Some(new.clone()))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.json()["roles"], json!(["viewer", "owner"]));
    let bob = r.json()["id"].as_i64().expect("id");

    let r = t.api(Method::POST, "/api/v1/users", &at, Some(new)).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(
        r.json()["error"]["message"],
        "A user named bob already exists."
    );

    let weak = json!({"username": "carol", "password": "password1234", "roles": ["viewer"]});
    let r = t.api(Method::POST, "/api/v1/users", &at, Some(weak)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("too easy to guess")
    );

    let bad_name = json!({"username": "Carol!", "password": "correct-horse-battery-staple", "roles": ["viewer"]});
    assert_eq!(
        t.api(Method::POST, "/api/v1/users", &at, Some(bad_name))
            .await
            .status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    let bad_role =
        json!({"username": "carol", "password": "correct-horse-battery-staple", "roles": ["root"]});
    let r = t
        .api(Method::POST, "/api/v1/users", &at, Some(bad_role))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "bad_request");

    let malformed = Request::post("/api/v1/users")
        .header(header::AUTHORIZATION, format!("Bearer {at}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{\"username\": "))
        .expect("request");
    let r = t.send(malformed).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("JSON")
    );

    let r = t
        .api(
            Method::PATCH,
            &format!("/api/v1/users/{bob}"),
            &at,
            Some(json!({"display_name": "Robert", "roles": ["approver"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        (r.json()["display_name"].clone(), r.json()["roles"].clone()),
        (json!("Robert"), json!(["approver"]))
    );
    let r = t
        .api(
            Method::PATCH,
            &format!("/api/v1/users/{admin}"),
            &at,
            Some(json!({"disabled": true})),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "no locking yourself out"
    );
    let r = t
        .api(
            Method::PATCH,
            &format!("/api/v1/users/{admin}"),
            &at,
            Some(json!({"roles": ["viewer"]})),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "no demoting yourself"
    );
    let r = t
        .api(
            Method::PATCH,
            "/api/v1/users/99999",
            &at,
            Some(json!({"disabled": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = t.api(Method::GET, "/api/v1/users/abc", &at, None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);

    let actions: Vec<String> = t.audit_actions().await;
    assert_eq!(actions, vec!["user.create", "user.update"]);
    let detail: String =
        sqlx::query_scalar("SELECT detail FROM audit_log WHERE action = 'user.update'")
            .fetch_one(&t.pool)
            .await
            .expect("detail");
    assert!(
        detail.contains("Robert") && detail.contains("approver"),
        "{detail}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn teams_and_memberships(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let bob = t.user("bob", &[Role::Owner]).await;
    let at = t.token(admin).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &at,
            Some(json!({"name": "payments", "description": "Pays"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let team = r.json()["id"].as_i64().expect("id");
    let members = format!("/api/v1/teams/{team}/members");
    let r = t
        .api(
            Method::POST,
            &members,
            &at,
            Some(json!({"username": "bob"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let r = t
        .api(
            Method::POST,
            &members,
            &at,
            Some(json!({"username": "bob"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let r = t
        .api(
            Method::POST,
            &members,
            &at,
            Some(json!({"username": "ghost"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    let r = t
        .api(Method::GET, &format!("/api/v1/teams/{team}"), &at, None)
        .await;
    assert_eq!(r.json()["members"][0]["username"], "bob");
    assert_eq!(r.json()["team"]["members"], 1);
    let bt = t.token(bob).await;
    let me = t.api(Method::GET, "/api/v1/me", &bt, None).await;
    assert_eq!(me.json()["teams"][0]["name"], "payments");
    assert_eq!(
        t.api(Method::GET, &format!("/api/v1/teams/{team}"), &bt, None)
            .await
            .status,
        StatusCode::FORBIDDEN
    );

    let r = t
        .api(Method::DELETE, &format!("{members}/{bob}"), &at, None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let r = t
        .api(Method::DELETE, &format!("{members}/{bob}"), &at, None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &at,
            Some(json!({"name": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(
        t.audit_actions().await,
        vec!["team.create", "team.member.add", "team.member.remove"]
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn audit_is_filtered_paginated_and_admin_only(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, vt) = (t.token(admin).await, t.token(viewer).await);
    for name in ["a", "b", "c"] {
        t.api(
            Method::POST,
            "/api/v1/teams",
            &at,
            Some(json!({"name": name})),
        )
        .await;
    }
    t.login("vic", "wrong").await;
    let r = t
        .api(
            Method::GET,
            "/api/v1/audit?action=team.create&per_page=2",
            &at,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let page = r.json();
    assert_eq!(page["total"], 3);
    assert_eq!(page["items"][0]["target"], "team:c", "newest first");
    assert_eq!(page["items"].as_array().map(Vec::len), Some(2));
    // Failed sign-ins are counted beside the chain, per source and minute.
    let r = t
        .api(Method::GET, "/api/v1/audit?actor=anonymous", &at, None)
        .await;
    assert_eq!(r.json()["total"], 0);
    let r = t
        .api(
            Method::GET,
            "/api/v1/audit/refusals?actor=anonymous",
            &at,
            None,
        )
        .await;
    assert_eq!(r.json()["items"][0]["action"], "login.failure");
    assert_eq!(r.json()["items"][0]["target"], "user:vic");
    assert_eq!(r.json()["items"][0]["count"], 1);
    assert_eq!(
        t.api(Method::GET, "/api/v1/audit", &vt, None).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        t.api(Method::GET, "/api/v1/audit/refusals", &vt, None)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let r = t.api(Method::GET, "/api/v1/audit?page=x", &at, None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn openapi_document_describes_the_api(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let vt = t.token(viewer).await;
    let r = t.api(Method::GET, "/api/v1/openapi.json", &vt, None).await;
    assert_eq!(r.status, StatusCode::OK);
    let doc = r.json();
    assert!(doc["openapi"].as_str().unwrap_or("").starts_with("3."));
    for path in [
        "/api/v1/users",
        "/api/v1/users/{id}",
        "/api/v1/teams/{id}/members",
        "/api/v1/audit",
        "/api/v1/audit/refusals",
        "/api/v1/me",
        "/api/v1/clusters/{id}/connect",
        "/api/v1/clusters/{id}/connect/{name}/connectors/{connector}",
        "/api/v1/connect/validate",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} missing");
    }
    assert!(doc["components"]["securitySchemes"].get("bearer").is_some());
}

/// An app whose audit log holds four entries: an admin made four teams.
async fn four_teams_logged(pool: sqlx::PgPool) -> TestApp {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    for name in ["a", "b", "c", "d"] {
        t.api(
            Method::POST,
            "/api/v1/teams",
            &at,
            Some(json!({"name": name})),
        )
        .await;
    }
    t
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_audit_log_is_append_only_and_chained(pool: sqlx::PgPool) {
    let t = four_teams_logged(pool).await;
    assert_eq!(
        streamkeeper_server::audit::store::verify(&t.pool, None)
            .await
            .expect("intact")
            .entries,
        4
    );
    for sql in [
        "UPDATE audit_log SET actor = 'x' WHERE id = 2",
        "DELETE FROM audit_log WHERE id = 2",
        "TRUNCATE audit_log",
    ] {
        let e = sqlx::query(sql).execute(&t.pool).await.expect_err(sql);
        assert!(e.to_string().contains("append-only"), "{e}");
    }
    // Someone with the power to drop the trigger still cannot hide a change.
    sqlx::query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_or_delete")
        .execute(&t.pool)
        .await
        .expect("superuser");
    sqlx::query("UPDATE audit_log SET target = 'team:z' WHERE id = 3")
        .execute(&t.pool)
        .await
        .expect("tamper");
    let e = streamkeeper_server::audit::store::verify(&t.pool, None)
        .await
        .expect_err("broken");
    assert!(e.to_string().contains("entry 3"), "{e}");
}

/// Deleting the newest entries leaves a chain that still links; the head
/// exported before (`audit head`) is what catches it.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_expected_head_catches_a_cut_tail(pool: sqlx::PgPool) {
    use streamkeeper_server::audit::store as audit;
    let t = four_teams_logged(pool).await;
    let head = audit::head(&t.pool)
        .await
        .expect("head")
        .expect("not empty");
    assert_eq!(head.id, 4);
    assert_eq!(
        audit::verify(&t.pool, Some(head))
            .await
            .expect("intact")
            .entries,
        4
    );
    // Someone who can get past the append-only trigger cuts the tail.
    sqlx::query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_or_delete")
        .execute(&t.pool)
        .await
        .expect("superuser");
    sqlx::query("DELETE FROM audit_log WHERE id > 2")
        .execute(&t.pool)
        .await
        .expect("cut");
    assert_eq!(
        audit::verify(&t.pool, None)
            .await
            .expect("still links")
            .entries,
        2
    );
    let e = audit::verify(&t.pool, Some(head))
        .await
        .expect_err("the head is gone");
    assert!(
        e.to_string().contains("entry 4") && e.to_string().contains("cut off"),
        "{e}"
    );
}

/// A synthetic pass: `groups` each on its own one-partition topic, with
/// `log_end` written and `committed` read (the same for every group).
fn reading(
    groups: &[&str],
    at: chrono::DateTime<chrono::Utc>,
    committed: i64,
    log_end: i64,
) -> streamkeeper_server::clients::kafka::reader::Reading {
    use streamkeeper_server::clients::kafka::reader::{
        GroupReading, OffsetsBy, PartitionReading, Reading, TopicReading,
    };
    Reading {
        started: at,
        finished: at,
        brokers: 1,
        topics: groups
            .iter()
            .map(|g| TopicReading {
                name: format!("t-{g}"),
                partitions: vec![PartitionReading {
                    partition: 0,
                    leader: Some(1),
                    replicas: vec![1],
                    isr: vec![1],
                    log_start: Some(0),
                    log_end: Some(log_end),
                }],
                last_message_at: None,
                wire: None,
            })
            .collect(),
        groups: groups
            .iter()
            .map(|g| GroupReading {
                name: (*g).to_string(),
                state: "Empty".into(),
                members: 0,
                offsets: [((format!("t-{g}"), 0), Some(committed))].into(),
                error: None,
                assigned: Default::default(),
            })
            .collect(),
        groups_listed: true,
        problems: vec![],
        phases: Vec::new(),
        offsets_by: OffsetsBy::Librdkafka("synthetic".into()),
    }
}

/// A group stopped for longer than its window: the flag and the group's
/// page say how long since the committed offset last moved, not the
/// window's length, and the time grows pass after pass.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stop_says_how_long_since_the_commit_moved_beyond_the_window(pool: sqlx::PgPool) {
    use chrono::{Duration, Utc};
    use streamkeeper_server::watch::judge::{self, PassResult};
    use streamkeeper_server::watch::kept::KeptWindow;
    use streamkeeper_server::watch::store::{self as clusters, samples};

    let t = TestApp::new(pool.clone()).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let vt = t.token(viewer).await;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('synthetic', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let row = clusters::by_id(&pool, id).await.expect("db").expect("row");
    samples::ensure_partitions(&pool, Utc::now())
        .await
        .expect("partitions");
    // Fifteen passes 15 s apart (the window holds ten): committed at 50
    // from the first while the log grows, so it has stood for 210 s.
    let now = Utc::now();
    let mut kept = KeptWindow::default();
    for pass in 0..15i64 {
        let at = now - Duration::seconds(210 - 15 * pass);
        let r = reading(&["stuck"], at, 50, 60 + pass);
        let stored = clusters::record_reading(&pool, id, &r)
            .await
            .expect("store");
        kept.push_read(stored.pass_id, r.finished, &stored.samples);
        judge::after_pass(&pool, &row, PassResult::Read(&r), &mut kept)
            .await
            .expect("judge");
    }
    let r = t
        .api(Method::GET, "/api/v1/flags?scope=all", &vt, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let flags = r.json();
    let reason = flags["items"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("no members and no progress for 3 min 30 s while 24 behind"),
        "{reason}"
    );
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups/stuck"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let partition = &r.json()["partitions"][0];
    assert_eq!(partition["status"], "STOP");
    assert!(
        partition["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("no progress for 3 min 30 s"),
        "{partition}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn groups_are_listed_judged_and_charted_from_rollups(pool: sqlx::PgPool) {
    use chrono::{Duration, Utc};
    use streamkeeper_server::watch::judge::{self, PassResult};
    use streamkeeper_server::watch::kept::KeptWindow;
    use streamkeeper_server::watch::store::{self as clusters, samples};

    let t = TestApp::new(pool.clone()).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let vt = t.token(viewer).await;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('synthetic', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let row = clusters::by_id(&pool, id).await.expect("db").expect("row");
    samples::ensure_partitions(&pool, Utc::now())
        .await
        .expect("partitions");

    // 30 groups; "stuck" never moves, the others keep up. Three passes,
    // 15 s apart, ending now.
    let mut names: Vec<String> = (0..29).map(|i| format!("ok-{i:02}")).collect();
    names.push("stuck".into());
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let now = Utc::now();
    let mut kept = KeptWindow::default();
    for pass in 0..3i64 {
        let at = now - Duration::seconds(30 - 15 * pass);
        let mut r = reading(&refs, at, 100 + 10 * pass, 100 + 10 * pass);
        // "stuck" stays at 50 while the log grows.
        if let Some(g) = r.groups.iter_mut().find(|g| g.name == "stuck") {
            g.offsets.insert(("t-stuck".into(), 0), Some(50));
        }
        let stored = clusters::record_reading(&pool, id, &r)
            .await
            .expect("store");
        kept.push_read(stored.pass_id, r.finished, &stored.samples);
        judge::after_pass(&pool, &row, PassResult::Read(&r), &mut kept)
            .await
            .expect("judge");
    }

    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = r.json();
    assert_eq!(page["total"], 30);
    assert_eq!(page["items"][0]["name"], "stuck", "the troubled come first");
    assert_eq!(page["items"][0]["status"], "STOP");
    assert_eq!(page["items"][0]["total_lag"], 70);
    assert!(page["items"][0]["evaluated_at"].is_string());
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups?status=trouble"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.json()["total"], 1);
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups?q=ok-1&per_page=5&page=2"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.json()["total"], 10);
    assert_eq!(r.json()["items"][0]["name"], "ok-15");
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups?status=sideways"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "bad_request");
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        message.contains("unknown status 'sideways' (one of: trouble, gone, INCOMPLETE,"),
        "{message}"
    );
    // Statuses are read in any case, as the other lists read their choices.
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups?status=Trouble"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["total"], 1);
    let r = t
        .api(Method::GET, "/api/v1/clusters/99999/groups", &vt, None)
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // Sorted by a column on the server, either way; a bad column is a 400.
    let first = |sort: &'static str| {
        let (t, vt) = (&t, &vt);
        async move {
            let r = t
                .api(
                    Method::GET,
                    &format!("/api/v1/clusters/{id}/groups?sort={sort}&per_page=2"),
                    vt,
                    None,
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            r.json()["items"][0]["name"].clone()
        }
    };
    assert_eq!(first("-lag").await, "stuck");
    assert_eq!(first("name").await, "ok-00");
    assert_eq!(first("-name").await, "stuck");
    assert_eq!(first("lag").await, "ok-00", "equal lags by name");
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups?sort=colour"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.body.contains("unknown sort 'colour'"), "{}", r.body);
    // The page's column headers sort, and say which way they do.
    let cookie = t.login("vic", PASSWORD).await.expect("vic signs in");
    let page = t
        .get(&format!("/clusters/{id}?sort=-lag"), Some(&cookie))
        .await;
    assert!(
        page.body.contains("aria-sort=\"descending\"")
            && page.body.contains(&format!("/clusters/{id}?sort=lag"))
            && page
                .body
                .find(">stuck<")
                .zip(page.body.find(">ok-00<"))
                .is_some_and(|(stuck, ok)| stuck < ok),
        "{}",
        page.body
    );

    // A group the cluster stops listing is gone, not zero.
    let without: Vec<&str> = refs.iter().copied().filter(|n| *n != "ok-00").collect();
    let r = reading(&without, now + Duration::seconds(1), 130, 130);
    clusters::record_reading(&pool, id, &r)
        .await
        .expect("store");
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups?status=gone"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.json()["total"], 1, "{}", r.body);
    assert_eq!(r.json()["items"][0]["name"], "ok-00");
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups/ok-00"),
            &vt,
            None,
        )
        .await;
    assert!(r.json()["gone_since"].is_string(), "{}", r.body);
    // Listed again: no longer gone.
    let r = reading(&refs, now + Duration::seconds(2), 140, 140);
    clusters::record_reading(&pool, id, &r)
        .await
        .expect("store");
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups?status=gone"),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.json()["total"], 0);

    // The rollups: the stuck group's largest lag per minute and per hour,
    // every bucket listed and the empty ones gaps.
    let day = samples::rollup_series(
        &pool,
        id,
        "stuck",
        now - Duration::hours(24),
        samples::Rollup::Minute,
    )
    .await
    .expect("minute rollup");
    assert!(day.len() >= 24 * 60, "{}", day.len());
    assert_eq!(day.iter().filter_map(|(_, v)| *v).max(), Some(70));
    assert!(day.iter().filter(|(_, v)| v.is_none()).count() >= 24 * 60 - 3);
    let week = samples::rollup_series(
        &pool,
        id,
        "stuck",
        now - Duration::days(7),
        samples::Rollup::Hour,
    )
    .await
    .expect("hour rollup");
    assert!(week.len() >= 7 * 24);
    assert_eq!(week.last().and_then(|(_, v)| *v), Some(70));

    // Retention drops whole day partitions, and never today's.
    let parts = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'lag_samples'",
        )
        .fetch_one(&pool)
        .await
        .expect("partitions")
    };
    let before = parts().await;
    samples::ensure_partitions(&pool, now - Duration::days(10))
        .await
        .expect("old partitions");
    assert!(parts().await > before);
    let gone = samples::expire(&pool, now).await.expect("expire");
    assert!(gone.partitions >= 3, "{gone:?}");
    assert_eq!(parts().await, before);
    let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM lag_samples")
        .fetch_one(&pool)
        .await
        .expect("samples");
    assert_eq!(kept, 30 * 5 - 1);
}

/// The audit entries of `action`, their details, oldest first.
async fn audit_details(t: &TestApp, action: &str) -> Vec<serde_json::Value> {
    sqlx::query_scalar("SELECT detail::jsonb FROM audit_log WHERE action = $1 ORDER BY id")
        .bind(action)
        .fetch_all(&t.pool)
        .await
        .expect("audit")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn credential_references_are_checked_when_saved(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let at = t.token(t.user("ada", &[Role::Admin]).await).await;
    let cluster = |name: &str, protocol: &str, user: &str, pass: &str| {
        json!({"name": name, "bootstrap": "pkc.example:9092", "security_protocol": protocol,
               "sasl_mechanism": "PLAIN", "username_ref": user, "password_ref": pass})
    };
    let ok_user = "env:STREAMKEEPER_CRED_CC_API_KEY";
    for (pass, rule) in [
        ("file:/etc/passwd", "STREAMKEEPER_CRED_DIRS"),
        ("file:/proc/self/environ", "STREAMKEEPER_CRED_DIRS"),
        ("file:/run/secrets/../../etc/passwd", "it names /etc/passwd"),
        ("env:DATABASE_URL", "STREAMKEEPER_CRED_ENV_PREFIX"),
    ] {
        let r = t
            .api(
                Method::POST,
                "/api/v1/clusters",
                &at,
                Some(cluster("cc", "SASL_SSL", ok_user, pass)),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{pass}: {}",
            r.body
        );
        assert!(r.body.contains(rule), "{pass}: {}", r.body);
    }
    let refused = audit_details(&t, "cluster.create.refused").await;
    assert_eq!(refused.len(), 4, "every refusal is audited");
    assert!(
        refused[3]["refused"]
            .as_str()
            .unwrap_or("")
            .contains("env:DATABASE_URL")
    );

    // Clear-text credentials: only for a cluster marked insecure.
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(cluster(
                "local",
                "SASL_PLAINTEXT",
                ok_user,
                "env:STREAMKEEPER_CRED_PW",
            )),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("SASL_SSL or SSL"), "{}", r.body);
    let mut insecure = cluster(
        "local",
        "SASL_PLAINTEXT",
        ok_user,
        "env:STREAMKEEPER_CRED_PW",
    );
    insecure["insecure_credentials"] = json!(true);
    let r = t
        .api(Method::POST, "/api/v1/clusters", &at, Some(insecure))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let local = r.json()["id"].as_i64().expect("id");

    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(cluster(
                "cc",
                "SASL_SSL",
                ok_user,
                "file:/run/secrets/cc-api-secret",
            )),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::CREATED,
        "a file under /run/secrets: {}",
        r.body
    );
    let cc = r.json()["id"].as_i64().expect("id");
    let created = audit_details(&t, "cluster.create").await;
    assert_eq!(
        created[1]["password_ref"],
        "file:/run/secrets/cc-api-secret"
    );
    assert_eq!(
        created[1]["credentials_changed"],
        json!(["username_ref", "password_ref"])
    );

    // The registry: the same references, https unless the cluster is insecure.
    let registry = |id: i64| format!("/api/v1/clusters/{id}/registry");
    let spec = |url: &str, pass: &str| json!({"url": url, "username_ref": "env:STREAMKEEPER_CRED_SR_KEY", "password_ref": pass});
    for (url, pass, says) in [
        (
            "https://sr.example",
            "env:DATABASE_URL",
            "STREAMKEEPER_CRED_ENV_PREFIX",
        ),
        (
            "https://sr.example",
            "file:/etc/shadow",
            "STREAMKEEPER_CRED_DIRS",
        ),
        (
            "http://sr.example:8081",
            "env:STREAMKEEPER_CRED_SR_SECRET",
            "https://",
        ),
    ] {
        let r = t
            .api(Method::PUT, &registry(cc), &at, Some(spec(url, pass)))
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{url} {pass}: {}",
            r.body
        );
        assert!(r.body.contains(says), "{url} {pass}: {}", r.body);
    }
    assert_eq!(audit_details(&t, "registry.set.refused").await.len(), 3);
    let r = t
        .api(
            Method::PUT,
            &registry(cc),
            &at,
            Some(spec(
                "https://sr.example",
                "env:STREAMKEEPER_CRED_SR_SECRET",
            )),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            &registry(cc),
            &at,
            Some(spec("https://sr.example", "file:/run/secrets/sr-secret")),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let set = audit_details(&t, "registry.set").await;
    assert_eq!(set[1]["credentials_changed"], json!(["password_ref"]));
    assert_eq!(
        set[1]["credentials_were"]["password_ref"],
        "env:STREAMKEEPER_CRED_SR_SECRET"
    );
    assert_eq!(set[1]["password_ref"], "file:/run/secrets/sr-secret");
    let r = t
        .api(
            Method::PUT,
            &registry(local),
            &at,
            Some(spec(
                "http://127.0.0.1:8081",
                "env:STREAMKEEPER_CRED_SR_SECRET",
            )),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "an insecure cluster's registry: {}",
        r.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn outbound_urls_are_checked_when_saved(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let at = t.token(t.user("ada", &[Role::Admin]).await).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": "127.0.0.1:9092"})),
        )
        .await;
    let id = r.json()["id"].as_i64().expect("id");
    let registry = format!("/api/v1/clusters/{id}/registry");
    for (url, says) in [
        (
            "http://169.254.169.254/latest/meta-data",
            "never connects there",
        ),
        ("http://[fd00:ec2::254]/", "never connects there"),
        ("http://10.0.0.5:8081", "STREAMKEEPER_EGRESS_ALLOW=private"),
        ("http://sr.example/a'$(touch /tmp/x)", "must not contain"),
        ("http://sr.example/a`id`", "must not contain"),
        ("http://sr.example/a b", "must not contain"),
    ] {
        let r = t
            .api(Method::PUT, &registry, &at, Some(json!({"url": url})))
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{url}: {}",
            r.body
        );
        assert!(r.body.contains(says), "{url}: {}", r.body);
    }
    assert_eq!(audit_details(&t, "registry.set.refused").await.len(), 6);
    // The tests allow loopback, as the demo does.
    let r = t
        .api(
            Method::PUT,
            &registry,
            &at,
            Some(json!({"url": "http://127.0.0.1:8081"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    let team = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &at,
            Some(json!({"name": "payments"})),
        )
        .await
        .json()["id"]
        .as_i64()
        .expect("team");
    let hook = format!("/api/v1/teams/{team}/webhook");
    let r = t
        .api(
            Method::PUT,
            &hook,
            &at,
            Some(json!({"url": "http://169.254.169.254/latest/meta-data"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("never connects there"), "{}", r.body);
    assert_eq!(audit_details(&t, "team.webhook.refused").await.len(), 1);
    let r = t
        .api(
            Method::PUT,
            &hook,
            &at,
            Some(json!({"url": "https://hooks.example/T1/B2"})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn refused_writes_are_audited(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let vt = t.token(viewer).await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Stable', 1, ARRAY['orders'], now(), now())",
    )
    .bind(cluster)
    .execute(&t.pool)
    .await
    .expect("group");
    sqlx::query("INSERT INTO teams (name, description) VALUES ('payments', '')")
        .execute(&t.pool)
        .await
        .expect("team");
    let flag: i64 = sqlx::query_scalar(
        "INSERT INTO flags (cluster_id, subject_kind, subject, rule, kind, reason, evidence, onset_at)
         VALUES ($1, 'group', 'billing', 'lag', 'STALL', 'stalled', '{}', now()) RETURNING id",
    )
    .bind(cluster)
    .fetch_one(&t.pool)
    .await
    .expect("flag");

    let create = json!({"username": "mallory", "password": "correct-horse-battery-staple", "roles": ["admin"]});
    let owner = json!({"team": "payments"});
    let dismiss = json!({"reason": "noise", "dismissal": "wrong"});
    let attempts = [
        (
            Method::POST,
            "/api/v1/users".to_string(),
            Some(create),
            "create users",
        ),
        (
            Method::POST,
            format!("/api/v1/flags/{flag}/acknowledge"),
            None,
            "another team",
        ),
        (
            Method::POST,
            format!("/api/v1/flags/{flag}/dismiss"),
            Some(dismiss),
            "another team",
        ),
        (
            Method::PUT,
            format!("/api/v1/clusters/{cluster}/groups/billing/owner"),
            Some(owner),
            "change this group's owner",
        ),
    ];
    for (method, path, body, _) in &attempts {
        let r = t.api(method.clone(), path, &vt, body.clone()).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
    }
    // A refused read is not a refused write: it is counted, not chained
    // (`refused_reads_are_counted_per_source`).
    let r = t.api(Method::GET, "/api/v1/users", &vt, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);

    let rows: Vec<(String, String, String, String)> =
        sqlx::query_as("SELECT actor, action, target, detail FROM audit_log ORDER BY id")
            .fetch_all(&t.pool)
            .await
            .expect("audit");
    assert_eq!(rows.len(), attempts.len(), "{rows:?}");
    for ((actor, action, target, detail), (method, path, _, why)) in rows.iter().zip(&attempts) {
        assert_eq!(actor, "vic");
        assert_eq!(action, "request.refused");
        assert_eq!(target, &format!("{method} {path}"));
        assert!(detail.contains(why), "{detail}");
        assert!(!detail.contains("correct-horse"), "no secrets: {detail}");
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_read_token_reads_and_changes_nothing(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let read = t.token_with(admin, &[Scope::Read]).await;
    let me = t.api(Method::GET, "/api/v1/me", &read, None).await;
    assert_eq!(me.status, StatusCode::OK);
    assert_eq!(me.json()["principal"]["scopes"], json!(["read"]));
    assert_eq!(
        t.api(Method::GET, "/api/v1/teams", &read, None)
            .await
            .status,
        StatusCode::OK
    );
    // An admin's read token cannot do admin setup.
    let r = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &read,
            Some(json!({"name": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "forbidden");
    assert!(
        message(&r).contains("lacks the 'write' scope"),
        "{}",
        r.body
    );
    let teams = t.api(Method::GET, "/api/v1/teams", &read, None).await;
    assert_eq!(teams.json()["total"], 0, "no team was created");
    let refused: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT actor, target, detail FROM audit_log WHERE action = 'token.scope.refused'",
    )
    .fetch_all(&t.pool)
    .await
    .expect("audit");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].0, "ada");
    assert_eq!(refused[0].1, "path:/api/v1/teams");
    assert!(refused[0].2.contains(r#""needed":"write""#), "{refused:?}");

    // Server functions are for browsers: even a token with every scope is
    // turned away there (they include approving, which `write` is not).
    let all = t.token(admin).await;
    let r = t
        .send(
            Request::post("/fn/create_team")
                .header(header::AUTHORIZATION, format!("Bearer {all}"))
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("name=evil&description="))
                .expect("request"),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(r.body.contains("Server functions"), "{}", r.body);
    let teams = t.api(Method::GET, "/api/v1/teams", &read, None).await;
    assert_eq!(teams.json()["total"], 0, "no team was created");

    // A producer's lineage token sends lineage (past the scope check, an
    // empty object is refused as no event, 422 rather than 403) and reads
    // nothing.
    let lineage = t.token_with(admin, &[Scope::LineageWrite]).await;
    let r = t
        .api(Method::POST, "/api/v1/lineage", &lineage, Some(json!({})))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("Not an OpenLineage event"), "{}", r.body);
    let r = t.api(Method::GET, "/api/v1/me", &lineage, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(r.body.contains("'read' scope"), "{}", r.body);
}

fn message(r: &support::Reply) -> String {
    r.json()["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn tokens_die_with_their_owners_password_and_expiry(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let bot = t.user("ci-bot", &[Role::Viewer]).await;
    let at = t.token(admin).await;
    let me = |token: String| {
        let t = &t;
        async move { t.api(Method::GET, "/api/v1/me", &token, None).await }
    };

    // A role change leaves the bot's token working.
    let bt = t.token_with(bot, &[Scope::Read]).await;
    let r = t
        .api(
            Method::PATCH,
            &format!("/api/v1/users/{bot}"),
            &at,
            Some(json!({"roles": ["viewer", "owner"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(me(bt.clone()).await.status, StatusCode::OK);

    // `user passwd` ends it.
    streamkeeper_server::accounts::cli::user(
        &t.pool,
        streamkeeper_server::accounts::cli::UserCommand::Passwd {
            username: "ci-bot".into(),
            password_stdin: false,
            temporary: false,
        },
    )
    .await
    .expect("passwd");
    // The CLI is another process: refused once the cache's bound passed.
    tokio::time::sleep(TOKEN_CACHE_TTL).await;
    let r = me(bt.clone()).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(message(&r).contains("password changed"), "{}", r.body);
    // So does any other writer of the password (the store, which the API's
    // and the UI's password changes go through).
    let bt = t.token_with(bot, &[Scope::Read]).await;
    assert_eq!(me(bt.clone()).await.status, StatusCode::OK);
    let mut conn = t.pool.acquire().await.expect("conn");
    let mut row = streamkeeper_server::accounts::store::users::lock(&mut conn, bot)
        .await
        .expect("user")
        .expect("bot");
    row.password_hash =
        streamkeeper_server::platform::password::hash("another-long-passphrase-42").expect("hash");
    streamkeeper_server::accounts::store::users::update(&mut conn, &row, true)
        .await
        .expect("update");
    drop(conn);
    // Changed by another process: refused once the cache's bound passed.
    tokio::time::sleep(TOKEN_CACHE_TTL).await;
    assert_eq!(me(bt).await.status, StatusCode::UNAUTHORIZED);

    // Disabling ends it, and enabling again does not bring it back.
    let bt = t.token_with(bot, &[Scope::Read]).await;
    for disabled in [true, false] {
        let r = t
            .api(
                Method::PATCH,
                &format!("/api/v1/users/{bot}"),
                &at,
                Some(json!({"disabled": disabled})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    }
    let r = me(bt).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(message(&r).contains("disabled"), "{}", r.body);
    let fresh = t.token_with(bot, &[Scope::Read]).await;
    assert_eq!(me(fresh).await.status, StatusCode::OK, "a new token works");

    // An expired token answers 401 and says so.
    let expired = streamkeeper_server::accounts::store::tokens::generate();
    let mut conn = t.pool.acquire().await.expect("conn");
    streamkeeper_server::accounts::store::tokens::insert(
        &mut conn,
        bot,
        "expired",
        &expired,
        &streamkeeper::accounts::token::Scopes::new([Scope::Read]).expect("scopes"),
        Some(chrono::Utc::now() - chrono::Duration::seconds(1)),
    )
    .await
    .expect("insert");
    drop(conn);
    let r = me(expired).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(message(&r).contains("expired"), "{}", r.body);
}

/// Every answer carries the request's id; an internal error shows only that
/// id, the reference to its log lines, and a client's own id is not taken.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn internal_errors_show_the_request_id_and_nothing_else(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let id_of = |r: &support::Reply| {
        r.headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .expect("an X-Request-Id on every answer")
    };
    let a = t.api(Method::GET, "/api/v1/me", &at, None).await;
    let b = t.api(Method::GET, "/api/v1/me", &at, None).await;
    assert_eq!(id_of(&a).len(), 16);
    assert!(id_of(&a).chars().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(id_of(&a), id_of(&b), "one id per request");
    let res = t
        .send(
            Request::get("/healthz")
                .header("x-request-id", "chosen-by-the-client")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
    assert_ne!(id_of(&res), "chosen-by-the-client");

    // A failure the client did not cause: the table under the route is gone.
    sqlx::query("DROP TABLE memberships CASCADE")
        .execute(&t.pool)
        .await
        .expect("drop");
    let r = t.api(Method::GET, "/api/v1/teams", &at, None).await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.body);
    let message = r.json()["error"]["message"]
        .as_str()
        .expect("a message")
        .to_string();
    assert_eq!(
        message,
        format!(
            "Something went wrong on the server (reference {}).",
            id_of(&r)
        )
    );
    assert!(!r.body.contains("memberships"), "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn readiness_names_the_check_that_fails(pool: sqlx::PgPool) {
    use streamkeeper_server::http::AppState;
    use streamkeeper_server::platform::routine::{RunRetention, Runner};

    // The router alone: no routines run, so not ready, and public.
    let t = TestApp::new(pool.clone()).await;
    let r = t.get("/readyz", None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert_eq!(r.json()["database"], "ok");
    assert_eq!(r.json()["migrations"], "current");
    assert_eq!(r.json()["routines"], "not started");

    // With a runner running a routine: ready.
    let mut runner = Runner::new(pool.clone());
    runner.add(std::sync::Arc::new(RunRetention::new(pool.clone())));
    let state = AppState::with_runner(pool.clone(), support::config(), Some(runner.health()));
    let t = TestApp::with_state(pool.clone(), state).await;
    let r = t.get("/readyz", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["routines"], "1 running");

    // A migration the database has not applied: not ready.
    sqlx::query(
        "DELETE FROM _sqlx_migrations WHERE version = (SELECT max(version) FROM _sqlx_migrations)",
    )
    .execute(&pool)
    .await
    .expect("forget a migration");
    let r = t.get("/readyz", None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert!(
        r.json()["migrations"]
            .as_str()
            .unwrap_or("")
            .contains("1 not applied"),
        "{}",
        r.body
    );

    // Postgres gone (a pool to a port nothing listens on): not ready, and
    // the migrations are not asked.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = dead.local_addr().expect("addr").port();
    drop(dead);
    let gone = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(std::time::Duration::from_millis(500))
        .connect_lazy(&format!("postgres://postgres@127.0.0.1:{port}/none"))
        .expect("lazy pool");
    let state = AppState::with_runner(gone, support::config(), Some(runner.health()));
    let t2 = TestApp::with_state(pool.clone(), state).await;
    let r = t2.get("/readyz", None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert_eq!(r.json()["database"], "does not answer");
    assert_eq!(r.json()["migrations"], "not checked (no database)");

    // Shutting the runner down: not ready while it stops.
    let health = runner.health();
    runner.shutdown(std::time::Duration::from_secs(5)).await;
    assert!(health.stopping());
    assert_eq!(health.running(), 0);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_admin_changes_a_cluster_and_removes_it(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.token(t.user("ada", &[Role::Admin]).await).await;
    let viewer = t.token(t.user("vic", &[Role::Viewer]).await).await;
    let cluster = |name: &str, bootstrap: &str, interval: i32, creds: bool| {
        // With credentials SASL over TLS, without them TLS alone.
        let mut c = json!({"name": name, "bootstrap": bootstrap, "security_protocol": "SSL",
            "interval_s": interval});
        if creds {
            c["security_protocol"] = json!("SASL_SSL");
            c["sasl_mechanism"] = json!("PLAIN");
            c["username_ref"] = json!("env:STREAMKEEPER_CRED_CC_API_KEY");
            c["password_ref"] = json!("file:/run/secrets/cc-api-secret");
        }
        c
    };
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &admin,
            Some(cluster("cc", "pkc-1.example:9092", 15, true)),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let id = r.json()["id"].as_i64().expect("id");
    let path = format!("/api/v1/clusters/{id}");

    // Only admins change or remove clusters; each refusal is audited.
    let changed = cluster("renamed", "pkc-2.example:9092", 30, true);
    let r = t
        .api(Method::PUT, &path, &viewer, Some(changed.clone()))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t.api(Method::DELETE, &path, &viewer, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    // A new bootstrap and interval; the name stays what it was.
    let r = t.api(Method::PUT, &path, &admin, Some(changed)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["name"], "cc", "a cluster keeps its name");
    assert_eq!(v["bootstrap"], "pkc-2.example:9092");
    assert_eq!(v["interval_s"], 30);
    assert_eq!(v["credentials_set"], true);
    let updates = audit_details(&t, "cluster.update").await;
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0]["was"]["bootstrap"], "pkc-1.example:9092");
    assert_eq!(updates[0]["credentials_changed"], json!([]));

    // A bad setting changes nothing, and says why.
    let r = t
        .api(
            Method::PUT,
            &path,
            &admin,
            Some(cluster("cc", "pkc-3.example:9092", 1, true)),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("5 to 3600 seconds"), "{}", r.body);
    assert_eq!(audit_details(&t, "cluster.update.refused").await.len(), 1);
    let r = t.api(Method::GET, &path, &admin, None).await;
    assert_eq!(r.json()["bootstrap"], "pkc-2.example:9092");

    // A PUT is the whole cluster: without references, it has none.
    let r = t
        .api(
            Method::PUT,
            &path,
            &admin,
            Some(cluster("cc", "pkc-2.example:9092", 30, false)),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["credentials_set"], false);
    let updates = audit_details(&t, "cluster.update").await;
    assert_eq!(
        updates[1]["credentials_changed"],
        json!(["username_ref", "password_ref"])
    );
    let r = t
        .api(
            Method::PUT,
            "/api/v1/clusters/999999",
            &admin,
            Some(cluster("x", "pkc.example:9092", 30, false)),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // Removing it stops watching it; what was recorded of it is kept.
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, 'orders', 1, now(), now())",
    )
    .bind(id)
    .execute(&t.pool)
    .await
    .expect("a topic");
    let r = t.api(Method::DELETE, &path, &admin, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let r = t.api(Method::GET, &path, &admin, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let topics: i64 = sqlx::query_scalar("SELECT count(*) FROM topics WHERE cluster_id = $1")
        .bind(id)
        .fetch_one(&t.pool)
        .await
        .expect("topics");
    assert_eq!(topics, 1, "kept for the retention period");
    let removed = audit_details(&t, "cluster.remove").await;
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["bootstrap"], "pkc-2.example:9092");
    let r = t.api(Method::DELETE, &path, &admin, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
}

/// A Postgres of one test's own (initdb in a temp folder, trust on
/// loopback), to stop and start again; run as the `postgres` user when the
/// tests run as root, which initdb refuses.
struct OwnPostgres {
    dir: std::path::PathBuf,
    bin: std::path::PathBuf,
    port: u16,
}

impl OwnPostgres {
    fn init() -> Self {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("Postgres is installed (scripts/test installs it)")
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .find(|b| b.join("initdb").is_file())
            .expect("initdb");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = std::env::temp_dir().join(format!("sk-own-pg-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("its folder");
        let pg = Self { dir, bin, port };
        if pg.as_root() {
            let owned = std::process::Command::new("chown")
                .arg("postgres")
                .arg(&pg.dir)
                .status()
                .expect("chown");
            assert!(owned.success());
        }
        let init = pg
            .tool("initdb")
            .arg("-D")
            .arg(&pg.dir)
            .args(["-U", "postgres", "--auth=trust"])
            .output()
            .expect("initdb");
        assert!(
            init.status.success(),
            "{}",
            String::from_utf8_lossy(&init.stderr)
        );
        pg
    }

    fn as_root(&self) -> bool {
        std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
    }

    fn tool(&self, name: &str) -> std::process::Command {
        let path = self.bin.join(name);
        if self.as_root() {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            std::process::Command::new(path)
        }
    }

    fn start(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.display()
        );
        self.ctl(&[
            "-w",
            "-o",
            &options,
            "-l",
            &self.dir.join("log").display().to_string(),
            "start",
        ]);
    }

    fn stop(&self) {
        self.ctl(&["-w", "-m", "fast", "stop"]);
    }

    fn ctl(&self, args: &[&str]) {
        let out = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(&self.dir)
            .args(args)
            .output()
            .expect("pg_ctl");
        assert!(
            out.status.success(),
            "pg_ctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(&self.dir)
            .args(["-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn readiness_goes_503_when_postgres_stops_and_200_when_it_is_back(pool: sqlx::PgPool) {
    use streamkeeper_server::http::AppState;
    use streamkeeper_server::platform::routine::{RunRetention, Runner};

    let pg = OwnPostgres::init();
    pg.start();
    let own = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(std::time::Duration::from_secs(1))
        .connect(&pg.url())
        .await
        .expect("its own Postgres");
    streamkeeper_server::platform::db::MIGRATOR
        .run(&own)
        .await
        .expect("migrated");
    let mut runner = Runner::new(own.clone());
    runner.add(std::sync::Arc::new(RunRetention::new(own.clone())));
    let state = AppState::with_runner(own.clone(), support::config(), Some(runner.health()));
    // Sessions live in the test's database: only readiness asks this one.
    let t = TestApp::with_state(pool, state).await;
    let r = t.get("/readyz", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    pg.stop();
    let r = t.get("/readyz", None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert_eq!(r.json()["database"], "does not answer");
    assert_eq!(
        t.get("/healthz", None).await.status,
        StatusCode::OK,
        "the process is up"
    );

    pg.start();
    let mut ready = t.get("/readyz", None).await;
    for _ in 0..50 {
        if ready.status == StatusCode::OK {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        ready = t.get("/readyz", None).await;
    }
    assert_eq!(ready.status, StatusCode::OK, "back: {}", ready.body);
    assert_eq!(ready.json()["database"], "ok");
    runner.shutdown(std::time::Duration::from_secs(5)).await;
}

/// Postgres refusing a connection itself (here a role's connection limit;
/// too many clients or a password refused alike) is a database that
/// answers: requests are not turned away 503.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_database_refusing_a_connection_itself_is_not_down(pool: sqlx::PgPool) {
    use streamkeeper_server::platform::db_watch::{Database, DbWatch};

    let role = format!("sk_limited_{}", std::process::id());
    for sql in [
        format!("DROP ROLE IF EXISTS {role}"),
        format!("CREATE ROLE {role} LOGIN CONNECTION LIMIT 0"),
    ] {
        sqlx::query(&sql).execute(&pool).await.expect("role");
    }
    let options = (*pool.connect_options()).clone().username(&role);
    let limited = sqlx::postgres::PgPoolOptions::new().connect_lazy_with(options);
    let watch = DbWatch::new();
    let seen = watch.spawn(&limited);
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(watch.now(), Database::Answering);
    seen.abort();
    sqlx::query(&format!("DROP ROLE {role}"))
        .execute(&pool)
        .await
        .expect("dropped");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_database_outage_is_answered_503_within_two_seconds_not_hung(pool: sqlx::PgPool) {
    use std::time::{Duration, Instant};
    use streamkeeper_server::http::AppState;

    let pg = OwnPostgres::init();
    pg.start();
    let own = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(Duration::from_secs(5))
        .connect(&pg.url())
        .await
        .expect("its own Postgres");
    streamkeeper_server::platform::db::MIGRATOR
        .run(&own)
        .await
        .expect("migrated");
    let state = AppState::new(own.clone(), support::config());
    let _watch = state.db.spawn(&own);
    // Sessions live in the test's database; everything else in this one.
    let t = TestApp::with_state(pool, state).await;
    assert_eq!(
        t.get("/api/v1/clusters", None).await.status,
        StatusCode::UNAUTHORIZED
    );

    pg.stop();
    // A token is looked up in the database: the pool would wait out its
    // acquire timeout (5 s); the watch cuts the request short.
    let started = Instant::now();
    let r = t
        .api(
            axum::http::Method::GET,
            "/api/v1/clusters",
            "sk_0123456789abcdef0123456789abcdef",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered in {:?}",
        started.elapsed()
    );
    // A request that needs no database (an unauthenticated one) is answered
    // as ever until the watch sees the outage, within 2 s of it; from then on
    // everything is answered 503 at once.
    while t.get("/api/v1/clusters", None).await.status != StatusCode::SERVICE_UNAVAILABLE {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the watch saw nothing"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (path, page) in [
        ("/api/v1/clusters", false),
        ("/streams", true),
        ("/login", true),
    ] {
        let started = Instant::now();
        let mut req = axum::http::Request::get(path);
        if page {
            // A browser's navigation asks for HTML.
            req = req.header(
                axum::http::header::ACCEPT,
                "text/html,application/xhtml+xml",
            );
        }
        let r = t
            .send(req.body(axum::body::Body::empty()).expect("request"))
            .await;
        let took = started.elapsed();
        assert_eq!(
            r.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{path}: {}",
            r.body
        );
        assert!(
            took < Duration::from_millis(500),
            "{path} answered in {took:?}"
        );
        if page {
            assert!(
                r.body.contains("Its database does not answer"),
                "{path}: {}",
                r.body
            );
        } else {
            assert_eq!(r.json()["error"]["code"], "unavailable", "{}", r.body);
        }
    }
    assert_eq!(
        t.get("/healthz", None).await.status,
        StatusCode::OK,
        "the process is up"
    );
    let started = Instant::now();
    let ready = t.get("/readyz", None).await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(ready.json()["database"], "does not answer");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "readiness says so at once"
    );

    pg.start();
    let mut r = t.get("/api/v1/clusters", None).await;
    for _ in 0..50 {
        if r.status != StatusCode::SERVICE_UNAVAILABLE {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        r = t.get("/api/v1/clusters", None).await;
    }
    assert_eq!(
        r.status,
        StatusCode::UNAUTHORIZED,
        "back to answering: {}",
        r.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_groups_page_charts_each_partition_on_its_own(pool: sqlx::PgPool) {
    use chrono::{Duration, Utc};
    use streamkeeper_server::clients::kafka::reader::PartitionReading;
    use streamkeeper_server::watch::judge::{self, PassResult};
    use streamkeeper_server::watch::kept::KeptWindow;
    use streamkeeper_server::watch::store::{self as clusters, samples};

    let t = TestApp::new(pool.clone()).await;
    t.user("vic", &[Role::Viewer]).await;
    let cookie = t.login("vic", PASSWORD).await.expect("vic signs in");
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('synthetic', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let row = clusters::by_id(&pool, id).await.expect("db").expect("row");
    samples::ensure_partitions(&pool, Utc::now())
        .await
        .expect("partitions");

    // "billing" reads t-billing's two partitions: 70 behind on 0, 30 on 1.
    let now = Utc::now();
    let mut kept = KeptWindow::default();
    for pass in 0..3i64 {
        let at = now - Duration::seconds(30 - 15 * pass);
        let end = 200 + 10 * pass;
        let mut r = reading(&["billing"], at, end - 70, end);
        r.topics[0].partitions.push(PartitionReading {
            partition: 1,
            leader: Some(1),
            replicas: vec![1],
            isr: vec![1],
            log_start: Some(0),
            log_end: Some(end),
        });
        r.groups[0]
            .offsets
            .insert(("t-billing".into(), 1), Some(end - 30));
        let stored = clusters::record_reading(&pool, id, &r)
            .await
            .expect("store");
        kept.push_read(stored.pass_id, r.finished, &stored.samples);
        judge::after_pass(&pool, &row, PassResult::Read(&r), &mut kept)
            .await
            .expect("judge");
    }

    let page = |query: &str| {
        let path = format!("/clusters/{id}/group?name=billing{query}");
        let (t, cookie) = (&t, &cookie);
        async move { t.get(&path, Some(cookie)).await }
    };
    let total = page("").await;
    assert_eq!(total.status, StatusCode::OK, "{}", total.body);
    assert!(
        total.body.contains("Total lag, all partitions") && total.body.contains("highest 100;"),
        "{}",
        total.body
    );
    assert!(
        total
            .body
            .contains("name=billing&amp;topic=t-billing&amp;partition=1&amp;range=1h"),
        "each partition links to its own chart: {}",
        total.body
    );

    let one = page("&topic=t-billing&partition=1").await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.body);
    assert!(
        one.body.contains("Lag of t-billing partition 1")
            && one.body.contains("highest 30;")
            && one.body.contains("data-testid=\"chart-total\""),
        "{}",
        one.body
    );
    // Over a day the partition's largest lag per minute, from the samples.
    let day = page("&topic=t-billing&partition=0&range=24h").await;
    assert!(
        day.body.contains("Lag of t-billing partition 0") && day.body.contains("highest 70;"),
        "{}",
        day.body
    );
    // A partition the group does not read draws no figures, never zeros.
    let none = page("&topic=t-billing&partition=7").await;
    assert!(
        none.body.contains("; no figures; ") && !none.body.contains("highest 0"),
        "{}",
        none.body
    );
    let bad = page("&topic=t-billing&partition=x").await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert!(
        bad.body.contains("is not a partition number"),
        "{}",
        bad.body
    );
}

/// The first item's `field` of a list, asked with `query` (and a 200).
async fn first_of(t: &TestApp, token: &str, query: &str, field: &str) -> serde_json::Value {
    let r = t.api(Method::GET, query, token, None).await;
    assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.body);
    r.json()["items"][0][field].clone()
}

/// Whether the page links to `href` (its `&` escaped as HTML writes it).
fn links(body: &str, href: &str) -> bool {
    body.contains(&format!("href=\"{}\"", href.replace('&', "&amp;")))
        || body.contains(&format!("href=\"{href}\""))
}

/// A bad `sort` is a 400 that names it and the columns.
async fn refuses_sort(t: &TestApp, token: &str, query: &str, columns: &str) {
    let r = t.api(Method::GET, query, token, None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.body);
    assert_eq!(r.json()["error"]["code"], "bad_request");
    let said = message(&r);
    assert!(
        said.contains("unknown sort 'colour' (one of: ") && said.contains(columns),
        "{query}: {said}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn users_audit_and_flags_sort_by_their_columns_on_the_server(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    t.user("vic", &[Role::Viewer]).await;
    let bob = t.user("bob", &[Role::Viewer]).await;
    sqlx::query("UPDATE users SET display_name = 'zed', created_at = now() + interval '1 day' WHERE id = $1")
        .bind(bob)
        .execute(&t.pool)
        .await
        .expect("bob");

    // Users: by username unless asked; each column either way.
    let users = |sort: &str| format!("/api/v1/users?per_page=1&sort={sort}");
    assert_eq!(first_of(&t, &at, "/api/v1/users", "username").await, "ada");
    assert_eq!(
        first_of(&t, &at, &users("username"), "username").await,
        "ada"
    );
    assert_eq!(
        first_of(&t, &at, &users("-username"), "username").await,
        "vic"
    );
    assert_eq!(
        first_of(&t, &at, &users("-name"), "username").await,
        "bob",
        "zed"
    );
    assert_eq!(
        first_of(&t, &at, &users("-created"), "username").await,
        "bob"
    );
    assert_eq!(
        first_of(&t, &at, &users("created"), "username").await,
        "ada"
    );
    refuses_sort(&t, &at, &users("colour"), "username, name, status, created").await;

    // The audit log: newest first unless asked.
    for name in ["b", "c", "a"] {
        let r = t
            .api(
                Method::POST,
                "/api/v1/teams",
                &at,
                Some(json!({"name": name})),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }
    let audit = |sort: &str| format!("/api/v1/audit?action=team.create&sort={sort}");
    assert_eq!(
        first_of(&t, &at, "/api/v1/audit?action=team.create", "target").await,
        "team:a",
        "the newest first"
    );
    assert_eq!(first_of(&t, &at, &audit("id"), "target").await, "team:b");
    assert_eq!(
        first_of(&t, &at, &audit("target"), "target").await,
        "team:a"
    );
    assert_eq!(
        first_of(&t, &at, &audit("-target"), "target").await,
        "team:c"
    );
    assert_eq!(first_of(&t, &at, &audit("-at"), "target").await, "team:a");
    refuses_sort(
        &t,
        &at,
        &audit("colour"),
        "id, at, actor, action, target, source",
    )
    .await;

    // Flags: the latest raised first unless asked.
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('east', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    for (subject, kind, onset_min, raised_min) in [
        ("billing", "STALL", 30, 20),
        ("audit", "WARN", 50, 10),
        ("crm", "STOP", 40, 30),
    ] {
        sqlx::query(
            "INSERT INTO flags (cluster_id, subject_kind, subject, rule, kind, reason, evidence, onset_at, raised_at)
             VALUES ($1, 'group', $2, 'lag', $3, 'why', '{}',
                     now() - make_interval(mins => $4), now() - make_interval(mins => $5))",
        )
        .bind(cluster)
        .bind(subject)
        .bind(kind)
        .bind(onset_min)
        .bind(raised_min)
        .execute(&t.pool)
        .await
        .expect("flag");
    }
    let flags = |sort: &str| format!("/api/v1/flags?scope=all&state=any&sort={sort}");
    assert_eq!(
        first_of(&t, &at, "/api/v1/flags?scope=all&state=any", "subject").await,
        "audit",
        "the latest raised first"
    );
    assert_eq!(first_of(&t, &at, &flags("raised"), "subject").await, "crm");
    assert_eq!(
        first_of(&t, &at, &flags("kind"), "subject").await,
        "billing",
        "STALL"
    );
    assert_eq!(
        first_of(&t, &at, &flags("-kind"), "subject").await,
        "audit",
        "WARN"
    );
    assert_eq!(
        first_of(&t, &at, &flags("-since"), "subject").await,
        "billing"
    );
    assert_eq!(first_of(&t, &at, &flags("since"), "subject").await, "audit");
    assert_eq!(
        first_of(&t, &at, &flags("subject"), "subject").await,
        "audit"
    );
    refuses_sort(
        &t,
        &at,
        &flags("colour"),
        "kind, subject, cluster, team, state, since, raised",
    )
    .await;

    // The pages' headers sort the same way and keep the other filters.
    let cookie = t.login("ada", PASSWORD).await.expect("ada signs in");
    let page = t
        .get("/flags?scope=all&state=any&sort=-kind", Some(&cookie))
        .await;
    assert!(
        page.body.contains("aria-sort=\"descending\"")
            && links(&page.body, "/flags?scope=all&state=any&sort=kind")
            && page
                .body
                .find(">group audit<")
                .zip(page.body.find(">group crm<"))
                .is_some_and(|(warn, stop)| warn < stop),
        "{}",
        page.body
    );
    let page = t.get("/settings/users?sort=-created", Some(&cookie)).await;
    assert!(
        page.body.contains("/settings/users?sort=created")
            && page.body.contains("name=\"sort\" value=\"-created\""),
        "{}",
        page.body
    );
    let page = t
        .get(
            "/settings/audit?action=team.create&sort=target",
            Some(&cookie),
        )
        .await;
    assert!(
        links(
            &page.body,
            "/settings/audit?action=team.create&sort=-target"
        ) && page
            .body
            .find(">team:a<")
            .zip(page.body.find(">team:c<"))
            .is_some_and(|(a, c)| a < c),
        "{}",
        page.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_streams_page_sorts_by_its_columns_on_the_server(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user("vic", &[Role::Viewer]).await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('east', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen)
         VALUES ($1, 'alpha', 3, now(), now()), ($1, 'beta', 1, now(), now()), ($1, 'gamma', 2, now(), now())",
    )
    .bind(cluster)
    .execute(&t.pool)
    .await
    .expect("topics");
    let cookie = t.login("vic", PASSWORD).await.expect("vic signs in");
    // The order the page lists the three in.
    let order = |body: &str| {
        let mut at: Vec<(usize, &str)> = ["alpha", "beta", "gamma"]
            .into_iter()
            .filter_map(|n| body.find(&format!(">{n}<")).map(|i| (i, n)))
            .collect();
        at.sort();
        at.into_iter().map(|(_, n)| n).collect::<Vec<_>>()
    };
    let page = t.get("/streams", Some(&cookie)).await;
    assert_eq!(
        order(&page.body),
        ["alpha", "beta", "gamma"],
        "by cluster, then topic"
    );
    let page = t.get("/streams?sort=-stream", Some(&cookie)).await;
    assert_eq!(order(&page.body), ["gamma", "beta", "alpha"]);
    let page = t
        .get("/streams?status=ok&sort=-partitions", Some(&cookie))
        .await;
    assert_eq!(order(&page.body), ["alpha", "gamma", "beta"]);
    assert!(
        page.body.contains("aria-sort=\"descending\"")
            && links(&page.body, "/streams?status=ok&sort=partitions")
            && page.body.contains("name=\"sort\" value=\"-partitions\""),
        "the header flips the order and the filter keeps it: {}",
        page.body
    );
    let page = t.get("/streams?sort=partitions", Some(&cookie)).await;
    assert_eq!(order(&page.body), ["beta", "gamma", "alpha"]);
    let page = t.get("/streams?sort=colour", Some(&cookie)).await;
    assert!(
        page.body.contains("unknown sort") && page.body.contains("colour"),
        "{}",
        page.body
    );
}

/// A flag on `cluster`'s group `billing`, open, as a pass leaves one.
async fn open_flag(pool: &sqlx::PgPool, cluster: i64) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO flags (cluster_id, subject_kind, subject, rule, kind, reason, evidence, onset_at)
         VALUES ($1, 'group', 'billing', 'lag', 'STOP', 'stopped', '{}', now()) RETURNING id",
    )
    .bind(cluster)
    .fetch_one(pool)
    .await
    .expect("a flag")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_removed_cluster_is_gone_but_kept_until_restored_or_purged(pool: sqlx::PgPool) {
    use streamkeeper_server::platform::routine::{Outcome, Routine, Target};
    let t = TestApp::new(pool.clone()).await;
    let admin = t.token(t.user("ada", &[Role::Admin]).await).await;
    let viewer = t.token(t.user("vic", &[Role::Viewer]).await).await;
    let add = |name: &str| {
        let t = &t;
        let admin = admin.clone();
        let c = json!({"name": name, "bootstrap": "127.0.0.1:1", "interval_s": 5});
        async move {
            let r = t
                .api(Method::POST, "/api/v1/clusters", &admin, Some(c))
                .await;
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
            r.json()["id"].as_i64().expect("id")
        }
    };
    let east = add("east").await;
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, 'orders', 1, now(), now())",
    )
    .bind(east)
    .execute(&pool)
    .await
    .expect("a topic");
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Empty', 0, ARRAY['orders'], now(), now())",
    )
    .bind(east)
    .execute(&pool)
    .await
    .expect("a group");
    let flag = open_flag(&pool, east).await;
    // A pass from before the removal: history, not the window of a
    // restored cluster.
    sqlx::query(
        "INSERT INTO cluster_passes (cluster_id, started_at, finished_at, outcome, problems)
         VALUES ($1, now() - interval '1 hour', now() - interval '1 hour', 'UP', '{}')",
    )
    .bind(east)
    .execute(&pool)
    .await
    .expect("a pass");
    let passes = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM cluster_passes WHERE cluster_id = $1")
            .bind(east)
            .fetch_one(&pool)
            .await
            .expect("passes")
    };

    // Removed: a 204 as before, the purge date on the record.
    let path = format!("/api/v1/clusters/{east}");
    let r = t.api(Method::DELETE, &path, &admin, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let removed = audit_details(&t, "cluster.remove").await;
    let until: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(removed[0]["history_kept_until"].clone()).expect("a purge date");
    let days = (until - chrono::Utc::now()).num_hours() as f64 / 24.0;
    assert!((89.9..=90.0).contains(&days), "{days} days");

    // Gone from the lists, its pages and API 404 as an unknown cluster's.
    let r = t.api(Method::GET, "/api/v1/clusters", &admin, None).await;
    assert_eq!(r.json(), json!([]), "{}", r.body);
    for p in [
        path.clone(),
        format!("{path}/groups"),
        format!("{path}/groups/billing"),
        format!("{path}/streams"),
        format!("{path}/connect"),
        format!("/api/v1/flags/{flag}"),
    ] {
        let r = t.api(Method::GET, &p, &admin, None).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{p}: {}", r.body);
    }
    let r = t
        .api(
            Method::GET,
            "/api/v1/flags?scope=all&state=any",
            &admin,
            None,
        )
        .await;
    assert_eq!(r.json()["total"], 0, "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            &format!("{path}/streams/orders"),
            &admin,
            Some(json!({"domain": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let ada = t.login("ada", PASSWORD).await.expect("ada signs in");
    let r = t.get("/streams", Some(&ada)).await;
    assert!(!r.body.contains("orders"), "{}", r.body);
    let r = t.get(&format!("/clusters/{east}"), Some(&ada)).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);

    // No routine runs for it, and the sampler reads nothing of it.
    let targets = streamkeeper_server::platform::routine::store::cluster_ids(&pool)
        .await
        .expect("targets");
    assert!(!targets.contains(&east), "{targets:?}");
    let sampler =
        streamkeeper_server::watch::routine::Sampler::new(pool.clone(), Default::default());
    let cancel = tokio_util::sync::CancellationToken::new();
    let ran = sampler
        .run(Target::Cluster(east), &cancel)
        .await
        .expect("a run");
    assert_eq!(ran, Outcome::Idle);
    assert_eq!(passes().await, 1, "no pass recorded");

    // Its history stays in Postgres.
    let kept: (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM flags WHERE cluster_id = $1),
                (SELECT count(*) FROM topics WHERE cluster_id = $1)",
    )
    .bind(east)
    .fetch_one(&pool)
    .await
    .expect("kept");
    assert_eq!(kept, (1, 1));

    // Admins list the removed clusters; a viewer may not.
    let r = t
        .api(Method::GET, "/api/v1/clusters?removed=true", &admin, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let list = r.json();
    assert_eq!(list[0]["id"], east, "{list}");
    assert_eq!(list[0]["removed_by"], "ada");
    assert_eq!(list[0]["purged_on"], removed[0]["history_kept_until"]);
    let r = t
        .api(Method::GET, "/api/v1/clusters?removed=true", &viewer, None)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    // Its name is free: a new east may take it, and the old one cannot
    // come back while it does (refused, audited).
    let new_east = add("east").await;
    let restore = format!("{path}/restore");
    let r = t.api(Method::POST, &restore, &admin, None).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(r.body.contains("named east"), "{}", r.body);
    assert_eq!(audit_details(&t, "cluster.restore.refused").await.len(), 1);

    // A viewer's restore is refused and on the record.
    let r = t.api(Method::POST, &restore, &viewer, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let refused: Vec<(String, String)> = sqlx::query_as(
        "SELECT actor, target FROM audit_log WHERE action = 'request.refused' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    assert!(
        refused.contains(&("vic".into(), format!("POST {restore}"))),
        "{refused:?}"
    );

    // With the new east removed, the old one is restored with its history;
    // its windows start now, not with the pass from before.
    let r = t
        .api(
            Method::DELETE,
            &format!("/api/v1/clusters/{new_east}"),
            &admin,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let r = t.api(Method::POST, &restore, &admin, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["name"], "east");
    assert_eq!(audit_details(&t, "cluster.restore").await.len(), 1);
    let r = t
        .api(Method::GET, &format!("/api/v1/flags/{flag}"), &admin, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = t
        .api(Method::GET, &format!("{path}/groups/billing"), &admin, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let window = streamkeeper_server::watch::store::recent_pass_ids(&pool, east, 10)
        .await
        .expect("window");
    assert!(
        window.is_empty(),
        "the old pass is not in its window: {window:?}"
    );
    let targets = streamkeeper_server::platform::routine::store::cluster_ids(&pool)
        .await
        .expect("targets");
    assert!(targets.contains(&east), "watched again: {targets:?}");
    let r = t.api(Method::POST, &restore, &admin, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "not removed: {}", r.body);

    // Housekeeping purges a cluster removed longer ago than the period, with
    // its history, and leaves one removed recently.
    let r = t.api(Method::DELETE, &path, &admin, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    sqlx::query(
        "UPDATE clusters SET removed_at = now() - interval '90 days 1 minute' WHERE id = $1",
    )
    .bind(east)
    .execute(&pool)
    .await
    .expect("removed long ago");
    let housekeeping = streamkeeper_server::watch::routine::SampleHousekeeping::new(pool.clone());
    let ran = housekeeping
        .run(Target::Global, &cancel)
        .await
        .expect("housekeeping");
    let Outcome::Done(done) = ran else {
        panic!("housekeeping did nothing: {ran:?}");
    };
    assert_eq!(done["clusters_purged"], json!(["east"]), "{done}");
    let left: Vec<i64> = sqlx::query_scalar("SELECT id FROM clusters ORDER BY id")
        .fetch_all(&pool)
        .await
        .expect("clusters");
    assert_eq!(left, vec![new_east], "the recently removed one stays");
    let flags: i64 = sqlx::query_scalar("SELECT count(*) FROM flags WHERE cluster_id = $1")
        .bind(east)
        .fetch_one(&pool)
        .await
        .expect("flags");
    assert_eq!(flags, 0, "its history went with it");
    let purged = audit_details(&t, "cluster.purge").await;
    assert_eq!(purged.len(), 1);
    assert_eq!(purged[0]["id"], east);
    assert_eq!(purged[0]["removed_by"], "ada");
    let r = t.api(Method::POST, &restore, &admin, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "purged: {}", r.body);
}

/// A read refused by role is audited as a refused write is, but counted
/// per source and minute (as unauthenticated refusals are): a crawler
/// walking pages it may not read adds a row a minute, not one a request.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn refused_reads_are_counted_per_source(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let owner = t.user("olga", &[Role::Owner]).await;
    let ot = t.token_with(owner, &[Scope::Read]).await;
    for _ in 0..40 {
        let r = t.api(Method::GET, "/api/v1/lineage/fold", &ot, None).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    }
    let rows: Vec<(String, String, String, String, i64)> = sqlx::query_as(
        "SELECT action, actor, target, detail, count FROM audit_refusals
         WHERE action = 'request.read.refused' ORDER BY minute",
    )
    .fetch_all(&t.pool)
    .await
    .expect("counted refusals");
    // Forty attempts: a row a minute (two when they straddle one).
    assert!((1..=2).contains(&rows.len()), "{rows:?}");
    assert_eq!(rows.iter().map(|r| r.4).sum::<i64>(), 40, "{rows:?}");
    let (_, actor, target, detail, _) = &rows[0];
    assert_eq!(actor, "olga");
    assert_eq!(target, "GET /api/v1/lineage/fold");
    assert!(detail.contains("forbidden"), "{detail}");
    let chained: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action LIKE 'request.%refused'")
            .fetch_one(&t.pool)
            .await
            .expect("audit");
    assert_eq!(chained, 0, "the chain is not flooded");
}
