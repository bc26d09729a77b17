//! What ingest does with a body before storing it: parse, re-redact,
//! classify, and compute the canonical bytes and dedup hash, for one
//! event (`POST /api/v1/lineage`, a Kafka transport record) or a batch
//! (`POST /api/v1/lineage/batch`, the OpenLineage 2.0.2 OpenAPI shape).

use super::canonical::{canonical_bytes, event_hash};
use super::event::{Event, EventError, type_name};
use super::redact::redact;
use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use serde::Serialize;
use serde_json::Value;

/// One accepted event, ready to store: the store keeps `canonical` (the
/// redacted event) append-only under `hash`, then folds `event`.
#[derive(Clone, Debug, PartialEq)]
pub struct Received {
    pub event: Event,
    /// The redacted event's canonical JSON: what is stored and replayed.
    pub canonical: Vec<u8>,
    /// SHA-256 of `canonical`; a second event with the same hash is a
    /// duplicate (store nothing, answer success).
    pub hash: [u8; 32],
    /// Whether secrets were masked (worth a counter, never a log of them).
    pub redacted: bool,
}

/// How far ahead of the receiving clock an `eventTime` may be. Clocks
/// drift by seconds, time zones mislabelled by hours; a day ahead is no
/// drift. Later events win the graph's facets (ownership among them), so
/// one dated 2099 would hold them until 2099.
pub const MAX_AHEAD: TimeDelta = TimeDelta::days(1);

/// Refuses an event dated more than [`MAX_AHEAD`] after `now` (a 422 over
/// HTTP; a rejected record from Kafka).
pub fn timely(event: &Event, now: DateTime<Utc>) -> Result<(), EventError> {
    let at = event.header().event_time;
    if at > now + MAX_AHEAD {
        return Err(EventError::FutureEventTime {
            at: at.to_rfc3339_opts(SecondsFormat::Secs, true),
            now: now.to_rfc3339_opts(SecondsFormat::Secs, true),
        });
    }
    Ok(())
}

/// Reads one event from a request body or a Kafka record value.
///
/// Errors: [`EventError::is_malformed`] ones (not JSON, not an object)
/// are a 400, the others a 422; the message says what is wrong and holds
/// no secret. Redaction happens before anything else looks at the facets,
/// so neither the hash nor the stored bytes ever saw a secret.
pub fn receive(body: &[u8]) -> Result<Received, EventError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| EventError::Json(e.to_string()))?;
    receive_value(value)
}

/// [`receive`] for an already parsed value (one element of a batch).
pub fn receive_value(mut value: Value) -> Result<Received, EventError> {
    if !value.is_object() {
        return Err(EventError::NotAnObject(type_name(&value)));
    }
    let redacted = redact(&mut value);
    let event = Event::from_value(&value)?;
    let canonical = canonical_bytes(&value);
    let hash = event_hash(&canonical);
    Ok(Received {
        event,
        canonical,
        hash,
        redacted,
    })
}

/// Reads a stored event again to fold it (a replay, or the fold behind
/// ingest): redacted again, as rules added since it was stored apply to
/// the graph's facets too, but neither canonicalized nor hashed, which
/// its row already is (about a third of [`receive`]'s work).
pub fn reread(body: &[u8]) -> Result<Event, EventError> {
    let mut value: Value =
        serde_json::from_slice(body).map_err(|e| EventError::Json(e.to_string()))?;
    if !value.is_object() {
        return Err(EventError::NotAnObject(type_name(&value)));
    }
    redact(&mut value);
    Event::from_value(&value)
}

/// Reads a batch: a JSON array of events, each read on its own, so one
/// bad event costs only itself. The outer `Err` is for a body that is not
/// a JSON array at all (a 400: nothing in it can be trusted).
pub fn receive_batch(body: &[u8]) -> Result<Vec<Result<Received, EventError>>, EventError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| EventError::Json(e.to_string()))?;
    match value {
        Value::Array(items) => Ok(items.into_iter().map(receive_value).collect()),
        other => Err(EventError::NotAnArray(type_name(&other))),
    }
}

