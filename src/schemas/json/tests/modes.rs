//! The engine under the modes of `schema::check`: which schema reads
//! which, and the per-consumer check.

use super::*;
use crate::schemas::Mode;
use crate::schemas::check::{Direction, ParsedSchema, check, check_under};

fn json(text: &str) -> ParsedSchema {
    ParsedSchema::parse(&SchemaText::new(SchemaType::Json, text)).expect("a JSON schema")
}

const CLOSED_V1: &str =
    r#"{"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}"#;
const CLOSED_V2: &str = r#"{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
    "additionalProperties": false}"#;
const OPEN_V1: &str = r#"{"type": "object", "properties": {"a": {"type": "string"}}}"#;
const OPEN_V2: &str =
    r#"{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}"#;

#[test]
fn adding_to_a_closed_model_is_backward_but_not_forward() {
    let history = [json(CLOSED_V1)];
    let new = json(CLOSED_V2);
    assert!(check(Mode::Backward, &history, &new).compatible);
    let forward = check(Mode::Forward, &history, &new);
    assert!(!forward.compatible);
    let finding = &forward.findings[0];
    assert_eq!(finding.direction, Direction::OldReadsNew);
    assert_eq!(
        finding.incompatibility.kind,
        "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"
    );
    assert_eq!(finding.incompatibility.location, "#/properties/b");
    assert!(!check(Mode::Full, &history, &new).compatible);
}

#[test]
fn adding_to_an_open_model_is_forward_but_not_backward() {
    let history = [json(OPEN_V1)];
    let new = json(OPEN_V2);
    assert!(check(Mode::Forward, &history, &new).compatible);
    let backward = check(Mode::Backward, &history, &new);
    assert!(!backward.compatible);
    let finding = &backward.findings[0];
    assert_eq!(finding.direction, Direction::NewReadsOld);
    assert_eq!(
        finding.incompatibility.kind,
        "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
    );
}

#[test]
fn a_lenient_subject_accepts_a_property_added_to_an_open_model() {
    let history = [json(OPEN_V1)];
    let new = json(OPEN_V2);
    assert!(!check_under(Mode::Backward, Policy::Strict, &history, &new).compatible);
    assert!(check_under(Mode::Backward, Policy::Lenient, &history, &new).compatible);
    // Leniency relaxes the rules, not the mode: a narrowed type still fails.
    let narrowed = json(r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#);
    assert!(!check_under(Mode::Backward, Policy::Lenient, &history, &narrowed).compatible);
}

#[test]
fn closed_old_to_open_new_is_backward_only() {
    // The new open reader takes the old closed data; the old closed reader
    // rejects the new property `b`.
    let history = [json(CLOSED_V1)];
    let new = json(OPEN_V2);
    assert!(check(Mode::Backward, &history, &new).compatible);
    assert!(!check(Mode::Forward, &history, &new).compatible);
}

#[test]
fn transitive_modes_check_older_versions() {
    let history = [
        json(r#"{"type": "integer"}"#),
        json(r#"{"type": "number"}"#),
    ];
    let new = json(r#"{"type": "number", "minimum": 0}"#);
    assert!(!check(Mode::Backward, &history, &new).compatible);
    let narrower = json(r#"{"type": "number"}"#);
    assert!(check(Mode::BackwardTransitive, &history, &narrower).compatible);
    let integer_only = json(r#"{"type": "integer"}"#);
    let verdict = check(Mode::ForwardTransitive, &history, &integer_only);
    // Version 2 (number) reads integers; version 1 (integer) too.
    assert!(verdict.compatible);
    let verdict = check(Mode::BackwardTransitive, &history, &integer_only);
    assert_eq!(verdict.findings[0].version, 2);
    assert_eq!(verdict.findings[0].incompatibility.kind, "TYPE_NARROWED");
}

#[test]
fn per_consumer_the_group_schema_reads_the_proposed_one() {
    // The consumer group reads with an open v1; the producer proposes a
    // closed schema without `a`: the group's reader still accepts it.
    let group = parse(OPEN_V1);
    let proposed = parse(r#"{"type": "object", "properties": {}, "additionalProperties": false}"#);
    assert!(can_read_with(&group, &proposed, Policy::Strict).is_empty());
    // A producer changing `a` to a number breaks the group.
    let proposed = parse(r#"{"type": "object", "properties": {"a": {"type": "number"}}}"#);
    let found = super::super::can_read(&group, &proposed);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, "TYPE_CHANGED");
}
