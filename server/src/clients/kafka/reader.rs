//! One read-only pass over a cluster: topic metadata, consumer groups and
//! their committed offsets, then log-start and log-end offsets. Committed
//! offsets are read before log ends, so a fast consumer never looks ahead of
//! the end it is compared with (the negative-lag trap in the field notes).
//! The reader never joins a group, commits, or produces.
//!
//! On a cluster whose brokers batch (FindCoordinator v4, OffsetFetch v8:
//! Kafka 3.0 and later), whatever its security, committed, log-start and
//! log-end offsets go through the read's own protocol client (wire.rs):
//! many groups per request, one request per coordinator and chunk.
//! Otherwise (an older broker) through librdkafka: one OffsetFetch per
//! group, all in flight together on one client (group_offsets.rs).
//! Metadata and the group list come from librdkafka either way.

use chrono::{DateTime, Utc};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use streamkeeper::watch::consumer_protocol::assigned_partitions;
use streamkeeper::watch::health::PartitionMeta;
use streamkeeper::watch::lag::consumed::Assignments;

use super::group_offsets;
use super::progress::Progress;
use super::settings::{ClusterSettings, SettingsError};
use super::wire;

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
    /// The timestamp of its newest record, when this pass read it (see
    /// [`read`]'s `last_of`).
    pub last_message_at: Option<DateTime<Utc>>,
}

impl TopicReading {
    /// Its partitions' metadata, as the health rules read it.
    pub fn meta(&self) -> Vec<PartitionMeta> {
        self.partitions
            .iter()
            .map(|p| PartitionMeta {
                partition: p.partition,
                leader: p.leader,
                replicas: p.replicas.clone(),
                isr: p.isr.clone(),
            })
            .collect()
    }
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
    /// The topics its members are assigned, and whether every member's
    /// assignment was read.
    pub assigned: Assignments,
}

