//! Mutual TLS on a real broker: nisshi cannot ask for a client
//! certificate, so scripts/test puts stunnel in front of a plaintext
//! nisshi (STREAMKEEPER_TEST_MTLS_BOOTSTRAP, `start_mtls_broker`), taking
//! TLS with the test CA's broker certificate and requiring a client
//! certificate signed by that CA. A cluster whose client certificate and
//! key are references is sampled through it, by librdkafka and by the fast
//! read alike; a certificate of another CA, or none, is said plainly by the
//! connection test and the fast read, and on the sampler is a refused
//! sign-in (UNREACHABLE, audited, never zeros).

mod support;

use streamkeeper::watch::reach::Unreachable;
use streamkeeper_server::clients::kafka::wire::WireError;
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use streamkeeper_server::watch::store;
use support::secure::{
    Creds, certs, cli, env, explained, the_fast_read_reads_what_librdkafka_reads, wire_refusal,
};

const REFUSED: &str = "The broker refused this console's client certificate (mutual TLS): give a certificate and key signed by an authority the broker trusts (the client certificate and key references), and check that it has not expired.";

/// A cluster watched over mutual TLS with the test CA and the client
/// certificate `name` (`make_test_certs`' client or rogue), by reference.
async fn mtls_cluster(pool: &sqlx::PgPool, name: &str) -> store::ClusterRow {
    let at = |file: &str| format!("file:{}", certs().join(file).display());
    let (ca, cert, key) = (
        at("ca.pem"),
        at(&format!("{name}.pem")),
        at(&format!("{name}.key")),
    );
    let mut conn = pool.acquire().await.expect("conn");
    store::insert(
        &mut conn,
        &store::NewCluster {
            name: "mutual",
            bootstrap: &env("STREAMKEEPER_TEST_MTLS_BOOTSTRAP"),
            security_protocol: "SSL",
            sasl_mechanism: None,
            username_ref: None,
            password_ref: None,
            ca_ref: Some(&ca),
            client_cert_ref: Some(&cert),
            client_key_ref: Some(&key),
            insecure_credentials: false,
            interval_s: 5,
        },
    )
    .await
    .expect("cluster")
}

async fn lag_samples(pool: &sqlx::PgPool, cluster: i64) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM lag_samples s JOIN cluster_passes p ON p.id = s.pass_id
         WHERE p.cluster_id = $1",
    )
    .bind(cluster)
    .fetch_one(pool)
    .await
    .expect("count")
}

/// The client certificate by reference: the exact lag per partition,
/// read by the fast read and equal to librdkafka's; then the sampler's
/// pass of a cluster so configured stores it.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_client_certificate_by_reference_reads_and_samples_through_mutual_tls(
    pool: sqlx::PgPool,
) {
    let creds = Creds::new("mtls");
    the_fast_read_reads_what_librdkafka_reads(&creds.mtls(Some("client")), "mtls").await;

    let c = mtls_cluster(&pool, "client").await;
    let (mut pending, mut kept) = (None, Default::default());
    let outcome = watch::pass(&pool, &c, &creds.policy, &mut pending, &mut kept).await;
    assert!(
        matches!(outcome, PassOutcome::Stored { problems: 0, .. }),
        "{outcome:?}"
    );
    assert!(lag_samples(&pool, c.id).await > 0);
}

/// A certificate signed by another CA, and none at all: the connection
/// test and the fast read say the broker refused the client certificate,
/// in the same words, with no key in what is said.
#[tokio::test]
async fn a_refused_client_certificate_is_said_plainly_by_the_connection_test_and_the_fast_read() {
    let creds = Creds::new("mtls-bad");
    for name in [Some("rogue"), None] {
        let s = creds.mtls(name);
        let (why, said) = explained(&s, "PRIVATE KEY").await;
        assert_eq!(why, Unreachable::ClientCertificate, "{name:?}: {said}");
        assert_eq!(said, REFUSED);
        let refused = wire_refusal(&s).await;
        match &refused {
            WireError::Tls { why, sentence, .. } => {
                assert_eq!(*why, Unreachable::ClientCertificate, "{name:?}: {refused}");
                assert_eq!(sentence, REFUSED);
            }
            other => panic!("{name:?}: {other:?}"),
        }
        assert!(!refused.to_string().contains("PRIVATE KEY"), "{refused}");
    }
}

/// On the sampler, a client certificate the broker refuses is a refused
/// sign-in: UNREACHABLE with "sign-in refused since …" and the sentence,
/// no lag stored, audited once with its cause.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_refused_client_certificate_is_an_audited_refused_sign_in_never_zeros(
    pool: sqlx::PgPool,
) {
    let creds = Creds::new("mtls-pass");
    let c = mtls_cluster(&pool, "rogue").await;
    let (mut pending, mut kept) = (None, Default::default());
    for _ in 0..2 {
        let outcome = watch::pass(&pool, &c, &creds.policy, &mut pending, &mut kept).await;
        let PassOutcome::Failed(why) = outcome else {
            panic!("a refused certificate is not a read: {outcome:?}");
        };
        assert!(why.starts_with("sign-in refused since "), "{why}");
        assert!(why.contains(REFUSED), "{why}");
        assert!(!why.contains("PRIVATE KEY"), "{why}");
    }
    assert_eq!(lag_samples(&pool, c.id).await, 0, "never zeros");
    let last = store::last_pass(&pool, c.id)
        .await
        .expect("db")
        .expect("pass");
    assert_eq!(last.outcome, "UNREACHABLE");
    let audited: Vec<serde_json::Value> = sqlx::query_scalar(
        "SELECT detail::jsonb FROM audit_log WHERE action = 'cluster.sign_in_refused'",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    assert_eq!(audited.len(), 1, "the first refusal only: {audited:?}");
    assert_eq!(audited[0]["cause"], "client_certificate");
}

/// `streamkeeper kafka lag` with `--client-cert` and `--client-key`: the
/// lag read with the test CA's client certificate. (`kafka check` says a
/// refusal with the connection test's explanation, tested above: a
/// refused certificate costs it two timeouts, 20 s.)
#[test]
fn kafka_lag_with_a_client_certificate() {
    let creds = Creds::new("mtls-cli");
    let at = |file: &str| format!("file:{}", certs().join(file).display());
    let bootstrap = env("STREAMKEEPER_TEST_MTLS_BOOTSTRAP");
    let (cert, key) = (at("client.pem"), at("client.key"));
    let args = [
        "kafka",
        "lag",
        "--bootstrap",
        &bootstrap,
        "--security-protocol",
        "SSL",
        "--ca",
        &at("ca.pem"),
        "--client-cert",
        &cert,
        "--client-key",
        &key,
    ];
    let (code, said) = cli(&creds, "PRIVATE KEY", &args);
    assert_eq!(code, Some(0), "{said}");
}
