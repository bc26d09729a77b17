//! Protobuf compatibility with the semantics of Confluent Schema Registry's
//! `protobuf-provider` diff (`io.confluent.kafka.schemaregistry.protobuf.diff`).
//!
//! Confluent checks BACKWARD compatibility as `SchemaDiff.compare(previous,
//! new)`: it lists every difference between the two files and the new schema
//! can read the previous one's data when every difference is in
//! `SchemaDiff.COMPATIBLE_CHANGES`. For [`can_read`]`(reader, writer)` the
//! previous schema is the WRITER and the new one the READER.
//!
//! What is compared, as Confluent does:
//! - the package, then every top-level message and enum of the main file,
//!   matched by name (not only the first message, the record type);
//! - inside a message, fields keyed by tag number, oneofs by name, then the
//!   nested messages and enums, matched by name;
//! - a field whose type is a message defined in an import (a reference or a
//!   well-known `google/protobuf/*.proto` file) is followed into that
//!   message, which is compared too, guarded against recursion; a message of
//!   the main file is not followed, as it is compared where it is declared.
//!
//! Locations are Confluent's `Context` paths: `#/` then the names and numbers
//! entered, joined by `/`. A message is named by its path from the top of
//! its file without the package (`#/Order`, `#/Order/Item`), a field by its
//! tag number (`#/Order/3`), a field of a oneof by the oneof's name and the
//! tag (`#/Order/payment/7`), an enum value by its number (`#/Status/2`); the
//! package is `#/`. A message reached through an import is located in its
//! own file (`#/Money/1`), not under the field that reached it.

mod diff;
mod difference;
mod model;
mod parse;
#[cfg(test)]
mod tests;

pub use difference::{Difference, DifferenceKind};
pub use model::ProtobufSchema;

use super::Incompatibility;

/// Every difference Confluent's diff finds between the `writer`'s schema
/// (its "original") and the `reader`'s (its "update"), compatible ones
/// included, in Confluent's order, each reported once.
pub fn compare(writer: &ProtobufSchema, reader: &ProtobufSchema) -> Vec<Difference> {
    diff::compare(writer, reader)
}

/// Why `reader` cannot read data written with `writer`: the differences
/// that are not in Confluent's `COMPATIBLE_CHANGES`; empty when it can.
pub fn can_read(reader: &ProtobufSchema, writer: &ProtobufSchema) -> Vec<Incompatibility> {
    compare(writer, reader)
        .into_iter()
        .filter(|d| !d.kind.is_compatible())
        .map(Incompatibility::from)
        .collect()
}
