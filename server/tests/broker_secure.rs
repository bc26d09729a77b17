//! Secured clusters on real nisshi brokers that scripts/test starts: one
//! whose listener speaks TLS only (STREAMKEEPER_TEST_TLS_BOOTSTRAP) and one
//! that also takes SCRAM sign-ins only (STREAMKEEPER_TEST_SCRAM_BOOTSTRAP,
//! its login in STREAMKEEPER_TEST_SCRAM_LOGIN as user:password), both with
//! certificates signed by the test CA in STREAMKEEPER_TEST_CERTS. The lag
//! read exactly, each bad setting named plainly by the connection test's
//! explanation, a refused sign-in an UNREACHABLE pass (never zeros), and a
//! password rotated in its file used at the next pass. The fast read
//! (clients/kafka/wire.rs) over each: used, not the fallback; what
//! librdkafka reads; its refusals said in the connection test's words.

mod support;

use axum::http::Method;
use std::time::{Duration, Instant};
use streamkeeper::watch::reach::Unreachable;
use streamkeeper_server::clients::kafka::reader;
use streamkeeper_server::clients::kafka::settings::ClusterSettings;
use streamkeeper_server::clients::kafka::wire::WireError;
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use streamkeeper_server::watch::store;
use support::kafka::{Broker, bootstrap, free_port};
use support::secure::{
    Creds, certs, cli, client, env, exact_lag, explained, login, read,
    the_fast_read_reads_what_librdkafka_reads, wire_refusal,
};
use support::stop_flag;

/// A TLS-only broker of the test's own, serving the test certificate
/// `cert` (`make_test_certs`: broker, other, expired), and its port.
fn tls_broker(cert: &str) -> (Broker, u16) {
    let port = free_port();
    let (cert, key) = (
        certs().join(format!("{cert}.pem")),
        certs().join(format!("{cert}.key")),
    );
    let broker = Broker::start_with(
        port,
        &[
            "--cert",
            cert.to_str().expect("utf-8"),
            "--key",
            key.to_str().expect("utf-8"),
        ],
    );
    (broker, port)
}

#[tokio::test]
async fn tls_exact_lag_per_partition() {
    let creds = Creds::new("tls-lag");
    exact_lag(
        &creds.tls(&env("STREAMKEEPER_TEST_TLS_BOOTSTRAP"), true),
        "tls",
    )
    .await;
}

#[tokio::test]
async fn scram_512_and_256_exact_lag_per_partition() {
    let (_, password) = login();
    let creds = Creds::new("scram-lag");
    exact_lag(&creds.scram("SCRAM-SHA-512", &password), "scram512").await;
    exact_lag(&creds.scram("SCRAM-SHA-256", &password), "scram256").await;
}

#[tokio::test]
async fn each_bad_setting_is_named_plainly() {
    let creds = Creds::new("bad");
    let tls = env("STREAMKEEPER_TEST_TLS_BOOTSTRAP");

    let (why, said) = explained(&creds.tls(&tls, false), "-----BEGIN").await;
    assert_eq!(why, Unreachable::TlsUntrusted);
    assert_eq!(
        said,
        "The broker's certificate is signed by an authority this console does not trust; give the cluster's CA (its CA bundle reference)."
    );

    let (_other, port) = tls_broker("other");
    let (why, said) = explained(&creds.tls(&format!("127.0.0.1:{port}"), true), "-----").await;
    assert_eq!(why, Unreachable::TlsName);
    assert_eq!(
        said,
        "The broker's certificate is for broker-1.example, not 127.0.0.1: connect by a name it holds, or give the broker a certificate for this one."
    );

    let mut plain = ClusterSettings::plaintext(&tls).expect("settings");
    plain.timeout = Duration::from_secs(3);
    let (why, said) = explained(&plain, "-----").await;
    assert_eq!(why, Unreachable::PlaintextToTls);
    assert_eq!(
        said,
        "The listener speaks TLS, but the security protocol chosen does not: choose SSL (or SASL_SSL)."
    );

    let (why, said) = explained(&creds.tls(&bootstrap(), true), "-----").await;
    assert_eq!(why, Unreachable::TlsToPlaintext);
    assert_eq!(
        said,
        "TLS was spoken to a listener without TLS: choose PLAINTEXT (or SASL_PLAINTEXT), or give the cluster's TLS port."
    );

    let wrong = "not-the-password-7f3a";
    let (why, said) = explained(&creds.scram("SCRAM-SHA-512", wrong), wrong).await;
    assert_eq!(why, Unreachable::Authentication);
    assert_eq!(
        said,
        "The broker refused the sign-in (SASL): check the username and password references, and the mechanism."
    );

    let (_, password) = login();
    let (why, said) = explained(&creds.scram("PLAIN", &password), &password).await;
    assert_eq!(why, Unreachable::Mechanism);
    assert_eq!(
        said,
        "The broker does not offer the SASL mechanism chosen: choose one it offers (its reasons below list them)."
    );
}

