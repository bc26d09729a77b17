//! PLACEHOLDER: replaced by the protobuf engine before this lands on main.

use super::{Incompatibility, SchemaError, SchemaText};

#[derive(Debug)]
pub struct ProtobufSchema;

impl ProtobufSchema {
    pub fn parse(_schema: &SchemaText) -> Result<ProtobufSchema, SchemaError> {
        Ok(ProtobufSchema)
    }
}

pub fn can_read(_reader: &ProtobufSchema, _writer: &ProtobufSchema) -> Vec<Incompatibility> {
    Vec::new()
}
