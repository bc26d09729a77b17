//! Storing and judging passes in Postgres at scale, and reading a page of
//! a cluster's consumer groups.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench store -- 1000 10000
//! ```
//! Arguments: groups, partitions (topics of 50 partitions; each group
//! commits on one topic's 50 partitions, so 1,000 groups make 50,000
//! samples a pass), and optionally passes (12 unless given). Works in a database of its own, dropped at the end.
//!
//! Prints, over the synthetic passes (no broker: the reading is built in
//! memory, so only Postgres and the evaluation are timed):
//! - ingest: one pass stored (samples through UNNEST into the day
//!   partition, groups, topics, rollups) in one transaction, rows/s;
//! - evaluate: the evaluation after a pass (statuses, flags reconciled,
//!   judgements stored), twice over on two clusters fed the same passes:
//!   every group's window read from Postgres (as a replica does when it
//!   takes a cluster over), and kept in the sampler's memory (every other
//!   pass); and the window step alone, both ways;
//!   with `RUST_LOG=streamkeeper_server::watch::judge=debug`, each
//!   evaluation's phases on stderr (where the time goes);
//! - the groups page: page 1 of the cluster's groups, the troubled-only
//!   filter and a name search, as the console's service returns them.

#[path = "support/db.rs"]
mod bench_db;
#[path = "support/median.rs"]
mod bench_median;

use bench_db::BenchDb;
use bench_median::median;
use chrono::{Duration as Span, Utc};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use streamkeeper::accounts::account::{Credential, Principal};
use streamkeeper::accounts::role::Role;
use streamkeeper::platform::page::PageRequest;
use streamkeeper::watch::window::WINDOW_PASSES;
use streamkeeper_app::port::Watch as _;
use streamkeeper_app::watch::model::GroupFilter;
use streamkeeper_server::clients::kafka::reader::{
    GroupReading, OffsetsBy, PartitionReading, Reading, TopicReading,
};
use streamkeeper_server::watch::ClusterService;
use streamkeeper_server::watch::judge::{self, PassResult};
use streamkeeper_server::watch::kept::{self, KeptWindow, Source};
use streamkeeper_server::watch::store::{self as clusters, samples};

