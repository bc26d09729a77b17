//! Confluent's `SchemaDiff`, `MessageSchemaDiff`, `FieldSchemaDiff` and
//! `EnumSchemaDiff`, a function per Java method and in the same order, over
//! the model. The writer's schema is Confluent's "original", the reader's
//! its "update".

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use super::difference::{Difference, DifferenceKind as Kind};
use super::model::{Field, FieldType, Label, Message, Oneof, ProtobufSchema, Types};

pub(super) fn compare(writer: &ProtobufSchema, reader: &ProtobufSchema) -> Vec<Difference> {
    let mut comparison = Comparison {
        writer,
        reader,
        path: Vec::new(),
        found: Vec::new(),
        seen: HashSet::new(),
        frames: vec![Frame::default()],
        in_scope: HashSet::new(),
        settled: HashMap::new(),
    };
    comparison.compare_files();
    comparison.found
}

/// Confluent's `Context`, with its subcontexts as a stack of frames.
struct Comparison<'s> {
    writer: &'s ProtobufSchema,
    reader: &'s ProtobufSchema,
    /// `Context.fullPath`: the location of what is being compared.
    path: Vec<String>,
    found: Vec<Difference>,
    /// Confluent reports a followed message once per field that reaches it;
    /// the same difference is reported here once.
    seen: HashSet<Difference>,
    /// The root, then one per followed message (Confluent's subcontext,
    /// whose incompatibility becomes FIELD_NAMED_TYPE_CHANGED).
    frames: Vec<Frame>,
    /// The writer's messages whose fields are being compared: Confluent's
    /// `SchemaScope`, which stops a recursive type from being followed into
    /// itself.
    in_scope: HashSet<usize>,
    /// Whether a followed pair (writer's message, reader's message) is
    /// incompatible. Kept only for a pair whose comparison met no message in
    /// scope: its outcome is then the same wherever it is reached, so
    /// following it again would only repeat it.
    settled: HashMap<(usize, usize), bool>,
}

#[derive(Default)]
struct Frame {
    incompatible: bool,
    /// The comparison met a message in scope, so its outcome depends on
    /// where it was reached from.
    cut: bool,
}

/// Where a field of a reader's oneof was in the writer's schema.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Group<'a> {
    Oneof(&'a str),
    Field(u32),
}

/// The kind Confluent's `FieldSchemaDiff.kind` gives a type: enums count as
/// scalars.
#[derive(PartialEq, Eq)]
enum TypeKind {
    Scalar,
    Message,
    Map,
}

/// Confluent's `FieldSchemaDiff.ScalarKind`: the scalars that share a wire
/// encoding, which a field may change between.
#[derive(PartialEq, Eq)]
enum ScalarGroup {
    GeneralNumber,
    SignedNumber,
    StringOrBytes,
    Fixed32,
    Fixed64,
    Float,
    Double,
}

impl<'s> Comparison<'s> {
    /// `SchemaDiff.compare(ctx, ProtoFileElement, ProtoFileElement)`.
    fn compare_files(&mut self) {
        let (writer, reader) = (self.writer, self.reader);
        if writer.package != reader.package {
            self.add(
                Kind::PackageChanged,
                format!(
                    "The writer's schema {} and the reader's {}, so the fully-qualified names of their types differ.",
                    package_phrase(&writer.package),
                    package_phrase(&reader.package)
                ),
            );
        }
        self.compare_types(&writer.types, &reader.types);
    }

    /// `SchemaDiff.compareTypeElements`: messages and enums declared side
    /// by side, matched by simple name.
    fn compare_types(&mut self, writer: &Types, reader: &Types) {
        self.compare_declared_messages(&writer.messages, &reader.messages);
        self.compare_declared_enums(&writer.enums, &reader.enums);
    }

    fn compare_declared_messages(&mut self, writer: &[usize], reader: &[usize]) {
        let (w, r) = (self.writer, self.reader);
        let names = match_by_name(
            writer,
            reader,
            |id| &w.messages[id].name,
            |id| &r.messages[id].name,
        );
        for (name, in_writer, in_reader) in names {
            self.path.push(name.to_owned());
            match (in_writer, in_reader) {
                (Some((_, id)), None) => self.add(
                    Kind::MessageRemoved,
                    format!(
                        "Message `{}` is in the writer's schema but not in the reader's.",
                        w.messages[id].full_name
                    ),
                ),
                (None, Some((_, id))) => self.add(
                    Kind::MessageAdded,
                    format!(
                        "Message `{}` is in the reader's schema only.",
                        r.messages[id].full_name
                    ),
                ),
                (Some((w_index, w_id)), Some((r_index, r_id))) => {
                    self.compare_messages(w_id, r_id);
                    // Data refers to a message by its indexes in the schema
                    // it was written with, so a move is compatible.
                    if w_index != r_index {
                        self.add(
                            Kind::MessageMoved,
                            format!(
                                "Message `{}` is message {} of its scope in the writer's schema and message {} in the reader's.",
                                w.messages[w_id].full_name,
                                w_index + 1,
                                r_index + 1
                            ),
                        );
                    }
                }
                (None, None) => {}
            }
            self.path.pop();
        }
    }

