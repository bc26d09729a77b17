//! Confluent's own files, which its registry resolves without a reference
//! (`ProtobufSchema.KNOWN_DEPENDENCIES`) and protox does not ship. Only
//! their packages, names and numbers matter to a schema that imports them;
//! those are the ones of Confluent's `protobuf-types`.

const META: &str = r#"syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";

// Documentation, parameters, tags and rules attached to a schema element.
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
  repeated Rule rules = 4;
}

message Rule {
  string name = 1;
  string doc = 2;
  string expr = 3;
  string sql = 4;
}

extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
"#;

const DECIMAL: &str = r#"syntax = "proto3";
package confluent.type;

message Decimal {
  bytes value = 1;
  uint32 precision = 2;
  int32 scale = 3;
}
"#;

const VARIANT: &str = r#"syntax = "proto3";
package confluent.type;

message Variant {
  bytes metadata = 1;
  bytes value = 2;
}
"#;

/// The text of a Confluent file by import path.
pub(super) fn confluent_file(name: &str) -> Option<&'static str> {
    match name {
        "confluent/meta.proto" => Some(META),
        "confluent/type/decimal.proto" => Some(DECIMAL),
        "confluent/type/variant.proto" => Some(VARIANT),
        _ => None,
    }
}