#[derive(Clone, Debug)]
pub struct Reading {
    pub started: DateTime<Utc>,
    pub finished: DateTime<Utc>,
    pub brokers: usize,
    pub topics: Vec<TopicReading>,
    pub groups: Vec<GroupReading>,
    /// Whether the group list was read: only then is a group missing from
    /// `groups` gone from the cluster, rather than unread.
    pub groups_listed: bool,
    /// What could not be read, in words; empty on a clean pass.
    pub problems: Vec<String>,
    /// How long each phase of the read took, in order (metadata, list
    /// groups, committed offsets with log start read alongside, log start
    /// alone, log end, last messages): where a slow pass spends its time.
    pub phases: Vec<(&'static str, Duration)>,
    /// Which client read the offsets.
    pub offsets_by: OffsetsBy,
}

/// The client that read a pass's offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OffsetsBy {
    /// The protocol client, batching groups (wire.rs).
    Wire(wire::Versions),
    /// librdkafka, one group a call; with the reason the wire client was not used.
    Librdkafka(String),
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
/// so their partitions without a commit show as "no commit" even when the
/// group has no members.
/// `known` names the topics each group read before; `last_of` the topics
/// whose newest record's time to read, with the log-end total it was read
/// at last (`None`: never): read again only when the total moved.
pub fn read(
    settings: &ClusterSettings,
    known: &BTreeMap<String, BTreeSet<String>>,
    last_of: &BTreeMap<String, Option<i64>>,
) -> Result<Reading, ReadError> {
    read_watched(settings, known, last_of, &Progress::default())
}

/// [`read`], telling `progress` each phase as it finishes, so a routine
/// that stops waiting can say which phase held the pass.
pub fn read_watched(
    settings: &ClusterSettings,
    known: &BTreeMap<String, BTreeSet<String>>,
    last_of: &BTreeMap<String, Option<i64>>,
    progress: &Progress,
) -> Result<Reading, ReadError> {
    let started = Utc::now();
    let mut phases = Vec::new();
    let mut mark = Instant::now();
    let mut lap = |name: &'static str, phases: &mut Vec<(&'static str, Duration)>| {
        let now = Instant::now();
        phases.push((name, now - mark));
        progress.finished(name, now - mark);
        mark = now;
    };
    let config = settings.client_config()?;
    let client: BaseConsumer = config
        .create()
        .map_err(|e| ReadError::Unreachable(describe(&e)))?;
    let metadata = client
        .fetch_metadata(None, settings.timeout)
        .map_err(|e| ReadError::Unreachable(describe(&e)))?;
    lap("metadata", &mut phases);
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
            last_message_at: None,
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
    let mut groups_listed = true;
    let groups = match client.fetch_group_list(None, settings.timeout) {
        Ok(list) => list
            .groups()
            .iter()
            .filter(|g| g.protocol_type() == "consumer" || g.protocol_type().is_empty())
            .map(|g| {
                // A member whose assignment is missing or unparsed makes
                // the group's assignments not whole (`Assignments::trusted`).
                let assigned = Assignments::of(g.members().iter().map(|m| {
                    let bytes = m.assignment()?;
                    assigned_partitions(bytes)
                        .map_err(|e| problems.push(format!("group {}: {e}", g.name())))
                        .ok()
                        .map(|a| a.into_keys().collect())
                }));
                (
                    g.name().to_string(),
                    g.state().to_string(),
                    g.members().len(),
                    assigned,
                )
            })
            .collect::<Vec<_>>(),
        Err(e) => {
            groups_listed = false;
            problems.push(format!(
                "consumer groups could not be listed: {}",
                describe(&e)
            ));
            Vec::new()
        }
    };
    lap("list groups", &mut phases);
    let names: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    let brokers: BTreeMap<i32, String> = metadata
        .brokers()
        .iter()
        .map(|b| (b.id(), format!("{}:{}", b.host(), b.port())))
        .collect();
    let wired = Wired::try_new(settings, &brokers);
    let offsets_by = match &wired {
        Ok(w) => OffsetsBy::Wire(w.versions),
        Err(why) => OffsetsBy::Librdkafka(why.clone()),
    };
    let placed = placed(&topics, &brokers);
    let (mut fetched, starts, starts_took) = match &wired {
        // Committed offsets and log starts together, on their own
        // connections: the broker answers each connection in turn.
        Ok(w) => {
            let (fetched, (starts, took)) = w.runtime.block_on(async {
                tokio::join!(
                    wire::committed(
                        &w.bootstrap,
                        &w.security,
                        w.versions,
                        &names,
                        settings.timeout
                    ),
                    async {
                        let t = Instant::now();
                        let got = wire::offsets_at(
                            &placed,
                            &w.security,
                            w.versions,
                            wire::EARLIEST,
                            settings.timeout,
                        )
                        .await;
                        (got, t.elapsed())
                    }
                )
            });
            (
                fetched,
                Ok(partly(starts, "log-start", &mut problems)),
                Some(took),
            )
        }
        // One client, one queue, every group's OffsetFetch in flight
        // together; meanwhile, on another thread, the log-start offsets.
        Err(_) => std::thread::scope(|scope| {
            let starts = scope.spawn(|| {
                let t = Instant::now();
                (
                    offsets_at(&client, settings, &topics, Offset::Beginning),
                    t.elapsed(),
                )
            });
            let fetched = group_offsets::list(&client, &names, settings.timeout);
            match starts.join() {
                Ok((starts, took)) => (fetched, starts, Some(took)),
                Err(_) => (fetched, Err("the log-start reader panicked".into()), None),
            }
        }),
    };
    // Unlike log ends, log starts may be read before or after the commits
    // (lag counts from the larger of the two); reading them alongside
    // halves the wait.
    lap("committed offsets, log start alongside", &mut phases);
    if let Some(took) = starts_took {
        phases.push(("log start (alongside)", took));
    }
    let mut readings = Vec::with_capacity(groups.len());
    for (name, state, members, assigned) in groups {
        let mut reading = GroupReading {
            name: name.clone(),
            state,
            members,
            offsets: BTreeMap::new(),
            error: None,
            assigned: assigned.clone(),
        };
        match fetched.remove(&name) {
            Some(Ok(offsets)) => {
                // Partitions of topics the group reads (now or before) that it
                // never committed are "no commit", not absent.
                let mut topics: BTreeSet<String> = assigned.topics;
                if let Some(k) = known.get(&name) {
                    topics.extend(k.iter().cloned());
                }
                topics.extend(offsets.iter().map(|((t, _), _)| t.clone()));
                for t in &topics {
                    for p in partitions_of.get(t.as_str()).into_iter().flatten() {
                        reading.offsets.insert((t.clone(), *p), None);
                    }
                }
                reading.offsets.extend(offsets);
            }
            Some(Err(e)) => reading.error = Some(e),
            None => reading.error = Some("no answer".into()),
        }
        readings.push(reading);
    }
    let mut groups = readings;
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    for g in &groups {
        if let Some(e) = &g.error {
            problems.push(format!(
                "group {}: committed offsets could not be read: {e}",
                g.name
            ));
        }
    }

