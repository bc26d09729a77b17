//! The read-only reader against the broker started by scripts/test: exact
//! lag per partition after producing N and committing M, groups that never
//! committed, and an unreachable cluster that yields an error, never zeros.

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::time::Duration;
use streamkeeper::lag::offset::{OffsetLag, offset_lag};
use streamkeeper_server::kafka::reader::{self, ReadError};
use streamkeeper_server::kafka::settings::ClusterSettings;

fn bootstrap() -> String {
    std::env::var("STREAMKEEPER_TEST_BOOTSTRAP")
        .expect("STREAMKEEPER_TEST_BOOTSTRAP is not set: run this test through scripts/test, which starts the broker")
}

async fn topic_with(bootstrap: &str, topic: &str, per_partition: &[i32]) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("admin");
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
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("producer");
    for (p, n) in per_partition.iter().enumerate() {
        for i in 0..*n {
            let payload = format!("m{i}");
            producer
                .send(
                    FutureRecord::<(), _>::to(topic)
                        .partition(i32::try_from(p).expect("partition"))
                        .payload(&payload),
                    Duration::from_secs(10),
                )
                .await
                .map_err(|(e, _)| e)
                .expect("delivered");
        }
    }
}

/// Commits `offsets` for `group` as a simple (assign-only) consumer would.
fn commit(bootstrap: &str, group: &str, topic: &str, offsets: &[(i32, i64)]) {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
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

#[tokio::test]
async fn exact_lag_per_partition_read_only() {
    let bootstrap = bootstrap();
    // Unique names: the broker may outlive one run.
    let run = std::process::id();
    let topic = &format!("lag-orders-{run}");
    let group = &format!("lag-readers-{run}");
    topic_with(&bootstrap, topic, &[10, 10, 10]).await;
    commit(&bootstrap, group, topic, &[(0, 4), (1, 7)]);

    let settings = ClusterSettings::plaintext(&bootstrap).expect("settings");
    let read = |s: ClusterSettings| {
        tokio::task::spawn_blocking(move || reader::read(&s, &BTreeMap::new()))
    };
    let r = read(settings.clone())
        .await
        .expect("join")
        .expect("reachable");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let t = r.topics.iter().find(|t| &t.name == topic).expect("topic");
    let ends: Vec<Option<i64>> = t.partitions.iter().map(|p| p.log_end).collect();
    assert_eq!(ends, vec![Some(10), Some(10), Some(10)]);
    assert!(
        t.partitions
            .iter()
            .all(|p| p.log_start == Some(0) && p.leader.is_some())
    );

    let g = r
        .groups
        .iter()
        .find(|g| &g.name == group)
        .expect("group listed");
    assert_eq!(g.members, 0);
    let lag = |p: i32| {
        let committed = g.offsets.get(&(topic.clone(), p)).copied().flatten();
        offset_lag(committed, 0, 10)
    };
    assert_eq!(lag(0), OffsetLag::Behind { messages: 6 });
    assert_eq!(lag(1), OffsetLag::Behind { messages: 3 });
    assert_eq!(
        lag(2),
        OffsetLag::NoCommit,
        "never committed is not 10 behind"
    );

    // Reading changed nothing: same offsets, and the group has no members.
    let again = read(settings).await.expect("join").expect("reachable");
    let g2 = again
        .groups
        .iter()
        .find(|g| &g.name == group)
        .expect("group");
    assert_eq!(g2.offsets, g.offsets);
    assert_eq!(g2.members, 0);
}

#[tokio::test]
async fn an_unreachable_cluster_is_an_error_not_zeros() {
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let mut settings = ClusterSettings::plaintext(&format!("127.0.0.1:{port}")).expect("settings");
    settings.timeout = Duration::from_secs(2);
    let r = tokio::task::spawn_blocking(move || reader::read(&settings, &BTreeMap::new()))
        .await
        .expect("join");
    assert!(matches!(r, Err(ReadError::Unreachable(_))), "{r:?}");
}