async fn scram_cluster(
    pool: &sqlx::PgPool,
    creds: &Creds,
    password_ref: &str,
) -> store::ClusterRow {
    let user = creds.file("user", &login().0);
    let ca = format!("file:{}", certs().join("ca.pem").display());
    let mut conn = pool.acquire().await.expect("conn");
    store::insert(
        &mut conn,
        &store::NewCluster {
            name: "secured",
            bootstrap: &env("STREAMKEEPER_TEST_SCRAM_BOOTSTRAP"),
            security_protocol: "SASL_SSL",
            sasl_mechanism: Some("SCRAM-SHA-512"),
            username_ref: Some(&user),
            password_ref: Some(password_ref),
            ca_ref: Some(&ca),
            client_cert_ref: None,
            client_key_ref: None,
            insecure_credentials: false,
            interval_s: 5,
        },
    )
    .await
    .expect("cluster")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_refused_sign_in_is_unreachable_since_its_first_pass_and_a_rotated_password_is_used_next_pass(
    pool: sqlx::PgPool,
) {
    let creds = Creds::new("rotate");
    let wrong = "rotated-away-2b9c";
    let password_ref = creds.file("password", wrong);
    let c = scram_cluster(&pool, &creds, &password_ref).await;
    let (mut pending, mut kept) = (None, Default::default());
    let mut refusals = Vec::new();
    for _ in 0..2 {
        let outcome = watch::pass(&pool, &c, &creds.policy, &mut pending, &mut kept).await;
        let PassOutcome::Failed(why) = outcome else {
            panic!("a refused sign-in is not a read: {outcome:?}");
        };
        assert!(!why.contains(wrong));
        refusals.push(why);
    }
    let samples: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM lag_samples s JOIN cluster_passes p ON p.id = s.pass_id
         WHERE p.cluster_id = $1",
    )
    .bind(c.id)
    .fetch_one(&pool)
    .await
    .expect("count");
    assert_eq!(samples, 0, "a refused sign-in stores no lag, zero or other");
    let last = store::last_pass(&pool, c.id)
        .await
        .expect("db")
        .expect("pass");
    assert_eq!(last.outcome, "UNREACHABLE");

    // Since the first refused pass, said by every later one.
    let first: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT min(started_at) FROM cluster_passes WHERE cluster_id = $1")
            .bind(c.id)
            .fetch_one(&pool)
            .await
            .expect("first pass");
    let since = format!(
        "sign-in refused since {}: The broker refused the sign-in (SASL)",
        first.format("%Y-%m-%d %H:%M:%S UTC")
    );
    for why in &refusals {
        assert!(why.starts_with(&since), "{why}");
    }
    let app = support::TestApp::new(pool.clone()).await;
    let admin = app
        .user("ada", &[streamkeeper::accounts::role::Role::Admin])
        .await;
    let token = app.token(admin).await;
    let path = format!("/api/v1/clusters/{}", c.id);
    let view = app.api(Method::GET, &path, &token, None).await.json();
    let shown = view["sign_in_refused_since"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
    assert_eq!(shown, Some(first.fixed_offset()), "{view}");
    let cookie = app.login("ada", support::PASSWORD).await.expect("signs in");
    let page = app.get(&format!("/clusters/{}", c.id), Some(&cookie)).await;
    assert!(
        page.body.contains("Sign-in refused since "),
        "{}",
        page.body
    );
    let reason: String = sqlx::query_scalar(
        "SELECT reason FROM flags WHERE cluster_id = $1 AND kind = 'UNREACHABLE' AND resolved_at IS NULL",
    )
    .bind(c.id)
    .fetch_one(&pool)
    .await
    .expect("the cluster's flag");
    assert!(reason.contains(&since), "{reason}");
    let audited: Vec<serde_json::Value> = sqlx::query_scalar(
        "SELECT detail::jsonb FROM audit_log WHERE action = 'cluster.sign_in_refused'",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    assert_eq!(audited.len(), 1, "the first refusal only: {audited:?}");
    assert_eq!(audited[0]["cause"], "authentication");
    assert!(!audited[0].to_string().contains(wrong));

    // The secret is rotated in its file; the console is not restarted.
    creds.file("password", &login().1);
    let outcome = watch::pass(&pool, &c, &creds.policy, &mut pending, &mut kept).await;
    assert!(matches!(outcome, PassOutcome::Stored { .. }), "{outcome:?}");
    let view = app.api(Method::GET, &path, &token, None).await.json();
    assert!(view["sign_in_refused_since"].is_null(), "{view}");
}

/// The STOP flag delivered, as on the plaintext broker (support::stop_flag),
/// on a cluster watched over TLS + SCRAM-SHA-512.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stopped_consumer_on_the_scram_broker_is_flagged_to_its_owner(pool: sqlx::PgPool) {
    let creds = Creds::new("stop");
    let (_, password) = login();
    let c = scram_cluster(&pool, &creds, &creds.file("password", &password)).await;
    let t = support::TestApp::new(pool).await;
    let conf = client(&creds.scram("SCRAM-SHA-512", &password));
    stop_flag::a_stopped_consumer_is_flagged_to_its_owner(&t, c.id, &conf, &creds.policy).await;
}

#[tokio::test]
async fn a_hung_tls_broker_is_unreachable_within_the_timeout() {
    let creds = Creds::new("hung");
    let (broker, port) = tls_broker("broker");
    let s = creds.tls(&format!("127.0.0.1:{port}"), true);
    read(&s).await.expect("reachable before it hangs");
    broker.signal("-STOP");
    let started = Instant::now();
    let r = read(&s).await;
    assert!(matches!(r, Err(reader::ReadError::Unreachable(_))), "{r:?}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

/// A broker whose certificate has expired (`make_test_certs`' expired.pem,
/// for 127.0.0.1 by the test CA): the connection test, the fast read and
/// `kafka check` say so, in the same words.
#[tokio::test]
async fn an_expired_certificate_is_named_by_the_connection_test_the_fast_read_and_kafka_check() {
    const EXPIRED: &str = "The broker's certificate has expired or is not valid yet: renew it, or check this server's clock.";
    let creds = Creds::new("expired");
    let (_expired, port) = tls_broker("expired");
    let bootstrap = format!("127.0.0.1:{port}");
    let (why, said) = explained(&creds.tls(&bootstrap, true), "-----").await;
    assert_eq!(why, Unreachable::TlsExpired);
    assert_eq!(said, EXPIRED);

    let refused = wire_refusal(&creds.tls(&bootstrap, true)).await;
    match &refused {
        WireError::Tls { why, sentence, .. } => {
            assert_eq!(*why, Unreachable::TlsExpired, "{refused}");
            assert_eq!(sentence, EXPIRED);
        }
        other => panic!("the fast read refuses an expired certificate as TLS: {other:?}"),
    }

    let ca = format!("file:{}", certs().join("ca.pem").display());
    let args = [
        "kafka",
        "check",
        "--bootstrap",
        &bootstrap,
        "--security-protocol",
        "SSL",
        "--ca",
        &ca,
    ];
    // (Blocking is fine here: the test has no other task.)
    let (code, said) = cli(&creds, "-----BEGIN", &args);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains(&format!("why: {EXPIRED}")), "{said}");
}

/// `streamkeeper kafka check` and `kafka lag` on the secured brokers: the
/// lag read through the CA and login references, and a refusal's cause
/// said after the read's own error, with exit status 2.
#[test]
fn kafka_check_and_lag_on_secured_clusters() {
    let creds = Creds::new("cli");
    let (user, password) = login();
    let (user_ref, password_ref) = (creds.file("user", &user), creds.file("password", &password));
    let ca = format!("file:{}", certs().join("ca.pem").display());
    let run = |args: &[&str]| cli(&creds, &password, args);
    let scram = env("STREAMKEEPER_TEST_SCRAM_BOOTSTRAP");
    let sasl = [
        "--security-protocol",
        "SASL_SSL",
        "--sasl-mechanism",
        "SCRAM-SHA-512",
        "--username",
        &user_ref,
        "--ca",
        &ca,
    ];
    let (code, said) = run(&[
        &[
            "kafka",
            "lag",
            "--bootstrap",
            &scram,
            "--password",
            &password_ref,
        ][..],
        &sasl,
    ]
    .concat());
    assert_eq!(code, Some(0), "{said}");

    let wrong = creds.file("wrong", "not-it-5d1e");
    let (code, said) = run(&[
        &[
            "kafka",
            "check",
            "--bootstrap",
            &scram,
            "--password",
            &wrong,
        ][..],
        &sasl,
    ]
    .concat());
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("why: The broker refused the sign-in (SASL): check the username and password references, and the mechanism."),
        "{said}"
    );
    assert!(!said.contains("not-it-5d1e"), "{said}");

    let tls = env("STREAMKEEPER_TEST_TLS_BOOTSTRAP");
    let (code, said) = run(&[
        "kafka",
        "check",
        "--bootstrap",
        &tls,
        "--security-protocol",
        "SSL",
    ]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("why: The broker's certificate is signed by an authority this console does not trust; give the cluster's CA (its CA bundle reference)."),
        "{said}"
    );
}

/// The fast read (wire.rs) on the secured brokers: the pass reads through
/// it, not librdkafka, and reads what librdkafka reads on the same client
/// settings (support::secure::the_fast_read_reads_what_librdkafka_reads).
#[tokio::test]
async fn the_fast_read_over_tls_and_scram_reads_what_librdkafka_reads() {
    let (_, password) = login();
    let creds = Creds::new("wire-lag");
    for (s, name) in [
        (
            creds.tls(&env("STREAMKEEPER_TEST_TLS_BOOTSTRAP"), true),
            "wire-tls",
        ),
        (creds.scram("SCRAM-SHA-512", &password), "wire-512"),
        (creds.scram("SCRAM-SHA-256", &password), "wire-256"),
    ] {
        the_fast_read_reads_what_librdkafka_reads(&s, name).await;
    }
}

/// A wrong password, a mechanism not offered, an unknown CA, a name not on
/// the certificate and a TLS client at a plaintext port, through the fast
/// read: each said as the connection test says it on librdkafka's path,
/// and no secret in what is said.
#[tokio::test]
async fn the_fast_read_refuses_in_the_connection_tests_words() {
    let creds = Creds::new("wire-bad");
    let (_, password) = login();
    let wrong = "not-the-password-7f3a";
    let tls = env("STREAMKEEPER_TEST_TLS_BOOTSTRAP");
    let (_other, port) = tls_broker("other");
    // Made one at a time: the login files are shared, so a case's
    // password is written just before it is tried.
    let case = |i: usize| match i {
        0 => (creds.scram("SCRAM-SHA-512", wrong), wrong.to_string()),
        1 => (creds.scram("PLAIN", &password), password.clone()),
        2 => (creds.tls(&tls, false), "-----BEGIN".to_string()),
        3 => (
            creds.tls(&format!("127.0.0.1:{port}"), true),
            "-----BEGIN".to_string(),
        ),
        _ => (creds.tls(&bootstrap(), true), "-----BEGIN".to_string()),
    };
    for i in 0..5 {
        let (s, secret) = case(i);
        let (why, said) = explained(&s, &secret).await;
        let e = wire_refusal(&s).await;
        let ours = e.to_string();
        let got = match &e {
            WireError::SignIn { why, .. } | WireError::Tls { why, .. } => *why,
            other => panic!("{other:?}"),
        };
        assert_eq!(got, why, "{ours}");
        assert!(ours.contains(&said), "{ours}\nnot\n{said}");
        assert!(!ours.contains(&secret), "a secret in {ours}");
    }
}
