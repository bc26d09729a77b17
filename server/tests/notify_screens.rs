//! Notifications' screens over HTTP, as a browser without JavaScript posts
//! their forms (a hydrated page posts the same forms): a team's channels
//! (add, send a test that says what the receiver answered, a broken
//! channel told on its owners' homes until removed, refusals audited,
//! nothing typed lost), its repeat interval (screen, REST, and the routine
//! honouring it), silences shown on the muted group's page, and a flag's
//! delivery log.

mod support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use support::{PASSWORD, TestApp};

async fn cluster(pool: &PgPool) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('prod', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster")
}

async fn team(pool: &PgPool, name: &str) -> i64 {
    sqlx::query_scalar("INSERT INTO teams (name) VALUES ($1) RETURNING id")
        .bind(name)
        .fetch_one(pool)
        .await
        .expect("team")
}

async fn member(t: &TestApp, name: &str, roles: &[Role], team: i64) -> i64 {
    let id = t.user(name, roles).await;
    sqlx::query("INSERT INTO memberships (user_id, team_id) VALUES ($1, $2)")
        .bind(id)
        .bind(team)
        .execute(&t.pool)
        .await
        .expect("member");
    id
}

/// A form posted from `page` as a browser without JavaScript posts it.
async fn post(t: &TestApp, page: &str, cookie: &str, func: &str, form: &[(&str, &str)]) -> String {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let req = Request::post(format!("/fn/{func}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{}{page}", support::ORIGIN))
        .header(header::ORIGIN, support::ORIGIN)
        .header(header::COOKIE, cookie)
        .body(Body::from(body))
        .expect("request");
    let r = t.send(req).await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    let to = r.location();
    to.strip_prefix(support::ORIGIN).unwrap_or(to).to_string()
}

