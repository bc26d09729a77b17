//! Schema drift read off the wire: which schema IDs a stream's producers
//! write now (the wire-format headers of the last records of each
//! partition, see [`super::wire`]), set against what the registry says of
//! those IDs and of the stream's value subject. A producer writing an ID
//! the registry does not know, an ID of another subject, an old version
//! after a newer one was registered, or records without a header on a
//! stream that has one, is drift: a flag to the stream's owner with the
//! record that shows it (partition, offset, timestamp, ID).

use super::wire::WireHeader;
use crate::flags::{FlagKey, Observation};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The kind of the drift flag.
pub const KIND: &str = "DRIFT";

/// A stream's drift flag.
pub fn drift_key(topic: &str) -> FlagKey {
    FlagKey {
        subject_kind: "topic".into(),
        subject: topic.into(),
        rule: "schema-drift".into(),
    }
}

/// Where a record is: what a flag's receipts name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub partition: i32,
    pub offset: i64,
    /// The record's timestamp, ms since the epoch, when it has one.
    pub at_ms: Option<i64>,
}

/// One record read at a partition's end: where it is, and its header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireRecord {
    pub at: Evidence,
    pub header: WireHeader,
}

/// What some of a stream's last records carry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Carried {
    Id {
        id: u32,
    },
    NoHeader,
    /// Starts like a header but is none; `why` of the newest such record.
    Garbage {
        why: String,
    },
}

impl Carried {
    /// The schema ID carried, when it is one.
    pub fn id(&self) -> Option<u32> {
        match self {
            Carried::Id { id } => Some(*id),
            Carried::NoHeader | Carried::Garbage { .. } => None,
        }
    }
}

/// The records of a stream that carry the same thing: how many, the
/// newest of them, and (for an ID) the Protobuf indexes it carried.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    pub carried: Carried,
    pub records: u32,
    pub newest: Evidence,
    pub indexes: Option<Vec<i32>>,
}

/// The last records of a stream grouped by what they carry (one entry per
/// ID, one for no header, one for garbage), each with its newest record.
pub fn written(records: &[WireRecord]) -> Vec<Written> {
    let mut out: Vec<Written> = Vec::new();
    for r in records {
        let (carried, indexes) = match &r.header {
            WireHeader::Confluent { id, indexes } => (Carried::Id { id: *id }, indexes.clone()),
            WireHeader::NoHeader => (Carried::NoHeader, None),
            WireHeader::Garbage(why) => (Carried::Garbage { why: why.clone() }, None),
        };
        let same = |w: &Written| match (&w.carried, &carried) {
            (Carried::Garbage { .. }, Carried::Garbage { .. }) => true,
            (a, b) => a == b,
        };
        match out.iter_mut().find(|w| same(w)) {
            Some(w) => {
                w.records += 1;
                if newer(&r.at, &w.newest) {
                    w.newest = r.at.clone();
                    w.carried = carried;
                    w.indexes = indexes;
                }
            }
            None => out.push(Written {
                carried,
                records: 1,
                newest: r.at.clone(),
                indexes,
            }),
        }
    }
    out.sort_by(|a, b| a.carried.cmp(&b.carried));
    out
}

/// Newer by timestamp, then by offset (records of one partition).
fn newer(a: &Evidence, b: &Evidence) -> bool {
    (a.at_ms, a.offset) > (b.at_ms, b.offset)
}

/// The stream's value subject as the registry's last reading has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueSubject {
    pub name: String,
    /// Its live versions.
    pub versions: Vec<i32>,
    /// The ID of its latest version.
    pub latest_id: u32,
    /// AVRO, JSON or PROTOBUF.
    pub schema_type: String,
}

impl ValueSubject {
    fn latest(&self) -> Option<i32> {
        self.versions.iter().copied().max()
    }
}

/// Where the registry has a schema ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Registered as these (subject, version)s.
    Registered(Vec<(String, i32)>),
    /// The registry has no schema with this ID.
    Unknown,
    /// The registry could not be asked, and why.
    NotKnown(String),
}

/// What an ID a producer writes is to the stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Place {
    /// The latest version of the stream's value subject.
    Latest { version: i32 },
    /// An older version of it, with the latest.
    Old { version: i32, latest: i32 },
    /// Registered, but not under the stream's value subject.
    OtherSubject { subjects: Vec<String> },
    /// Not in the registry.
    Unregistered,
    /// Not known, and why (the registry could not be asked).
    NotKnown { why: String },
}

