//! One read-only pass over a cluster with many groups and partitions.
//!
//! ```sh
//! nisshi broker --listener-url tcp://127.0.0.1:9092 --advertised-listener-url tcp://127.0.0.1:9092 &
//! STREAMKEEPER_BENCH_BOOTSTRAP=127.0.0.1:9092 cargo bench -p streamkeeper-server --bench pass -- 100 1000
//! ```
//! Arguments: groups, partitions (in topics of 50 partitions). Each group
//! commits offsets on one topic's partitions, then three rounds are timed,
//! each our read (with its phases) then the peer's: a plain confluent-kafka
//! script (`support/confluent_read.py`: list groups, 64
//! list_consumer_group_offsets in flight, one list_offsets of the
//! committed partitions) on the same broker, run by the Python that
//! STREAMKEEPER_CONFLUENT_PYTHON names (`ensure_confluent_kafka` in
//! scripts/lib.sh installs it and sets it; skipped when absent). Ends with
//! both medians and their ratio.
//!
//! A secured broker: STREAMKEEPER_BENCH_SECURITY_PROTOCOL (SSL, SASL_SSL…),
//! STREAMKEEPER_BENCH_SASL_MECHANISM, STREAMKEEPER_BENCH_CA (the CA bundle's
//! path) and the login in STREAMKEEPER_CRED_BENCH_USERNAME and
//! STREAMKEEPER_CRED_BENCH_PASSWORD; the script is given the same settings
//! (librdkafka's, as the pass makes them). STREAMKEEPER_BENCH_SKIP_SETUP=1
//! reads what the broker already holds (the same data behind another
//! listener) instead of adding groups.
//!
//! STREAMKEEPER_BENCH_TAIL=1 also writes 3 wire-format records to every
//! partition, and from the second round on reads every topic's last
//! records and their schema headers (as the pass does for streams, see
//! docs/drift.md): the "last messages" phase is the time that adds.

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use streamkeeper::platform::credential::CredentialPolicy;
use streamkeeper_server::clients::kafka::reader;
use streamkeeper_server::clients::kafka::settings::{ClusterSettings, SecretRef};

const PER_TOPIC: usize = 50;

#[tokio::main]
async fn main() {
    let Ok(bootstrap) = std::env::var("STREAMKEEPER_BENCH_BOOTSTRAP") else {
        eprintln!(
            "set STREAMKEEPER_BENCH_BOOTSTRAP to a broker (see the comment at the top of benches/pass.rs)"
        );
        std::process::exit(2);
    };
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let groups = args.first().copied().unwrap_or(100);
    let partitions = args.get(1).copied().unwrap_or(1_000);
    let settings = settings(&bootstrap);
    let mut base = settings.client_config().expect("settings");
    // The reader's read-only settings would stop the setup committing.
    base.remove("enable.auto.offset.store");
    base.remove("allow.auto.create.topics");
    if std::env::var("STREAMKEEPER_BENCH_SKIP_SETUP").as_deref() != Ok("1") {
        setup(&base, groups, partitions).await;
    }
    let peer_config = serde_json::Value::Object(
        [
            "security.protocol",
            "sasl.mechanism",
            "sasl.username",
            "sasl.password",
            "ssl.ca.pem",
            "ssl.endpoint.identification.algorithm",
        ]
        .into_iter()
        .filter_map(|k| Some((k.to_string(), base.get(k)?.into())))
        .collect(),
    );
    read_rounds(&settings, &bootstrap, &peer_config).await;
}

/// The cluster's settings, with the security the environment names.
fn settings(bootstrap: &str) -> ClusterSettings {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let protocol = var("STREAMKEEPER_BENCH_SECURITY_PROTOCOL").unwrap_or("PLAINTEXT".into());
    let ca = var("STREAMKEEPER_BENCH_CA");
    let dirs: Vec<String> = ca
        .iter()
        .filter_map(|p| Some(std::path::Path::new(p).parent()?.display().to_string()))
        .collect();
    let policy = CredentialPolicy::new("STREAMKEEPER_CRED_", dirs.iter().map(String::as_str))
        .expect("policy");
    let login = |name: &str| {
        var(name).map(|_| SecretRef::checked(&format!("env:{name}"), &policy).expect("reference"))
    };
    let mut s = ClusterSettings::new(
        bootstrap,
        protocol.parse().expect("security protocol"),
        var("STREAMKEEPER_BENCH_SASL_MECHANISM").map(|m| m.parse().expect("mechanism")),
        login("STREAMKEEPER_CRED_BENCH_USERNAME"),
        login("STREAMKEEPER_CRED_BENCH_PASSWORD"),
        false,
    )
    .expect("settings");
    s.ca = ca.map(|p| SecretRef::checked(&format!("file:{p}"), &policy).expect("reference"));
    s
}