const PER_TOPIC: usize = 50;
/// Passes unless the third argument says otherwise.
const PASSES: usize = 12;

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!(
            "set DATABASE_URL to a Postgres server (see the comment at the top of benches/store.rs)"
        );
        std::process::exit(2);
    };
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let groups = args.first().copied().unwrap_or(1_000);
    let partitions = args.get(1).copied().unwrap_or(10_000);
    let passes = args.get(2).copied().unwrap_or(PASSES);
    let topics = partitions.div_ceil(PER_TOPIC);

    let db = BenchDb::create(&base, "store", 8).await;
    let pool = db.pool.clone();
    samples::ensure_partitions(&pool, Utc::now())
        .await
        .expect("partitions");
    let cluster: (i64,) = sqlx::query_as(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('bench', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let row = clusters::by_id(&pool, cluster.0)
        .await
        .expect("read cluster")
        .expect("cluster row");
    // The same passes again, judged from the window in memory.
    let kept_id: (i64,) = sqlx::query_as(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('bench-kept', '127.0.0.1:1', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let kept_row = clusters::by_id(&pool, kept_id.0)
        .await
        .expect("read cluster")
        .expect("cluster row");
    let mut kept = KeptWindow::default();

    let names: Vec<String> = (0..topics).map(|i| format!("topic-{i}")).collect();
    let start = Utc::now() - Span::seconds(15 * passes as i64);
    let (mut ingest, mut evaluate, mut evaluate_kept) = (Vec::new(), Vec::new(), Vec::new());
    let (mut window_read, mut window_kept) = (Vec::new(), Vec::new());
    // Keeping a pass in memory is part of the kept evaluation's work.
    let mut keep = Vec::new();
    let mut rows = 0;
    for pass in 0..passes {
        let at = start + Span::seconds(15 * pass as i64);
        let reading = synthetic(&names, groups, pass as i64, at);
        let t = Instant::now();
        rows = clusters::record_reading(&pool, row.id, &reading)
            .await
            .expect("store a pass")
            .samples
            .len();
        ingest.push(t.elapsed());
        let t = Instant::now();
        let source = kept::current(&pool, row.id, &mut KeptWindow::default())
            .await
            .expect("window");
        window_read.push(t.elapsed());
        assert_eq!(source, Source::Postgres);
        let t = Instant::now();
        judge::after_pass(
            &pool,
            &row,
            PassResult::Read(&reading),
            &mut KeptWindow::default(),
        )
        .await
        .expect("evaluate");
        evaluate.push(t.elapsed());

        let stored = clusters::record_reading(&pool, kept_row.id, &reading)
            .await
            .expect("store a pass");
        let t = Instant::now();
        kept.push_read(stored.pass_id, reading.finished, &stored.samples);
        keep.push(t.elapsed());
        let t = Instant::now();
        let source = kept::current(&pool, kept_row.id, &mut kept)
            .await
            .expect("window");
        window_kept.push(t.elapsed());
        assert_eq!(source, Source::Memory);
        let t = Instant::now();
        judge::after_pass(&pool, &kept_row, PassResult::Read(&reading), &mut kept)
            .await
            .expect("evaluate");
        evaluate_kept.push(t.elapsed());
    }
    let med_ingest = median(&mut ingest);
    println!(
        "ingest   {groups} groups × {partitions} partitions: {rows} samples a pass, median {:.3} s → {:.0} rows/s (min {:.3} s, max {:.3} s)",
        med_ingest.as_secs_f64(),
        rows as f64 / med_ingest.as_secs_f64(),
        ingest.iter().min().map_or(0.0, Duration::as_secs_f64),
        ingest.iter().max().map_or(0.0, Duration::as_secs_f64),
    );
    println!(
        "evaluate after a pass, every group's window read from Postgres: median {:.3} s (max {:.3} s); the window alone: median {:.3} s",
        median(&mut evaluate).as_secs_f64(),
        evaluate.iter().max().map_or(0.0, Duration::as_secs_f64),
        median(&mut window_read).as_secs_f64(),
    );
    // Once the window holds its ten passes, each evaluation reads a full
    // one (the passes before it read less): the steady state.
    let full = usize::try_from(WINDOW_PASSES).unwrap_or(10);
    let mut steady: Vec<Duration> = evaluate_kept.iter().skip(full - 1).copied().collect();
    if !steady.is_empty() {
        println!(
            "evaluate after a pass, the window kept in memory and full ({} passes): median {:.3} s (max {:.3} s)",
            steady.len(),
            median(&mut steady).as_secs_f64(),
            steady.iter().max().map_or(0.0, Duration::as_secs_f64),
        );
    }
    println!(
        "evaluate after a pass, the window kept in memory: median {:.3} s (max {:.3} s); the window alone: median {:.3} s; keeping the pass: median {:.3} s",
        median(&mut evaluate_kept).as_secs_f64(),
        evaluate_kept
            .iter()
            .max()
            .map_or(0.0, Duration::as_secs_f64),
        median(&mut window_kept).as_secs_f64(),
        median(&mut keep).as_secs_f64(),
    );

    // The samples alone: COPY into the day partition (with its two
    // indexes), then the rollups, each committed on its own.
    let cols = columns(&synthetic(&names, groups, passes as i64, Utc::now()));
    let (mut copy_times, mut rollup_times) = (Vec::new(), Vec::new());
    for i in 0..5 {
        let at = Utc::now();
        let t = Instant::now();
        let mut tx = pool.begin().await.expect("tx");
        samples::copy_samples(&mut tx, row.id, 1_000_000 + i, at, &cols)
            .await
            .expect("samples");
        tx.commit().await.expect("commit");
        copy_times.push(t.elapsed());
        let t = Instant::now();
        let mut tx = pool.begin().await.expect("tx");
        samples::fold_rollups(&mut tx, row.id, at, &cols)
            .await
            .expect("rollups");
        tx.commit().await.expect("commit");
        rollup_times.push(t.elapsed());
    }
    let copy = median(&mut copy_times);
    println!(
        "samples  {} rows by COPY, committed: median {:.3} s → {:.0} rows/s; rollups of {groups} groups: median {:.3} s",
        cols.len(),
        copy.as_secs_f64(),
        cols.len() as f64 / copy.as_secs_f64(),
        median(&mut rollup_times).as_secs_f64(),
    );

    // The groups page: 10,000 groups need that many rows in the table.
    if groups < 10_000 {
        let extra: Vec<String> = (groups..10_000).map(|g| format!("group-{g:05}")).collect();
        sqlx::query(
            "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen, status, total_lag)
             SELECT $1, n, 'Stable', 1, '{}', now(), now(), 'OK', 0 FROM UNNEST($2::text[]) AS n",
        )
        .bind(row.id)
        .bind(&extra)
        .execute(&pool)
        .await
        .expect("more groups");
    }
    let service = ClusterService::new(pool.clone(), Default::default());
    let who = Principal {
        user_id: 0,
        username: "bench".into(),
        display_name: "bench".into(),
        roles: vec![Role::Viewer],
        via: Credential::Token,
        scopes: None,
    };
    for (label, filter) in [
        ("page 1", GroupFilter::default()),
        (
            "trouble only",
            GroupFilter {
                status: Some("trouble".into()),
                ..GroupFilter::default()
            },
        ),
        (
            "search 'group-09'",
            GroupFilter {
                q: Some("group-09".into()),
                ..GroupFilter::default()
            },
        ),
    ] {
        let mut times = Vec::new();
        let mut total = 0;
        for _ in 0..20 {
            let t = Instant::now();
            let page = service
                .groups(
                    &who,
                    row.id,
                    filter.clone(),
                    PageRequest::new(Some(1), None),
                )
                .await
                .expect("groups page");
            times.push(t.elapsed());
            total = page.total;
        }
        println!(
            "groups page, {label}: {total} of 10,000+ groups match, median {:.1} ms (max {:.1} ms)",
            median(&mut times).as_secs_f64() * 1e3,
            times.iter().max().map_or(0.0, Duration::as_secs_f64) * 1e3,
        );
    }

    db.drop().await;
}

/// A pass in which every group commits 90 more messages a partition a
/// pass, producers write 100 more, and every tenth group has stopped.
fn synthetic(topics: &[String], groups: usize, pass: i64, at: chrono::DateTime<Utc>) -> Reading {
    let end = 1_000 + pass * 100;
    Reading {
        started: at,
        finished: at,
        brokers: 1,
        topics: topics
            .iter()
            .map(|name| TopicReading {
                name: name.clone(),
                partitions: (0..PER_TOPIC as i32)
                    .map(|p| PartitionReading {
                        partition: p,
                        leader: Some(1),
                        replicas: vec![1],
                        isr: vec![1],
                        log_start: Some(0),
                        log_end: Some(end),
                    })
                    .collect(),
                last_message_at: None,
                wire: None,
            })
            .collect(),
        groups: (0..groups)
            .map(|g| {
                let topic = &topics[g % topics.len()];
                let stopped = g % 10 == 0;
                let committed = if stopped { 900 } else { 900 + pass * 90 };
                GroupReading {
                    name: format!("group-{g:05}"),
                    state: if stopped { "Empty" } else { "Stable" }.into(),
                    members: usize::from(!stopped),
                    offsets: (0..PER_TOPIC as i32)
                        .map(|p| ((topic.clone(), p), Some(committed)))
                        .collect::<BTreeMap<_, _>>(),
                    error: None,
                    assigned: Default::default(),
                }
            })
            .collect(),
        groups_listed: true,
        problems: Vec::new(),
        phases: Vec::new(),
        offsets_by: OffsetsBy::Librdkafka("synthetic".into()),
    }
}

/// A reading's samples as the store writes them.
fn columns(r: &Reading) -> samples::SampleColumns {
    let mut c = samples::SampleColumns::default();
    for g in &r.groups {
        for ((topic, partition), committed) in &g.offsets {
            c.groups.push(g.name.clone());
            c.topics.push(topic.clone());
            c.partitions.push(*partition);
            c.committed.push(*committed);
            c.log_start.push(Some(0));
            c.log_end.push(Some(1_000));
        }
    }
    c
}
