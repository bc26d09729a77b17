//! The review inbox through the REST API and sessions, against real
//! Postgres and the registry double: every four-eyes refusal is refused
//! with a clear message and leaves an audit entry; approvals are bound to
//! the content hash and voided by edits; apply re-checks the base; another
//! domain's item cannot be read or approved by guessing its id; concurrent
//! approve and edit end consistently; autonomous domains apply routine
//! changes and report them.

mod support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;
use streamkeeper_doubles::registry;
use streamkeeper_server::clients::registry::{NewSchema, RegistryClient};
use support::{PASSWORD, TestApp};

const V1: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"}]}"#;
/// Adds an optional field: every reader still reads it.
const ADDS_NOTE: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"note","type":["null","string"],"default":null}]}"#;
/// Adds a second optional field.
const ADDS_TAG: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"tag","type":["null","string"],"default":null}]}"#;
/// Drops `amount`, which the billing group reads.
const DROPS_AMOUNT: &str =
    r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}"#;

/// Everyone the tests need, with tokens.
struct World {
    t: TestApp,
    cluster: i64,
    registry: RegistryClient,
    _registry: registry::RegistryHandle,
    admin: String,
    /// olga: owner in payments, proposes.
    olga: String,
    /// eddie: owner and approver in payments, named; edits.
    eddie: String,
    /// ann and bob: named approvers of payments.
    ann: String,
    bob: String,
    /// carl: an approver in payments' team, not named for the domain.
    carl: String,
    /// vic: a viewer in payments' team.
    vic: String,
    /// ivy: the named approver of the billing domain only.
    ivy: String,
}

async fn world(pool: sqlx::PgPool, autonomy: &str, required: i16) -> World {
    world_on(TestApp::new(pool).await, autonomy, required).await
}

/// The world on an app of the test's own settings.
async fn world_on(t: TestApp, autonomy: &str, required: i16) -> World {
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    for topic in ["orders", "invoices"] {
        sqlx::query(
            "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, $2, 1, now(), now())",
        )
        .bind(cluster)
        .bind(topic)
        .execute(&t.pool)
        .await
        .expect("topic");
    }
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
         VALUES ($1, 'billing', 'Stable', 1, ARRAY['orders'], now(), now())",
    )
    .bind(cluster)
    .execute(&t.pool)
    .await
    .expect("group");

    let admin_id = t.user("ada", &[Role::Admin]).await;
    let admin = t.token(admin_id).await;
    let mut tokens = Vec::new();
    for (name, roles) in [
        ("olga", &[Role::Owner][..]),
        ("eddie", &[Role::Owner, Role::Approver][..]),
        ("ann", &[Role::Approver][..]),
        ("bob", &[Role::Approver][..]),
        ("carl", &[Role::Approver][..]),
        ("vic", &[Role::Viewer][..]),
        ("ivy", &[Role::Approver][..]),
    ] {
        let id = t.user(name, roles).await;
        tokens.push(t.token(id).await);
    }
    let (base, handle) = registry::spawn().await;
    let registry = RegistryClient::new(support::registry_settings(&base)).expect("registry client");
    registry
        .register("orders-value", &NewSchema::avro(V1), false)
        .await
        .expect("register v1");

    let w = World {
        t,
        cluster,
        registry,
        _registry: handle,
        admin,
        olga: tokens[0].clone(),
        eddie: tokens[1].clone(),
        ann: tokens[2].clone(),
        bob: tokens[3].clone(),
        carl: tokens[4].clone(),
        vic: tokens[5].clone(),
        ivy: tokens[6].clone(),
    };
    let ok = |r: &support::Reply, what: &str| {
        assert!(r.status.is_success(), "{what}: {} {}", r.status, r.body);
    };
    ok(
        &w.call(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/registry"),
            &w.admin,
            Some(json!({"url": base})),
        )
        .await,
        "registry",
    );
    for (team, members) in [
        ("payments", &["olga", "eddie", "carl", "vic"][..]),
        ("billing", &["ivy"][..]),
    ] {
        let r = w
            .call(
                Method::POST,
                "/api/v1/teams",
                &w.admin,
                Some(json!({"name": team})),
            )
            .await;
        ok(&r, "team");
        let id = r.json()["id"].as_i64().expect("team id");
        for m in members {
            ok(
                &w.call(
                    Method::POST,
                    &format!("/api/v1/teams/{id}/members"),
                    &w.admin,
                    Some(json!({"username": m})),
                )
                .await,
                "member",
            );
        }
    }
    for (topic, team) in [("orders", "payments"), ("invoices", "billing")] {
        ok(
            &w.call(
                Method::PUT,
                &format!("/api/v1/clusters/{cluster}/streams/{topic}"),
                &w.admin,
                Some(json!({"owner_team": team, "domain": team})),
            )
            .await,
            "stream",
        );
    }
    ok(
        &w.call(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/streams/orders/schema"),
            &w.admin,
            Some(json!({"schema_type": "AVRO", "schema": V1})),
        )
        .await,
        "stream schema",
    );
    w.set_domain(
        "payments",
        autonomy,
        required,
        &["eddie", "ann", "bob"],
        &[],
    )
    .await;
    w.set_domain("billing", "act_after_approval", 1, &["ivy"], &[])
        .await;
    w
}

impl World {
    async fn call(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> support::Reply {
        self.t.api(method, path, token, body).await
    }

    async fn set_domain(
        &self,
        domain: &str,
        autonomy: &str,
        required: i16,
        users: &[&str],
        teams: &[&str],
    ) {
        let r = self
            .call(
                Method::PUT,
                &format!("/api/v1/review-domains/{domain}"),
                &self.admin,
                Some(json!({"autonomy": autonomy, "required_approvals": required,
                            "approver_users": users, "approver_teams": teams})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "set domain: {}", r.body);
    }

    async fn propose(&self, token: &str, topic: &str, schema: &str) -> Value {
        let r = self
            .call(
                Method::POST,
                "/api/v1/review-items",
                token,
                Some(
                    json!({"kind": "producer_change", "cluster_id": self.cluster, "topic": topic,
                            "schema_type": "AVRO", "schema": schema}),
                ),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "propose: {}", r.body);
        r.json()
    }

    async fn item(&self, token: &str, id: i64) -> Value {
        let r = self
            .call(
                Method::GET,
                &format!("/api/v1/review-items/{id}"),
                token,
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "get: {}", r.body);
        r.json()
    }

    /// The token's user approves in person (tokens do not approve).
    async fn approve(&self, token: &str, id: i64, hash: &str) -> support::Reply {
        self.t
            .in_person(
                &format!("/api/v1/review-items/{id}/approvals"),
                token,
                json!({"content_hash": hash}),
            )
            .await
    }

    async fn edit(&self, token: &str, id: i64, revision: i64, schema: &str) -> support::Reply {
        self.call(
            Method::PUT,
            &format!("/api/v1/review-items/{id}"),
            token,
            Some(json!({"loaded_revision": revision, "schema_type": "AVRO", "schema": schema})),
        )
        .await
    }

    /// Audit actions recorded against the item.
    async fn trail(&self, id: i64) -> Vec<String> {
        sqlx::query_scalar("SELECT action FROM audit_log WHERE target = $1 ORDER BY id")
            .bind(format!("review:{id}"))
            .fetch_all(&self.t.pool)
            .await
            .expect("trail")
    }

    async fn registry_versions(&self) -> Vec<u32> {
        self.registry
            .versions(
                "orders-value",
                streamkeeper_server::clients::registry::Deleted::Hide,
            )
            .await
            .expect("versions")
    }
}

fn refused(r: &support::Reply, status: StatusCode, words: &str) {
    assert_eq!(r.status, status, "{}", r.body);
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains(words), "expected '{words}' in: {message}");
}

/// A same-origin approval from a signed-in browser, with its password.
fn browser_approval(cookie: &str, id: i64, content_hash: &str, password: &str) -> Request<Body> {
    Request::post(format!("/api/v1/review-items/{id}/approvals"))
        .header(header::COOKIE, cookie)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ORIGIN, support::ORIGIN)
        .header("sec-fetch-site", "same-origin")
        .body(Body::from(
            json!({"content_hash": content_hash, "password": password}).to_string(),
        ))
        .expect("request")
}