/// The batch answer of the OpenLineage 2.0.2 OpenAPI (`200` with this
/// body; `204` when the caller prefers no body and nothing failed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BatchReport {
    pub status: BatchStatus,
    pub summary: BatchSummary,
    pub failed_events: Vec<FailedEvent>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchStatus {
    Success,
    PartialSuccess,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BatchSummary {
    pub received: usize,
    pub successful: usize,
    pub failed: usize,
    pub retriable: usize,
    pub non_retriable: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailedEvent {
    /// Position in the posted array.
    pub index: usize,
    pub reason: String,
    /// True only for failures of ours (storage), which a retry may fix.
    pub retriable: bool,
}

impl BatchReport {
    /// The report of `received` events of which `failed` did not make it.
    /// The server passes the parse failures ([`receive_batch`]'s `Err`
    /// elements, not retriable) plus any storage failures (retriable).
    pub fn new(received: usize, mut failed: Vec<FailedEvent>) -> Self {
        failed.sort_by_key(|f| f.index);
        let retriable = failed.iter().filter(|f| f.retriable).count();
        BatchReport {
            status: if failed.is_empty() {
                BatchStatus::Success
            } else {
                BatchStatus::PartialSuccess
            },
            summary: BatchSummary {
                received,
                successful: received - failed.len().min(received),
                failed: failed.len(),
                retriable,
                non_retriable: failed.len() - retriable,
            },
            failed_events: failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::fixtures;

    #[test]
    fn an_event_more_than_a_day_ahead_is_refused_as_a_wrong_value() {
        let body = |at: &str| {
            format!(
                r#"{{"eventTime": "{at}", "producer": "p", "dataset": {{"namespace": "n", "name": "d"}}}}"#
            )
        };
        let now: DateTime<Utc> = "2026-12-07T12:00:00Z".parse().expect("now");
        let at = |s: &str| receive(body(s).as_bytes()).expect("event").event;
        assert_eq!(timely(&at("2026-12-08T12:00:00Z"), now), Ok(()));
        assert_eq!(timely(&at("2020-01-01T00:00:00Z"), now), Ok(()));
        let refused = timely(&at("2099-01-01T00:00:00Z"), now).expect_err("future");
        assert!(!refused.is_malformed(), "a 422, not a 400");
        assert!(
            refused.to_string().contains("2099-01-01T00:00:00Z"),
            "{refused}"
        );
        assert!(timely(&at("2026-12-08T12:00:01Z"), now).is_err());
    }

    #[test]
    fn a_stored_event_reread_is_the_event_received_and_redacted_again() {
        let body = br#"{"eventTime": "2026-01-01T00:00:00Z", "producer": "p",
            "dataset": {"namespace": "n", "name": "t", "facets": {"x": {"password": "hunter2"}}}}"#;
        let received = receive(body).expect("event");
        assert_eq!(reread(body).expect("event"), received.event);
        assert_eq!(reread(&received.canonical).expect("event"), received.event);
        assert!(!format!("{:?}", reread(body).expect("event")).contains("hunter2"));
        assert!(reread(b"[1]").is_err() && reread(b"{").is_err());
    }

    #[test]
    fn one_event_is_redacted_before_it_is_hashed() {
        let r = receive(fixtures::DEBEZIUM_RUNNING.as_bytes()).expect("debezium event");
        assert!(r.redacted);
        let stored = String::from_utf8(r.canonical.clone()).expect("utf-8");
        assert!(!stored.contains("hunter2") && !stored.contains("password=postgres"));
        // The same event, resent with other spacing, is the same hash.
        let respaced: Value = serde_json::from_str(fixtures::DEBEZIUM_RUNNING).expect("json");
        let again = receive(respaced.to_string().as_bytes()).expect("again");
        assert_eq!(again.hash, r.hash);
        let other = receive(fixtures::STREAMING_START.as_bytes()).expect("other");
        assert_ne!(other.hash, r.hash);
        assert!(!other.redacted);
    }

    #[test]
    fn a_bad_event_in_a_batch_loses_only_itself() {
        let body = format!(
            "[{}, {{\"producer\": \"p\"}}, 42, {}]",
            fixtures::STREAMING_START,
            fixtures::DATASET_EVENT
        );
        let results = receive_batch(body.as_bytes()).expect("an array");
        assert_eq!(results.len(), 4);
        assert!(results[0].is_ok() && results[3].is_ok());
        assert_eq!(results[1], Err(EventError::UnknownKind));
        assert_eq!(results[2], Err(EventError::NotAnObject("a number")));
        let failed = results
            .iter()
            .enumerate()
            .filter_map(|(index, r)| {
                r.as_ref().err().map(|e| FailedEvent {
                    index,
                    reason: e.to_string(),
                    retriable: false,
                })
            })
            .collect();
        let report = BatchReport::new(results.len(), failed);
        let json = serde_json::to_value(&report).expect("serialises");
        assert_eq!(json["status"], "partial_success");
        assert_eq!(json["summary"]["successful"], 2);
        assert_eq!(json["summary"]["non_retriable"], 2);
        assert_eq!(json["failed_events"][1]["index"], 2);
        assert_eq!(BatchReport::new(3, vec![]).status, BatchStatus::Success);
    }

    #[test]
    fn a_body_that_is_no_array_is_refused_whole() {
        assert!(receive_batch(b"{}").is_err_and(|e| e.is_malformed()));
        assert!(receive_batch(b"[{").is_err_and(|e| e.is_malformed()));
        assert!(receive(b"").is_err_and(|e| e.is_malformed()));
    }
}
