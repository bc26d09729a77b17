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

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use streamkeeper_server::clients::kafka::reader;
use streamkeeper_server::clients::kafka::settings::ClusterSettings;

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
    let topics = partitions.div_ceil(PER_TOPIC);
    let run = std::process::id();

    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("admin");
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
    for g in 0..groups {
        let topic = &names[g % topics];
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
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

    let settings = ClusterSettings::plaintext(&bootstrap).expect("settings");
    let python = std::env::var("STREAMKEEPER_CONFLUENT_PYTHON")
        .ok()
        .filter(|p| std::path::Path::new(p).exists());
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/support/confluent_read.py"
    );
    // Known topics per group, as the routine keeps them between passes.
    let mut known = BTreeMap::new();
    let (mut ours, mut peers) = (Vec::new(), Vec::new());
    for round in 0..3 {
        let s = settings.clone();
        let k = std::mem::take(&mut known);
        let start = Instant::now();
        let (r, k) =
            tokio::task::spawn_blocking(move || (reader::read(&s, &k, &Default::default()), k))
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
        let offsets: usize = r.groups.iter().map(|g| g.offsets.len()).sum();
        let parts: usize = r.topics.iter().map(|t| t.partitions.len()).sum();
        let phases: Vec<String> = r
            .phases
            .iter()
            .map(|(name, took)| format!("{name} {:.3}", took.as_secs_f64()))
            .collect();
        println!(
            "pass {round}: {:.3} s — {} groups, {offsets} committed offsets, {parts} partitions, {} problems; phases (s): {}; offsets read by {:?}",
            elapsed,
            r.groups.len(),
            r.problems.len(),
            phases.join(", "),
            r.offsets_by
        );
        if let Some(python) = &python {
            let start = Instant::now();
            let out = tokio::process::Command::new(python)
                .args([script, &bootstrap])
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
