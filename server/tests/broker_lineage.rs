//! The OpenLineage Kafka transport on the real broker: events produced by
//! openlineage-python 1.54's own Kafka transport (confluent-kafka) are
//! read by `streamkeeper serve` as the group `streamkeeper-lineage`; the
//! server is killed (-9) mid-stream and started again, and every event is
//! stored exactly once; records that are not events are noted and skipped
//! without holding up their partition; a replay of the same events stores
//! nothing. On a plaintext nisshi broker of its own (scripts/test installs
//! it), and again on the TLS + SCRAM broker scripts/test starts
//! (support::secure), the producer and the server signing in there. Needs
//! `ensure_openlineage` (SK_OPENLINEAGE_PYTHON).

mod support;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use sqlx::PgPool;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::kafka::{Broker, free_port};
use support::secure::{Creds, Reach};

const PARTITIONS: i32 = 3;

fn url_of(pool: &PgPool) -> String {
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL for tests");
    let db = pool
        .connect_options()
        .get_database()
        .unwrap_or("postgres")
        .to_string();
    let mut u = url::Url::parse(&base).expect("DATABASE_URL");
    u.set_path(&db);
    u.to_string()
}

/// A `streamkeeper serve` process; killed on drop.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Server {
    /// With `cred_dirs` as its credential directories (STREAMKEEPER_CRED_DIRS;
    /// empty: the default).
    async fn start(pool: &PgPool, name: &str, cred_dirs: &str) -> Self {
        let port = free_port();
        let log = std::env::temp_dir().join(format!(
            "streamkeeper-lineage-kafka-{}-{name}.log",
            std::process::id()
        ));
        let out = std::fs::File::create(&log).expect("log file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_streamkeeper"));
        command.arg("serve").env_clear();
        if !cred_dirs.is_empty() {
            command.env("STREAMKEEPER_CRED_DIRS", cred_dirs);
        }
        let child = command
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", url_of(pool))
            .env("STREAMKEEPER_BIND", format!("127.0.0.1:{port}"))
            .env("STREAMKEEPER_LOG", "info,sqlx=warn")
            // A debug build carries no site; these tests load no wasm.
            .env("STREAMKEEPER_SITE_ROOT", "target/site")
            .stdout(Stdio::null())
            .stderr(out)
            .spawn()
            .expect("spawn the server");
        let server = Self { child, log };
        let end = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < end,
                "the server did not start: {}",
                server.output()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    fn kill(&mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("wait");
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn openlineage_python() -> String {
    std::env::var("SK_OPENLINEAGE_PYTHON").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{home}/.cache/streamkeeper/openlineage-1.54.0/bin/python")
    })
}

/// Emits events `first..first + count` to `topic` with the real client's
/// Kafka transport, `pause` apart, configured as `reach` says.
async fn emit(reach: &Reach, topic: &str, first: u32, count: u32, pause: f32) {
    let python = openlineage_python();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/openlineage_kafka.py"
    );
    let config: serde_json::Map<String, serde_json::Value> = reach
        .producer
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone().into()))
        .collect();
    let config = serde_json::Value::Object(config).to_string();
    let args = [
        script.to_string(),
        reach.bootstrap.clone(),
        topic.to_string(),
        count.to_string(),
        first.to_string(),
        pause.to_string(),
    ];
    let out = tokio::task::spawn_blocking(move || {
        Command::new(&python)
            .args(args)
            .env("SK_OL_KAFKA_CONFIG", config)
            .output()
            .unwrap_or_else(|e| {
            panic!("{python} (openlineage-python 1.54 with confluent-kafka; scripts/lib.sh ensure_openlineage): {e}")
        })
    })
    .await
    .expect("client");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        usize::try_from(count).expect("count")
    );
}

async fn events(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM lineage_events")
        .fetch_one(pool)
        .await
        .expect("count")
}

/// Whether the group has committed every partition of `topic` up to its end.
fn all_committed(reach: &Reach, topic: &str) -> bool {
    let c: BaseConsumer = reach
        .fixtures()
        .set("group.id", "streamkeeper-lineage")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        tpl.add_partition(topic, p);
    }
    let Ok(committed) = c.committed_offsets(tpl, Duration::from_secs(5)) else {
        return false;
    };
    (0..PARTITIONS).all(|p| {
        let Ok((_, high)) = c.fetch_watermarks(topic, p, Duration::from_secs(5)) else {
            return false;
        };
        let at = committed
            .find_partition(topic, p)
            .map(|e| e.offset())
            .unwrap_or(Offset::Invalid);
        match at {
            Offset::Offset(o) => o == high,
            _ => high == 0,
        }
    })
}

