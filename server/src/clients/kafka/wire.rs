//! The read's Kafka-protocol client of its own, for what librdkafka cannot
//! batch: many groups per FindCoordinator (KIP-699) and per OffsetFetch
//! (KIP-709) request, where librdkafka's ListConsumerGroupOffsets takes one
//! group a call; and ListOffsets per leader spread over a few connections,
//! since a broker answers one request per connection at a time and reads
//! the partitions of one request only a few at a time.
//!
//! Over TLS and SASL as over plaintext (link.rs, sasl.rs); a broker
//! without the versions below is read through librdkafka as before (see
//! reader.rs). `kafka-protocol` encodes and decodes the messages; this
//! module frames them (a 4-byte size, then the header and body), matches
//! correlation ids and bounds each exchange by the pass's timeout.
//! Connections live for one phase of one pass: opening one on the
//! cluster's network costs a round trip (and a handshake), against a pass
//! every 15 s.

mod conn;
mod link;
mod sasl;

#[cfg(test)]
use conn::{AnswerError, FrameError, decode_answer, encode_frame, read_frame};
pub use conn::{Call, Conn};
pub use link::{Io, Login, Security};

use kafka_protocol::ResponseError;
use kafka_protocol::messages::find_coordinator_request::FindCoordinatorRequest;
use kafka_protocol::messages::list_offsets_request::{
    ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic,
};
use kafka_protocol::messages::offset_fetch_request::{OffsetFetchRequest, OffsetFetchRequestGroup};
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, BrokerId, GroupId, TopicName};
use kafka_protocol::protocol::{Message, StrBytes};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use streamkeeper::watch::reach::Unreachable;
use tokio::time::Instant;

/// Groups per OffsetFetch: large enough that a thousand groups take a few
/// requests, small enough that the requests spread over the connections.
const GROUPS_PER_REQUEST: usize = 50;

/// Group keys per FindCoordinator.
const KEYS_PER_REQUEST: usize = 1_000;

/// Partitions per ListOffsets.
const PARTITIONS_PER_REQUEST: usize = 500;

/// Connections per broker and phase: requests on one connection are
/// answered one after another, so this is the read's parallelism per broker.
const CONNECTIONS: usize = 8;

/// The special ListOffsets timestamps.
pub const EARLIEST: i64 = -2;
pub const LATEST: i64 = -1;

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("{addr}: {source}")]
    Io {
        addr: String,
        source: std::io::Error,
    },
    #[error("{0}: no answer within the timeout")]
    Timeout(String),
    #[error("{addr}: an answer of {size} bytes is out of bounds")]
    FrameSize { addr: String, size: i64 },
    #[error("{addr}: answer to request {got}, expected {expected}")]
    Correlation {
        addr: String,
        got: i32,
        expected: i32,
    },
    #[error("{addr}: {what} could not be encoded or decoded: {message}")]
    Codec {
        addr: String,
        what: &'static str,
        message: String,
    },
    #[error("{addr}: ApiVersions failed: {error}")]
    Versions { addr: String, error: ResponseError },
    /// The TLS handshake failed: `sentence` as the connection test says
    /// it, then the handshake's own error.
    #[error("{addr}: {sentence} ({detail})")]
    Tls {
        addr: String,
        why: Unreachable,
        sentence: String,
        detail: String,
    },
    /// The broker refused the sign-in or the mechanism: as the connection
    /// test says it, then the broker's own words.
    #[error("{addr}: {} ({detail})", why.sentence())]
    SignIn {
        addr: String,
        why: Unreachable,
        detail: String,
    },
    #[error("the broker lacks {api} v{min} or later (it has {has})")]
    Unsupported {
        api: &'static str,
        min: i16,
        has: String,
    },
}

/// The versions both sides speak, decided once per pass from the
/// bootstrap broker's ApiVersions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Versions {
    pub find_coordinator: i16,
    pub offset_fetch: i16,
    pub list_offsets: i16,
}