    fn compare_declared_enums(&mut self, writer: &[usize], reader: &[usize]) {
        let (w, r) = (self.writer, self.reader);
        let names = match_by_name(
            writer,
            reader,
            |id| &w.enums[id].name,
            |id| &r.enums[id].name,
        );
        for (name, in_writer, in_reader) in names {
            self.path.push(name.to_owned());
            match (in_writer, in_reader) {
                (Some((_, id)), None) => self.add(
                    Kind::EnumRemoved,
                    format!(
                        "Enum `{}` is in the writer's schema but not in the reader's.",
                        w.enums[id].full_name
                    ),
                ),
                (None, Some((_, id))) => self.add(
                    Kind::EnumAdded,
                    format!(
                        "Enum `{}` is in the reader's schema only.",
                        r.enums[id].full_name
                    ),
                ),
                (Some((_, w_id)), Some((_, r_id))) => self.compare_enums(w_id, r_id),
                (None, None) => {}
            }
            self.path.pop();
        }
    }

    /// `MessageSchemaDiff.compare`: the fields unless the writer's message
    /// is already in scope, then the nested types in any case.
    fn compare_messages(&mut self, w_id: usize, r_id: usize) {
        let (w, r) = (&self.writer.messages[w_id], &self.reader.messages[r_id]);
        let entered = self.in_scope.insert(w_id);
        if entered {
            self.compare_members(w, r);
        } else if let Some(frame) = self.frames.last_mut() {
            frame.cut = true;
        }
        self.compare_types(&w.nested, &r.nested);
        if entered {
            self.in_scope.remove(&w_id);
        }
    }

    /// The body of `MessageSchemaDiff.compare`: every field by tag, wherever
    /// it is (top level or oneof), so that moving a field between oneofs
    /// cannot hide a change of its type.
    fn compare_members(&mut self, w: &'s Message, r: &'s Message) {
        let writer = Members::of(w);
        let reader = Members::of(r);
        let deleted = writer.deleted_oneofs(&reader);
        for oneof in &r.oneofs {
            self.check_grouping(&w.full_name, oneof, &writer);
        }
        self.compare_oneof_names(&w.full_name, &writer, &reader);
        let tags: BTreeSet<u32> = writer
            .by_tag
            .keys()
            .chain(reader.by_tag.keys())
            .copied()
            .collect();
        for tag in tags {
            self.compare_tag(&w.full_name, tag, &writer, &reader, &deleted);
        }
    }

    /// Flags a reader's oneof whose fields the writer had in more than one
    /// group (a oneof, or a top-level field on its own; a new field counts
    /// for none): the writer may set several of them, the reader keeps one.
    fn check_grouping(&mut self, message: &str, oneof: &Oneof, writer: &Members) {
        let mut groups = BTreeSet::new();
        let mut moved_in = 0;
        let mut earlier = Vec::new();
        for field in &oneof.fields {
            let (name, number) = (&field.name, field.number);
            if let Some(&group) = writer.oneof_of.get(&number) {
                groups.insert(Group::Oneof(group));
                earlier.push(format!("`{name}` ({number}, in oneof `{group}`)"));
            } else if writer.by_tag.contains_key(&number) {
                groups.insert(Group::Field(number));
                earlier.push(format!("`{name}` ({number}, outside any oneof)"));
                moved_in += 1;
            }
        }
        if groups.len() < 2 {
            return;
        }
        let kind = if moved_in > 1 {
            Kind::MultipleFieldsMovedToOneof
        } else {
            Kind::FieldMovedToExistingOneof
        };
        self.add_at(
            &oneof.name,
            kind,
            format!(
                "In message `{message}`, oneof `{}` of the reader's schema holds fields that the writer's schema can set together: {}; the reader keeps only one of them.",
                oneof.name,
                earlier.join(", ")
            ),
        );
    }

    /// The oneofs added and removed, by name in order.
    fn compare_oneof_names(&mut self, message: &str, writer: &Members, reader: &Members) {
        let names: BTreeSet<&str> = writer
            .oneofs
            .keys()
            .chain(reader.oneofs.keys())
            .copied()
            .collect();
        for name in names {
            let (kind, side) = match (
                writer.oneofs.contains_key(name),
                reader.oneofs.contains_key(name),
            ) {
                (true, false) => (
                    Kind::OneofRemoved,
                    "is in the writer's schema but not in the reader's",
                ),
                (false, true) => (Kind::OneofAdded, "is in the reader's schema only"),
                _ => continue,
            };
            self.add_at(
                name,
                kind,
                format!("In message `{message}`, oneof `{name}` {side}."),
            );
        }
    }

