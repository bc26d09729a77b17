//! The limits parsers of user input own (issue 12): a schema over its
//! size cap is refused with the cap named, before anything parses it; a
//! body over the request limit is a JSON 413 naming that limit; input
//! nested past the parsers' recursion limits is a 422 and the server
//! stays up; and `/healthz` keeps answering within 100 ms while big
//! checks run, because parsing happens on the blocking pool a few at a
//! time, not on the async threads.

mod support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use streamkeeper::accounts::role::Role;
use support::TestApp;

/// A cluster whose last pass saw the topics `orders` and `events`.
async fn cluster(pool: &PgPool) -> i64 {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('local', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(pool)
    .await
    .expect("cluster");
    for topic in ["orders", "events"] {
        sqlx::query(
            "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen) VALUES ($1, $2, 1, now(), now())",
        )
        .bind(id)
        .bind(topic)
        .execute(pool)
        .await
        .expect("topic");
    }
    id
}

/// An Avro record of string fields, just under `bytes` long.
fn avro_of(bytes: usize) -> String {
    let mut fields = Vec::new();
    let mut len = 60;
    while len < bytes {
        let f = format!(r#"{{"name":"f{}","type":"string"}}"#, fields.len());
        len += f.len() + 1;
        fields.push(f);
    }
    fields.pop();
    format!(
        r#"{{"type":"record","name":"Order","fields":[{}]}}"#,
        fields.join(",")
    )
}

/// A JSON Schema object of bounded string properties, just under `bytes`.
fn json_of(bytes: usize) -> String {
    let mut props = Vec::new();
    let mut len = 60;
    while len < bytes {
        let p = format!(r#""p{}":{{"type":"string","maxLength":64}}"#, props.len());
        len += p.len() + 1;
        props.push(p);
    }
    props.pop();
    format!(
        r#"{{"type":"object","properties":{{{}}},"additionalProperties":false}}"#,
        props.join(",")
    )
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_5_mb_schema_is_refused_with_the_limit_named(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let id = cluster(&t.pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let token = t.token(admin).await;
    let big = avro_of(5_000_000);
    assert!(big.len() > 4_900_000, "{}", big.len());

    let check = format!("/api/v1/clusters/{id}/streams/orders/compatibility");
    let r = t
        .api(
            Method::POST,
            &check,
            &token,
            Some(json!({"schema_type": "AVRO", "schema": big})),
        )
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "too_large");
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.starts_with("The schema is 4.7 MiB ("), "{message}");
    assert!(
        message.ends_with("the limit is 1 MiB (STREAMKEEPER_MAX_SCHEMA_BYTES)."),
        "{message}"
    );

    // Recording it is refused the same way, and neither left a row.
    let record = format!("/api/v1/clusters/{id}/streams/orders/schema");
    let r = t
        .api(
            Method::PUT,
            &record,
            &token,
            Some(json!({"schema_type": "AVRO", "schema": big})),
        )
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "too_large");
    let rows: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM compatibility_checks) + (SELECT count(*) FROM catalog_schemas)",
    )
    .fetch_one(&t.pool)
    .await
    .expect("count");
    assert_eq!(rows, 0);

    // Its references count too: each, and all of them together.
    let half = avro_of(600_000);
    let r = t
        .api(
            Method::POST,
            &check,
            &token,
            Some(json!({"schema_type": "AVRO", "schema": r#""string""#,
                        "references": {"a.avsc": half, "b.avsc": half}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("The schema with its 2 references is 1.1 MiB")),
        "{}",
        r.body
    );

    // Just under the cap is checked as usual.
    let r = t
        .api(
            Method::POST,
            &check,
            &token,
            Some(json!({"schema_type": "AVRO", "schema": avro_of(1_000_000)})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_body_over_the_request_limit_is_a_json_413_naming_it(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let id = cluster(&t.pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let token = t.token(admin).await;
    let body = json!({"schema_type": "AVRO", "schema": "x".repeat(9 << 20)}).to_string();
    let check = format!("/api/v1/clusters/{id}/streams/orders/compatibility");
    let send = |path: &str, length: bool| {
        let mut b = Request::post(path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header(header::CONTENT_TYPE, "application/json");
        if length {
            b = b.header(header::CONTENT_LENGTH, body.len());
        }
        b.body(Body::from(body.clone())).expect("request")
    };

    // A body that says how long it is: refused before it is read.
    let r = t.send(send(&check, true)).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "too_large");
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("The request body is 9.0 MiB (")
                && m.contains("the limit is 8 MiB (8 × STREAMKEEPER_MAX_SCHEMA_BYTES")),
        "{}",
        r.body
    );
    // One that does not: cut off at the limit, and the answer says so.
    let r = t.send(send(&check, false)).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("The request body is over the limit of 8 MiB")),
        "{}",
        r.body
    );
    // Server functions read their bodies past axum's extractors: the
    // same limit holds for them.
    let r = t.send(send("/fn/check_schema", true)).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn nesting_5000_deep_is_refused_and_the_server_stays_up(pool: PgPool) {
    let t = TestApp::new(pool).await;
    let id = cluster(&t.pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let token = t.token(admin).await;
    let avro = format!(
        "{}\"int\"{}",
        r#"{"type":"record","name":"R","fields":[{"name":"f","type":"#.repeat(5_000),
        "}]}".repeat(5_000)
    );
    let proto = format!(
        "syntax = \"proto3\";\n{}{}",
        "message M { ".repeat(5_000),
        "} ".repeat(5_000)
    );
    let json_schema = format!(
        "{}{{}}{}",
        r#"{"properties":{"a":"#.repeat(5_000),
        "}}".repeat(5_000)
    );
    let check = format!("/api/v1/clusters/{id}/streams/orders/compatibility");
    for (ty, schema) in [("AVRO", avro), ("PROTOBUF", proto), ("JSON", json_schema)] {
        let r = t
            .api(
                Method::POST,
                &check,
                &token,
                Some(json!({"schema_type": ty, "schema": schema})),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{ty}: {}",
            r.body
        );
        assert_eq!(r.json()["error"]["code"], "invalid", "{ty}");
        let r = t.get("/healthz", None).await;
        assert_eq!((r.status, r.body.as_str()), (StatusCode::OK, "ok"));
    }
}

/// The server as it runs in production: its own multi-thread runtime
/// with one async thread per core of this machine's two, on a real
/// socket, on its own pool to the test's database.
struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(opts: PgPoolOptions, connect: PgConnectOptions) -> Server {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let pool = opts.connect_with(connect).await.expect("server pool");
                let store = tower_sessions_sqlx_store::PostgresStore::new(pool.clone());
                store.migrate().await.expect("session table");
                let app = streamkeeper_server::http::router(
                    streamkeeper_server::http::AppState::new(pool.clone(), support::config()),
                    store,
                );
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                axum::serve(
                    listener,
                    app.into_make_service_with_connect_info::<SocketAddr>(),
                )
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .expect("serve");
                pool.close().await;
            });
        });
        Server {
            addr: addr_rx.recv().expect("the server started"),
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One `GET /healthz` on a fresh connection, timed from connect to the
/// last byte of the answer, with blocking sockets on the caller's own
/// thread (no runtime of ours in the measurement).
fn healthz(addr: SocketAddr) -> Duration {
    let started = Instant::now();
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .expect("write");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    started.elapsed()
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn healthz_answers_within_100_ms_during_20_concurrent_1_mib_checks(
    opts: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let setup = opts
        .clone()
        .connect_with(connect.clone())
        .await
        .expect("pool");
    let id = cluster(&setup).await;
    let t = TestApp::new(setup.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let token = t.token(admin).await;
    drop(t);
    setup.close().await;

    let server = Server::start(opts, connect);
    let base = format!("http://{}", server.addr);
    let avro = avro_of(1_000_000);
    let json_schema = json_of(1_000_000);
    let http = reqwest::Client::new();

    // Healthz every 10 ms on its own thread while the checks run.
    let running = Arc::new(AtomicBool::new(true));
    let pinger = {
        let (running, addr) = (running.clone(), server.addr);
        std::thread::spawn(move || {
            let mut times = Vec::new();
            while running.load(Ordering::SeqCst) {
                times.push(healthz(addr));
                std::thread::sleep(Duration::from_millis(10));
            }
            times
        })
    };
    let started = Instant::now();
    let checks = (0..20).map(|i| {
        let (topic, ty, schema) = if i % 2 == 0 {
            ("orders", "AVRO", avro.clone())
        } else {
            ("events", "JSON", json_schema.clone())
        };
        let sent = http
            .post(format!(
                "{base}/api/v1/clusters/{id}/streams/{topic}/compatibility"
            ))
            .bearer_auth(&token)
            .json(&json!({"schema_type": ty, "schema": schema}))
            .send();
        tokio::spawn(sent)
    });
    let mut answers = Vec::new();
    for c in checks.collect::<Vec<_>>() {
        answers.push(c.await.expect("task"));
    }
    let took = started.elapsed();
    running.store(false, Ordering::SeqCst);
    let mut times = pinger.join().expect("pinger");

    for a in answers {
        let a = a.expect("answered");
        assert_eq!(a.status(), 200);
        let report: Value = a.json().await.expect("report");
        assert_eq!(report["verdict"], "COMPATIBLE", "{}", report["summary"]);
    }
    times.sort();
    let worst = times.last().copied().unwrap_or_default();
    eprintln!(
        "20 checks of ~1 MiB in {:.1} s; {} healthz: median {:.1} ms, worst {:.1} ms",
        took.as_secs_f64(),
        times.len(),
        times[times.len() / 2].as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3
    );
    assert!(times.len() >= 5, "healthz was asked {} times", times.len());
    assert!(
        worst < Duration::from_millis(100),
        "healthz took {worst:?} at worst while the checks ran"
    );
    drop(server);
}
