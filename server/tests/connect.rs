//! Kafka Connect on the real Postgres with the Connect double: Connect
//! clusters set by admins (audited, refusals too) and tested; the status
//! routine's passes (states with history, a FAILED task flagged to the
//! connector's owner with its trace, delivered to the team's webhook and
//! resolved when it runs again; UNASSIGNED past two passes; an unreachable
//! worker a gap); the connectors list and page; validation beside the
//! worker's; the offline CLI. Inline secrets never show in an answer, an
//! audit detail, a flag's receipt or a webhook.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::sync::{Arc, Mutex};
use streamkeeper::accounts::role::Role;
use streamkeeper_doubles::connect::{self, ConnectHandle, DoubleAuth, Fault, Options, State};
use streamkeeper_server::connect::routine::{PassError, Status, pass};
use streamkeeper_server::platform::routine::{Routine, RunError, Target};
use support::TestApp;

const SECRET: &str = "AKIA-very-s3cret-key";
const S3: &str = "io.confluent.connect.s3.S3SinkConnector";
const TRACE: &str = "org.apache.kafka.connect.errors.ConnectException: S3 rejected the key AKIA-very-s3cret-key\n\tat io.confluent.connect.s3.S3SinkTask.put(S3SinkTask.java:225)";

struct Ctx {
    t: TestApp,
    admin: String,
    cluster: i64,
    url: String,
    double: ConnectHandle,
}

async fn setup(pool: PgPool) -> Ctx {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let admin = t.token(admin).await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s, insecure_credentials)
         VALUES ('local', '127.0.0.1:9092', 'PLAINTEXT', 15, true) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    let (url, double) = connect::spawn().await;
    Ctx {
        t,
        admin,
        cluster,
        url,
        double,
    }
}

impl Ctx {
    async fn api(&self, method: Method, path: &str, body: Option<Value>) -> support::Reply {
        self.t.api(method, path, &self.admin, body).await
    }

    async fn add_connect(&self, name: &str, url: &str) -> support::Reply {
        self.api(
            Method::PUT,
            &format!("/api/v1/clusters/{}/connect", self.cluster),
            Some(json!({"name": name, "url": url})),
        )
        .await
    }

    async fn pass(&self, name: &str) -> Result<usize, PassError> {
        let cluster = streamkeeper_server::watch::store::by_id(&self.t.pool, self.cluster)
            .await
            .expect("db")
            .expect("cluster");
        let row = streamkeeper_server::connect::store::by_name(&self.t.pool, self.cluster, name)
            .await
            .expect("db")
            .expect("connect");
        pass(&self.t.pool, &support::outbound(), &cluster, &row)
            .await
            .map(|r| r.connectors)
    }