async fn wait_for(what: &str, server: &Server, mut done: impl AsyncFnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !done().await {
        assert!(
            Instant::now() < end,
            "timed out waiting for {what}: {}",
            server.output()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn kafka_transport_events_are_stored_exactly_once_across_a_kill(pool: PgPool) {
    let port = free_port();
    let _broker = Broker::start(port);
    exactly_once_across_a_kill(&pool, &Reach::plaintext(&format!("127.0.0.1:{port}"))).await;
}

/// The same on the TLS + SCRAM-SHA-512 broker: the producer and the
/// server sign in there, the server with the references it reads itself.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn on_the_scram_broker_events_are_stored_exactly_once_across_a_kill(pool: PgPool) {
    let creds = Creds::new("lineage");
    exactly_once_across_a_kill(&pool, &Reach::scram(&creds)).await;
}

/// The scenario on `reach`'s broker, its topic named for this run (the
/// secured broker is shared by the tests of a run).
async fn exactly_once_across_a_kill(pool: &PgPool, reach: &Reach) {
    let pool = pool.clone();
    let topic = &format!("openlineage.events-{}", std::process::id());
    let admin: AdminClient<DefaultClientContext> = reach.fixtures().create().expect("admin");
    for r in admin
        .create_topics(
            &[NewTopic::new(topic, PARTITIONS, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .expect("create")
    {
        r.expect("created");
    }
    let cluster = reach.cluster(&pool, "local", 60).await;
    // Opt-in, as `cluster apply` sets it from the clusters file.
    let clusters = streamkeeper_server::watch::ClusterService::new(
        pool.clone(),
        support::outbound().credentials,
    );
    let who = streamkeeper_server::platform::cli::cli_principal();
    let bad = clusters
        .set_lineage_topics(
            &who,
            "test",
            vec![("local".into(), Some("a b".into()))],
            false,
        )
        .await
        .expect_err("not a topic name");
    assert!(
        bad.to_string().contains("is not a Kafka topic name"),
        "{bad}"
    );
    let set = clusters
        .set_lineage_topics(
            &who,
            "test",
            vec![("local".into(), Some(topic.clone()))],
            false,
        )
        .await
        .expect("set");
    assert_eq!(set, ["local"]);

    let mut server = Server::start(&pool, "first", &reach.cred_dirs).await;
    // Once it reads (it has joined the group), it is killed while the
    // producer is still sending.
    emit(reach, topic, 0, 5, 0.0).await;
    wait_for("the first events", &server, async || {
        events(&pool).await == 5
    })
    .await;
    let sending = emit(reach, topic, 5, 145, 0.01);
    let killed = async {
        wait_for("more events", &server, async || events(&pool).await >= 8).await;
        server.kill();
        events(&pool).await
    };
    let ((), before) = tokio::join!(sending, killed);
    assert!(before < 150, "killed mid-stream ({before} of 150 stored)");

    // While it is down: records that are not events, and more events.
    let producer: FutureProducer = reach.fixtures().create().expect("producer");
    for (partition, payload) in [(0, &b"{\"eventTime\":"[..]), (1, &b"[1, 2]"[..])] {
        producer
            .send(
                FutureRecord::<(), _>::to(topic)
                    .partition(partition)
                    .payload(payload),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .expect("delivered");
    }
    emit(reach, topic, 150, 20, 0.0).await;

    let server = Server::start(&pool, "again", &reach.cred_dirs).await;
    wait_for("every record committed", &server, async || {
        events(&pool).await == 170 && all_committed(reach, topic)
    })
    .await;
    // Exactly once: 170 events, none twice, nothing lost.
    assert_eq!(events(&pool).await, 170);
    let (senders, sources): (Vec<String>, Vec<String>) = sqlx::query_as(
        "SELECT array_agg(DISTINCT sender), array_agg(DISTINCT source) FROM lineage_events",
    )
    .fetch_one(&pool)
    .await
    .expect("senders");
    assert_eq!(senders, ["lineage-kafka"]);
    assert_eq!(sources, [format!("kafka:{cluster}")]);
    // The two bad records were noted and passed over; the partitions went on.
    let rejected: Vec<(i32, String)> =
        sqlx::query_as("SELECT partition, reason FROM lineage_rejected ORDER BY partition")
            .fetch_all(&pool)
            .await
            .expect("rejected");
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert!(rejected[0].1.contains("not valid JSON"), "{rejected:?}");
    // Folded like HTTP ingest: the topic feeds the streaming jobs (once
    // the fold has caught up, as every read waits for).
    streamkeeper_server::lineage::LineageService::new(
        pool.clone(),
        streamkeeper_server::lineage::IngestLimits::for_body_limit(0),
    )
    .fold()
    .catch_up()
    .await
    .expect("fold");
    let readers: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM lineage_edges e
         JOIN lineage_nodes a ON a.id = e.src JOIN lineage_nodes b ON b.id = e.dst
         WHERE a.name = 'orders' AND a.cluster = $1 AND b.kind = 'job'",
    )
    .bind(cluster.to_string())
    .fetch_one(&pool)
    .await
    .expect("edges");
    assert_eq!(readers, 7);

    // A producer's replay of events already stored stores nothing.
    emit(reach, topic, 0, 10, 0.0).await;
    wait_for("the replay committed", &server, async || {
        all_committed(reach, topic)
    })
    .await;
    assert_eq!(events(&pool).await, 170);
    let audited: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = 'cluster.lineage_topic'")
            .fetch_one(&pool)
            .await
            .expect("audit");
    assert_eq!(audited, 1);
}
