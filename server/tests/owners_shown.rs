//! Every owner a user sees comes from the one ownership rule (issue 45,
//! item 1), over real Postgres: the lineage graph page's owner form (as a
//! browser without JavaScript posts it), the groups list sorted by owner,
//! the streams list and pages, topic `/metrics` labels and a stream's
//! schema readers; and within one fold batch, every `ownership` facet is
//! checked in order, not the latest alone.

mod support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;
use sqlx::PgPool;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;
use support::{PASSWORD, TestApp};

/// Teams by name.
async fn team(pool: &PgPool, name: &str) -> i64 {
    sqlx::query_scalar("INSERT INTO teams (name, description) VALUES ($1, '') RETURNING id")
        .bind(name)
        .fetch_one(pool)
        .await
        .expect("team")
}

/// The cluster `local` with teams payments, fraud and risk; the stream
/// `orders` owned by payments and the topics `orders` and `clicks`; the
/// groups `billing` (reads orders and clicks, unclaimed: payments' by
/// stream), `audit` (reads clicks, claimed by risk) and `zeta` (reads
/// clicks: unowned). Returns (cluster, payments, fraud).
async fn shop(pool: &PgPool) -> (i64, i64, i64) {
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster");
    let (payments, fraud, risk) = (
        team(pool, "payments").await,
        team(pool, "fraud").await,
        team(pool, "risk").await,
    );
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain) VALUES ($1, 'orders', $2, 'payments')",
    )
    .bind(cluster)
    .bind(payments)
    .execute(pool)
    .await
    .expect("stream");
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen)
         SELECT $1, t, 1, now(), now() FROM unnest(ARRAY['orders', 'clicks']) t",
    )
    .bind(cluster)
    .execute(pool)
    .await
    .expect("topics");
    for (group, topics, claim) in [
        ("billing", vec!["orders", "clicks"], None),
        ("audit", vec!["clicks"], Some(risk)),
        ("zeta", vec!["clicks"], None),
    ] {
        sqlx::query(
            "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen,
                                          owner_team_id, owner_claimed_at)
             VALUES ($1, $2, 'Stable', 1, $3, now(), now(), $4, CASE WHEN $4 IS NULL THEN NULL ELSE now() END)",
        )
        .bind(cluster)
        .bind(group)
        .bind(&topics)
        .bind(claim)
        .execute(pool)
        .await
        .expect("group");
    }
    (cluster, payments, fraud)
}

async fn member(t: &TestApp, name: &str, team: i64) -> i64 {
    let id = t.user(name, &[Role::Owner]).await;
    sqlx::query("INSERT INTO memberships (user_id, team_id) VALUES ($1, $2)")
        .bind(id)
        .bind(team)
        .execute(&t.pool)
        .await
        .expect("member");
    id
}

