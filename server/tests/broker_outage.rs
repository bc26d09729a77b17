//! Clusters that misbehave: a broker that stops makes its cluster
//! UNREACHABLE with no samples (never zero lag) and recovers on restart; a
//! hung broker (SIGSTOP) does not delay another cluster's passes. The test
//! runs its own nisshi brokers, which scripts/test installs.

mod support;

use std::time::{Duration, Instant};
use streamkeeper_server::watch::routine::{self as watch, PassOutcome};
use streamkeeper_server::watch::store;
use support::kafka::{Broker, free_port};

async fn cluster(pool: &sqlx::PgPool, name: &str, port: u16) -> store::ClusterRow {
    let mut conn = pool.acquire().await.expect("conn");
    store::insert(
        &mut conn,
        &store::NewCluster {
            name,
            bootstrap: &format!("127.0.0.1:{port}"),
            security_protocol: "PLAINTEXT",
            sasl_mechanism: None,
            username_ref: None,
            password_ref: None,
            ca_ref: None,
            client_cert_ref: None,
            client_key_ref: None,
            insecure_credentials: false,
            interval_s: 5,
        },
    )
    .await
    .expect("cluster")
}

async fn unreachable_passes(pool: &sqlx::PgPool, id: i64) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM cluster_passes WHERE cluster_id = $1 AND outcome = 'UNREACHABLE'",
    )
    .bind(id)
    .fetch_one(pool)
    .await
    .expect("count")
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_stopped_broker_is_unreachable_then_recovers(pool: sqlx::PgPool) {
    let port = free_port();
    let broker = Broker::start(port);
    let c = cluster(&pool, "flaky", port).await;
    let (mut pending, mut kept) = (None, Default::default());
    assert!(matches!(
        watch::pass(&pool, &c, &Default::default(), &mut pending, &mut kept).await,
        PassOutcome::Stored { .. }
    ));

    drop(broker);
    let outcome = watch::pass(&pool, &c, &Default::default(), &mut pending, &mut kept).await;
    assert!(matches!(outcome, PassOutcome::Failed(_)), "{outcome:?}");
    let last = store::last_pass(&pool, c.id)
        .await
        .expect("db")
        .expect("pass");
    assert_eq!(last.outcome, "UNREACHABLE");
    let zero: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM lag_samples s JOIN cluster_passes p ON p.id = s.pass_id
         WHERE p.cluster_id = $1 AND p.outcome = 'UNREACHABLE'",
    )
    .bind(c.id)
    .fetch_one(&pool)
    .await
    .expect("count");
    assert_eq!(zero, 0, "an unreachable pass stores no samples");
    assert_eq!(unreachable_passes(&pool, c.id).await, 1);
    let flag: String =
        sqlx::query_scalar("SELECT kind FROM flags WHERE cluster_id = $1 AND state = 'open'")
            .bind(c.id)
            .fetch_one(&pool)
            .await
            .expect("an UNREACHABLE flag");
    assert_eq!(flag, "UNREACHABLE");

    let _broker = Broker::start(port);
    let outcome = watch::pass(&pool, &c, &Default::default(), &mut pending, &mut kept).await;
    assert!(
        matches!(outcome, PassOutcome::Stored { .. }),
        "recovers: {outcome:?}"
    );
    let last = store::last_pass(&pool, c.id)
        .await
        .expect("db")
        .expect("pass");
    assert_eq!(last.outcome, "UP");
    let open: i64 =
        sqlx::query_scalar("SELECT count(*) FROM flags WHERE cluster_id = $1 AND state = 'open'")
            .bind(c.id)
            .fetch_one(&pool)
            .await
            .expect("count");
    assert_eq!(open, 0, "the UNREACHABLE flag resolves");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn a_hung_cluster_does_not_delay_another(pool: sqlx::PgPool) {
    let (pa, pb) = (free_port(), free_port());
    let hung = Broker::start(pa);
    let _healthy = Broker::start(pb);
    let a = cluster(&pool, "hung", pa).await;
    let b = cluster(&pool, "healthy", pb).await;
    hung.signal("-STOP");

    let pool_a = pool.clone();
    let slow = tokio::spawn(async move {
        let started = Instant::now();
        let outcome = watch::pass(
            &pool_a,
            &a,
            &Default::default(),
            &mut None,
            &mut Default::default(),
        )
        .await;
        (outcome, started.elapsed())
    });
    // Meanwhile the healthy cluster gets three passes in.
    let started = Instant::now();
    let (mut pending, mut kept) = (None, Default::default());
    for _ in 0..3 {
        let outcome = watch::pass(&pool, &b, &Default::default(), &mut pending, &mut kept).await;
        assert!(matches!(outcome, PassOutcome::Stored { .. }), "{outcome:?}");
    }
    let healthy_took = started.elapsed();
    let (outcome, hung_took) = slow.await.expect("join");
    assert!(matches!(outcome, PassOutcome::Failed(_)), "{outcome:?}");
    assert!(
        healthy_took < Duration::from_secs(2),
        "three healthy passes took {healthy_took:?} while the other cluster hung"
    );
    assert!(
        hung_took <= Duration::from_secs(5),
        "a hung pass ends within its budget ({hung_took:?})"
    );
}