/// The page a form's redirect goes back to, as its author then sees it.
async fn shown(t: &TestApp, back: &str, cookie: &str) -> String {
    let r = t.get(back, Some(cookie)).await;
    assert_eq!(r.status, StatusCode::OK, "{back}: {}", r.body);
    r.body
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_member_adds_a_channel_tests_it_and_a_broken_one_is_told_on_home(pool: PgPool) {
    let t = TestApp::new(pool).await;
    cluster(&t.pool).await;
    let payments = team(&t.pool, "payments").await;
    let fraud = team(&t.pool, "fraud").await;
    member(&t, "pat", &[Role::Owner], payments).await;
    member(&t, "mallory", &[Role::Owner], fraud).await;
    member(&t, "vic", &[Role::Viewer], payments).await;
    t.user("ada", &[Role::Admin]).await;
    let platform = team(&t.pool, "platform").await;
    member(&t, "plato", &[Role::Viewer], platform).await;
    sqlx::query("INSERT INTO settings (key, value) VALUES ('platform_team_id', $1)")
        .bind(platform.to_string())
        .execute(&t.pool)
        .await
        .expect("platform team");
    let (url, rec) = streamkeeper_doubles::oncall::spawn(Vec::new()).await;
    let pat = t.login("pat", PASSWORD).await.expect("pat");
    let page = format!("/settings/teams/{payments}/notifications");

    let body = shown(&t, &page, &pat).await;
    assert!(body.contains("Notifications of payments"), "{body}");
    assert!(body.contains("data-testid=\"no-channels\""), "{body}");
    assert!(body.contains("every 4 h"), "{body}");

    // A bad value: a readable message on the form, with what was typed.
    let back = post(
        &t,
        &page,
        &pat,
        "add_notify_channel",
        &[
            ("team_id", &payments.to_string()),
            ("name", "on-call"),
            ("kind", "alertmanager"),
            ("endpoint", ""),
            ("secret", ""),
            ("kinds", "STOP"),
            ("min_severity", "error"),
            ("clusters", "prod"),
        ],
    )
    .await;
    assert!(back.contains("__err="), "{back}");
    let body = shown(&t, &back, &pat).await;
    assert!(body.contains("The endpoint URL is missing."), "{body}");
    assert!(
        body.contains("value=\"on-call\""),
        "the name is kept: {body}"
    );
    assert!(
        body.contains("value=\"STOP\""),
        "the kinds are kept: {body}"
    );
    assert!(
        body.contains("<option value=\"alertmanager\" selected"),
        "{body}"
    );

    // A Slack webhook URL pasted as it is (a secret: it holds its token)
    // is refused, and not drawn back into the form.
    let pasted = "https://hooks.slack.com/services/T0/B0/s3cr3tt0k3n";
    let back = post(
        &t,
        &page,
        &pat,
        "add_notify_channel",
        &[
            ("team_id", &payments.to_string()),
            ("name", "chat"),
            ("kind", "slack"),
            ("endpoint", pasted),
            ("secret", ""),
            ("kinds", ""),
            ("min_severity", ""),
            ("clusters", ""),
        ],
    )
    .await;
    let body = shown(&t, &back, &pat).await;
    assert!(body.contains("value=\"chat\""), "the name is kept: {body}");
    assert!(!body.contains("s3cr3tt0k3n"), "{body}");

    // A webhook to the on-call double.
    let hook = format!("{url}/services/T9/B9/hook");
    let back = post(
        &t,
        &page,
        &pat,
        "add_notify_channel",
        &[
            ("team_id", &payments.to_string()),
            ("name", "hook"),
            ("kind", "webhook"),
            ("endpoint", &hook),
            ("secret", ""),
            ("kinds", ""),
            ("min_severity", "info"),
            ("clusters", ""),
        ],
    )
    .await;
    assert!(!back.contains("__err="), "{back}");
    let body = shown(&t, &back, &pat).await;
    assert!(body.contains("Added the webhook channel hook."), "{body}");
    assert!(body.contains("data-testid=\"channel-ok\""), "{body}");
    assert!(body.contains("127.0.0.1"), "the host is shown: {body}");
    let id: i64 = sqlx::query_scalar("SELECT id FROM notify_channels WHERE name = 'hook'")
        .fetch_one(&t.pool)
        .await
        .expect("channel");

    // Send a test: the note says what the receiver answered, word for
    // word, and names the stored channel — a name a forged form posts
    // beside the id changes nothing.
    let test = [
        ("team_id", payments.to_string()),
        ("id", id.to_string()),
        ("name", "the CEO's pager".into()),
    ];
    let test: Vec<(&str, &str)> = test.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let back = post(&t, &page, &pat, "test_notify_channel", &test).await;
    let body = shown(&t, &back, &pat).await;
    assert!(
        body.contains("Test sent to hook: the receiver answered HTTP 200, it took the test message. Its answer: 200 ok"),
        "{body}"
    );
    assert!(!body.contains("the CEO"), "{body}");
    assert_eq!(rec.got().len(), 1, "one test message");

    // Revoked: the test says so, the channel is broken on the page, and
    // its team's owner, the admin and the platform team (not a viewer, not
    // another team) see it on their home.
    rec.revoke("/services/T9/B9/hook");
    let back = post(&t, &page, &pat, "test_notify_channel", &test).await;
    let body = shown(&t, &back, &pat).await;
    assert!(body.contains("the receiver answered HTTP 404, it did not take the test message. Its answer: 404 no_service"), "{body}");
    assert!(body.contains("data-testid=\"channel-broken\""), "{body}");
    for (who, sees) in [
        ("pat", true),
        ("ada", true),
        ("vic", false),
        ("mallory", false),
    ] {
        let c = t.login(who, PASSWORD).await.expect("signs in");
        let home = shown(&t, "/", &c).await;
        assert_eq!(
            home.contains("data-testid=\"broken-channels\""),
            sees,
            "{who}: {home}"
        );
        if sees {
            assert!(home.contains("payments · hook (webhook)"), "{home}");
            assert!(home.contains("404 no_service"), "{home}");
        }
    }

    // Another team's member: refused, audited, nothing changed.
    let mal = t.login("mallory", PASSWORD).await.expect("mallory");
    let r = t.get(&page, Some(&mal)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let back = post(
        &t,
        &page,
        &mal,
        "remove_notify_channel",
        &[("team_id", &payments.to_string()), ("id", &id.to_string())],
    )
    .await;
    assert!(back.contains("__err="), "{back}");

    // Removed: gone from the page and from the homes.
    let back = post(
        &t,
        &page,
        &pat,
        "remove_notify_channel",
        &[("team_id", &payments.to_string()), ("id", &id.to_string())],
    )
    .await;
    let body = shown(&t, &back, &pat).await;
    assert!(body.contains("Removed the channel."), "{body}");
    assert!(!shown(&t, "/", &pat).await.contains("broken-channels"));

    let actions = t.audit_actions().await;
    for a in [
        "notify.channel.refused",
        "notify.channel.add",
        "notify.channel.test",
        "request.refused",
        "notify.channel.remove",
    ] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }
    let _ = fraud;
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_repeat_interval_is_set_on_screen_and_rest_and_the_routine_honours_it(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let cid = cluster(&t.pool).await;
    let payments = team(&t.pool, "payments").await;
    let pat_id = member(&t, "pat", &[Role::Owner], payments).await;
    let token = t.token(pat_id).await;
    let path = format!("/api/v1/teams/{payments}/notify-settings");
    let r = t.api(Method::GET, &path, &token, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["repeat_s"], 14400);
    let r = t
        .api(Method::PUT, &path, &token, Some(json!({"repeat_s": 100})))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        r.body.contains("between 5 minutes and 7 days"),
        "{}",
        r.body
    );

    let pat = t.login("pat", PASSWORD).await.expect("pat");
    let page = format!("/settings/teams/{payments}/notifications");
    let back = post(
        &t,
        &page,
        &pat,
        "set_notify_repeat",
        &[
            ("team_id", &payments.to_string()),
            ("repeat_minutes", "soon"),
        ],
    )
    .await;
    assert!(
        shown(&t, &back, &pat)
            .await
            .contains("a whole number of minutes")
    );
    let back = post(
        &t,
        &page,
        &pat,
        "set_notify_repeat",
        &[("team_id", &payments.to_string()), ("repeat_minutes", "30")],
    )
    .await;
    let body = shown(&t, &back, &pat).await;
    assert!(body.contains("told again every 30 min"), "{body}");
    let r = t.api(Method::GET, &path, &token, None).await;
    assert_eq!(r.json()["repeat_s"], 1800);

    // An open flag told 20 minutes ago, with a channel: not due at 30
    // minutes; due once the team says 10.
    let flag = open_flag(&t.pool, cid, payments, "billing").await;
    sqlx::query(
        "INSERT INTO notify_transitions (flag_id, transition, at, fanned_out_at, told)
                 VALUES ($1, 'raise', now() - interval '20 minutes', now(), true)",
    )
    .bind(flag)
    .execute(&t.pool)
    .await
    .expect("told");
    channel(&t.pool, payments).await;
    let queued = streamkeeper_server::notify::store::queue_repeats(
        &mut t.pool.acquire().await.expect("conn"),
    )
    .await
    .expect("q");
    assert_eq!(queued, 0, "not due at 30 min");
    let r = t
        .api(Method::PUT, &path, &token, Some(json!({"repeat_s": 600})))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let queued = streamkeeper_server::notify::store::queue_repeats(
        &mut t.pool.acquire().await.expect("conn"),
    )
    .await
    .expect("q");
    assert_eq!(queued, 1, "due at 10 min");
    let actions = t.audit_actions().await;
    assert!(
        actions.iter().any(|a| a == "notify.settings.refused"),
        "{actions:?}"
    );
    assert_eq!(
        actions.iter().filter(|a| *a == "notify.settings").count(),
        2,
        "{actions:?}"
    );
}

async fn open_flag(pool: &PgPool, cluster: i64, team: i64, group: &str) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO flags (cluster_id, subject_kind, subject, rule, kind, team_id, reason, evidence, onset_at)
         VALUES ($1, 'group', $2, 'lag', 'STOP', $3, 'billing stopped', '{}', now()) RETURNING id",
    )
    .bind(cluster)
    .bind(group)
    .bind(team)
    .fetch_one(pool)
    .await
    .expect("flag")
}

