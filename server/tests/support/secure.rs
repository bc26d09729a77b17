//! The secured brokers scripts/test starts, for the broker tests that
//! run on them: one whose listener speaks TLS only
//! (STREAMKEEPER_TEST_TLS_BOOTSTRAP), one that also takes SCRAM sign-ins
//! only (STREAMKEEPER_TEST_SCRAM_BOOTSTRAP, its login in
//! STREAMKEEPER_TEST_SCRAM_LOGIN as user:password) and one that requires a
//! client certificate (STREAMKEEPER_TEST_MTLS_BOOTSTRAP: stunnel in front
//! of a plaintext nisshi), all with certificates of the test CA in
//! STREAMKEEPER_TEST_CERTS. Credential files, cluster settings and the
//! reads and refusals the tests compare.

use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper::watch::lag::offset::{OffsetLag, offset_lag};
use streamkeeper::watch::reach::Unreachable;
use streamkeeper_server::clients::kafka::reader::OffsetsBy;
use streamkeeper_server::clients::kafka::settings::{
    ClientCert, ClusterSettings, Protocol, SecretRef,
};
use streamkeeper_server::clients::kafka::wire::{self, WireError};
use streamkeeper_server::clients::kafka::{group_offsets, probe, reader};

use super::kafka::{commit_at, topic_at};

pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run this test through scripts/test, which starts the secured brokers")
    })
}

pub fn certs() -> PathBuf {
    PathBuf::from(env("STREAMKEEPER_TEST_CERTS"))
}

pub fn login() -> (String, String) {
    let l = env("STREAMKEEPER_TEST_SCRAM_LOGIN");
    let (u, p) = l.split_once(':').expect("user:password");
    (u.into(), p.into())
}

/// A directory of credential files, the only one the policy allows (with
/// the certificates' directory, for the CA bundle).
pub struct Creds {
    pub dir: PathBuf,
    pub policy: CredentialPolicy,
}

impl Creds {
    pub fn new(name: &str) -> Self {
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
    pub fn file(&self, name: &str, value: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, format!("{value}\n")).expect("write");
        format!("file:{}", path.display())
    }

    pub fn secret(&self, reference: &str) -> SecretRef {
        SecretRef::checked(reference, &self.policy).expect("allowed")
    }

    pub fn ca(&self) -> SecretRef {
        self.secret(&format!("file:{}", certs().join("ca.pem").display()))
    }

    /// TLS to `bootstrap`, with the test CA unless `ca` is false.
    pub fn tls(&self, bootstrap: &str, ca: bool) -> ClusterSettings {
        let mut s = ClusterSettings::new(bootstrap, Protocol::Ssl, None, None, None, false)
            .expect("settings");
        s.ca = ca.then(|| self.ca());
        s.timeout = Duration::from_secs(3);
        s
    }

    /// SASL_SSL with `mechanism`, the user's name and `password` in files.
    pub fn scram(&self, mechanism: &str, password: &str) -> ClusterSettings {
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

    /// TLS to the mutual-TLS broker (STREAMKEEPER_TEST_MTLS_BOOTSTRAP)
    /// with the test CA and the client certificate `name`
    /// (`make_test_certs`: client, signed by the test CA; rogue, by
    /// another), or none.
    pub fn mtls(&self, name: Option<&str>) -> ClusterSettings {
        let mut s = self.tls(&env("STREAMKEEPER_TEST_MTLS_BOOTSTRAP"), true);
        s.client_cert = name.map(|n| ClientCert {
            cert: self.secret(&format!(
                "file:{}",
                certs().join(format!("{n}.pem")).display()
            )),
            key: self.secret(&format!(
                "file:{}",
                certs().join(format!("{n}.key")).display()
            )),
        });
        s
    }
}

impl Drop for Creds {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// How a test's servers and fixtures reach a broker: the cluster's
/// connection (its credentials by reference), the directories those
/// references may name (STREAMKEEPER_CRED_DIRS; empty: the default), and
/// the librdkafka settings a producer of the test's own needs beyond the
/// bootstrap (the same keys for confluent-kafka).
pub struct Reach {
    pub bootstrap: String,
    pub protocol: &'static str,
    pub mechanism: Option<&'static str>,
    pub username_ref: Option<String>,
    pub password_ref: Option<String>,
    pub ca_ref: Option<String>,
    pub cred_dirs: String,
    pub producer: Vec<(&'static str, String)>,
}

impl Reach {
    pub fn plaintext(bootstrap: &str) -> Self {
        Reach {
            bootstrap: bootstrap.to_string(),
            protocol: "PLAINTEXT",
            mechanism: None,
            username_ref: None,
            password_ref: None,
            ca_ref: None,
            cred_dirs: String::new(),
            producer: Vec::new(),
        }
    }

