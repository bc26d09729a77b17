//! Vectors written from Confluent's behaviour: its test resources
//! (`json-schema-provider/src/test/resources/diff-*.json`, where each case
//! lists every difference and the STRICT and LENIENT verdicts) and its
//! `SchemaDiffTest`, restated here case by case, plus cases for what the
//! everit loader makes of keywords (synthetic `allOf`s), references,
//! errors, messages and the modes.

#![allow(clippy::unwrap_used)]

mod arrays;
mod combined;
mod draft2020;
mod errors;
mod keywords;
mod modes;
mod objects;
mod references;
mod reporting;

use super::{JsonSchema, Policy, can_read_with, compare};
use crate::schemas::{ResolvedReference, SchemaText, SchemaType};

fn parse(text: &str) -> JsonSchema {
    JsonSchema::parse(&SchemaText::new(SchemaType::Json, text))
        .unwrap_or_else(|e| panic!("{text} should parse: {e}"))
}

fn parse_with(text: &str, references: &[(&str, &str)]) -> JsonSchema {
    let mut schema = SchemaText::new(SchemaType::Json, text);
    schema.references = references
        .iter()
        .map(|(name, text)| ResolvedReference {
            name: (*name).to_owned(),
            text: (*text).to_owned(),
        })
        .collect();
    JsonSchema::parse(&schema).unwrap_or_else(|e| panic!("{text} should parse: {e}"))
}

/// Every difference, compatible or not, as Confluent prints them in its
/// resources (`KIND #/path`), sorted: Confluent's own order follows Java
/// hash sets.
fn changes(writer: &JsonSchema, reader: &JsonSchema) -> Vec<String> {
    let mut changes: Vec<String> = compare::differences(writer, reader, Policy::Strict)
        .iter()
        .map(|d| format!("{} #/{}", d.kind.name(), d.path))
        .collect();
    changes.sort();
    changes
}

/// Whether the reader can read the writer's data: under STRICT, LENIENT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Compatible,
    Incompatible,
    /// Incompatible under STRICT, compatible under LENIENT.
    LenientOnly,
}
use Verdict::*;

/// One case: the writer's schema (Confluent's original), the reader's
/// (its update), every difference, and the verdict.
type Vector = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    Verdict,
);

fn verdict(writer: &JsonSchema, reader: &JsonSchema) -> Verdict {
    let strict = can_read_with(reader, writer, Policy::Strict).is_empty();
    let lenient = can_read_with(reader, writer, Policy::Lenient).is_empty();
    match (strict, lenient) {
        (true, _) => Compatible,
        (false, true) => LenientOnly,
        (false, false) => Incompatible,
    }
}

/// Runs every vector and reports all that fail at once.
fn run(vectors: &[Vector]) {
    let failures: Vec<String> = vectors
        .iter()
        .filter_map(|&(name, writer, reader, expected, expected_verdict)| {
            let (writer, reader) = (parse(writer), parse(reader));
            let mut expected: Vec<String> = expected.iter().map(|c| (*c).to_owned()).collect();
            expected.sort();
            let got = changes(&writer, &reader);
            let got_verdict = verdict(&writer, &reader);
            (got != expected || got_verdict != expected_verdict).then(|| {
                format!(
                    "{name}:\n  expected {expected:?} {expected_verdict:?}\n  got      {got:?} {got_verdict:?}"
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Parsed schemas can be cached and shared between threads.
#[test]
fn parsed_schemas_are_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<JsonSchema>();
}