    // 2. Log-end offsets (after the commits), batched per leader by
    // librdkafka; a partition gets its offsets only when both were read.
    let ends = match &wired {
        Ok(w) => Ok(partly(
            w.runtime.block_on(wire::offsets_at(
                &placed,
                &w.security,
                w.versions,
                wire::LATEST,
                settings.timeout,
            )),
            "log-end",
            &mut problems,
        )),
        Err(_) => offsets_at(&client, settings, &topics, Offset::End),
    };
    lap("log end", &mut phases);
    match starts.and_then(|s| ends.map(|e| (s, e))) {
        Ok((starts, ends)) => {
            for t in topics.iter_mut() {
                for p in &mut t.partitions {
                    let key = (t.name.clone(), p.partition);
                    p.log_start = starts.get(&key).copied();
                    p.log_end = ends.get(&key).copied();
                }
            }
        }
        Err(e) => problems.push(format!("log offsets could not be read: {e}")),
    }

    // 3. The newest record's time of the topics that expect messages.
    if let Err(e) = read_last_messages(settings, &mut topics, last_of) {
        problems.push(format!("the newest records' times could not be read: {e}"));
    }
    lap("last messages", &mut phases);

    Ok(Reading {
        started,
        finished: Utc::now(),
        brokers: metadata.brokers().len(),
        topics,
        groups,
        groups_listed,
        problems,
        phases,
        offsets_by,
    })
}

/// What the wire client needs for one pass: a runtime of its own (the read
/// runs on a blocking thread), a broker to ask, the versions it speaks and
/// the cluster's security, its references resolved for this pass.
struct Wired {
    runtime: tokio::runtime::Runtime,
    bootstrap: String,
    versions: wire::Versions,
    security: wire::Security,
}

impl Wired {
    /// The wire client, if this cluster can be read with it; otherwise why
    /// not, and librdkafka reads it.
    fn try_new(
        settings: &ClusterSettings,
        brokers: &BTreeMap<i32, String>,
    ) -> Result<Self, String> {
        let security = wire::Security::of(settings).map_err(|e| e.to_string())?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("no runtime for the protocol client: {e}"))?;
        // Any broker answers FindCoordinator; the versions are the first
        // answering one's (a cluster mid-upgrade falls back next pass, at
        // worst, through a request error).
        let mut why = String::from("no broker in the metadata");
        for addr in brokers.values() {
            let deadline = tokio::time::Instant::now() + settings.timeout;
            match runtime.block_on(wire::versions(addr, &security, deadline)) {
                Ok(versions) => {
                    return Ok(Wired {
                        bootstrap: addr.clone(),
                        versions,
                        runtime,
                        security,
                    });
                }
                // Settings every broker answers the same: trying the next
                // one (a refused sign-in each) could lock the account.
                Err(e @ (wire::WireError::Unsupported { .. } | wire::WireError::SignIn { .. })) => {
                    return Err(e.to_string());
                }
                Err(e) => why = e.to_string(),
            }
        }
        Err(why)
    }
}

