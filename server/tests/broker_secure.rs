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
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::watch::lag::offset::{OffsetLag, offset_lag};
use streamkeeper::watch::reach::Unreachable;
use streamkeeper_server::clients::kafka::reader::OffsetsBy;
use streamkeeper_server::clients::kafka::settings::{ClusterSettings, Protocol, SecretRef};
use streamkeeper_server::clients::kafka::wire::{self, WireError};
use streamkeeper_server::clients::kafka::{group_offsets, probe, reader};
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use streamkeeper_server::watch::store;
use support::kafka::{Broker, bootstrap, commit_at, free_port, topic_at};
use support::stop_flag;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run this test through scripts/test, which starts the secured brokers")
    })
}

fn certs() -> PathBuf {
    PathBuf::from(env("STREAMKEEPER_TEST_CERTS"))
}

fn login() -> (String, String) {
    let l = env("STREAMKEEPER_TEST_SCRAM_LOGIN");
    let (u, p) = l.split_once(':').expect("user:password");
    (u.into(), p.into())
}

/// A directory of credential files, the only one the policy allows (with
/// the certificates' directory, for the CA bundle).
struct Creds {
    dir: PathBuf,
    policy: CredentialPolicy,
}

impl Creds {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("sk-secure-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let certs = certs();
        let policy = CredentialPolicy::new(
            "STREAMKEEPER_CRED_",
            [dir.to_str().expect("utf-8"), certs.to_str().expect("utf-8")],
        )
        .expect("policy");
        Self { dir, policy }
    }

    /// A `file:` reference to `value`, written now.
    fn file(&self, name: &str, value: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, format!("{value}\n")).expect("write");
        format!("file:{}", path.display())
    }

    fn secret(&self, reference: &str) -> SecretRef {
        SecretRef::checked(reference, &self.policy).expect("allowed")
    }

    fn ca(&self) -> SecretRef {
        self.secret(&format!("file:{}", certs().join("ca.pem").display()))
    }

    /// TLS to `bootstrap`, with the test CA unless `ca` is false.
    fn tls(&self, bootstrap: &str, ca: bool) -> ClusterSettings {
        let mut s = ClusterSettings::new(bootstrap, Protocol::Ssl, None, None, None, false)
            .expect("settings");
        s.ca = ca.then(|| self.ca());
        s.timeout = Duration::from_secs(3);
        s
    }

    /// SASL_SSL with `mechanism`, the user's name and `password` in files.
    fn scram(&self, mechanism: &str, password: &str) -> ClusterSettings {
        let (user, _) = login();
        let mut s = ClusterSettings::new(
            &env("STREAMKEEPER_TEST_SCRAM_BOOTSTRAP"),
            Protocol::SaslSsl,
            Some(mechanism.parse().expect("mechanism")),
            Some(self.secret(&self.file("user", &user))),
            Some(self.secret(&self.file("password", password))),
            false,
        )
        .expect("settings");
        s.ca = Some(self.ca());
        s.timeout = Duration::from_secs(3);
        s
    }
}

