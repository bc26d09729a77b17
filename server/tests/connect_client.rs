//! The Kafka Connect client against the Connect double: every endpoint of
//! the reference, both prefixes (self-managed and Confluent Cloud), and
//! every failure: Connect's error bodies, 404, 409 rebalances (retried, then
//! given up), 5xx, HTML, bodies of the wrong shape, timeouts, closed
//! connections, redirects, oversized answers, refused addresses.

use axum::Router;
use axum::http::StatusCode;
use std::collections::BTreeMap;
use std::time::Duration;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper_doubles::connect::{
    self, ConnectHandle, DoubleAuth, Fault, Options, State as DState,
};
use streamkeeper_server::clients::connect::{
    Auth, ConnectClient, ConnectError, ConnectSettings, InitialState, Offset, RestartOptions,
    Restarted, Secret, State,
};

const PG: &str = "io.debezium.connector.postgresql.PostgresConnector";
const JDBC: &str = "io.confluent.connect.jdbc.JdbcSinkConnector";
const SECRET: &str = "hunter2-s3cr3t";

fn settings(url: &str) -> ConnectSettings {
    ConnectSettings {
        egress: EgressPolicy::LOOPBACK,
        conflict_backoff: Duration::from_millis(5),
        timeout: Duration::from_secs(2),
        ..ConnectSettings::new(url)
    }
}

async fn double() -> (ConnectClient, ConnectHandle) {
    let (url, handle) = connect::spawn().await;
    (ConnectClient::new(settings(&url)).expect("client"), handle)
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn postgres(name: &str) -> BTreeMap<String, String> {
    map(&[
        ("connector.class", PG),
        ("name", name),
        ("tasks.max", "1"),
        ("topic.prefix", "shop"),
        ("database.hostname", "db"),
        ("database.user", "cdc"),
        ("database.password", SECRET),
        ("database.dbname", "shop"),
        ("plugin.name", "pgoutput"),
    ])
}

fn jdbc(name: &str, tasks: &str) -> BTreeMap<String, String> {
    map(&[
        ("connector.class", JDBC),
        ("name", name),
        ("tasks.max", tasks),
        ("topics", "orders"),
        ("connection.url", "jdbc:postgresql://dw/dw"),
        ("connection.password", SECRET),
    ])
}

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("port");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn the_worker_tells_its_version_and_plugins() {
    let (c, _) = double().await;
    assert_eq!(c.worker().await.expect("root").version, "3.9.0");
    let connectors = c.plugins(true).await.expect("plugins");
    assert!(
        connectors
            .iter()
            .all(|p| p.kind == "source" || p.kind == "sink")
    );
    assert!(connectors.iter().any(|p| p.class == PG));
    let all = c.plugins(false).await.expect("all plugins");
    assert!(all.len() > connectors.len());
    assert!(all.iter().any(|p| p.kind == "converter"));
    assert!(!c.is_cloud());
}

#[tokio::test]
async fn connectors_are_created_read_listed_expanded_and_deleted() {
    let (c, _) = double().await;
    let info = c
        .create("pg-orders", &postgres("pg-orders"), None)
        .await
        .expect("created");
    assert_eq!(info.name, "pg-orders");
    assert_eq!(info.tasks.len(), 1);
    assert!(matches!(
        c.create("pg-orders", &postgres("pg-orders"), None).await,
        Err(ConnectError::AlreadyExists { name }) if name == "pg-orders"
    ));
    c.create("sink", &jdbc("sink", "2"), Some(InitialState::Paused))
        .await
        .expect("paused sink");
    assert_eq!(c.connectors().await.expect("names"), ["pg-orders", "sink"]);

    let both = c.connectors_expanded(true, true).await.expect("expanded");
    let sink = &both["sink"];
    assert_eq!(
        sink.status.as_ref().map(|s| s.connector.state),
        Some(State::Paused)
    );
    assert_eq!(sink.status.as_ref().map(|s| s.tasks.len()), Some(2));
    assert_eq!(
        sink.info
            .as_ref()
            .and_then(|i| i.config.0.get("topics").cloned()),
        Some("orders".into())
    );
    let status_only = c.connectors_expanded(true, false).await.expect("status");
    assert!(status_only["pg-orders"].info.is_none());
    assert!(status_only["pg-orders"].status.is_some());

    assert_eq!(c.connector("sink").await.expect("info").tasks.len(), 2);
    assert_eq!(
        c.config("pg-orders").await.expect("config").0["topic.prefix"],
        "shop"
    );
    let tasks = c.tasks("sink").await.expect("tasks");
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[1].id.task, 1);

    c.delete("sink").await.expect("deleted");
    let e = c.delete("sink").await.expect_err("gone");
    assert!(
        matches!(&e, ConnectError::NotFound { message } if message == "Connector sink not found"),
        "{e:?}"
    );
    assert_eq!(e.status(), 404);
    assert!(matches!(
        c.status("sink").await,
        Err(ConnectError::NotFound { message }) if message == "No status found for connector sink"
    ));
    assert!(matches!(
        c.connector("sink").await,
        Err(ConnectError::NotFound { .. })
    ));
    assert!(matches!(
        c.task_status("pg-orders", 7).await,
        Err(ConnectError::NotFound { .. })
    ));
}

