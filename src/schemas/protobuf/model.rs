//! What Confluent's diff looks at in a schema, built from the compiled
//! descriptors.
//!
//! Confluent compares Square Wire's parse of the `.proto` text
//! (`ProtoFileElement`), not descriptors, so this model gives descriptors the
//! shape of that text: map fields are maps rather than fields of a synthetic
//! entry message, which is not a nested message; a proto3 `optional` field is
//! a top-level field labelled optional rather than a member of a synthetic
//! oneof; a label is the one written in the text (none for a proto3 field
//! without one, a map or a oneof member); groups, which Wire keeps apart from
//! fields and nested types, are left out. Type names are resolved by protox,
//! with protobuf's scoping rules, where Confluent resolves them itself.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::schemas::ResolvedReference;
use prost_reflect::{
    Cardinality, DescriptorPool, EnumDescriptor, FieldDescriptor, FileDescriptor, Kind,
    MessageDescriptor, Syntax,
};

/// A parsed Protobuf schema: its main file and the messages and enums of
/// every file it imports, directly or not.
#[derive(Debug)]
pub struct ProtobufSchema {
    pub(super) package: String,
    /// The top-level messages and enums of the main file, in order.
    pub(super) types: Types,
    pub(super) messages: Vec<Message>,
    pub(super) enums: Vec<Enum>,
    pub(super) files: Vec<SourceFile>,
}

/// Messages and enums declared side by side (in a file or a message), as
/// indexes into [`ProtobufSchema::messages`] and [`ProtobufSchema::enums`].
#[derive(Debug, Default)]
pub(super) struct Types {
    pub(super) messages: Vec<usize>,
    pub(super) enums: Vec<usize>,
}

/// Where a type is declared, which decides whether Confluent follows a
/// field into it.
#[derive(Debug)]
pub(super) struct SourceFile {
    pub(super) name: String,
    /// The main file, whose messages are compared where they are declared.
    pub(super) is_main: bool,
    /// The text of a reference; `None` for a well-known file.
    pub(super) text: Option<String>,
}

#[derive(Debug)]
pub(super) struct Message {
    /// The simple name: what Confluent matches declarations by.
    pub(super) name: String,
    pub(super) full_name: String,
    /// The name within its package (`Outer.Inner`): what Confluent compares
    /// a field's message type by, and the path of a followed message.
    pub(super) local_name: String,
    pub(super) file: usize,
    /// Fields outside any oneof, proto3 `optional` ones included.
    pub(super) fields: Vec<Field>,
    pub(super) oneofs: Vec<Oneof>,
    pub(super) nested: Types,
}

#[derive(Debug)]
pub(super) struct Oneof {
    pub(super) name: String,
    pub(super) fields: Vec<Field>,
}

#[derive(Debug)]
pub(super) struct Field {
    pub(super) name: String,
    pub(super) number: u32,
    pub(super) label: Option<Label>,
    pub(super) ty: FieldType,
}

/// A label as written in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Label {
    Optional,
    Required,
    Repeated,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum FieldType {
    Scalar(Scalar),
    Enum(usize),
    Message(usize),
    Map(Box<FieldType>, Box<FieldType>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scalar {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
}

#[derive(Debug)]
pub(super) struct Enum {
    pub(super) name: String,
    pub(super) full_name: String,
    /// Value names by number; with `allow_alias` the last name declared for
    /// a number wins, as in Confluent's `HashMap`.
    pub(super) values: BTreeMap<i32, String>,
}

impl Label {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Label::Optional => "optional",
            Label::Required => "required",
            Label::Repeated => "repeated",
        }
    }
}

impl Scalar {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Scalar::Double => "double",
            Scalar::Float => "float",
            Scalar::Int32 => "int32",
            Scalar::Int64 => "int64",
            Scalar::Uint32 => "uint32",
            Scalar::Uint64 => "uint64",
            Scalar::Sint32 => "sint32",
            Scalar::Sint64 => "sint64",
            Scalar::Fixed32 => "fixed32",
            Scalar::Fixed64 => "fixed64",
            Scalar::Sfixed32 => "sfixed32",
            Scalar::Sfixed64 => "sfixed64",
            Scalar::Bool => "bool",
            Scalar::String => "string",
            Scalar::Bytes => "bytes",
        }
    }
}