/// One thing a stream's producers write now, placed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writes {
    pub written: Written,
    /// For an ID only.
    pub place: Option<Place>,
}

/// A stream's producers against the registry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamDrift {
    pub subject: String,
    /// The latest version of its value subject; `None` when unregistered.
    pub latest: Option<i32>,
    pub writes: Vec<Writes>,
}

/// Places what the stream's producers write (`written`) against its value
/// subject (`None`: not registered) and `lookup` of each ID.
pub fn place(
    subject_name: &str,
    subject: Option<&ValueSubject>,
    written: &[Written],
    lookup: impl Fn(u32) -> Lookup,
) -> StreamDrift {
    let writes = written
        .iter()
        .map(|w| {
            let place = match &w.carried {
                Carried::Id { id } => Some(place_id(subject_name, subject, *id, lookup(*id))),
                Carried::NoHeader | Carried::Garbage { .. } => None,
            };
            let mut written = w.clone();
            // Indexes mean something for Protobuf only.
            if subject.is_none_or(|s| s.schema_type != "PROTOBUF") {
                written.indexes = None;
            }
            Writes { written, place }
        })
        .collect();
    StreamDrift {
        subject: subject_name.to_owned(),
        latest: subject.and_then(ValueSubject::latest),
        writes,
    }
}

fn place_id(subject_name: &str, subject: Option<&ValueSubject>, id: u32, found: Lookup) -> Place {
    let latest = subject.and_then(ValueSubject::latest);
    match found {
        Lookup::NotKnown(why) => Place::NotKnown { why },
        Lookup::Unknown => Place::Unregistered,
        Lookup::Registered(at) => {
            let mine = at
                .iter()
                .filter(|(s, _)| s == subject_name)
                .map(|(_, v)| *v)
                .max();
            let is_latest = subject.is_some_and(|s| s.latest_id == id);
            match (mine, latest) {
                // The latest schema, registered again at an older version too.
                (Some(_), Some(version)) if is_latest => Place::Latest { version },
                (Some(version), Some(latest)) if version < latest => Place::Old { version, latest },
                (Some(version), _) => Place::Latest { version },
                (None, _) => Place::OtherSubject {
                    subjects: at.into_iter().map(|(s, _)| s).collect(),
                },
            }
        }
    }
}

impl StreamDrift {
    /// "producers write v3 (latest v4)", as the schema page says it.
    pub fn sentence(&self) -> String {
        let parts: Vec<String> = self.writes.iter().map(|w| w.words()).collect();
        let latest = match self.latest {
            Some(v) => format!("latest v{v}"),
            None => format!("{} not in the registry", self.subject),
        };
        if parts.is_empty() {
            return format!("nothing read yet ({latest})");
        }
        format!("producers write {} ({latest})", parts.join(", "))
    }

    /// Whether every ID was placed: only then may an open flag resolve.
    pub fn known(&self) -> bool {
        !self
            .writes
            .iter()
            .any(|w| matches!(w.place, Some(Place::NotKnown { .. })))
    }

    /// The drifts, each with its sentence and record.
    pub fn drifts(&self) -> Vec<(String, &Written)> {
        let headed = self.latest.is_some()
            || self
                .writes
                .iter()
                .any(|w| matches!(w.written.carried, Carried::Id { .. }));
        self.writes
            .iter()
            .filter_map(|w| {
                let id = match w.written.carried {
                    Carried::Id { id } => id,
                    Carried::NoHeader if headed => {
                        let said = format!(
                            "{} record(s) without a schema header on a stream that has one",
                            w.written.records
                        );
                        return Some((said, &w.written));
                    }
                    Carried::NoHeader | Carried::Garbage { .. } => return None,
                };
                let said = match w.place.as_ref()? {
                    Place::Unregistered => format!("schema ID {id} is not registered"),
                    Place::OtherSubject { subjects } => format!(
                        "schema ID {id} is registered under {}, not {}",
                        subjects.join(", "),
                        self.subject
                    ),
                    Place::Old { version, latest } => format!(
                        "schema ID {id} is v{version} of {}, after v{latest} was registered",
                        self.subject
                    ),
                    Place::Latest { .. } | Place::NotKnown { .. } => return None,
                };
                Some((said, &w.written))
            })
            .collect()
    }
}

