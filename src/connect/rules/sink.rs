//! Rules for every sink: which topics it reads, its dead letter queue, and
//! how many tasks those topics can keep busy.

use super::{Draft, whole};
use crate::connect::config::TASKS_MAX;
use crate::connect::finding::{Finding, Fix, Rule};
use crate::connect::plugin::Plugin;
use std::collections::BTreeSet;

const TOPICS: &str = "topics";
const REGEX: &str = "topics.regex";
const DLQ: &str = "errors.deadletterqueue.topic.name";
const DLQ_RF: &str = "errors.deadletterqueue.topic.replication.factor";

/// The topics a sink reads, as far as the cluster's topic list says.
pub(super) struct Reads<'a> {
    /// Listed in `topics`.
    pub listed: Vec<&'a str>,
    /// `topics.regex`, when the Rust engine reads it.
    pub regex: Option<regex::Regex>,
}

impl Reads<'_> {
    pub(super) fn of<'a>(d: &Draft<'a>) -> Reads<'a> {
        Reads {
            listed: d.config.list(TOPICS),
            regex: d.get(REGEX).and_then(|r| whole(r, false)),
        }
    }

    pub(super) fn reads(&self, topic: &str) -> bool {
        self.listed.contains(&topic) || self.regex.as_ref().is_some_and(|r| r.is_match(topic))
    }
}

pub(super) fn check(d: &Draft, out: &mut Vec<Finding>) {
    let has_list = d.get(TOPICS).is_some();
    let has_regex = d.get(REGEX).is_some();
    if has_list && has_regex {
        out.push(
            Finding::error(
                Rule::TopicsAndRegex,
                REGEX,
                "Set topics or topics.regex, not both.".into(),
            )
            .with_fix(Fix::remove(REGEX)),
        );
    } else if !has_list && !has_regex {
        out.push(Finding::error(
            Rule::NoTopics,
            TOPICS,
            "Must configure one of topics or topics.regex.".into(),
        ));
    }
    let reads = Reads::of(d);
    dead_letters(d, &reads, out);
    topics(d, &reads, out);
    schema_change_topics(d, &reads, out);
    keys(d, out);
}

fn dead_letters(d: &Draft, reads: &Reads, out: &mut Vec<Finding>) {
    let Some(dlq) = d.get(DLQ) else { return };
    if reads.listed.contains(&dlq) {
        let rest: Vec<&str> = reads.listed.iter().copied().filter(|t| *t != dlq).collect();
        let fix = if rest.is_empty() {
            Fix::set(DLQ, format!("dlq.{}", d.name))
        } else {
            Fix::set(TOPICS, rest.join(","))
        };
        out.push(
            Finding::error(
                Rule::DlqInTopics,
                DLQ,
                format!("The dead letter topic {dlq} is also read by this sink: a bad record would come back forever."),
            )
            .with_fix(fix),
        );
    } else if reads.regex.as_ref().is_some_and(|r| r.is_match(dlq)) {
        let fix = [
            format!("dlq.{}", d.name),
            format!("_dlq.{}", d.name),
            format!("__dlq-{}", d.ident()),
        ]
        .into_iter()
        .find(|c| !reads.reads(c))
        .map(|c| Fix::set(DLQ, c));
        out.push(
            Finding::error(
                Rule::DlqInTopics,
                DLQ,
                format!("topics.regex matches the dead letter topic {dlq}: a bad record would come back forever."),
            )
            .with(fix),
        );
    }
    if let Some(brokers) = d.ctx.brokers {
        let rf = d.effective(DLQ_RF, "3").parse::<u32>().unwrap_or(3);
        if rf > brokers {
            out.push(
                Finding::error(
                    Rule::DlqReplicationFactor,
                    DLQ_RF,
                    format!("The dead letter topic would need {rf} replicas but the cluster has {brokers} broker(s), so the first bad record fails the task."),
                )
                .with_fix(Fix::set(DLQ_RF, brokers.max(1).to_string())),
            );
        }
    }
}