fn hash(item: &Value) -> String {
    item["content_hash"].as_str().expect("hash").to_owned()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn four_eyes_refusals_are_refused_and_audited(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 2).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    assert_eq!(item["state"], "in_review");
    assert_eq!(item["verdict"], "COMPATIBLE", "{item}");
    assert_eq!(
        item["base"]["version"], 1,
        "bound to the subject's latest version"
    );
    assert_eq!(item["approvers"], json!(["eddie", "ann", "bob"]));
    let h1 = hash(&item);
    assert_eq!(h1.len(), 64);

    // Self-approval, by the author.
    refused(
        &w.approve(&w.olga, id, &h1).await,
        StatusCode::FORBIDDEN,
        "You proposed this change",
    );
    // An edit by eddie voids nothing yet but makes him an editor.
    let r = w.edit(&w.eddie, id, 1, ADDS_TAG).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let item = r.json();
    assert_eq!(item["revision"], 2);
    assert_eq!(item["editors"], json!(["eddie"]));
    let h2 = hash(&item);
    assert_ne!(h1, h2, "an edit changes the hash");
    // Approval by an editor, even a named approver.
    refused(
        &w.approve(&w.eddie, id, &h2).await,
        StatusCode::FORBIDDEN,
        "You edited this change",
    );
    // A viewer of the team, and an approver who is not named for the domain.
    refused(
        &w.approve(&w.vic, id, &h2).await,
        StatusCode::FORBIDDEN,
        "need the approver role",
    );
    refused(
        &w.approve(&w.carl, id, &h2).await,
        StatusCode::FORBIDDEN,
        "not a named approver of domain payments",
    );
    // A stale hash: what ann saw before the edit.
    refused(
        &w.approve(&w.ann, id, &h1).await,
        StatusCode::CONFLICT,
        "revision 2",
    );
    // ann approves what is there; a second approval of hers counts once.
    let r = w.approve(&w.ann, id, &h2).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["approval_count"], 1);
    assert_eq!(r.json()["state"], "in_review", "2 approvals required");
    refused(
        &w.approve(&w.ann, id, &h2).await,
        StatusCode::CONFLICT,
        "counts once per person",
    );
    // Apply without enough approvals.
    let apply = format!("/api/v1/review-items/{id}/apply");
    refused(
        &w.call(Method::POST, &apply, &w.olga, None).await,
        StatusCode::CONFLICT,
        "Only approved items can be applied",
    );
    // The author edits again: ann's approval is void, and her old hash too.
    let r = w.edit(&w.olga, id, 2, ADDS_NOTE).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let item = r.json();
    assert_eq!(item["approval_count"], 0, "an edit voids every approval");
    assert!(
        item["state_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("1 approval(s) voided")
    );
    let h3 = hash(&item);
    refused(
        &w.approve(&w.ann, id, &h2).await,
        StatusCode::CONFLICT,
        "revision 3",
    );
    // A stale edit: loaded at revision 2.
    refused(
        &w.edit(&w.olga, id, 2, ADDS_TAG).await,
        StatusCode::CONFLICT,
        "revision 3",
    );
    assert_eq!(
        w.registry_versions().await,
        vec![1],
        "nothing written before approval"
    );

    // The hygiene routine has read the registry: the subjects screen shows
    // version 1, and no reading is due for five minutes.
    let cluster_row = streamkeeper_server::watch::store::by_id(&w.t.pool, w.cluster)
        .await
        .expect("db")
        .expect("cluster");
    let hygiene = || async {
        streamkeeper_server::schemas::routine::run(&w.t.pool, &support::outbound(), &cluster_row)
            .await
            .expect("hygiene");
    };
    let due = || async {
        streamkeeper_server::schemas::store::due_registries(&w.t.pool, 300)
            .await
            .expect("due")
    };
    let shown_versions = || async {
        let r =
            w.t.api(
                Method::GET,
                &format!("/api/v1/clusters/{}/registry/subjects", w.cluster),
                &w.admin,
                None,
            )
            .await;
        r.json()["subjects"]["items"]
            .as_array()
            .expect("subjects")
            .iter()
            .map(|s| s["versions"].clone())
            .collect::<Vec<Value>>()
    };
    hygiene().await;
    assert!(due().await.is_empty(), "read just now");
    assert_eq!(shown_versions().await, vec![json!([1])]);

    // Two named approvers approve: approved, then applied to the registry.
    assert_eq!(w.approve(&w.ann, id, &h3).await.status, StatusCode::OK);
    let r = w.approve(&w.bob, id, &h3).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let item = r.json();
    assert_eq!(item["state"], "applied", "{item}");
    assert_eq!(item["applied_version"], 2);
    assert_eq!(w.registry_versions().await, vec![1, 2]);
    // Writing to the registry makes it due a reading at the routine's next
    // look (a 15 s tick), not in five minutes: the subjects screen then
    // shows the version Streamkeeper registered.
    assert_eq!(due().await, vec![w.cluster], "due right after the apply");
    hygiene().await;
    assert_eq!(shown_versions().await, vec![json!([1, 2])]);
    let current: Vec<&Value> = item["approvals"]
        .as_array()
        .expect("approvals")
        .iter()
        .filter(|a| a["current"] == true)
        .collect();
    assert_eq!(current.len(), 2);
    assert!(
        current.iter().all(|a| a["content_hash"] == h3.as_str()),
        "approvals bound to the hash applied"
    );
    // A closed item takes no more approvals or edits.
    refused(
        &w.edit(&w.olga, id, 3, ADDS_TAG).await,
        StatusCode::CONFLICT,
        "takes no more changes",
    );

    let trail = w.trail(id).await;
    for (action, n) in [
        ("review.propose", 1),
        ("review.edit", 2),
        ("review.edit.refused", 2),
        ("review.approve.refused", 7),
        ("review.apply.refused", 1),
        ("review.approve", 3),
        ("review.apply", 1),
    ] {
        assert_eq!(
            trail.iter().filter(|a| *a == action).count(),
            n,
            "{action} in {trail:?}"
        );
    }
    // Those refusals were audited by the inbox, against the item: the web
    // layer's record of refused writes does not write them again. A refusal
    // the inbox does not record itself (a viewer proposing) is recorded once.
    let r = w
        .call(
            Method::POST,
            "/api/v1/review-items",
            &w.vic,
            Some(
                json!({"kind": "producer_change", "cluster_id": w.cluster, "topic": "orders",
                        "schema_type": "AVRO", "schema": ADDS_TAG}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let generic: Vec<String> =
        sqlx::query_scalar("SELECT target FROM audit_log WHERE action = 'request.refused'")
            .fetch_all(&w.t.pool)
            .await
            .expect("audit");
    assert_eq!(generic, vec!["POST /api/v1/review-items"]);
    // The author was told it is applied; the page shows the trail.
    let olga_view = w.item(&w.olga, id).await;
    assert!(olga_view["trail"].as_array().expect("trail").len() >= trail.len());
    let notes = w
        .call(Method::GET, "/api/v1/notifications", &w.olga, None)
        .await
        .json();
    assert!(
        notes["items"]
            .as_array()
            .expect("notes")
            .iter()
            .any(|n| n["message"]
                .as_str()
                .unwrap_or_default()
                .contains("is applied")),
        "{notes}"
    );
    // The stream's schema is now the registered version.
    let schemas = w
        .call(
            Method::GET,
            &format!("/api/v1/clusters/{}/streams/orders/schemas", w.cluster),
            &w.olga,
            None,
        )
        .await
        .json();
    assert_eq!(schemas["history"][0]["version"], 2, "{schemas}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn another_domains_item_cannot_be_read_or_approved_by_its_id(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let path = format!("/api/v1/review-items/{id}");
    refused(
        &w.call(Method::GET, &path, &w.ivy, None).await,
        StatusCode::NOT_FOUND,
        &format!("Review item {id}"),
    );
    refused(
        &w.approve(&w.ivy, id, &hash(&item)).await,
        StatusCode::NOT_FOUND,
        "was not found",
    );
    let all = w
        .call(Method::GET, "/api/v1/review-items?scope=all", &w.ivy, None)
        .await
        .json();
    assert_eq!(all["total"], 0, "{all}");
    // Waiting lists: ann has it, olga (the author) does not.
    let waiting = w
        .call(Method::GET, "/api/v1/review-items", &w.ann, None)
        .await
        .json();
    assert_eq!(waiting["total"], 1);
    assert_eq!(waiting["items"][0]["waiting_for_me"], true);
    let mine = w
        .call(
            Method::GET,
            "/api/v1/review-items?scope=mine",
            &w.olga,
            None,
        )
        .await
        .json();
    assert_eq!(mine["total"], 1);
    let waiting = w
        .call(Method::GET, "/api/v1/review-items", &w.olga, None)
        .await
        .json();
    assert_eq!(waiting["total"], 0);
    let counts = w
        .call(Method::GET, "/api/v1/me/inbox", &w.ann, None)
        .await
        .json();
    assert_eq!(counts["waiting"], 1);
    assert!(
        counts["unread"].as_i64().unwrap_or_default() >= 1,
        "ann was told: {counts}"
    );
    let trail = w.trail(id).await;
    assert_eq!(
        trail.iter().filter(|a| *a == "review.read.refused").count(),
        2,
        "{trail:?}"
    );
    assert_eq!(w.registry_versions().await, vec![1]);
    // Only admins change a domain's level.
    let r = w
        .call(
            Method::PUT,
            "/api/v1/review-domains/payments",
            &w.olga,
            Some(json!({"autonomy": "autonomous"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let actions = w.t.audit_actions().await;
    assert_eq!(
        actions.iter().filter(|a| *a == "review.domain.set").count(),
        2
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn apply_refuses_a_moved_base_and_sends_the_item_back_to_review(pool: sqlx::PgPool) {
    let w = world(pool, "suggest", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    assert!(
        item["manual_apply"]
            .as_str()
            .unwrap_or_default()
            .contains("/subjects/orders-value/versions"),
        "at suggest the page gives the request to run by hand: {item}"
    );
    let r = w.approve(&w.ann, id, &hash(&item)).await;
    assert_eq!(
        r.json()["state"],
        "approved",
        "approved but not applied at suggest"
    );
    let apply = format!("/api/v1/review-items/{id}/apply");
    refused(
        &w.call(Method::POST, &apply, &w.olga, None).await,
        StatusCode::FORBIDDEN,
        "is at suggest",
    );
    assert_eq!(w.registry_versions().await, vec![1]);

    // Someone registers another version meanwhile; then the level is raised.
    w.registry
        .register("orders-value", &NewSchema::avro(ADDS_TAG), false)
        .await
        .expect("register behind its back");
    w.set_domain(
        "payments",
        "act_after_approval",
        1,
        &["eddie", "ann", "bob"],
        &[],
    )
    .await;
    refused(
        &w.call(Method::POST, &apply, &w.olga, None).await,
        StatusCode::CONFLICT,
        "moved from version 1",
    );
    let item = w.item(&w.olga, id).await;
    assert_eq!(item["state"], "in_review");
    assert_eq!(item["revision"], 2);
    assert_eq!(
        item["base"]["version"], 2,
        "rebased on what the registry holds now"
    );
    assert_eq!(item["approval_count"], 0);
    assert_eq!(
        w.registry_versions().await,
        vec![1, 2],
        "nothing written on a stale base"
    );
    assert!(w.trail(id).await.contains(&"review.stale".to_owned()));
    // Approved again on the new base, it applies.
    let r = w.approve(&w.ann, id, &hash(&item)).await;
    assert_eq!(r.json()["state"], "applied", "{}", r.body);
    assert_eq!(w.registry_versions().await, vec![1, 2, 3]);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn reject_and_withdraw(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let item = w.propose(&w.olga, "orders", DROPS_AMOUNT).await;
    let id = item["id"].as_i64().expect("id");
    assert_eq!(item["verdict"], "INCOMPATIBLE");
    let reject = format!("/api/v1/review-items/{id}/rejections");
    refused(
        &w.t.in_person(&reject, &w.ann, json!({"reason": " "})).await,
        StatusCode::FORBIDDEN,
        "Say why",
    );
    refused(
        &w.t.in_person(&reject, &w.olga, json!({"reason": "no"}))
            .await,
        StatusCode::FORBIDDEN,
        "You proposed",
    );
    let r =
        w.t.in_person(&reject, &w.ann, json!({"reason": "billing reads amount"}))
            .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["state"], "rejected");
    assert!(
        r.json()["state_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("billing reads amount")
    );
    refused(
        &w.approve(&w.bob, id, &hash(&item)).await,
        StatusCode::CONFLICT,
        "rejected",
    );

    let other = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let oid = other["id"].as_i64().expect("id");
    let withdraw = format!("/api/v1/review-items/{oid}/withdraw");
    refused(
        &w.call(Method::POST, &withdraw, &w.ann, None).await,
        StatusCode::FORBIDDEN,
        "Only the author",
    );
    let c = w
        .call(
            Method::POST,
            &format!("/api/v1/review-items/{oid}/comments"),
            &w.ann,
            Some(json!({"body": "why now?"})),
        )
        .await;
    assert_eq!(c.status, StatusCode::CREATED, "{}", c.body);
    let r = w.call(Method::POST, &withdraw, &w.olga, None).await;
    assert_eq!(r.json()["state"], "withdrawn", "{}", r.body);
    assert_eq!(r.json()["comments"][0]["body"], "why now?");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn concurrent_approve_and_edit_end_consistently(pool: sqlx::PgPool) {
    let w = world(pool, "suggest", 1).await;
    for round in 0..6 {
        let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
        let id = item["id"].as_i64().expect("id");
        let h = hash(&item);
        let (approved, edited) =
            tokio::join!(w.approve(&w.ann, id, &h), w.edit(&w.olga, id, 1, ADDS_TAG));
        let item = w.item(&w.olga, id).await;
        match (approved.status, edited.status) {
            // The approval landed first; the edit voided it.
            (StatusCode::OK, StatusCode::OK) => {
                assert_eq!(item["revision"], 2);
                assert_eq!(item["state"], "in_review");
                assert_eq!(item["approval_count"], 0, "round {round}: {item}");
            }
            // The edit landed first; the approval was of a stale hash.
            (StatusCode::CONFLICT, StatusCode::OK) => {
                assert_eq!(item["revision"], 2);
                assert_eq!(item["approval_count"], 0);
                assert!(approved.body.contains("revision 2"), "{}", approved.body);
            }
            other => panic!(
                "round {round}: unexpected outcome {other:?}: {} / {}",
                approved.body, edited.body
            ),
        }
        // No counted approval is ever of a hash other than the current one.
        let stale: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM review_approvals a JOIN review_items i ON i.id = a.item_id
             WHERE a.item_id = $1 AND a.revision = i.revision AND a.content_hash <> i.content_hash",
        )
        .bind(id)
        .fetch_one(&w.t.pool)
        .await
        .expect("count");
        assert_eq!(stale, 0);
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn autonomous_domains_apply_only_routine_changes(pool: sqlx::PgPool) {
    let w = world(pool, "autonomous", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    assert_eq!(item["state"], "applied", "{item}");
    assert_eq!(item["approval_count"], 0);
    let id = item["id"].as_i64().expect("id");
    let trail = w.trail(id).await;
    assert!(
        trail.contains(&"review.auto_approve".to_owned())
            && trail.contains(&"review.apply".to_owned()),
        "{trail:?}"
    );
    let notes = w
        .call(Method::GET, "/api/v1/notifications", &w.ann, None)
        .await
        .json();
    assert!(
        notes["items"]
            .as_array()
            .expect("notes")
            .iter()
            .any(|n| n["message"]
                .as_str()
                .unwrap_or_default()
                .contains("without approval")),
        "approvers are told: {notes}"
    );
    // A breaking change is not routine: it waits for approvers.
    let item = w.propose(&w.olga, "orders", DROPS_AMOUNT).await;
    assert_eq!(item["state"], "in_review");
    assert_eq!(w.registry_versions().await, vec![1, 2]);
    // Watch takes no proposals.
    w.set_domain("payments", "watch", 1, &["ann"], &[]).await;
    let r = w
        .call(
            Method::POST,
            "/api/v1/review-items",
            &w.olga,
            Some(
                json!({"kind": "producer_change", "cluster_id": w.cluster, "topic": "orders",
                        "schema_type": "AVRO", "schema": ADDS_TAG}),
            ),
        )
        .await;
    refused(&r, StatusCode::FORBIDDEN, "at watch");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_browser_approval_needs_the_password_and_the_same_origin(pool: sqlx::PgPool) {
    let w = world(pool, "suggest", 1).await;
    // The approvers' team hears of it by webhook.
    let r = w
        .call(
            Method::POST,
            "/api/v1/teams",
            &w.admin,
            Some(json!({"name": "approvers"})),
        )
        .await;
    let team = r.json()["id"].as_i64().expect("team");
    w.call(
        Method::POST,
        &format!("/api/v1/teams/{team}/members"),
        &w.admin,
        Some(json!({"username": "ann"})),
    )
    .await;
    w.call(
        Method::PUT,
        &format!("/api/v1/teams/{team}/webhook"),
        &w.admin,
        Some(json!({"url": "http://127.0.0.1:9/hook"})),
    )
    .await;

    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let hooks: i64 =
        sqlx::query_scalar("SELECT count(*) FROM deliveries WHERE review_item_id = $1")
            .bind(id)
            .fetch_one(&w.t.pool)
            .await
            .expect("deliveries");
    assert_eq!(hooks, 1, "ann's team webhook is queued");

    let cookie = w.t.login("ann", PASSWORD).await.expect("ann signs in");
    let post = |body: Value, origin: &'static str, site: &'static str| {
        Request::post(format!("/api/v1/review-items/{id}/approvals"))
            .header(header::COOKIE, cookie.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ORIGIN, origin)
            .header("sec-fetch-site", site)
            .body(Body::from(body.to_string()))
            .expect("request")
    };
    let same = support::ORIGIN;
    let h = hash(&item);
    let r =
        w.t.send(post(json!({"content_hash": h}), same, "same-origin"))
            .await;
    refused(
        &r,
        StatusCode::FORBIDDEN,
        "Confirm the approval with your password",
    );
    let r =
        w.t.send(post(
            json!({"content_hash": h, "password": "not-my-password"}),
            same,
            "same-origin",
        ))
        .await;
    refused(
        &r,
        StatusCode::FORBIDDEN,
        "Confirm the approval with your password",
    );
    // A cross-site POST never reaches the handler, password or not.
    let r =
        w.t.send(post(
            json!({"content_hash": h, "password": PASSWORD}),
            "https://evil.example",
            "cross-site",
        ))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    // Counted beside the chain (anyone can send one).
    let cross_site: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_refusals WHERE action = 'request.cross_site'",
    )
    .fetch_one(&w.t.pool)
    .await
    .expect("refusals");
    assert_eq!(cross_site, 1);
    assert_eq!(w.item(&w.olga, id).await["approval_count"], 0);
    let r =
        w.t.send(post(
            json!({"content_hash": h, "password": PASSWORD}),
            same,
            "same-origin",
        ))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["state"], "approved");
    let trail = w.trail(id).await;
    assert_eq!(
        trail
            .iter()
            .filter(|a| *a == "review.approve.refused")
            .count(),
        2,
        "{trail:?}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_item_page_and_its_approve_form_work_without_javascript(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let h = hash(&item);
    let page = format!("/review/{id}");

    let olga = w.t.login("olga", PASSWORD).await.expect("olga signs in");
    let r = w.t.get(&page, Some(&olga)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body.contains(&h), "the page shows the content hash");
    assert!(
        r.body.contains("You proposed this change"),
        "the author is told why not"
    );
    assert!(
        !r.body.contains("/fn/approve_review"),
        "and gets no approve form"
    );
    let ivy = w.t.login("ivy", PASSWORD).await.expect("ivy signs in");
    assert_eq!(
        w.t.get(&page, Some(&ivy)).await.status,
        StatusCode::NOT_FOUND
    );

    let ann = w.t.login("ann", PASSWORD).await.expect("ann signs in");
    let r = w.t.get(&page, Some(&ann)).await;
    assert!(r.body.contains("/fn/approve_review"), "ann may approve");
    // Posted as a browser without JavaScript posts a form.
    let send = |password: &str| {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs([
                ("item_id", id.to_string()),
                ("content_hash", h.clone()),
                ("password", password.to_owned()),
            ])
            .finish();
        Request::post("/fn/approve_review")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "text/html")
            .header(header::REFERER, format!("{}{page}", support::ORIGIN))
            .header(header::ORIGIN, support::ORIGIN)
            .header(header::COOKIE, &ann)
            .body(Body::from(body))
            .expect("request")
    };
    let r = w.t.send(send("not-my-password")).await;
    let back = r
        .location()
        .strip_prefix(support::ORIGIN)
        .unwrap_or(r.location())
        .to_owned();
    assert!(
        back.starts_with(&page) && back.contains("__err="),
        "{} {back}",
        r.status
    );
    let shown = w.t.get(&back, Some(&ann)).await;
    assert!(
        shown
            .body
            .contains("Confirm the approval with your password"),
        "the refusal shows on the page"
    );
    assert_eq!(
        w.item(&w.olga, id).await["state"],
        "in_review",
        "a wrong password approves nothing"
    );
    let r = w.t.send(send(PASSWORD)).await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    assert!(
        r.location().ends_with(&page),
        "back to the item: {}",
        r.location()
    );
    let r = w.t.get(&page, Some(&olga)).await;
    assert!(r.body.contains("applied"), "the author sees it applied");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_registration_names_one_of_the_topics_own_subjects(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let propose = |kind: &str, subject: &str| {
        json!({"kind": kind, "cluster_id": w.cluster, "topic": "orders", "subject": subject,
               "schema_type": "AVRO", "schema": "\"string\""})
    };
    let r = w
        .call(
            Method::POST,
            "/api/v1/review-items",
            &w.olga,
            Some(propose("schema_registration", "orders-key")),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let item = r.json();
    assert_eq!(item["subject"], "orders-key");
    assert_eq!(
        item["check"]["consumers"],
        json!([]),
        "readers are known for values only"
    );
    assert_eq!(item["verdict"], "COMPATIBLE", "{item}");
    let id = item["id"].as_i64().expect("id");
    let r = w.approve(&w.ann, id, &hash(&item)).await;
    assert_eq!(r.json()["state"], "applied", "{}", r.body);
    let keys = w
        .registry
        .versions(
            "orders-key",
            streamkeeper_server::clients::registry::Deleted::Hide,
        )
        .await
        .expect("key versions");
    assert_eq!(keys, vec![1]);

    // Another topic's subject, and a producer change away from the values.
    for (kind, subject, words) in [
        (
            "schema_registration",
            "orders-eu-value",
            "is not one of orders's subjects",
        ),
        (
            "schema_registration",
            "shop.Order",
            "is not one of orders's subjects",
        ),
        (
            "producer_change",
            "orders-key",
            "propose a schema registration",
        ),
    ] {
        let r = w
            .call(
                Method::POST,
                "/api/v1/review-items",
                &w.olga,
                Some(propose(kind, subject)),
            )
            .await;
        refused(&r, StatusCode::UNPROCESSABLE_ENTITY, words);
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn password_guesses_at_approval_are_throttled_like_sign_in(pool: sqlx::PgPool) {
    let w = world(pool, "suggest", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let cookie = w.t.login("ann", PASSWORD).await.expect("ann signs in");
    let attempt = |password: &str| browser_approval(&cookie, id, &hash(&item), password);
    let mut throttled = None;
    for n in 1..=12 {
        let r = w.t.send(attempt("a-wrong-guess")).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
        if r.body.contains("Too many failed password attempts") {
            throttled = Some(n);
            break;
        }
    }
    // Signing in cost nothing; ten failures are free, the eleventh locks
    // the account, and the twelfth is refused without being checked.
    assert_eq!(throttled, Some(12), "throttled after the sign-in budget");
    let r = w.t.send(attempt(PASSWORD)).await;
    refused(
        &r,
        StatusCode::FORBIDDEN,
        "Too many failed password attempts",
    );
    assert_eq!(w.item(&w.olga, id).await["approval_count"], 0);
}

impl World {
    async fn describe(&self, token: &str, topic: &str, body: Value) -> support::Reply {
        self.call(
            Method::PUT,
            &format!("/api/v1/clusters/{}/streams/{topic}", self.cluster),
            token,
            Some(body),
        )
        .await
    }

    async fn stream_domain(&self, topic: &str) -> String {
        sqlx::query_scalar("SELECT domain FROM streams WHERE cluster_id = $1 AND topic = $2")
            .bind(self.cluster)
            .bind(topic)
            .fetch_one(&self.t.pool)
            .await
            .expect("stream")
    }

    /// The details of the audit entries with `action` on `target`.
    async fn audited(&self, action: &str, target: &str) -> Vec<Value> {
        let details: Vec<String> = sqlx::query_scalar(
            "SELECT detail FROM audit_log WHERE action = $1 AND target = $2 ORDER BY id",
        )
        .bind(action)
        .bind(target)
        .fetch_all(&self.t.pool)
        .await
        .expect("audit");
        details
            .iter()
            .map(|d| serde_json::from_str(d).expect("audit detail is JSON"))
            .collect()
    }
}

/// The hole this closes: an owner moved their stream into a domain at
/// *autonomous* (or one whose approver is a friend), proposed, got the
/// change registered without approval, and moved the stream back.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_author_cannot_choose_the_domain_or_level_of_their_change(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    w.set_domain("lenient", "autonomous", 1, &["ivy"], &[])
        .await;
    let r = w
        .describe(
            &w.olga,
            "orders",
            json!({"owner_team": "payments", "domain": "lenient"}),
        )
        .await;
    refused(
        &r,
        StatusCode::FORBIDDEN,
        "Only an admin sets a stream's domain",
    );
    assert_eq!(r.json()["error"]["code"], "refused");
    assert_eq!(w.stream_domain("orders").await, "payments");
    let refusals = w.audited("stream.describe.refused", "stream:orders").await;
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(refusals[0]["domain"]["asked"], "lenient");
    assert_eq!(refusals[0]["domain"]["now"], "payments");
    // Nor the declared level, which the history check is held to.
    refused(
        &w.describe(
            &w.olga,
            "orders",
            json!({"owner_team": "payments", "domain": "payments", "compatibility": "NONE"}),
        )
        .await,
        StatusCode::FORBIDDEN,
        "compatibility level",
    );
    // The rest of the entry stays the owners' to describe.
    let r = w
        .describe(
            &w.olga,
            "orders",
            json!({"owner_team": "payments", "domain": "payments", "tier": 2}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    // An admin moves a stream, but not under an open item, whose approvers
    // and level the old domain fixed.
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let moved = json!({"owner_team": "payments", "domain": "billing", "tier": 2});
    let r = w.describe(&w.admin, "orders", moved.clone()).await;
    refused(&r, StatusCode::CONFLICT, "1 open review item");
    assert_eq!(w.stream_domain("orders").await, "payments");
    assert_eq!(
        w.audited("stream.describe.refused", "stream:orders")
            .await
            .len(),
        3
    );
    let r = w
        .call(
            Method::POST,
            &format!("/api/v1/review-items/{id}/withdraw"),
            &w.olga,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = w.describe(&w.admin, "orders", moved).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(w.stream_domain("orders").await, "billing");
    let described = w.audited("stream.describe", "stream:orders").await;
    let last = described.last().expect("the move is audited");
    assert_eq!(
        last["domain"],
        json!({"before": "payments", "after": "billing"})
    );
}

/// Who reads an item comes from what an admin assigned and what was true
/// when it was proposed, never from a stream row that changes later.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn reading_an_item_follows_assignments_not_the_streams_of_today(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let path = format!("/api/v1/review-items/{id}");
    // billing owns invoices; an admin puts invoices in payments' domain.
    // Before, that let billing's members read every payments item.
    let r = w
        .describe(
            &w.admin,
            "invoices",
            json!({"owner_team": "billing", "domain": "payments"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = w.call(Method::GET, &path, &w.ivy, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    // The stream changes hands: payments' members (the owner team when
    // proposed) still read it; billing, the owner now, does not.
    let r = w
        .describe(
            &w.admin,
            "orders",
            json!({"owner_team": "billing", "domain": "payments"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(w.item(&w.vic, id).await["id"], id);
    let r = w.call(Method::GET, &path, &w.ivy, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    // Named approvers of the domain read it whatever their team.
    assert_eq!(w.item(&w.ann, id).await["id"], id);
    let all = w
        .call(Method::GET, "/api/v1/review-items?scope=all", &w.ivy, None)
        .await
        .json();
    assert_eq!(all["total"], 0, "{all}");
}

/// A recorded check is read by the review items' rule: its submitter, the
/// stream's owner team and the domain's approvers when it was made, admins.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_schema_check_is_read_by_the_review_rule(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let r = w
        .call(
            Method::POST,
            &format!(
                "/api/v1/clusters/{}/streams/orders/compatibility",
                w.cluster
            ),
            &w.olga,
            Some(json!({"schema_type": "AVRO", "schema": DROPS_AMOUNT})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let id = r.json()["id"].as_i64().expect("check id");
    let path = format!("/api/v1/schema-checks/{id}");
    for (who, token) in [
        ("olga", &w.olga),
        ("vic", &w.vic),
        ("ann", &w.ann),
        ("admin", &w.admin),
    ] {
        let r = w.call(Method::GET, &path, token, None).await;
        assert_eq!(r.status, StatusCode::OK, "{who}: {}", r.body);
        assert_eq!(r.json()["verdict"], "INCOMPATIBLE", "{who}");
    }
    let r = w.call(Method::GET, &path, &w.ivy, None).await;
    refused(&r, StatusCode::NOT_FOUND, "That check");
    assert_eq!(
        w.audited("schema.check.read.refused", &format!("check:{id}"))
            .await
            .len(),
        1
    );
    // The stream's page lists the checks each caller may read.
    let schemas = format!("/api/v1/clusters/{}/streams/orders/schemas", w.cluster);
    let listed = |v: Value| v["checks"].as_array().map_or(0, Vec::len);
    assert_eq!(
        listed(w.call(Method::GET, &schemas, &w.vic, None).await.json()),
        1
    );
    assert_eq!(
        listed(w.call(Method::GET, &schemas, &w.ivy, None).await.json()),
        0
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_webhook_that_redirects_is_not_followed_and_the_delivery_fails(pool: sqlx::PgPool) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let w = world(pool, "suggest", 1).await;
    let serve = |app: axum::Router| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("port");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    };
    // Where the redirect points: it must never be posted to.
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let elsewhere = serve(axum::Router::new().fallback(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async { StatusCode::OK }
    }))
    .await;
    let hook = serve(axum::Router::new().fallback(move || {
        let to = format!("{elsewhere}/collect");
        async move { (StatusCode::FOUND, [("location", to)]) }
    }))
    .await;
    let team = w
        .call(
            Method::POST,
            "/api/v1/teams",
            &w.admin,
            Some(json!({"name": "approvers"})),
        )
        .await
        .json()["id"]
        .as_i64()
        .expect("team");
    w.call(
        Method::POST,
        &format!("/api/v1/teams/{team}/members"),
        &w.admin,
        Some(json!({"username": "ann"})),
    )
    .await;
    let r = w
        .call(
            Method::PUT,
            &format!("/api/v1/teams/{team}/webhook"),
            &w.admin,
            Some(json!({"url": format!("{hook}/hook")})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
    w.propose(&w.olga, "orders", ADDS_NOTE).await;

    let webhooks = streamkeeper_server::clients::webhook::Webhooks::new(
        streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
    )
    .expect("webhooks");
    let sent = streamkeeper_server::flags::routine::deliver_due(&w.t.pool, &webhooks)
        .await
        .expect("deliver");
    assert_eq!(sent, 1);
    let (attempts, delivered, error): (i32, bool, Option<String>) = sqlx::query_as(
        "SELECT attempts, delivered_at IS NOT NULL, last_error FROM deliveries WHERE review_item_id IS NOT NULL",
    )
    .fetch_one(&w.t.pool)
    .await
    .expect("delivery");
    assert_eq!(
        (attempts, delivered),
        (1, false),
        "a redirect is a failed delivery"
    );
    assert!(
        error.as_deref().is_some_and(|e| e.contains("redirect")),
        "{error:?}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0, "never followed");
}

async fn user_id(w: &World, name: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM users WHERE username = $1")
        .bind(name)
        .fetch_one(&w.t.pool)
        .await
        .expect("user id")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_tokens_scopes_bound_what_its_user_may_do(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let (ann, olga) = (user_id(&w, "ann").await, user_id(&w, "olga").await);
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let h = hash(&item);

    // ann is a named approver, but no token of hers approves or rejects:
    // approvals are a person's, in the console. Not a read token, not
    // `write`, and not one made before the `approve` scope was retired
    // (which keeps its other scopes).
    let ann_read = w.t.token_with(ann, &[Scope::Read]).await;
    assert_eq!(w.item(&ann_read, id).await["id"], id, "read reads");
    let ann_write = w.t.token_with(ann, &[Scope::Read, Scope::Write]).await;
    let ann_approve = w.t.token_with(ann, &[Scope::Read, Scope::Approve]).await;
    assert_eq!(
        w.item(&ann_approve, id).await["id"],
        id,
        "its read still reads"
    );
    let approvals = format!("/api/v1/review-items/{id}/approvals");
    for token in [&ann_read, &ann_write, &ann_approve] {
        let r = w
            .call(
                Method::POST,
                &approvals,
                token,
                Some(json!({"content_hash": h})),
            )
            .await;
        refused(&r, StatusCode::FORBIDDEN, "done by a person in the console");
        assert_eq!(r.json()["error"]["code"], "forbidden");
    }
    let r = w
        .call(
            Method::POST,
            &format!("/api/v1/review-items/{id}/rejections"),
            &ann_approve,
            Some(json!({"reason": "no"})),
        )
        .await;
    refused(&r, StatusCode::FORBIDDEN, "tokens cannot approve");
    assert_eq!(w.item(&w.ann, id).await["approval_count"], 0);
    assert_eq!(w.item(&w.ann, id).await["state"], "in_review");
    let refusals: Vec<String> = sqlx::query_scalar(
        "SELECT detail FROM audit_log WHERE action = 'token.scope.refused' AND actor = 'ann' ORDER BY id",
    )
    .fetch_all(&w.t.pool)
    .await
    .expect("audit");
    assert_eq!(refusals.len(), 4, "every refusal is on record");
    assert!(refusals[0].contains(r#""needed":"person""#), "{refusals:?}");

    // A CI job's check token runs compatibility checks and proposes nothing.
    let olga_check = w.t.token_with(olga, &[Scope::Check]).await;
    let r = w
        .call(
            Method::POST,
            &format!(
                "/api/v1/clusters/{}/streams/orders/compatibility",
                w.cluster
            ),
            &olga_check,
            Some(json!({"schema_type": "AVRO", "schema": DROPS_AMOUNT})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["verdict"], "INCOMPATIBLE", "{}", r.body);
    let r = w
        .call(
            Method::POST,
            "/api/v1/review-items",
            &olga_check,
            Some(
                json!({"kind": "producer_change", "cluster_id": w.cluster, "topic": "orders",
                        "schema_type": "AVRO", "schema": ADDS_TAG}),
            ),
        )
        .await;
    refused(&r, StatusCode::FORBIDDEN, "lacks the 'propose' scope");
}

/// A registry that cannot be used answers 503 wherever a review item needs
/// it: proposing (nothing is saved) and applying on approval (the item
/// says why, and nothing was written).
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_unusable_registry_is_503_when_proposing_and_applying(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let body = json!({"kind": "producer_change", "cluster_id": w.cluster, "topic": "orders",
                      "schema_type": "AVRO", "schema": ADDS_NOTE});
    w._registry.fail_next(50, registry::Fault::Close);
    let r = w
        .call(Method::POST, "/api/v1/review-items", &w.olga, Some(body))
        .await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "unavailable", "{}", r.body);
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM review_items")
        .fetch_one(&w.t.pool)
        .await
        .expect("count");
    assert_eq!(items, 0, "nothing saved");

    // Proposed while it answers; it fails before the approval applies.
    // (the faults left over are spent first)
    for _ in 0..60 {
        let read = w
            .registry
            .versions(
                "orders-value",
                streamkeeper_server::clients::registry::Deleted::Hide,
            )
            .await;
        if read.is_ok() {
            break;
        }
    }
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    w._registry.fail_next(50, registry::Fault::ServerError);
    // The approval stands; its apply failed and the item says why.
    let r = w.approve(&w.ann, id, &hash(&item)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["state"], "apply_failed", "{}", r.body);
    assert!(
        r.json()["state_reason"]
            .as_str()
            .is_some_and(|why| why.contains("nothing was written")),
        "{}",
        r.body
    );
    // Applying again while it still fails: 503.
    let apply = format!("/api/v1/review-items/{id}/apply");
    let r = w.call(Method::POST, &apply, &w.olga, None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "unavailable", "{}", r.body);
}

/// Gives `name` a TOTP second factor with a known secret; answers the
/// code of a time step.
async fn with_second_factor(w: &World, name: &str) -> impl Fn(u64) -> String {
    const SECRET: &str = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    let id = user_id(w, name).await;
    let mut conn = w.t.pool.acquire().await.expect("conn");
    let secret = streamkeeper_server::accounts::store::users::StoredSecret::Plain(SECRET.into());
    streamkeeper_server::accounts::store::users::enable_totp(&mut conn, id, &secret, 0)
        .await
        .expect("enrol");
    |step| {
        let secret = totp_rs::Secret::try_from_base32(SECRET).expect("base32");
        let totp = totp_rs::Builder::new()
            .with_secret(secret.as_ref().to_vec())
            .build()
            .expect("totp");
        totp.generate(step * streamkeeper::accounts::second_factor::STEP_SECONDS)
            .to_string()
    }
}

fn now_step() -> u64 {
    streamkeeper::accounts::second_factor::time_step(chrono::Utc::now().timestamp())
}

/// Signs in a user with a second factor: password, then a code.
async fn login_with_code(w: &World, name: &str, code: &str) -> String {
    let r =
        w.t.post_form(
            "/login",
            None,
            &[("username", name), ("password", PASSWORD), ("next", "/")],
        )
        .await;
    assert!(r.location().starts_with("/login/code"), "{}", r.location());
    let pending = r.cookie().expect("pending");
    let r =
        w.t.post_form("/login/code", Some(&pending), &[("code", code)])
            .await;
    assert_eq!(r.location(), "/", "signed in");
    r.cookie().expect("session")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_approver_with_a_second_factor_confirms_with_a_current_code(pool: sqlx::PgPool) {
    let w = world(pool, "suggest", 1).await;
    let code = with_second_factor(&w, "ann").await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let h = hash(&item);
    let step = now_step();
    let cookie = login_with_code(&w, "ann", &code(step)).await;
    let post = |body: Value| {
        Request::post(format!("/api/v1/review-items/{id}/approvals"))
            .header(header::COOKIE, cookie.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ORIGIN, support::ORIGIN)
            .header("sec-fetch-site", "same-origin")
            .body(Body::from(body.to_string()))
            .expect("request")
    };
    let r =
        w.t.send(post(json!({"content_hash": h, "password": PASSWORD})))
            .await;
    refused(
        &r,
        StatusCode::FORBIDDEN,
        "a code from your authenticator app",
    );
    let r =
        w.t.send(post(
            json!({"content_hash": h, "password": PASSWORD, "totp": "000000"}),
        ))
        .await;
    refused(
        &r,
        StatusCode::FORBIDDEN,
        "Confirm the approval with a current code",
    );
    // The code that signed in is used up.
    let r =
        w.t.send(post(
            json!({"content_hash": h, "password": PASSWORD, "totp": code(step)}),
        ))
        .await;
    refused(&r, StatusCode::FORBIDDEN, "used already");
    assert_eq!(w.item(&w.olga, id).await["approval_count"], 0);
    assert_eq!(
        w.trail(id)
            .await
            .iter()
            .filter(|a| *a == "review.approve.refused")
            .count(),
        3
    );

    // Without JavaScript, the approve form carries the code.
    let page = format!("/review/{id}");
    let r = w.t.get(&page, Some(&cookie)).await;
    assert!(
        r.body.contains(r#"name="totp""#),
        "the form asks for the code"
    );
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("item_id", id.to_string()),
            ("content_hash", h.clone()),
            ("password", PASSWORD.to_owned()),
            ("totp", code(step + 1)),
        ])
        .finish();
    let r =
        w.t.send(
            Request::post("/fn/approve_review")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::ACCEPT, "text/html")
                .header(header::REFERER, format!("{}{page}", support::ORIGIN))
                .header(header::ORIGIN, support::ORIGIN)
                .header(header::COOKIE, &cookie)
                .body(Body::from(body))
                .expect("request"),
        )
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    assert!(!r.location().contains("__err="), "{}", r.location());
    assert_eq!(w.item(&w.olga, id).await["state"], "approved");
    let trail = w.trail(id).await;
    assert!(trail.iter().any(|a| a == "review.approve"), "{trail:?}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_single_sign_on_approver_confirms_by_a_fresh_sign_in_at_the_provider(pool: sqlx::PgPool) {
    use support::oidc::{self, Provider};
    let p = Provider::start().await;
    let w = world_on(
        TestApp::with_config(pool, oidc::config(&p)).await,
        "suggest",
        1,
    )
    .await;
    // ann signs in through the provider from now on: her groups keep her
    // an approver, and she has no password here.
    sqlx::query(
        "UPDATE users SET oidc_issuer = $1, oidc_subject = 'ann-at-idp', password_hash = '!single-sign-on'
         WHERE username = 'ann'",
    )
    .bind(p.issuer())
    .execute(&w.t.pool)
    .await
    .expect("ann at the provider");
    let ann = json!({"preferred_username": "ann", "groups": ["approvers"]});
    p.set_user("ann-at-idp", ann).await;
    p.set_user(
        "bob-at-idp",
        json!({"preferred_username": "bobby", "groups": []}),
    )
    .await;
    let r = oidc::sign_in(&w.t, &p, "/login/sso", None, "ann-at-idp").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let cookie = r.cookie().expect("ann's session");

    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let h = hash(&item);
    let approve = |password: &str| browser_approval(&cookie, id, &h, password);
    // Without a fresh sign-in at the provider, no approval (a password
    // does not stand in for it).
    let r = w.t.send(approve(PASSWORD)).await;
    refused(&r, StatusCode::FORBIDDEN, "at your identity provider");
    let page = w.t.get(&format!("/review/{id}"), Some(&cookie)).await;
    assert!(
        page.body.contains("data-testid=\"confirm-at-provider\""),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains("name=\"password\" required"),
        "no password asked"
    );

    // The re-authentication asks the provider for a fresh sign-in.
    let next = format!("/review/{id}");
    let start =
        w.t.get(&format!("/login/sso/reauth?next={next}"), Some(&cookie))
            .await;
    assert_eq!(start.status, StatusCode::SEE_OTHER, "{}", start.body);
    let url = url::Url::parse(start.location()).expect("authorize");
    let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(q["prompt"], "login");
    assert_eq!(q["max_age"], "0");
    // Someone else signing in at the provider does not confirm for ann.
    let browser = oidc::browser_cookie(&start);
    let back = p.sign_in_at(start.location(), "bob-at-idp").await;
    let r = w.t.get(&oidc::local(&back), Some(&browser)).await;
    assert_eq!(r.location(), "/login?sso=reauth");
    let r = w.t.send(approve("")).await;
    refused(&r, StatusCode::FORBIDDEN, "at your identity provider");

    let r = oidc::sign_in(
        &w.t,
        &p,
        &format!("/login/sso/reauth?next={next}"),
        Some(&cookie),
        "ann-at-idp",
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains(&format!("url={next}")), "{}", r.body);
    let page = w.t.get(&next, Some(&cookie)).await;
    assert!(
        page.body.contains("data-testid=\"confirmed-at-provider\""),
        "{}",
        page.body
    );
    let r = w.t.send(approve("")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["approval_count"], 1);
    // One fresh sign-in, one approval.
    let used: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT reauth_at FROM users WHERE username = 'ann'")
            .fetch_one(&w.t.pool)
            .await
            .expect("reauth");
    assert!(used.is_none(), "used up");
    let actions = w.t.audit_actions().await;
    assert!(
        actions.contains(&"sso.reauthenticated".to_string()),
        "{actions:?}"
    );
    let reasons: Vec<String> = sqlx::query_scalar(
        "SELECT detail::text FROM audit_log WHERE action IN ('review.approve.refused', 'sso.login.refused') ORDER BY id",
    )
    .fetch_all(&w.t.pool)
    .await
    .expect("reasons");
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("no fresh sign-in at the identity provider")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("re-authentication by another subject")),
        "{reasons:?}"
    );
}

/// Issue 14, item 4: the impact of a topic says which of its consumers'
/// reader schemas a pending producer change breaks, with the item and its
/// reasons for those who may read the item, the break alone for others,
/// and nothing once the change is no longer pending.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_impact_of_a_topic_names_the_readers_a_pending_change_breaks(pool: sqlx::PgPool) {
    use streamkeeper_server::lineage::{IngestLimits, LineageService};
    use streamkeeper_server::platform::routine::{Routine, Target};
    let w = world(pool, "act_after_approval", 1).await;
    // The consumer groups as lineage knows them: billing reads orders.
    let lineage = std::sync::Arc::new(LineageService::new(
        w.t.pool.clone(),
        IngestLimits::for_body_limit(1 << 20),
    ));
    streamkeeper_server::lineage::routine::Derive::new(lineage)
        .run(Target::Global, &tokio_util::sync::CancellationToken::new())
        .await
        .expect("derive");
    let billing = |token: &str| {
        let token = token.to_owned();
        let w = &w;
        async move {
            let r = w
                .call(
                    Method::GET,
                    "/api/v1/lineage/impact?topic=orders",
                    &token,
                    None,
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "impact: {}", r.body);
            let v = r.json();
            v["nodes"]
                .as_array()
                .expect("nodes")
                .iter()
                .find(|n| n["kind"] == "job" && n["name"] == "billing")
                .cloned()
                .unwrap_or_else(|| panic!("billing reached: {v}"))
        }
    };
    assert_eq!(
        billing(&w.ann).await["breaks"],
        json!([]),
        "nothing pending yet"
    );

    // A compatible change breaks no reader; one that drops `amount` breaks billing.
    w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let item = w.propose(&w.olga, "orders", DROPS_AMOUNT).await;
    let id = item["id"].as_i64().expect("id");
    assert_eq!(item["verdict"], "INCOMPATIBLE");

    // ann, a named approver of the item's domain, sees which item and why.
    let seen = billing(&w.ann).await;
    let breaks = seen["breaks"].as_array().expect("breaks");
    assert_eq!(breaks.len(), 1, "{seen}");
    assert_eq!(breaks[0]["item"], id);
    assert_eq!(breaks[0]["title"], item["title"]);
    assert!(
        breaks[0]["topic"]
            .as_str()
            .is_some_and(|t| t.starts_with("dataset:kafka://") && t.ends_with(":orders")),
        "{seen}"
    );
    let reasons = breaks[0]["reasons"].as_array().expect("reasons");
    assert!(
        !reasons.is_empty()
            && reasons
                .iter()
                .any(|r| r.as_str().is_some_and(|r| r.contains("amount"))),
        "{seen}"
    );
    // ivy may not read payments' item: the break is said, not the item or why.
    let hidden = billing(&w.ivy).await;
    assert_eq!(
        hidden["breaks"],
        json!([{"topic": breaks[0]["topic"], "item": null, "title": null, "reasons": []}])
    );

    // The CLI's table names the item too.
    let svc = LineageService::new(w.t.pool.clone(), IngestLimits::for_body_limit(0));
    let key = svc.topic(Some("local"), "orders").await.expect("topic");
    let answer = svc
        .impact(
            &streamkeeper_server::platform::cli::cli_principal(),
            &key,
            streamkeeper::lineage::impact::Direction::Downstream,
            Default::default(),
        )
        .await
        .expect("impact");
    let table = streamkeeper_server::lineage::cli::table(
        &streamkeeper_server::lineage::ImpactView::of(&answer),
    );
    assert!(table.contains(&format!("review #{id}")), "{table}");

    // The impact page says it, and links the item, with JavaScript off.
    let cookie = w.t.login("ann", PASSWORD).await.expect("signs in");
    let page =
        w.t.get(
            &format!("/lineage/impact?topic=orders&cluster_id={}", w.cluster),
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    for shown in [
        "Pending producer change breaks 1 consumer here: billing.".to_string(),
        format!("href=\"/review/{id}\""),
        "class=\"broken\"".to_string(),
    ] {
        assert!(page.body.contains(&shown), "{shown} in {}", page.body);
    }

    // Rejected, it is no longer pending: nothing is broken.
    let r =
        w.t.in_person(
            &format!("/api/v1/review-items/{id}/rejections"),
            &w.ann,
            json!({"reason": "billing reads amount"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(billing(&w.ann).await["breaks"], json!([]));
}

/// A form post as a browser without JavaScript sends it from `page`: the
/// server function answers with a redirect (back to `page` with the error
/// on failure).
fn browser_form(path: &str, cookie: &str, page: &str, form: &[(&str, &str)]) -> Request<Body> {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{}{page}", support::ORIGIN))
        .header(header::ORIGIN, support::ORIGIN)
        .header(header::COOKIE, cookie)
        .body(Body::from(body))
        .expect("request")
}

/// Where a redirect goes, without the origin.
fn went(r: &support::Reply) -> String {
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    r.location()
        .strip_prefix(support::ORIGIN)
        .unwrap_or(r.location())
        .to_owned()
}

fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text of the page's `<textarea name=NAME>`, unescaped.
fn textarea(body: &str, name: &str) -> Option<String> {
    let start = body.find(&format!("<textarea name=\"{name}\""))?;
    let open = start + body[start..].find('>')? + 1;
    let close = open + body[open..].find("</textarea>")?;
    Some(unescape(&body[open..close]))
}

/// The value of the page's `<input name=NAME value=…>`, unescaped.
fn input_value(body: &str, name: &str) -> Option<String> {
    let start = body.find(&format!("name=\"{name}\""))?;
    let tag = &body[start..start + body[start..].find('>')?];
    let v = tag.find("value=\"")? + "value=\"".len();
    Some(unescape(&tag[v..v + tag[v..].find('"')?]))
}

fn same_json(a: &str, b: &str) -> bool {
    serde_json::from_str::<Value>(a).ok() == serde_json::from_str::<Value>(b).ok()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_check_page_starts_from_the_current_schema_and_keeps_a_failed_paste(
    pool: sqlx::PgPool,
) {
    let w = world(pool, "act_after_approval", 1).await;
    let olga = w.t.login("olga", PASSWORD).await.expect("olga signs in");
    let page = format!("/clusters/{}/stream/check?name=orders", w.cluster);

    // The editor starts from the stream's current schema, shown beside it.
    let r = w.t.get(&page, Some(&olga)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let editor = textarea(&r.body, "schema").expect("the editor");
    assert!(same_json(&editor, V1), "prefilled with v1: {editor}");
    assert!(
        editor.contains("\n  \"name\": \"Order\""),
        "laid out to edit, keys in order: {editor}"
    );
    assert!(r.body.contains("data-testid=\"current-schema\""));
    assert!(r.body.contains("name=\"title\""), "a title for review");

    // A schema that does not parse: refused, back to the page with the
    // error, and what was pasted is in the editor again (kept on the
    // server: the address carries the error only).
    let pasted = r#"{"type": "record", "name": "Broken <b>&", "fields": ["#;
    let check = |schema: &'static str, title: &'static str, propose: bool| {
        let mut form = vec![
            ("cluster_id", w.cluster.to_string()),
            ("topic", "orders".to_string()),
            ("schema_type", "AVRO".to_string()),
            ("schema", schema.to_string()),
            ("title", title.to_string()),
        ];
        if propose {
            form.push(("propose", "on".to_string()));
        }
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        browser_form("/fn/check_schema", &olga, &page, &pairs)
    };
    for propose in [false, true] {
        let r = w.t.send(check(pasted, "Break it", propose)).await;
        let back = went(&r);
        assert!(
            back.starts_with(&page) && back.contains("__err="),
            "back to the page with the error: {back}"
        );
        assert!(
            !back.contains("Broken") && !back.contains("Break"),
            "the text is not in the address: {back}"
        );
        let shown = w.t.get(&back, Some(&olga)).await;
        assert_eq!(shown.status, StatusCode::OK);
        assert!(shown.body.contains("class=\"error\""), "the error shows");
        assert_eq!(
            textarea(&shown.body, "schema").as_deref(),
            Some(pasted),
            "the pasted text is kept exactly (propose: {propose})"
        );
        assert_eq!(
            input_value(&shown.body, "title").as_deref(),
            Some("Break it")
        );
        assert!(shown.body.contains("data-testid=\"kept-note\""));
        // Taken once: the next visit starts from the current schema again.
        let again = w.t.get(&page, Some(&olga)).await;
        let editor = textarea(&again.body, "schema").expect("the editor");
        assert!(same_json(&editor, V1), "{editor}");
        assert!(!again.body.contains("data-testid=\"kept-note\""));
    }
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM review_items")
        .fetch_one(&w.t.pool)
        .await
        .expect("items");
    assert_eq!(items, 0, "nothing was proposed");

    // A proposal from the page takes its title, and says so once.
    let r = w.t.send(check(ADDS_NOTE, "Orders get a note", true)).await;
    let item_page = went(&r);
    assert!(item_page.starts_with("/review/"), "{item_page}");
    let id: i64 = item_page["/review/".len()..].parse().expect("item id");
    assert_eq!(w.item(&w.olga, id).await["title"], "Orders get a note");
    let shown = w.t.get(&item_page, Some(&olga)).await;
    assert_eq!(
        shown.body.matches("data-testid=\"flash\"").count(),
        1,
        "one success note"
    );
    assert!(
        shown
            .body
            .contains(&format!("Proposed for review as item {id}."))
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_checked_schema_is_proposed_from_its_report(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let olga = w.t.login("olga", PASSWORD).await.expect("olga signs in");
    let page = format!("/clusters/{}/stream/check?name=orders", w.cluster);
    let r =
        w.t.send(browser_form(
            "/fn/check_schema",
            &olga,
            &page,
            &[
                ("cluster_id", &w.cluster.to_string()),
                ("topic", "orders"),
                ("schema_type", "AVRO"),
                ("schema", ADDS_NOTE),
            ],
        ))
        .await;
    let report = went(&r);
    assert!(report.starts_with("/schema-checks/"), "{report}");
    let check_id = report["/schema-checks/".len()..].to_owned();
    let shown = w.t.get(&report, Some(&olga)).await;
    assert!(
        shown.body.contains("/fn/propose_checked"),
        "the report offers proposing it"
    );

    // Someone who may not read the check is told it does not exist.
    let ivy = w.t.login("ivy", PASSWORD).await.expect("ivy signs in");
    let r =
        w.t.send(browser_form(
            "/fn/propose_checked",
            &ivy,
            &report,
            &[("check_id", &check_id), ("title", "Mine now")],
        ))
        .await;
    assert!(went(&r).contains("__err="), "refused");
    let refused_reads: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action = 'schema.check.read.refused'",
    )
    .fetch_one(&w.t.pool)
    .await
    .expect("audit");
    assert_eq!(refused_reads, 1, "the attempt is recorded");

    // Too long a title is refused with the limit.
    let long = "t".repeat(streamkeeper::review::MAX_TITLE_CHARS + 1);
    let r =
        w.t.send(browser_form(
            "/fn/propose_checked",
            &olga,
            &report,
            &[("check_id", &check_id), ("title", &long)],
        ))
        .await;
    let back = went(&r);
    assert!(back.contains("__err="), "{back}");
    let shown = w.t.get(&back, Some(&olga)).await;
    assert!(shown.body.contains("A title has at most 200 characters"));

    // The author proposes it from the report: exactly the checked schema.
    let r =
        w.t.send(browser_form(
            "/fn/propose_checked",
            &olga,
            &report,
            &[("check_id", &check_id), ("title", "Orders get a note")],
        ))
        .await;
    let item_page = went(&r);
    assert!(item_page.starts_with("/review/"), "{item_page}");
    let id: i64 = item_page["/review/".len()..].parse().expect("item id");
    let item = w.item(&w.olga, id).await;
    assert_eq!(item["title"], "Orders get a note");
    assert_eq!(item["kind"], "producer_change");
    assert_eq!(item["subject"], "orders-value");
    assert!(
        same_json(
            item["content"]["schema"].as_str().unwrap_or_default(),
            ADDS_NOTE
        ),
        "{item}"
    );
    assert_eq!(item["state"], "in_review");
    let shown = w.t.get(&item_page, Some(&olga)).await;
    assert_eq!(shown.body.matches("data-testid=\"flash\"").count(), 1);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_item_page_decides_after_the_diff_and_shows_a_wrong_password_at_its_field(
    pool: sqlx::PgPool,
) {
    let w = world(pool, "act_after_approval", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let h = hash(&item);
    let page = format!("/review/{id}");
    let ann = w.t.login("ann", PASSWORD).await.expect("ann signs in");

    let r = w.t.get(&page, Some(&ann)).await;
    let at = |what: &str| {
        r.body
            .find(&format!("data-testid=\"{what}\""))
            .unwrap_or_else(|| panic!("{what} on the page"))
    };
    assert!(
        at("diff") < at("decide"),
        "the decision comes after the diff"
    );
    assert!(at("item-check") < at("decide"), "and after the checks");
    assert!(
        at("approve-box") < at("reject-box"),
        "approve and reject each in a box of its own"
    );
    assert!(!r.body.contains("data-testid=\"password-error\""));

    let approve = |password: &str| {
        browser_form(
            "/fn/approve_review",
            &ann,
            &page,
            &[
                ("item_id", &id.to_string()),
                ("content_hash", &h),
                ("password", password),
            ],
        )
    };
    let back = went(&w.t.send(approve("not-my-password")).await);
    assert!(back.starts_with(&page) && back.contains("__err="), "{back}");
    let shown = w.t.get(&back, Some(&ann)).await;
    let field = shown
        .body
        .find("data-testid=\"password-error\"")
        .expect("the error at the password field");
    let input = shown
        .body
        .find("name=\"password\"")
        .expect("the password field");
    assert!(input < field, "under its input");
    let text = &shown.body[field..field + shown.body[field..].find("</span>").expect("end")];
    assert!(
        text.ends_with(">Confirm the approval with your password: the one given is not right."),
        "{text}"
    );
    assert!(
        shown
            .body
            .contains("aria-describedby=\"approve-password-error\"")
    );
    let notes_at = shown
        .body
        .find("data-testid=\"action-notes\"")
        .expect("notes");
    let notes =
        &shown.body[notes_at..notes_at + shown.body[notes_at..].find("</div>").expect("end")];
    assert!(
        !notes.contains("Confirm the approval"),
        "not repeated at the top: {notes}"
    );
    assert!(
        !shown.body.contains("not-my-password"),
        "a password is never sent back"
    );

    // The right one: approved and applied, with one success note.
    let back = went(&w.t.send(approve(PASSWORD)).await);
    assert_eq!(back, page);
    let shown = w.t.get(&page, Some(&ann)).await;
    assert_eq!(
        shown.body.matches("data-testid=\"flash\"").count(),
        1,
        "one success note"
    );
    assert!(
        shown
            .body
            .contains("You approved revision 1 (1 of 1 approval)."),
        "{}",
        shown.body
    );
    assert!(!shown.body.contains("data-testid=\"password-error\""));
    let again = w.t.get(&page, Some(&ann)).await;
    assert_eq!(
        again.body.matches("data-testid=\"flash\"").count(),
        0,
        "once"
    );
}

/// The unread notifications of a user about an item.
async fn unread_about(w: &World, username: &str, item: i64) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM notifications n JOIN users u ON u.id = n.user_id
         WHERE u.username = $1 AND n.item_id = $2 AND n.read_at IS NULL",
    )
    .bind(username)
    .bind(item)
    .fetch_one(&w.t.pool)
    .await
    .expect("notifications")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn acting_on_an_item_clears_the_actors_notifications_about_it(pool: sqlx::PgPool) {
    let w = world(pool, "suggest", 1).await;
    let first = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let second = w.propose(&w.olga, "orders", ADDS_TAG).await;
    let (one, two) = (
        first["id"].as_i64().expect("id"),
        second["id"].as_i64().expect("id"),
    );
    let counts = |token: &str| {
        let token = token.to_owned();
        let w = &w;
        async move {
            w.call(Method::GET, "/api/v1/me/inbox", &token, None)
                .await
                .json()
        }
    };
    assert_eq!(counts(&w.ann).await["waiting"], 2, "the badge counts both");
    // The header's badge counts what waits for her, once each (her
    // notifications about them are a dot, not added to the number).
    let ann = w.t.login("ann", PASSWORD).await.expect("ann signs in");
    let header = w.t.get("/review", Some(&ann)).await.body;
    assert!(
        header.contains("data-testid=\"inbox-badge\" class=\"badge count\">2</span>"),
        "{header}"
    );
    assert!(header.contains("title=\"2 unread notification(s)\""));
    assert_eq!(unread_about(&w, "ann", one).await, 1);
    assert_eq!(unread_about(&w, "ann", two).await, 1);

    // ann approves the first: her notification about it is read, the
    // other one waits.
    assert_eq!(
        w.approve(&w.ann, one, &hash(&first)).await.status,
        StatusCode::OK
    );
    assert_eq!(unread_about(&w, "ann", one).await, 0);
    assert_eq!(unread_about(&w, "ann", two).await, 1);
    assert_eq!(counts(&w.ann).await["waiting"], 1);
    let header = w.t.get("/review", Some(&ann)).await.body;
    assert!(header.contains("data-testid=\"inbox-badge\" class=\"badge count\">1</span>"));
    assert!(header.contains("title=\"1 unread notification(s)\""));
    // bob, told of both, did nothing: his stay unread.
    assert_eq!(unread_about(&w, "bob", one).await, 1);

    // bob rejects the second: his notification about it is read.
    let r =
        w.t.in_person(
            &format!("/api/v1/review-items/{two}/rejections"),
            &w.bob,
            json!({"reason": "not now"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(unread_about(&w, "bob", two).await, 0);
    assert_eq!(unread_about(&w, "bob", one).await, 1);
    assert!(unread_about(&w, "olga", two).await >= 1, "olga is told");

    // olga withdraws the first: what she was told about it is read.
    assert!(unread_about(&w, "olga", one).await >= 1, "ann's approval");
    let r = w
        .call(
            Method::POST,
            &format!("/api/v1/review-items/{one}/withdraw"),
            &w.olga,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(unread_about(&w, "olga", one).await, 0);
    assert!(unread_about(&w, "olga", two).await >= 1, "the other stays");
}

/// Applying an approved item by hand is acting on it too: what its
/// applier was told about it is read; others' notifications stay.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn applying_an_item_clears_the_appliers_notifications_about_it(pool: sqlx::PgPool) {
    let w = world(pool, "suggest", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let r = w.approve(&w.ann, id, &hash(&item)).await;
    assert_eq!(r.json()["state"], "approved", "{}", r.body);
    assert!(
        unread_about(&w, "olga", id).await >= 1,
        "told of the approval"
    );
    w.set_domain(
        "payments",
        "act_after_approval",
        1,
        &["eddie", "ann", "bob"],
        &[],
    )
    .await;
    let r = w
        .call(
            Method::POST,
            &format!("/api/v1/review-items/{id}/apply"),
            &w.olga,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["state"], "applied", "{}", r.body);
    assert_eq!(unread_about(&w, "olga", id).await, 0);
    assert_eq!(unread_about(&w, "bob", id).await, 1, "bob did nothing");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_item_warns_when_its_subject_moved_past_its_base(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let cluster_row = streamkeeper_server::watch::store::by_id(&w.t.pool, w.cluster)
        .await
        .expect("db")
        .expect("cluster");
    let hygiene = || async {
        streamkeeper_server::schemas::routine::run(&w.t.pool, &support::outbound(), &cluster_row)
            .await
            .expect("hygiene");
    };
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    assert_eq!(item["base"]["version"], 1);
    hygiene().await;
    let item = w.item(&w.olga, id).await;
    assert!(
        item.get("base_moved").is_none(),
        "still at its base: {item}"
    );
    let olga = w.t.login("olga", PASSWORD).await.expect("olga signs in");
    let page = format!("/review/{id}");
    assert!(
        !w.t.get(&page, Some(&olga))
            .await
            .body
            .contains("data-testid=\"base-moved\"")
    );

    // Someone registers another version by hand; the next reading sees it.
    w.registry
        .register("orders-value", &NewSchema::avro(ADDS_TAG), false)
        .await
        .expect("register v2 by hand");
    hygiene().await;
    let item = w.item(&w.olga, id).await;
    assert_eq!(item["base_moved"]["latest"], 2, "{item}");
    let shown = w.t.get(&page, Some(&olga)).await;
    assert!(
        shown.body.contains("data-testid=\"base-moved\""),
        "the page warns"
    );
    assert!(
        shown
            .body
            .contains("made against version 1, and the registry is at version 2")
    );

    // Once closed, nothing is left to warn about.
    let r = w
        .call(
            Method::POST,
            &format!("/api/v1/review-items/{id}/withdraw"),
            &w.olga,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(w.item(&w.olga, id).await.get("base_moved").is_none());
}

/// The item's page as `username` reads it in the browser.
async fn page_as(w: &World, username: &str, id: i64) -> String {
    let c = w.t.login(username, PASSWORD).await.expect("signs in");
    let r = w.t.get(&format!("/review/{id}"), Some(&c)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

/// Beside the approve button of an INCOMPATIBLE change: the consumer
/// groups it breaks, and — only when the subject's history says so — that
/// the registry will refuse it.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn approving_an_incompatible_change_shows_what_it_breaks(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let drops = w.propose(&w.olga, "orders", DROPS_AMOUNT).await;
    assert_eq!(drops["verdict"], "INCOMPATIBLE", "{drops}");
    let id = drops["id"].as_i64().expect("id");
    let body = page_as(&w, "ann", id).await;
    let approve = body
        .split(r#"data-testid="approve-form""#)
        .nth(1)
        .and_then(|s| s.split("</form>").next())
        .unwrap_or_else(|| panic!("{body}"));
    let breaks = approve
        .split(r#"data-testid="approve-breaks""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{approve}"));
    assert!(
        breaks.contains("Approving it breaks 1 consumer group: billing"),
        "{breaks}"
    );
    // Dropping a field is BACKWARD compatible: the registry takes it.
    assert!(!breaks.contains("registry-refuses"), "{breaks}");

    // Changing `amount`'s type breaks the subject's history too.
    let retyped = V1.replace(r#""amount","type":"double""#, r#""amount","type":"string""#);
    let item = w.propose(&w.olga, "orders", &retyped).await;
    let id = item["id"].as_i64().expect("id");
    let body = page_as(&w, "ann", id).await;
    let refuses = body
        .split(r#"data-testid="registry-refuses""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{body}"));
    assert!(
        refuses.contains("The registry will refuse it: orders-value is at BACKWARD"),
        "{refuses}"
    );

    // A compatible change has nothing of the kind.
    let fine = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let body = page_as(&w, "ann", fine["id"].as_i64().expect("id")).await;
    assert!(
        body.contains("approve-form") && !body.contains("approve-breaks"),
        "{body}"
    );
}

/// A revision apply sent back to review on a moved base names the fields
/// of the new base its schema leaves out.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_rebased_revision_names_the_fields_of_the_new_base_it_drops(pool: sqlx::PgPool) {
    let w = world(pool, "act_after_approval", 1).await;
    let item = w.propose(&w.olga, "orders", ADDS_NOTE).await;
    let id = item["id"].as_i64().expect("id");
    let body = page_as(&w, "ann", id).await;
    assert!(!body.contains("rebase-drops"), "not rebased yet: {body}");
    w.registry
        .register("orders-value", &NewSchema::avro(ADDS_TAG), false)
        .await
        .expect("register behind its back");
    // The approval completes it; apply finds the subject moved.
    w.approve(&w.ann, id, &hash(&item)).await;
    let item = w.item(&w.olga, id).await;
    assert_eq!(item["base"]["version"], 2, "{item}");
    let body = page_as(&w, "ann", id).await;
    let drops = body
        .split(r#"data-testid="rebase-drops""#)
        .nth(1)
        .and_then(|s| s.split("</p>").next())
        .unwrap_or_else(|| panic!("{body}"));
    assert!(
        drops.contains("leaves out 1 field of version 2 (`tag`)"),
        "{drops}"
    );
}

/// Approvers told by email, against a real SMTP server (aiosmtpd): a
/// proposal queues one message per named approver who gave an address
/// and wants to hear of waiting items, sent by the deliveries' routine,
/// with the item's title, verdict, breaking consumers and a link that
/// opens it, and nothing that acts without signing in (no token, no
/// query). The review's transaction never waits on the mail server.
#[sqlx::test(migrations = "../migrations")]
async fn a_proposal_emails_each_named_approver_once_with_a_link_and_no_token(pool: sqlx::PgPool) {
    use streamkeeper_server::clients::smtp::{Security, Smtp, SmtpSettings};
    use support::smtp::{Mode, Sink, header};
    let sink = Sink::start(Mode::Plain, None, None).await;
    let smtp = SmtpSettings {
        host: "127.0.0.1".into(),
        port: sink.port,
        security: Security::None,
        credentials: None,
        from: "Streamkeeper <streamkeeper@example.com>"
            .parse()
            .expect("from"),
        ca_pem: None,
        egress: streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
        timeout: std::time::Duration::from_secs(5),
    };
    let mut cfg = support::config();
    cfg.smtp = Some(smtp.clone());
    let w = world_on(
        TestApp::with_config(pool, cfg).await,
        "act_after_approval",
        1,
    )
    .await;
    // ann wants it; bob gave an address but not for waiting items; eddie
    // gave none; ivy has an address but is not named for payments.
    sqlx::query(
        "UPDATE users SET email = username || '@example.com' WHERE username IN ('ann', 'bob', 'ivy', 'olga')",
    )
    .execute(&w.t.pool)
    .await
    .expect("addresses");
    sqlx::query("UPDATE users SET mail_waiting = false WHERE username = 'bob'")
        .execute(&w.t.pool)
        .await
        .expect("bob's choice");

    let item = w.propose(&w.olga, "orders", DROPS_AMOUNT).await;
    let id = item["id"].as_i64().expect("id");
    let webhooks = streamkeeper_server::clients::webhook::Webhooks::new(
        streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
    )
    .expect("webhooks");
    let sent = streamkeeper_server::flags::routine::deliver_due_with_mail(
        &w.t.pool,
        &webhooks,
        Some(&Smtp::new(smtp)),
    )
    .await
    .expect("deliver");
    assert_eq!(sent, 1, "one message queued: ann's");
    let kept = sink.wait_for(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(sink.messages().len(), 1, "exactly one message");
    let m = &kept[0];
    assert_eq!(m["rcpt_tos"], json!(["ann@example.com"]));
    let data = m["data"].as_str().expect("data");
    assert_eq!(
        header(data, "Message-ID").as_deref(),
        Some(format!("<review-{id}@127.0.0.1>").as_str()),
        "the item's thread opens"
    );
    assert!(
        header(data, "Subject").is_some_and(|s| s.starts_with(&format!("Review needed: #{id} "))),
        "{data}"
    );
    let link = format!("{}/review/{id}", support::ORIGIN);
    assert!(data.contains(&link), "{data}");
    assert!(data.contains("INCOMPATIBLE"), "the verdict: {data}");
    assert!(data.contains("Breaking consumers: billing"), "{data}");
    let lower = data.to_ascii_lowercase();
    assert!(
        !lower.contains("token") && !data.contains(&format!("{link}?")),
        "{data}"
    );
    let delivered: bool = sqlx::query_scalar(
        "SELECT delivered_at IS NOT NULL FROM deliveries WHERE url = 'mailto:ann@example.com'",
    )
    .fetch_one(&w.t.pool)
    .await
    .expect("the delivery");
    assert!(delivered);
}