impl Writes {
    fn words(&self) -> String {
        let w = &self.written;
        match (&w.carried, &self.place) {
            (Carried::Id { .. }, Some(Place::Latest { version } | Place::Old { version, .. })) => {
                format!("v{version}")
            }
            (Carried::Id { id }, Some(Place::OtherSubject { subjects })) => {
                format!("ID {id} of {}", subjects.join(", "))
            }
            (Carried::Id { id }, Some(Place::Unregistered)) => format!("ID {id}, not registered"),
            (Carried::Id { id }, Some(Place::NotKnown { why })) => {
                format!("ID {id} (not known: {why})")
            }
            (Carried::Id { id }, None) => format!("ID {id} (not known: not looked up)"),
            (Carried::NoHeader, _) => "records without a schema header".into(),
            (Carried::Garbage { why }, _) => format!("records not known ({why})"),
        }
    }
}

/// What an evaluation says of a stream's drift flag.
#[derive(Clone, Debug, PartialEq)]
pub enum DriftCall {
    Flag(Observation),
    /// Nothing drifts: an open flag resolves.
    Clear,
    /// An ID could not be looked up: the flag stays as it stands.
    Held,
}

/// The drift call of `topic`.
pub fn observe_drift(topic: &str, d: &StreamDrift, now_ms: i64) -> DriftCall {
    let drifts = d.drifts();
    let Some((first, at)) = drifts.first() else {
        return if d.known() {
            DriftCall::Clear
        } else {
            DriftCall::Held
        };
    };
    let mut reason = format!(
        "{first} ({topic}[{}] at offset {})",
        at.newest.partition, at.newest.offset
    );
    if drifts.len() > 1 {
        reason.push_str(&format!(" and {} more", drifts.len() - 1));
    }
    let receipts: Vec<_> = drifts
        .iter()
        .map(|(said, w)| {
            json!({
                "drift": said,
                "carried": w.carried,
                "records": w.records,
                "partition": w.newest.partition,
                "offset": w.newest.offset,
                "timestamp_ms": w.newest.at_ms,
            })
        })
        .collect();
    DriftCall::Flag(Observation {
        key: drift_key(topic),
        kind: KIND.into(),
        reason,
        onset_ms: at.newest.at_ms.unwrap_or(now_ms),
        evidence: json!({
            "rule": "the schema IDs in the wire-format headers of each partition's last records are the latest registered version of the stream's value subject",
            "subject": d.subject,
            "latest_version": d.latest,
            "producers_write": d.sentence(),
            "drifts": receipts,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(partition: i32, offset: i64, header: WireHeader) -> WireRecord {
        WireRecord {
            at: Evidence {
                partition,
                offset,
                at_ms: Some(1_000 + offset),
            },
            header,
        }
    }

    fn id(id: u32) -> WireHeader {
        WireHeader::Confluent { id, indexes: None }
    }

    fn orders() -> ValueSubject {
        ValueSubject {
            name: "orders-value".into(),
            versions: vec![1, 2, 3, 4],
            latest_id: 14,
            schema_type: "AVRO".into(),
        }
    }

    /// IDs 11..14 are v1..v4 of orders-value; 20 is customers-value's.
    fn registry(id: u32) -> Lookup {
        match id {
            11..=14 => Lookup::Registered(vec![(
                "orders-value".into(),
                i32::try_from(id - 10).unwrap_or(0),
            )]),
            20 => Lookup::Registered(vec![("customers-value".into(), 1)]),
            _ => Lookup::Unknown,
        }
    }

    fn drift(records: &[WireRecord]) -> StreamDrift {
        place("orders-value", Some(&orders()), &written(records), registry)
    }

    #[test]
    fn records_group_by_what_they_carry_with_the_newest() {
        let w = written(&[
            rec(0, 5, id(13)),
            rec(1, 9, id(13)),
            rec(0, 6, WireHeader::NoHeader),
            rec(0, 7, WireHeader::Garbage("a".into())),
            rec(1, 8, WireHeader::Garbage("b".into())),
        ]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(w[0].carried, Carried::Id { id: 13 });
        assert_eq!((w[0].records, w[0].newest.offset), (2, 9));
        assert_eq!(w[2].carried, Carried::Garbage { why: "b".into() });
    }

    #[test]
    fn the_latest_version_is_no_drift() {
        let d = drift(&[rec(0, 1, id(14))]);
        assert_eq!(d.sentence(), "producers write v4 (latest v4)");
        assert_eq!(observe_drift("orders", &d, 0), DriftCall::Clear);
    }

    #[test]
    fn an_old_version_after_a_newer_one_drifts() {
        let d = drift(&[rec(0, 1, id(13))]);
        assert_eq!(d.sentence(), "producers write v3 (latest v4)");
        let DriftCall::Flag(o) = observe_drift("orders", &d, 0) else {
            panic!("no flag");
        };
        assert_eq!(o.kind, KIND);
        assert!(
            o.reason.contains("v3 of orders-value, after v4"),
            "{}",
            o.reason
        );
        assert_eq!(o.evidence["drifts"][0]["offset"], 1);
    }

    #[test]
    fn an_unregistered_id_drifts_with_its_record() {
        let d = drift(&[rec(0, 1, id(14)), rec(2, 41, id(99))]);
        assert_eq!(
            d.sentence(),
            "producers write v4, ID 99, not registered (latest v4)"
        );
        let DriftCall::Flag(o) = observe_drift("orders", &d, 0) else {
            panic!("no flag");
        };
        assert_eq!(
            o.reason,
            "schema ID 99 is not registered (orders[2] at offset 41)"
        );
        assert_eq!(o.onset_ms, 1_041);
        let r = &o.evidence["drifts"][0];
        assert_eq!(
            (r["partition"].as_i64(), r["offset"].as_i64()),
            (Some(2), Some(41))
        );
        assert_eq!(r["carried"]["id"], 99);
    }

    #[test]
    fn an_id_of_another_subject_drifts() {
        let d = drift(&[rec(0, 1, id(20))]);
        let DriftCall::Flag(o) = observe_drift("orders", &d, 0) else {
            panic!("no flag");
        };
        assert!(
            o.reason.contains("under customers-value, not orders-value"),
            "{}",
            o.reason
        );
    }

    #[test]
    fn no_header_drifts_only_on_a_stream_that_has_one() {
        let d = drift(&[rec(0, 1, WireHeader::NoHeader)]);
        let DriftCall::Flag(o) = observe_drift("orders", &d, 0) else {
            panic!("no flag");
        };
        assert!(o.reason.contains("without a schema header"), "{}", o.reason);
        // Unregistered, no IDs anywhere: plain JSON, say; nothing to flag.
        let plain = place(
            "logs-value",
            None,
            &written(&[rec(0, 1, WireHeader::NoHeader)]),
            registry,
        );
        assert_eq!(observe_drift("logs", &plain, 0), DriftCall::Clear);
        assert_eq!(
            plain.sentence(),
            "producers write records without a schema header (logs-value not in the registry)"
        );
    }

    #[test]
    fn garbage_is_not_known_never_a_flag() {
        let d = drift(&[
            rec(0, 1, id(14)),
            rec(0, 2, WireHeader::Garbage("cut short".into())),
        ]);
        assert_eq!(observe_drift("orders", &d, 0), DriftCall::Clear);
        assert!(
            d.sentence().contains("records not known (cut short)"),
            "{}",
            d.sentence()
        );
    }

    #[test]
    fn an_id_not_looked_up_holds_the_flag() {
        let d = place(
            "orders-value",
            Some(&orders()),
            &written(&[rec(0, 1, id(14))]),
            |_| Lookup::NotKnown("registry down".into()),
        );
        assert_eq!(observe_drift("orders", &d, 0), DriftCall::Held);
        assert!(
            d.sentence().contains("not known: registry down"),
            "{}",
            d.sentence()
        );
    }

    #[test]
    fn protobuf_indexes_are_kept_for_protobuf_subjects_only() {
        let header = WireHeader::Confluent {
            id: 14,
            indexes: Some(vec![1, 0]),
        };
        let avro = drift(&[rec(0, 1, header.clone())]);
        assert_eq!(avro.writes[0].written.indexes, None);
        let proto = ValueSubject {
            schema_type: "PROTOBUF".into(),
            ..orders()
        };
        let d = place(
            "orders-value",
            Some(&proto),
            &written(&[rec(0, 1, header)]),
            registry,
        );
        assert_eq!(d.writes[0].written.indexes, Some(vec![1, 0]));
    }
}
