//! A consumer group that read part of a topic and stopped, for the
//! end-to-end tests: creates TOPIC, writes PRODUCED messages, commits
//! COMMITTED for GROUP, and exits.
//!
//! `cargo run -p streamkeeper-server --example stopped_group -- BOOTSTRAP TOPIC GROUP PRODUCED COMMITTED`

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use std::time::Duration;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bootstrap, topic, group, produced, committed] = args.as_slice() else {
        eprintln!("usage: stopped_group BOOTSTRAP TOPIC GROUP PRODUCED COMMITTED");
        std::process::exit(2);
    };
    let produced: i64 = produced.parse().expect("PRODUCED is a number");
    let committed: i64 = committed.parse().expect("COMMITTED is a number");
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("admin");
    for r in admin
        .create_topics(
            &[NewTopic::new(topic, 1, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .expect("create topic")
    {
        r.expect("topic created");
    }
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("producer");
    for i in 0..produced {
        let payload = format!("m{i}");
        producer
            .send(
                FutureRecord::<(), _>::to(topic)
                    .partition(0)
                    .payload(&payload),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .expect("delivered");
    }
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Offset(committed))
        .expect("tpl");
    consumer.assign(&tpl).expect("assign");
    consumer.commit(&tpl, CommitMode::Sync).expect("commit");
    println!("{group} committed {committed} of {produced} on {topic}");
}
