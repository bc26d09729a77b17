//! OpenLineage events for what Streamkeeper discovers itself (issue 14,
//! item 3): each consumer group is a streaming job reading its topics, each
//! connector a streaming job with the datasets its config names. They are
//! JobEvents (static lineage: there is no run to speak of), stored as
//! *derived*, which the store keeps beside the event, never in it.
//!
//! The event time is the hour the discovery was made in: the same facts
//! within an hour are the same bytes, so a sampler seeing a group every
//! 15 s stores one event an hour for it (deduplicated by the canonical
//! hash), and "last seen" is good to the hour. A change (a topic more)
//! is a new event at once.

use crate::connect::lineage::Lineage;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde_json::{Value, json};

/// The `producer` of derived events.
pub const PRODUCER: &str =
    "https://github.com/streamkeeper/streamkeeper/tree/main/src/lineage/derived.rs";

const JOB_EVENT: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent";
const JOB_TYPE: &str =
    "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet";

/// The start of the hour `at` is in.
pub fn hour_of(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(TimeDelta::hours(1)).unwrap_or(at)
}

fn datasets(list: &[(String, String)], facets_key: &str) -> Vec<Value> {
    let mut sorted: Vec<&(String, String)> = list.iter().collect();
    sorted.sort();
    sorted.dedup();
    sorted
        .into_iter()
        .map(|(ns, name)| json!({"namespace": ns, "name": name, "facets": {}, facets_key: {}}))
        .collect()
}

fn job_event(
    job: (&str, &str),
    job_type: &str,
    inputs: &[(String, String)],
    outputs: &[(String, String)],
    at: DateTime<Utc>,
) -> Value {
    json!({
        "eventTime": hour_of(at).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "producer": PRODUCER,
        "schemaURL": JOB_EVENT,
        "job": {
            "namespace": job.0,
            "name": job.1,
            "facets": {"jobType": {
                "_producer": PRODUCER, "_schemaURL": JOB_TYPE,
                "processingType": "STREAMING", "integration": "KAFKA", "jobType": job_type,
            }},
        },
        "inputs": datasets(inputs, "inputFacets"),
        "outputs": datasets(outputs, "outputFacets"),
    })
}

/// A consumer group as a streaming job, named `<group>` in its cluster's
/// Kafka namespace, reading each of `topics`.
pub fn group(kafka_namespace: &str, group: &str, topics: &[String], at: DateTime<Utc>) -> Value {
    let inputs: Vec<(String, String)> = topics
        .iter()
        .map(|t| (kafka_namespace.to_owned(), t.clone()))
        .collect();
    job_event((kafka_namespace, group), "CONSUMER_GROUP", &inputs, &[], at)
}

/// The job namespace of a Connect cluster's connectors.
pub fn connect_namespace(connect_cluster: &str) -> String {
    format!("kafka-connect://{connect_cluster}")
}

/// A connector as a streaming job, named `<connector>` in the namespace
/// `kafka-connect://<Connect cluster>`, with the datasets its config
/// names. Patterns (a topic regex, an include list's regex) name no
/// dataset and are left out.
pub fn connector(
    connect_cluster: &str,
    connector: &str,
    lineage: &Lineage,
    at: DateTime<Utc>,
) -> Value {
    let exact = |ds: &[crate::connect::lineage::Dataset]| -> Vec<(String, String)> {
        ds.iter()
            .filter(|d| !d.pattern)
            .map(|d| (d.namespace.clone(), d.name.clone()))
            .collect()
    };
    job_event(
        (&connect_namespace(connect_cluster), connector),
        "CONNECTOR",
        &exact(&lineage.inputs),
        &exact(&lineage.outputs),
        at,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::lineage::Dataset;
    use crate::lineage::event::{Event, Kind};
    use crate::lineage::receive::receive;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().expect("time")
    }

    #[test]
    fn a_group_is_a_streaming_job_event_the_same_within_the_hour() {
        let topics = vec!["orders".to_string(), "payments".to_string()];
        let a = group(
            "kafka://b:9092",
            "billing",
            &topics,
            at("2026-01-01T10:05:00Z"),
        );
        let b = group(
            "kafka://b:9092",
            "billing",
            &topics,
            at("2026-01-01T10:55:59Z"),
        );
        let c = group(
            "kafka://b:9092",
            "billing",
            &topics,
            at("2026-01-01T11:00:00Z"),
        );
        let r = |v: &Value| receive(v.to_string().as_bytes()).expect("a valid event");
        assert_eq!(r(&a).hash, r(&b).hash, "the same hour: one event");
        assert_ne!(r(&a).hash, r(&c).hash);
        let Event::Job(job) = r(&a).event else {
            panic!("a JobEvent");
        };
        assert_eq!(r(&a).event.kind(), Kind::JobEvent);
        assert_eq!(job.job.name, "billing");
        assert_eq!(job.inputs.len(), 2);
        assert_eq!(a["eventTime"], "2026-01-01T10:00:00Z");
        assert_eq!(a["job"]["facets"]["jobType"]["processingType"], "STREAMING");
    }

    #[test]
    fn a_connector_names_its_exact_datasets_and_leaves_patterns_out() {
        let ds = |ns: &str, name: &str, pattern: bool| Dataset {
            namespace: ns.into(),
            name: name.into(),
            pattern,
        };
        let l = Lineage {
            inputs: vec![
                ds("kafka://b:9092", "orders", false),
                ds("kafka://b:9092", "orders-.*", true),
            ],
            outputs: vec![ds("postgres://db:5432", "shop.public.orders", false)],
            renamed_by_transform: false,
        };
        let v = connector("main", "orders-sink", &l, at("2026-01-01T10:05:00Z"));
        let received = receive(v.to_string().as_bytes()).expect("valid");
        let Event::Job(job) = received.event else {
            panic!("a JobEvent");
        };
        assert_eq!(job.job.namespace, "kafka-connect://main");
        assert_eq!(job.inputs.len(), 1);
        assert_eq!(job.outputs[0].name, "shop.public.orders");
    }
}
