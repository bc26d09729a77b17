//! The compatibility modes over a subject's history, and the check of a
//! producer's schema against each consumer's reader schema.
//!
//! Modes follow Confluent's `CompatibilityChecker`: BACKWARD means the new
//! schema reads data written with the latest one; FORWARD, the latest
//! reads the new; FULL, both. Transitive modes check every earlier version,
//! newest first, and stop at the first version that fails, as the registry
//! does. The findings of that version are all reported.

use serde::{Deserialize, Serialize};

use super::{Incompatibility, Mode, SchemaError, SchemaText, SchemaType, avro, json, protobuf};

/// A parsed schema of any format.
#[derive(Debug)]
pub enum ParsedSchema {
    Avro(avro::AvroSchema),
    Json(json::JsonSchema),
    Protobuf(protobuf::ProtobufSchema),
}

impl ParsedSchema {
    pub fn parse(schema: &SchemaText) -> Result<ParsedSchema, SchemaError> {
        Ok(match schema.schema_type {
            SchemaType::Avro => ParsedSchema::Avro(avro::AvroSchema::parse(schema)?),
            SchemaType::Json => ParsedSchema::Json(json::JsonSchema::parse(schema)?),
            SchemaType::Protobuf => {
                ParsedSchema::Protobuf(protobuf::ProtobufSchema::parse(schema)?)
            }
        })
    }

    pub fn schema_type(&self) -> SchemaType {
        match self {
            ParsedSchema::Avro(_) => SchemaType::Avro,
            ParsedSchema::Json(_) => SchemaType::Json,
            ParsedSchema::Protobuf(_) => SchemaType::Protobuf,
        }
    }
}

/// Why `reader` cannot read data written with `writer`; empty when it can.
pub fn can_read(reader: &ParsedSchema, writer: &ParsedSchema) -> Vec<Incompatibility> {
    can_read_under(json::Policy::Strict, reader, writer)
}

/// [`can_read`] under a subject's `compatibilityPolicy`, which only JSON
/// Schema has: Avro and Protobuf are judged the same under any policy.
pub fn can_read_under(
    policy: json::Policy,
    reader: &ParsedSchema,
    writer: &ParsedSchema,
) -> Vec<Incompatibility> {
    match (reader, writer) {
        (ParsedSchema::Avro(r), ParsedSchema::Avro(w)) => avro::can_read(r, w),
        (ParsedSchema::Json(r), ParsedSchema::Json(w)) => json::can_read_with(r, w, policy),
        (ParsedSchema::Protobuf(r), ParsedSchema::Protobuf(w)) => protobuf::can_read(r, w),
        _ => vec![Incompatibility {
            kind: "SCHEMA_TYPE_CHANGED".into(),
            location: "/".into(),
            message: format!(
                "Incompatible because of different schema type: the reader is {} and the writer is {}",
                reader.schema_type().as_str(),
                writer.schema_type().as_str()
            ),
        }],
    }
}

/// Which way a finding was checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The new schema as reader, an earlier one as writer (BACKWARD).
    NewReadsOld,
    /// An earlier schema as reader, the new one as writer (FORWARD).
    OldReadsNew,
}

/// One incompatibility with an earlier version, found by a mode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// 1-based position in the history given, oldest first: the registry's
    /// version number when the history is a subject's whole history.
    pub version: usize,
    pub direction: Direction,
    #[serde(flatten)]
    pub incompatibility: Incompatibility,
}

/// The answer of a mode check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub mode: Mode,
    pub compatible: bool,
    pub findings: Vec<Finding>,
}

/// Checks `new` against `history` (oldest first) under `mode`, with
/// `can_read(reader, writer)` as the format's rule.
pub fn check_mode<S>(
    mode: Mode,
    history: &[S],
    new: &S,
    can_read: impl Fn(&S, &S) -> Vec<Incompatibility>,
) -> Verdict {
    let versions: Vec<(usize, &S)> = if mode.transitive() {
        history.iter().enumerate().rev().collect()
    } else {
        history.iter().enumerate().next_back().into_iter().collect()
    };
    for (index, old) in versions {
        let mut findings = Vec::new();
        if mode.backward() {
            findings.extend(can_read(new, old).into_iter().map(|i| Finding {
                version: index + 1,
                direction: Direction::NewReadsOld,
                incompatibility: i,
            }));
        }
        if mode.forward() {
            findings.extend(can_read(old, new).into_iter().map(|i| Finding {
                version: index + 1,
                direction: Direction::OldReadsNew,
                incompatibility: i,
            }));
        }
        if !findings.is_empty() {
            return Verdict {
                mode,
                compatible: false,
                findings,
            };
        }
    }
    Verdict {
        mode,
        compatible: true,
        findings: Vec::new(),
    }
}

