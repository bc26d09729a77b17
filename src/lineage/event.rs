//! OpenLineage events as producers send them (spec 2-0-2 and the 1-x
//! ones still in the field): RunEvent, DatasetEvent and JobEvent, read
//! from JSON field by field so every refusal names the field that is
//! wrong. Classified the way A3/A7 of the reference say: the `schemaURL`
//! suffix first (Marquez's dispatch), then the shape (the OpenLineage test
//! server's), never requiring a particular spec version.
//!
//! Unknown facets are kept raw ([`Facets`]); only the facets the graph
//! needs are read, by [`crate::lineage::graph`].

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Facets by key, as sent (`_producer`, `_schemaURL` and all).
pub type Facets = BTreeMap<String, Value>;

/// The three kinds of the spec's top-level `oneOf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    RunEvent,
    DatasetEvent,
    JobEvent,
}

/// A run's transition. Absent on the wire means "not said" (the schema
/// does not require it); Marquez reads that as RUNNING.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventType {
    Start,
    Running,
    Complete,
    Abort,
    Fail,
    Other,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Start => "START",
            EventType::Running => "RUNNING",
            EventType::Complete => "COMPLETE",
            EventType::Abort => "ABORT",
            EventType::Fail => "FAIL",
            EventType::Other => "OTHER",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "START" => EventType::Start,
            "RUNNING" => EventType::Running,
            "COMPLETE" => EventType::Complete,
            "ABORT" => EventType::Abort,
            "FAIL" => EventType::Fail,
            "OTHER" => EventType::Other,
            _ => return None,
        })
    }

    /// COMPLETE, ABORT and FAIL end a run.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            EventType::Complete | EventType::Abort | EventType::Fail
        )
    }
}

/// What every event carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub event_time: DateTime<Utc>,
    pub producer: String,
    /// Optional here although the schema requires it: Marquez defaults a
    /// missing one to RunEvent and producers rely on that.
    pub schema_url: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub namespace: String,
    pub name: String,
    pub facets: Facets,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// As sent. The schema says UUID; Marquez accepts other text (hashing
    /// it to a UUID), so any non-empty id is taken.
    pub run_id: String,
    pub facets: Facets,
}

/// An input or output dataset of a run or job event, or the dataset of a
/// DatasetEvent.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub namespace: String,
    pub name: String,
    pub facets: Facets,
    /// `inputFacets` of an input, `outputFacets` of an output.
    pub io_facets: Facets,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunEvent {
    pub header: Header,
    pub event_type: Option<EventType>,
    pub run: Run,
    pub job: Job,
    pub inputs: Vec<Dataset>,
    pub outputs: Vec<Dataset>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DatasetEvent {
    pub header: Header,
    pub dataset: Dataset,
}

/// Static (declared) lineage of a job, without a run.
#[derive(Clone, Debug, PartialEq)]
pub struct JobEvent {
    pub header: Header,
    pub job: Job,
    pub inputs: Vec<Dataset>,
    pub outputs: Vec<Dataset>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Run(RunEvent),
    Dataset(DatasetEvent),
    Job(JobEvent),
}

/// Why an event was refused. [`EventError::is_malformed`] tells a 400
/// (not JSON, not an object) from a 422 (JSON of the wrong shape); no
/// variant carries more of the input than a clipped `eventTime`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("the body is not valid JSON: {0}")]
    Json(String),
    #[error("an event must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    #[error("a batch must be a JSON array of events, not {0}")]
    NotAnArray(&'static str),
    #[error("`{0}` is missing")]
    Missing(String),
    #[error("`{0}` is empty")]
    Empty(String),
    #[error("`{path}` must be {expected}")]
    WrongType {
        path: String,
        expected: &'static str,
    },
    #[error("`eventTime` is not an ISO 8601 date-time: {0:?}")]
    BadEventTime(String),
    #[error(
        "`eventTime` {at} is more than a day ahead of this server's clock ({now}): an event from the future would pin the graph to its date"
    )]
    FutureEventTime { at: String, now: String },
    #[error("`eventType` must be one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER")]
    BadEventType,
    #[error("not an OpenLineage event: it has none of `run`, `job` or `dataset`")]
    UnknownKind,
}

