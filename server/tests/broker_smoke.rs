//! The Kafka-protocol broker started by scripts/test, through rdkafka:
//! create a topic, produce, consume in a group, commit, and read the
//! committed offsets back without joining the group.

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, StreamConsumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Message, Offset, TopicPartitionList};
use std::time::Duration;

fn bootstrap() -> String {
    std::env::var("STREAMKEEPER_TEST_BOOTSTRAP")
        .expect("STREAMKEEPER_TEST_BOOTSTRAP is not set: run this test through scripts/test, which starts the broker")
}

#[tokio::test]
async fn produce_consume_commit_and_read_offsets() {
    let bootstrap = bootstrap();
    let topic = "smoke-orders";
    let group = "smoke-readers";

    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("admin client");
    let created = admin
        .create_topics(
            &[NewTopic::new(topic, 2, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .expect("create topics");
    for r in created {
        r.expect("topic created");
    }

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("message.timeout.ms", "10000")
        .create()
        .expect("producer");
    for i in 0..10_i32 {
        let key = format!("k{i}");
        let payload = format!("order {i}");
        producer
            .send(
                FutureRecord::to(topic)
                    .partition(i % 2)
                    .key(&key)
                    .payload(&payload),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .expect("delivered");
    }

    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("consumer");
    consumer.subscribe(&[topic]).expect("subscribe");
    let mut seen = 0;
    while seen < 7 {
        let msg = tokio::time::timeout(Duration::from_secs(30), consumer.recv())
            .await
            .expect("a message within 30 s")
            .expect("message");
        assert_eq!(msg.topic(), topic);
        consumer
            .commit_message(&msg, CommitMode::Sync)
            .expect("commit");
        seen += 1;
    }
    drop(consumer);

    // Read the group's committed offsets from outside the group, as the
    // watcher will: no join, no commit.
    let reader: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .expect("reader");
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition(topic, 0);
    tpl.add_partition(topic, 1);
    let committed = reader
        .committed_offsets(tpl, Duration::from_secs(10))
        .expect("committed offsets");
    let total: i64 = committed
        .elements()
        .iter()
        .map(|e| match e.offset() {
            Offset::Offset(o) => o,
            _ => 0,
        })
        .sum();
    assert_eq!(
        total, 7,
        "committed offsets add up to the messages consumed"
    );
    let (low, high) = reader
        .fetch_watermarks(topic, 0, Duration::from_secs(10))
        .expect("watermarks");
    assert_eq!((low, high), (0, 5));
}
