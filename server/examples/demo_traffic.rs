//! Sample traffic for `scripts/demo`: producers and consumer groups on the
//! local broker, one of each kind a stream owner meets: healthy groups, one
//! falling behind, and one that stops. Runs until killed.
//!
//! `cargo run -p streamkeeper-server --example demo_traffic -- 127.0.0.1:9092`

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::time::Duration;
use tokio::time::{Instant, sleep};

const TOPICS: [(&str, i32, u64); 3] = [("orders", 3, 6), ("payments", 2, 3), ("clicks", 1, 2)];

#[tokio::main]
async fn main() {
    let bootstrap = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9092".into());
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("admin client");
    let topics: Vec<NewTopic> = TOPICS
        .iter()
        .map(|(t, p, _)| NewTopic::new(t, *p, TopicReplication::Fixed(1)))
        .collect();
    // Existing topics are fine: the demo may be restarted on the same broker.
    let _ = admin.create_topics(&topics, &AdminOptions::new()).await;

    for (topic, _, per_second) in TOPICS {
        tokio::spawn(produce(bootstrap.clone(), topic, per_second));
    }
    tokio::spawn(consume(bootstrap.clone(), "billing", "orders", None, None));
    tokio::spawn(consume(
        bootstrap.clone(),
        "clickstream",
        "clicks",
        None,
        None,
    ));
    // Reads 2 messages a second of a topic written at 6: falls behind.
    tokio::spawn(consume(
        bootstrap.clone(),
        "analytics",
        "orders",
        Some(Duration::from_millis(500)),
        None,
    ));
    // Keeps up for 20 s, then its process "dies": the group empties, lag grows.
    tokio::spawn(consume(
        bootstrap.clone(),
        "ledger",
        "payments",
        None,
        Some(Duration::from_secs(20)),
    ));
    println!(
        "demo traffic running on {bootstrap}: orders, payments, clicks; groups billing, clickstream, analytics (slow), ledger (stops after 20 s)"
    );
    std::future::pending::<()>().await;
}

async fn produce(bootstrap: String, topic: &'static str, per_second: u64) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("producer");
    let mut n = 0_u64;
    loop {
        let key = format!("k{}", n % 97);
        let payload = format!("{{\"n\":{n},\"topic\":\"{topic}\"}}");
        if let Err((e, _)) = producer
            .send(
                FutureRecord::to(topic).key(&key).payload(&payload),
                Duration::from_secs(5),
            )
            .await
        {
            eprintln!("produce to {topic}: {e}");
        }
        n += 1;
        sleep(Duration::from_millis(1000 / per_second)).await;
    }
}

async fn consume(
    bootstrap: String,
    group: &'static str,
    topic: &'static str,
    pause: Option<Duration>,
    stop_after: Option<Duration>,
) {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .expect("consumer");
    consumer.subscribe(&[topic]).expect("subscribe");
    let started = Instant::now();
    loop {
        if stop_after.is_some_and(|d| started.elapsed() > d) {
            println!("group {group} stops consuming");
            consumer.unsubscribe();
            return;
        }
        match tokio::time::timeout(Duration::from_secs(1), consumer.recv()).await {
            Ok(Ok(msg)) => {
                if let Err(e) = consumer.commit_message(&msg, CommitMode::Async) {
                    eprintln!("commit for {group}: {e}");
                }
                if let Some(p) = pause {
                    sleep(p).await;
                }
            }
            Ok(Err(e)) => eprintln!("consume for {group}: {e}"),
            Err(_) => {}
        }
    }
}