impl EventError {
    /// True for what is not JSON or not an object at all (HTTP 400);
    /// false for an event of the wrong shape (HTTP 422).
    pub fn is_malformed(&self) -> bool {
        matches!(
            self,
            EventError::Json(_) | EventError::NotAnObject(_) | EventError::NotAnArray(_)
        )
    }
}

impl Event {
    /// Reads one event from parsed JSON.
    ///
    /// Classification: the text after the last `/` of `schemaURL`
    /// (`RunEvent`, `DatasetEvent`, `JobEvent`; `#/$defs/` and
    /// `#/definitions/` alike); when that is absent or unknown, the shape
    /// (`run` → run event, `dataset` → dataset event, `job` → job event).
    /// A schemaURL that names a kind the body does not have is refused
    /// with the missing field, not reread as another kind.
    pub fn from_value(v: &Value) -> Result<Event, EventError> {
        let o = v.as_object().ok_or(EventError::NotAnObject(type_name(v)))?;
        let schema_url = opt_str(o, "schemaURL", "schemaURL")?;
        let kind = schema_url
            .as_deref()
            .and_then(kind_of_url)
            .or_else(|| kind_of_shape(o))
            .ok_or(EventError::UnknownKind)?;
        let header = Header {
            event_time: event_time(o)?,
            producer: req_str(o, "producer", "producer")?,
            schema_url,
        };
        Ok(match kind {
            Kind::RunEvent => {
                let event_type = match o.get("eventType") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => {
                        Some(EventType::parse(s).ok_or(EventError::BadEventType)?)
                    }
                    Some(_) => return Err(EventError::BadEventType),
                };
                let run = req_obj(o, "run", "run")?;
                Event::Run(RunEvent {
                    header,
                    event_type,
                    run: Run {
                        run_id: req_str(run, "runId", "run.runId")?,
                        facets: facets(run, "facets", "run.facets")?,
                    },
                    job: job(o)?,
                    inputs: datasets(o, "inputs", "inputFacets")?,
                    outputs: datasets(o, "outputs", "outputFacets")?,
                })
            }
            Kind::DatasetEvent => {
                let d = req_obj(o, "dataset", "dataset")?;
                Event::Dataset(DatasetEvent {
                    header,
                    dataset: dataset(d, "dataset", None)?,
                })
            }
            Kind::JobEvent => Event::Job(JobEvent {
                header,
                job: job(o)?,
                inputs: datasets(o, "inputs", "inputFacets")?,
                outputs: datasets(o, "outputs", "outputFacets")?,
            }),
        })
    }

    pub fn kind(&self) -> Kind {
        match self {
            Event::Run(_) => Kind::RunEvent,
            Event::Dataset(_) => Kind::DatasetEvent,
            Event::Job(_) => Kind::JobEvent,
        }
    }

    pub fn header(&self) -> &Header {
        match self {
            Event::Run(e) => &e.header,
            Event::Dataset(e) => &e.header,
            Event::Job(e) => &e.header,
        }
    }
}

fn kind_of_url(url: &str) -> Option<Kind> {
    match url.rsplit('/').next()? {
        "RunEvent" => Some(Kind::RunEvent),
        "DatasetEvent" => Some(Kind::DatasetEvent),
        "JobEvent" => Some(Kind::JobEvent),
        _ => None,
    }
}

fn kind_of_shape(o: &Map<String, Value>) -> Option<Kind> {
    if o.contains_key("run") {
        Some(Kind::RunEvent)
    } else if o.contains_key("dataset") {
        Some(Kind::DatasetEvent)
    } else if o.contains_key("job") {
        Some(Kind::JobEvent)
    } else {
        None
    }
}

