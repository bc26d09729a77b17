//! The routine runner in the real binary: `streamkeeper serve` stopped by
//! SIGTERM with a sampler pass hanging on a stopped broker exits within
//! 10 s and releases its leases, so the next start samples at once; two
//! servers on one database sample each cluster once an interval, and when
//! one is killed (-9) the other takes its clusters within one interval,
//! on a plaintext broker and again on the TLS + SCRAM broker scripts/test
//! starts (support::secure). Runs its own plaintext nisshi brokers, which
//! scripts/test installs.

mod support;

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::kafka::{Broker, commit_at, free_port, topic_at};
use support::secure::{Creds, Reach};

/// The clusters' interval: the shortest a cluster may have.
const INTERVAL: Duration = Duration::from_secs(5);
const INTERVAL_S: i32 = 5;

/// The URL of this test's own database.
fn url_of(pool: &PgPool) -> String {
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL for tests");
    let db = pool
        .connect_options()
        .get_database()
        .unwrap_or("postgres")
        .to_string();
    let mut u = url::Url::parse(&base).expect("DATABASE_URL");
    u.set_path(&db);
    u.to_string()
}

/// A `streamkeeper serve` process; killed on drop.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Server {
    async fn start(pool: &PgPool, name: &str) -> Self {
        Self::start_with(pool, name, "").await
    }

    /// With `cred_dirs` as its credential directories (STREAMKEEPER_CRED_DIRS;
    /// empty: the default).
    async fn start_with(pool: &PgPool, name: &str, cred_dirs: &str) -> Self {
        let port = free_port();
        let db = pool
            .connect_options()
            .get_database()
            .unwrap_or("db")
            .to_owned();
        let log = std::env::temp_dir().join(format!("streamkeeper-{db}-{name}.log"));
        let out = std::fs::File::create(&log).expect("log file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_streamkeeper"));
        command.arg("serve").env_clear();
        if !cred_dirs.is_empty() {
            command.env("STREAMKEEPER_CRED_DIRS", cred_dirs);
        }
        let child = command
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", url_of(pool))
            .env("STREAMKEEPER_BIND", format!("127.0.0.1:{port}"))
            .env("STREAMKEEPER_LOG", "info,sqlx=warn")
            // A debug build carries no site; these tests load no wasm.
            .env("STREAMKEEPER_SITE_ROOT", "target/site")
            .stdout(Stdio::null())
            .stderr(out)
            .spawn()
            .expect("spawn the server");
        let server = Self { child, log };
        let end = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < end,
                "the server did not start: {}",
                server.output()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether `holder` (a lease holder or a run's) is this process.
    fn is(&self, holder: &str) -> bool {
        // `[host-]pid-reference`
        let mut parts = holder.rsplit('-');
        parts.next();
        parts.next() == Some(self.pid().to_string().as_str())
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.pid().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill {sig}");
    }

    /// Waits for the process to end, for at most `within`.
    async fn exited(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + within;
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return Some(status);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A group that read part of a topic and stopped (as the `stopped_group`
/// example makes), so each pass has a group to read. Named for this run:
/// the secured broker is shared by the tests of a run.
async fn stopped_group(reach: &Reach, name: &str) {
    let name = format!("{name}-{}", std::process::id());
    let conf = reach.fixtures();
    topic_at(&conf, &format!("{name}-orders"), &[20]).await;
    commit_at(
        &conf,
        &format!("{name}-readers"),
        &format!("{name}-orders"),
        &[(0, 5)],
    );
}

#[derive(Debug, Clone, sqlx::FromRow)]
struct Run {
    id: i64,
    cluster_id: Option<i64>,
    holder: String,
    started_at: DateTime<Utc>,
    outcome: Option<String>,
    finished: bool,
}

async fn sample_runs(pool: &PgPool) -> Vec<Run> {
    sqlx::query_as(
        "SELECT id, cluster_id, holder, started_at, outcome, finished_at IS NOT NULL AS finished
           FROM routine_runs WHERE routine = 'sample' ORDER BY started_at, id",
    )
    .fetch_all(pool)
    .await
    .expect("runs")
}

async fn sample_leases(pool: &PgPool) -> Vec<(i64, String)> {
    sqlx::query_as(
        "SELECT cluster_id, holder FROM routine_leases WHERE routine = 'sample' ORDER BY cluster_id",
    )
    .fetch_all(pool)
    .await
    .expect("leases")
}

/// Polls `f` until it answers, for at most `within`.
async fn until<T, F, Fut>(within: Duration, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let end = Instant::now() + within;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < end, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn sigterm_mid_pass_exits_within_10_s_and_the_next_start_samples_at_once(pool: PgPool) {
    let port = free_port();
    let broker = Broker::start(port);
    let reach = Reach::plaintext(&format!("127.0.0.1:{port}"));
    stopped_group(&reach, "term").await;
    let id = reach.cluster(&pool, "hanging", INTERVAL_S).await;

    let mut first = Server::start(&pool, "first").await;
    let ok = until(Duration::from_secs(20), "a first pass", || async {
        sample_runs(&pool)
            .await
            .into_iter()
            .find(|r| r.outcome.as_deref() == Some("ok"))
    })
    .await;
    assert!(first.is(&ok.holder), "{}", ok.holder);
    assert_eq!(ok.cluster_id, Some(id));

    // The next pass hangs on the stopped broker: SIGTERM while it is open.
    broker.signal("-STOP");
    let hanging = until(INTERVAL * 2, "a pass hanging on the broker", || async {
        sample_runs(&pool)
            .await
            .into_iter()
            .find(|r| r.id > ok.id && !r.finished)
    })
    .await;
    assert_eq!(sample_leases(&pool).await.len(), 1);
    let signalled = Instant::now();
    first.signal("-TERM");
    let status = first.exited(Duration::from_secs(10)).await;
    let took = signalled.elapsed();
    let Some(status) = status else {
        panic!("still running 10 s after SIGTERM: {}", first.output());
    };
    assert!(status.success(), "{status:?}: {}", first.output());
    assert!(took < Duration::from_secs(10), "{took:?}");
    println!("exited {took:?} after SIGTERM");

    // Its lease is released, and its open pass closed as abandoned.
    assert_eq!(sample_leases(&pool).await, vec![], "{}", first.output());
    let abandoned = sample_runs(&pool)
        .await
        .into_iter()
        .find(|r| r.id == hanging.id)
        .expect("the hanging run");
    assert_eq!(abandoned.outcome.as_deref(), Some("abandoned"));

    // The next start takes the lease at once, not after its TTL.
    broker.signal("-CONT");
    let second = Server::start(&pool, "second").await;
    let up = Instant::now();
    let taken = until(
        Duration::from_secs(3),
        "the next start's first pass",
        || async {
            sample_runs(&pool)
                .await
                .into_iter()
                .find(|r| second.is(&r.holder))
        },
    )
    .await;
    assert!(
        up.elapsed() < INTERVAL,
        "the next start sampled {:?} after it was up",
        up.elapsed()
    );
    assert_eq!(taken.cluster_id, Some(id));
    let leases = sample_leases(&pool).await;
    assert_eq!(leases.len(), 1);
    assert!(second.is(&leases[0].1), "{leases:?}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn two_servers_sample_each_cluster_once_and_the_survivor_takes_over(pool: PgPool) {
    let port = free_port();
    let _broker = Broker::start(port);
    takeover(&pool, &Reach::plaintext(&format!("127.0.0.1:{port}"))).await;
}

/// The same on clusters watched over TLS + SCRAM-SHA-512: the survivor
/// signs in with the references it reads itself.
#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn on_the_scram_broker_the_survivor_takes_over(pool: PgPool) {
    let creds = Creds::new("takeover");
    takeover(&pool, &Reach::scram(&creds)).await;
}

/// Two servers on one database sample each of two clusters on `reach`'s
/// broker once an interval, never both at once; when the one holding a
/// cluster is killed (-9), the other takes its clusters within one
/// interval.
async fn takeover(pool: &PgPool, reach: &Reach) {
    let pool = pool.clone();
    stopped_group(reach, "pair").await;
    let east = reach.cluster(&pool, "east", INTERVAL_S).await;
    let west = reach.cluster(&pool, "west", INTERVAL_S).await;
    let a = Server::start_with(&pool, "a", &reach.cred_dirs).await;
    let b = Server::start_with(&pool, "b", &reach.cred_dirs).await;

    until(INTERVAL * 3, "both clusters sampled", || async {
        let runs = sample_runs(&pool).await;
        let ok = |c| {
            runs.iter()
                .any(|r| r.cluster_id == Some(c) && r.outcome.as_deref() == Some("ok"))
        };
        (ok(east) && ok(west)).then_some(())
    })
    .await;

    // Three intervals: each cluster is sampled once an interval, by one of
    // the two servers, never by both.
    let from = Utc::now();
    tokio::time::sleep(INTERVAL * 3).await;
    let to = Utc::now();
    let runs = sample_runs(&pool).await;
    for c in [east, west] {
        let of: Vec<&Run> = runs
            .iter()
            .filter(|r| r.cluster_id == Some(c) && r.started_at >= from && r.started_at < to)
            .collect();
        assert!(
            (2..=4).contains(&of.len()),
            "cluster {c}: {} passes in three intervals: {of:?}",
            of.len()
        );
        assert!(of.iter().all(|r| a.is(&r.holder) || b.is(&r.holder)));
    }

    // Kill -9 the server holding east's lease: the other takes its
    // clusters when the lease lapses, within one interval.
    let leases = sample_leases(&pool).await;
    assert_eq!(leases.len(), 2, "{leases:?}");
    let east_holder = &leases.iter().find(|(c, _)| *c == east).expect("east").1;
    let (mut dead, survivor) = if a.is(east_holder) { (a, b) } else { (b, a) };
    let theirs: Vec<i64> = leases
        .iter()
        .filter(|(_, h)| dead.is(h))
        .map(|(c, _)| *c)
        .collect();
    dead.signal("-KILL");
    let killed = Instant::now();
    let killed_at = Utc::now();
    dead.exited(Duration::from_secs(5)).await.expect("killed");
    until(
        INTERVAL * 3,
        "the survivor samples the dead one's clusters",
        || async {
            let runs = sample_runs(&pool).await;
            theirs
                .iter()
                .all(|c| {
                    runs.iter().any(|r| {
                        r.cluster_id == Some(*c)
                            && survivor.is(&r.holder)
                            && r.started_at > killed_at
                    })
                })
                .then_some(())
        },
    )
    .await;
    let took = killed.elapsed();
    println!("taken over {took:?} after the kill");
    assert!(
        took < INTERVAL,
        "taken over {took:?} after the kill (interval {INTERVAL:?})"
    );
    let leases = sample_leases(&pool).await;
    assert!(leases.iter().all(|(_, h)| survivor.is(h)), "{leases:?}");

    // Never two passes of one cluster at once: starts are about an interval apart.
    let runs = sample_runs(&pool).await;
    for c in [east, west] {
        let starts: Vec<DateTime<Utc>> = runs
            .iter()
            .filter(|r| r.cluster_id == Some(c))
            .map(|r| r.started_at)
            .collect();
        for w in starts.windows(2) {
            let gap = (w[1] - w[0]).to_std().unwrap_or_default();
            assert!(
                gap > INTERVAL / 2,
                "cluster {c}: passes {gap:?} apart: {starts:?}"
            );
        }
    }
    assert!(
        !runs.iter().any(|r| dead.is(&r.holder) && !r.finished),
        "the dead server's open pass is closed when the survivor runs"
    );
}
