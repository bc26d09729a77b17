//! Watch's part of `/metrics`: clusters, consumer groups and topics as the
//! latest pass read them. Lag metrics carry kafka-lag-exporter's names and
//! labels (`cluster_name`, `group`, `topic`, `partition`), so its Grafana
//! dashboards and alerts work unchanged; the rest are `streamkeeper_*`.
//! A cluster whose latest pass read nothing has no lag series: Prometheus
//! shows a gap, as the console does, never a lag of 0.
//!
//! The trend (velocity, time to catch up, retention) carries klag's names
//! where it has them, with klag's scale (klag.dev "Metrics Overview",
//! "Lag Velocity", "Data Loss Prevention": `klag.consumer.lag.velocity`
//! and `klag.consumer.lag.retention_percent` are × 100,
//! `klag.consumer.lag.time_to_close_seconds` only while catching up), so
//! its dashboards read them; klag has no time until retention passes the
//! commit, which is `streamkeeper_consumergroup_retention_risk_seconds`.

use crate::platform::errors::Db;
use crate::platform::metrics::{Gauges, Labels, Scrape};
use crate::platform::ownership;
use crate::watch::store;
use sqlx::PgPool;
use std::collections::BTreeMap;
use streamkeeper::watch::lag::offset::{offset_lag, retention_percent};

pub async fn collect(pool: &PgPool, scrape: &mut Scrape) -> Result<(), Db> {
    clusters(pool, scrape).await?;
    let up = lag(pool, scrape).await?;
    groups(pool, scrape, &up).await?;
    topics(pool, scrape).await
}

/// Clusters and their latest pass; answers which clusters were read.
async fn clusters(pool: &PgPool, scrape: &mut Scrape) -> Result<(), Db> {
    let up = scrape.gauges(
        "streamkeeper_cluster_up",
        "1 when the cluster's latest pass read it (UP or DEGRADED), 0 when it did not answer",
    );
    let state = scrape.gauges(
        "streamkeeper_cluster_state",
        "1 for the state of the cluster's latest pass (UP, DEGRADED, UNREACHABLE)",
    );
    let took = scrape.gauges(
        "streamkeeper_cluster_pass_duration_seconds",
        "How long the cluster's latest pass took",
    );
    let good = scrape.gauges(
        "streamkeeper_cluster_last_success_timestamp_seconds",
        "When a pass last read the cluster (Unix time)",
    );
    for c in store::clusters_with_last_pass(pool).await? {
        let name = || vec![("cluster_name", c.name.clone())];
        if let (Some(outcome), Some(started), Some(finished)) =
            (&c.outcome, c.started_at, c.finished_at)
        {
            up.set(name(), f64::from(u8::from(outcome != "UNREACHABLE")));
            let mut l = name();
            l.push(("state", outcome.clone()));
            state.set(l, 1.0);
            took.set(
                name(),
                (finished - started).num_milliseconds() as f64 / 1000.0,
            );
        }
        if let Some(at) = c.last_good_at {
            good.set(name(), at.timestamp_millis() as f64 / 1000.0);
        }
    }
    Ok(())
}