/// [`check_mode`] over schemas of any format.
pub fn check(mode: Mode, history: &[ParsedSchema], new: &ParsedSchema) -> Verdict {
    check_under(mode, json::Policy::Strict, history, new)
}

/// [`check`] under a subject's `compatibilityPolicy` (see [`can_read_under`]).
pub fn check_under(
    mode: Mode,
    policy: json::Policy,
    history: &[ParsedSchema],
    new: &ParsedSchema,
) -> Verdict {
    check_mode(mode, history, new, |reader, writer| {
        can_read_under(policy, reader, writer)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy format: a schema is a set of field names; a reader can read a
    /// writer when every reader field is in the writer.
    fn toy(reader: &&str, writer: &&str) -> Vec<Incompatibility> {
        reader
            .chars()
            .filter(|c| !writer.contains(*c))
            .map(|c| Incompatibility {
                kind: "READER_FIELD_MISSING_DEFAULT_VALUE".into(),
                location: format!("/{c}"),
                message: format!("{c} is missing"),
            })
            .collect()
    }

    #[test]
    fn none_accepts_anything() {
        assert!(check_mode(Mode::None, &["a"], &"xyz", toy).compatible);
    }

    #[test]
    fn an_empty_history_is_compatible_in_every_mode() {
        for mode in Mode::ALL {
            assert!(check_mode(mode, &[] as &[&str], &"x", toy).compatible);
        }
    }

    #[test]
    fn backward_is_new_reading_latest() {
        // new "ab" reads latest "abc": fine; new "abd" lacks d in the writer.
        assert!(check_mode(Mode::Backward, &["abc"], &"ab", toy).compatible);
        let v = check_mode(Mode::Backward, &["abc"], &"abd", toy);
        assert!(!v.compatible);
        assert_eq!(v.findings.len(), 1);
        assert_eq!(v.findings[0].direction, Direction::NewReadsOld);
        assert_eq!(v.findings[0].version, 1);
    }

    #[test]
    fn forward_is_latest_reading_new() {
        assert!(check_mode(Mode::Forward, &["ab"], &"abc", toy).compatible);
        let v = check_mode(Mode::Forward, &["abc"], &"ab", toy);
        assert_eq!(v.findings[0].direction, Direction::OldReadsNew);
    }

    #[test]
    fn full_needs_both_directions() {
        assert!(check_mode(Mode::Full, &["ab"], &"ba", toy).compatible);
        let v = check_mode(Mode::Full, &["ab"], &"abc", toy);
        assert_eq!(v.findings.len(), 1);
        assert_eq!(v.findings[0].direction, Direction::NewReadsOld);
    }

    #[test]
    fn non_transitive_modes_look_only_at_the_latest() {
        // Version 1 lacks b, but only version 2 counts.
        assert!(check_mode(Mode::Backward, &["a", "ab"], &"ab", toy).compatible);
        let v = check_mode(Mode::BackwardTransitive, &["a", "ab"], &"ab", toy);
        assert!(!v.compatible);
        assert_eq!(v.findings[0].version, 1);
    }

    #[test]
    fn transitive_stops_at_the_newest_failing_version() {
        let v = check_mode(Mode::BackwardTransitive, &["a", "b", "ab"], &"ab", toy);
        // Version 3 passes; version 2 ("b") lacks a and is reported; version
        // 1 is not looked at.
        assert_eq!(v.findings.len(), 1);
        assert_eq!(v.findings[0].version, 2);
    }

    #[test]
    fn modes_round_trip_through_their_names() {
        for mode in Mode::ALL {
            assert_eq!(Mode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(Mode::parse("full-transitive"), Some(Mode::FullTransitive));
        assert_eq!(Mode::parse("sideways"), None);
        assert_eq!(SchemaType::parse("protobuf"), Some(SchemaType::Protobuf));
    }
}