/// `partitions` in topics of [`PER_TOPIC`], and `groups` groups each
/// committed on one topic's partitions.
async fn setup(base: &ClientConfig, groups: usize, partitions: usize) {
    let topics = partitions.div_ceil(PER_TOPIC);
    let run = std::process::id();
    let admin: AdminClient<DefaultClientContext> = base.create().expect("admin");
    let names: Vec<String> = (0..topics).map(|i| format!("bench-{run}-{i}")).collect();
    let new: Vec<NewTopic> = names
        .iter()
        .map(|n| NewTopic::new(n, PER_TOPIC as i32, TopicReplication::Fixed(1)))
        .collect();
    let setup = Instant::now();
    for r in admin
        .create_topics(
            &new,
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(60))),
        )
        .await
        .expect("create topics")
    {
        r.expect("topic created");
    }
    if std::env::var("STREAMKEEPER_BENCH_TAIL").as_deref() == Ok("1") {
        write_tails(base, &names);
    }
    for g in 0..groups {
        let topic = &names[g % topics];
        let c: BaseConsumer = base
            .clone()
            .set("group.id", format!("bench-{run}-g{g}"))
            .set("enable.auto.commit", "false")
            .create()
            .expect("consumer");
        let mut tpl = TopicPartitionList::new();
        for p in 0..PER_TOPIC as i32 {
            tpl.add_partition_offset(topic, p, Offset::Offset(0))
                .expect("tpl");
        }
        c.assign(&tpl).expect("assign");
        c.commit(&tpl, CommitMode::Sync).expect("commit");
    }
    println!(
        "setup: {topics} topics × {PER_TOPIC} partitions, {groups} groups committed in {:.1} s",
        setup.elapsed().as_secs_f64()
    );
}

/// Three wire-format records (magic byte, schema ID 1, a byte of data) to
/// every partition of `names`.
fn write_tails(base: &ClientConfig, names: &[String]) {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let producer: BaseProducer = base
        .clone()
        .set("linger.ms", "20")
        .create()
        .expect("producer");
    let value = [0_u8, 0, 0, 0, 1, 0x02];
    for n in names {
        for p in 0..PER_TOPIC as i32 {
            for _ in 0..3 {
                let mut record = BaseRecord::<(), _>::to(n).partition(p).payload(&value[..]);
                while let Err((e, r)) = producer.send(record) {
                    assert!(
                        matches!(
                            e.rdkafka_error_code(),
                            Some(rdkafka::types::RDKafkaErrorCode::QueueFull)
                        ),
                        "{e}"
                    );
                    producer.poll(Duration::from_millis(10));
                    record = r;
                }
            }
        }
    }
    producer.flush(Duration::from_secs(60)).expect("flushed");
}

/// Three rounds of our read, each followed by the script's.
async fn read_rounds(settings: &ClusterSettings, bootstrap: &str, peer_config: &serde_json::Value) {
    let python = std::env::var("STREAMKEEPER_CONFLUENT_PYTHON")
        .ok()
        .filter(|p| std::path::Path::new(p).exists());
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/support/confluent_read.py"
    );
    // Known topics per group, as the routine keeps them between passes.
    let mut known = BTreeMap::new();
    let tail = std::env::var("STREAMKEEPER_BENCH_TAIL").as_deref() == Ok("1");
    let mut last_of: BTreeMap<String, Option<i64>> = BTreeMap::new();
    let (mut ours, mut peers) = (Vec::new(), Vec::new());
    for round in 0..3 {
        let s = settings.clone();
        let k = std::mem::take(&mut known);
        let l = last_of.clone();
        let start = Instant::now();
        let (r, k) = tokio::task::spawn_blocking(move || (reader::read(&s, &k, &l), k))
            .await
            .expect("join");
        let elapsed = start.elapsed().as_secs_f64();
        let r = r.expect("pass");
        ours.push(elapsed);
        known = k;
        for g in &r.groups {
            known
                .entry(g.name.clone())
                .or_insert_with(std::collections::BTreeSet::new)
                .extend(g.offsets.keys().map(|(t, _)| t.clone()));
        }
        if tail {
            // Every topic's tail, as if never read: each round reads all.
            last_of = r.topics.iter().map(|t| (t.name.clone(), None)).collect();
        }
        let headers: usize = r
            .topics
            .iter()
            .filter_map(|t| t.wire.as_ref())
            .map(Vec::len)
            .sum();
        let offsets: usize = r.groups.iter().map(|g| g.offsets.len()).sum();
        let parts: usize = r.topics.iter().map(|t| t.partitions.len()).sum();
        let phases: Vec<String> = r
            .phases
            .iter()
            .map(|(name, took)| format!("{name} {:.3}", took.as_secs_f64()))
            .collect();
        println!(
            "pass {round}: {:.3} s — {} groups, {offsets} committed offsets, {parts} partitions, {headers} wire headers, {} problems; phases (s): {}; offsets read by {:?}",
            elapsed,
            r.groups.len(),
            r.problems.len(),
            phases.join(", "),
            r.offsets_by
        );
        if let Some(python) = &python {
            let start = Instant::now();
            let out = tokio::process::Command::new(python)
                .args([script, bootstrap])
                .env("CONFLUENT_READ_CONFIG", peer_config.to_string())
                .output()
                .await
                .expect("python");
            let process = start.elapsed().as_secs_f64();
            assert!(
                out.status.success(),
                "confluent_read.py: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let report: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("the script's report");
            // The script's own clock, from its client's creation: Python's
            // start and imports are left out, in the peer's favour.
            let elapsed = report["total_s"].as_f64().expect("total_s");
            peers.push(elapsed);
            println!(
                "confluent-kafka {round}: {elapsed:.3} s ({process:.3} s with Python's start) — {report}"
            );
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ours = median(&mut ours);
    if peers.is_empty() {
        println!(
            "ours: median {ours:.3} s (no confluent-kafka peer: set STREAMKEEPER_CONFLUENT_PYTHON)"
        );
    } else {
        let peer = median(&mut peers);
        println!(
            "ours: median {ours:.3} s; confluent-kafka: median {peer:.3} s; ours is {:.2}× as fast",
            peer / ours
        );
    }
}