impl Versions {
    /// The newest version of each API that both the broker (`ranges`: api
    /// key → min, max) and this crate speak, if it is at least the one that
    /// batches: FindCoordinator v4 (KIP-699), OffsetFetch v8 (KIP-709),
    /// ListOffsets v1 (an offset per partition, not a list).
    pub fn choose(ranges: &HashMap<i16, (i16, i16)>) -> Result<Self, WireError> {
        let pick = |key: ApiKey, api: &'static str, min: i16, ours: i16| {
            let (lo, hi) = ranges.get(&(key as i16)).copied().unwrap_or((-1, -1));
            let v = hi.min(ours);
            if v < min || v < lo {
                return Err(WireError::Unsupported {
                    api,
                    min,
                    has: if hi < 0 {
                        "none".into()
                    } else {
                        format!("v{lo}-v{hi}")
                    },
                });
            }
            Ok(v)
        };
        Ok(Versions {
            find_coordinator: pick(
                ApiKey::FindCoordinator,
                "FindCoordinator",
                4,
                FindCoordinatorRequest::VERSIONS.max,
            )?,
            offset_fetch: pick(
                ApiKey::OffsetFetch,
                "OffsetFetch",
                8,
                OffsetFetchRequest::VERSIONS.max,
            )?,
            list_offsets: pick(
                ApiKey::ListOffsets,
                "ListOffsets",
                1,
                ListOffsetsRequest::VERSIONS.max,
            )?,
        })
    }
}

/// The broker's versions, from ApiVersions v0 (which every broker answers
/// as it is, whatever its newest version).
pub async fn versions(
    addr: &str,
    security: &Security,
    deadline: Instant,
) -> Result<Versions, WireError> {
    let mut conn = Conn::open(addr, security, deadline).await?;
    let answer = conn
        .call(&ApiVersionsRequest::default(), 0, deadline)
        .await?;
    if let Some(error) = ResponseError::try_from_code(answer.error_code) {
        return Err(WireError::Versions {
            addr: addr.to_string(),
            error,
        });
    }
    let ranges = answer
        .api_keys
        .iter()
        .map(|k| (k.api_key, (k.min_version, k.max_version)))
        .collect();
    Versions::choose(&ranges)
}

/// Sends `requests` to `addr` over up to [`CONNECTIONS`] connections, each
/// taking every n-th request in turn; answers come back in the requests'
/// order. A connection that fails fails its remaining requests with the same
/// error (never a partial answer taken for a whole one).
async fn exchange<R>(
    addr: &str,
    security: &Security,
    requests: Vec<R>,
    version: i16,
    deadline: Instant,
) -> Vec<Result<R::Answer, String>>
where
    R: Call + Send + Sync + 'static,
    R::Answer: Send + 'static,
{
    let count = requests.len();
    let lanes = CONNECTIONS.min(count);
    let mut shares: Vec<Vec<(usize, R)>> = (0..lanes).map(|_| Vec::new()).collect();
    for (i, r) in requests.into_iter().enumerate() {
        shares[i % lanes].push((i, r));
    }
    let mut tasks = tokio::task::JoinSet::new();
    for share in shares {
        let addr = addr.to_string();
        let security = security.clone();
        tasks.spawn(async move {
            let mut out = Vec::with_capacity(share.len());
            let mut conn = match Conn::open(&addr, &security, deadline).await {
                Ok(c) => c,
                Err(e) => {
                    let why = e.to_string();
                    return share
                        .into_iter()
                        .map(|(i, _)| (i, Err(why.clone())))
                        .collect();
                }
            };
            let mut broken: Option<String> = None;
            for (i, request) in share {
                if let Some(why) = &broken {
                    out.push((i, Err(why.clone())));
                    continue;
                }
                match conn.call(&request, version, deadline).await {
                    Ok(answer) => out.push((i, Ok(answer))),
                    Err(e) => {
                        let why = e.to_string();
                        out.push((i, Err(why.clone())));
                        broken = Some(why);
                    }
                }
            }
            out
        });
    }
    let mut answers: Vec<Option<Result<R::Answer, String>>> = (0..count).map(|_| None).collect();
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(share) => {
                for (i, a) in share {
                    answers[i] = Some(a);
                }
            }
            // A panicked lane leaves its answers unset: reported below.
            Err(_) => continue,
        }
    }
    answers
        .into_iter()
        .map(|a| a.unwrap_or_else(|| Err(format!("{addr}: the request's task failed"))))
        .collect()
}