#[tokio::test]
async fn configs_are_put_patched_and_refused_without_quoting_values() {
    let (c, _) = double().await;
    let (created, _) = c.put_config("sink", &jdbc("sink", "1")).await.expect("put");
    assert!(created, "201 on create");
    let (created, info) = c.put_config("sink", &jdbc("sink", "3")).await.expect("put");
    assert!(!created, "200 on update");
    assert_eq!(info.tasks.len(), 3);

    let e = c
        .put_config("sink", &jdbc("other", "1"))
        .await
        .expect_err("name mismatch");
    assert!(
        matches!(&e, ConnectError::Rejected { status: 400, message } if message.contains("doesn't match connector name in the URL")),
        "{e:?}"
    );

    let mut bad = jdbc("sink", SECRET);
    bad.remove("topics");
    let e = c.put_config("sink", &bad).await.expect_err("invalid");
    let text = e.to_string();
    assert!(
        text.contains("Connector configuration is invalid"),
        "{text}"
    );
    assert!(
        text.contains("Must configure one of topics or topics.regex"),
        "{text}"
    );
    assert!(
        text.contains("Invalid value (hidden) for configuration tasks.max"),
        "{text}"
    );
    assert!(!text.contains(SECRET), "{text}");
    assert_eq!(e.status(), 422);

    let patch = BTreeMap::from([
        ("connection.password".to_owned(), None),
        ("insert.mode".to_owned(), Some("upsert".to_owned())),
    ]);
    let info = c.patch_config("sink", &patch).await.expect("patched");
    assert!(!info.config.0.contains_key("connection.password"));
    assert_eq!(info.config.0["insert.mode"], "upsert");
    assert!(matches!(
        c.patch_config("nope", &patch).await,
        Err(ConnectError::NotFound { .. })
    ));
}

#[tokio::test]
async fn failures_carry_traces_and_restarts_answer_204_or_202() {
    let (c, h) = double().await;
    c.create("sink", &jdbc("sink", "2"), None)
        .await
        .expect("sink");
    h.fail_task(
        "sink",
        1,
        "org.apache.kafka.connect.errors.ConnectException: boom\n\tat X",
    );
    let s = c.status("sink").await.expect("status");
    assert_eq!(s.connector.state, State::Running);
    assert_eq!(s.tasks[0].trace, None);
    assert_eq!(s.tasks[1].state, State::Failed);
    assert!(
        s.tasks[1]
            .trace
            .as_deref()
            .is_some_and(|t| t.contains("boom"))
    );
    assert_eq!(
        c.task_status("sink", 1).await.expect("task").state,
        State::Failed
    );

    assert_eq!(
        c.restart("sink", RestartOptions::default())
            .await
            .expect("204"),
        Restarted::Connector
    );
    assert_eq!(
        c.status("sink").await.expect("s").tasks[1].state,
        State::Failed,
        "the connector alone restarted"
    );

    let Restarted::Accepted(now) = c
        .restart(
            "sink",
            RestartOptions {
                include_tasks: true,
                only_failed: true,
            },
        )
        .await
        .expect("202")
    else {
        panic!("202 expected");
    };
    assert_eq!(now.tasks[0].state, State::Running, "only the failed one");
    assert_eq!(now.tasks[1].state, State::Restarting);
    assert_eq!(
        c.status("sink").await.expect("s").tasks[1].state,
        State::Running
    );

    h.fail_task("sink", 0, "again");
    c.restart_task("sink", 0).await.expect("task restart");
    assert_eq!(
        c.status("sink").await.expect("s").tasks[0].state,
        State::Running
    );
    assert!(matches!(
        c.restart_task("sink", 9).await,
        Err(ConnectError::NotFound { .. })
    ));
    assert!(matches!(
        c.restart("nope", RestartOptions::default()).await,
        Err(ConnectError::NotFound { .. })
    ));
    assert_eq!(h.restarts("sink"), 3);
}