async fn channel(pool: &PgPool, team: i64) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO notify_channels (team_id, name, kind, endpoint)
         VALUES ($1, 'am', 'alertmanager', 'http://127.0.0.1:1/api/v2/alerts') RETURNING id",
    )
    .bind(team)
    .fetch_one(pool)
    .await
    .expect("channel")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_muted_group_says_so_and_a_flags_page_lists_its_deliveries(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let cid = cluster(&t.pool).await;
    let payments = team(&t.pool, "payments").await;
    member(&t, "pat", &[Role::Owner], payments).await;
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen,
                                      owner_team_id, owner_claimed_at)
         VALUES ($1, 'billing', 'Stable', 1, '{orders}', now(), now(), $2, now())",
    )
    .bind(cid)
    .bind(payments)
    .execute(&t.pool)
    .await
    .expect("group");
    let pat = t.login("pat", PASSWORD).await.expect("pat");
    let page = format!("/settings/silences?cluster={cid}");
    let body = shown(&t, &page, &pat).await;
    assert!(body.contains("data-testid=\"no-silences\""), "{body}");

    // No reason: refused on the form, with what was typed kept.
    let until = (chrono::Utc::now() + chrono::Duration::hours(2))
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    let cid_s = cid.to_string();
    let back = post(
        &t,
        &page,
        &pat,
        "add_silence",
        &[
            ("cluster_id", &cid_s),
            ("scope", "group"),
            ("name", "billing"),
            ("until", &until),
            ("reason", " "),
        ],
    )
    .await;
    let body = shown(&t, &back, &pat).await;
    assert!(body.contains("Say why it is muted"), "{body}");
    assert!(body.contains(&format!("value=\"{until}\"")), "{body}");
    let back = post(
        &t,
        &page,
        &pat,
        "add_silence",
        &[
            ("cluster_id", &cid_s),
            ("scope", "group"),
            ("name", "billing"),
            ("until", "someday"),
            ("reason", "deploy"),
        ],
    )
    .await;
    assert!(shown(&t, &back, &pat).await.contains("as 2026-12-31T18:00"));

    let back = post(
        &t,
        &page,
        &pat,
        "add_silence",
        &[
            ("cluster_id", &cid_s),
            ("scope", "group"),
            ("name", "billing"),
            ("until", &until),
            ("reason", "planned deploy"),
        ],
    )
    .await;
    let body = shown(&t, &back, &pat).await;
    assert!(body.contains("Muted the group billing until"), "{body}");
    assert!(body.contains("planned deploy"), "{body}");
    let group = shown(&t, &format!("/clusters/{cid}/group?name=billing"), &pat).await;
    assert!(group.contains("data-testid=\"muted\""), "{group}");
    assert!(group.contains("(planned deploy), by pat"), "{group}");
    assert!(
        !shown(&t, &format!("/clusters/{cid}"), &pat)
            .await
            .contains("data-testid=\"muted\""),
        "a group's silence is not the cluster's"
    );

    // A stream: its page says so too.
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen)
         VALUES ($1, 'orders', 1, now(), now())",
    )
    .bind(cid)
    .execute(&t.pool)
    .await
    .expect("topic");
    sqlx::query("INSERT INTO streams (cluster_id, topic, owner_team_id) VALUES ($1, 'orders', $2)")
        .bind(cid)
        .bind(payments)
        .execute(&t.pool)
        .await
        .expect("stream");
    let back = post(
        &t,
        &page,
        &pat,
        "add_silence",
        &[
            ("cluster_id", &cid_s),
            ("scope", "stream"),
            ("name", "orders"),
            ("until", &until),
            ("reason", "reindex"),
        ],
    )
    .await;
    assert!(!back.contains("__err="), "{back}");
    let stream = shown(&t, &format!("/clusters/{cid}/stream?name=orders"), &pat).await;
    assert!(stream.contains("(reindex), by pat"), "{stream}");

    // A flag of the muted group: its held transition, and a channel's
    // delivery with the receiver's answer, on its page.
    let flag = open_flag(&t.pool, cid, payments, "billing").await;
    sqlx::query(
        "INSERT INTO notify_transitions (flag_id, transition, held) VALUES ($1, 'raise', true)",
    )
    .bind(flag)
    .execute(&t.pool)
    .await
    .expect("held");
    let ch = channel(&t.pool, payments).await;
    sqlx::query(
        "INSERT INTO deliveries (channel_id, transition, flag_ids, url, body, attempts, answer, delivered_at)
         VALUES ($1, 'resolve', ARRAY[$2]::bigint[], '', '{}', 2, '200 ok', now())",
    )
    .bind(ch)
    .bind(flag)
    .execute(&t.pool)
    .await
    .expect("delivery");
    let body = shown(&t, &format!("/flags/{flag}"), &pat).await;
    assert!(body.contains("data-testid=\"delivery-log\""), "{body}");
    assert!(body.contains("held by a silence until"), "{body}");
    assert!(body.contains("(planned deploy)"), "{body}");
    assert!(body.contains("am (alertmanager)"), "{body}");
    assert!(body.contains("delivered"), "{body}");
    assert!(body.contains(": 200 ok"), "{body}");
    // Another team's member sees the flag but not where it was told (its
    // channels and their receivers' answers); the API refuses it too.
    let risk = team(&t.pool, "risk").await;
    let rita = member(&t, "rita", &[Role::Owner], risk).await;
    let rita_in = t.login("rita", PASSWORD).await.expect("rita");
    let body = shown(&t, &format!("/flags/{flag}"), &rita_in).await;
    assert!(!body.contains("data-testid=\"delivery-log\""), "{body}");
    assert!(!body.contains("200 ok"), "{body}");
    assert!(body.contains("shown to its team"), "{body}");
    let token = t.token(rita).await;
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/flags/{flag}/deliveries"),
            &token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    // Ended early: no longer muted by it.
    let id: i64 = sqlx::query_scalar("SELECT id FROM notify_silences WHERE scope = 'group'")
        .fetch_one(&t.pool)
        .await
        .expect("s");
    let back = post(
        &t,
        &page,
        &pat,
        "end_silence",
        &[("cluster_id", &cid_s), ("id", &id.to_string())],
    )
    .await;
    assert!(shown(&t, &back, &pat).await.contains("Ended the silence."));
    // Its own silence ended; the silence of the one stream it reads, its
    // owner's, still holds its flags — and the page says so, as delivery
    // does (`flag_held_by`).
    let group = shown(&t, &format!("/clusters/{cid}/group?name=billing"), &pat).await;
    assert!(group.contains("(reindex), by pat"), "{group}");
    assert!(!group.contains("(planned deploy), by pat"), "{group}");
    let actions = t.audit_actions().await;
    for a in [
        "notify.silence.refused",
        "notify.silence",
        "notify.silence.end",
    ] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }
}