/// (topic, partition) → committed offset (`None`: never committed).
pub type Offsets = Vec<((String, i32), Option<i64>)>;

fn described(error: ResponseError) -> String {
    format!("Broker: {error} (error code {})", error.code())
}

/// Coordinator errors worth another FindCoordinator: the group's
/// coordinator moved or is still loading.
fn moved(code: i16) -> bool {
    matches!(
        ResponseError::try_from_code(code),
        Some(
            ResponseError::CoordinatorLoadInProgress
                | ResponseError::CoordinatorNotAvailable
                | ResponseError::NotCoordinator
        )
    )
}

/// How many times a group whose coordinator moved is looked up again.
const ATTEMPTS: usize = 3;

/// Every committed offset of `groups`: FindCoordinator with many keys at
/// `bootstrap`, then one OffsetFetch of many groups per coordinator (in
/// chunks). Each group gets its offsets or the reason it has none; a group
/// whose coordinator failed is an error, never empty offsets. Partitions
/// the broker answers with an error are left out, as librdkafka's path
/// does.
pub async fn committed(
    bootstrap: &str,
    security: &Security,
    versions: Versions,
    groups: &[String],
    timeout: Duration,
) -> HashMap<String, Result<Offsets, String>> {
    let deadline = Instant::now() + timeout;
    let mut out: HashMap<String, Result<Offsets, String>> = HashMap::new();
    let mut todo: Vec<String> = groups.to_vec();
    for attempt in 0..ATTEMPTS {
        if todo.is_empty() {
            break;
        }
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let coordinators = coordinators(bootstrap, security, versions, &todo, deadline).await;
        let mut by_coordinator: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut again = Vec::new();
        for g in todo {
            match coordinators.get(&g) {
                Some(Ok(addr)) => by_coordinator.entry(addr.clone()).or_default().push(g),
                Some(Err((code, why))) if moved(*code) && attempt + 1 < ATTEMPTS => {
                    out.insert(g.clone(), Err(why.clone()));
                    again.push(g);
                }
                Some(Err((_, why))) => {
                    out.insert(g, Err(why.clone()));
                }
                None => {
                    out.insert(g, Err("no coordinator in the answer".into()));
                }
            }
        }
        let fetches: Vec<_> = by_coordinator
            .into_iter()
            .map(|(addr, gs)| {
                let requests: Vec<OffsetFetchRequest> = gs
                    .chunks(GROUPS_PER_REQUEST)
                    .map(|chunk| {
                        OffsetFetchRequest::default()
                            .with_groups(
                                chunk
                                    .iter()
                                    .map(|g| {
                                        // No topics: every partition the group committed.
                                        OffsetFetchRequestGroup::default()
                                            .with_group_id(GroupId(StrBytes::from_string(
                                                g.clone(),
                                            )))
                                            .with_topics(None)
                                    })
                                    .collect(),
                            )
                            .with_require_stable(false)
                    })
                    .collect();
                let version = versions.offset_fetch;
                let security = security.clone();
                let task = tokio::spawn(async move {
                    exchange(&addr, &security, requests, version, deadline).await
                });
                (gs, task)
            })
            .collect();
        for (gs, task) in fetches {
            let answers = task.await.unwrap_or_else(|_| {
                (0..gs.len().div_ceil(GROUPS_PER_REQUEST))
                    .map(|_| Err("the coordinator's task failed".to_string()))
                    .collect()
            });
            for (chunk, answer) in gs.chunks(GROUPS_PER_REQUEST).zip(answers) {
                let answer = match answer {
                    Ok(a) => a,
                    Err(why) => {
                        for g in chunk {
                            out.insert(g.clone(), Err(why.clone()));
                        }
                        continue;
                    }
                };
                let mut seen: HashMap<&str, ()> = HashMap::new();
                for group in answer.groups {
                    let name = group.group_id.0.as_str().to_string();
                    let Some(g) = chunk.iter().find(|g| **g == name) else {
                        continue;
                    };
                    seen.insert(g.as_str(), ());
                    if let Some(error) = ResponseError::try_from_code(group.error_code) {
                        if moved(group.error_code) && attempt + 1 < ATTEMPTS {
                            again.push(g.clone());
                        }
                        out.insert(g.clone(), Err(described(error)));
                        continue;
                    }
                    let mut offsets = Vec::new();
                    for t in group.topics {
                        let topic = t.name.0.as_str().to_string();
                        for p in t.partitions {
                            if p.error_code != 0 {
                                continue;
                            }
                            offsets.push((
                                (topic.clone(), p.partition_index),
                                (p.committed_offset >= 0).then_some(p.committed_offset),
                            ));
                        }
                    }
                    out.insert(g.clone(), Ok(offsets));
                }
                for g in chunk {
                    if !seen.contains_key(g.as_str()) {
                        out.insert(
                            g.clone(),
                            Err("the group is missing from the answer".into()),
                        );
                    }
                }
            }
        }
        todo = again;
    }
    out
}