impl Drop for Creds {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

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

/// A producer's and committer's configuration for the secured brokers.
fn client(s: &ClusterSettings) -> ClientConfig {
    let mut c = s.client_config().expect("config");
    // The reader's read-only settings would stop the fixtures writing.
    c.remove("enable.auto.offset.store");
    c.remove("allow.auto.create.topics");
    c
}

async fn read(s: &ClusterSettings) -> Result<reader::Reading, reader::ReadError> {
    let s = s.clone();
    tokio::task::spawn_blocking(move || reader::read(&s, &BTreeMap::new(), &BTreeMap::new()))
        .await
        .expect("join")
}

/// Produces 10 to each of three partitions, commits 4 and 7, and reads
/// back lag 6, 3 and "no commit" through `s`.
async fn exact_lag(s: &ClusterSettings, name: &str) {
    let run = std::process::id();
    let (topic, group) = (
        &format!("{name}-orders-{run}"),
        &format!("{name}-readers-{run}"),
    );
    let conf = client(s);
    topic_at(&conf, topic, &[10, 10, 10]).await;
    commit_at(&conf, group, topic, &[(0, 4), (1, 7)]);
    let r = read(s).await.expect("reachable");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let t = r.topics.iter().find(|t| &t.name == topic).expect("topic");
    let ends: Vec<Option<i64>> = t.partitions.iter().map(|p| p.log_end).collect();
    assert_eq!(ends, vec![Some(10); 3]);
    let g = r.groups.iter().find(|g| &g.name == group).expect("group");
    let lag = |p: i32| offset_lag(g.offsets.get(&(topic.clone(), p)).copied().flatten(), 0, 10);
    assert_eq!(lag(0), OffsetLag::Behind { messages: 6 });
    assert_eq!(lag(1), OffsetLag::Behind { messages: 3 });
    assert_eq!(lag(2), OffsetLag::NoCommit);
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

/// The connection test's explanation of a failed attempt: the cause and
/// its sentence, and everything said, none of it holding `secret`.
async fn explained(s: &ClusterSettings, secret: &str) -> (Unreachable, String) {
    let probed = s.clone();
    let reasons = tokio::task::spawn_blocking(move || probe::attempt(&probed))
        .await
        .expect("join")
        .expect_err("the attempt fails");
    let (why, sentence) = probe::explain(s, &reasons).await;
    for said in reasons.iter().chain([&sentence]) {
        assert!(!said.contains(secret), "a secret in {said}");
    }
    (why, sentence)
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

/// Runs the binary with the policy's directories (the creds' and the
/// certificates'): its exit status and all it said, `secret` not in it.
fn cli(creds: &Creds, secret: &str, args: &[&str]) -> (Option<i32>, String) {
    let dirs = format!("{}:{}", creds.dir.display(), certs().display());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_streamkeeper"))
        .env_remove("DATABASE_URL")
        .env("STREAMKEEPER_CRED_DIRS", &dirs)
        .args(args)
        .output()
        .expect("runs");
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains(secret), "a secret in {said}");
    (out.status.code(), said)
}

/// A broker whose certificate has expired (`make_test_certs`' expired.pem,
/// for 127.0.0.1 by the test CA): the connection test and `kafka check`
/// say so, in the same words.
#[tokio::test]
async fn an_expired_certificate_is_named_by_the_connection_test_and_kafka_check() {
    const EXPIRED: &str = "The broker's certificate has expired or is not valid yet: renew it, or check this server's clock.";
    let creds = Creds::new("expired");
    let (_expired, port) = tls_broker("expired");
    let bootstrap = format!("127.0.0.1:{port}");
    let (why, said) = explained(&creds.tls(&bootstrap, true), "-----").await;
    assert_eq!(why, Unreachable::TlsExpired);
    assert_eq!(said, EXPIRED);

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
/// settings: every committed offset, every log start and end, so the same
/// lag per partition.
#[tokio::test]
async fn the_fast_read_over_tls_and_scram_reads_what_librdkafka_reads() {
    let (_, password) = login();
    let creds = Creds::new("wire-lag");
    let run = std::process::id();
    for (s, name) in [
        (
            creds.tls(&env("STREAMKEEPER_TEST_TLS_BOOTSTRAP"), true),
            "wire-tls",
        ),
        (creds.scram("SCRAM-SHA-512", &password), "wire-512"),
        (creds.scram("SCRAM-SHA-256", &password), "wire-256"),
    ] {
        exact_lag(&s, name).await;
        let r = read(&s).await.expect("reachable");
        assert!(
            matches!(r.offsets_by, OffsetsBy::Wire(_)),
            "{name}: {:?}",
            r.offsets_by
        );
        let (topic, group) = (
            format!("{name}-orders-{run}"),
            format!("{name}-readers-{run}"),
        );
        let t = r.topics.iter().find(|t| t.name == topic).expect("topic");
        let g = r.groups.iter().find(|g| g.name == group).expect("group");
        let ours: BTreeMap<(String, i32), i64> = g
            .offsets
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), (*v)?)))
            .collect();
        let ends: Vec<(i32, Option<i64>, Option<i64>)> = t
            .partitions
            .iter()
            .map(|p| (p.partition, p.log_start, p.log_end))
            .collect();
        let settings = s.clone();
        let (theirs, their_ends) = tokio::task::spawn_blocking(move || {
            let client: BaseConsumer = settings
                .client_config()
                .expect("config")
                .create()
                .expect("client");
            let mut listed =
                group_offsets::list(&client, std::slice::from_ref(&group), settings.timeout);
            let offsets: BTreeMap<(String, i32), i64> = listed
                .remove(&group)
                .expect("answered")
                .expect("read")
                .into_iter()
                .filter_map(|(k, v)| Some((k, v?)))
                .collect();
            let ends: Vec<(i32, Option<i64>, Option<i64>)> = (0..3)
                .map(|p| {
                    let (lo, hi) = client
                        .fetch_watermarks(&topic, p, settings.timeout)
                        .expect("watermarks");
                    (p, Some(lo), Some(hi))
                })
                .collect();
            (offsets, ends)
        })
        .await
        .expect("join");
        assert_eq!(ours, theirs, "{name}");
        assert_eq!(ends, their_ends, "{name}");
    }
}

/// The fast read's first request to `s`'s first bootstrap server.
async fn wire_refusal(s: &ClusterSettings) -> WireError {
    let security = wire::Security::of(s).expect("security");
    let deadline = tokio::time::Instant::now() + s.timeout;
    wire::versions(&s.bootstrap, &security, deadline)
        .await
        .expect_err("refused")
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