/// A group page's "muted until" says what delivery does (`flag_held_by`,
/// the fan-out's rule): a stream's silence mutes a group reading it only
/// when the stream's owner owns the group too and every stream the group
/// reads is muted.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_groups_page_is_muted_by_its_streams_only_as_delivery_holds_it(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let cid = cluster(&t.pool).await;
    let payments = team(&t.pool, "payments").await;
    let risk = team(&t.pool, "risk").await;
    member(&t, "pat", &[Role::Owner], payments).await;
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen,
                                      owner_team_id, owner_claimed_at)
         VALUES ($1, 'billing', 'Stable', 1, '{orders}', now(), now(), $2, now()),
                ($1, 'audit', 'Stable', 1, '{orders,ledger}', now(), now(), $2, now()),
                ($1, 'fraud', 'Stable', 1, '{orders}', now(), now(), $3, now())",
    )
    .bind(cid)
    .bind(payments)
    .bind(risk)
    .execute(&t.pool)
    .await
    .expect("groups");
    sqlx::query("INSERT INTO streams (cluster_id, topic, owner_team_id) VALUES ($1, 'orders', $2)")
        .bind(cid)
        .bind(payments)
        .execute(&t.pool)
        .await
        .expect("stream");
    sqlx::query(
        "INSERT INTO notify_silences (cluster_id, scope, name, until, reason, created_by)
         VALUES ($1, 'stream', 'orders', now() + interval '2 hours', 'reindex', 'pat')",
    )
    .bind(cid)
    .execute(&t.pool)
    .await
    .expect("silence");
    let pat = t.login("pat", PASSWORD).await.expect("pat");
    let page = |g: &str| format!("/clusters/{cid}/group?name={g}");
    let billing = shown(&t, &page("billing"), &pat).await;
    assert!(billing.contains("data-testid=\"muted\""), "held: {billing}");
    assert!(billing.contains("(reindex), by pat"), "{billing}");
    for (g, why) in [
        ("fraud", "another team's group"),
        ("audit", "it also reads a stream nobody muted"),
    ] {
        let body = shown(&t, &page(g), &pat).await;
        assert!(
            !body.contains("data-testid=\"muted\""),
            "{g}: {why}: {body}"
        );
    }
}