/// Each group's coordinator address, or the error code and reason.
async fn coordinators(
    bootstrap: &str,
    security: &Security,
    versions: Versions,
    groups: &[String],
    deadline: Instant,
) -> HashMap<String, Result<String, (i16, String)>> {
    let requests: Vec<FindCoordinatorRequest> = groups
        .chunks(KEYS_PER_REQUEST)
        .map(|chunk| {
            FindCoordinatorRequest::default()
                .with_key_type(0)
                .with_coordinator_keys(
                    chunk
                        .iter()
                        .map(|g| StrBytes::from_string(g.clone()))
                        .collect(),
                )
        })
        .collect();
    let answers = exchange(
        bootstrap,
        security,
        requests,
        versions.find_coordinator,
        deadline,
    )
    .await;
    let mut out = HashMap::new();
    for (chunk, answer) in groups.chunks(KEYS_PER_REQUEST).zip(answers) {
        match answer {
            Ok(a) => {
                for c in a.coordinators {
                    let key = c.key.as_str().to_string();
                    let found = match ResponseError::try_from_code(c.error_code) {
                        Some(error) => Err((c.error_code, described(error))),
                        None => Ok(format!("{}:{}", c.host.as_str(), c.port)),
                    };
                    out.insert(key, found);
                }
            }
            Err(why) => {
                for g in chunk {
                    // Not a coordinator error: the lookup itself failed.
                    out.insert(g.clone(), Err((0, why.clone())));
                }
            }
        }
    }
    out
}

/// A partition to read, with its leader's address.
#[derive(Clone, Debug)]
pub struct Placed {
    pub topic: String,
    pub partition: i32,
    pub leader: String,
}

