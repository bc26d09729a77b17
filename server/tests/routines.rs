//! The routine runner against a real Postgres: a failing run is recorded
//! and tried again next interval, an exclusive lease keeps a routine on one
//! of two runners, a released lease is taken at once and a dead holder's
//! after its TTL, shutdown abandons a run and releases, and the listing at
//! `GET /api/v1/routines`.

mod support;

use async_trait::async_trait;
use axum::http::{Method, StatusCode};
use sqlx::PgPool;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use streamkeeper::accounts::role::Role;
use streamkeeper_server::platform::routine::{
    Lease, Outcome, Record, Routine, RunError, RunResult, Runner, Scope, Spec, Target,
};
use support::TestApp;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Copy)]
enum Act {
    Work,
    Fail,
    Idle,
    /// Waits for the token, then says it abandoned the run.
    WaitForCancel,
    /// Never ends and ignores the token.
    Hang,
}

struct Probe {
    spec: Spec,
    act: Act,
    runs: Arc<AtomicUsize>,
}

impl Probe {
    fn new(name: &'static str, lease: Lease, every: Duration, act: Act) -> Self {
        Self {
            spec: Spec {
                name,
                scope: Scope::Global,
                lease,
                record: Record::EveryRun,
                every,
            },
            act,
            runs: Arc::default(),
        }
    }
}

#[async_trait]
impl Routine for Probe {
    fn spec(&self) -> Spec {
        self.spec
    }

    async fn run(&self, _: Target, cancel: &CancellationToken) -> RunResult {
        let n = self.runs.fetch_add(1, Ordering::SeqCst);
        match self.act {
            Act::Work => Ok(Outcome::Done(serde_json::json!({ "n": n }))),
            Act::Fail => Err(RunError::Failed(format!("run {n} failed"))),
            Act::Idle => Ok(Outcome::Idle),
            Act::WaitForCancel => {
                cancel.cancelled().await;
                Ok(Outcome::Abandoned)
            }
            Act::Hang => std::future::pending().await,
        }
    }
}

#[derive(Debug, sqlx::FromRow)]
struct Run {
    holder: String,
    outcome: Option<String>,
    error: Option<String>,
    detail: serde_json::Value,
    finished: bool,
}

async fn runs(pool: &PgPool, routine: &str) -> Vec<Run> {
    sqlx::query_as(
        "SELECT holder, outcome, error, detail, finished_at IS NOT NULL AS finished
           FROM routine_runs WHERE routine = $1 ORDER BY started_at, id",
    )
    .bind(routine)
    .fetch_all(pool)
    .await
    .expect("runs")
}

async fn leases(pool: &PgPool) -> Vec<(String, String)> {
    sqlx::query_as("SELECT routine, holder FROM routine_leases ORDER BY routine")
        .fetch_all(pool)
        .await
        .expect("leases")
}

