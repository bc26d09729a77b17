//! One ownership rule (issue 45, item 1): the runtime's one home for it
//! (`platform::ownership`) over real Postgres, and its consumers: group
//! claims, flag routing, schema check readability.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::json;
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;
use streamkeeper_server::platform::ownership;
use support::TestApp;

/// A cluster with teams payments and fraud, the stream `orders` owned by
/// payments, and the groups `billing` (reads orders and clicks) and
/// `audit` (reads clicks, unowned): (cluster, payments, fraud).
async fn demo(pool: &PgPool) -> (i64, i64, i64) {
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster");
    let team = |name: &'static str| async move {
        sqlx::query_scalar::<_, i64>(
            "INSERT INTO teams (name, description) VALUES ($1, '') RETURNING id",
        )
        .bind(name)
        .fetch_one(pool)
        .await
        .expect("team")
    };
    let (payments, fraud) = (team("payments").await, team("fraud").await);
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain) VALUES ($1, 'orders', $2, 'payments')",
    )
    .bind(cluster)
    .bind(payments)
    .execute(pool)
    .await
    .expect("stream");
    for (group, topics) in [
        ("billing", vec!["orders", "clicks"]),
        ("audit", vec!["clicks"]),
    ] {
        sqlx::query(
            "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen)
             VALUES ($1, $2, 'Stable', 1, $3, now(), now())",
        )
        .bind(cluster)
        .bind(group)
        .bind(&topics)
        .execute(pool)
        .await
        .expect("group");
    }
    (cluster, payments, fraud)
}

async fn member(t: &TestApp, name: &str, team: i64) -> String {
    let id = t.user(name, &[Role::Owner]).await;
    sqlx::query("INSERT INTO memberships (user_id, team_id) VALUES ($1, $2)")
        .bind(id)
        .bind(team)
        .execute(&t.pool)
        .await
        .expect("member");
    t.token(id).await
}

async fn claimed(pool: &PgPool, cluster: i64, group: &str) -> Option<i64> {
    sqlx::query_scalar(
        "SELECT owner_team_id FROM consumer_groups WHERE cluster_id = $1 AND name = $2",
    )
    .bind(cluster)
    .bind(group)
    .fetch_one(pool)
    .await
    .expect("group")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_group_is_owned_by_its_claim_else_by_the_stream_it_reads(pool: PgPool) {
    let (cluster, payments, fraud) = demo(&pool).await;
    let billing = ownership::group(&pool, cluster, "billing")
        .await
        .expect("owner")
        .expect("exists")
        .expect("owned");
    assert_eq!(billing.team.id, payments);
    assert_eq!(billing.to_string(), "payments (by stream orders)");
    assert_eq!(
        ownership::group(&pool, cluster, "audit")
            .await
            .expect("owner"),
        Some(None)
    );
    assert_eq!(
        ownership::group(&pool, cluster, "nope")
            .await
            .expect("owner"),
        None
    );
    sqlx::query("UPDATE consumer_groups SET owner_team_id = $1, owner_claimed_at = '2026-12-01T10:00:00Z' WHERE name = 'billing'")
        .bind(fraud)
        .execute(&pool)
        .await
        .expect("claim");
    let billing = ownership::group(&pool, cluster, "billing")
        .await
        .expect("owner")
        .flatten()
        .expect("owned");
    assert_eq!(billing.to_string(), "fraud (claimed on 2026-12-01)");
    let orders = ownership::stream(&pool, cluster, "orders")
        .await
        .expect("owner");
    assert_eq!(orders.map(|o| o.team.id), Some(payments));
    assert_eq!(
        ownership::stream(&pool, cluster, "clicks")
            .await
            .expect("owner"),
        None
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn another_teams_group_by_stream_cannot_be_claimed(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (cluster, payments, fraud) = demo(&t.pool).await;
    let mallory = member(&t, "mallory", fraud).await;
    let pat = member(&t, "pat", payments).await;
    let owner = |g: &str| format!("/api/v1/clusters/{cluster}/groups/{g}/owner");

    // billing reads payments' orders: payments', not free for fraud.
    let r = t
        .api(
            Method::PUT,
            &owner("billing"),
            &mallory,
            Some(json!({"team": "fraud"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(
        r.body.contains("payments's (by stream orders)"),
        "{}",
        r.body
    );
    assert_eq!(
        claimed(&t.pool, cluster, "billing").await,
        None,
        "nothing changed"
    );
    // A group that does not exist: 404, audited, nothing made.
    let r = t
        .api(
            Method::PUT,
            &owner("ghost"),
            &mallory,
            Some(json!({"team": "fraud"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    let refusals: Vec<(String, String)> =
        sqlx::query_as("SELECT action, target FROM audit_log WHERE actor = 'mallory' ORDER BY id")
            .fetch_all(&t.pool)
            .await
            .expect("audit");
    assert_eq!(
        refusals,
        vec![
            (
                "request.refused".to_string(),
                format!("PUT {}", owner("billing"))
            ),
            ("group.owner.refused".to_string(), "group:ghost".to_string()),
        ]
    );
    // The unowned group is anyone's to claim for their own team.
    let r = t
        .api(
            Method::PUT,
            &owner("audit"),
            &mallory,
            Some(json!({"team": "fraud"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    // payments makes its inherited ownership explicit.
    let r = t
        .api(
            Method::PUT,
            &owner("billing"),
            &pat,
            Some(json!({"team": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(claimed(&t.pool, cluster, "billing").await, Some(payments));
    let at: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT owner_claimed_at FROM consumer_groups WHERE name = 'billing'")
            .fetch_one(&t.pool)
            .await
            .expect("at");
    assert!(at.is_some(), "the claim's time is kept");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_check_of_an_unowned_stream_is_not_found_for_others_not_a_500(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (cluster, _, fraud) = demo(&t.pool).await;
    let mallory = member(&t, "mallory", fraud).await;
    // Checked when `clicks` had no owner: the frozen owner team is NULL.
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO compatibility_checks (cluster_id, topic, schema_type, schema, verdict, report,
                                           submitted_by, submitted_at, decided_at, owner_team_id, domain)
         VALUES ($1, 'clicks', 'AVRO', '\"string\"', 'INCOMPATIBLE', '{}', 'ada', now(), now(), NULL, '')
         RETURNING id",
    )
    .bind(cluster)
    .fetch_one(&t.pool)
    .await
    .expect("check");
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/schema-checks/{id}"),
            &mallory,
            None,
        )
        .await;
    assert!(
        r.status == StatusCode::NOT_FOUND || r.status == StatusCode::FORBIDDEN,
        "{}: {}",
        r.status,
        r.body
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_event_from_the_future_is_refused_and_pins_nothing(pool: PgPool) {
    let t = TestApp::new(pool).await;
    demo(&t.pool).await;
    let id = t.user("mallory", &[Role::Owner]).await;
    let mallory = t.token_with(id, &[Scope::LineageWrite]).await;
    let event = |at: &str| {
        json!({"eventTime": at, "producer": "p",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
            "dataset": {"namespace": "postgres://db:5432", "name": "shop.orders", "facets": {
                "ownership": {"_producer": "p", "_schemaURL": "s",
                    "owners": [{"name": "payments", "type": "TEAM"}]}}}})
    };
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage",
            &mallory,
            Some(event("2099-01-01T00:00:00Z")),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("more than a day ahead"), "{}", r.body);
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_events")
        .fetch_one(&t.pool)
        .await
        .expect("count");
    assert_eq!(stored, 0, "nothing stored");
}