impl ProtobufSchema {
    /// Builds the model of `main`, a file of `pool`, whose imports were
    /// resolved from `references` first and protox's well-known files next.
    pub(super) fn from_pool(
        pool: &DescriptorPool,
        main: &FileDescriptor,
        references: &[ResolvedReference],
    ) -> ProtobufSchema {
        let files = pool
            .files()
            .map(|f| SourceFile {
                is_main: f.index() == main.index(),
                text: references
                    .iter()
                    .find(|r| r.name == f.name())
                    .map(|r| r.text.clone()),
                name: f.name().to_owned(),
            })
            .collect();
        let builder = Builder::new(pool);
        ProtobufSchema {
            package: main.package_name().to_owned(),
            types: builder.declarations(main.messages(), main.enums()),
            messages: builder.messages,
            enums: builder.enums,
            files,
        }
    }
}

/// Converts descriptors to the model, each message and enum once, in two
/// steps so that fields can refer to types declared after them.
struct Builder {
    message_ids: HashMap<String, usize>,
    enum_ids: HashMap<String, usize>,
    messages: Vec<Message>,
    enums: Vec<Enum>,
}

impl Builder {
    fn new(pool: &DescriptorPool) -> Builder {
        let mut builder = Builder {
            message_ids: HashMap::new(),
            enum_ids: HashMap::new(),
            messages: Vec::new(),
            enums: Vec::new(),
        };
        // Map entries are registered too, though never declared, so that
        // every message a field can name has an index.
        for message in pool.all_messages() {
            builder
                .message_ids
                .insert(message.full_name().to_owned(), builder.messages.len());
            builder.messages.push(Message {
                name: message.name().to_owned(),
                full_name: message.full_name().to_owned(),
                local_name: local_name(message.full_name(), message.package_name()),
                file: message.parent_file().index(),
                fields: Vec::new(),
                oneofs: Vec::new(),
                nested: Types::default(),
            });
        }
        for e in pool.all_enums() {
            builder
                .enum_ids
                .insert(e.full_name().to_owned(), builder.enums.len());
            builder.enums.push(enum_values(&e));
        }
        for message in pool.all_messages() {
            builder.fill(&message);
        }
        builder
    }

    fn fill(&mut self, descriptor: &MessageDescriptor) {
        let Some(&id) = self.message_ids.get(descriptor.full_name()) else {
            return;
        };
        let proto2 = descriptor.parent_file().syntax() == Syntax::Proto2;
        let mut fields = Vec::new();
        let mut oneofs: Vec<Oneof> = descriptor
            .oneofs()
            .filter(|o| !o.is_synthetic())
            .map(|o| Oneof {
                name: o.name().to_owned(),
                fields: Vec::new(),
            })
            .collect();
        for field in descriptor.fields().filter(|f| !f.is_group()) {
            let real_oneof = field
                .containing_oneof()
                .filter(|o| !o.is_synthetic())
                .map(|o| o.name().to_owned());
            let Some(ty) = self.field_type(&field.kind(), field.is_map()) else {
                continue;
            };
            let built = Field {
                name: field.name().to_owned(),
                number: field.number(),
                label: label(&field, proto2, real_oneof.is_some()),
                ty,
            };
            match real_oneof.and_then(|name| oneofs.iter_mut().find(|o| o.name == name)) {
                Some(oneof) => oneof.fields.push(built),
                None => fields.push(built),
            }
        }
        let groups: HashSet<String> = descriptor
            .fields()
            .filter(|f| f.is_group())
            .filter_map(|f| f.kind().as_message().map(|m| m.full_name().to_owned()))
            .collect();
        let nested = self.declarations(
            descriptor
                .child_messages()
                .filter(|m| !groups.contains(m.full_name())),
            descriptor.child_enums(),
        );
        if let Some(message) = self.messages.get_mut(id) {
            message.fields = fields;
            message.oneofs = oneofs;
            message.nested = nested;
        }
    }

    /// Messages (less map entries) and enums declared side by side.
    fn declarations(
        &self,
        messages: impl Iterator<Item = MessageDescriptor>,
        enums: impl Iterator<Item = EnumDescriptor>,
    ) -> Types {
        Types {
            messages: messages
                .filter(|m| !m.is_map_entry())
                .filter_map(|m| self.message_ids.get(m.full_name()).copied())
                .collect(),
            enums: enums
                .filter_map(|e| self.enum_ids.get(e.full_name()).copied())
                .collect(),
        }
    }