/// Waits until `f` holds, for at most `within`.
async fn until<F, Fut>(within: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let end = Instant::now() + within;
    while Instant::now() < end {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_failing_run_is_recorded_and_tried_again_next_interval(pool: PgPool) {
    let mut runner = Runner::new(pool.clone());
    let failing = Arc::new(Probe::new(
        "failing",
        Lease::Exclusive,
        Duration::from_millis(300),
        Act::Fail,
    ));
    let tried = failing.runs.clone();
    runner.add(failing);
    runner.add(Arc::new(Probe::new(
        "working",
        Lease::Everywhere,
        Duration::from_millis(300),
        Act::Work,
    )));
    runner.add(Arc::new(Probe::new(
        "idle",
        Lease::Everywhere,
        Duration::from_millis(100),
        Act::Idle,
    )));
    tokio::time::sleep(Duration::from_millis(1000)).await;
    runner.shutdown(Duration::from_secs(2)).await;

    let n = tried.load(Ordering::SeqCst);
    assert!((3..=5).contains(&n), "tried once an interval: {n}");
    let failed = runs(&pool, "failing").await;
    assert_eq!(failed.len(), n, "{failed:?}");
    for (i, r) in failed.iter().enumerate() {
        assert_eq!(r.outcome.as_deref(), Some("failed"));
        assert_eq!(r.error.as_deref(), Some(format!("run {i} failed").as_str()));
        assert!(r.finished);
    }
    let worked = runs(&pool, "working").await;
    assert!(worked.len() >= 3, "{worked:?}");
    assert!(worked.iter().all(|r| r.outcome.as_deref() == Some("ok")));
    assert_eq!(worked[1].detail, serde_json::json!({ "n": 1 }));
    assert!(
        runs(&pool, "idle").await.is_empty(),
        "idle runs leave no row"
    );
    let next: Option<chrono::DateTime<chrono::Utc>> = sqlx::query_scalar(
        "SELECT next_at FROM routine_runs WHERE routine = 'working' ORDER BY id LIMIT 1",
    )
    .fetch_one(&pool)
    .await
    .expect("next");
    assert!(next.is_some(), "a finished run says when the next is due");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn an_exclusive_routine_runs_on_one_of_two_runners(pool: PgPool) {
    let every = Duration::from_millis(250);
    let (mut a, mut b) = (Runner::new(pool.clone()), Runner::new(pool.clone()));
    let (pa, pb) = (
        Probe::new("exclusive", Lease::Exclusive, every, Act::Work),
        Probe::new("exclusive", Lease::Exclusive, every, Act::Work),
    );
    let (ra, rb) = (pa.runs.clone(), pb.runs.clone());
    a.add(Arc::new(pa));
    b.add(Arc::new(pb));
    let (ea, eb) = (
        Probe::new("everywhere", Lease::Everywhere, every, Act::Work),
        Probe::new("everywhere", Lease::Everywhere, every, Act::Work),
    );
    let (wa, wb) = (ea.runs.clone(), eb.runs.clone());
    a.add(Arc::new(ea));
    b.add(Arc::new(eb));
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let holders: Vec<String> = runs(&pool, "exclusive")
        .await
        .into_iter()
        .map(|r| r.holder)
        .collect();
    let (na, nb) = (ra.load(Ordering::SeqCst), rb.load(Ordering::SeqCst));
    assert!(
        (na == 0) != (nb == 0),
        "one runner holds the lease: {na} and {nb} runs"
    );
    assert!(
        (4..=7).contains(&(na + nb)),
        "once an interval: {holders:?}"
    );
    assert!(holders.windows(2).all(|w| w[0] == w[1]), "{holders:?}");
    assert!(
        wa.load(Ordering::SeqCst) >= 4 && wb.load(Ordering::SeqCst) >= 4,
        "a routine without a lease runs on both"
    );
    a.shutdown(Duration::from_secs(2)).await;
    b.shutdown(Duration::from_secs(2)).await;
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_released_lease_is_taken_at_once(pool: PgPool) {
    // A long interval: without the release the lease would hold for 35 s.
    let every = Duration::from_secs(30);
    let mut first = Runner::new(pool.clone());
    first.add(Arc::new(Probe::new(
        "slow",
        Lease::Exclusive,
        every,
        Act::Work,
    )));
    let holder = first.holder().to_owned();
    assert!(
        until(Duration::from_secs(5), || async {
            runs(&pool, "slow").await.len() == 1
        })
        .await
    );
    assert_eq!(leases(&pool).await, vec![("slow".into(), holder.clone())]);
    first.shutdown(Duration::from_secs(2)).await;
    assert!(leases(&pool).await.is_empty(), "shutdown releases");

    let started = Instant::now();
    let mut second = Runner::new(pool.clone());
    second.add(Arc::new(Probe::new(
        "slow",
        Lease::Exclusive,
        every,
        Act::Work,
    )));
    let next = second.holder().to_owned();
    assert!(
        until(Duration::from_secs(3), || async {
            runs(&pool, "slow").await.len() == 2
        })
        .await,
        "the next runner takes the lease at once"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    let all = runs(&pool, "slow").await;
    assert_eq!(all[0].holder, holder);
    assert_eq!(all[1].holder, next);
    second.shutdown(Duration::from_secs(2)).await;
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_dead_holders_lease_moves_within_one_interval_and_a_live_ones_never(pool: PgPool) {
    // The lease (1.8 s) is shorter than the interval: the holder keeps it
    // alive between runs, and a dead holder's work moves within one interval.
    let every = Duration::from_secs(3);
    let mut dying = Runner::new(pool.clone());
    dying.add(Arc::new(Probe::new(
        "watch",
        Lease::Exclusive,
        every,
        Act::Work,
    )));
    let mut other = Runner::new(pool.clone());
    let survivor = Probe::new("watch", Lease::Exclusive, every, Act::Work);
    let took = survivor.runs.clone();
    tokio::time::sleep(Duration::from_millis(300)).await;
    other.add(Arc::new(survivor));
    // Two gaps between runs, each longer than the lease.
    tokio::time::sleep(every * 2 + Duration::from_millis(500)).await;
    assert_eq!(took.load(Ordering::SeqCst), 0, "the holder is alive");

    // Dropped without shutdown: its tasks stop, its lease stays until it lapses.
    drop(dying);
    let died = Instant::now();
    assert!(
        until(Duration::from_secs(5), || async {
            took.load(Ordering::SeqCst) > 0
        })
        .await,
        "the survivor takes over"
    );
    let after = died.elapsed();
    let ttl = streamkeeper_server::platform::routine::lease_ttl(every);
    assert!(
        after <= ttl + Duration::from_millis(500) && after < every,
        "taken over {after:?} after the holder died (TTL {ttl:?}, interval {every:?})"
    );
    other.shutdown(Duration::from_secs(2)).await;
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn shutdown_abandons_runs_and_releases_leases(pool: PgPool) {
    let mut runner = Runner::new(pool.clone());
    let every = Duration::from_secs(60);
    runner.add(Arc::new(Probe::new(
        "cooperative",
        Lease::Exclusive,
        every,
        Act::WaitForCancel,
    )));
    runner.add(Arc::new(Probe::new(
        "stubborn",
        Lease::Exclusive,
        every,
        Act::Hang,
    )));
    assert!(
        until(Duration::from_secs(5), || async {
            leases(&pool).await.len() == 2
                && !runs(&pool, "cooperative").await.is_empty()
                && !runs(&pool, "stubborn").await.is_empty()
        })
        .await
    );
    assert!(!runs(&pool, "cooperative").await[0].finished, "mid-run");

    let started = Instant::now();
    runner.shutdown(Duration::from_secs(6)).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "a stubborn run is dropped a few seconds in ({took:?})"
    );
    assert!(leases(&pool).await.is_empty());
    for name in ["cooperative", "stubborn"] {
        let r = runs(&pool, name).await;
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].outcome.as_deref(), Some("abandoned"), "{name}");
        assert!(r[0].finished);
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn the_routines_are_listed_for_admins(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, vt) = (t.token(admin).await, t.token(viewer).await);
    for name in ["east", "west"] {
        sqlx::query(
            "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ($1, '127.0.0.1:1', 'PLAINTEXT')",
        )
        .bind(name)
        .execute(&pool)
        .await
        .expect("cluster");
    }

    struct PerCluster;
    #[async_trait]
    impl Routine for PerCluster {
        fn spec(&self) -> Spec {
            Spec {
                name: "per-cluster",
                scope: Scope::PerCluster,
                lease: Lease::Exclusive,
                record: Record::EveryRun,
                every: Duration::from_secs(60),
            }
        }
        async fn run(&self, t: Target, _: &CancellationToken) -> RunResult {
            match t {
                Target::Cluster(id) if id % 2 == 0 => {
                    Err(RunError::Failed("the broker is away".into()))
                }
                _ => Ok(Outcome::Done(serde_json::json!({}))),
            }
        }
    }
    let mut runner = Runner::new(pool.clone());
    runner.add(Arc::new(PerCluster));
    runner.add(Arc::new(Probe::new(
        "global",
        Lease::Everywhere,
        Duration::from_secs(60),
        Act::Work,
    )));
    assert!(
        until(Duration::from_secs(5), || async {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM routine_runs WHERE finished_at IS NOT NULL",
            )
            .fetch_one(&pool)
            .await
            .expect("count");
            n == 3
        })
        .await
    );

    let r = t.api(Method::GET, "/api/v1/routines", &vt, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t.api(Method::GET, "/api/v1/routines", &at, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let page = r.json();
    assert_eq!(page["total"], 3, "{page}");
    let items = page["items"].as_array().expect("items");
    let names: Vec<(&str, &str)> = items
        .iter()
        .map(|i| {
            (
                i["routine"].as_str().unwrap_or(""),
                i["cluster"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("global", "-"),
            ("per-cluster", "east"),
            ("per-cluster", "west")
        ]
    );
    // Past the last page: no items, and still the true total.
    let r = t
        .api(Method::GET, "/api/v1/routines?page=5&per_page=2", &at, None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let past = r.json();
    assert_eq!(past["total"], 3, "{past}");
    assert_eq!(past["items"].as_array().map(Vec::len), Some(0), "{past}");
    let holder = runner.holder();
    for i in items {
        assert!(i["last_started_at"].is_string(), "{i}");
        assert!(i["last_finished_at"].is_string(), "{i}");
        assert!(i["next_due_at"].is_string(), "{i}");
        assert_eq!(i["last_ran_by"], holder, "{i}");
        assert_eq!(i["running"], false);
        assert_eq!(i["every_ms"], 60_000);
    }
    assert_eq!(items[0]["exclusive"], false);
    assert!(
        items[0]["holder"].is_null(),
        "no lease for an everywhere routine"
    );
    for i in &items[1..] {
        assert_eq!(i["holder"], holder, "{i}");
        let failed = i["cluster_id"].as_i64().expect("id") % 2 == 0;
        assert_eq!(
            i["last_outcome"],
            if failed { "failed" } else { "ok" },
            "{i}"
        );
        if failed {
            assert_eq!(i["last_error"], "the broker is away");
        } else {
            assert!(i["last_error"].is_null());
        }
    }
    let r = t
        .api(Method::GET, "/api/v1/routines?routine=global", &at, None)
        .await;
    assert_eq!(r.json()["total"], 1, "{}", r.body);

    // Settings → Routines shows the same, each target a row.
    let ada = t
        .login("ada", support::PASSWORD)
        .await
        .expect("ada signs in");
    let vic = t
        .login("vic", support::PASSWORD)
        .await
        .expect("vic signs in");
    let r = t.get("/settings/routines", Some(&ada)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let row = |html: &str, id: &str| {
        let start = html
            .find(&format!(r#"data-testid="routine-{id}""#))
            .unwrap_or_else(|| panic!("no row {id}: {html}"));
        html[start..start + html[start..].find("</tr>").unwrap_or(0)].to_string()
    };
    let west_failed = items[2]["last_outcome"] == "failed";
    let (failed, ok) = if west_failed {
        ("per-cluster-west", "per-cluster-east")
    } else {
        ("per-cluster-east", "per-cluster-west")
    };
    let bad = row(&r.body, failed);
    assert!(
        bad.contains("state-bad") && bad.contains("the broker is away"),
        "{bad}"
    );
    assert!(
        bad.contains("every 1 min (its own)") && bad.contains("(holds it now)"),
        "{bad}"
    );
    assert!(row(&r.body, ok).contains(">ok<"));
    assert!(row(&r.body, "global-global").contains("everything"));
    // A next run whose time has passed is never shown as the next: due
    // now just after its time, overdue (since when) once no replica took
    // it for a minute, as when the replica that ran it last is gone.
    let next = |ago: &'static str| {
        let pool = &pool;
        async move {
            sqlx::query(&format!(
                "UPDATE routine_runs SET next_at = now() - interval '{ago}' WHERE routine = 'global'"
            ))
            .execute(pool)
            .await
            .expect("next run moved back");
        }
    };
    next("5 seconds").await;
    let r = t.get("/settings/routines", Some(&ada)).await;
    let global = row(&r.body, "global-global");
    assert!(global.contains("<td>due now</td>"), "{global}");
    next("1 hour").await;
    let r = t.get("/settings/routines", Some(&ada)).await;
    let global = row(&r.body, "global-global");
    assert!(
        global.contains("overdue since ") && global.contains("(1 h ago)"),
        "{global}"
    );
    let r = t.get("/settings/routines", Some(&vic)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);

    // Its forms, posted without JavaScript: a bad interval changes nothing,
    // a good one is kept and shown; run-now asks for one cluster's run.
    let schedule = |interval: &'static str| {
        [
            ("routine", "per-cluster"),
            ("kind", "every"),
            ("interval", interval),
            ("expression", ""),
        ]
    };
    let stored = || async {
        sqlx::query_as::<_, (String, Option<i64>)>(
            "SELECT kind, every_ms FROM routine_schedules WHERE routine = 'per-cluster'",
        )
        .fetch_optional(&pool)
        .await
        .expect("schedule")
    };
    t.post_form("/fn/set_routine_schedule", Some(&ada), &schedule("soon"))
        .await;
    assert_eq!(stored().await, None, "a bad interval is refused");
    t.post_form("/fn/set_routine_schedule", Some(&vic), &schedule("5m"))
        .await;
    assert_eq!(stored().await, None, "a viewer may not");
    t.post_form("/fn/set_routine_schedule", Some(&ada), &schedule("5m"))
        .await;
    assert_eq!(stored().await, Some(("every".into(), Some(300_000))));
    let r = t.get("/settings/routines", Some(&ada)).await;
    assert!(
        row(&r.body, "per-cluster-east").contains("every 5 min"),
        "{}",
        r.body
    );
    t.post_form(
        "/fn/run_routine",
        Some(&ada),
        &[("routine", "per-cluster"), ("cluster", "east")],
    )
    .await;
    let asked: Vec<Option<String>> = sqlx::query_scalar(
        "SELECT c.name FROM routine_run_requests q LEFT JOIN clusters c ON c.id = q.cluster_id
          WHERE q.routine = 'per-cluster'",
    )
    .fetch_all(&pool)
    .await
    .expect("requests");
    assert_eq!(asked, vec![Some("east".to_string())]);
    let audited: Vec<(String, String)> = sqlx::query_as(
        "SELECT actor, action FROM audit_log WHERE action LIKE 'routine.%' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    assert_eq!(
        audited,
        [
            ("vic", "routine.schedule.refused"),
            ("ada", "routine.schedule"),
            ("ada", "routine.run_now"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    runner.shutdown(Duration::from_secs(2)).await;
}

/// How many runs of `routine` finished, on any runner.
async fn finished(pool: &PgPool, routine: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM routine_runs WHERE routine = $1 AND finished_at IS NOT NULL",
    )
    .bind(routine)
    .fetch_one(pool)
    .await
    .expect("count")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stored_schedule_takes_effect_at_the_next_run_on_every_replica_and_pause_stops_it(
    pool: PgPool,
) {
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, vt) = (t.token(admin).await, t.token(viewer).await);
    // Two replicas that each run it (their own work), hourly by default.
    let (mut a, mut b) = (Runner::new(pool.clone()), Runner::new(pool.clone()));
    let (pa, pb) = (
        Probe::new(
            "hourly",
            Lease::Everywhere,
            Duration::from_secs(3600),
            Act::Work,
        ),
        Probe::new(
            "hourly",
            Lease::Everywhere,
            Duration::from_secs(3600),
            Act::Work,
        ),
    );
    let (ra, rb) = (pa.runs.clone(), pb.runs.clone());
    a.add(Arc::new(pa));
    b.add(Arc::new(pb));
    assert!(
        until(Duration::from_secs(5), || async {
            finished(&pool, "hourly").await == 2
        })
        .await
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        finished(&pool, "hourly").await,
        2,
        "hourly: one run each so far"
    );

    // A viewer may not; the refusal is on the record with the routine.
    let every = serde_json::json!({ "kind": "every", "every_ms": 1000 });
    let r = t
        .api(
            Method::PUT,
            "/api/v1/routines/hourly/schedule",
            &vt,
            Some(every.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let refused: Vec<(String, String)> = sqlx::query_as(
        "SELECT actor, target FROM audit_log WHERE action = 'routine.schedule.refused'",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    assert_eq!(
        refused,
        vec![("vic".to_string(), "routine:hourly".to_string())]
    );

    let r = t
        .api(
            Method::PUT,
            "/api/v1/routines/hourly/schedule",
            &at,
            Some(every),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["kind"], "every");
    // Every replica picks it up at its next run: both run again, each second.
    assert!(
        until(Duration::from_secs(8), || async {
            ra.load(Ordering::SeqCst) >= 3 && rb.load(Ordering::SeqCst) >= 3
        })
        .await,
        "both replicas run on the new schedule: {} and {}",
        ra.load(Ordering::SeqCst),
        rb.load(Ordering::SeqCst)
    );
    let detail: String = sqlx::query_scalar(
        "SELECT detail FROM audit_log WHERE action = 'routine.schedule' AND actor = 'ada'",
    )
    .fetch_one(&pool)
    .await
    .expect("audited");
    let detail: serde_json::Value = serde_json::from_str(&detail).expect("json");
    assert_eq!(detail["from"]["kind"], "default", "{detail}");
    assert_eq!(detail["to"]["every_ms"], 1000, "{detail}");

    // Paused: no run after the runners have read it.
    let r = t
        .api(
            Method::PUT,
            "/api/v1/routines/hourly/schedule",
            &at,
            Some(serde_json::json!({ "kind": "paused" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    tokio::time::sleep(streamkeeper_server::platform::routine::POLL + Duration::from_millis(800))
        .await;
    let n = finished(&pool, "hourly").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        finished(&pool, "hourly").await,
        n,
        "a paused routine does not run"
    );
    let r = t
        .api(Method::GET, "/api/v1/routines?routine=hourly", &at, None)
        .await;
    assert_eq!(
        r.json()["items"][0]["schedule"]["kind"],
        "paused",
        "{}",
        r.body
    );

    // A bad cron expression, an unknown routine: said, not stored.
    let r = t
        .api(
            Method::PUT,
            "/api/v1/routines/hourly/schedule",
            &at,
            Some(serde_json::json!({ "kind": "cron", "expression": "61 * * * *" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    let r = t
        .api(
            Method::PUT,
            "/api/v1/routines/nope/schedule",
            &at,
            Some(serde_json::json!({ "kind": "paused" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    a.shutdown(Duration::from_secs(2)).await;
    b.shutdown(Duration::from_secs(2)).await;
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn run_now_runs_once_with_two_runners_on_one_database(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, vt) = (t.token(admin).await, t.token(viewer).await);
    let hour = Duration::from_secs(3600);
    let (mut a, mut b) = (Runner::new(pool.clone()), Runner::new(pool.clone()));
    // Run by both replicas, and held by one of them.
    for runner in [&mut a, &mut b] {
        runner.add(Arc::new(Probe::new(
            "both",
            Lease::Everywhere,
            hour,
            Act::Work,
        )));
        runner.add(Arc::new(Probe::new(
            "held",
            Lease::Exclusive,
            hour,
            Act::Work,
        )));
    }
    assert!(
        until(Duration::from_secs(5), || async {
            finished(&pool, "both").await == 2 && finished(&pool, "held").await == 1
        })
        .await
    );
    // Paused too: run-now still runs it, once.
    let r = t
        .api(
            Method::PUT,
            "/api/v1/routines/both/schedule",
            &at,
            Some(serde_json::json!({ "kind": "paused" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    let r = t
        .api(
            Method::POST,
            "/api/v1/routines/both/run",
            &vt,
            Some(serde_json::json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    for routine in ["both", "held"] {
        let r = t
            .api(
                Method::POST,
                &format!("/api/v1/routines/{routine}/run"),
                &at,
                Some(serde_json::json!({})),
            )
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        assert_eq!(r.json()["targets"], 1, "{}", r.body);
    }
    assert!(
        until(Duration::from_secs(8), || async {
            finished(&pool, "both").await == 3 && finished(&pool, "held").await == 2
        })
        .await,
        "each ran once more: {} and {}",
        finished(&pool, "both").await,
        finished(&pool, "held").await
    );
    // Both runners have seen the requests by now, and neither ran it again.
    tokio::time::sleep(
        2 * streamkeeper_server::platform::routine::POLL + Duration::from_millis(500),
    )
    .await;
    assert_eq!(finished(&pool, "both").await, 3);
    assert_eq!(finished(&pool, "held").await, 2);
    let claims: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT routine, claimed_by FROM routine_run_requests ORDER BY id")
            .fetch_all(&pool)
            .await
            .expect("requests");
    assert_eq!(claims.len(), 2);
    for (routine, by) in &claims {
        let by = by.as_deref().unwrap_or("");
        assert!(
            by == a.holder() || by == b.holder(),
            "{routine} claimed by {by}"
        );
    }
    let actions = t.audit_actions().await;
    assert_eq!(
        actions.iter().filter(|a| *a == "routine.run_now").count(),
        2,
        "{actions:?}"
    );
    assert!(
        actions.contains(&"routine.run_now.refused".to_string()),
        "{actions:?}"
    );
    // A global routine names no cluster.
    let r = t
        .api(
            Method::POST,
            "/api/v1/routines/held/run",
            &at,
            Some(serde_json::json!({ "cluster": "east" })),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    a.shutdown(Duration::from_secs(2)).await;
    b.shutdown(Duration::from_secs(2)).await;
}

/// Counts each cluster's passes, a pass every 100 ms.
struct Passes {
    seen: Arc<std::sync::Mutex<Vec<i64>>>,
}

#[async_trait]
impl Routine for Passes {
    fn spec(&self) -> Spec {
        Spec {
            name: "passes",
            scope: Scope::PerCluster,
            lease: Lease::Everywhere,
            record: Record::EveryRun,
            every: Duration::from_millis(100),
        }
    }
    async fn run(&self, t: Target, _: &CancellationToken) -> RunResult {
        if let Target::Cluster(id) = t {
            self.seen.lock().map(|mut s| s.push(id)).ok();
        }
        Ok(Outcome::Done(serde_json::json!({})))
    }
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_paused_cluster_gets_no_passes_until_it_is_resumed(pool: PgPool) {
    let t = TestApp::new(pool.clone()).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let viewer = t.user("vic", &[Role::Viewer]).await;
    let (at, vt) = (t.token(admin).await, t.token(viewer).await);
    let mut ids = vec![];
    for name in ["east", "west"] {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO clusters (name, bootstrap, security_protocol) VALUES ($1, '127.0.0.1:1', 'PLAINTEXT') RETURNING id",
        )
        .bind(name)
        .fetch_one(&pool)
        .await
        .expect("cluster");
        ids.push(id);
    }
    let (east, west) = (ids[0], ids[1]);
    // A pass from before the pause: history, not the window of the
    // resumed cluster (its lag is judged on what is read after).
    sqlx::query(
        "INSERT INTO cluster_passes (cluster_id, started_at, finished_at, outcome, problems)
         VALUES ($1, now() - interval '1 minute', now() - interval '1 minute', 'UP', '{}')",
    )
    .bind(east)
    .execute(&pool)
    .await
    .expect("a pass");
    let window = || async {
        streamkeeper_server::watch::store::recent_pass_ids(&pool, east, 10)
            .await
            .expect("window")
    };
    assert_eq!(window().await.len(), 1);
    let pause = format!("/api/v1/clusters/{east}/pause");
    let resume = format!("/api/v1/clusters/{east}/resume");

    // Only admins pause, and a refusal is audited.
    let r = t.api(Method::POST, &pause, &vt, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = t.api(Method::POST, &resume, &vt, None).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let refused: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action = 'request.refused' AND actor = 'vic'",
    )
    .fetch_one(&pool)
    .await
    .expect("refusals");
    assert_eq!(refused, 2);
    let r = t.api(Method::POST, &pause, &at, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["paused"]["by"], "ada");
    assert!(r.json()["paused"]["at"].is_string());
    // Pausing a paused cluster changes (and audits) nothing.
    let r = t.api(Method::POST, &pause, &at, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);

    let seen: Arc<std::sync::Mutex<Vec<i64>>> = Arc::default();
    let passes = |id: i64| {
        let seen = seen.clone();
        move || {
            seen.lock()
                .map(|s| s.iter().filter(|&&c| c == id).count())
                .unwrap_or(0)
        }
    };
    let (east_passes, west_passes) = (passes(east), passes(west));
    let mut runner = Runner::new(pool.clone());
    runner.add(Arc::new(Passes { seen: seen.clone() }));
    assert!(until(Duration::from_secs(5), || async { west_passes() >= 5 }).await);
    assert_eq!(east_passes(), 0, "a paused cluster is not read");

    // Resumed, its passes start again (the runner looks every 10 s).
    let r = t.api(Method::POST, &resume, &at, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.json()["paused"].is_null(), "{}", r.body);
    assert!(window().await.is_empty(), "the window starts at the resume");
    assert!(until(Duration::from_secs(15), || async { east_passes() >= 3 }).await);

    // Paused while it runs, its passes stop (within the runner's look).
    let r = t.api(Method::POST, &pause, &at, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    tokio::time::sleep(Duration::from_secs(11)).await;
    let stopped = east_passes();
    let west_then = west_passes();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(east_passes(), stopped, "no new passes once paused");
    assert!(west_passes() > west_then, "the other cluster goes on");
    runner.shutdown(Duration::from_secs(2)).await;

    let actions: Vec<String> = sqlx::query_scalar(
        "SELECT action FROM audit_log WHERE action LIKE 'cluster.%' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .expect("audit");
    assert_eq!(
        actions,
        ["cluster.pause", "cluster.resume", "cluster.pause"]
    );
}
