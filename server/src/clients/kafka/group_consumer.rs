//! The one consumer that joins a group: it reads a topic as a member of a
//! named group and commits offsets, explicitly, only when told. Everything
//! else in `clients::kafka` is read-only (no group, no commit, no produce);
//! this exists for the OpenLineage Kafka transport, which producers fill and
//! Streamkeeper drains (docs/security.md).

use super::settings::{ClusterSettings, SettingsError};
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// One record as read: where it was, and its value (`None`: a tombstone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub partition: i32,
    pub offset: i64,
    pub value: Option<Vec<u8>>,
}

#[derive(Debug, thiserror::Error)]
pub enum GroupError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("Kafka: {0}")]
    Kafka(#[from] KafkaError),
    #[error("the commit did not finish: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// A member of `group` reading `topic`; auto-commit and the offset store
/// off (from the read-only settings), so nothing is committed behind the
/// caller's back; a new group starts at the earliest offset, so events
/// produced before the first start are read too.
pub struct GroupConsumer {
    consumer: Arc<StreamConsumer>,
    topic: String,
}

impl GroupConsumer {
    pub fn join(settings: &ClusterSettings, group: &str, topic: &str) -> Result<Self, GroupError> {
        let mut config = settings.client_config()?;
        config
            .set("group.id", group)
            .set("client.id", group)
            .set("auto.offset.reset", "earliest")
            // A replica that dies loses its partitions to the others within
            // 10 s (librdkafka's default is 45 s).
            .set("session.timeout.ms", "10000")
            .set("enable.partition.eof", "false");
        let consumer: StreamConsumer = config.create()?;
        consumer.subscribe(&[topic])?;
        Ok(GroupConsumer {
            consumer: Arc::new(consumer),
            topic: topic.to_string(),
        })
    }

    /// Up to `max` records: waits up to `first` for one, then takes what
    /// follows within `quiet` of the one before. Errors the client retries
    /// by itself (a broker down for a moment) end the batch early.
    pub async fn next_batch(
        &self,
        max: usize,
        first: Duration,
        quiet: Duration,
    ) -> Result<Vec<Record>, GroupError> {
        let mut out = Vec::new();
        let mut wait = first;
        while out.len() < max {
            match tokio::time::timeout(wait, self.consumer.recv()).await {
                Err(_) => break,
                Ok(Err(e)) if out.is_empty() => return Err(e.into()),
                Ok(Err(_)) => break,
                Ok(Ok(m)) => {
                    out.push(Record {
                        partition: m.partition(),
                        offset: m.offset(),
                        value: m.payload().map(<[u8]>::to_vec),
                    });
                    wait = quiet;
                }
            }
        }
        Ok(out)
    }

    /// Commits, for each partition in `done`, the offset after the
    /// greatest one there: everything up to it is handled.
    pub async fn commit(&self, done: &[Record]) -> Result<(), GroupError> {
        let mut next: BTreeMap<i32, i64> = BTreeMap::new();
        for r in done {
            let n = next.entry(r.partition).or_insert(r.offset + 1);
            *n = (*n).max(r.offset + 1);
        }
        if next.is_empty() {
            return Ok(());
        }
        let mut tpl = TopicPartitionList::new();
        for (p, o) in next {
            tpl.add_partition_offset(&self.topic, p, Offset::Offset(o))?;
        }
        // A synchronous commit blocks on the coordinator: off the runtime.
        let consumer = self.consumer.clone();
        tokio::task::spawn_blocking(move || consumer.commit(&tpl, CommitMode::Sync)).await??;
        Ok(())
    }
}