/// RFC 3339 with any offset; also a naive date-time read as UTC, which is
/// what Python's `datetime.now().isoformat()` gives and what the client's
/// own examples send.
fn event_time(o: &Map<String, Value>) -> Result<DateTime<Utc>, EventError> {
    let s = req_str(o, "eventTime", "eventTime")?;
    if let Ok(t) = DateTime::parse_from_rfc3339(&s) {
        return Ok(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(&s, "%Y-%m-%dT%H:%M:%S%.f")
        .map(|t| t.and_utc())
        .map_err(|_| EventError::BadEventTime(s.chars().take(64).collect()))
}

fn job(o: &Map<String, Value>) -> Result<Job, EventError> {
    let j = req_obj(o, "job", "job")?;
    Ok(Job {
        namespace: req_str(j, "namespace", "job.namespace")?,
        name: req_str(j, "name", "job.name")?,
        facets: facets(j, "facets", "job.facets")?,
    })
}

fn datasets(o: &Map<String, Value>, key: &str, io: &str) -> Result<Vec<Dataset>, EventError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let path = format!("{key}[{i}]");
                let d = item.as_object().ok_or_else(|| EventError::WrongType {
                    path: path.clone(),
                    expected: "an object",
                })?;
                dataset(d, &path, Some(io))
            })
            .collect(),
        Some(_) => Err(EventError::WrongType {
            path: key.to_string(),
            expected: "an array",
        }),
    }
}

fn dataset(d: &Map<String, Value>, path: &str, io: Option<&str>) -> Result<Dataset, EventError> {
    Ok(Dataset {
        // Empty names are not refused here: the naming rules keep and
        // mark them, as they do every other bad name.
        namespace: req_str_maybe_empty(d, "namespace", &format!("{path}.namespace"))?,
        name: req_str_maybe_empty(d, "name", &format!("{path}.name"))?,
        facets: facets(d, "facets", &format!("{path}.facets"))?,
        io_facets: match io {
            Some(key) => facets(d, key, &format!("{path}.{key}"))?,
            None => Facets::new(),
        },
    })
}

fn facets(o: &Map<String, Value>, key: &str, path: &str) -> Result<Facets, EventError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(Facets::new()),
        Some(Value::Object(m)) => Ok(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        Some(_) => Err(EventError::WrongType {
            path: path.to_string(),
            expected: "an object",
        }),
    }
}

fn req_obj<'a>(
    o: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Map<String, Value>, EventError> {
    match o.get(key) {
        None | Some(Value::Null) => Err(EventError::Missing(path.to_string())),
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(EventError::WrongType {
            path: path.to_string(),
            expected: "an object",
        }),
    }
}

fn req_str(o: &Map<String, Value>, key: &str, path: &str) -> Result<String, EventError> {
    let s = req_str_maybe_empty(o, key, path)?;
    if s.trim().is_empty() {
        return Err(EventError::Empty(path.to_string()));
    }
    Ok(s)
}

