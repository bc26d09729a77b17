//! One read-only pass over a cluster: topic metadata, consumer groups and
//! their committed offsets, then log-start and log-end offsets. Committed
//! offsets are read before log ends, so a fast consumer never looks ahead of
//! the end it is compared with (the negative-lag trap in the field notes).
//! The reader never joins a group, commits, or produces.
//!
//! librdkafka reads a group's committed offsets only through a client whose
//! `group.id` is that group, so each group costs one short-lived client and
//! one OffsetFetch; groups run on a bounded pool of threads. Batched
//! OffsetFetch (one request per coordinator, KIP-709) is the planned next
//! step for large clusters; see BENCHMARKS.md for today's cost.

use chrono::{DateTime, Utc};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::{Offset, TopicPartitionList};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use streamkeeper::consumer_protocol::assigned_partitions;

use super::settings::{ClusterSettings, SettingsError};

/// Groups whose offsets are read at the same time.
const GROUP_WORKERS: usize = 8;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionReading {
    pub partition: i32,
    /// `None` when the partition has no leader.
    pub leader: Option<i32>,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// `None` when the offsets could not be read: never a made-up zero.
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicReading {
    pub name: String,
    pub partitions: Vec<PartitionReading>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupReading {
    pub name: String,
    /// As the broker says: Stable, Empty, PreparingRebalance, Dead, …
    pub state: String,
    pub members: usize,
    /// (topic, partition) → committed offset, `None` if never committed.
    /// Empty with `error` set when the offsets could not be read.
    pub offsets: BTreeMap<(String, i32), Option<i64>>,
    pub error: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Reading {
    pub started: DateTime<Utc>,
    pub finished: DateTime<Utc>,
    pub brokers: usize,
    pub topics: Vec<TopicReading>,
    pub groups: Vec<GroupReading>,
    /// What could not be read, in words; empty on a clean pass.
    pub problems: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("the cluster could not be reached: {0}")]
    Unreachable(String),
}

fn describe(e: &KafkaError) -> String {
    e.to_string()
}

/// Reads one pass. `known` lists topics each group read in earlier passes,
/// so a group with no members (a stopped consumer) is still read on them;
/// a group never seen before with no members is read on every topic once.
pub fn read(
    settings: &ClusterSettings,
    known: &BTreeMap<String, BTreeSet<String>>,
) -> Result<Reading, ReadError> {
    let started = Utc::now();
    let config = settings.client_config()?;
    let client: BaseConsumer = config
        .create()
        .map_err(|e| ReadError::Unreachable(describe(&e)))?;
    let metadata = client
        .fetch_metadata(None, settings.timeout)
        .map_err(|e| ReadError::Unreachable(describe(&e)))?;
    let mut problems = Vec::new();
    let mut topics: Vec<TopicReading> = metadata
        .topics()
        .iter()
        .filter(|t| !t.name().starts_with("__") && t.error().is_none())
        .map(|t| TopicReading {
            name: t.name().to_string(),
            partitions: t
                .partitions()
                .iter()
                .map(|p| PartitionReading {
                    partition: p.id(),
                    leader: (p.leader() >= 0).then_some(p.leader()),
                    replicas: p.replicas().to_vec(),
                    isr: p.isr().to_vec(),
                    log_start: None,
                    log_end: None,
                })
                .collect(),
        })
        .collect();
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    let partitions_of: BTreeMap<&str, Vec<i32>> = topics
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.partitions.iter().map(|p| p.partition).collect(),
            )
        })
        .collect();

    // 1. Groups and their committed offsets.
    let groups = match client.fetch_group_list(None, settings.timeout) {
        Ok(list) => list
            .groups()
            .iter()
            .filter(|g| g.protocol_type() == "consumer" || g.protocol_type().is_empty())
            .map(|g| {
                let mut assigned = BTreeSet::new();
                for m in g.members() {
                    if let Some(bytes) = m.assignment() {
                        match assigned_partitions(bytes) {
                            Ok(a) => assigned.extend(a.into_keys()),
                            Err(e) => problems.push(format!("group {}: {e}", g.name())),
                        }
                    }
                }
                (
                    g.name().to_string(),
                    g.state().to_string(),
                    g.members().len(),
                    assigned,
                )
            })
            .collect::<Vec<_>>(),
        Err(e) => {
            problems.push(format!(
                "consumer groups could not be listed: {}",
                describe(&e)
            ));
            Vec::new()
        }
    };
    let results = Mutex::new(Vec::with_capacity(groups.len()));
    let queue = Mutex::new(groups.into_iter());
    std::thread::scope(|s| {
        for _ in 0..GROUP_WORKERS {
            s.spawn(|| {
                loop {
                    let next = queue.lock().ok().and_then(|mut q| q.next());
                    let Some((name, state, members, assigned)) = next else {
                        break;
                    };
                    let mut wanted: BTreeSet<String> = assigned;
                    if let Some(k) = known.get(&name) {
                        wanted.extend(k.iter().cloned());
                    }
                    let discovering = wanted.is_empty();
                    if discovering {
                        wanted.extend(partitions_of.keys().map(|t| t.to_string()));
                    }
                    let reading = read_group(
                        settings,
                        &name,
                        &state,
                        members,
                        &wanted,
                        &partitions_of,
                        discovering,
                    );
                    if let Ok(mut r) = results.lock() {
                        r.push(reading);
                    }
                }
            });
        }
    });
    let mut groups = results.into_inner().unwrap_or_default();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    for g in &groups {
        if let Some(e) = &g.error {
            problems.push(format!(
                "group {}: committed offsets could not be read: {e}",
                g.name
            ));
        }
    }

    // 2. Log-start and log-end offsets, batched per leader by librdkafka.
    if let Err(e) = read_watermarks(&client, settings, &mut topics) {
        problems.push(format!("log offsets could not be read: {e}"));
    }

    Ok(Reading {
        started,
        finished: Utc::now(),
        brokers: metadata.brokers().len(),
        topics,
        groups,
        problems,
    })
}

