//! `FieldSchemaDiff` and `EnumSchemaDiff`: comparing one field's label and
//! type (scalar, message, map) and an enum's values, and how a sentence
//! names the field and its type.

use std::collections::BTreeSet;
use std::fmt;

use super::{Comparison, Frame, ScalarGroup, TypeKind};

use crate::schemas::protobuf::difference::DifferenceKind as Kind;
use crate::schemas::protobuf::model::{Field, FieldType, Label, ProtobufSchema};

impl<'s> Comparison<'s> {
    /// `FieldSchemaDiff.compare`.
    pub(super) fn compare_fields(&mut self, message: &str, w: &Field, r: &Field) {
        if w.name != r.name {
            self.add(
                Kind::FieldNameChanged,
                format!(
                    "In message `{message}`, field {} is named `{}` in the writer's schema and `{}` in the reader's.",
                    w.number, w.name, r.name
                ),
            );
        }
        let site = Site {
            message,
            field: &w.name,
            number: w.number,
            part: Part::Whole,
        };
        self.compare_labels_and_types(&site, w.label, r.label, &w.ty, &r.ty);
    }

    /// `FieldSchemaDiff.compareLabelsAndTypes`.
    pub(super) fn compare_labels_and_types(
        &mut self,
        site: &Site,
        w_label: Option<Label>,
        r_label: Option<Label>,
        w: &FieldType,
        r: &FieldType,
    ) {
        if type_kind(w) != type_kind(r) {
            self.add(
                Kind::FieldKindChanged,
                format!(
                    "{site} is {} in the writer's schema but {} in the reader's; scalars, messages and maps do not convert into one another.",
                    type_phrase(self.writer, w),
                    type_phrase(self.reader, r)
                ),
            );
            return;
        }
        match (w, r) {
            (FieldType::Message(w_id), FieldType::Message(r_id)) => {
                self.compare_message_types(site, *w_id, *r_id);
            }
            (FieldType::Map(w_key, w_value), FieldType::Map(r_key, r_value)) => {
                self.compare_map_types(site, (w_key, w_value), (r_key, r_value));
            }
            _ => self.compare_scalar_types(site, w_label, r_label, w, r),
        }
    }

    /// `FieldSchemaDiff.compareScalarTypes`: a label change counts only
    /// when both sides write a label, as Confluent compares Wire's parse of
    /// the text (so a proto3 field without a label may become `repeated`).
    pub(super) fn compare_scalar_types(
        &mut self,
        site: &Site,
        w_label: Option<Label>,
        r_label: Option<Label>,
        w: &FieldType,
        r: &FieldType,
    ) {
        // The phrases are built only for a difference: most fields have none.
        let phrases = |c: &Self| (type_phrase(c.writer, w), type_phrase(c.reader, r));
        let group = scalar_group(w);
        if group != scalar_group(r) {
            let (w_type, r_type) = phrases(self);
            self.add(
                Kind::FieldScalarKindChanged,
                format!(
                    "{site} is {w_type} in the writer's schema but {r_type} in the reader's, and the two are not encoded alike."
                ),
            );
            return;
        }
        let (Some(w_label), Some(r_label)) = (w_label, r_label) else {
            return;
        };
        if w_label == r_label {
            return;
        }
        let (w_label, r_label) = (w_label.as_str(), r_label.as_str());
        let (w_type, r_type) = phrases(self);
        if group == Some(ScalarGroup::StringOrBytes) {
            self.add(
                Kind::FieldStringOrBytesLabelChanged,
                format!(
                    "{site} is {w_label} {w_type} in the writer's schema and {r_label} {r_type} in the reader's, which string and bytes fields allow."
                ),
            );
        } else {
            self.add(
                Kind::FieldNumericLabelChanged,
                format!(
                    "{site} is {w_label} {w_type} in the writer's schema but {r_label} {r_type} in the reader's; a numeric field cannot change its label."
                ),
            );
        }
    }

    /// `FieldSchemaDiff.compareMessageTypes`: the types must have the same
    /// name within their packages; a type of an import that is not the same
    /// file on both sides is followed and compared.
    pub(super) fn compare_message_types(&mut self, site: &Site, w_id: usize, r_id: usize) {
        let (w, r) = (&self.writer.messages[w_id], &self.reader.messages[r_id]);
        if w.local_name != r.local_name {
            self.add(
                Kind::FieldNamedTypeChanged,
                format!(
                    "{site} has type `{}` in the writer's schema but `{}` in the reader's.",
                    w.full_name, r.full_name
                ),
            );
            return;
        }
        if self.same_file(w.file, r.file) {
            return;
        }
        if self.follow(w_id, r_id) {
            self.add(
                Kind::FieldNamedTypeChanged,
                format!(
                    "{site} has type `{}`, which differs incompatibly between the writer's schema and the reader's (see #/{}).",
                    w.full_name,
                    w.local_name.replace('.', "/")
                ),
            );
        }
    }

    /// Confluent's "don't need to compare if both are local or refer to the
    /// same subject-version": both in the main file, or the same import
    /// with the same text.
    pub(super) fn same_file(&self, w_file: usize, r_file: usize) -> bool {
        let (w, r) = (&self.writer.files[w_file], &self.reader.files[r_file]);
        (w.is_main && r.is_main)
            || (!w.is_main && !r.is_main && w.name == r.name && w.text == r.text)
    }

