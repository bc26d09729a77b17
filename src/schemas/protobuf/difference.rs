//! Confluent's `Difference`: a kind from `Difference.Type`, a location from
//! `Context`, and a sentence for people.

use std::fmt;

use crate::schemas::Incompatibility;

/// Confluent's `Difference.Type`, spelled as there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DifferenceKind {
    PackageChanged,
    MessageAdded,
    MessageRemoved,
    MessageMoved,
    EnumAdded,
    EnumRemoved,
    EnumConstAdded,
    EnumConstChanged,
    EnumConstRemoved,
    FieldAdded,
    FieldRemoved,
    FieldNameChanged,
    FieldKindChanged,
    FieldScalarKindChanged,
    FieldNamedTypeChanged,
    FieldNumericLabelChanged,
    FieldStringOrBytesLabelChanged,
    RequiredFieldAdded,
    RequiredFieldRemoved,
    OneofAdded,
    OneofRemoved,
    OneofFieldAdded,
    OneofFieldRemoved,
    OneofFieldMovedToTopLevel,
    MultipleFieldsMovedToOneof,
    FieldMovedToExistingOneof,
}

impl DifferenceKind {
    pub fn as_str(self) -> &'static str {
        use DifferenceKind::*;
        match self {
            PackageChanged => "PACKAGE_CHANGED",
            MessageAdded => "MESSAGE_ADDED",
            MessageRemoved => "MESSAGE_REMOVED",
            MessageMoved => "MESSAGE_MOVED",
            EnumAdded => "ENUM_ADDED",
            EnumRemoved => "ENUM_REMOVED",
            EnumConstAdded => "ENUM_CONST_ADDED",
            EnumConstChanged => "ENUM_CONST_CHANGED",
            EnumConstRemoved => "ENUM_CONST_REMOVED",
            FieldAdded => "FIELD_ADDED",
            FieldRemoved => "FIELD_REMOVED",
            FieldNameChanged => "FIELD_NAME_CHANGED",
            FieldKindChanged => "FIELD_KIND_CHANGED",
            FieldScalarKindChanged => "FIELD_SCALAR_KIND_CHANGED",
            FieldNamedTypeChanged => "FIELD_NAMED_TYPE_CHANGED",
            FieldNumericLabelChanged => "FIELD_NUMERIC_LABEL_CHANGED",
            FieldStringOrBytesLabelChanged => "FIELD_STRING_OR_BYTES_LABEL_CHANGED",
            RequiredFieldAdded => "REQUIRED_FIELD_ADDED",
            RequiredFieldRemoved => "REQUIRED_FIELD_REMOVED",
            OneofAdded => "ONEOF_ADDED",
            OneofRemoved => "ONEOF_REMOVED",
            OneofFieldAdded => "ONEOF_FIELD_ADDED",
            OneofFieldRemoved => "ONEOF_FIELD_REMOVED",
            OneofFieldMovedToTopLevel => "ONEOF_FIELD_MOVED_TO_TOP_LEVEL",
            MultipleFieldsMovedToOneof => "MULTIPLE_FIELDS_MOVED_TO_ONEOF",
            FieldMovedToExistingOneof => "FIELD_MOVED_TO_EXISTING_ONEOF",
        }
    }

    /// Whether the kind is in Confluent's `SchemaDiff.COMPATIBLE_CHANGES`.
    pub fn is_compatible(self) -> bool {
        use DifferenceKind::*;
        matches!(
            self,
            MessageAdded
                | MessageMoved
                | EnumAdded
                | EnumRemoved
                | EnumConstAdded
                | EnumConstChanged
                | EnumConstRemoved
                | FieldAdded
                | FieldRemoved
                | FieldNameChanged
                | FieldStringOrBytesLabelChanged
                | OneofAdded
                | OneofRemoved
                | OneofFieldAdded
                | OneofFieldMovedToTopLevel
        )
    }
}

impl fmt::Display for DifferenceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One difference between a writer's and a reader's schema.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Difference {
    pub kind: DifferenceKind,
    /// Confluent's path, e.g. `#/Order/3` (see the module documentation).
    pub location: String,
    /// What differs, naming the message, the field and its number, and
    /// what each side has; it says "writer" and "reader", never which one
    /// is newer.
    pub message: String,
}

impl From<Difference> for Incompatibility {
    fn from(d: Difference) -> Self {
        Incompatibility {
            kind: d.kind.as_str().to_owned(),
            location: d.location,
            message: d.message,
        }
    }
}
