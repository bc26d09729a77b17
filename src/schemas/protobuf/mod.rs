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
//! - a field whose type is a message defined in an import (a reference or
//!   a well-known file such as `google/protobuf/timestamp.proto`) is
//!   followed into that message, which is compared too, guarded against
//!   recursion; a message of the main file is not followed, as it is
//!   compared where it is declared;
//! - labels only when both sides write one, as Confluent compares Wire's
//!   parse of the text: a proto3 `int32 n` that becomes `repeated int32 n`
//!   is no difference (an explicit `optional int32 n` that does is).
//!
//! Locations are Confluent's `Context` paths: `#/` then the names and numbers
//! entered, joined by `/`. A message is named by its path from the top of
//! its file without the package (`#/Order`, `#/Order/Item`), a field by its
//! tag number (`#/Order/3`), a field of a oneof by the oneof's name and the
//! tag (`#/Order/payment/7`), an enum value by its number (`#/Status/2`); the
//! package is `#/`. A message reached through an import is located in its
//! own file (`#/Money/1`), not under the field that reached it.
//!
//! Where this differs from Confluent:
//! - Confluent reports a followed message's differences once per field
//!   that reaches it; here each difference is reported once.
//! - Confluent lists messages, enums and enum values in hash order; here
//!   messages and enums come in the writer's order of declaration (then the
//!   reader's), enum values by number. Everything else is in its order.
//! - Confluent skips following a message whose import is the same subject
//!   and version on both sides; here, the same import path with the same
//!   text (which compares equal anyway).
//! - `.proto` text is compiled by protox, which rejects what `protoc`
//!   rejects (an undefined type, say); Confluent's diff runs on Wire's
//!   parse, which resolves less strictly.
//! - `google/type/*.proto` imports need a reference here; Confluent ships
//!   them. The other well-known files need none, as in Confluent.

mod diff;
mod difference;
mod known;
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