/// The `<tr>` of a list that links `name`.
fn row_of<'a>(html: &'a str, name: &str) -> &'a str {
    let at = html
        .find(&format!(">{name}</a>"))
        .unwrap_or_else(|| panic!("{name} is not listed: {html}"));
    let start = html[..at].rfind("<tr").unwrap_or(0);
    let end = html[at..].find("</tr>").map_or(html.len(), |e| at + e);
    &html[start..end]
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_group_owned_through_its_stream_sorts_and_shows_as_that_owner(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (cluster, payments, _) = shop(&t.pool).await;
    let pat = member(&t, "pat", payments).await;
    let token = t.token(pat).await;
    let names = |sort: &'static str| {
        let t = &t;
        let token = token.clone();
        async move {
            let r = t
                .api(
                    Method::GET,
                    &format!("/api/v1/clusters/{cluster}/groups?sort={sort}"),
                    &token,
                    None,
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            let v = r.json();
            v["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|g| {
                    let s = |k: &str| g[k].as_str().unwrap_or("-").to_string();
                    (s("name"), s("owner"), s("owner_reason"))
                })
                .collect::<Vec<_>>()
        }
    };
    let row = |n: &str, o: &str, r: &str| (n.to_string(), o.to_string(), r.to_string());
    // billing is payments' by stream: it sorts as payments, before risk's
    // claim, and the unowned last (by its claim alone it was unowned).
    let asc = names("owner").await;
    assert_eq!(asc[0], row("billing", "payments", "by stream orders"));
    assert_eq!(asc[1].0, "audit");
    assert_eq!(asc[1].1, "risk");
    assert!(asc[1].2.starts_with("claimed on "), "{asc:?}");
    assert_eq!(asc[2], row("zeta", "-", "-"));
    let desc: Vec<String> = names("-owner").await.into_iter().map(|r| r.0).collect();
    assert_eq!(desc, ["audit", "billing", "zeta"]);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_streams_list_and_pages_and_topic_metrics_show_the_rules_owner(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (cluster, payments, _) = shop(&t.pool).await;
    member(&t, "pat", payments).await;
    let cookie = t.login("pat", PASSWORD).await.expect("signs in");

    // The streams list: shown, filtered and sorted by the stream's owner.
    let r = t.get("/streams?sort=owner", Some(&cookie)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(row_of(&r.body, "orders").contains("<td>payments</td>"));
    assert!(row_of(&r.body, "clicks").contains("<td>unowned</td>"));
    assert!(
        r.body.find(">orders</a>") < r.body.find(">clicks</a>"),
        "owned first: {}",
        r.body
    );
    let r = t.get("/streams?owner=payments", Some(&cookie)).await;
    assert!(r.body.contains(">orders</a>") && !r.body.contains(">clicks</a>"));
    let r = t.get("/streams?owner=unowned", Some(&cookie)).await;
    assert!(!r.body.contains(">orders</a>") && r.body.contains(">clicks</a>"));

    // The cluster's streams (what the stream pages read).
    let root = t.user("root", &[Role::Admin]).await;
    let token = t.token(root).await;
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{cluster}/streams"),
            &token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let owners: Vec<(String, serde_json::Value)> = r
        .json()
        .as_array()
        .expect("streams")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or("").to_string(),
                s["owner"].clone(),
            )
        })
        .collect();
    assert_eq!(
        owners,
        [
            ("clicks".to_string(), serde_json::Value::Null),
            ("orders".to_string(), json!("payments"))
        ]
    );
    let r = t
        .get(
            &format!("/clusters/{cluster}/stream?name=orders"),
            Some(&cookie),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("<dd>payments</dd>"), "{}", r.body);

    // Topic metrics carry the same owner.
    let scraper = t.token_with(root, &[Scope::Metrics]).await;
    let r = t.api(Method::GET, "/metrics", &scraper, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let line = |topic: &str| {
        r.body
            .lines()
            .find(|l| {
                l.starts_with("streamkeeper_topic_partitions{")
                    && l.contains(&format!("topic=\"{topic}\""))
            })
            .unwrap_or_else(|| panic!("{topic} in {}", r.body))
            .to_string()
    };
    assert!(
        line("orders").contains("owner=\"payments\""),
        "{}",
        line("orders")
    );
    assert!(line("clicks").contains("owner=\"\""), "{}", line("clicks"));
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_streams_schema_readers_show_their_groups_owner_by_the_rule(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (cluster, payments, _) = shop(&t.pool).await;
    let pat = member(&t, "pat", payments).await;
    let token = t.token(pat).await;
    let r = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{cluster}/streams/clicks/schemas"),
            &token,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    let readers: Vec<(String, serde_json::Value)> = v["readers"]
        .as_array()
        .unwrap_or_else(|| panic!("readers in {v}"))
        .iter()
        .map(|g| {
            (
                g["group"].as_str().unwrap_or("").to_string(),
                g["owner"].clone(),
            )
        })
        .collect();
    // billing is payments' through orders (its claim alone said nobody).
    assert_eq!(
        readers,
        [
            ("audit".to_string(), json!("risk")),
            ("billing".to_string(), json!("payments")),
            ("zeta".to_string(), serde_json::Value::Null),
        ]
    );
}

/// Posted as a browser without JavaScript posts the graph page's owner
/// form (a hydrated page posts the same form).
fn owner_form(page: &str, cookie: &str, node: &str, team: &str) -> Request<Body> {
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs([("node", node), ("team", team)])
        .finish();
    Request::post("/fn/set_lineage_owner")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{}{page}", support::ORIGIN))
        .header(header::ORIGIN, support::ORIGIN)
        .header(header::COOKIE, cookie)
        .body(Body::from(body))
        .expect("request")
}

fn graph_page(node: &str) -> String {
    let node: String = form_urlencoded::byte_serialize(node.as_bytes()).collect();
    format!("/lineage/graph?node={node}")
}

/// The page the form's redirect goes back to.
fn back(location: &str) -> String {
    location
        .strip_prefix(support::ORIGIN)
        .unwrap_or(location)
        .to_string()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_graph_pages_owner_form_sets_a_nodes_owner_and_shows_refusals(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (_, payments, fraud) = shop(&t.pool).await;
    let pat = member(&t, "pat", payments).await;
    member(&t, "mallory", fraud).await;
    // A job of nobody's reads orders into a table.
    let writer = t.token_with(pat, &[Scope::LineageWrite]).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/lineage",
            &writer,
            Some(json!({"eventTime": "2026-12-01T00:00:00Z", "producer": "p",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
                "job": {"namespace": "etl", "name": "archiver", "facets": {}},
                "inputs": [{"namespace": "kafka://127.0.0.1:1", "name": "orders", "facets": {}}],
                "outputs": [{"namespace": "postgres://db:5432", "name": "shop.archive", "facets": {}}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let archive = "dataset:postgres://db:5432:shop.archive";
    let orders = "dataset:kafka://127.0.0.1:1:orders";
    let pat_c = t.login("pat", PASSWORD).await.expect("signs in");
    let mal_c = t.login("mallory", PASSWORD).await.expect("signs in");

    // Unowned: pat may give it to payments (and only to payments).
    let page = graph_page(archive);
    let r = t.get(&page, Some(&pat_c)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.body.contains("data-testid=\"owner-shown\">no owner<"),
        "{}",
        r.body
    );
    assert!(
        r.body.contains("action=\"/fn/set_lineage_owner\""),
        "{}",
        r.body
    );
    assert!(r.body.contains("<option value=\"payments\""), "{}", r.body);
    assert!(!r.body.contains("<option value=\"fraud\""), "{}", r.body);

    // Posted without JavaScript: back to the page, which shows the owner
    // and why, and the note.
    let r = t.send(owner_form(&page, &pat_c, archive, "payments")).await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    assert!(!r.location().contains("__err="), "{}", r.location());
    let shown = t.get(&back(r.location()), Some(&pat_c)).await;
    let today = chrono::Utc::now().date_naive();
    let owner = format!("payments (set by pat on {today})");
    assert!(
        shown.body.contains(&format!("Its owner is now {owner}.")),
        "the note: {}",
        shown.body
    );
    assert!(
        shown
            .body
            .contains(&format!("data-testid=\"owner-shown\">{owner}<")),
        "{}",
        shown.body
    );

    // mallory (fraud) is offered no form, and a post anyway is refused:
    // shown on the page, audited, nothing changed.
    let r = t.get(&page, Some(&mal_c)).await;
    assert!(
        r.body.contains("data-testid=\"owner-locked\""),
        "{}",
        r.body
    );
    assert!(!r.body.contains("data-testid=\"owner-form\""), "{}", r.body);
    let r = t.send(owner_form(&page, &mal_c, archive, "fraud")).await;
    assert!(
        r.location().contains("__err="),
        "{} {}",
        r.status,
        r.location()
    );
    let shown = t.get(&back(r.location()), Some(&mal_c)).await;
    assert!(
        shown.body.contains("only an admin may give another team"),
        "the refusal shows on the page: {}",
        shown.body
    );
    let team: String =
        sqlx::query_scalar("SELECT t.name FROM lineage_owners o JOIN teams t ON t.id = o.team_id")
            .fetch_one(&t.pool)
            .await
            .expect("owner");
    assert_eq!(team, "payments");

    // A topic says where its owner comes from instead of a form; a post
    // anyway is a readable 422, and an unknown node a 404, both audited.
    let topic_page = graph_page(orders);
    let r = t.get(&topic_page, Some(&pat_c)).await;
    assert!(
        r.body
            .contains("data-testid=\"owner-shown\">payments (by stream orders)<"),
        "{}",
        r.body
    );
    assert!(
        r.body.contains(
            "Not set here: its owner comes from the stream orders (payments): describe the stream to change it."
        ),
        "{}",
        r.body
    );
    assert!(!r.body.contains("data-testid=\"owner-form\""), "{}", r.body);
    let r = t
        .send(owner_form(&topic_page, &pat_c, orders, "payments"))
        .await;
    assert!(r.location().contains("__err="), "{}", r.location());
    let shown = t.get(&back(r.location()), Some(&pat_c)).await;
    assert!(
        shown.body.contains("describe the stream to change it"),
        "{}",
        shown.body
    );
    let ghost = "dataset:postgres://db:5432:shop.ghost";
    let r = t.send(owner_form(&page, &pat_c, ghost, "payments")).await;
    assert!(r.location().contains("__err="), "{}", r.location());

    // Clearing it: back to no owner.
    let r = t.send(owner_form(&page, &pat_c, archive, "")).await;
    assert!(!r.location().contains("__err="), "{}", r.location());
    let shown = t.get(&back(r.location()), Some(&pat_c)).await;
    assert!(
        shown.body.contains("It has no owner now."),
        "{}",
        shown.body
    );

    let refusals: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT actor, action, target FROM audit_log WHERE action LIKE '%refused' ORDER BY id",
    )
    .fetch_all(&t.pool)
    .await
    .expect("audit");
    let row = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
    assert_eq!(
        refusals,
        [
            row("mallory", "request.refused", "POST /fn/set_lineage_owner"),
            row("pat", "lineage.owner.refused", &format!("lineage:{orders}")),
            row("pat", "lineage.owner.refused", &format!("lineage:{ghost}")),
        ]
    );
}

/// A DatasetEvent saying `team` owns the table `name`, at `at`.
fn owned_by(name: &str, team: &str, at: &str) -> serde_json::Value {
    json!({"eventTime": at, "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "postgres://db:5432", "name": name, "facets": {
            "ownership": {"_producer": "p", "_schemaURL": "s",
                "owners": [{"name": team, "type": "TEAM"}]}}}})
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn every_ownership_facet_of_one_fold_batch_is_checked_in_order(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let (_, payments, fraud) = shop(&t.pool).await;
    let pat_id = member(&t, "pat", payments).await;
    let mallory = member(&t, "mallory", fraud).await;
    let (pat, mallory) = (
        t.token_with(pat_id, &[Scope::LineageWrite]).await,
        t.token_with(mallory, &[Scope::LineageWrite]).await,
    );
    let reader = t.token(pat_id).await;
    // Sent one after another and folded together by the first read after.
    let sends = [
        // Allowed, then fraud's member takes it for fraud, then says
        // payments owns it (a spoof): neither counts.
        (&pat, owned_by("shop.a", "payments", "2026-12-01T01:00:00Z")),
        (
            &mallory,
            owned_by("shop.a", "fraud", "2026-12-01T02:00:00Z"),
        ),
        (
            &mallory,
            owned_by("shop.b", "payments", "2026-12-01T02:00:00Z"),
        ),
        (&pat, owned_by("shop.b", "payments", "2026-12-01T01:00:00Z")),
        // The spoof first, then the allowed one: payments'.
        (
            &mallory,
            owned_by("shop.c", "payments", "2026-12-01T01:00:00Z"),
        ),
        (&pat, owned_by("shop.c", "payments", "2026-12-01T02:00:00Z")),
        // Only fraud's own member: fraud's.
        (
            &mallory,
            owned_by("shop.d", "fraud", "2026-12-01T01:00:00Z"),
        ),
    ];
    for (token, event) in sends {
        let r = t
            .api(Method::POST, "/api/v1/lineage", token, Some(event))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }
    let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM lineage_unfolded")
        .fetch_one(&t.pool)
        .await
        .expect("waiting");
    assert_eq!(waiting, 7, "nothing folded yet: one batch folds them all");
    let r = t
        .api(
            Method::GET,
            "/api/v1/lineage?nodeId=dataset:postgres://db:5432:shop.a",
            &reader,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let ids: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, name FROM lineage_nodes WHERE name LIKE 'shop._' ORDER BY name")
            .fetch_all(&t.pool)
            .await
            .expect("nodes");
    let owners = streamkeeper_server::platform::ownership::lineage_nodes(
        &t.pool,
        &ids.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
    )
    .await
    .expect("owners");
    let shown: Vec<(String, String)> = ids
        .iter()
        .map(|(id, name)| {
            let o = owners
                .get(id)
                .map_or("unowned".to_string(), ToString::to_string);
            (name.clone(), o)
        })
        .collect();
    let pats = "payments (by ownership facet from pat)".to_string();
    assert_eq!(
        shown,
        [
            ("shop.a".to_string(), pats.clone()),
            ("shop.b".to_string(), pats.clone()),
            ("shop.c".to_string(), pats),
            (
                "shop.d".to_string(),
                "fraud (by ownership facet from mallory)".to_string()
            ),
        ]
    );
}