/// Every partition's offset at `timestamp` ([`EARLIEST`] or [`LATEST`]),
/// one request per leader and chunk, chunks spread over connections.
/// Partitions whose request or answer failed are absent (their offsets
/// unknown, never zero); the failures come back in words.
pub async fn offsets_at(
    partitions: &[Placed],
    security: &Security,
    versions: Versions,
    timestamp: i64,
    timeout: Duration,
) -> (BTreeMap<(String, i32), i64>, Vec<String>) {
    let deadline = Instant::now() + timeout;
    let mut by_leader: BTreeMap<&str, Vec<&Placed>> = BTreeMap::new();
    for p in partitions {
        by_leader.entry(p.leader.as_str()).or_default().push(p);
    }
    let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    let reads: Vec<_> = by_leader
        .into_iter()
        .map(|(addr, ps)| {
            let requests: Vec<ListOffsetsRequest> = ps
                .chunks(PARTITIONS_PER_REQUEST)
                .map(|chunk| {
                    let mut topics: BTreeMap<&str, Vec<ListOffsetsPartition>> = BTreeMap::new();
                    for p in chunk {
                        topics.entry(p.topic.as_str()).or_default().push(
                            ListOffsetsPartition::default()
                                .with_partition_index(p.partition)
                                .with_current_leader_epoch(-1)
                                .with_timestamp(timestamp),
                        );
                    }
                    ListOffsetsRequest::default()
                        .with_replica_id(BrokerId(-1))
                        // READ_COMMITTED, as librdkafka's consumer reads by
                        // default: the log end is the last stable offset.
                        .with_isolation_level(1)
                        .with_timeout_ms(timeout_ms)
                        .with_topics(
                            topics
                                .into_iter()
                                .map(|(t, ps)| {
                                    ListOffsetsTopic::default()
                                        .with_name(TopicName(StrBytes::from_string(t.to_string())))
                                        .with_partitions(ps)
                                })
                                .collect(),
                        )
                })
                .collect();
            let (addr, version) = (addr.to_string(), versions.list_offsets);
            let security = security.clone();
            tokio::spawn(
                async move { exchange(&addr, &security, requests, version, deadline).await },
            )
        })
        .collect();
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    for read in reads {
        let Ok(answers) = read.await else {
            problems.push("a leader's task failed".into());
            continue;
        };
        for answer in answers {
            match answer {
                Ok(a) => {
                    for t in a.topics {
                        let topic = t.name.0.as_str().to_string();
                        for p in t.partitions {
                            if p.error_code == 0 && p.offset >= 0 {
                                out.insert((topic.clone(), p.partition_index), p.offset);
                            }
                        }
                    }
                }
                Err(why) => problems.push(why),
            }
        }
    }
    (out, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::ApiVersionsResponse;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    /// An ApiVersions v0 answer framed as a broker frames it, written out
    /// by hand from the protocol guide (not by the crate under test): size,
    /// correlation id, error code, then (api key, min, max) per API.
    fn versions_answer(id: i32, apis: &[(i16, i16, i16)]) -> Vec<u8> {
        let mut body = id.to_be_bytes().to_vec();
        body.extend(0_i16.to_be_bytes());
        body.extend(i32::try_from(apis.len()).expect("count").to_be_bytes());
        for (key, min, max) in apis {
            body.extend(key.to_be_bytes());
            body.extend(min.to_be_bytes());
            body.extend(max.to_be_bytes());
        }
        let mut frame = i32::try_from(body.len())
            .expect("size")
            .to_be_bytes()
            .to_vec();
        frame.extend(body);
        frame
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[test]
    fn a_request_frame_starts_with_its_size_and_header() {
        let frame =
            encode_frame(&OffsetFetchRequest::default().with_groups(vec![]), 8, 7).expect("frame");
        let size = i32::from_be_bytes(frame[..4].try_into().expect("4 bytes"));
        assert_eq!(usize::try_from(size).expect("size"), frame.len() - 4);
        // api key, version, correlation id: big-endian, in that order.
        assert_eq!(&frame[4..6], &(ApiKey::OffsetFetch as i16).to_be_bytes());
        assert_eq!(&frame[6..8], &8_i16.to_be_bytes());
        assert_eq!(&frame[8..12], &7_i32.to_be_bytes());
    }

    #[tokio::test]
    async fn an_answer_split_across_reads_is_put_back_together() {
        let bytes = versions_answer(1, &[(ApiKey::OffsetFetch as i16, 0, 9)]);
        let (client, mut broker) = tokio::io::duplex(8);
        let writer = tokio::spawn(async move {
            // The request first, as a broker reads it: its size, then the rest.
            let mut size = [0_u8; 4];
            broker.read_exact(&mut size).await.expect("size");
            let mut request = vec![0_u8; usize::try_from(i32::from_be_bytes(size)).expect("size")];
            broker.read_exact(&mut request).await.expect("request");
            // Then the answer byte by byte, its size included.
            for b in bytes {
                broker.write_all(&[b]).await.expect("write");
                tokio::task::yield_now().await;
            }
        });
        let mut conn = Conn::new(client, "test");
        let got = conn
            .call(&ApiVersionsRequest::default(), 0, far())
            .await
            .expect("answer");
        assert_eq!(got.api_keys.len(), 1);
        assert_eq!(got.api_keys[0].max_version, 9);
        drop(conn);
        writer.await.expect("writer");
    }

    #[tokio::test]
    async fn an_answer_to_another_request_is_refused() {
        let bytes = versions_answer(41, &[]);
        let (client, mut broker) = tokio::io::duplex(1 << 16);
        broker.write_all(&bytes).await.expect("write");
        let mut conn = Conn::new(client, "test");
        let e = conn
            .call(&ApiVersionsRequest::default(), 0, far())
            .await
            .expect_err("id 41 is not id 1");
        assert!(
            matches!(
                e,
                WireError::Correlation {
                    got: 41,
                    expected: 1,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn sizes_out_of_bounds_are_refused_before_allocating() {
        for size in [-1_i32, 0, 3, i32::MAX] {
            let mut bytes = size.to_be_bytes().to_vec();
            bytes.extend([0_u8; 8]);
            let e = read_frame(&mut bytes.as_slice())
                .await
                .expect_err("refused");
            assert!(
                matches!(e, FrameError::Size(s) if s == i64::from(size)),
                "{size}: {e:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_stream_that_ends_mid_answer_is_an_error_not_an_answer() {
        let mut bytes = versions_answer(1, &[(2, 0, 6)]);
        bytes.truncate(bytes.len() - 1);
        let e = read_frame(&mut bytes.as_slice()).await.expect_err("short");
        assert!(
            matches!(&e, FrameError::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof),
            "{e:?}"
        );
    }

    #[test]
    fn a_body_cut_short_is_a_codec_error() {
        // Two APIs announced, one and a half sent.
        let full = versions_answer(1, &[(2, 0, 6), (9, 0, 9)]);
        let body = &full[4..full.len() - 3];
        let e = decode_answer::<ApiVersionsResponse>(body, 0, 1).expect_err("short");
        assert!(matches!(e, AnswerError::Codec(_)), "{e:?}");
    }

    #[tokio::test]
    async fn a_silent_broker_times_out() {
        let (client, _broker) = tokio::io::duplex(1 << 16);
        let mut conn = Conn::new(client, "quiet:9092");
        let e = conn
            .call(
                &ApiVersionsRequest::default(),
                0,
                Instant::now() + Duration::from_millis(50),
            )
            .await
            .expect_err("no answer");
        assert!(
            matches!(e, WireError::Timeout(ref a) if a == "quiet:9092"),
            "{e:?}"
        );
    }

    #[test]
    fn versions_need_the_batching_ones() {
        let ranges = |fc: i16, of: i16, lo: i16| {
            HashMap::from([
                (ApiKey::FindCoordinator as i16, (0, fc)),
                (ApiKey::OffsetFetch as i16, (0, of)),
                (ApiKey::ListOffsets as i16, (0, lo)),
            ])
        };
        // nisshi 0.8.1's.
        assert_eq!(
            Versions::choose(&ranges(6, 9, 6)).expect("enough"),
            Versions {
                find_coordinator: 6,
                offset_fetch: 9,
                list_offsets: 6
            }
        );
        // Newer than this crate: its newest.
        let newer = Versions::choose(&ranges(6, 99, 99)).expect("enough");
        assert_eq!(newer.offset_fetch, OffsetFetchRequest::VERSIONS.max);
        assert_eq!(newer.list_offsets, ListOffsetsRequest::VERSIONS.max);
        // Before KIP-709 (Kafka 2.8 and older): librdkafka's path.
        let old = Versions::choose(&ranges(3, 7, 6)).expect_err("too old");
        assert!(
            matches!(
                old,
                WireError::Unsupported {
                    api: "FindCoordinator",
                    ..
                }
            ),
            "{old:?}"
        );
        assert!(Versions::choose(&ranges(4, 7, 6)).is_err());
        assert!(Versions::choose(&HashMap::new()).is_err());
    }
}
