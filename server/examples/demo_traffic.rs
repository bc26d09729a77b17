//! Sample traffic for `scripts/demo`: producers and consumer groups on the
//! local broker, one of each kind a stream owner meets: healthy groups, one
//! falling behind, and one that stops. Runs until killed.
//!
//! `cargo run -p streamkeeper-server --example demo_traffic -- 127.0.0.1:9092`
//!
//! With `--sasl-ssl USER PASSWORD_FILE CA_FILE`, the secured broker's
//! traffic instead (TLS with SCRAM-SHA-512 sign-ins): one topic,
//! `audit-events`, and one group keeping up with it, `audit-archiver`.

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::time::Duration;
use tokio::time::{Instant, sleep};

const TOPICS: [(&str, i32, u64); 3] = [("orders", 3, 6), ("payments", 2, 3), ("clicks", 1, 2)];
const SECURE_TOPICS: [(&str, i32, u64); 1] = [("audit-events", 2, 2)];

/// How to reach the broker: its address and, for the secured one, the
/// settings every client takes.
#[derive(Clone)]
struct Broker {
    bootstrap: String,
    settings: Vec<(&'static str, String)>,
}

impl Broker {
    fn from_args() -> Self {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let bootstrap = args
            .first()
            .cloned()
            .unwrap_or_else(|| "127.0.0.1:9092".into());
        let settings = match args.get(1..5) {
            Some([flag, user, password_file, ca]) if flag == "--sasl-ssl" => {
                let password = std::fs::read_to_string(password_file).expect("password file");
                vec![
                    ("security.protocol", "SASL_SSL".into()),
                    ("sasl.mechanism", "SCRAM-SHA-512".into()),
                    ("sasl.username", user.clone()),
                    ("sasl.password", password.trim_end().to_owned()),
                    ("ssl.ca.location", ca.clone()),
                ]
            }
            _ => Vec::new(),
        };
        Broker {
            bootstrap,
            settings,
        }
    }

    fn config(&self) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.bootstrap);
        for (k, v) in &self.settings {
            c.set(*k, v);
        }
        c
    }

    fn secured(&self) -> bool {
        !self.settings.is_empty()
    }
}

#[tokio::main]
async fn main() {
    let broker = Broker::from_args();
    let admin: AdminClient<DefaultClientContext> = broker.config().create().expect("admin client");
    let table: &[(&str, i32, u64)] = if broker.secured() {
        &SECURE_TOPICS
    } else {
        &TOPICS
    };
    let topics: Vec<NewTopic> = table
        .iter()
        .map(|(t, p, _)| NewTopic::new(t, *p, TopicReplication::Fixed(1)))
        .collect();
    // Existing topics are fine: the demo may be restarted on the same broker.
    let _ = admin.create_topics(&topics, &AdminOptions::new()).await;

    for (topic, _, per_second) in table {
        tokio::spawn(produce(broker.clone(), topic, *per_second));
    }
    if broker.secured() {
        tokio::spawn(consume(
            broker.clone(),
            "audit-archiver",
            "audit-events",
            None,
            None,
        ));
        println!(
            "demo traffic running on {} (TLS + SCRAM): audit-events; group audit-archiver",
            broker.bootstrap
        );
        std::future::pending::<()>().await;
    }
    tokio::spawn(consume(broker.clone(), "billing", "orders", None, None));
    tokio::spawn(consume(broker.clone(), "clickstream", "clicks", None, None));
    // Reads 2 messages a second of a topic written at 6: falls behind.
    tokio::spawn(consume(
        broker.clone(),
        "analytics",
        "orders",
        Some(Duration::from_millis(500)),
        None,
    ));
    // Keeps up for 20 s, then its process "dies": the group empties, lag grows.
    tokio::spawn(consume(
        broker.clone(),
        "ledger",
        "payments",
        None,
        Some(Duration::from_secs(20)),
    ));
    println!(
        "demo traffic running on {}: orders, payments, clicks; groups billing, clickstream, analytics (slow), ledger (stops after 20 s)",
        broker.bootstrap
    );
    std::future::pending::<()>().await;
}

async fn produce(broker: Broker, topic: &'static str, per_second: u64) {
    let producer: FutureProducer = broker.config().create().expect("producer");
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
    broker: Broker,
    group: &'static str,
    topic: &'static str,
    pause: Option<Duration>,
    stop_after: Option<Duration>,
) {
    let consumer: StreamConsumer = broker
        .config()
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