    /// One tag of `MessageSchemaDiff.compare`'s single pass over fields.
    fn compare_tag(
        &mut self,
        message: &str,
        tag: u32,
        writer: &Members,
        reader: &Members,
        deleted: &HashSet<&str>,
    ) {
        let writer_oneof = writer.oneof_of.get(&tag).copied();
        let reader_oneof = reader.oneof_of.get(&tag).copied();
        match (writer.by_tag.get(&tag), reader.by_tag.get(&tag)) {
            (Some(field), None) => match writer_oneof {
                // Deleting a whole oneof is compatible; dropping some of
                // its fields is not.
                Some(oneof) if deleted.contains(oneof) => {}
                Some(oneof) => self.add_at_oneof(
                    oneof,
                    tag,
                    Kind::OneofFieldRemoved,
                    format!(
                        "In message `{message}`, field `{}` ({tag}) of oneof `{oneof}` is in the writer's schema but not in the reader's.",
                        field.name
                    ),
                ),
                None => self.field_removed(message, field),
            },
            (None, Some(field)) => match reader_oneof {
                Some(oneof) => self.add_at_oneof(
                    oneof,
                    tag,
                    Kind::OneofFieldAdded,
                    format!(
                        "In message `{message}`, field `{}` ({tag}) of oneof `{oneof}` is in the reader's schema only.",
                        field.name
                    ),
                ),
                None => self.field_added(message, field),
            },
            (Some(w), Some(r)) => {
                if let (Some(oneof), None) = (writer_oneof, reader_oneof) {
                    self.add_at(
                        &tag.to_string(),
                        Kind::OneofFieldMovedToTopLevel,
                        format!(
                            "In message `{message}`, field `{}` ({tag}) is in oneof `{oneof}` in the writer's schema but outside any oneof in the reader's.",
                            w.name
                        ),
                    );
                }
                // Reported where the field is in the reader's schema.
                let depth = self.path.len();
                self.path.extend(reader_oneof.map(str::to_owned));
                self.path.push(tag.to_string());
                self.compare_fields(message, w, r);
                self.path.truncate(depth);
            }
            (None, None) => {}
        }
    }

    /// A top-level field only the writer has.
    fn field_removed(&mut self, message: &str, field: &Field) {
        let (kind, what) = if field.label == Some(Label::Required) {
            (Kind::RequiredFieldRemoved, "required field")
        } else {
            (Kind::FieldRemoved, "field")
        };
        self.add_at(
            &field.number.to_string(),
            kind,
            format!(
                "In message `{message}`, {what} `{}` ({}) is in the writer's schema but not in the reader's.",
                field.name, field.number
            ),
        );
    }

    /// A top-level field only the reader has.
    fn field_added(&mut self, message: &str, field: &Field) {
        let (kind, what, consequence) = if field.label == Some(Label::Required) {
            (
                Kind::RequiredFieldAdded,
                "required field",
                ", so data from the writer lacks it",
            )
        } else {
            (Kind::FieldAdded, "field", "")
        };
        self.add_at(
            &field.number.to_string(),
            kind,
            format!(
                "In message `{message}`, {what} `{}` ({}) is in the reader's schema only{consequence}.",
                field.name, field.number
            ),
        );
    }

