//! Lineage from the store (issue 14): OpenLineage ingest over HTTP with a
//! bench sender, and the impact of a topic at 100,000 nodes / 500,000
//! edges, against a plain recursive CTE over the same tables (Marquez's
//! approach) in the same run.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench lineage -- 60 32
//! ```
//! Arguments: seconds of HTTP ingest, concurrent senders, processes of
//! the real openlineage-python client (2; 0 skips it). Works in a
//! database of its own, dropped at the end.
//!
//! 1. The graph: 50,000 streaming jobs in 100 tiers, each reading 5
//!    topics of its tier and writing 5 of the next (wrapping into cycles),
//!    as RunEvents in the openlineage-python 1.54 shape with
//!    `kafka://SASL_SSL://broker-N:9093` namespaces resolved to the one
//!    registered cluster; every topic owned by a team in the catalog. Sent
//!    through the service's writer 1,000 at a time (the batch path), then
//!    folded by the first read (timed together).
//! 2. Impact downstream of a topic (walked in the in-memory adjacency
//!    and keys, then one statement for times and owners), at depth 6 and
//!    20 (Marquez's default), against two recursive CTEs: the reach with
//!    the owners joined (less than the answer shows: a lower bound), and
//!    the whole answer (each node's least depth, the last edge of its path
//!    with that edge's times, its times, catalog owner and `ownership`
//!    facet).
//! 3. HTTP ingest: the real router on 127.0.0.1, a lineage:write token,
//!    `senders` tasks each POSTing one event at a time to
//!    `/api/v1/lineage` (as the Python client does), honouring 429 +
//!    Retry-After; then every 201 is checked to be stored. The
//!    `lineage-fold` routine runs beside the server as `serve` runs it;
//!    the events waiting for it are counted every 250 ms, and how long it
//!    takes to catch up once the senders stop is reported.
//!    3b. The same with wrk as the sender (`support/lineage_wrk.lua`;
//!    Debian's `wrk`, or STREAMKEEPER_WRK), a process of its own on one
//!    thread, so that the sender's share of the two cores is told apart
//!    from the server's; skipped when wrk is not installed.
//! 4. The same with the real openlineage-python 1.54 client (its HTTP
//!    transport), when scripts/lib.sh's `ensure_openlineage` installed it.
//! 5. (Run before 3.) The graph page of topic-0 with a 200-node
//!    neighbourhood (depth 6, budget 199 plus the centre), GET over HTTP
//!    from the real router with a read token: the server's whole answer
//!    (adjacency walk, loads, owners, flags, layout, SVG, the page's
//!    render); and the service's graph call and the layout alone.
//!
//! `-- 0 1 0` builds the graph and runs 2 and 5 only.

#[path = "support/db.rs"]
mod bench_db;
#[path = "support/median.rs"]
mod bench_median;

use bench_db::BenchDb;
use bench_median::median;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use streamkeeper::accounts::account::{Credential, Principal};
use streamkeeper::accounts::role::Role;
use streamkeeper::lineage::graph::{NodeKey, Provenance};
use streamkeeper::lineage::impact::{Direction, Limits};
use streamkeeper_server::lineage::{Accepted, IngestLimits, LineageService, accept_one, store};

const TOPICS: usize = 50_000;
const JOBS: usize = 50_000;
const FAN: usize = 5;

