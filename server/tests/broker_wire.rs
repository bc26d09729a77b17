//! The protocol client (clients/kafka/wire.rs) against the broker started
//! by scripts/test, checked against librdkafka on the same cluster: the
//! same committed offsets for groups that committed, one that committed on
//! a topic since deleted, and one that never committed; the same log-start
//! (one moved by DeleteRecords) and log-end offsets; and the pass reads
//! through it on a plaintext cluster.

mod support;

use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;
use streamkeeper_server::clients::kafka::group_offsets;
use streamkeeper_server::clients::kafka::reader::{self, OffsetsBy};
use streamkeeper_server::clients::kafka::settings::ClusterSettings;
use streamkeeper_server::clients::kafka::wire;
use support::kafka::{bootstrap, commit, topic_with};

type Committed = HashMap<String, Result<BTreeSet<((String, i32), Option<i64>)>, String>>;

fn sets(read: HashMap<String, Result<group_offsets::Offsets, String>>) -> Committed {
    read.into_iter()
        .map(|(g, r)| (g, r.map(|o| o.into_iter().collect())))
        .collect()
}

#[tokio::test]
async fn the_wire_client_reads_what_librdkafka_reads() {
    let bootstrap = bootstrap();
    let run = std::process::id();
    let kept = format!("wire-kept-{run}");
    let other = format!("wire-other-{run}");
    let gone = format!("wire-gone-{run}");
    topic_with(&bootstrap, &kept, &[10, 10, 10]).await;
    topic_with(&bootstrap, &other, &[5, 0]).await;
    topic_with(&bootstrap, &gone, &[4]).await;
    let reader = format!("wire-reader-{run}");
    let behind = format!("wire-behind-{run}");
    let orphan = format!("wire-orphan-{run}");
    let never = format!("wire-never-{run}");
    commit(&bootstrap, &reader, &kept, &[(0, 4), (1, 7)]);
    commit(&bootstrap, &reader, &other, &[(0, 5)]);
    // Committed below where the log will start.
    commit(&bootstrap, &behind, &kept, &[(2, 1)]);
    commit(&bootstrap, &orphan, &gone, &[(0, 2)]);

    let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .expect("admin");
    let mut cut = TopicPartitionList::new();
    cut.add_partition_offset(&kept, 2, Offset::Offset(3))
        .expect("tpl");
    admin
        .delete_records(&cut, &AdminOptions::new())
        .await
        .expect("records deleted");
    for r in admin
        .delete_topics(&[gone.as_str()], &AdminOptions::new())
        .await
        .expect("delete topic")
    {
        r.expect("topic deleted");
    }

    let settings = ClusterSettings::plaintext(&bootstrap).expect("settings");
    let groups = vec![
        reader.clone(),
        behind.clone(),
        orphan.clone(),
        never.clone(),
    ];
    let client: BaseConsumer = settings
        .client_config()
        .expect("config")
        .create()
        .expect("client");
    let timeout = Duration::from_secs(10);
    let (by_librdkafka, by_wire, placed) = {
        let groups = groups.clone();
        let bootstrap = bootstrap.clone();
        let topics = [kept.clone(), other.clone()];
        tokio::task::spawn_blocking(move || {
            let lib = sets(group_offsets::list(&client, &groups, timeout));
            let metadata = client.fetch_metadata(None, timeout).expect("metadata");
            let brokers: BTreeMap<i32, String> = metadata
                .brokers()
                .iter()
                .map(|b| (b.id(), format!("{}:{}", b.host(), b.port())))
                .collect();
            let placed: Vec<wire::Placed> = metadata
                .topics()
                .iter()
                .filter(|t| topics.iter().any(|n| n == t.name()))
                .flat_map(|t| {
                    t.partitions()
                        .iter()
                        .map(|p| wire::Placed {
                            topic: t.name().to_string(),
                            partition: p.id(),
                            leader: brokers[&p.leader()].clone(),
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let deadline = tokio::time::Instant::now() + timeout;
            let plain = wire::Security::plaintext();
            let versions = rt
                .block_on(wire::versions(&bootstrap, &plain, deadline))
                .expect("nisshi batches");
            let by_wire = sets(rt.block_on(wire::committed(
                &bootstrap, &plain, versions, &groups, timeout,
            )));
            let mut offsets = BTreeMap::new();
            for at in [wire::EARLIEST, wire::LATEST] {
                let (read, failed) =
                    rt.block_on(wire::offsets_at(&placed, &plain, versions, at, timeout));
                assert!(failed.is_empty(), "{failed:?}");
                offsets.insert(at, read);
            }
            // librdkafka's log starts and ends of the same partitions.
            for (at, spec) in [
                (wire::EARLIEST, Offset::Beginning),
                (wire::LATEST, Offset::End),
            ] {
                let mut tpl = TopicPartitionList::new();
                for p in &placed {
                    tpl.add_partition_offset(&p.topic, p.partition, spec)
                        .expect("tpl");
                }
                let got = client.offsets_for_times(tpl, timeout).expect("offsets");
                let lib: BTreeMap<(String, i32), i64> = got
                    .elements()
                    .iter()
                    .filter_map(|e| match e.offset() {
                        Offset::Offset(o) => Some(((e.topic().to_string(), e.partition()), o)),
                        _ => None,
                    })
                    .collect();
                assert_eq!(offsets[&at], lib, "offsets at {at}");
            }
            ((lib, offsets), by_wire, placed.len())
        })
        .await
        .expect("join")
    };
    let (by_librdkafka, offsets) = by_librdkafka;
    assert_eq!(placed, 5);
    assert_eq!(by_wire, by_librdkafka);

    // What both read, spelled out.
    let of = |g: &str| by_wire[g].clone().expect("readable");
    let at = |t: &str, p: i32, o: Option<i64>| ((t.to_string(), p), o);
    assert_eq!(
        of(&reader),
        BTreeSet::from([
            at(&kept, 0, Some(4)),
            at(&kept, 1, Some(7)),
            at(&other, 0, Some(5))
        ])
    );
    assert_eq!(of(&behind), BTreeSet::from([at(&kept, 2, Some(1))]));
    assert!(
        of(&never).is_empty(),
        "never committed: no offsets, no error"
    );
    // The deleted topic's commit: whatever the broker keeps, both clients
    // read the same (compared above), and it is never an error for the group.
    assert!(by_wire[&orphan].is_ok());
    let starts = &offsets[&wire::EARLIEST];
    let ends = &offsets[&wire::LATEST];
    assert_eq!(
        starts[&(kept.clone(), 2)],
        3,
        "DeleteRecords moved the log start"
    );
    assert_eq!(starts[&(kept.clone(), 0)], 0);
    assert_eq!(ends[&(kept.clone(), 2)], 10);
    assert_eq!(ends[&(other.clone(), 1)], 0);

    // The pass itself reads through the wire client here, with the same figures.
    let r = tokio::task::spawn_blocking(move || {
        reader::read(&settings, &BTreeMap::new(), &BTreeMap::new())
    })
    .await
    .expect("join")
    .expect("reachable");
    assert!(
        matches!(r.offsets_by, OffsetsBy::Wire(_)),
        "{:?}",
        r.offsets_by
    );
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let g = r.groups.iter().find(|g| g.name == behind).expect("listed");
    assert_eq!(g.offsets.get(&(kept.clone(), 2)), Some(&Some(1)));
    let t = r.topics.iter().find(|t| t.name == kept).expect("topic");
    let p2 = &t.partitions[2];
    assert_eq!((p2.log_start, p2.log_end), (Some(3), Some(10)));
}

#[tokio::test]
async fn a_group_whose_coordinator_cannot_be_reached_is_unreadable_not_empty() {
    // A port nothing listens on, as the coordinator and the leader.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    drop(listener);
    let versions = wire::Versions {
        find_coordinator: 4,
        offset_fetch: 8,
        list_offsets: 1,
    };
    let groups = vec!["a".to_string(), "b".to_string()];
    let plain = wire::Security::plaintext();
    let read = wire::committed(&addr, &plain, versions, &groups, Duration::from_secs(2)).await;
    assert_eq!(read.len(), 2);
    for g in &groups {
        assert!(read[g].is_err(), "{g}: {:?}", read[g]);
    }
    let placed = vec![wire::Placed {
        topic: "t".into(),
        partition: 0,
        leader: addr.clone(),
    }];
    let (offsets, failed) = wire::offsets_at(
        &placed,
        &plain,
        versions,
        wire::LATEST,
        Duration::from_secs(2),
    )
    .await;
    assert!(offsets.is_empty(), "unknown, never zero: {offsets:?}");
    assert_eq!(failed.len(), 1, "{failed:?}");
}
