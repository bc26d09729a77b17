//! What the watch's pages are given, made from what its store read: a
//! removed cluster, a topic with its owner, a topic's last message.

use super::store;
use chrono::Utc;
use streamkeeper::watch::cluster;
use streamkeeper::watch::health::LastMessage;
use streamkeeper_app::watch::model::{RemovedCluster, TopicView};

pub(super) fn removed_view(r: store::RemovedRow) -> RemovedCluster {
    RemovedCluster {
        purged_on: cluster::purged_on(r.removed_at),
        id: r.id,
        name: r.name,
        bootstrap: r.bootstrap,
        removed_at: r.removed_at,
        removed_by: r.removed_by,
    }
}

/// A topic's last message from what the catalog stored of it.
pub fn last_message(
    log_end_total: Option<i64>,
    record: Option<chrono::DateTime<Utc>>,
    advanced: Option<chrono::DateTime<Utc>>,
    first_seen: chrono::DateTime<Utc>,
) -> LastMessage {
    LastMessage::of(
        log_end_total,
        record.map(|r| r.timestamp_millis()),
        advanced.map(|a| a.timestamp_millis()),
        first_seen.timestamp_millis(),
    )
}

/// A topic as the pages show it, with its owner team (the ownership
/// rule's, `None` when unowned) and its freshness SLO.
pub(super) fn topic_view(
    t: store::TopicRow,
    owner: Option<String>,
    slo: Option<streamkeeper::watch::slo::StreamSlo>,
) -> TopicView {
    let last = last_message(
        t.log_end_total,
        t.last_message_at,
        t.last_advanced_at,
        t.first_seen,
    );
    TopicView {
        name: t.name,
        partitions: t.partitions,
        under_replicated: t.under_replicated,
        offline: t.offline,
        log_end_total: t.log_end_total,
        last_seen: t.last_seen,
        last_message_at: last
            .at_ms()
            .and_then(chrono::DateTime::from_timestamp_millis),
        last_message: last,
        owner,
        domain: t.domain,
        tier: t.tier,
        freshness_budget_s: t.freshness_budget_s,
        expected_interval_s: t.expected_interval_s,
        description: t.description,
        compatibility: t.compatibility,
        slo,
    }
}