fn read_group(
    settings: &ClusterSettings,
    name: &str,
    state: &str,
    members: usize,
    topics: &BTreeSet<String>,
    partitions_of: &BTreeMap<&str, Vec<i32>>,
    discovering: bool,
) -> GroupReading {
    let mut reading = GroupReading {
        name: name.to_string(),
        state: state.to_string(),
        members,
        offsets: BTreeMap::new(),
        error: None,
    };
    let mut tpl = TopicPartitionList::new();
    for t in topics {
        for p in partitions_of.get(t.as_str()).into_iter().flatten() {
            tpl.add_partition(t, *p);
        }
    }
    if tpl.count() == 0 {
        return reading;
    }
    // A client per group, only to name the group in OffsetFetch: it never
    // subscribes, so it never joins the group.
    let committed = settings
        .client_config()
        .map_err(|e| e.to_string())
        .and_then(|mut c| {
            c.set("group.id", name);
            c.create::<BaseConsumer>().map_err(|e| describe(&e))
        })
        .and_then(|c| {
            c.committed_offsets(tpl, settings.timeout)
                .map_err(|e| describe(&e))
        });
    match committed {
        Ok(list) => {
            let mut by_topic: BTreeMap<String, Vec<(i32, Option<i64>)>> = BTreeMap::new();
            for e in list.elements() {
                let offset = match e.offset() {
                    Offset::Offset(o) if o >= 0 => Some(o),
                    _ => None,
                };
                by_topic
                    .entry(e.topic().to_string())
                    .or_default()
                    .push((e.partition(), offset));
            }
            for (topic, parts) in by_topic {
                // While discovering, a topic the group never committed on is
                // not one it reads.
                if discovering && parts.iter().all(|(_, o)| o.is_none()) {
                    continue;
                }
                for (p, o) in parts {
                    reading.offsets.insert((topic.clone(), p), o);
                }
            }
        }
        Err(e) => reading.error = Some(e),
    }
    reading
}

fn read_watermarks(
    client: &BaseConsumer,
    settings: &ClusterSettings,
    topics: &mut [TopicReading],
) -> Result<(), String> {
    // ListOffsets with the special timestamps -2 (earliest) and -1 (latest),
    // one batched request per leader for all partitions.
    let mut ends: [BTreeMap<(String, i32), i64>; 2] = [BTreeMap::new(), BTreeMap::new()];
    // (rdkafka spells the special timestamps as the Beginning and End offsets.)
    for (i, ts) in [Offset::Beginning, Offset::End].into_iter().enumerate() {
        let mut tpl = TopicPartitionList::new();
        for t in topics.iter() {
            for p in &t.partitions {
                tpl.add_partition_offset(&t.name, p.partition, ts)
                    .map_err(|e| describe(&e))?;
            }
        }
        if tpl.count() == 0 {
            return Ok(());
        }
        let got = client
            .offsets_for_times(tpl, settings.timeout)
            .map_err(|e| describe(&e))?;
        for e in got.elements() {
            if e.error().is_ok()
                && let Offset::Offset(o) = e.offset()
                && o >= 0
            {
                ends[i].insert((e.topic().to_string(), e.partition()), o);
            }
        }
    }
    let [starts, lasts] = ends;
    for t in topics.iter_mut() {
        for p in &mut t.partitions {
            let key = (t.name.clone(), p.partition);
            p.log_start = starts.get(&key).copied();
            p.log_end = lasts.get(&key).copied();
        }
    }
    Ok(())
}