    /// `None` only for a type missing from the pool or a map entry without
    /// a key or a value, which a compiled pool cannot have.
    fn field_type(&self, kind: &Kind, is_map: bool) -> Option<FieldType> {
        let scalar = match kind {
            // Fields 1 and 2 of the entry; looked up rather than taken with
            // `map_entry_key_field`, which panics on an entry without them.
            Kind::Message(entry) if is_map => {
                let part = |number| {
                    let field = entry.get_field(number)?;
                    self.field_type(&field.kind(), false)
                };
                return Some(FieldType::Map(Box::new(part(1)?), Box::new(part(2)?)));
            }
            Kind::Message(m) => {
                return self
                    .message_ids
                    .get(m.full_name())
                    .map(|&id| FieldType::Message(id));
            }
            Kind::Enum(e) => {
                return self
                    .enum_ids
                    .get(e.full_name())
                    .map(|&id| FieldType::Enum(id));
            }
            Kind::Double => Scalar::Double,
            Kind::Float => Scalar::Float,
            Kind::Int32 => Scalar::Int32,
            Kind::Int64 => Scalar::Int64,
            Kind::Uint32 => Scalar::Uint32,
            Kind::Uint64 => Scalar::Uint64,
            Kind::Sint32 => Scalar::Sint32,
            Kind::Sint64 => Scalar::Sint64,
            Kind::Fixed32 => Scalar::Fixed32,
            Kind::Fixed64 => Scalar::Fixed64,
            Kind::Sfixed32 => Scalar::Sfixed32,
            Kind::Sfixed64 => Scalar::Sfixed64,
            Kind::Bool => Scalar::Bool,
            Kind::String => Scalar::String,
            Kind::Bytes => Scalar::Bytes,
        };
        Some(FieldType::Scalar(scalar))
    }
}

/// The label Wire's parser records: `repeated` always; `required` and
/// `optional` in proto2; in proto3 only an explicit `optional`; none for a
/// map (written without a label) or a oneof member (which may not have one).
fn label(field: &FieldDescriptor, proto2: bool, in_oneof: bool) -> Option<Label> {
    if field.is_map() || in_oneof {
        return None;
    }
    if field.field_descriptor_proto().proto3_optional() {
        return Some(Label::Optional);
    }
    match field.cardinality() {
        Cardinality::Repeated => Some(Label::Repeated),
        Cardinality::Required => Some(Label::Required),
        Cardinality::Optional if proto2 => Some(Label::Optional),
        Cardinality::Optional => None,
    }
}

fn enum_values(e: &EnumDescriptor) -> Enum {
    Enum {
        name: e.name().to_owned(),
        full_name: e.full_name().to_owned(),
        values: e
            .values()
            .map(|v| (v.number(), v.name().to_owned()))
            .collect(),
    }
}

/// `full_name` less its package: Confluent's `localName`.
fn local_name(full_name: &str, package: &str) -> String {
    if package.is_empty() {
        return full_name.to_owned();
    }
    full_name
        .strip_prefix(package)
        .and_then(|rest| rest.strip_prefix('.'))
        .unwrap_or(full_name)
        .to_owned()
}

impl ProtobufSchema {
    /// The fields of the main file's first message (the record type, as
    /// the registry's serializers take it), oneof members included, each
    /// keyed by its tag, with its type in `.proto` words.
    pub fn top_fields(&self) -> Vec<crate::schemas::fields::FieldShape> {
        let Some(m) = self.types.messages.first().map(|i| &self.messages[*i]) else {
            return Vec::new();
        };
        let oneofs = m.oneofs.iter().flat_map(|o| o.fields.iter());
        m.fields
            .iter()
            .chain(oneofs)
            .map(|f| crate::schemas::fields::FieldShape {
                name: f.name.clone(),
                number: Some(f.number),
                aliases: Vec::new(),
                ty: match f.label {
                    Some(Label::Repeated) => format!("repeated {}", self.type_words(&f.ty)),
                    _ => self.type_words(&f.ty),
                },
            })
            .collect()
    }

    /// `int64`, a message or enum by its full name, `map<string, a.Item>`.
    fn type_words(&self, ty: &FieldType) -> String {
        match ty {
            FieldType::Scalar(s) => s.as_str().to_owned(),
            FieldType::Enum(id) => self.enums[*id].full_name.clone(),
            FieldType::Message(id) => self.messages[*id].full_name.clone(),
            FieldType::Map(k, v) => format!("map<{}, {}>", self.type_words(k), self.type_words(v)),
        }
    }
}