fn req_str_maybe_empty(
    o: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<String, EventError> {
    opt_str(o, key, path)?.ok_or_else(|| EventError::Missing(path.to_string()))
}

fn opt_str(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, EventError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(EventError::WrongType {
            path: path.to_string(),
            expected: "a string",
        }),
    }
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::fixtures;
    use serde_json::json;

    fn parse(s: &str) -> Result<Event, EventError> {
        Event::from_value(&serde_json::from_str(s).expect("test JSON"))
    }

    #[test]
    fn classifies_the_1_54_client_events_by_schema_url() {
        for (text, kind) in [
            (fixtures::STREAMING_START, Kind::RunEvent),
            (fixtures::DATASET_EVENT, Kind::DatasetEvent),
            (fixtures::JOB_EVENT, Kind::JobEvent),
            (fixtures::SPEC_1_EVENT, Kind::RunEvent),
        ] {
            assert_eq!(parse(text).expect(text).kind(), kind, "{text}");
        }
    }

    #[test]
    fn schema_url_wins_over_shape_and_shape_decides_without_it() {
        // A JobEvent URL on a body that also has a run is a JobEvent.
        let e = parse(
            r#"{"eventTime":"2026-01-01T00:00:00Z","producer":"p","run":{"runId":"r"},
                "job":{"namespace":"n","name":"j"},
                "schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"}"#,
        )
        .expect("job event");
        assert_eq!(e.kind(), Kind::JobEvent);
        // A DatasetEvent URL without a dataset names what is missing.
        assert_eq!(
            parse(
                r#"{"eventTime":"2026-01-01T00:00:00Z","producer":"p","job":{"namespace":"n","name":"j"},
                "schemaURL":"https://x/OpenLineage.json#/definitions/DatasetEvent"}"#
            ),
            Err(EventError::Missing("dataset".into()))
        );
        for (body, kind) in [
            (
                json!({"run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}}),
                Kind::RunEvent,
            ),
            (
                json!({"dataset": {"namespace": "n", "name": "d"}}),
                Kind::DatasetEvent,
            ),
            (
                json!({"job": {"namespace": "n", "name": "j"}}),
                Kind::JobEvent,
            ),
        ] {
            let mut body = body;
            body["eventTime"] = json!("2026-01-01T00:00:00Z");
            body["producer"] = json!("p");
            body["schemaURL"] = json!("https://example.com/custom.json");
            assert_eq!(Event::from_value(&body).expect("shape").kind(), kind);
        }
    }

    #[test]
    fn event_type_is_optional_and_checked_when_present() {
        let base = json!({"eventTime": "2026-01-01T00:00:00.123456", "producer": "p",
            "run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}});
        let Event::Run(e) = Event::from_value(&base).expect("no eventType") else {
            panic!("not a run event")
        };
        assert_eq!(e.event_type, None);
        assert_eq!(
            e.header.event_time.to_rfc3339(),
            "2026-01-01T00:00:00.123456+00:00"
        );
        let mut bad = base.clone();
        bad["eventType"] = json!("FINISHED");
        assert_eq!(Event::from_value(&bad), Err(EventError::BadEventType));
    }

    #[test]
    fn refusals_name_the_field() {
        let cases = [
            ("{not json", None),
            ("[1,2]", Some(EventError::NotAnObject("an array"))),
            (
                r#"{"eventTime":"2026-01-01T00:00:00Z","producer":"p","run":{},"job":{"namespace":"n","name":"j"}}"#,
                Some(EventError::Missing("run.runId".into())),
            ),
            (
                r#"{"eventTime":"2026-01-01T00:00:00Z","producer":"p","run":{"runId":" "},"job":{"namespace":"n","name":"j"}}"#,
                Some(EventError::Empty("run.runId".into())),
            ),
            (
                r#"{"producer":"p","run":{"runId":"r"},"job":{"namespace":"n","name":"j"}}"#,
                Some(EventError::Missing("eventTime".into())),
            ),
            (
                r#"{"eventTime":"yesterday","producer":"p","run":{"runId":"r"},"job":{"namespace":"n","name":"j"}}"#,
                Some(EventError::BadEventTime("yesterday".into())),
            ),
            (
                r#"{"eventTime":"2026-01-01T00:00:00Z","producer":"p","run":{"runId":"r"},"job":{"namespace":"n","name":"j"},"inputs":[{"namespace":"n"}]}"#,
                Some(EventError::Missing("inputs[0].name".into())),
            ),
            (
                r#"{"eventTime":"2026-01-01T00:00:00Z","producer":"p","run":{"runId":"r"},"job":{"namespace":"n","name":"j","facets":[]}}"#,
                Some(EventError::WrongType {
                    path: "job.facets".into(),
                    expected: "an object",
                }),
            ),
            (
                r#"{"eventTime":"2026-01-01T00:00:00Z","producer":"p"}"#,
                Some(EventError::UnknownKind),
            ),
        ];
        for (text, want) in cases {
            let got = serde_json::from_str::<Value>(text)
                .map_err(|e| EventError::Json(e.to_string()))
                .and_then(|v| Event::from_value(&v));
            match want {
                Some(w) => assert_eq!(got, Err(w), "{text}"),
                None => assert!(got.is_err_and(|e| e.is_malformed()), "{text}"),
            }
        }
        assert_eq!(
            EventError::Missing("run.runId".into()).to_string(),
            "`run.runId` is missing"
        );
        assert!(!EventError::Missing("x".into()).is_malformed());
    }

    #[test]
    fn keeps_unknown_facets_raw() {
        let Event::Run(e) = parse(fixtures::DEBEZIUM_RUNNING).expect("debezium") else {
            panic!("not a run event")
        };
        assert!(e.run.facets.contains_key("processing_engine"));
        assert!(e.run.facets.contains_key("debezium_config"));
        assert_eq!(e.outputs[0].name, "inventory.public.customers");
        assert_eq!(e.event_type, Some(EventType::Running));
    }
}