/// Topics that do not exist, a regex that matches none, and more tasks
/// than the topics have partitions.
fn topics(d: &Draft, reads: &Reads, out: &mut Vec<Finding>) {
    let Some(known) = d.ctx.topics else { return };
    let missing: Vec<&str> = reads
        .listed
        .iter()
        .copied()
        .filter(|t| !known.contains_key(*t))
        .collect();
    if !missing.is_empty() {
        let present: Vec<&str> = reads
            .listed
            .iter()
            .copied()
            .filter(|t| known.contains_key(*t))
            .collect();
        out.push(
            Finding::warning(
                Rule::MissingTopic,
                TOPICS,
                format!(
                    "The cluster has no topic {}; the sink waits for it without an error.",
                    missing.join(", ")
                ),
            )
            .with((!present.is_empty()).then(|| Fix::set(TOPICS, present.join(",")))),
        );
    }
    let mut partitions: u64 = reads
        .listed
        .iter()
        .filter_map(|t| known.get(*t))
        .map(|p| u64::from(*p))
        .sum();
    if let Some(r) = &reads.regex {
        let matched: u64 = known
            .iter()
            .filter(|(t, _)| r.is_match(t) && !reads.listed.contains(&t.as_str()))
            .map(|(_, p)| u64::from(*p))
            .sum();
        if matched == 0 {
            out.push(Finding::warning(
                Rule::RegexMatchesNothing,
                REGEX,
                "topics.regex matches none of the cluster's topics yet.".into(),
            ));
        }
        partitions += matched;
    }
    if let Some(tasks) = d.tasks()
        && partitions > 0
        && u64::try_from(tasks).is_ok_and(|t| t > partitions)
    {
        out.push(
            Finding::warning(
                Rule::TasksOverPartitions,
                TASKS_MAX,
                format!("tasks.max is {tasks} but the topics read have {partitions} partition(s); the extra tasks sit idle."),
            )
            .with_fix(Fix::set(TASKS_MAX, partitions.to_string())),
        );
    }
}

/// A Debezium source's schema change topic is named by its `topic.prefix`
/// alone; its records are DDL events a table sink cannot write.
fn schema_change_topics(d: &Draft, reads: &Reads, out: &mut Vec<Finding>) {
    if !matches!(
        d.plugin,
        Plugin::ConfluentJdbcSink | Plugin::DebeziumJdbcSink
    ) {
        return;
    }
    let prefixes: BTreeSet<&str> = d
        .ctx
        .connectors
        .iter()
        .filter(|c| c.plugin().is_ok_and(Plugin::is_debezium_source))
        .filter_map(|c| c.value("topic.prefix"))
        .collect();
    for topic in reads.listed.iter().filter(|t| prefixes.contains(*t)) {
        let rest: Vec<&str> = reads
            .listed
            .iter()
            .copied()
            .filter(|t| t != topic)
            .collect();
        out.push(
            Finding::warning(
                Rule::SchemaChangeTopic,
                TOPICS,
                format!("{topic} is a Debezium source's schema change topic: its records are DDL events, not rows."),
            )
            .with((!rest.is_empty()).then(|| Fix::set(TOPICS, rest.join(",")))),
        );
    }
}

/// JDBC sinks: upserts and deletes need the key columns.
fn keys(d: &Draft, out: &mut Vec<Finding>) {
    let key_mode = match d.plugin {
        Plugin::ConfluentJdbcSink => "pk.mode",
        Plugin::DebeziumJdbcSink => "primary.key.mode",
        _ => return,
    };
    let mode = d.effective(key_mode, "none");
    if d.get("insert.mode") == Some("upsert") && mode == "none" {
        out.push(
            Finding::error(
                Rule::UpsertWithoutKey,
                key_mode,
                format!("insert.mode=upsert needs the key columns: set {key_mode}."),
            )
            .with_fix(Fix::set(key_mode, "record_key")),
        );
    }
    if d.config.is_true("delete.enabled") && mode != "record_key" {
        out.push(
            Finding::error(
                Rule::DeleteWithoutRecordKey,
                key_mode,
                format!(
                    "delete.enabled=true needs {key_mode}=record_key: a tombstone has only its key."
                ),
            )
            .with_fix(Fix::set(key_mode, "record_key")),
        );
    }
    if d.get("field.include.list").is_some() && d.get("field.exclude.list").is_some() {
        out.push(
            Finding::error(
                Rule::IncludeAndExclude,
                "field.exclude.list",
                "field.include.list and field.exclude.list cannot both be set.".into(),
            )
            .with_fix(Fix::remove("field.exclude.list")),
        );
    }
}