    async fn connectors(&self, query: &str) -> Value {
        let r = self
            .api(
                Method::GET,
                &format!(
                    "/api/v1/clusters/{}/connect/main/connectors{query}",
                    self.cluster
                ),
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        r.json()
    }

    async fn connector(&self, name: &str) -> support::Reply {
        self.api(
            Method::GET,
            &format!(
                "/api/v1/clusters/{}/connect/main/connectors/{name}",
                self.cluster
            ),
            None,
        )
        .await
    }

    async fn flags(&self) -> Vec<Value> {
        let r = self
            .api(Method::GET, "/api/v1/flags?scope=all&state=any", None)
            .await;
        r.json()["items"].as_array().cloned().unwrap_or_default()
    }

    async fn audit_details(&self) -> String {
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT action, detail FROM audit_log ORDER BY id")
                .fetch_all(&self.t.pool)
                .await
                .expect("audit");
        serde_json::to_string(&rows).expect("json")
    }
}

fn s3(topics: &str) -> Vec<(&'static str, String)> {
    vec![
        ("connector.class", S3.into()),
        ("tasks.max", "2".into()),
        ("topics", topics.into()),
        ("s3.bucket.name", "lake".into()),
        (
            "format.class",
            "io.confluent.connect.s3.format.json.JsonFormat".into(),
        ),
        ("flush.size", "1000".into()),
        (
            "storage.class",
            "io.confluent.connect.s3.storage.S3Storage".into(),
        ),
        ("aws.secret.access.key", SECRET.into()),
    ]
}

fn put(double: &ConnectHandle, name: &str, config: &[(&'static str, String)]) {
    let pairs: Vec<(&str, &str)> = config.iter().map(|(k, v)| (*k, v.as_str())).collect();
    double.put(name, &pairs);
}

/// A webhook receiver that records every body.
async fn receiver() -> (String, Arc<Mutex<Vec<Value>>>) {
    let got: Arc<Mutex<Vec<Value>>> = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<Value>| {
            let g = g.clone();
            async move {
                g.lock().expect("lock").push(v);
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, got)
}

async fn deliver(t: &TestApp) {
    let http = streamkeeper_server::clients::webhook::Webhooks::new(
        streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
    )
    .expect("webhooks");
    streamkeeper_server::flags::routine::deliver_due(&t.pool, &http)
        .await
        .expect("deliver");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn connect_clusters_are_set_by_admins_tested_and_every_refusal_audited(pool: PgPool) {
    let c = setup(pool).await;
    put(&c.double, "s3-orders", &s3("orders"));
    let r = c.add_connect("main", &c.url).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["interval_s"], 30);
    assert_eq!(r.json()["cloud"], false);

    let owner = c.t.user("olga", &[Role::Owner]).await;
    let owner = c.t.token(owner).await;
    let path = format!("/api/v1/clusters/{}/connect", c.cluster);
    let r =
        c.t.api(
            Method::PUT,
            &path,
            &owner,
            Some(json!({"name": "x", "url": c.url})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        c.t.api(Method::GET, &path, &owner, None).await.json()[0]["name"],
        "main",
        "everyone reads them"
    );

    for (spec, why) in [
        (
            json!({"name": "a", "url": "http://u:pw@127.0.0.1:1"}),
            "auth settings",
        ),
        (json!({"name": "a", "url": "ftp://127.0.0.1"}), "http"),
        (json!({"name": "a b", "url": c.url}), "name"),
        (
            json!({"name": "a", "url": c.url, "username_ref": "env:STREAMKEEPER_CRED_U"}),
            "both",
        ),
        (
            json!({"name": "a", "url": c.url, "token_ref": "hunter2"}),
            "Connect credentials",
        ),
        (
            json!({"name": "a", "url": c.url, "interval_s": 1}),
            "interval",
        ),
    ] {
        let r = c.api(Method::PUT, &path, Some(spec.clone())).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{spec}: {}",
            r.body
        );
        assert!(r.body.contains(why), "{spec}: {}", r.body);
    }
    let audit = c.audit_details().await;
    assert_eq!(audit.matches("connect.set.refused").count(), 6, "{audit}");
    assert!(audit.contains("connect.create"), "{audit}");
    assert!(
        !audit.contains("hunter2"),
        "a refused value is not kept: {audit}"
    );

    let test = format!("/api/v1/clusters/{}/connect/main/test", c.cluster);
    let r = c.api(Method::POST, &test, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.json(),
        json!({"version": "3.9.0", "plugins": 11, "connectors": 1})
    );
    assert_eq!(
        c.t.api(Method::POST, &test, &owner, None).await.status,
        StatusCode::FORBIDDEN
    );

    c.double.fail_next(1, Fault::BadGatewayHtml);
    let r = c.api(Method::POST, &test, None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert!(r.body.contains("HTTP 502"), "{}", r.body);

    let r = c.add_connect("main", "http://127.0.0.1:1").await;
    assert_eq!(r.status, StatusCode::OK, "updated by name");
    let r = c.api(Method::POST, &test, None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.body.contains("could not be reached"), "{}", r.body);

    let r = c
        .api(
            Method::DELETE,
            &format!("/api/v1/clusters/{}/connect/main", c.cluster),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert!(c.audit_details().await.contains("connect.delete"));
    assert_eq!(
        c.api(Method::POST, &test, None).await.status,
        StatusCode::NOT_FOUND
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn basic_credentials_are_references_resolved_only_to_call_the_worker(pool: PgPool) {
    let dir = std::env::temp_dir().join(format!("sk-connect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("user"), "connect").expect("user");
    std::fs::write(dir.join("pw"), "pw-in-a-file").expect("pw");
    let dirs = dir.display().to_string();
    let mut cfg = support::config();
    cfg.outbound.credentials = streamkeeper::platform::credential::CredentialPolicy::new(
        "STREAMKEEPER_CRED_",
        [dirs.as_str()],
    )
    .expect("policy");
    let t = TestApp::with_config(pool, cfg).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let admin = t.token(admin).await;
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, insecure_credentials)
         VALUES ('local', '127.0.0.1:9092', 'PLAINTEXT', true) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    let (url, _) = connect::spawn_with(Options {
        auth: DoubleAuth::Basic {
            user: "connect".into(),
            password: "pw-in-a-file".into(),
        },
        ..Options::default()
    })
    .await;
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/connect"),
            &admin,
            Some(json!({"name": "main", "url": url,
                "username_ref": format!("file:{dirs}/user"), "password_ref": format!("file:{dirs}/pw")})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(!r.body.contains("pw-in-a-file"));
    let r = t
        .api(
            Method::POST,
            &format!("/api/v1/clusters/{cluster}/connect/main/test"),
            &admin,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let audit: Vec<String> = sqlx::query_scalar("SELECT detail FROM audit_log")
        .fetch_all(&t.pool)
        .await
        .expect("audit");
    let audit = serde_json::to_string(&audit).expect("json");
    assert!(
        audit.contains("file:") && !audit.contains("pw-in-a-file"),
        "{audit}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_failed_task_is_flagged_to_its_owner_with_the_trace_and_resolved_when_it_runs(
    pool: PgPool,
) {
    let c = setup(pool).await;
    let team = c
        .api(
            Method::POST,
            "/api/v1/teams",
            Some(json!({"name": "payments"})),
        )
        .await
        .json()["id"]
        .as_i64()
        .expect("team");
    let (hook, got) = receiver().await;
    let r = c
        .api(
            Method::PUT,
            &format!("/api/v1/teams/{team}/webhook"),
            Some(json!({"url": hook})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    // The stream the sink reads is payments': the connector is theirs.
    sqlx::query("INSERT INTO streams (cluster_id, topic, owner_team_id) VALUES ($1, 'orders', $2)")
        .bind(c.cluster)
        .bind(team)
        .execute(&c.t.pool)
        .await
        .expect("stream");
    put(&c.double, "s3-orders", &s3("orders"));
    c.add_connect("main", &c.url).await;

    assert_eq!(c.pass("main").await.expect("pass"), 1);
    assert!(c.flags().await.is_empty(), "running: nothing to flag");

    c.double.fail_task("s3-orders", 1, TRACE);
    c.pass("main").await.expect("pass");
    let flags = c.flags().await;
    assert_eq!(flags.len(), 1, "{flags:?}");
    let f = &flags[0];
    assert_eq!(f["subject_kind"], "connector");
    assert_eq!(f["subject"], "main/s3-orders");
    assert_eq!(f["kind"], "FAILED");
    assert_eq!(f["team"], "payments", "routed by the stream it reads");
    assert!(
        f["reason"].as_str().unwrap_or("").starts_with(
            "task 1 of connector s3-orders FAILED: org.apache.kafka.connect.errors.ConnectException"
        ),
        "{f}"
    );
    let receipt = &f["evidence"]["instances"][0];
    assert!(
        receipt["trace"]
            .as_str()
            .unwrap_or("")
            .contains("S3SinkTask.java:225"),
        "{f}"
    );
    assert!(
        f["evidence"]["restart"]["url"]
            .as_str()
            .unwrap_or("")
            .ends_with("/connectors/s3-orders/restart?includeTasks=true&onlyFailed=true"),
        "{f}"
    );

    deliver(&c.t).await;
    let bodies = got.lock().expect("lock").clone();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert!(
        bodies[0]["text"]
            .as_str()
            .unwrap_or("")
            .starts_with("[FAILED] connector main/s3-orders"),
        "{}",
        bodies[0]
    );

    // The page: trouble, the task's trace, the history, the masked config.
    let list = c.connectors("").await;
    assert_eq!(list["items"][0]["name"], "s3-orders");
    assert_eq!(list["items"][0]["trouble"], true);
    assert_eq!(list["items"][0]["tasks_failed"], 1);
    assert_eq!(list["items"][0]["owner"], "payments");
    assert_eq!(list["items"][0]["owner_source"], "stream");
    let r = c.connector("s3-orders").await;
    // What the hydrated page reads back: the body as its own type (a key
    // written twice once failed here, and the page fell to an error).
    let typed: streamkeeper_app::connect::model::ConnectorDetail =
        serde_json::from_str(&r.body).expect("the detail reads back as written");
    assert_eq!((typed.summary.tasks_total, typed.tasks.len()), (2, 2));
    let d = r.json();
    assert_eq!(d["config"]["aws.secret.access.key"], "********");
    assert_eq!(d["topics"], json!(["orders"]));
    assert_eq!(d["tasks"][1]["state"], "FAILED");
    assert!(
        d["tasks"][1]["trace"]
            .as_str()
            .unwrap_or("")
            .contains("S3SinkTask")
    );

    // Restarted, it runs: the flag resolves and the owner hears of it.
    c.double.heal("s3-orders");
    c.double.set_task("s3-orders", 1, State::Running);
    c.pass("main").await.expect("pass");
    let flags = c.flags().await;
    assert_eq!(flags[0]["state"], "resolved", "{flags:?}");
    deliver(&c.t).await;
    let bodies = got.lock().expect("lock").clone();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies[1]["text"]
            .as_str()
            .unwrap_or("")
            .starts_with("[RESOLVED] connector main/s3-orders")
    );
    let history: Vec<(Option<i32>, String)> = c.connector("s3-orders").await.json()["history"]
        .as_array()
        .expect("history")
        .iter()
        .map(|h| {
            (
                h["task"].as_i64().map(|t| t as i32),
                h["state"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        history,
        [
            (Some(1), "RUNNING".to_owned()),
            (Some(1), "FAILED".to_owned()),
            (Some(1), "RUNNING".to_owned()),
            (Some(0), "RUNNING".to_owned()),
            (None, "RUNNING".to_owned()),
        ],
        "newest first; only changes are rows"
    );

    // The inline secret is nowhere: not in answers, flags, webhooks or the database.
    let answers = format!("{list} {d} {flags:?} {bodies:?}");
    assert!(!answers.contains(SECRET), "{answers}");
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT config::text || coalesce(trace, '') FROM connectors
         UNION ALL SELECT coalesce(trace, '') FROM connector_tasks
         UNION ALL SELECT coalesce(trace, '') FROM connector_states
         UNION ALL SELECT evidence::text || reason FROM flags
         UNION ALL SELECT body::text FROM deliveries
         UNION ALL SELECT detail::text FROM audit_log",
    )
    .fetch_all(&c.t.pool)
    .await
    .expect("stored");
    assert!(stored.iter().all(|s| !s.contains(SECRET)), "{stored:?}");
    assert!(
        stored
            .iter()
            .any(|s| s.contains("S3 rejected the key ********")),
        "the trace is kept, scrubbed"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_unreachable_worker_is_a_gap_not_all_fine(pool: PgPool) {
    let c = setup(pool).await;
    put(&c.double, "s3-orders", &s3("orders"));
    c.add_connect("main", &c.url).await;
    c.double.fail_task("s3-orders", 0, TRACE);
    // The routine's run: the first pass is due at once.
    let routine = Status::new(c.t.pool.clone(), support::outbound());
    let cancel = tokio_util::sync::CancellationToken::new();
    routine
        .run(Target::Cluster(c.cluster), &cancel)
        .await
        .expect("read");
    assert_eq!(c.flags().await.len(), 1);

    // The worker heals, but the console cannot see it: nothing is resolved,
    // nothing written, the run fails and says why.
    c.double.heal("s3-orders");
    c.double.set_task("s3-orders", 0, State::Running);
    c.double.fail_next(1, Fault::BadGatewayHtml);
    let e = c.pass("main").await.expect_err("a gap");
    assert!(
        matches!(&e, PassError::Gap(why) if why.contains("HTTP 502")),
        "{e:?}"
    );
    assert_eq!(
        c.flags().await[0]["state"],
        "open",
        "a gap resolves nothing"
    );
    let d = c.connector("s3-orders").await.json();
    assert_eq!(d["tasks"][0]["state"], "FAILED", "states are as last read");
    let list = c
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{}/connect", c.cluster),
            None,
        )
        .await
        .json();
    assert!(
        list[0]["last_error"]
            .as_str()
            .unwrap_or("")
            .contains("HTTP 502"),
        "{list}"
    );
    assert_eq!(list[0]["failed_passes"], 1);
    assert!(
        !list[0]["last_error"]
            .as_str()
            .unwrap_or("")
            .contains("nginx"),
        "upstream text is for admins, on request"
    );

    // Through the routine: a failed run, with the Connect cluster named.
    sqlx::query("UPDATE connect_clusters SET last_error_at = now() - interval '1 hour', read_at = now() - interval '1 hour'")
        .execute(&c.t.pool)
        .await
        .expect("due");
    c.double.fail_next(1, Fault::Close);
    match routine.run(Target::Cluster(c.cluster), &cancel).await {
        Err(RunError::Failed(why)) => {
            assert!(why.contains("main:") && why.contains("a gap"), "{why}")
        }
        other => panic!("a failed run expected, not {other:?}"),
    }
    // Not due again until its interval has passed.
    assert!(matches!(
        routine.run(Target::Cluster(c.cluster), &cancel).await,
        Ok(streamkeeper_server::platform::routine::Outcome::Idle)
    ));

    // Read again: resolved, and the error is cleared.
    c.pass("main").await.expect("read");
    assert_eq!(c.flags().await[0]["state"], "resolved");
    let list = c
        .api(
            Method::GET,
            &format!("/api/v1/clusters/{}/connect", c.cluster),
            None,
        )
        .await
        .json();
    assert!(
        list[0]["last_error"].is_null() && list[0]["read_at"].is_string(),
        "{list}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn unassigned_for_more_than_two_passes_is_flagged(pool: PgPool) {
    let c = setup(pool).await;
    put(&c.double, "s3-orders", &s3("orders"));
    c.add_connect("main", &c.url).await;
    c.double.set_task("s3-orders", 0, State::Unassigned);
    c.pass("main").await.expect("1");
    c.pass("main").await.expect("2");
    assert!(
        c.flags().await.is_empty(),
        "a rebalance leaves tasks unassigned a moment"
    );
    c.pass("main").await.expect("3");
    let flags = c.flags().await;
    assert_eq!(flags.len(), 1);
    assert_eq!(flags[0]["kind"], "UNASSIGNED");
    assert_eq!(
        flags[0]["team"],
        Value::Null,
        "nobody owns it and no platform team is set"
    );
    c.double.set_task("s3-orders", 0, State::Running);
    c.pass("main").await.expect("4");
    assert_eq!(c.flags().await[0]["state"], "resolved");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn connectors_are_listed_trouble_first_paginated_searched_and_claimed(pool: PgPool) {
    let c = setup(pool).await;
    for name in ["a-sink", "b-sink", "c-sink", "d-sink", "e-sink"] {
        put(&c.double, name, &s3(&format!("t-{name}")));
    }
    c.double
        .fail_connector("d-sink", "java.lang.OutOfMemoryError: Java heap space");
    c.add_connect("main", &c.url).await;
    c.pass("main").await.expect("pass");
    let page = c.connectors("?per_page=2").await;
    assert_eq!(page["total"], 5);
    assert_eq!(page["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(page["items"][0]["name"], "d-sink");
    assert_eq!(
        page["items"][0]["failure"],
        "java.lang.OutOfMemoryError: Java heap space"
    );
    assert_eq!(page["items"][1]["name"], "a-sink");
    let page2 = c.connectors("?per_page=2&page=3").await;
    assert_eq!(page2["items"][0]["name"], "e-sink");
    let found = c.connectors("?q=C-SI").await;
    assert_eq!(found["total"], 1);
    assert_eq!(found["items"][0]["name"], "c-sink");
    assert_eq!(
        c.connectors("?q=S3SinkConnector").await["total"],
        5,
        "by class too"
    );
    assert_eq!(c.connector("nope").await.status, StatusCode::NOT_FOUND);

    // Deleted on the worker: kept, marked gone, listed last.
    c.double.remove("a-sink");
    c.pass("main").await.expect("pass");
    let all = c.connectors("?per_page=10").await;
    assert_eq!(all["items"][4]["name"], "a-sink");
    assert!(all["items"][4]["gone_at"].is_string(), "{all}");
    put(&c.double, "a-sink", &s3("t-a-sink"));
    c.pass("main").await.expect("pass");
    assert!(
        c.connector("a-sink").await.json()["gone_at"].is_null(),
        "back again"
    );

    // Claimed: an owner claims an unowned connector for their team only.
    let team = c
        .api(Method::POST, "/api/v1/teams", Some(json!({"name": "data"})))
        .await
        .json()["id"]
        .as_i64()
        .expect("team");
    let olga = c.t.user("olga", &[Role::Owner]).await;
    c.api(
        Method::POST,
        &format!("/api/v1/teams/{team}/members"),
        Some(json!({"username": "olga"})),
    )
    .await;
    let otto = c.t.user("otto", &[Role::Owner]).await;
    let (olga, otto) = (c.t.token(olga).await, c.t.token(otto).await);
    let owner = format!(
        "/api/v1/clusters/{}/connect/main/connectors/a-sink/owner",
        c.cluster
    );
    let r =
        c.t.api(Method::PUT, &owner, &otto, Some(json!({"team": "data"})))
            .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r =
        c.t.api(Method::PUT, &owner, &olga, Some(json!({"team": "data"})))
            .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let d = c.connector("a-sink").await.json();
    assert_eq!(d["owner"], "data");
    assert_eq!(d["owner_source"], "claimed");
    let audit = c.audit_details().await;
    assert!(audit.contains("connector.owner"), "{audit}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn validate_shows_the_rules_and_the_worker_side_by_side(pool: PgPool) {
    let c = setup(pool).await;
    c.add_connect("main", &c.url).await;
    let draft = json!({
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "name": "pg-orders",
        "database.hostname": "db",
        "database.user": "cdc",
        "database.password": SECRET,
        "database.dbname": "shop",
    });
    let r = c
        .api(
            Method::POST,
            "/api/v1/connect/validate",
            Some(json!({"config": draft, "cluster_id": c.cluster, "connect": "main"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["plugin"], "debezium_postgres");
    assert_eq!(v["may_propose"], false);
    let prefix = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|row| row["property"] == "topic.prefix")
        .cloned()
        .expect("a row for topic.prefix");
    assert!(
        !prefix["rules"].as_array().expect("rules").is_empty(),
        "{prefix}"
    );
    assert_eq!(
        prefix["worker"],
        json!(["The 'topic.prefix' value is invalid: A value is required"])
    );
    assert!(v["worker"]["error_count"].as_u64().unwrap_or(0) >= 1);
    assert!(
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["property"] == "database.password"),
        "an inline secret is a finding: {v}"
    );
    assert_eq!(v["config"]["database.password"], "********");
    assert!(!r.body.contains(SECRET), "{}", r.body);

    // Offline (no Connect cluster): the rules alone.
    let r = c
        .api(
            Method::POST,
            "/api/v1/connect/validate",
            Some(json!({"config": draft})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.json()["worker"].is_null());

    // A worker that cannot answer is said so; the rules still answer.
    c.double.fail_next(1, Fault::ServerError);
    let r = c
        .api(
            Method::POST,
            "/api/v1/connect/validate",
            Some(json!({"config": draft, "cluster_id": c.cluster, "connect": "main"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.json()["worker_error"].is_string(), "{}", r.body);

    for (bad, why) in [
        (json!([1, 2]), "JSON object"),
        (
            json!({"connector.class": "com.example.Nope"}),
            "not a plugin",
        ),
        (
            json!({"connector.class": S3, "tasks.max": 2}),
            "Connect takes only strings",
        ),
    ] {
        let r = c
            .api(
                Method::POST,
                "/api/v1/connect/validate",
                Some(json!({"config": bad})),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {}",
            r.body
        );
        assert!(r.body.contains(why), "{bad}: {}", r.body);
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_clusters_file_declares_connect_clusters(pool: PgPool) {
    let (url, _) = connect::spawn().await;
    let dir = std::env::temp_dir().join(format!("sk-connect-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("clusters.toml");
    std::fs::write(
        &file,
        format!(
            "[[cluster]]\nname = 'local'\nbootstrap = '127.0.0.1:9092'\n\n[[cluster.connect]]\nname = 'main'\nurl = '{url}'\ninterval_s = 60\n"
        ),
    )
    .expect("write");
    streamkeeper_server::watch::cli::apply_clusters_file(
        &pool,
        &support::outbound(),
        &file,
        &streamkeeper_server::connect::ConnectService::new(pool.clone(), support::outbound()),
    )
    .await
    .expect("applied");
    let (name, interval): (String, i32) =
        sqlx::query_as("SELECT name, interval_s FROM connect_clusters")
            .fetch_one(&pool)
            .await
            .expect("declared");
    assert_eq!((name.as_str(), interval), ("main", 60));
    let actions: Vec<String> = sqlx::query_scalar("SELECT action FROM audit_log ORDER BY id")
        .fetch_all(&pool)
        .await
        .expect("audit");
    assert!(
        actions.contains(&"connect.create".to_owned()),
        "{actions:?}"
    );

    // One bad entry: nothing of the Connect part changes.
    std::fs::write(
        &file,
        format!(
            "[[cluster]]\nname = 'local'\nbootstrap = '127.0.0.1:9092'\n\n[[cluster.connect]]\nname = 'main'\nurl = '{url}'\ninterval_s = 90\n\n[[cluster.connect]]\nname = 'bad'\nurl = 'ftp://x'\n"
        ),
    )
    .expect("write");
    assert!(
        streamkeeper_server::watch::cli::apply_clusters_file(
            &pool,
            &support::outbound(),
            &file,
            &streamkeeper_server::connect::ConnectService::new(pool.clone(), support::outbound()),
        )
        .await
        .is_err()
    );
    let interval: i32 =
        sqlx::query_scalar("SELECT interval_s FROM connect_clusters WHERE name = 'main'")
            .fetch_one(&pool)
            .await
            .expect("kept");
    assert_eq!(interval, 60);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_offline_cli_validates_a_file_with_schema_check_exit_codes() {
    let dir = std::env::temp_dir().join(format!("sk-connect-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let run = |file: &std::path::Path, plugin: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_streamkeeper"))
            .args(["connect", "validate"])
            .arg(file)
            .args(["--plugin", plugin])
            .output()
            .expect("runs")
    };
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"name":"dw","connection.url":"jdbc:postgresql://dw/dw"}"#,
    )
    .expect("write");
    let out = run(&bad, "confluent_jdbc_sink");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["valid"], false);
    assert!(
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["property"] == "topics")
    );

    let good = dir.join("good.json");
    std::fs::write(
        &good,
        r#"{"name":"dw","connector.class":"io.confluent.connect.jdbc.JdbcSinkConnector","topics":"orders","connection.url":"jdbc:postgresql://dw:5432/dw","connection.user":"writer","connection.password":"${file:/etc/kafka-connect/secrets/dw.properties:password}","key.converter":"org.apache.kafka.connect.storage.StringConverter","value.converter":"org.apache.kafka.connect.json.JsonConverter","value.converter.schemas.enable":"true"}"#,
    )
    .expect("write");
    let out = run(&good, "confluent_jdbc_sink");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{report}");

    assert_eq!(
        run(&good, "s3_sink").status.code(),
        Some(2),
        "class and plugin disagree"
    );
    assert_eq!(run(&good, "nope").status.code(), Some(2), "unknown plugin");
    assert_eq!(
        run(&dir.join("missing.json"), "s3_sink").status.code(),
        Some(2)
    );
    let not_json = dir.join("x.json");
    std::fs::write(&not_json, "[1]").expect("write");
    assert_eq!(run(&not_json, "s3_sink").status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

// Connector drafts and restarts as review items (issue 13 item 7).

const REFERENCE: &str = "${file:/etc/connect/s3.properties:secret}";

/// A clean S3 sink of `orders`: the secret by reference.
fn s3_draft(name: &str, flush: &str) -> Value {
    let mut v: serde_json::Map<String, Value> = s3("orders")
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Value::String(v)))
        .collect();
    v.insert("name".into(), json!(name));
    v.insert("flush.size".into(), json!(flush));
    v.insert("aws.secret.access.key".into(), json!(REFERENCE));
    v.insert(
        "aws.access.key.id".into(),
        json!("${file:/etc/connect/s3.properties:id}"),
    );
    Value::Object(v)
}

struct Review {
    c: Ctx,
    /// Owner of payments and a named approver: proposes, may never approve.
    eddie: String,
    ann: String,
    bob: String,
    /// A viewer outside the domain.
    vera: String,
}

async fn review_world(pool: PgPool, autonomy: &str, required: i16) -> Review {
    let c = setup(pool).await;
    let eddie = c.t.user("eddie", &[Role::Owner, Role::Approver]).await;
    let ann = c.t.user("ann", &[Role::Approver]).await;
    let bob = c.t.user("bob", &[Role::Approver]).await;
    let vera = c.t.user("vera", &[Role::Viewer]).await;
    let team = c
        .api(
            Method::POST,
            "/api/v1/teams",
            Some(json!({"name": "payments"})),
        )
        .await
        .json()["id"]
        .as_i64()
        .expect("team");
    let r = c
        .api(
            Method::POST,
            &format!("/api/v1/teams/{team}/members"),
            Some(json!({"username": "eddie"})),
        )
        .await;
    assert!(r.status.is_success(), "{}", r.body);
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id, domain) VALUES ($1, 'orders', $2, 'payments')",
    )
    .bind(c.cluster)
    .bind(team)
    .execute(&c.t.pool)
    .await
    .expect("stream");
    let r = c
        .api(
            Method::PUT,
            "/api/v1/review-domains/payments",
            Some(json!({"autonomy": autonomy, "required_approvals": required,
                        "approver_users": ["eddie", "ann", "bob"], "approver_teams": []})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = c.add_connect("main", &c.url).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    Review {
        eddie: c.t.token(eddie).await,
        ann: c.t.token(ann).await,
        bob: c.t.token(bob).await,
        vera: c.t.token(vera).await,
        c,
    }
}

impl Review {
    async fn call(
        &self,
        m: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> support::Reply {
        self.c.t.api(m, path, token, body).await
    }

    async fn propose(&self, token: &str, config: Value) -> support::Reply {
        self.call(
            Method::POST,
            "/api/v1/review-items/connectors",
            token,
            Some(json!({"cluster_id": self.c.cluster, "connect": "main", "config": config})),
        )
        .await
    }

    async fn item(&self, id: i64) -> Value {
        let r = self
            .call(
                Method::GET,
                &format!("/api/v1/review-items/{id}/connector"),
                &self.ann,
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert!(!r.body.contains(SECRET), "{}", r.body);
        r.json()
    }

    /// The token's user approves in person (tokens do not approve).
    async fn approve(&self, token: &str, id: i64, hash: &str) -> support::Reply {
        self.c
            .t
            .in_person(
                &format!("/api/v1/review-items/{id}/approvals"),
                token,
                json!({"content_hash": hash}),
            )
            .await
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_connector_draft_is_validated_reviewed_and_applied_after_a_named_approval(pool: PgPool) {
    let w = review_world(pool, "act_after_approval", 1).await;
    // A draft with an error (an inline secret) cannot be proposed.
    let mut bad = s3_draft("s3-orders", "1000");
    bad["aws.secret.access.key"] = json!(SECRET);
    let r = w.propose(&w.eddie, bad).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("cannot be proposed"), "{}", r.body);
    assert!(r.body.contains("aws.secret.access.key"), "{}", r.body);
    assert!(!r.body.contains(SECRET), "{}", r.body);
    // Not a JSON object, an unknown plugin: clear 422s, nothing saved.
    for (config, says) in [
        (json!(["a"]), "object"),
        (
            json!({"name": "x", "connector.class": "com.example.Nope"}),
            "not a plugin",
        ),
    ] {
        let r = w.propose(&w.eddie, config).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
        assert!(r.body.contains(says), "{}", r.body);
    }
    // A viewer outside the domain may not propose.
    let r = w.propose(&w.vera, s3_draft("s3-orders", "1000")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    let r = w.propose(&w.eddie, s3_draft("s3-orders", "1000")).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let item = r.json();
    let id = item["id"].as_i64().expect("id");
    assert_eq!(item["kind"], "connector_draft");
    assert_eq!(item["domain"], "payments");
    assert_eq!(item["title"], "Create connector s3-orders on main");
    assert_eq!(item["base"]["state"], "does_not_exist");
    assert_eq!(item["diff"]["base_exists"], false);
    assert_eq!(
        item["content"]["config"]["aws.secret.access.key"],
        REFERENCE
    );
    assert_eq!(item["check"]["may_propose"], true, "{item}");
    assert!(
        item["check"]["worker"].is_object(),
        "the worker validated it: {item}"
    );
    let hash = item["content_hash"].as_str().expect("hash").to_owned();
    assert_eq!(hash.len(), 64);
    // Nothing is written before approval.
    assert!(w.c.double.config("s3-orders").is_none());

    // The inbox lists it; the schema-shaped page shows it too.
    let r = w
        .call(
            Method::GET,
            "/api/v1/review-items?kind=connector_draft",
            &w.ann,
            None,
        )
        .await;
    assert_eq!(r.json()["total"], 1, "{}", r.body);
    let r = w
        .call(
            Method::GET,
            &format!("/api/v1/review-items/{id}"),
            &w.ann,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.json()["content"]["schema"]
            .as_str()
            .unwrap_or("")
            .contains("s3-orders")
    );
    // Its schema edit is refused with where to go.
    let r = w
        .call(
            Method::PUT,
            &format!("/api/v1/review-items/{id}"),
            &w.eddie,
            Some(json!({"loaded_revision": 1, "schema_type": "JSON", "schema": "{}"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("/connector"), "{}", r.body);

    // Its page names the connector but links to no page the worker cannot
    // answer yet: the connector does not exist until applied.
    let ann = w.c.t.login("ann", support::PASSWORD).await.expect("ann");
    let connector_row = |body: &str| {
        body.split("data-testid=\"connector\"")
            .nth(1)
            .and_then(|r| r.split("</dd>").next())
            .unwrap_or_else(|| panic!("{body}"))
            .to_owned()
    };
    let page = w.c.t.get(&format!("/review/{id}"), Some(&ann)).await;
    let row = connector_row(&page.body);
    assert!(
        !row.contains("<a ") && row.contains("not in the worker until applied"),
        "{row}"
    );

    // Self-approval: refused, audited.
    let r = w.approve(&w.eddie, id, &hash).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert!(r.body.contains("someone else must approve"), "{}", r.body);
    // A stale hash: refused.
    let r = w.approve(&w.ann, id, &"0".repeat(64)).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert!(w.c.double.config("s3-orders").is_none());

    let r = w.approve(&w.ann, id, &hash).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["state"], "applied", "{}", r.body);
    let running =
        w.c.double
            .config("s3-orders")
            .expect("created on the worker");
    assert_eq!(running["flush.size"], "1000");
    assert_eq!(
        running["aws.secret.access.key"], REFERENCE,
        "the reference as written"
    );
    let v = w.item(id).await;
    assert!(
        v["state_reason"]
            .as_str()
            .unwrap_or("")
            .contains("Created connector s3-orders"),
        "{v}"
    );
    assert_eq!(v["manual_apply"], Value::Null, "the level applies it");
    let page = w.c.t.get(&format!("/review/{id}"), Some(&ann)).await;
    assert!(
        connector_row(&page.body).contains("<a href=\"/clusters/"),
        "applied: the connector's page is linked: {}",
        page.body
    );
    let actions = w.c.t.audit_actions().await;
    for a in [
        "review.propose",
        "review.approve.refused",
        "review.approve",
        "review.apply",
    ] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }
    assert!(!w.c.audit_details().await.contains(SECRET));
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn changing_a_connector_diffs_without_secrets_voids_approvals_on_edit_and_a_moved_config_returns_to_review(
    pool: PgPool,
) {
    let w = review_world(pool, "act_after_approval", 2).await;
    // Running with an inline secret, as many are.
    let mut running = s3("orders");
    running.push(("flush.size", "500".into()));
    put(&w.c.double, "s3-orders", &running);

    // "Change this connector": the running config as a draft, masked.
    let r = w
        .call(
            Method::GET,
            &format!(
                "/api/v1/clusters/{}/connect/main/connectors/s3-orders/draft",
                w.c.cluster
            ),
            &w.eddie,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(!r.body.contains(SECRET), "{}", r.body);
    let imported = r.json();
    assert_eq!(imported["config"]["aws.secret.access.key"], "********");
    assert_eq!(
        imported["may_propose"], false,
        "a masked value must be replaced first"
    );

    let r = w.propose(&w.eddie, s3_draft("s3-orders", "2000")).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert!(!r.body.contains(SECRET), "{}", r.body);
    let item = r.json();
    let id = item["id"].as_i64().expect("id");
    assert_eq!(item["title"], "Change connector s3-orders on main");
    assert_eq!(item["base"]["state"], "running");
    let changes = item["diff"]["changes"].as_array().expect("changes");
    let flush = changes
        .iter()
        .find(|c| c["key"] == "flush.size")
        .expect("flush.size");
    assert_eq!(
        (flush["before"].clone(), flush["after"].clone()),
        (json!("500"), json!("2000"))
    );
    let secret = changes
        .iter()
        .find(|c| c["key"] == "aws.secret.access.key")
        .expect("the secret changed");
    assert_eq!(secret["secret"], true);
    assert_eq!(
        (secret["before"].clone(), secret["after"].clone()),
        (Value::Null, Value::Null)
    );
    let hash1 = item["content_hash"].as_str().expect("hash").to_owned();

    // One of two approvals, then an edit: the approval is void.
    let r = w.approve(&w.ann, id, &hash1).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["approval_count"], 1);
    let r = w
        .call(
            Method::PUT,
            &format!("/api/v1/review-items/{id}/connector"),
            &w.eddie,
            Some(json!({"loaded_revision": 1, "config": s3_draft("s3-orders", "3000")})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let edited = r.json();
    assert_eq!(edited["revision"], 2);
    assert_eq!(edited["approval_count"], 0, "the edit voided it");
    let hash2 = edited["content_hash"].as_str().expect("hash").to_owned();
    assert_ne!(hash1, hash2);
    // The old hash no longer approves anything.
    let r = w.approve(&w.bob, id, &hash1).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    // A stale edit is refused too.
    let r = w
        .call(
            Method::PUT,
            &format!("/api/v1/review-items/{id}/connector"),
            &w.eddie,
            Some(json!({"loaded_revision": 1, "config": s3_draft("s3-orders", "4000")})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);

    // Someone changes the connector by hand meanwhile.
    let mut by_hand = running.clone();
    by_hand.retain(|(k, _)| *k != "flush.size");
    by_hand.push(("flush.size", "700".into()));
    put(&w.c.double, "s3-orders", &by_hand);
    assert_eq!(w.approve(&w.ann, id, &hash2).await.status, StatusCode::OK);
    let r = w.approve(&w.bob, id, &hash2).await;
    assert_eq!(r.status, StatusCode::OK, "the approval stands: {}", r.body);
    let v = w.item(id).await;
    assert_eq!(v["state"], "in_review", "{v}");
    assert_eq!(v["revision"], 3);
    assert_eq!(v["approval_count"], 0);
    assert!(
        v["state_reason"].as_str().unwrap_or("").contains("moved"),
        "{v}"
    );
    let flush = v["diff"]["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["key"] == "flush.size")
        .cloned()
        .expect("flush.size");
    assert_eq!(flush["before"], "700", "diffed against what runs now");
    assert_eq!(
        w.c.double.config("s3-orders").expect("running")["flush.size"],
        "700"
    );
    assert!(
        w.c.t
            .audit_actions()
            .await
            .iter()
            .any(|a| a == "review.stale")
    );
    assert!(!w.c.audit_details().await.contains(SECRET));
    let notes: Vec<String> = sqlx::query_scalar("SELECT message FROM notifications")
        .fetch_all(&w.c.t.pool)
        .await
        .expect("notifications");
    assert!(!notes.iter().any(|n| n.contains(SECRET)));
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_worker_failing_during_apply_leaves_the_item_where_it_was_with_a_clear_message(
    pool: PgPool,
) {
    let w = review_world(pool, "act_after_approval", 1).await;
    let r = w.propose(&w.eddie, s3_draft("s3-orders", "1000")).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let item = r.json();
    let id = item["id"].as_i64().expect("id");
    let hash = item["content_hash"].as_str().expect("hash").to_owned();

    // HTML from a proxy while the approval applies it: approved, not applied.
    w.c.double.fail_next(1, Fault::BadGatewayHtml);
    let r = w.approve(&w.ann, id, &hash).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let v = r.json();
    assert_eq!(v["state"], "approved", "{v}");
    let reason = v["state_reason"].as_str().unwrap_or("").to_owned();
    assert!(reason.contains("nothing was written"), "{reason}");
    assert!(!reason.contains("<html"), "no upstream page: {reason}");
    assert!(w.c.double.config("s3-orders").is_none());

    // A rebalance that never ends (409 on every write): still approved.
    w.c.double.rebalance_forever();
    let apply = format!("/api/v1/review-items/{id}/apply");
    let r = w.call(Method::POST, &apply, &w.ann, None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert!(r.body.contains("did not take the config"), "{}", r.body);
    let v = w.item(id).await;
    assert_eq!(v["state"], "approved", "{v}");
    assert!(
        w.c.double.config("s3-orders").is_none(),
        "nothing half-applied"
    );

    // A worker that never answers: the client's timeout ends it.
    w.c.double.rebalance_next(0);
    w.c.double.fail_next(1, Fault::Hang);
    let r = w.call(Method::POST, &apply, &w.ann, None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE, "{}", r.body);
    assert_eq!(w.item(id).await["state"], "approved");
    assert!(w.c.double.config("s3-orders").is_none());

    // The worker is back: applied.
    let r = w.call(Method::POST, &apply, &w.ann, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["state"], "applied", "{}", r.body);
    assert!(w.c.double.config("s3-orders").is_some());
    let failed: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = 'review.apply_failed'")
            .fetch_one(&w.c.t.pool)
            .await
            .expect("audit");
    assert_eq!(failed, 3, "each failed apply is audited");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn at_the_autonomous_level_failed_tasks_are_restarted_with_backoff_and_a_daily_cap(
    pool: PgPool,
) {
    let w = review_world(pool, "autonomous", 1).await;
    let team: i64 = sqlx::query_scalar("SELECT id FROM teams WHERE name = 'payments'")
        .fetch_one(&w.c.t.pool)
        .await
        .expect("team");
    let (hook, got) = receiver().await;
    let r =
        w.c.api(
            Method::PUT,
            &format!("/api/v1/teams/{team}/webhook"),
            Some(json!({"url": hook})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    put(&w.c.double, "s3-orders", &s3("orders"));
    w.c.pass("main").await.expect("pass");
    assert_eq!(w.c.double.restarts("s3-orders"), 0);

    // The first failure: restarted at once, reported on the flag and its webhook.
    w.c.double.keep_failing("s3-orders", 1, TRACE);
    w.c.pass("main").await.expect("pass");
    assert_eq!(w.c.double.restarts("s3-orders"), 1);
    let flags = w.c.flags().await;
    assert_eq!(flags.len(), 1, "{flags:?}");
    let reason = flags[0]["reason"].as_str().unwrap_or("").to_owned();
    assert!(
        reason.contains("Streamkeeper restarted its failed instances (try 1 of 5"),
        "{reason}"
    );
    assert_eq!(flags[0]["evidence"]["auto_restart"]["tasks"], json!([1]));
    deliver(&w.c.t).await;
    let bodies = got.lock().expect("lock").clone();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert!(
        bodies[0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("restarted"),
        "{bodies:?}"
    );
    let restarts_audited = || async {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM audit_log WHERE action = 'connector.restart' AND actor = 'streamkeeper'",
        )
        .fetch_one(&w.c.t.pool)
        .await
        .expect("audit");
        n
    };
    assert_eq!(restarts_audited().await, 1);

    // It fails again at once: the second restart waits for the backoff.
    w.c.pass("main").await.expect("pass");
    assert_eq!(
        w.c.double.restarts("s3-orders"),
        1,
        "within the first minute"
    );
    let reason = w.c.flags().await[0]["reason"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(reason.contains("restarts it again at"), "{reason}");
    sqlx::query("UPDATE connector_restarts SET at = at - interval '2 minutes'")
        .execute(&w.c.t.pool)
        .await
        .expect("backdate");
    w.c.pass("main").await.expect("pass");
    assert_eq!(w.c.double.restarts("s3-orders"), 2, "the minute is up");
    deliver(&w.c.t).await;
    let bodies = got.lock().expect("lock").clone();
    assert_eq!(
        bodies.len(),
        2,
        "the second restart is told too: {bodies:?}"
    );
    assert!(
        bodies[1]["text"]
            .as_str()
            .unwrap_or("")
            .contains("try 2 of 5"),
        "{bodies:?}"
    );

    // Five in a day: the sixth does not happen.
    sqlx::query(
        "INSERT INTO connector_restarts (connector_id, tasks, outcome, at)
         SELECT connector_id, tasks, outcome, now() - interval '5 hours'
         FROM connector_restarts, generate_series(1, 3) LIMIT 3",
    )
    .execute(&w.c.t.pool)
    .await
    .expect("three more today");
    w.c.pass("main").await.expect("pass");
    assert_eq!(w.c.double.restarts("s3-orders"), 2, "capped at five a day");
    let reason = w.c.flags().await[0]["reason"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(reason.contains("stops trying"), "{reason}");
    assert_eq!(restarts_audited().await, 2);
    for b in got.lock().expect("lock").iter() {
        assert!(!b.to_string().contains(SECRET), "{b}");
    }

    // Below autonomous nothing restarts on its own; approvers review a restart.
    let r =
        w.c.api(
            Method::PUT,
            "/api/v1/review-domains/payments",
            Some(
                json!({"autonomy": "act_after_approval", "required_approvals": 1,
                        "approver_users": ["eddie", "ann", "bob"], "approver_teams": []}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    sqlx::query("DELETE FROM connector_restarts")
        .execute(&w.c.t.pool)
        .await
        .expect("forget");
    w.c.pass("main").await.expect("pass");
    assert_eq!(w.c.double.restarts("s3-orders"), 2, "not autonomous");
    let r = w
        .call(
            Method::POST,
            "/api/v1/review-items/connector-restarts",
            &w.eddie,
            Some(json!({"cluster_id": w.c.cluster, "connect": "main", "connector": "s3-orders"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let item = r.json();
    assert_eq!(item["kind"], "connector_restart");
    assert!(!r.body.contains(SECRET), "{}", r.body);
    let id = item["id"].as_i64().expect("id");
    let hash = item["content_hash"].as_str().expect("hash").to_owned();
    assert_eq!(
        w.approve(&w.eddie, id, &hash).await.status,
        StatusCode::FORBIDDEN
    );
    let r = w.approve(&w.ann, id, &hash).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["state"], "applied", "{}", r.body);
    assert_eq!(
        w.c.double.restarts("s3-orders"),
        3,
        "restarted after approval"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_cli_validates_against_a_console_and_proposes_a_draft(pool: PgPool) {
    let w = review_world(pool, "suggest", 1).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let server = format!("http://{}", listener.local_addr().expect("addr"));
    let app = w.c.t.app.clone();
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    let dir = std::env::temp_dir().join(format!("sk-connect-online-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let good = dir.join("good.json");
    std::fs::write(&good, s3_draft("s3-orders", "1000").to_string()).expect("write");
    let mut inline = s3_draft("s3-orders", "1000");
    inline["aws.secret.access.key"] = json!(SECRET);
    let bad = dir.join("bad.json");
    std::fs::write(&bad, inline.to_string()).expect("write");
    let run = |args: Vec<String>| async move {
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_streamkeeper"))
                .args(&args)
                .output()
                .expect("runs")
        })
        .await
        .expect("joined")
    };
    let args = |cmd: &str, file: &std::path::Path, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["connect", cmd].map(str::to_owned).to_vec();
        a.push(file.display().to_string());
        for x in [
            "--server",
            &server,
            "--token",
            &w.eddie,
            "--cluster",
            "local",
            "--connect",
            "main",
        ] {
            a.push(x.to_owned());
        }
        a.extend(extra.iter().map(|x| (*x).to_owned()));
        a
    };
    let out = run(args("validate", &good, &["--plugin", "s3_sink"])).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        report["worker"].is_object(),
        "the worker validated it: {report}"
    );
    let out = run(args("validate", &bad, &["--plugin", "s3_sink"])).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));

    let out = run(args("draft", &bad, &[])).await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("cannot be proposed"), "{err}");
    assert!(!err.contains(SECRET), "{err}");
    let out = run(args("draft", &good, &["--title", "S3 sink for orders"])).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let item: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(item["kind"], "connector_draft");
    assert_eq!(item["title"], "S3 sink for orders");
    // At suggest: the exact request to run by hand, shell-quoted.
    let manual = item["manual_apply"]
        .as_str()
        .expect("a manual request")
        .to_owned();
    let words = shlex::split(&manual).expect("words");
    assert_eq!(words[..3], ["curl", "-X", "PUT"]);
    assert!(
        words[5].ends_with("/connectors/s3-orders/config"),
        "{manual}"
    );
    let body: Value = serde_json::from_str(&words[7]).expect("the body is the config");
    assert_eq!(body["aws.secret.access.key"], REFERENCE);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_connector_pages_show_state_tasks_traces_and_a_masked_config_without_javascript(
    pool: PgPool,
) {
    let c = setup(pool).await;
    put(&c.double, "s3-orders", &s3("orders"));
    put(&c.double, "s3-audit", &s3("audit"));
    c.add_connect("main", &c.url).await;
    c.pass("main").await.expect("pass");
    c.double.fail_task("s3-orders", 1, TRACE);
    c.pass("main").await.expect("pass");
    c.t.user("vic", &[Role::Viewer]).await;
    let cookie =
        c.t.login("vic", support::PASSWORD)
            .await
            .expect("signed in");

    // The cluster's page lists its Connect clusters, linking to each.
    let page =
        c.t.get(&format!("/clusters/{}", c.cluster), Some(&cookie))
            .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Kafka Connect"), "{}", page.body);
    let list = format!("/clusters/{}/connect?name=main", c.cluster);
    assert!(
        page.body.contains(&list.replace('&', "&amp;")) || page.body.contains(&list),
        "{}",
        page.body
    );

    // The connectors, the failing one first, with its failure's first line.
    let page = c.t.get(&list, Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    let (failing, running) = (
        page.body.find(">s3-orders<").expect("s3-orders listed"),
        page.body.find(">s3-audit<").expect("s3-audit listed"),
    );
    assert!(failing < running, "trouble first");
    assert!(
        page.body.contains("1 running of 2, 1 failed"),
        "{}",
        page.body
    );
    assert!(page.body.contains("ConnectException"), "{}", page.body);
    let page = c.t.get(&format!("{list}&q=audit"), Some(&cookie)).await;
    assert!(page.body.contains(">s3-audit<") && !page.body.contains(">s3-orders<"));

    // One connector: tasks with the whole trace, its topic, the config masked.
    let page =
        c.t.get(
            &format!(
                "/clusters/{}/connector?connect=main&name=s3-orders",
                c.cluster
            ),
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("S3SinkTask.java:225"),
        "the whole trace: {}",
        page.body
    );
    assert!(page.body.contains("data-testid=\"connector-topics\""));
    assert!(page.body.contains("/stream?name=orders"), "{}", page.body);
    assert!(page.body.contains("aws.secret.access.key"), "{}", page.body);
    assert!(
        !page.body.contains(SECRET),
        "no secret in the page: {}",
        page.body
    );
    assert!(page.body.contains("FAILED"));

    // A connector that does not exist is a page that says so, not a 500.
    let page =
        c.t.get(
            &format!("/clusters/{}/connector?connect=main&name=nope", c.cluster),
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::NOT_FOUND, "{}", page.body);
}

const INLINE: &str = "hunter2-inline-password";
const PG: &str = "io.debezium.connector.postgresql.PostgresConnector";

/// The Debezium PostgreSQL form as a browser fills it: the password
/// written inline (the mistake), the slot left to its default.
fn pg_form(password: &str) -> Vec<(String, String)> {
    [
        ("name", "orders-cdc"),
        ("tasks.max", "1"),
        ("topic.prefix", "shop"),
        ("database.hostname", "db.internal"),
        ("database.port", "5432"),
        ("database.user", "debezium"),
        ("database.password", password),
        ("table.include.list", "public\\.orders"),
        ("database.dbname", "shop"),
        ("plugin.name", "pgoutput"),
        ("slot.name", ""),
        ("publication.name", ""),
        ("publication.autocreate.mode", "filtered"),
        ("snapshot.mode", "initial"),
        ("heartbeat.interval.ms", "60000"),
        (
            "key.converter",
            "org.apache.kafka.connect.json.JsonConverter",
        ),
        (
            "value.converter",
            "org.apache.kafka.connect.json.JsonConverter",
        ),
        ("value.converter.schema.registry.url", ""),
        ("key.converter.schema.registry.url", ""),
    ]
    .into_iter()
    .map(|(k, v)| (format!("values[{k}]"), v.to_owned()))
    .collect()
}

impl Review {
    /// The stream the Debezium source writes (`<prefix>.<schema>.<table>`),
    /// in payments.
    async fn cdc_stream(&self) {
        sqlx::query(
            "INSERT INTO streams (cluster_id, topic, owner_team_id, domain)
             SELECT cluster_id, 'shop.public.orders', owner_team_id, domain FROM streams WHERE topic = 'orders'",
        )
        .execute(&self.c.t.pool)
        .await
        .expect("stream");
    }

    /// A form posted to a server function as a browser without JavaScript
    /// posts it, from `page`.
    async fn submit(
        &self,
        cookie: &str,
        page: &str,
        endpoint: &str,
        form: &[(String, String)],
    ) -> support::Reply {
        use axum::body::Body;
        use axum::http::{Request, header};
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let req = Request::post(endpoint)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "text/html")
            .header(header::REFERER, format!("{}{page}", support::ORIGIN))
            .header(header::ORIGIN, support::ORIGIN)
            .header(header::COOKIE, cookie)
            .body(Body::from(body))
            .expect("request");
        self.c.t.send(req).await
    }

    fn draft_fields(&self, form: Vec<(String, String)>) -> Vec<(String, String)> {
        let mut all = vec![
            ("cluster_id".to_owned(), self.c.cluster.to_string()),
            ("connect".to_owned(), "main".to_owned()),
            ("plugin".to_owned(), "debezium_postgres".to_owned()),
            ("extra".to_owned(), String::new()),
        ];
        all.extend(form);
        all
    }
}

/// Where a redirect goes, without the origin.
fn target(r: &support::Reply) -> String {
    let l = r.location();
    l.strip_prefix(support::ORIGIN).unwrap_or(l).to_owned()
}

/// The HTML text of an attribute value as the page writes it.
fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_draft_form_asks_a_template_s_fields_validates_fixes_in_one_click_and_proposes_only_without_errors(
    pool: PgPool,
) {
    let w = review_world(pool, "act_after_approval", 1).await;
    w.cdc_stream().await;
    let cookie =
        w.c.t
            .login("eddie", support::PASSWORD)
            .await
            .expect("signed in");
    let base = format!("/clusters/{}/connect/draft?name=main", w.c.cluster);

    // The templates, each linking to its form; the connectors page links here.
    let page = w.c.t.get(&base, Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    for label in [
        "Debezium PostgreSQL source",
        "Debezium MySQL source",
        "JDBC sink (Confluent)",
        "JDBC sink (Debezium)",
        "Amazon S3 sink",
        "Snowflake sink",
        "Google BigQuery sink",
        "Apache Iceberg sink",
        "Elasticsearch sink",
    ] {
        assert!(page.body.contains(label), "{label}: {}", page.body);
    }
    assert!(page.body.contains("plugin=debezium_postgres"));
    assert!(page.body.contains("name=\"pasted\""), "the paste form");
    let list =
        w.c.t
            .get(
                &format!("/clusters/{}/connect?name=main", w.c.cluster),
                Some(&cookie),
            )
            .await;
    assert!(
        list.body.contains("/connect/draft?name=main"),
        "{}",
        list.body
    );

    // Postgres's form: only its fields, choices as selects, the password a
    // password input, the recommended plugin preselected.
    let form =
        w.c.t
            .get(&format!("{base}&plugin=debezium_postgres"), Some(&cookie))
            .await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.body);
    let b = &form.body;
    assert!(b.contains("name=\"values[database.hostname]\""), "{b}");
    assert!(b.contains("<select name=\"values[plugin.name]\""), "{b}");
    assert!(b.contains("<select name=\"values[snapshot.mode]\""), "{b}");
    assert!(
        b.contains("<option value=\"pgoutput\" selected"),
        "pgoutput recommended: {b}"
    );
    assert!(
        b.contains("type=\"password\" name=\"values[database.password]\""),
        "{b}"
    );
    assert!(
        b.contains("placeholder=\"debezium_{name_ident}\""),
        "a derived default as a placeholder: {b}"
    );
    assert!(
        !b.contains("values[s3.bucket.name]"),
        "no other plugin's fields"
    );
    assert!(
        !b.contains("values[topics]"),
        "a source has no topics field"
    );

    // Validate with the password inline: back to the draft with the
    // findings; the secret never comes back, in the address or the page.
    let page_url = format!("{base}&plugin=debezium_postgres");
    let r = w
        .submit(
            &cookie,
            &page_url,
            "/fn/draft_connector",
            &w.draft_fields(pg_form(INLINE)),
        )
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    let back = target(&r);
    assert!(back.starts_with("/clusters/"), "{back}");
    assert!(back.contains("/connect/draft?"), "{back}");
    assert!(!back.contains(INLINE), "no secret in the address: {back}");
    assert!(back.contains("inline=database.password"), "{back}");
    let shown = w.c.t.get(&back, Some(&cookie)).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    let b = &shown.body;
    assert!(!b.contains(INLINE), "no secret in the page");
    assert!(b.contains("data-testid=\"inline-secrets\""), "{b}");
    assert!(b.contains("data-testid=\"draft-findings\""), "{b}");
    assert!(b.contains("It has errors."), "{b}");
    assert!(
        b.contains("The worker&#x27;s validate") || b.contains("The worker's validate"),
        "the worker's column: {b}"
    );
    // The slot took its default from the name; the form keeps the values.
    assert!(b.contains("debezium_orders_cdc"), "{b}");
    assert!(b.contains("value=\"db.internal\""), "{b}");
    // Propose is disabled while errors stand.
    let propose_button = b
        .split("data-testid=\"propose\"")
        .next()
        .and_then(|before| before.rsplit("<button").next())
        .expect("a propose button");
    assert!(propose_button.contains("disabled"), "{propose_button}");

    // Proposing it anyway: refused, nothing in the inbox.
    let mut proposing = w.draft_fields(pg_form(INLINE));
    proposing.push(("propose".into(), "on".into()));
    let r = w
        .submit(&cookie, &page_url, "/fn/draft_connector", &proposing)
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    assert!(target(&r).contains("refused=errors"), "{}", target(&r));
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM review_items")
        .fetch_one(&w.c.t.pool)
        .await
        .expect("count");
    assert_eq!(items, 0, "a draft with errors is not proposed");
    let refused = w.c.t.get(&target(&r), Some(&cookie)).await;
    assert!(refused.body.contains("data-testid=\"propose-refused\""));

    // The suggested fix is a submit carrying it: one click writes the
    // reference in place of the mask.
    let fix = b
        .split("name=\"fix\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(unescape)
        .expect("a fix button");
    assert!(fix.contains("database.password"), "{fix}");
    assert!(fix.contains("${file:"), "{fix}");
    let mut fixing = w.draft_fields(pg_form("********"));
    fixing.push(("fix".into(), fix));
    let r = w
        .submit(&cookie, &back, "/fn/draft_connector", &fixing)
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    let fixed = target(&r);
    assert!(!fixed.contains("inline="), "{fixed}");
    let page = w.c.t.get(&fixed, Some(&cookie)).await;
    assert!(
        page.body.contains("No errors: it may be proposed."),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("${file:/etc/kafka-connect/secrets/"),
        "the reference as written: {}",
        page.body
    );

    // Proposed: the review item, created through the review service.
    let reference = "${file:/etc/kafka-connect/secrets/orders_cdc.properties:database.password}";
    let mut proposing = w.draft_fields(pg_form(reference));
    proposing.push(("propose".into(), "on".into()));
    let r = w
        .submit(&cookie, &fixed, "/fn/draft_connector", &proposing)
        .await;
    assert!(r.status.is_redirection(), "{} {}", r.status, r.body);
    let item = target(&r);
    assert!(item.starts_with("/review/"), "{item}");
    let id: i64 = item.trim_start_matches("/review/").parse().expect("id");
    let v = w.item(id).await;
    assert_eq!(v["kind"], "connector_draft");
    assert_eq!(v["content"]["config"]["connector.class"], PG);
    assert_eq!(v["content"]["config"]["database.password"], reference);
    assert_eq!(v["content"]["config"]["slot.name"], "debezium_orders_cdc");
    assert!(
        w.c.double.config("orders-cdc").is_none(),
        "nothing applied yet"
    );
    assert!(
        w.c.t
            .audit_actions()
            .await
            .iter()
            .any(|a| a == "review.propose")
    );
    assert!(!w.c.audit_details().await.contains(INLINE));

    // A pasted config that is not an object: a clear message on the page.
    let r = w
        .submit(
            &cookie,
            &base,
            "/fn/draft_connector",
            &[
                ("cluster_id".into(), w.c.cluster.to_string()),
                ("connect".into(), "main".into()),
                ("pasted".into(), "[1, 2]".into()),
            ],
        )
        .await;
    let back = target(&r);
    assert!(back.contains("__err="), "{back}");
    let page = w.c.t.get(&back, Some(&cookie)).await;
    assert!(page.body.contains("object"), "{}", page.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn change_this_connector_imports_it_and_the_review_page_shows_the_diff_and_then_whether_it_runs(
    pool: PgPool,
) {
    let w = review_world(pool, "act_after_approval", 1).await;
    let mut running = s3("orders");
    running.push(("name", "s3-orders".into()));
    put(&w.c.double, "s3-orders", &running);
    w.c.pass("main").await.expect("pass");
    let eddie =
        w.c.t
            .login("eddie", support::PASSWORD)
            .await
            .expect("signed in");

    // The connector's page links to its import; the import fills the form
    // from the running config, the inline secret masked (and flagged).
    let connector = format!(
        "/clusters/{}/connector?connect=main&name=s3-orders",
        w.c.cluster
    );
    let page = w.c.t.get(&connector, Some(&eddie)).await;
    let import = format!(
        "/clusters/{}/connect/draft?name=main&import=s3-orders",
        w.c.cluster
    );
    assert!(
        page.body.contains(&import.replace('&', "&amp;")) || page.body.contains(&import),
        "{}",
        page.body
    );
    let page = w.c.t.get(&import, Some(&eddie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(!page.body.contains(SECRET), "{}", page.body);
    assert!(page.body.contains("value=\"lake\""), "{}", page.body);
    assert!(
        page.body.contains("data-rule=\"InlineSecret\""),
        "the inline secret is an error with a fix: {}",
        page.body
    );
    assert!(
        page.body
            .contains("name=\"values[aws.secret.access.key]\" value=\"********\""),
        "the form holds the mask: {}",
        page.body
    );

    // A change proposed by REST: flush.size, and the secret as a reference.
    let mut draft = s3_draft("s3-orders", "5000");
    draft["aws.access.key.id"] = json!("AKIA-public-id");
    let r = w.propose(&w.eddie, draft).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let item = r.json();
    let id = item["id"].as_i64().expect("id");
    let hash = item["content_hash"].as_str().expect("hash").to_owned();

    // The inbox's item page shows the connector's diff, no secret in it.
    let ann = w.c.t.login("ann", support::PASSWORD).await.expect("ann");
    let page = w.c.t.get(&format!("/review/{id}"), Some(&ann)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let b = &page.body;
    assert!(b.contains("data-testid=\"connector-diff\""), "{b}");
    assert!(!b.contains(SECRET), "no secret in the review page");
    let table = b
        .split("data-testid=\"connector-diff\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("the diff table");
    assert!(
        !table.contains(REFERENCE),
        "the diff leaves a secret's values out, even a reference: {table}"
    );
    assert!(b.contains("(secret, not shown)"), "{b}");
    let row = |key: &str| {
        b.split(&format!("data-key=\"{key}\""))
            .nth(1)
            .and_then(|r| r.split("</tr>").next())
            .unwrap_or_default()
            .to_owned()
    };
    let flush = row("flush.size");
    assert!(
        flush.contains("changed") && flush.contains("1000") && flush.contains("5000"),
        "{flush}"
    );
    assert!(row("aws.access.key.id").contains("added"), "{b}");
    assert!(
        !b.contains("data-key=\"s3.bucket.name\""),
        "unchanged keys are left out"
    );
    assert!(
        !b.contains("data-testid=\"applied-version\""),
        "no schema version"
    );
    // In connector words: validated, with its findings; its connector and
    // the running config it was made against, not a subject and a base.
    let check = b
        .split("data-testid=\"connector-check\"")
        .nth(1)
        .and_then(|c| c.split("</section>").next())
        .expect("the validation");
    assert!(check.contains(">validated</span>"), "{check}");
    assert!(check.contains("The rules found 0 errors."), "{check}");
    assert!(!b.contains("has not been checked"), "{b}");
    assert!(
        !b.contains("<dt>Subject</dt>") && !b.contains("<dt>Base</dt>"),
        "{b}"
    );
    assert!(b.contains("<dt>Connector</dt>"), "{b}");
    assert!(
        b.contains("its running config as read when this revision was made"),
        "{b}"
    );

    // Applied on approval; until a status pass has run since, the page
    // says the next pass tells; after it, whether it runs.
    let r = w.approve(&w.ann, id, &hash).await;
    assert_eq!(r.json()["state"], "applied", "{}", r.body);
    let page = w.c.t.get(&format!("/review/{id}"), Some(&ann)).await;
    assert!(
        page.body.contains("data-testid=\"connector-run\""),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("the next status pass says"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("data-testid=\"connector-run-state\""));
    w.c.pass("main").await.expect("pass");
    let page = w.c.t.get(&format!("/review/{id}"), Some(&ann)).await;
    assert!(
        page.body.contains("the connector is RUNNING."),
        "{}",
        page.body
    );
    // A task that fails after the apply: FAILED with the trace's first line.
    w.c.double.fail_task(
        "s3-orders",
        0,
        "org.apache.kafka.connect.errors.ConnectException: bucket lake is gone\n\tat io.confluent.connect.s3.S3SinkTask.put(S3SinkTask.java:225)",
    );
    w.c.pass("main").await.expect("pass");
    let r = w
        .call(
            Method::GET,
            &format!("/api/v1/review-items/{id}"),
            &w.ann,
            None,
        )
        .await;
    let v = r.json();
    assert_eq!(
        v["connector_run"]["state"], "RUNNING",
        "the connector runs: {v}"
    );
    assert_eq!(v["connector_run"]["tasks_failed"], 1, "{v}");
    let failure = v["connector_run"]["failure"].as_str().unwrap_or_default();
    assert!(
        failure == "org.apache.kafka.connect.errors.ConnectException: bucket lake is gone",
        "the trace's first line: {v}"
    );
    let page = w.c.t.get(&format!("/review/{id}"), Some(&ann)).await;
    assert!(page.body.contains("1 of its tasks FAILED"), "{}", page.body);
}

const AZURE: &str = "io.confluent.connect.azure.blob.AzureBlobStorageSinkConnector";
const ACCOUNT_KEY: &str = "bm90LWEtcmVhbC1henVyZS1hY2NvdW50LWtleQ==";

fn azure_blob(topics: &str) -> Vec<(&'static str, String)> {
    vec![
        ("connector.class", AZURE.into()),
        ("tasks.max", "1".into()),
        ("topics", topics.into()),
        ("azblob.account.name", "acme".into()),
        ("azblob.account.key", ACCOUNT_KEY.into()),
        (
            "format.class",
            "io.confluent.connect.azure.blob.format.json.JsonFormat".into(),
        ),
        ("flush.size", "100".into()),
    ]
}

/// A key the plugin types PASSWORD though its name says nothing
/// (`azblob.account.key` of the Azure Blob sink, typed so in the worker's
/// validate answer) is masked by the status pass: in the stored rows (one
/// an older pass stored in clear included), a trace, the API's answer to a
/// viewer and the connector's page.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_key_the_plugin_types_password_is_masked_whatever_its_name(pool: PgPool) {
    let c = setup(pool).await;
    put(&c.double, "blob-orders", &azure_blob("orders"));
    c.add_connect("main", &c.url).await;
    // What a pass before this rule stored: the key in clear, and the
    // connector gone since (no pass lists it again).
    sqlx::query(
        "INSERT INTO connectors (connect_id, name, class, kind, state, config, config_hash, gone_at)
         SELECT id, 'blob-old', $1, 'sink', 'RUNNING', $2, 'x', now() FROM connect_clusters WHERE name = 'main'",
    )
    .bind(AZURE)
    .bind(json!({"connector.class": AZURE, "azblob.account.key": ACCOUNT_KEY}))
    .execute(&c.t.pool)
    .await
    .expect("an old row");
    c.double.fail_task(
        "blob-orders",
        0,
        &format!("org.apache.kafka.connect.errors.ConnectException: AuthenticationFailed for key {ACCOUNT_KEY}"),
    );
    c.pass("main").await.expect("pass");

    let stored: Vec<(String, String, Option<String>)> =
        sqlx::query_as("SELECT name, config::text, trace FROM connectors ORDER BY name")
            .fetch_all(&c.t.pool)
            .await
            .expect("rows");
    assert_eq!(stored.len(), 2, "{stored:?}");
    for (name, config, _) in &stored {
        assert!(!config.contains(ACCOUNT_KEY), "{name}: {config}");
        assert!(config.contains("********"), "{name}: {config}");
    }
    let tasks: Vec<Option<String>> = sqlx::query_scalar("SELECT trace FROM connector_tasks")
        .fetch_all(&c.t.pool)
        .await
        .expect("tasks");
    assert!(
        tasks
            .iter()
            .flatten()
            .any(|t| t.contains("AuthenticationFailed")),
        "{tasks:?}"
    );
    assert!(
        tasks.iter().flatten().all(|t| !t.contains(ACCOUNT_KEY)),
        "{tasks:?}"
    );

    let vic = c.t.user("vic", &[Role::Viewer]).await;
    let vt = c.t.token(vic).await;
    let r =
        c.t.api(
            Method::GET,
            &format!(
                "/api/v1/clusters/{}/connect/main/connectors/blob-orders",
                c.cluster
            ),
            &vt,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("azblob.account.key"), "{}", r.body);
    assert!(!r.body.contains(ACCOUNT_KEY), "{}", r.body);
    let cookie = c.t.login("vic", support::PASSWORD).await.expect("vic");
    let page =
        c.t.get(
            &format!(
                "/clusters/{}/connector?connect=main&name=blob-orders",
                c.cluster
            ),
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("azblob.account.key"), "{}", page.body);
    assert!(!page.body.contains(ACCOUNT_KEY), "{}", page.body);
}

/// A 1 MiB value (a real worker keeps a whole config as one record of its
/// config topic) is refused with a 422 naming the key and the limit, before
/// any rule runs or the worker is asked, and nothing is proposed.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_oversized_config_value_is_refused_before_the_worker_is_asked(pool: PgPool) {
    let w = review_world(pool, "act_after_approval", 1).await;
    let mut big = s3_draft("s3-orders", "1000");
    big["s3.bucket.name"] = json!("b".repeat(1024 * 1024));
    let asked = w.c.double.requests();
    let r =
        w.c.api(
            Method::POST,
            "/api/v1/connect/validate",
            Some(json!({"config": big, "cluster_id": w.c.cluster, "connect": "main"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("\\\"s3.bucket.name\\\""), "{}", r.body);
    assert!(r.body.contains("the limit is 100 KiB"), "{}", r.body);
    let r = w.propose(&w.eddie, big).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(r.body.contains("the limit is 100 KiB"), "{}", r.body);
    assert_eq!(w.c.double.requests(), asked, "the worker was not asked");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM review_items")
        .fetch_one(&w.c.t.pool)
        .await
        .expect("items");
    assert_eq!(items, 0, "nothing proposed");
}

/// Connect says RUNNING for a connector whose only task failed: its work
/// has stopped, so every list says FAILED (never a green RUNNING).
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_connector_whose_only_task_failed_is_failed_in_every_list(pool: PgPool) {
    let c = setup(pool).await;
    let mut one = s3("orders");
    for (k, v) in one.iter_mut() {
        if *k == "tasks.max" {
            *v = "1".into();
        }
    }
    put(&c.double, "s3-orders", &one);
    c.add_connect("main", &c.url).await;
    c.pass("main").await.expect("pass");
    assert_eq!(c.connectors("").await["items"][0]["state"], "RUNNING");

    c.double.fail_task("s3-orders", 0, TRACE);
    c.pass("main").await.expect("pass");
    let list = c.connectors("").await;
    assert_eq!(list["items"][0]["state"], "FAILED", "{list}");
    assert_eq!(list["items"][0]["trouble"], true);
    let d = c.connector("s3-orders").await.json();
    assert_eq!(d["state"], "FAILED", "{d}");
    let page =
        c.t.get(
            &format!("/clusters/{}/connect?name=main", c.cluster),
            Some(&c.t.login("ada", support::PASSWORD).await.expect("ada")),
        )
        .await;
    assert!(!page.body.contains(">RUNNING<"), "{}", page.body);
}