#[tokio::test]
async fn pause_resume_and_stop_move_the_states() {
    let (c, h) = double().await;
    c.create("sink", &jdbc("sink", "2"), None)
        .await
        .expect("sink");
    c.pause("sink").await.expect("202");
    assert_eq!(
        h.states("sink"),
        Some((DState::Paused, vec![DState::Paused; 2]))
    );
    c.resume("sink").await.expect("202");
    assert_eq!(
        c.status("sink").await.expect("s").connector.state,
        State::Running
    );
    c.stop("sink").await.expect("204");
    c.stop("sink").await.expect("idempotent");
    let s = c.status("sink").await.expect("s");
    assert_eq!(s.connector.state, State::Stopped);
    assert!(s.tasks.is_empty(), "a stopped connector's tasks vanish");
    assert!(matches!(
        c.pause("nope").await,
        Err(ConnectError::NotFound { .. })
    ));
}

#[tokio::test]
async fn topics_and_offsets_are_read_and_reset() {
    let (c, h) = double().await;
    c.create("sink", &jdbc("sink", "1"), None)
        .await
        .expect("sink");
    assert_eq!(c.topics("sink").await.expect("topics"), ["orders"]);
    c.reset_topics("sink").await.expect("202");
    assert!(c.topics("sink").await.expect("topics").is_empty());

    let offset = Offset {
        partition: serde_json::json!({"kafka_topic": "orders", "kafka_partition": 0}),
        offset: serde_json::json!({"kafka_offset": 42}),
    };
    h.set_offsets(
        "sink",
        vec![serde_json::json!({"partition": offset.partition, "offset": offset.offset})],
    );
    assert_eq!(
        c.offsets("sink").await.expect("offsets"),
        std::slice::from_ref(&offset)
    );
    let e = c
        .alter_offsets("sink", std::slice::from_ref(&offset))
        .await
        .expect_err("running");
    assert!(
        e.to_string().contains("must be in the STOPPED state"),
        "{e}"
    );
    c.stop("sink").await.expect("stop");
    assert!(
        c.alter_offsets("sink", &[offset])
            .await
            .expect("altered")
            .contains("altered successfully")
    );
    assert!(
        c.reset_offsets("sink")
            .await
            .expect("reset")
            .contains("reset successfully")
    );
    assert!(c.offsets("sink").await.expect("offsets").is_empty());
}

#[tokio::test]
async fn validate_answers_per_field_and_keeps_no_echoed_value() {
    let (c, _) = double().await;
    let mut draft = jdbc("sink", "1");
    draft.remove("topics");
    let a = c
        .validate("JdbcSinkConnector", &draft)
        .await
        .expect("200 even when invalid");
    assert_eq!(a.class, JDBC);
    assert_eq!(a.error_count, 1);
    assert_eq!(
        a.errors().get("topics").map(|e| e.to_vec()),
        Some(vec![
            "Must configure one of topics or topics.regex".to_owned()
        ])
    );
    assert!(a.password_keys().contains("connection.password"));
    assert!(!format!("{a:?}").contains(SECRET));

    let mut pg = postgres("pg");
    pg.remove("topic.prefix");
    pg.insert("snapshot.mode".into(), "never".into());
    let a = c.validate(PG, &pg).await.expect("pg");
    assert_eq!(a.error_count, 2);
    assert_eq!(
        a.errors()["topic.prefix"],
        ["The 'topic.prefix' value is invalid: A value is required".to_owned()]
    );
    assert!(
        c.validate(PG, &postgres("pg"))
            .await
            .expect("valid")
            .error_count
            == 0
    );

    let e = c
        .validate("S3SinkConnector", &draft)
        .await
        .expect_err("class mismatch");
    assert!(matches!(e, ConnectError::ValidateRefused { .. }));
    draft.remove("connector.class");
    let e = c
        .validate("JdbcSinkConnector", &draft)
        .await
        .expect_err("no class");
    // Connect's text here echoes the whole config, secret included.
    assert!(!e.to_string().contains(SECRET), "{e}");
    assert!(!format!("{e:?}").contains(SECRET), "{e:?}");
}