/// A small deterministic generator (no rand dependency for a bench).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// A RunEvent of job `j` reading `fan` topics and writing `fan`, in the
/// 1.54 client's shape, at time `at`.
fn event(j: usize, fan: usize, at: &str, rng: &mut Lcg) -> String {
    let per_tier = TOPICS / 100;
    let tier = ((j % JOBS) * 100) / JOBS;
    let topic = |t: usize, rng: &mut Lcg| {
        let i = (t % 100) * per_tier + rng.next(per_tier);
        format!(
            r#"{{"facets": {{}}, "inputFacets": {{}}, "name": "topic-{i}", "namespace": "kafka://SASL_SSL://broker-{}:9093"}}"#,
            i % 3
        )
    };
    let inputs: Vec<String> = (0..fan).map(|_| topic(tier, rng)).collect();
    let outputs: Vec<String> = (0..fan).map(|_| topic(tier + 1, rng)).collect();
    format!(
        r#"{{"eventTime": "{at}", "eventType": "RUNNING", "inputs": [{}], "job": {{"facets": {{"jobType": {{"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "_schemaURL": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet", "integration": "FLINK", "jobType": "JOB", "processingType": "STREAMING"}}}}, "name": "job-{}", "namespace": "bench"}}, "outputs": [{}], "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "run": {{"facets": {{}}, "runId": "0194b3a2-7c1e-7000-8000-{j:012}"}}, "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}}"#,
        inputs.join(", "),
        j % JOBS,
        outputs.join(", ")
    )
}

fn admin() -> Principal {
    Principal {
        user_id: 0,
        username: "bench".into(),
        display_name: "bench".into(),
        roles: vec![Role::Admin],
        via: Credential::Session,
        scopes: None,
    }
}

/// Step 5: the graph page of a 200-node neighbourhood.
async fn graph_page(
    pool: &sqlx::PgPool,
    svc: &LineageService,
    addr: &std::net::SocketAddr,
    user: i64,
    topic: &NodeKey,
) {
    use streamkeeper_app::lineage::model::NodeAsk;
    use streamkeeper_app::port::Lineage;
    let token = streamkeeper_server::accounts::store::tokens::generate();
    streamkeeper_server::accounts::store::tokens::insert(
        &mut pool.acquire().await.expect("conn"),
        user,
        "bench-read",
        &token,
        &streamkeeper::accounts::token::Scopes::new([streamkeeper::accounts::token::Scope::Read])
            .expect("scopes"),
        None,
    )
    .await
    .expect("token");
    let node = streamkeeper::lineage::marquez::NodeId(topic.clone()).to_string();
    let ask = NodeAsk {
        node: Some(node.clone()),
        depth: Some(6),
        budget: Some(199),
        ..NodeAsk::default()
    };
    let who = admin();
    let mut service = Vec::new();
    let mut layout = Vec::new();
    let mut drawn = (0, 0);
    for _ in 0..7 {
        let t = Instant::now();
        let g = svc.graph(&who, &ask).await.expect("graph");
        service.push(t.elapsed());
        drawn = (g.nodes.len(), g.edges.len());
        let pairs: Vec<(usize, usize)> = g.edges.iter().map(|e| (e.from, e.to)).collect();
        let t = Instant::now();
        streamkeeper::lineage::layout::layout(
            g.nodes.len(),
            &pairs,
            &streamkeeper::lineage::layout::LayoutOptions::default(),
        )
        .expect("layout");
        layout.push(t.elapsed());
    }
    let url = format!(
        "http://{addr}/lineage/graph?node={}&depth=6&budget=199",
        url::form_urlencoded::byte_serialize(node.as_bytes()).collect::<String>()
    );
    let client = reqwest::Client::new();
    let mut page = Vec::new();
    let mut bytes = 0;
    for _ in 0..7 {
        let t = Instant::now();
        let r = client
            .get(&url)
            .bearer_auth(&token)
            .send()
            .await
            .expect("page");
        assert_eq!(r.status().as_u16(), 200, "the graph page answers");
        let body = r.text().await.expect("body");
        page.push(t.elapsed());
        bytes = body.len();
        assert_eq!(
            body.matches("data-node=\"").count(),
            drawn.0,
            "every node drawn"
        );
    }
    println!(
        "graph page, {} nodes / {} edges (depth 6, budget 199): GET {:.1} ms ({} KB); service call {:.1} ms, of which layout {:.2} ms",
        drawn.0,
        drawn.1,
        ms(median(&mut page)),
        bytes / 1024,
        ms(median(&mut service)),
        ms(median(&mut layout)),
    );
}