    /// The TLS + SCRAM-SHA-512 broker scripts/test starts, the login in
    /// `creds`' files and the test CA's bundle.
    pub fn scram(creds: &Creds) -> Self {
        let (user, password) = login();
        let ca = certs().join("ca.pem").display().to_string();
        Reach {
            bootstrap: env("STREAMKEEPER_TEST_SCRAM_BOOTSTRAP"),
            protocol: "SASL_SSL",
            mechanism: Some("SCRAM-SHA-512"),
            username_ref: Some(creds.file("user", &user)),
            password_ref: Some(creds.file("password", &password)),
            ca_ref: Some(format!("file:{ca}")),
            cred_dirs: format!("{}:{}", creds.dir.display(), certs().display()),
            producer: vec![
                ("security.protocol", "SASL_SSL".into()),
                ("sasl.mechanism", "SCRAM-SHA-512".into()),
                ("sasl.username", user),
                ("sasl.password", password),
                ("ssl.ca.location", ca),
            ],
        }
    }

    /// A client of the test's own (topics, messages, commits).
    pub fn fixtures(&self) -> ClientConfig {
        let mut c = super::kafka::plain(&self.bootstrap);
        for (k, v) in &self.producer {
            c.set(*k, v);
        }
        c
    }

    /// Watches a cluster on this broker, named `name`, every `interval_s`.
    pub async fn cluster(&self, pool: &sqlx::PgPool, name: &str, interval_s: i32) -> i64 {
        sqlx::query_scalar(
            "INSERT INTO clusters (name, bootstrap, security_protocol, sasl_mechanism,
                 username_ref, password_ref, ca_ref, interval_s)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(name)
        .bind(&self.bootstrap)
        .bind(self.protocol)
        .bind(self.mechanism)
        .bind(&self.username_ref)
        .bind(&self.password_ref)
        .bind(&self.ca_ref)
        .bind(interval_s)
        .fetch_one(pool)
        .await
        .expect("cluster")
    }
}

/// Runs the binary with the policy's directories (the creds' and the
/// certificates'): its exit status and all it said, `secret` not in it.
pub fn cli(creds: &Creds, secret: &str, args: &[&str]) -> (Option<i32>, String) {
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

/// A producer's and committer's configuration for the secured brokers.
pub fn client(s: &ClusterSettings) -> ClientConfig {
    let mut c = s.client_config().expect("config");
    // The reader's read-only settings would stop the fixtures writing.
    c.remove("enable.auto.offset.store");
    c.remove("allow.auto.create.topics");
    c
}

pub async fn read(s: &ClusterSettings) -> Result<reader::Reading, reader::ReadError> {
    let s = s.clone();
    tokio::task::spawn_blocking(move || reader::read(&s, &BTreeMap::new(), &BTreeMap::new()))
        .await
        .expect("join")
}

/// Produces 10 to each of three partitions, commits 4 and 7, and reads
/// back lag 6, 3 and "no commit" through `s`.
pub async fn exact_lag(s: &ClusterSettings, name: &str) {
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

/// The connection test's explanation of a failed attempt: the cause and
/// its sentence, and everything said, none of it holding `secret`.
pub async fn explained(s: &ClusterSettings, secret: &str) -> (Unreachable, String) {
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

/// The fast read's first request to `s`'s first bootstrap server.
pub async fn wire_refusal(s: &ClusterSettings) -> WireError {
    let security = wire::Security::of(s).expect("security");
    let deadline = tokio::time::Instant::now() + s.timeout;
    wire::versions(&s.bootstrap, &security, deadline)
        .await
        .expect_err("refused")
}

/// Through `s`: the exact lag (as [`exact_lag`]), read by the fast read
/// (asserted: not the fallback), and what it read is what librdkafka reads
/// on the same client settings: every committed offset, every log start
/// and end, so the same lag per partition.
pub async fn the_fast_read_reads_what_librdkafka_reads(s: &ClusterSettings, name: &str) {
    let run = std::process::id();
    exact_lag(s, name).await;
    let r = read(s).await.expect("reachable");
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