/// Partitions with a leader the metadata names, with its address.
fn placed(topics: &[TopicReading], brokers: &BTreeMap<i32, String>) -> Vec<wire::Placed> {
    topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().filter_map(|p| {
                Some(wire::Placed {
                    topic: t.name.clone(),
                    partition: p.partition,
                    leader: brokers.get(&p.leader?)?.clone(),
                })
            })
        })
        .collect()
}

/// The offsets read; the requests that failed become problems (their
/// partitions stay unknown).
fn partly(
    (offsets, failed): (BTreeMap<(String, i32), i64>, Vec<String>),
    what: &str,
    problems: &mut Vec<String>,
) -> BTreeMap<(String, i32), i64> {
    problems.extend(
        failed
            .into_iter()
            .map(|f| format!("some {what} offsets could not be read: {f}")),
    );
    offsets
}

/// Every partition's offset at `at` (the special timestamps: log start or
/// log end), one batched ListOffsets per leader.
fn offsets_at(
    client: &BaseConsumer,
    settings: &ClusterSettings,
    topics: &[TopicReading],
    at: Offset,
) -> Result<BTreeMap<(String, i32), i64>, String> {
    let mut tpl = TopicPartitionList::new();
    for t in topics {
        for p in &t.partitions {
            tpl.add_partition_offset(&t.name, p.partition, at)
                .map_err(|e| describe(&e))?;
        }
    }
    let mut out = BTreeMap::new();
    if tpl.count() == 0 {
        return Ok(out);
    }
    let got = client
        .offsets_for_times(tpl, settings.timeout)
        .map_err(|e| describe(&e))?;
    for e in got.elements() {
        if e.error().is_ok()
            && let Offset::Offset(o) = e.offset()
            && o >= 0
        {
            out.insert((e.topic().to_string(), e.partition()), o);
        }
    }
    Ok(out)
}

/// Records read back from each partition's end: a few, because the last
/// offset may be a transaction marker, which is never delivered.
const TAIL: i64 = 3;