    /// Compares a followed pair of messages in a fresh frame located at the
    /// writer's message (Confluent's subcontext with `setFullName`); true
    /// when the reader cannot read it.
    pub(super) fn follow(&mut self, w_id: usize, r_id: usize) -> bool {
        if let Some(&incompatible) = self.settled.get(&(w_id, r_id)) {
            return incompatible;
        }
        let local = self.writer.messages[w_id]
            .local_name
            .split('.')
            .map(str::to_owned)
            .collect();
        let outer = std::mem::replace(&mut self.path, local);
        self.frames.push(Frame::default());
        self.compare_messages(w_id, r_id);
        let frame = self.frames.pop().unwrap_or_default();
        self.path = outer;
        if frame.cut {
            if let Some(parent) = self.frames.last_mut() {
                parent.cut = true;
            }
        } else {
            self.settled.insert((w_id, r_id), frame.incompatible);
        }
        frame.incompatible
    }

    /// `FieldSchemaDiff.compareMapTypes`: keys, then values, as fields
    /// without labels.
    pub(super) fn compare_map_types(
        &mut self,
        site: &Site,
        (w_key, w_value): (&FieldType, &FieldType),
        (r_key, r_value): (&FieldType, &FieldType),
    ) {
        let key = Site {
            part: Part::MapKey,
            ..*site
        };
        self.compare_labels_and_types(&key, None, None, w_key, r_key);
        let value = Site {
            part: Part::MapValue,
            ..*site
        };
        self.compare_labels_and_types(&value, None, None, w_value, r_value);
    }

    /// `EnumSchemaDiff.compare`: values by number.
    pub(super) fn compare_enums(&mut self, w_id: usize, r_id: usize) {
        let (w, r) = (&self.writer.enums[w_id], &self.reader.enums[r_id]);
        let numbers: BTreeSet<i32> = w.values.keys().chain(r.values.keys()).copied().collect();
        let name = &w.full_name;
        for number in numbers {
            let (kind, message) = match (w.values.get(&number), r.values.get(&number)) {
                (Some(value), None) => (
                    Kind::EnumConstRemoved,
                    format!(
                        "Enum `{name}` has value {number} (`{value}`) in the writer's schema but not in the reader's."
                    ),
                ),
                (None, Some(value)) => (
                    Kind::EnumConstAdded,
                    format!(
                        "Enum `{name}` has value {number} (`{value}`) in the reader's schema only."
                    ),
                ),
                (Some(w_value), Some(r_value)) if w_value != r_value => (
                    Kind::EnumConstChanged,
                    format!(
                        "Enum `{name}` names value {number} `{w_value}` in the writer's schema and `{r_value}` in the reader's."
                    ),
                ),
                _ => continue,
            };
            self.add_at(&number.to_string(), kind, message);
        }
    }
}

/// The field (or part of a map field) a sentence is about.
#[derive(Clone, Copy)]
pub(super) struct Site<'a> {
    message: &'a str,
    field: &'a str,
    number: u32,
    part: Part,
}

#[derive(Clone, Copy)]
pub(super) enum Part {
    Whole,
    MapKey,
    MapValue,
}

impl fmt::Display for Site<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Site {
            message,
            field,
            number,
            part,
        } = self;
        match part {
            Part::Whole => write!(f, "In message `{message}`, field `{field}` ({number})"),
            Part::MapKey => write!(
                f,
                "In message `{message}`, the key type of map field `{field}` ({number})"
            ),
            Part::MapValue => write!(
                f,
                "In message `{message}`, the value type of map field `{field}` ({number})"
            ),
        }
    }
}

pub(super) fn type_kind(ty: &FieldType) -> TypeKind {
    match ty {
        FieldType::Scalar(_) | FieldType::Enum(_) => TypeKind::Scalar,
        FieldType::Message(_) => TypeKind::Message,
        FieldType::Map(..) => TypeKind::Map,
    }
}

/// `FieldSchemaDiff.scalarKind`, with enums among the varint numbers.
pub(super) fn scalar_group(ty: &FieldType) -> Option<ScalarGroup> {
    use crate::schemas::protobuf::model::Scalar::*;
    Some(match ty {
        FieldType::Enum(_) => ScalarGroup::GeneralNumber,
        FieldType::Scalar(Int32 | Int64 | Uint32 | Uint64 | Bool) => ScalarGroup::GeneralNumber,
        FieldType::Scalar(Sint32 | Sint64) => ScalarGroup::SignedNumber,
        FieldType::Scalar(String | Bytes) => ScalarGroup::StringOrBytes,
        FieldType::Scalar(Fixed32 | Sfixed32) => ScalarGroup::Fixed32,
        FieldType::Scalar(Fixed64 | Sfixed64) => ScalarGroup::Fixed64,
        FieldType::Scalar(Float) => ScalarGroup::Float,
        FieldType::Scalar(Double) => ScalarGroup::Double,
        FieldType::Message(_) | FieldType::Map(..) => return None,
    })
}

/// A type as a sentence names it: `int32`, enum `a.Status`, message
/// `a.Item`, `map<string, a.Item>`.
pub(super) fn type_phrase(schema: &ProtobufSchema, ty: &FieldType) -> String {
    match ty {
        FieldType::Scalar(s) => s.as_str().to_owned(),
        FieldType::Enum(id) => format!("enum `{}`", schema.enums[*id].full_name),
        FieldType::Message(id) => format!("message `{}`", schema.messages[*id].full_name),
        FieldType::Map(key, value) => format!(
            "map<{}, {}>",
            type_name(schema, key),
            type_name(schema, value)
        ),
    }
}

pub(super) fn type_name(schema: &ProtobufSchema, ty: &FieldType) -> String {
    match ty {
        FieldType::Enum(id) => schema.enums[*id].full_name.clone(),
        FieldType::Message(id) => schema.messages[*id].full_name.clone(),
        other => type_phrase(schema, other),
    }
}
