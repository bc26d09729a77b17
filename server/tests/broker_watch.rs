//! The sampler routine against the broker and Postgres started by
//! scripts/test: exact lag and statuses through the API, a stopped consumer
//! flagged STOP, catching up, REWIND, and an unreachable cluster stored as
//! a gap (no samples), never as zero lag.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use streamkeeper_server::watch::store;
use support::TestApp;
use support::kafka::{bootstrap, commit, plain, produce, topic_with};
use support::stop_flag;

async fn passes(t: &TestApp, id: i64, n: usize) {
    stop_flag::passes(t, id, &Default::default(), n).await;
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn lag_statuses_and_gaps_through_the_api(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("watch-orders-{run}");
    let group = format!("watch-readers-{run}");
    topic_with(&bootstrap, &topic, &[10, 10, 10]).await;
    commit(&bootstrap, &group, &topic, &[(0, 4), (1, 7)]);

    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, vt) = (t.token(admin).await, t.token(viewer).await);
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &vt,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "only admins add clusters");
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.json()["state"], "UNKNOWN");
    let id = r.json()["id"].as_i64().expect("id");
    let r = t.api(Method::POST, "/api/v1/clusters", &at, Some(json!({"name": "cc", "bootstrap": "pkc.example:9092", "security_protocol": "SASL_SSL", "username_ref": "api-key-in-clear", "password_ref": "env:STREAMKEEPER_CRED_X"}))).await;
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "credentials must be references: {}",
        r.body
    );

    passes(&t, id, 4).await;
    let url = format!("/api/v1/clusters/{id}/groups/{group}");
    let r = t.api(Method::GET, &url, &vt, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["cluster_state"], "UP");
    let p = |i: usize, k: &str| v["partitions"][i][k].clone();
    assert_eq!(
        (p(0, "lag"), p(1, "lag"), p(2, "lag")),
        (json!(6), json!(3), json!(null))
    );
    assert_eq!(
        (p(0, "status"), p(1, "status"), p(2, "status")),
        (json!("STOP"), json!("STOP"), json!("NO_COMMIT"))
    );
    assert_eq!(v["status"], "STOP");
    assert!(
        p(0, "reason").as_str().unwrap_or("").contains("6 behind"),
        "{}",
        p(0, "reason")
    );

    // The same, server-rendered for a signed-in viewer, chart included.
    let cookie = t.login("vic", support::PASSWORD).await.expect("signed in");
    let page = t
        .get(&format!("/clusters/{id}/group?name={group}"), Some(&cookie))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("STOP") && page.body.contains("<svg"),
        "{}",
        page.body
    );
    assert!(page.body.contains("no progress for"), "the reason is shown");
    let page = t.get(&format!("/clusters/{id}"), Some(&cookie)).await;
    assert!(
        page.body.contains(group.as_str()) && page.body.contains("UP"),
        "{}",
        page.body
    );

    // Catching up resolves it.
    commit(&bootstrap, &group, &topic, &[(0, 10), (1, 10)]);
    passes(&t, id, 1).await;
    let v = t.api(Method::GET, &url, &vt, None).await.json();
    assert_eq!(
        (v["partitions"][0]["lag"].clone(), v["status"].clone()),
        (json!(0), json!("OK"))
    );

    // Moving the offset back is REWIND.
    commit(&bootstrap, &group, &topic, &[(0, 2)]);
    passes(&t, id, 1).await;
    let v = t.api(Method::GET, &url, &vt, None).await.json();
    assert_eq!(v["partitions"][0]["status"], "REWIND", "{v}");
    assert_eq!(v["status"], "REWIND");

    // An unreachable cluster: a gap, a state, no samples.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = dead.local_addr().expect("addr").port();
    drop(dead);
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(
                json!({"name": "gone", "bootstrap": format!("127.0.0.1:{port}"), "interval_s": 5}),
            ),
        )
        .await;
    let gone = r.json()["id"].as_i64().expect("id");
    let cluster = store::by_id(&t.pool, gone)
        .await
        .expect("db")
        .expect("cluster");
    let outcome = watch::pass(
        &t.pool,
        &cluster,
        &Default::default(),
        &mut None,
        &mut Default::default(),
    )
    .await;
    assert!(matches!(outcome, PassOutcome::Failed(_)), "{outcome:?}");
    let v = t
        .api(Method::GET, &format!("/api/v1/clusters/{gone}"), &vt, None)
        .await
        .json();
    assert_eq!(v["state"], "UNREACHABLE");
    assert_eq!(v["last_good_pass_at"], json!(null));
    assert!(
        v["problems"][0]
            .as_str()
            .unwrap_or("")
            .contains("could not be reached"),
        "{v}"
    );
    let samples: i64 = sqlx::query_scalar("SELECT count(*) FROM lag_samples WHERE cluster_id = $1")
        .bind(gone)
        .fetch_one(&t.pool)
        .await
        .expect("count");
    assert_eq!(samples, 0, "no zero-lag samples for an unreachable cluster");
    let list = t
        .api(Method::GET, "/api/v1/clusters", &vt, None)
        .await
        .json();
    assert_eq!(list.as_array().map(Vec::len), Some(2));
    assert!(
        !list.to_string().contains("env:"),
        "credential references are not echoed"
    );
    assert!(
        t.audit_actions()
            .await
            .iter()
            .filter(|a| *a == "cluster.create")
            .count()
            == 2
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stopped_consumer_is_flagged_to_its_owner(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap) VALUES ('local', $1) RETURNING id",
    )
    .bind(&bootstrap)
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let t = TestApp::new(pool).await;
    stop_flag::a_stopped_consumer_is_flagged_to_its_owner(
        &t,
        id,
        &plain(&bootstrap),
        &Default::default(),
    )
    .await;
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn streams_have_freshness_budgets_and_expected_intervals(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("fresh-orders-{run}");
    let group = format!("fresh-readers-{run}");
    topic_with(&bootstrap, &topic, &[10]).await;
    commit(&bootstrap, &group, &topic, &[(0, 3)]);

    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let owner = t.user("olga", &[Role::Owner]).await;
    let (at, ot) = (t.token(admin).await, t.token(owner).await);
    let team = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &at,
            Some(json!({"name": "orders"})),
        )
        .await
        .json()["id"]
        .as_i64()
        .expect("team");
    t.api(
        Method::POST,
        &format!("/api/v1/teams/{team}/members"),
        &at,
        Some(json!({"username": "olga"})),
    )
    .await;
    let id = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await
        .json()["id"]
        .as_i64()
        .expect("id");
    passes(&t, id, 1).await;

    // The owner claims the stream for their team, with a 1 s budget and a message expected every second.
    let url = format!("/api/v1/clusters/{id}/streams/{topic}");
    // (The domain is an admin's to set: the owner leaves it empty.)
    let spec = json!({"owner_team": "orders", "tier": 1, "freshness_budget_s": 1, "expected_interval_s": 1});
    let r = t.api(Method::PUT, &url, &ot, Some(spec)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        (r.json()["owner"].clone(), r.json()["tier"].clone()),
        (json!("orders"), json!(1))
    );
    let r = t
        .api(
            Method::PUT,
            &url,
            &ot,
            Some(json!({"tier": 7, "owner_team": "orders"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);

    tokio::time::sleep(Duration::from_millis(2100)).await;
    passes(&t, id, 1).await;
    let flags = t.api(Method::GET, "/api/v1/flags", &ot, None).await.json();
    let kinds: Vec<String> = flags["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            format!(
                "{} {}",
                f["kind"].as_str().unwrap_or(""),
                f["subject"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(kinds.contains(&format!("QUIET {topic}")), "{kinds:?}");
    assert!(
        kinds.contains(&format!("FRESHNESS {group}"))
            || kinds.iter().any(|k| k.starts_with("FRESHNESS")),
        "{kinds:?}"
    );

    // A new message ends the silence.
    produce(&bootstrap, &topic, 0, 1).await;
    passes(&t, id, 1).await;
    let all = t
        .api(Method::GET, "/api/v1/flags?state=any", &ot, None)
        .await
        .json();
    let quiet = all["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["kind"] == "QUIET")
        .cloned()
        .expect("quiet flag");
    assert_eq!(quiet["state"], "resolved", "{quiet}");
}

/// A scraped sample: its metric, its labels (sorted) and its value.
type Sample = (String, Vec<(String, String)>, f64);

/// One scrape of `/metrics`, parsed as Prometheus parses it.
async fn scrape(t: &TestApp, token: &str) -> Vec<Sample> {
    let r = t.api(Method::GET, "/metrics", token, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let lines = r.body.lines().map(|l| Ok(l.to_string()));
    let parsed = prometheus_parse::Scrape::parse(lines).expect("Prometheus text format");
    parsed
        .samples
        .into_iter()
        .map(|s| {
            let value = match s.value {
                prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => v,
                other => panic!("{} is not a gauge: {other:?}", s.metric),
            };
            let mut labels: Vec<(String, String)> = s
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            labels.sort();
            (s.metric, labels, value)
        })
        .collect()
}

fn value(samples: &[Sample], metric: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|(m, l, _)| {
            m == metric
                && labels
                    .iter()
                    .all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
        })
        .map(|(_, _, v)| *v)
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn metrics_say_what_the_api_says_and_nothing_for_a_cluster_that_did_not_answer(
    pool: sqlx::PgPool,
) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let topic = format!("metrics-orders-{run}");
    let group = format!("metrics-readers-{run}");
    topic_with(&bootstrap, &topic, &[10, 10, 10]).await;
    commit(&bootstrap, &group, &topic, &[(0, 4), (1, 7)]);

    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let scraper = t
        .token_with(admin, &[streamkeeper::accounts::token::Scope::Metrics])
        .await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await;
    let id = r.json()["id"].as_i64().expect("id");
    passes(&t, id, 4).await;
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = dead.local_addr().expect("addr").port();
    drop(dead);
    let r = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "gone", "bootstrap": format!("127.0.0.1:{port}")})),
        )
        .await;
    let gone = r.json()["id"].as_i64().expect("id");
    let cluster = store::by_id(&t.pool, gone)
        .await
        .expect("db")
        .expect("cluster");
    let outcome = watch::pass(
        &t.pool,
        &cluster,
        &Default::default(),
        &mut None,
        &mut Default::default(),
    )
    .await;
    assert!(matches!(outcome, PassOutcome::Failed(_)), "{outcome:?}");

    // A read token does not scrape; the scraper's token reads nothing else.
    let r = t.api(Method::GET, "/metrics", &at, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t.api(Method::GET, "/api/v1/clusters", &scraper, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    let api = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups/{group}"),
            &at,
            None,
        )
        .await
        .json();
    let s = scrape(&t, &scraper).await;
    let lag = |p: &str| {
        value(
            &s,
            "kafka_consumergroup_group_lag",
            &[
                ("cluster_name", "local"),
                ("group", &group),
                ("partition", p),
            ],
        )
    };
    for (i, p) in ["0", "1"].into_iter().enumerate() {
        assert_eq!(
            lag(p),
            api["partitions"][i]["lag"].as_f64(),
            "partition {p}: {api}"
        );
    }
    assert_eq!(lag("0"), Some(6.0));
    assert_eq!(lag("2"), None, "no commit is no series, never 0");
    let g = [("cluster_name", "local"), ("group", group.as_str())];
    assert_eq!(
        value(&s, "kafka_consumergroup_group_sum_lag", &g),
        Some(9.0)
    );
    assert_eq!(
        value(&s, "kafka_consumergroup_group_max_lag", &g),
        Some(6.0)
    );
    let status = api["status"].as_str().expect("status");
    assert_eq!(
        value(
            &s,
            "streamkeeper_consumergroup_status",
            &[g[0], g[1], ("status", status)]
        ),
        Some(1.0)
    );
    let p0 = [
        ("cluster_name", "local"),
        ("topic", &topic),
        ("partition", "0"),
    ];
    assert_eq!(value(&s, "kafka_partition_latest_offset", &p0), Some(10.0));
    assert_eq!(value(&s, "kafka_partition_earliest_offset", &p0), Some(0.0));
    assert_eq!(
        value(
            &s,
            "streamkeeper_topic_partitions",
            &[("cluster_name", "local"), ("topic", &topic)]
        ),
        Some(3.0)
    );
    let up = |c: &str| value(&s, "streamkeeper_cluster_up", &[("cluster_name", c)]);
    assert_eq!((up("local"), up("gone")), (Some(1.0), Some(0.0)));
    assert!(
        !s.iter().any(|(m, l, _)| m.starts_with("kafka_")
            && l.iter().any(|(k, v)| k == "cluster_name" && v == "gone")),
        "a cluster that did not answer has no lag series"
    );
    assert_eq!(
        value(
            &s,
            "streamkeeper_routine_runs_last_hour",
            &[("routine", "nonexistent")]
        ),
        None
    );

    // Past the series budget the per-partition families are cut, and say so.
    let mut cfg = support::config();
    cfg.metrics_max_series = 1;
    let small = TestApp::with_config(t.pool.clone(), cfg).await;
    let s = scrape(&small, &scraper).await;
    assert_eq!(
        value(
            &s,
            "kafka_consumergroup_group_lag",
            &[("cluster_name", "local")]
        ),
        None
    );
    assert_eq!(
        value(
            &s,
            "streamkeeper_metrics_cut",
            &[("family", "kafka_consumergroup_group_lag")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&s, "kafka_consumergroup_group_sum_lag", &g),
        Some(9.0)
    );
}

/// Writes one message to partition 0 whose own timestamp is `at_ms`.
async fn produce_at(bootstrap: &str, topic: &str, at_ms: i64) {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let producer: FutureProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("producer");
    producer
        .send(
            FutureRecord::<(), _>::to(topic)
                .partition(0)
                .payload("late")
                .timestamp(at_ms),
            Duration::from_secs(10),
        )
        .await
        .map_err(|(e, _)| e)
        .expect("delivered");
}

/// "Last message" is the newest record's own time for a stream that
/// expects messages (so QUIET counts from it: a topic silent for six
/// minutes is QUIET at the first pass that judges it, saying so), "none"
/// for a topic never written, and unknown since first seen for one whose
/// end has not moved while watched.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_last_message_is_the_records_own_time_or_none_or_unknown(pool: sqlx::PgPool) {
    let bootstrap = bootstrap();
    let run = format!(
        "{}-{}",
        std::process::id(),
        pool.connect_options().get_database().unwrap_or("db")
    );
    let (silent, empty, other) = (
        format!("silent-{run}"),
        format!("empty-{run}"),
        format!("other-{run}"),
    );
    topic_with(&bootstrap, &silent, &[0]).await;
    let six_minutes_ago = chrono::Utc::now().timestamp_millis() - 360_000;
    produce_at(&bootstrap, &silent, six_minutes_ago).await;
    topic_with(&bootstrap, &empty, &[0]).await;
    topic_with(&bootstrap, &other, &[2]).await;

    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let id = t
        .api(
            Method::POST,
            "/api/v1/clusters",
            &at,
            Some(json!({"name": "local", "bootstrap": bootstrap})),
        )
        .await
        .json()["id"]
        .as_i64()
        .expect("id");
    passes(&t, id, 1).await;
    let spec = json!({"expected_interval_s": 60});
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{id}/streams/{silent}"),
            &at,
            Some(spec),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    passes(&t, id, 1).await;

    let streams = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/streams?per_page=200"),
            &at,
            None,
        )
        .await;
    assert_eq!(streams.status, StatusCode::OK, "{}", streams.body);
    let v = streams.json();
    let of = |name: &str| {
        v.as_array()
            .into_iter()
            .flatten()
            .find(|s| s["name"] == name)
            .map(|s| s["last_message"].clone())
            .unwrap_or_default()
    };
    assert_eq!(
        of(&silent),
        json!({"known": "at", "at_ms": six_minutes_ago, "exact": true}),
        "{v}"
    );
    assert_eq!(of(&empty), json!({"known": "none"}), "{v}");
    assert_eq!(of(&other)["known"], "unknown", "{v}");

    let flags = t
        .api(Method::GET, "/api/v1/flags?scope=all", &at, None)
        .await
        .json();
    let quiet = flags["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["kind"] == "QUIET" && f["subject"] == silent.as_str())
        .cloned()
        .unwrap_or_default();
    let reason = quiet["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("no new message for 6 min") && reason.ends_with("every 1 min"),
        "{flags}"
    );
    // Reading the tail joined no group: the next pass lists none of ours.
    passes(&t, id, 1).await;
    let groups = t
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{id}/groups"),
            &at,
            None,
        )
        .await;
    assert!(!groups.body.contains("streamkeeper"), "{}", groups.body);
}