/// Step 3b: HTTP ingest with wrk as the sender (`support/lineage_wrk.lua`),
/// `senders` connections on one wrk thread, each event distinct, counted
/// from `first`; then the 201s are checked against the events stored, by
/// count (wrk does not say which request a response answers). Up to one
/// event per connection in flight when wrk stops is stored uncounted, so
/// a loss of as many could hide behind them.
async fn wrk_ingest(
    svc: &LineageService,
    fold: &FoldWatch,
    addr: &std::net::SocketAddr,
    token: &str,
    seconds: u64,
    senders: usize,
    first: usize,
) {
    if seconds == 0 {
        return;
    }
    let wrk = std::env::var("STREAMKEEPER_WRK").unwrap_or_else(|_| "wrk".into());
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/support/lineage_wrk.lua"
    );
    let before = svc.counts().await.expect("counts").events;
    fold.reset();
    let started = Instant::now();
    let out = tokio::process::Command::new(&wrk)
        .args([
            "-t1",
            &format!("-c{senders}"),
            &format!("-d{seconds}s"),
            "--timeout",
            "10s",
            "-s",
            script,
            &format!("http://{addr}/api/v1/lineage"),
            "--",
            token,
            &first.to_string(),
            &JOBS.to_string(),
            &TOPICS.to_string(),
        ])
        .output()
        .await;
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!("wrk: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            println!("wrk ingest: skipped ({wrk}: {e}; apt-get install wrk)");
            return;
        }
    };
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| -> u64 {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix("streamkeeper-wrk "))
            .and_then(|l| {
                l.split(' ')
                    .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            })
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("wrk printed no {name}: {stdout}"))
    };
    let created = field("created") as i64;
    let behind = fold.report(svc).await;
    let stored = svc.counts().await.expect("counts").events - before;
    println!(
        "http ingest, wrk sender: {senders} connections for {:.0} s: {created} events answered 201 ({:.0} events/s), stored {stored} (lost {}, {} in flight when wrk stopped), other answers {}, errors {}, 429s {}; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        elapsed.as_secs_f64(),
        created as f64 / elapsed.as_secs_f64(),
        (created - stored).max(0),
        (stored - created).max(0),
        field("other"),
        field("errors"),
        field("throttled"),
        field("p50_us") as f64 / 1e3,
        field("p99_us") as f64 / 1e3,
        field("max_us") as f64 / 1e3,
    );
    println!("  {behind}");
}

/// The fold behind HTTP ingest: the `lineage-fold` routine run back to
/// back beside the server, as `serve`'s runner runs it, and the events
/// waiting for it, counted every 250 ms.
struct FoldWatch {
    pool: sqlx::PgPool,
    most: Arc<std::sync::atomic::AtomicI64>,
}