/// Per-partition lag and offsets, and each group's sums, from the latest
/// pass; answers the clusters whose latest pass read something.
async fn lag(pool: &PgPool, scrape: &mut Scrape) -> Result<Vec<String>, Db> {
    let rows = store::latest_samples(pool).await?;
    let mut sum: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut max: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut topic_sum: BTreeMap<(&str, &str, &str), u64> = BTreeMap::new();
    // klag's retention percent: lag over the offsets retention keeps, the
    // largest of the topic's partitions (empty partitions left out).
    let mut retained: BTreeMap<(&str, &str, &str), f64> = BTreeMap::new();
    let mut partition_lag = Vec::new();
    let mut offsets = BTreeMap::new();
    for r in &rows {
        let (Some(start), Some(end)) = (r.log_start, r.log_end) else {
            continue;
        };
        offsets.insert((&r.cluster, &r.topic, r.partition), (start, end));
        // A topic the group stopped reading keeps offsets until they
        // expire: its growing "lag" is no lag, as on the group's page.
        if r.not_consumed {
            continue;
        }
        let lag = offset_lag(r.committed, start, end);
        let Some(messages) = lag.messages() else {
            continue;
        };
        let group = (r.cluster.as_str(), r.group_name.as_str());
        *sum.entry(group).or_default() += messages;
        let m = max.entry(group).or_default();
        *m = (*m).max(messages);
        *topic_sum
            .entry((&r.cluster, &r.group_name, &r.topic))
            .or_default() += messages;
        if let Some(percent) = retention_percent(lag, start, end) {
            let m = retained
                .entry((&r.cluster, &r.group_name, &r.topic))
                .or_default();
            *m = m.max(percent);
        }
        partition_lag.push((r, messages));
    }

    let g_sum = scrape.gauges(
        "kafka_consumergroup_group_sum_lag",
        "Sum of the group's offset lag over the partitions it has committed on",
    );
    let g_max = scrape.gauges(
        "kafka_consumergroup_group_max_lag",
        "The group's largest offset lag on one partition",
    );
    for (&(cluster, group), &v) in &sum {
        let l = || {
            vec![
                ("cluster_name", cluster.to_string()),
                ("group", group.to_string()),
            ]
        };
        g_sum.set(l(), v as f64);
        g_max.set(l(), max.get(&(cluster, group)).copied().unwrap_or(0) as f64);
    }
    let t_sum = scrape.gauges(
        "kafka_consumergroup_group_topic_sum_lag",
        "Sum of the group's offset lag over one topic's partitions",
    );
    for (&(cluster, group, topic), &v) in &topic_sum {
        t_sum.set(
            vec![
                ("cluster_name", cluster.to_string()),
                ("group", group.to_string()),
                ("topic", topic.to_string()),
            ],
            v as f64,
        );
    }
    let percent = scrape.gauges(
        "klag_consumer_lag_retention_percent",
        "The group's largest lag on a partition of the topic as a share of the offsets retention keeps, in percent x 100 (10000: data lost)",
    );
    for (&(cluster, group, topic), &value) in &retained {
        percent.set(
            vec![
                ("cluster_name", cluster.to_string()),
                ("group", group.to_string()),
                ("topic", topic.to_string()),
            ],
            value,
        );
    }

    let name = "kafka_consumergroup_group_lag";
    let p_lag = scrape.gauges(name, "The group's offset lag on one partition");
    if scrape.take(name, partition_lag.len()) {
        for (r, v) in partition_lag {
            p_lag.set(
                vec![
                    ("cluster_name", r.cluster.clone()),
                    ("group", r.group_name.clone()),
                    ("topic", r.topic.clone()),
                    ("partition", r.partition.to_string()),
                ],
                v as f64,
            );
        }
    }
    let latest = scrape.gauges(
        "kafka_partition_latest_offset",
        "The partition's log-end offset",
    );
    let earliest = scrape.gauges(
        "kafka_partition_earliest_offset",
        "The partition's log-start offset",
    );
    if scrape.take("kafka_partition_latest_offset", 2 * offsets.len()) {
        for ((cluster, topic, partition), (start, end)) in offsets {
            let l = || {
                vec![
                    ("cluster_name", cluster.clone()),
                    ("topic", topic.clone()),
                    ("partition", partition.to_string()),
                ]
            };
            latest.set(l(), end as f64);
            earliest.set(l(), start as f64);
        }
    }
    let mut read: Vec<String> = rows.iter().map(|r| r.cluster.clone()).collect();
    read.dedup();
    Ok(read)
}

