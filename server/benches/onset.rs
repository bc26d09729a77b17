//! From the first bad sample of a consumer that stops to the webhook
//! delivered to its owner, on the local broker, with the real sampler
//! routine, evaluation and notifier.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! BP=$(start_broker 19092 /tmp/bench-broker.log)
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//! STREAMKEEPER_BENCH_BOOTSTRAP=127.0.0.1:19092 \
//!   cargo bench -p streamkeeper-server --bench onset -- 6 15
//! ```
//! Arguments: trials (consumer groups, default 6) and the sampling
//! interval in seconds (default 15). Each trial is a group reading its own
//! topic, written to 5 times a second, which stops (leaves its group) at a
//! different moment within one interval, so the figures cover where in the
//! interval trouble starts. Works in a database of its own, dropped at the
//! end; the broker keeps the bench's topics until it stops.

#[path = "support/db.rs"]
mod bench_db;

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use bench_db::BenchDb;
use chrono::{DateTime, Utc};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Deliveries = Arc<Mutex<Vec<(DateTime<Utc>, String)>>>;

#[tokio::main]
async fn main() {
    let (Ok(base), Ok(bootstrap)) = (
        std::env::var("DATABASE_URL"),
        std::env::var("STREAMKEEPER_BENCH_BOOTSTRAP"),
    ) else {
        eprintln!(
            "set DATABASE_URL and STREAMKEEPER_BENCH_BOOTSTRAP (see the comment at the top of benches/onset.rs)"
        );
        std::process::exit(2);
    };
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let trials = usize::try_from(args.first().copied().unwrap_or(6)).unwrap_or(6);
    let interval = args.get(1).copied().unwrap_or(15).clamp(5, 3600);
    let run = std::process::id();

    let db = BenchDb::create(&base, "onset", 8).await;
    let pool = db.pool.clone();

    // The owner's webhook: records when each delivery arrives.
    let deliveries: Deliveries = Arc::default();
    let hook = Router::new()
        .route(
            "/hook",
            post(|State(d): State<Deliveries>, body: String| async move {
                d.lock().expect("lock").push((Utc::now(), body));
                "ok"
            }),
        )
        .with_state(deliveries.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let hook_url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, hook).await });
    sqlx::query("INSERT INTO teams (name, webhook_url) VALUES ('platform', $1)")
        .bind(&hook_url)
        .execute(&pool)
        .await
        .expect("team");
    sqlx::query(
        "INSERT INTO settings (key, value) SELECT 'platform_team_id', id::text FROM teams WHERE name = 'platform'",
    )
    .execute(&pool)
    .await
    .expect("platform team");

    // Topics, a producer, and one live consumer per trial.
    let topics: Vec<String> = (0..trials).map(|i| format!("onset-{run}-{i}")).collect();
    let kafka: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("admin");
    let new: Vec<NewTopic> = topics
        .iter()
        .map(|t| NewTopic::new(t, 1, TopicReplication::Fixed(1)))
        .collect();
    for r in kafka
        .create_topics(&new, &AdminOptions::new())
        .await
        .expect("topics")
    {
        r.expect("topic created");
    }
    let producing = Arc::new(AtomicBool::new(true));
    let producer_thread = {
        let (topics, producing, bootstrap) = (topics.clone(), producing.clone(), bootstrap.clone());
        std::thread::spawn(move || {
            let p: BaseProducer = ClientConfig::new()
                .set("bootstrap.servers", &bootstrap)
                .set("linger.ms", "0")
                .create()
                .expect("producer");
            while producing.load(Ordering::Relaxed) {
                for t in &topics {
                    let _ = p.send(BaseRecord::<(), _>::to(t).payload("m"));
                }
                p.poll(Duration::from_millis(200));
            }
            let _ = p.flush(Duration::from_secs(5));
        })
    };
    let stops: Vec<Arc<AtomicBool>> = (0..trials)
        .map(|_| Arc::new(AtomicBool::new(false)))
        .collect();
    let mut consumers = Vec::new();
    for (i, t) in topics.iter().enumerate() {
        let (t, stop, bootstrap) = (t.clone(), stops[i].clone(), bootstrap.clone());
        let group = format!("onset-{run}-group-{i}");
        consumers.push(std::thread::spawn(move || {
            let c: BaseConsumer = ClientConfig::new()
                .set("bootstrap.servers", &bootstrap)
                .set("group.id", &group)
                .set("auto.offset.reset", "earliest")
                .set("auto.commit.interval.ms", "1000")
                .create()
                .expect("consumer");
            c.subscribe(&[&t]).expect("subscribe");
            while !stop.load(Ordering::Relaxed) {
                let _ = c.poll(Duration::from_millis(100));
            }
            let stopped = Utc::now();
            // Dropping the consumer commits, then leaves the group.
            drop(c);
            stopped
        }));
    }

    sqlx::query(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s) VALUES ('local', $1, 'PLAINTEXT', $2)",
    )
    .bind(&bootstrap)
    .bind(i32::try_from(interval).unwrap_or(15))
    .execute(&pool)
    .await
    .expect("cluster");
    // The sampler and the webhooks, as `serve` runs them.
    let mut runner = streamkeeper_server::platform::routine::Runner::new(pool.clone());
    runner.add(std::sync::Arc::new(
        streamkeeper_server::flags::routine::Deliveries::new(
            pool.clone(),
            streamkeeper::platform::egress::EgressPolicy::LOOPBACK,
        )
        .expect("HTTP client"),
    ));
    runner.add(std::sync::Arc::new(
        streamkeeper_server::watch::routine::Sampler::new(pool.clone(), Default::default()),
    ));

    // Warm up: several passes of healthy consumers, then stop one trial
    // after another, spread over one interval.
    println!("warming up for {} s…", interval * 5);
    tokio::time::sleep(Duration::from_secs(interval * 5)).await;
    let spread = Duration::from_millis(interval * 1000 / trials.max(1) as u64);
    for s in &stops {
        s.store(true, Ordering::Relaxed);
        tokio::time::sleep(spread).await;
    }
    let stopped: Vec<DateTime<Utc>> = consumers
        .into_iter()
        .map(|h| h.join().expect("consumer thread"))
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(interval * 12);
    while deliveries.lock().expect("lock").len() < trials && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    producing.store(false, Ordering::Relaxed);
    producer_thread.join().expect("producer thread");

    let mut to_delivered = Vec::new();
    for (i, stop_at) in stopped.iter().enumerate() {
        let group = format!("onset-{run}-group-{i}");
        let flag: Option<(DateTime<Utc>, DateTime<Utc>, String)> = sqlx::query_as(
            "SELECT onset_at, raised_at, kind FROM flags WHERE subject_kind = 'group' AND subject = $1
             ORDER BY id LIMIT 1",
        )
        .bind(&group)
        .fetch_optional(&pool)
        .await
        .expect("flag");
        let delivered = deliveries
            .lock()
            .expect("lock")
            .iter()
            .find(|(_, body)| body.contains(&group))
            .map(|(at, _)| *at);
        match (flag, delivered) {
            (Some((onset, raised, kind)), Some(at)) => {
                let secs =
                    |a: DateTime<Utc>, b: DateTime<Utc>| (b - a).num_milliseconds() as f64 / 1e3;
                println!(
                    "trial {i}: {kind}; stop → onset {:.1} s, onset → raised {:.1} s, onset → delivered {:.1} s (stop → delivered {:.1} s)",
                    secs(*stop_at, onset),
                    secs(onset, raised),
                    secs(onset, at),
                    secs(*stop_at, at)
                );
                to_delivered.push(secs(onset, at));
            }
            (flag, delivered) => println!(
                "trial {i}: not delivered within {} s (flag {:?}, delivery {:?})",
                interval * 12,
                flag.map(|f| f.2),
                delivered
            ),
        }
    }
    to_delivered.sort_by(f64::total_cmp);
    if let Some(m) = to_delivered.get(to_delivered.len() / 2) {
        println!(
            "onset → webhook delivered at a {interval} s interval: median {m:.1} s over {} of {trials} trials (max {:.1} s)",
            to_delivered.len(),
            to_delivered.last().copied().unwrap_or_default()
        );
    }
    db.drop().await;
}