#[tokio::test]
async fn a_rebalance_is_retried_then_given_up_with_nothing_applied() {
    let (c, h) = double().await;
    c.create("sink", &jdbc("sink", "1"), None)
        .await
        .expect("sink");
    h.rebalance_next(2);
    let before = h.requests();
    c.pause("sink").await.expect("paused after two 409s");
    assert_eq!(h.requests() - before, 3);
    c.resume("sink").await.expect("resumed");

    h.rebalance_forever();
    let before = h.requests();
    let e = c.pause("sink").await.expect_err("409 forever");
    assert!(
        matches!(e, ConnectError::Rebalancing { attempts: 5, .. }),
        "{e:?}"
    );
    assert_eq!(h.requests() - before, 5, "four retries, then it stops");
    assert_eq!(e.status(), 503);
    // Reads are answered during a rebalance; the write did not happen.
    assert_eq!(
        c.status("sink").await.expect("s").connector.state,
        State::Running
    );
    h.rebalance_next(0);
    c.pause("sink").await.expect("after the rebalance");
}

#[tokio::test]
async fn server_errors_html_and_wrong_bodies_are_never_a_success() {
    let (c, h) = double().await;
    c.create("sink", &jdbc("sink", "1"), None)
        .await
        .expect("sink");

    h.fail_next(1, Fault::ServerError);
    let e = c.connectors().await.expect_err("500");
    assert!(
        matches!(&e, ConnectError::Server { status: 500, message, .. } if message.contains("Request timed out")),
        "{e:?}"
    );

    h.fail_next(1, Fault::BadGatewayHtml);
    let e = c.status("sink").await.expect_err("502");
    assert!(
        matches!(&e, ConnectError::Server { status: 502, .. }),
        "{e:?}"
    );
    assert!(
        !e.to_string().contains("nginx"),
        "the page is for admins only"
    );
    assert!(e.for_viewer(true).contains("nginx"));

    h.fail_next(1, Fault::HtmlOk);
    let e = c.connectors().await.expect_err("a 200 HTML page");
    assert!(
        matches!(&e, ConnectError::UnexpectedResponse { status: 200, .. }),
        "{e:?}"
    );

    h.fail_next(1, Fault::HtmlOk);
    let e = c.pause("sink").await.expect_err("200 where 202 is due");
    assert!(
        matches!(&e, ConnectError::UnexpectedResponse { status: 200, detail, .. } if detail.contains("202")),
        "{e:?}"
    );

    h.fail_next(1, Fault::HtmlOk);
    assert!(matches!(
        c.validate("JdbcSinkConnector", &jdbc("sink", "1")).await,
        Err(ConnectError::UnexpectedResponse { .. })
    ));

    h.fail_next(1, Fault::Hang);
    let e = c.connectors().await.expect_err("hang");
    assert!(
        matches!(&e, ConnectError::Unreachable { reason, .. } if reason.contains("no answer within")),
        "{e:?}"
    );

    h.fail_next(1, Fault::Close);
    assert!(matches!(
        c.connectors().await,
        Err(ConnectError::Unreachable { .. })
    ));

    h.fail_next(1, Fault::Unauthorized);
    assert!(matches!(
        c.connectors().await,
        Err(ConnectError::Unauthorized { .. })
    ));
}

#[tokio::test]
async fn answers_of_a_wrong_shape_redirects_and_oversized_bodies_are_errors() {
    let router = Router::new()
        .route(
            "/connectors",
            axum::routing::get(|| async {
                (
                    [("content-type", "application/json")],
                    r#"{"not":"a list"}"#,
                )
            }),
        )
        .route(
            "/connectors/a/status",
            axum::routing::get(|| async {
                (
                    [("content-type", "application/json")],
                    r#"{"name":"a","connector":{"state":"SLEEPING","worker_id":"w"},"tasks":[],"type":"sink"}"#,
                )
            }),
        )
        .route(
            "/connectors/a/config",
            axum::routing::get(|| async {
                (StatusCode::TEMPORARY_REDIRECT, [("location", "http://169.254.169.254/")], "")
            }),
        )
        .route(
            "/connector-plugins",
            axum::routing::get(|| async {
                ([("content-type", "application/json")], "[".repeat(4096))
            }),
        )
        .route(
            "/connectors/a",
            axum::routing::delete(|| async { (StatusCode::IM_A_TEAPOT, "short and stout") }),
        );
    let url = serve(router).await;
    let c = ConnectClient::new(ConnectSettings {
        max_body: 1024,
        ..settings(&url)
    })
    .expect("client");
    assert!(matches!(
        c.connectors().await,
        Err(ConnectError::UnexpectedResponse { status: 200, .. })
    ));
    assert!(
        matches!(
            c.status("a").await,
            Err(ConnectError::UnexpectedResponse { .. })
        ),
        "an unknown state"
    );
    let e = c.config("a").await.expect_err("redirect");
    assert!(
        matches!(&e, ConnectError::Redirected { status: 307, .. }),
        "{e:?}"
    );
    assert!(!e.to_string().contains("169.254"));
    assert!(matches!(
        c.plugins(true).await,
        Err(ConnectError::TooLarge { limit: 1024, .. })
    ));
    assert!(matches!(
        c.delete("a").await,
        Err(ConnectError::UnexpectedResponse { status: 418, .. })
    ));
}

