//! The read-only reader against the broker started by scripts/test: exact
//! lag per partition after producing N and committing M, groups that never
//! committed, and an unreachable cluster that yields an error, never zeros.

mod support;

use std::collections::BTreeMap;
use std::time::Duration;
use streamkeeper::watch::lag::offset::{OffsetLag, offset_lag};
use streamkeeper_server::clients::kafka::reader::{self, ReadError};
use streamkeeper_server::clients::kafka::settings::ClusterSettings;
use support::kafka::{bootstrap, commit, topic_with};

#[tokio::test]
async fn exact_lag_per_partition_read_only() {
    let bootstrap = bootstrap();
    // Unique names: the broker may outlive one run.
    let run = std::process::id();
    let topic = &format!("lag-orders-{run}");
    let group = &format!("lag-readers-{run}");
    topic_with(&bootstrap, topic, &[10, 10, 10]).await;
    commit(&bootstrap, group, topic, &[(0, 4), (1, 7)]);

    let settings = ClusterSettings::plaintext(&bootstrap).expect("settings");
    let read = |s: ClusterSettings| {
        tokio::task::spawn_blocking(move || reader::read(&s, &BTreeMap::new(), &BTreeMap::new()))
    };
    let r = read(settings.clone())
        .await
        .expect("join")
        .expect("reachable");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let t = r.topics.iter().find(|t| &t.name == topic).expect("topic");
    let ends: Vec<Option<i64>> = t.partitions.iter().map(|p| p.log_end).collect();
    assert_eq!(ends, vec![Some(10), Some(10), Some(10)]);
    assert!(
        t.partitions
            .iter()
            .all(|p| p.log_start == Some(0) && p.leader.is_some())
    );

    let g = r
        .groups
        .iter()
        .find(|g| &g.name == group)
        .expect("group listed");
    assert_eq!(g.members, 0);
    let lag = |p: i32| {
        let committed = g.offsets.get(&(topic.clone(), p)).copied().flatten();
        offset_lag(committed, 0, 10)
    };
    assert_eq!(lag(0), OffsetLag::Behind { messages: 6 });
    assert_eq!(lag(1), OffsetLag::Behind { messages: 3 });
    assert_eq!(
        lag(2),
        OffsetLag::NoCommit,
        "never committed is not 10 behind"
    );

    // Reading changed nothing: same offsets, and the group has no members.
    let again = read(settings).await.expect("join").expect("reachable");
    let g2 = again
        .groups
        .iter()
        .find(|g| &g.name == group)
        .expect("group");
    assert_eq!(g2.offsets, g.offsets);
    assert_eq!(g2.members, 0);
}

#[tokio::test]
async fn an_unreachable_cluster_is_an_error_not_zeros() {
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let mut settings = ClusterSettings::plaintext(&format!("127.0.0.1:{port}")).expect("settings");
    settings.timeout = Duration::from_secs(2);
    let r = tokio::task::spawn_blocking(move || {
        reader::read(&settings, &BTreeMap::new(), &BTreeMap::new())
    })
    .await
    .expect("join");
    assert!(matches!(r, Err(ReadError::Unreachable(_))), "{r:?}");
}
