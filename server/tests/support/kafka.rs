//! Kafka fixtures for the broker tests: topics with messages, and groups
//! with committed offsets, made with rdkafka against the broker scripts/test
//! starts; a producer and a consumer group member running until told to
//! stop; and brokers of a test's own, to stop and hang.

use chrono::{DateTime, Utc};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub fn bootstrap() -> String {
    std::env::var("STREAMKEEPER_TEST_BOOTSTRAP").expect(
        "STREAMKEEPER_TEST_BOOTSTRAP is not set: run this test through scripts/test, which starts the broker",
    )
}

/// A plaintext client's configuration.
pub fn plain(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap);
    c
}

/// Creates `topic` with one partition per entry of `per_partition`, and
/// writes that many messages to each.
pub async fn topic_with(bootstrap: &str, topic: &str, per_partition: &[i32]) {
    topic_at(&plain(bootstrap), topic, per_partition).await;
}

/// [`topic_with`] through a client configured as `conf` (TLS, SASL).
pub async fn topic_at(conf: &ClientConfig, topic: &str, per_partition: &[i32]) {
    let admin: AdminClient<DefaultClientContext> = conf.create().expect("admin");
    let partitions = i32::try_from(per_partition.len()).expect("few partitions");
    for r in admin
        .create_topics(
            &[NewTopic::new(topic, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .expect("create")
    {
        r.expect("created");
    }
    for (p, n) in per_partition.iter().enumerate() {
        produce_at(conf, topic, i32::try_from(p).expect("partition"), *n).await;
    }
}

/// Writes `n` messages to one partition.
pub async fn produce(bootstrap: &str, topic: &str, partition: i32, n: i32) {
    produce_at(&plain(bootstrap), topic, partition, n).await;
}

pub async fn produce_at(conf: &ClientConfig, topic: &str, partition: i32, n: i32) {
    let producer: FutureProducer = conf.create().expect("producer");
    for i in 0..n {
        let payload = format!("m{i}");
        producer
            .send(
                FutureRecord::<(), _>::to(topic)
                    .partition(partition)
                    .payload(&payload),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .expect("delivered");
    }
}

/// Commits `offsets` for `group` as a simple (assign-only) consumer would.
pub fn commit(bootstrap: &str, group: &str, topic: &str, offsets: &[(i32, i64)]) {
    commit_at(&plain(bootstrap), group, topic, offsets);
}

pub fn commit_at(conf: &ClientConfig, group: &str, topic: &str, offsets: &[(i32, i64)]) {
    let c: BaseConsumer = conf
        .clone()
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for (p, o) in offsets {
        tpl.add_partition_offset(topic, *p, Offset::Offset(*o))
            .expect("tpl");
    }
    c.assign(&tpl).expect("assign");
    c.commit(&tpl, CommitMode::Sync).expect("commit");
}

/// A nisshi broker of the test's own (scripts/test installs nisshi), on
/// 127.0.0.1:`port`; killed on drop.
pub struct Broker {
    child: Child,
}

impl Broker {
    pub fn start(port: u16) -> Self {
        Self::start_with(port, &[])
    }

    /// With more arguments: `--cert C --key K` for a TLS-only listener.
    pub fn start_with(port: u16, extra: &[&str]) -> Self {
        let url = format!("tcp://127.0.0.1:{port}");
        let child = Command::new("nisshi")
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &url,
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nisshi on PATH (scripts/test installs it)");
        // Owned at once, so a broker that never answers is killed on drop.
        let broker = Self { child };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return broker;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the broker did not start on {port}");
    }

    /// Sends a signal: `-STOP` hangs the broker (connections stay open,
    /// nothing answers), `-CONT` resumes it.
    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill {sig}");
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.signal("-CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes a message to `topic` every 100 ms until `stop`.
pub fn producing(bootstrap: &str, topic: &str, stop: Arc<AtomicBool>) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("producer");
    let topic = topic.to_owned();
    tokio::spawn(async move {
        while !stop.load(Ordering::SeqCst) {
            let _ = producer
                .send(
                    FutureRecord::<(), _>::to(&topic).payload("m"),
                    Duration::from_secs(5),
                )
                .await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
}

/// A group member reading `topic` and committing what it read after each
/// poll, until `stop`: then it leaves, and says when it stopped.
pub fn consuming(
    bootstrap: &str,
    group: &str,
    topic: &str,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<DateTime<Utc>> {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("consumer");
    c.subscribe(&[topic]).expect("subscribe");
    std::thread::spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            if let Some(Ok(_)) = c.poll(Duration::from_millis(100)) {
                while let Some(Ok(_)) = c.poll(Duration::ZERO) {}
                let _ = c.commit_consumer_state(CommitMode::Sync);
            }
        }
        let stopped = Utc::now();
        c.unsubscribe();
        drop(c);
        stopped
    })
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}