/// Reads the timestamp of the newest record of each topic in `last_of`
/// whose log end moved since it was read (or that was never read): a
/// consumer assigned to each partition a few records before its end, so
/// it joins nothing and commits nothing. A partition is done
/// when its position reaches the end; a topic gets the newest time over
/// its partitions, or none if any of them was not read in time.
fn read_last_messages(
    settings: &ClusterSettings,
    topics: &mut [TopicReading],
    last_of: &BTreeMap<String, Option<i64>>,
) -> Result<(), String> {
    let mut tpl = TopicPartitionList::new();
    let mut ends: BTreeMap<(String, i32), i64> = BTreeMap::new();
    for t in topics.iter() {
        let Some(read_at) = last_of.get(&t.name) else {
            continue;
        };
        let total: Option<i64> = t.partitions.iter().map(|p| p.log_end).sum();
        if total.is_none() || (read_at.is_some() && *read_at == total) {
            continue;
        }
        for p in &t.partitions {
            if let (Some(start), Some(end)) = (p.log_start, p.log_end)
                && end > start
            {
                tpl.add_partition_offset(
                    &t.name,
                    p.partition,
                    Offset::Offset((end - TAIL).max(start)),
                )
                .map_err(|e| describe(&e))?;
                ends.insert((t.name.clone(), p.partition), end);
            }
        }
    }
    if ends.is_empty() {
        return Ok(());
    }
    // librdkafka assigns only with a group id; an assign-only consumer
    // never sends JoinGroup, and with auto-commit off it commits nothing,
    // so the group never exists on the broker.
    let consumer: BaseConsumer = settings
        .client_config()
        .map_err(|e| e.to_string())?
        .set("group.id", "streamkeeper-tail-reader")
        .set("enable.partition.eof", "false")
        .set("fetch.wait.max.ms", "50")
        .create()
        .map_err(|e| describe(&e))?;
    consumer.assign(&tpl).map_err(|e| describe(&e))?;
    let deadline = std::time::Instant::now() + settings.timeout;
    let mut newest: BTreeMap<(String, i32), i64> = BTreeMap::new();
    let mut pending: BTreeSet<(String, i32)> = ends.keys().cloned().collect();
    while !pending.is_empty() && std::time::Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(std::time::Duration::from_millis(100))
            && let Some(ms) = m.timestamp().to_millis()
        {
            let key = (m.topic().to_string(), m.partition());
            let e = newest.entry(key).or_insert(ms);
            *e = (*e).max(ms);
        }
        // Positions pass markers that are never delivered.
        if let Ok(positions) = consumer.position() {
            for e in positions.elements() {
                let key = (e.topic().to_string(), e.partition());
                if let (Offset::Offset(at), Some(end)) = (e.offset(), ends.get(&key))
                    && at >= *end
                {
                    pending.remove(&key);
                }
            }
        }
    }
    for t in topics.iter_mut() {
        let mine: Vec<&(String, i32)> = ends.keys().filter(|(n, _)| *n == t.name).collect();
        if mine.is_empty() || mine.iter().any(|k| pending.contains(*k)) {
            continue;
        }
        t.last_message_at = mine
            .iter()
            .filter_map(|k| newest.get(*k))
            .max()
            .and_then(|ms| DateTime::from_timestamp_millis(*ms));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::kafka::settings::SecretRef;
    use std::io::{Read, Write};
    use streamkeeper::platform::credential::CredentialPolicy;

    /// A login whose reference does not resolve leaves the pass to
    /// librdkafka, which then says the same; the reason names the
    /// reference, not a secret.
    #[test]
    fn security_that_cannot_be_set_up_is_read_by_librdkafka() {
        let p = CredentialPolicy::default();
        let cred = || SecretRef::checked("env:STREAMKEEPER_CRED_SURELY_UNSET_X", &p).ok();
        let sasl = ClusterSettings::new(
            "k:9092",
            super::super::settings::Protocol::SaslSsl,
            None,
            cred(),
            cred(),
            false,
        )
        .expect("settings");
        let why = Wired::try_new(&sasl, &BTreeMap::from([(1, "k:9092".to_string())]))
            .err()
            .expect("librdkafka");
        assert!(why.contains("STREAMKEEPER_CRED_SURELY_UNSET_X"), "{why}");
    }

    /// A broker before KIP-699 (FindCoordinator v3 at most), on a real
    /// socket: it answers ApiVersions and the pass falls back.
    #[test]
    fn a_broker_without_the_batching_versions_is_read_by_librdkafka() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let broker = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            let mut size = [0_u8; 4];
            s.read_exact(&mut size).expect("size");
            let mut request = vec![0_u8; usize::try_from(i32::from_be_bytes(size)).expect("size")];
            s.read_exact(&mut request).expect("request");
            // ApiVersions v0: correlation id, no error, three APIs.
            let mut body = request[4..8].to_vec();
            body.extend(0_i16.to_be_bytes());
            body.extend(3_i32.to_be_bytes());
            for (key, max) in [(10_i16, 3_i16), (9, 7), (2, 5)] {
                body.extend(key.to_be_bytes());
                body.extend(0_i16.to_be_bytes());
                body.extend(max.to_be_bytes());
            }
            s.write_all(&i32::try_from(body.len()).expect("len").to_be_bytes())
                .expect("write");
            s.write_all(&body).expect("write");
        });
        let settings = ClusterSettings::plaintext(&addr).expect("settings");
        let why = Wired::try_new(&settings, &BTreeMap::from([(1, addr.clone())]))
            .err()
            .expect("too old");
        assert!(why.contains("FindCoordinator v4"), "{why}");
        broker.join().expect("broker");
    }
}