#[tokio::test]
async fn bad_urls_refused_addresses_and_closed_ports_are_typed() {
    assert!(matches!(
        ConnectClient::new(settings("http://user:pw@127.0.0.1:8083")),
        Err(ConnectError::BadUrl { url, .. }) if !url.contains("pw")
    ));
    assert!(matches!(
        ConnectClient::new(settings("ftp://x")),
        Err(ConnectError::BadUrl { .. })
    ));
    assert!(matches!(
        ConnectClient::new(ConnectSettings::new("http://127.0.0.1:8083")),
        Err(ConnectError::Egress { .. })
    ));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let c = ConnectClient::new(settings(&format!("http://127.0.0.1:{port}"))).expect("client");
    assert!(matches!(
        c.connectors().await,
        Err(ConnectError::Unreachable { .. })
    ));
}

#[tokio::test]
async fn basic_and_bearer_credentials_are_sent() {
    let (url, _) = connect::spawn_with(Options {
        auth: DoubleAuth::Basic {
            user: "connect".into(),
            password: "pw".into(),
        },
        ..Options::default()
    })
    .await;
    let anonymous = ConnectClient::new(settings(&url)).expect("client");
    assert!(matches!(
        anonymous.connectors().await,
        Err(ConnectError::Unauthorized { .. })
    ));
    let c = ConnectClient::new(ConnectSettings {
        auth: Auth::Basic {
            user: "connect".into(),
            secret: Secret::new("pw"),
        },
        ..settings(&url)
    })
    .expect("client");
    assert!(c.connectors().await.expect("admitted").is_empty());

    let (url, _) = connect::spawn_with(Options {
        auth: DoubleAuth::Bearer("t0ken".into()),
        ..Options::default()
    })
    .await;
    let c = ConnectClient::new(ConnectSettings {
        auth: Auth::Bearer(Secret::new("t0ken")),
        ..settings(&url)
    })
    .expect("client");
    assert!(c.connectors().await.expect("admitted").is_empty());
}

#[tokio::test]
async fn confluent_clouds_prefix_answers_the_same_shapes_and_its_own_errors() {
    let (url, h) = connect::spawn().await;
    let cloud = format!("{url}/connect/v1/environments/env-12345/clusters/lkc-67890");
    let c = ConnectClient::new(settings(&cloud)).expect("client");
    assert!(c.is_cloud());
    c.create("sink", &jdbc("sink", "1"), None)
        .await
        .expect("created");
    assert_eq!(c.connectors().await.expect("names"), ["sink"]);
    h.fail_task("sink", 0, "cloud trace");
    let all = c.connectors_expanded(true, true).await.expect("expanded");
    assert_eq!(
        all["sink"].status.as_ref().map(|s| s.tasks[0].state),
        Some(State::Failed)
    );
    let e = c.status("nope").await.expect_err("404 in Cloud's shape");
    assert!(
        matches!(&e, ConnectError::NotFound { message } if message.contains("nope")),
        "{e:?}"
    );
    h.rebalance_next(1);
    c.pause("sink")
        .await
        .expect("409 in Cloud's shape, retried");

    let wrong = format!("{url}/connect/v1/environments/env-other/clusters/lkc-67890");
    let c = ConnectClient::new(settings(&wrong)).expect("client");
    assert!(matches!(
        c.connectors().await,
        Err(ConnectError::NotFound { .. })
    ));
}