/// Each group's status, members and time lag as the last evaluation judged.
async fn groups(pool: &PgPool, scrape: &mut Scrape, read: &[String]) -> Result<(), Db> {
    let status = scrape.gauges(
        "streamkeeper_consumergroup_status",
        "1 for the group's status over the lag window (OK, WARNING, STALLED, STOPPED, ...), with its owner team",
    );
    let members = scrape.gauges(
        "streamkeeper_consumergroup_members",
        "Members of the group, with its state as the broker reported it",
    );
    let seconds = scrape.gauges(
        "kafka_consumergroup_group_max_lag_seconds",
        "The group's largest time lag on one partition, in seconds",
    );
    let trend = TrendGauges::new(scrape);
    let rows = store::group_metrics(pool).await?;
    // Owners by the ownership rule, one read per cluster.
    let mut named: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for g in &rows {
        named.entry(g.cluster_id).or_default().push(g.name.clone());
    }
    let mut owners = BTreeMap::new();
    for (cluster, names) in named {
        owners.insert(cluster, ownership::groups(pool, cluster, &names).await?);
    }
    for g in rows {
        let owner = owners
            .get(&g.cluster_id)
            .and_then(|o| o.get(&g.name))
            .and_then(|o| o.as_ref().map(|o| o.team.name.clone()));
        let l = || {
            vec![
                ("cluster_name", g.cluster.clone()),
                ("group", g.name.clone()),
            ]
        };
        let mut m = l();
        m.push(("state", g.state.clone()));
        members.set(m, f64::from(g.members));
        if let Some(s) = &g.status {
            let mut sl = l();
            sl.push(("status", s.clone()));
            sl.push(("owner", owner.unwrap_or_default()));
            status.set(sl, 1.0);
        }
        // Time lag only for clusters the latest pass read: an older
        // judgement of an unreachable cluster is not today's lag.
        if read.contains(&g.cluster) {
            if let Some(s) = g.max_time_lag_s {
                seconds.set(l(), s);
            }
            trend.set(&g, l);
        }
    }
    Ok(())
}

/// The gauges of each group's trend, as its last evaluation judged it.
struct TrendGauges {
    velocity: Gauges,
    to_close: Gauges,
    risk: Gauges,
}

impl TrendGauges {
    fn new(scrape: &mut Scrape) -> Self {
        TrendGauges {
            velocity: scrape.gauges(
                "klag_consumer_lag_velocity",
                "Messages per second the group's lag grows (negative: shrinks) over its window, x 100",
            ),
            to_close: scrape.gauges(
                "klag_consumer_lag_time_to_close_seconds",
                "Seconds until the group has caught up at its current pace, while it is catching up",
            ),
            risk: scrape.gauges(
                "streamkeeper_consumergroup_retention_risk_seconds",
                "Seconds until the log start passes a committed offset of the group at the observed pace (0: it has)",
            ),
        }
    }

    fn set(&self, g: &store::GroupMetricRow, labels: impl Fn() -> Labels) {
        if let Some(v) = g.lag_velocity {
            self.velocity.set(labels(), (v * 100.0).round());
        }
        if let Some(s) = g.catch_up_s.filter(|s| *s > 0.0) {
            self.to_close.set(labels(), s.round());
        }
        if let Some(s) = g.retention_risk_s {
            self.risk.set(labels(), s.round());
        }
    }
}

async fn topics(pool: &PgPool, scrape: &mut Scrape) -> Result<(), Db> {
    let partitions = scrape.gauges(
        "streamkeeper_topic_partitions",
        "Partitions of the topic, with its owner team",
    );
    let under = scrape.gauges(
        "streamkeeper_topic_under_replicated_partitions",
        "Partitions of the topic with fewer in-sync replicas than replicas",
    );
    let offline = scrape.gauges(
        "streamkeeper_topic_offline_partitions",
        "Partitions of the topic without a leader",
    );
    let rows = store::topic_metrics(pool).await?;
    // Owners by the ownership rule, one read per cluster.
    let mut named: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for t in &rows {
        named.entry(t.cluster_id).or_default().push(t.name.clone());
    }
    let mut owners = BTreeMap::new();
    for (cluster, topics) in named {
        owners.insert(cluster, ownership::streams(pool, cluster, &topics).await?);
    }
    for t in rows {
        let owner = owners
            .get(&t.cluster_id)
            .and_then(|o| o.get(&t.name))
            .and_then(|o| o.as_ref().map(|o| o.team.name.clone()));
        let l = || {
            vec![
                ("cluster_name", t.cluster.clone()),
                ("topic", t.name.clone()),
            ]
        };
        let mut p = l();
        p.push(("owner", owner.unwrap_or_default()));
        partitions.set(p, f64::from(t.partitions));
        under.set(l(), f64::from(t.under_replicated));
        offline.set(l(), f64::from(t.offline));
    }
    Ok(())
}