impl FoldWatch {
    fn start(pool: &sqlx::PgPool, lineage: Arc<LineageService>) -> Self {
        use streamkeeper_server::platform::routine::{Routine, Target};
        let routine = streamkeeper_server::lineage::routine::Fold::new(lineage);
        tokio::spawn(async move {
            let cancel = tokio_util::sync::CancellationToken::new();
            // Until the bench drops its database.
            while routine.run(Target::Global, &cancel).await.is_ok() {}
        });
        let most = Arc::new(std::sync::atomic::AtomicI64::new(0));
        let (p, m) = (pool.clone(), most.clone());
        tokio::spawn(async move {
            while let Ok(n) = count_waiting(&p).await {
                m.fetch_max(n, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        FoldWatch {
            pool: pool.clone(),
            most,
        }
    }

    /// Starts a phase: forgets the backlog seen so far.
    fn reset(&self) {
        self.most.store(0, Ordering::Relaxed);
    }

    /// Ends a phase: the most events seen waiting, those waiting now, and
    /// how long the fold then takes to reach them (a read's catch-up).
    async fn report(&self, svc: &LineageService) -> String {
        let left = waiting(&self.pool).await;
        let t = Instant::now();
        svc.fold().catch_up().await.expect("fold");
        format!(
            "fold behind it: at most {} events waiting, {left} when the senders stopped, caught up {:.0} ms later",
            self.most.load(Ordering::Relaxed).max(left),
            ms(t.elapsed())
        )
    }
}

async fn waiting(pool: &sqlx::PgPool) -> i64 {
    count_waiting(pool).await.expect("waiting")
}

async fn count_waiting(pool: &sqlx::PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM lineage_unfolded")
        .fetch_one(pool)
        .await
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[tokio::main]
async fn main() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!(
            "set DATABASE_URL to a Postgres server (see the comment at the top of benches/lineage.rs)"
        );
        std::process::exit(2);
    };
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let seconds = args.first().copied().unwrap_or(60);
    let senders = args.get(1).copied().unwrap_or(32) as usize;

    let db = BenchDb::create(&base, "lineage", 16).await;
    let pool = db.pool.clone();
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap) VALUES ('bench', 'broker-0:9093,broker-1:9093,broker-2:9093')
         RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let team: i64 = sqlx::query_scalar("INSERT INTO teams (name) VALUES ('payments') RETURNING id")
        .fetch_one(&pool)
        .await
        .expect("team");
    sqlx::query(
        "INSERT INTO streams (cluster_id, topic, owner_team_id)
         SELECT $1, 'topic-' || i, $2 FROM generate_series(0, $3 - 1) i",
    )
    .bind(cluster)
    .bind(team)
    .bind(TOPICS as i64)
    .execute(&pool)
    .await
    .expect("streams");

    // 1. The graph, through the writer.
    let svc = LineageService::new(pool.clone(), IngestLimits::for_body_limit(8 << 20));
    let mut rng = Lcg(7);
    let texts: Vec<String> = (0..JOBS)
        .map(|j| {
            event(
                j,
                FAN,
                &format!("2026-01-01T00:{:02}:00Z", j % 60),
                &mut rng,
            )
        })
        .collect();
    let start = Instant::now();
    for chunk in texts.chunks(1_000) {
        let events = chunk
            .iter()
            .map(|t| Accepted {
                received: accept_one(t.as_bytes()).expect("bench event"),
                provenance: Provenance::Observed,
                sender: "bench".into(),
                source: "bench".into(),
            })
            .collect();
        for r in svc.ingest(events).await {
            r.expect("stored");
        }
    }
    // Stored, then folded by the first read (no fold routine runs yet).
    let counts = svc.counts().await.expect("counts");
    let load = start.elapsed();
    println!(
        "graph: {} nodes, {} edges from {} events, stored through the writer and folded in {:.1} s ({:.0} events/s, 10 edges each)",
        counts.nodes,
        counts.edges,
        counts.events,
        load.as_secs_f64(),
        counts.events as f64 / load.as_secs_f64()
    );
    sqlx::query("ANALYZE")
        .execute(&pool)
        .await
        .expect("analyze");

    // 2. Impact from the store vs one recursive CTE.
    // A graph this size in a live database was vacuumed long ago; one just
    // loaded in bulk would be vacuumed by autovacuum during the steps
    // below, and timed with them.
    sqlx::query("VACUUM ANALYZE")
        .execute(&pool)
        .await
        .expect("vacuum");
    let topic = NodeKey::dataset("kafka://broker-0:9093", "topic-0");
    let start_id = store::node_by_key(&pool, &topic)
        .await
        .expect("lookup")
        .expect("topic-0 stored");
    let who = admin();
    // The first question loads the in-memory adjacency (every edge once).
    let t = Instant::now();
    svc.impact(&who, &topic, Direction::Downstream, Limits::default())
        .await
        .expect("impact");
    println!(
        "first question, loading the adjacency of {} edges: {:.0} ms",
        counts.edges,
        ms(t.elapsed())
    );
    for (depth, budget, rounds) in [(6u32, 5_000usize, 7), (20, 100_000, 3)] {
        let limits = Limits { depth, budget };
        let mut ours = Vec::new();
        let mut reached = 0;
        let mut partial = false;
        for _ in 0..rounds {
            let t = Instant::now();
            let i = svc
                .impact(&who, &topic, Direction::Downstream, limits)
                .await
                .expect("impact");
            ours.push(t.elapsed());
            reached = i.nodes.len();
            partial = i.partial;
            assert!(i.nodes.iter().any(|n| n.owner.is_some()), "owners attached");
        }
        let mut cte = Vec::new();
        let mut cte_reached = 0;
        for _ in 0..rounds.min(3) {
            let t = Instant::now();
            let rows = store::downstream_by_recursive_cte(&pool, start_id, depth as i32)
                .await
                .expect("cte");
            cte.push(t.elapsed());
            cte_reached = rows.len();
        }
        let mut whole = Vec::new();
        let mut whole_reached = 0;
        for _ in 0..rounds.min(3) {
            let t = Instant::now();
            whole_reached =
                store::downstream_answer_by_recursive_cte(&pool, start_id, depth as i32)
                    .await
                    .expect("cte");
            whole.push(t.elapsed());
        }
        let (o, c, w) = (median(&mut ours), median(&mut cte), median(&mut whole));
        println!(
            "impact depth {depth}, budget {budget}: store walk {:.1} ms ({reached} nodes, partial {partial}); recursive CTE, reach and owners {:.1} ms ({cte_reached} nodes), CTE / walk = {:.1}×; recursive CTE, the whole answer {:.1} ms ({whole_reached} nodes), CTE / walk = {:.1}×",
            ms(o),
            ms(c),
            c.as_secs_f64() / o.as_secs_f64().max(1e-9),
            ms(w),
            w.as_secs_f64() / o.as_secs_f64().max(1e-9)
        );
    }

    // 3. HTTP ingest with a bench sender.
    let user = streamkeeper_server::accounts::store::users::insert(
        &mut pool.acquire().await.expect("conn"),
        "producer",
        "producer",
        "unused",
        &[Role::Owner],
        false,
    )
    .await
    .expect("user")
    .id;
    let token = streamkeeper_server::accounts::store::tokens::generate();
    streamkeeper_server::accounts::store::tokens::insert(
        &mut pool.acquire().await.expect("conn"),
        user,
        "bench",
        &token,
        &streamkeeper::accounts::token::Scopes::new([
            streamkeeper::accounts::token::Scope::LineageWrite,
        ])
        .expect("scopes"),
        None,
    )
    .await
    .expect("token");
    let cfg = streamkeeper_server::config::ServeConfig {
        bind: "127.0.0.1:0".parse().expect("addr"),
        public_url: url::Url::parse("http://127.0.0.1:3000").expect("url"),
        site: streamkeeper_server::http::site::Site::Folder("target/site".into()),
        session_idle: Duration::from_secs(1800),
        session_max: Duration::from_secs(12 * 3600),
        trusted_proxies: Vec::new(),
        clusters_file: None,
        outbound: Default::default(),
        max_schema_bytes: streamkeeper_server::platform::limits::DEFAULT_MAX_SCHEMA_BYTES,
        metrics_max_series: streamkeeper_server::platform::metrics::DEFAULT_MAX_SERIES,
        lineage_forward: None,
        sso: None,
        local_login: Default::default(),
        smtp: None,
    };
    let store = tower_sessions_sqlx_store::PostgresStore::new(pool.clone());
    store.migrate().await.expect("sessions");
    let state = streamkeeper_server::http::AppState::new(pool.clone(), cfg);
    let fold = FoldWatch::start(&pool, state.lineage.clone());
    let app = streamkeeper_server::http::router(state, store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    graph_page(&pool, &svc, &addr, user, &topic).await;

    let before = svc.counts().await.expect("counts").events;
    fold.reset();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(senders)
        .build()
        .expect("client");
    let url = format!("http://{addr}/api/v1/lineage");
    let next = Arc::new(AtomicUsize::new(JOBS));
    let throttled = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..senders)
        .map(|s| {
            let (client, url, token, next, throttled) = (
                client.clone(),
                url.clone(),
                token.clone(),
                next.clone(),
                throttled.clone(),
            );
            tokio::spawn(async move {
                let mut rng = Lcg(s as u64 + 11);
                let mut latencies = Vec::new();
                let mut failed = 0usize;
                while Instant::now() < deadline {
                    // A producer's usual event: one input, one output, ~1 KB,
                    // timed when it is sent, as a live stream's are (so
                    // each one moves its nodes' and edges' last-seen times).
                    let at =
                        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
                    let body = event(next.fetch_add(1, Ordering::Relaxed), 1, &at, &mut rng);
                    loop {
                        let t = Instant::now();
                        let r = client
                            .post(&url)
                            .bearer_auth(&token)
                            .header("content-type", "application/json")
                            .body(body.clone())
                            .send()
                            .await;
                        match r.map(|r| r.status().as_u16()) {
                            Ok(201) => {
                                latencies.push(t.elapsed());
                                break;
                            }
                            Ok(429) => {
                                throttled.fetch_add(1, Ordering::Relaxed);
                                tokio::time::sleep(Duration::from_secs(1)).await;
                            }
                            _ => {
                                failed += 1;
                                break;
                            }
                        }
                    }
                }
                (latencies, failed)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut failed = 0;
    for t in tasks {
        let (l, f) = t.await.expect("sender");
        latencies.extend(l);
        failed += f;
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    let behind = fold.report(&svc).await;
    let stored = svc.counts().await.expect("counts").events - before;
    println!(
        "http ingest: {} senders for {:.0} s: {} events answered 201 ({:.0} events/s), stored {stored} (lost {}), failed {failed}, 429s {}; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        senders,
        elapsed.as_secs_f64(),
        latencies.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        latencies.len() as i64 - stored,
        throttled.load(Ordering::Relaxed),
        ms(pct(0.5)),
        ms(pct(0.99)),
        ms(latencies.last().copied().unwrap_or_default()),
    );
    println!("  {behind}");

    // 3b. The same with wrk as the sender, in a process of its own.
    wrk_ingest(
        &svc,
        &fold,
        &addr,
        &token,
        seconds,
        senders,
        next.load(Ordering::Relaxed),
    )
    .await;

    // 4. The real openlineage-python client, `python_clients` processes.
    let python = std::env::var("STREAMKEEPER_OPENLINEAGE_PYTHON").unwrap_or_else(|_| {
        format!(
            "{}/.cache/streamkeeper/openlineage-1.54.0/bin/python",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let python_clients = args.get(2).copied().unwrap_or(2) as usize;
    if std::path::Path::new(&python).exists() && python_clients > 0 {
        let secs = seconds.min(20);
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/support/openlineage_rate.py"
        );
        let before = svc.counts().await.expect("counts").events;
        let started = Instant::now();
        let children: Vec<_> = (0..python_clients)
            .map(|w| {
                tokio::process::Command::new(&python)
                    .args([
                        script,
                        &format!("http://{addr}"),
                        &token,
                        &secs.to_string(),
                        &w.to_string(),
                    ])
                    .output()
            })
            .collect();
        let mut sent = 0usize;
        for c in children {
            let out = c.await.expect("python");
            assert!(
                out.status.success(),
                "openlineage-python: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            sent += String::from_utf8_lossy(&out.stdout)
                .trim()
                .strip_prefix("sent ")
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
        }
        let elapsed = started.elapsed();
        let stored = svc.counts().await.expect("counts").events - before;
        println!(
            "openlineage-python 1.54 (HTTP transport, one event a POST): {python_clients} processes for {:.0} s: {sent} sent ({:.0} events/s), stored {stored} (lost {})",
            elapsed.as_secs_f64(),
            sent as f64 / elapsed.as_secs_f64(),
            sent as i64 - stored,
        );
    } else {
        println!(
            "openlineage-python: skipped ({python} not found; scripts/lib.sh ensure_openlineage)"
        );
    }
    db.drop().await;
}