    /// `FieldSchemaDiff.compare`.
    fn compare_fields(&mut self, message: &str, w: &Field, r: &Field) {
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
    fn compare_labels_and_types(
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
    fn compare_scalar_types(
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
    fn compare_message_types(&mut self, site: &Site, w_id: usize, r_id: usize) {
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
    fn same_file(&self, w_file: usize, r_file: usize) -> bool {
        let (w, r) = (&self.writer.files[w_file], &self.reader.files[r_file]);
        (w.is_main && r.is_main)
            || (!w.is_main && !r.is_main && w.name == r.name && w.text == r.text)
    }

    /// Compares a followed pair of messages in a fresh frame located at the
    /// writer's message (Confluent's subcontext with `setFullName`); true
    /// when the reader cannot read it.
    fn follow(&mut self, w_id: usize, r_id: usize) -> bool {
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
    fn compare_map_types(
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
    fn compare_enums(&mut self, w_id: usize, r_id: usize) {
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

    fn add_at(&mut self, segment: &str, kind: Kind, message: String) {
        self.path.push(segment.to_owned());
        self.add(kind, message);
        self.path.pop();
    }

    fn add_at_oneof(&mut self, oneof: &str, tag: u32, kind: Kind, message: String) {
        self.path.push(oneof.to_owned());
        self.add_at(&tag.to_string(), kind, message);
        self.path.pop();
    }

    /// `Context.addDifference` at the current path.
    fn add(&mut self, kind: Kind, message: String) {
        if !kind.is_compatible()
            && let Some(frame) = self.frames.last_mut()
        {
            frame.incompatible = true;
        }
        let difference = Difference {
            kind,
            location: format!("#/{}", self.path.join("/")),
            message,
        };
        if self.seen.insert(difference.clone()) {
            self.found.push(difference);
        }
    }
}

/// A message's fields indexed as `MessageSchemaDiff.collectFields` does.
struct Members<'m> {
    by_tag: BTreeMap<u32, &'m Field>,
    oneof_of: HashMap<u32, &'m str>,
    oneofs: BTreeMap<&'m str, &'m Oneof>,
}

impl<'m> Members<'m> {
    fn of(message: &'m Message) -> Members<'m> {
        let mut members = Members {
            by_tag: message.fields.iter().map(|f| (f.number, f)).collect(),
            oneof_of: HashMap::new(),
            oneofs: BTreeMap::new(),
        };
        for oneof in &message.oneofs {
            members.oneofs.insert(&oneof.name, oneof);
            for field in &oneof.fields {
                members.by_tag.insert(field.number, field);
                members.oneof_of.insert(field.number, &oneof.name);
            }
        }
        members
    }

    /// The writer's oneofs that the reader lacks by name and none of whose
    /// fields it has anywhere: deleted whole, which is compatible.
    fn deleted_oneofs(&self, reader: &Members) -> HashSet<&'m str> {
        self.oneofs
            .iter()
            .filter(|(name, oneof)| {
                !reader.oneofs.contains_key(*name)
                    && oneof
                        .fields
                        .iter()
                        .all(|f| !reader.by_tag.contains_key(&f.number))
            })
            .map(|(name, _)| *name)
            .collect()
    }
}

/// The field (or part of a map field) a sentence is about.
#[derive(Clone, Copy)]
struct Site<'a> {
    message: &'a str,
    field: &'a str,
    number: u32,
    part: Part,
}

#[derive(Clone, Copy)]
enum Part {
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

fn type_kind(ty: &FieldType) -> TypeKind {
    match ty {
        FieldType::Scalar(_) | FieldType::Enum(_) => TypeKind::Scalar,
        FieldType::Message(_) => TypeKind::Message,
        FieldType::Map(..) => TypeKind::Map,
    }
}

/// `FieldSchemaDiff.scalarKind`, with enums among the varint numbers.
fn scalar_group(ty: &FieldType) -> Option<ScalarGroup> {
    use super::model::Scalar::*;
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
fn type_phrase(schema: &ProtobufSchema, ty: &FieldType) -> String {
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

fn type_name(schema: &ProtobufSchema, ty: &FieldType) -> String {
    match ty {
        FieldType::Enum(id) => schema.enums[*id].full_name.clone(),
        FieldType::Message(id) => schema.messages[*id].full_name.clone(),
        other => type_phrase(schema, other),
    }
}

fn package_phrase(package: &str) -> String {
    if package.is_empty() {
        "has no package".to_owned()
    } else {
        format!("is in package `{package}`")
    }
}

/// A declaration's position among its siblings of its kind (Confluent's
/// message index) and its id in the schema.
type Declared = Option<(usize, usize)>;

/// Declarations of one kind matched by simple name: the writer's in order,
/// then those only the reader has.
fn match_by_name<'a>(
    writer: &[usize],
    reader: &[usize],
    writer_name: impl Fn(usize) -> &'a String,
    reader_name: impl Fn(usize) -> &'a String,
) -> Vec<(&'a str, Declared, Declared)> {
    let in_reader: HashMap<&str, (usize, usize)> = reader
        .iter()
        .enumerate()
        .map(|(index, &id)| (reader_name(id).as_str(), (index, id)))
        .collect();
    let mut matched: Vec<(&str, Declared, Declared)> = writer
        .iter()
        .enumerate()
        .map(|(index, &id)| {
            let name = writer_name(id).as_str();
            (name, Some((index, id)), in_reader.get(name).copied())
        })
        .collect();
    let in_writer: HashSet<&str> = matched.iter().map(|(name, ..)| *name).collect();
    matched.extend(reader.iter().enumerate().filter_map(|(index, &id)| {
        let name = reader_name(id).as_str();
        (!in_writer.contains(name)).then_some((name, None, Some((index, id))))
    }));
    matched
}
