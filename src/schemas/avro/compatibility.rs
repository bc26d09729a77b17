//! Java's `SchemaCompatibility.ReaderWriterCompatibilityChecker` (Avro
//! 1.12), step by step, so that its findings and their locations come out
//! as Confluent reports them. Where Java departs from the specification,
//! or from what one would expect, the comment says so; the behaviour is
//! kept.

use std::collections::{BTreeSet, HashMap};

use super::IncompatibilityKind as Kind;
use super::{AvroSchema, AvroType, Enum, Field, Fixed, Named, Node, NodeId, Record};

/// One incompatibility, as Java's `Incompatibility` plus a sentence.
#[derive(Clone, Debug)]
pub(super) struct Finding {
    pub(super) kind: Kind,
    pub(super) location: String,
    pub(super) message: String,
}

/// How deep the walk goes, in nested types: Java recurses once per
/// level, and so do we. Schemas written out in one JSON document nest at
/// most ~64 types (serde_json stops at 128 levels of JSON), so only named
/// types referencing each other in a long chain get here, and they would
/// otherwise overflow the stack.
pub(super) const MAX_DEPTH: usize = 128;

/// The walk's work budget, in bytes of findings produced or copied plus
/// [`PAIR_COST`] a pair of types. Java's walk (and so Confluent's) is
/// quadratic in union branches and copies every finding of a pair each
/// time the pair is met, so a 300 KiB union of chained records costs it
/// minutes and gigabytes; real checks use a few MiB at most.
pub(super) const MAX_WORK: usize = 32 << 20;

/// What a pair of types costs the budget besides its findings: its memo
/// entry.
const PAIR_COST: usize = 64;

/// Every incompatibility found reading `writer`'s data with `reader`.
pub(super) fn check(reader: &AvroSchema, writer: &AvroSchema) -> Vec<Finding> {
    let mut checker = Checker {
        reader,
        writer,
        memo: HashMap::new(),
        ambiguous_field: None,
        depth: 0,
        work: 0,
        stopped: None,
    };
    let findings = checker.fresh(reader.root, writer.root);
    // A walk cut short answers that alone: its other findings are partial.
    if let Some(finding) = checker.stopped {
        return vec![finding];
    }
    // Java throws on a reader field matching two writer fields, and the
    // registry then reports that one error and nothing else.
    match checker.ambiguous_field {
        Some(finding) => vec![finding],
        None => findings,
    }
}

/// A reference token of Java's location stack.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// The empty token Java pushes first and leaves out of the pointer.
    Root,
    Fields,
    Type,
    Items,
    Values,
    Symbols,
    Size,
    Name,
    /// A field position or a writer union branch.
    Index(usize),
}

/// Java's location stack, plus the reader field names entered, which only
/// the messages use.
#[derive(Default)]
struct Location<'a> {
    steps: Vec<Step>,
    fields: Vec<&'a str>,
}

impl Location<'_> {
    /// Java's `getLocation()`: the tokens after the root, joined as a JSON
    /// Pointer. No token holds `~` or `/`, so none needs escaping.
    fn pointer(&self) -> String {
        let mut pointer = String::from("/");
        for (i, step) in self.steps.iter().skip(1).enumerate() {
            if i > 0 {
                pointer.push('/');
            }
            match step {
                Step::Root => {}
                Step::Fields => pointer.push_str("fields"),
                Step::Type => pointer.push_str("type"),
                Step::Items => pointer.push_str("items"),
                Step::Values => pointer.push_str("values"),
                Step::Symbols => pointer.push_str("symbols"),
                Step::Size => pointer.push_str("size"),
                Step::Name => pointer.push_str("name"),
                Step::Index(i) => pointer.push_str(&i.to_string()),
            }
        }
        pointer
    }

    /// " (field 'x')" naming the innermost reader field, if any.
    fn of_field(&self) -> String {
        self.fields
            .last()
            .map(|name| format!(" (field '{name}')"))
            .unwrap_or_default()
    }
}

/// What the memo holds for a reader/writer pair.
enum Memo {
    /// Being checked further up the stack: the schemas are recursive.
    InProgress,
    Done(Vec<Finding>),
}

struct Checker<'a> {
    reader: &'a AvroSchema,
    writer: &'a AvroSchema,
    /// Java memoises by the identity of the two schema objects: one entry
    /// per pair of nodes. An entry keeps the locations of the first visit,
    /// and Java reports them again, unchanged, when the same pair is met
    /// at another place (a named type used twice): so do we.
    memo: HashMap<(NodeId, NodeId), Memo>,
    ambiguous_field: Option<Finding>,
    /// Pairs being checked up the stack.
    depth: usize,
    /// Spent of [`MAX_WORK`].
    work: usize,
    /// Why the walk stopped, once a limit is reached; from then on every
    /// pair answers "no findings" so the walk unwinds at once.
    stopped: Option<Finding>,
}

impl<'a> Checker<'a> {
    /// Java's two-argument `getCompatibility`: a new location stack. Java
    /// uses it for the schema's root and, surprisingly, inside unions,
    /// whose branches are then checked only for a yes or no (their
    /// findings, located from that new root, stay in the memo).
    fn fresh(&mut self, reader: NodeId, writer: NodeId) -> Vec<Finding> {
        let mut location = Location::default();
        self.compatibility(Step::Root, reader, writer, &mut location)
    }

    /// Java's `getCompatibility(referenceToken, reader, writer, location)`.
    fn compatibility(
        &mut self,
        step: Step,
        reader: NodeId,
        writer: NodeId,
        at: &mut Location<'a>,
    ) -> Vec<Finding> {
        if self.stopped.is_some() {
            return Vec::new();
        }
        at.steps.push(step);
        let findings = match self.memo.get(&(reader, writer)) {
            // Recursion: compatible unless proven otherwise further up.
            Some(Memo::InProgress) => Vec::new(),
            Some(Memo::Done(findings)) => {
                let findings = findings.clone();
                self.spend(cost(&findings), at);
                findings
            }
            None if self.depth >= MAX_DEPTH => {
                self.stop(
                    format!("the schemas nest more than {MAX_DEPTH} types deep"),
                    at,
                );
                Vec::new()
            }
            None => {
                self.memo.insert((reader, writer), Memo::InProgress);
                self.depth += 1;
                let findings = self.calculate(reader, writer, at);
                self.depth -= 1;
                self.spend(PAIR_COST + cost(&findings), at);
                self.memo
                    .insert((reader, writer), Memo::Done(findings.clone()));
                findings
            }
        };
        at.steps.pop();
        findings
    }

    /// Charges the budget; past it, the walk stops.
    fn spend(&mut self, bytes: usize, at: &Location<'_>) {
        self.work = self.work.saturating_add(bytes);
        if self.work > MAX_WORK && self.stopped.is_none() {
            self.stop(
                format!(
                    "comparing them needs more than {} MiB of type pairs and findings",
                    MAX_WORK >> 20
                ),
                at,
            );
        }
    }

    fn stop(&mut self, why: String, at: &Location<'_>) {
        self.stopped = Some(Finding {
            kind: Kind::TooComplexToCheck,
            location: at.pointer(),
            message: format!(
                "The check stopped at path '{}': {why}, past what this console compares, so \
                 the reader cannot be said to read the writer's data",
                at.pointer()
            ),
        });
    }

    /// Java's `calculateCompatibility`.
    fn calculate(&mut self, r: NodeId, w: NodeId, at: &mut Location<'a>) -> Vec<Finding> {
        let (reader_schema, writer_schema) = (self.reader, self.writer);
        let (reader, writer) = (reader_schema.node(r), writer_schema.node(w));
        match (reader, writer) {
            (Node::Array(r_items), Node::Array(w_items)) => {
                self.compatibility(Step::Items, *r_items, *w_items, at)
            }
            (Node::Map(r_values), Node::Map(w_values)) => {
                self.compatibility(Step::Values, *r_values, *w_values, at)
            }
            (Node::Fixed(r_fixed), Node::Fixed(w_fixed)) => {
                let mut findings = check_names(&r_fixed.named, &w_fixed.named, "fixed", at);
                findings.extend(check_fixed_size(r_fixed, w_fixed, at));
                findings
            }
            (Node::Enum(r_enum), Node::Enum(w_enum)) => {
                let mut findings = check_names(&r_enum.named, &w_enum.named, "enum", at);
                findings.extend(check_enum_symbols(r_enum, w_enum, at));
                findings
            }
            (Node::Record(r_record), Node::Record(w_record)) => {
                let mut findings = check_names(&r_record.named, &w_record.named, "record", at);
                findings.extend(self.check_record_fields(r_record, w_record, w, at));
                findings
            }
            (Node::Union(_), Node::Union(w_branches)) => {
                self.check_each_writer_branch_in_union(r, w_branches, at)
            }
            _ if reader.avro_type() == writer.avro_type() => Vec::new(),
            (_, Node::Union(w_branches)) => self.check_each_writer_branch(r, w_branches, at),
            (Node::Union(r_branches), _) => {
                self.check_some_reader_branch(r_branches, w, writer.avro_type(), at)
            }
            _ if promotes(writer.avro_type(), reader.avro_type()) => Vec::new(),
            _ => vec![type_mismatch(reader.avro_type(), writer.avro_type(), at)],
        }
    }

    /// Union reader, union writer: each writer branch must be readable by
    /// the reader union. The location is the writer branch's index, as in
    /// Java, although the pointer is otherwise into the reader schema.
    fn check_each_writer_branch_in_union(
        &mut self,
        reader_union: NodeId,
        writer_branches: &[NodeId],
        at: &mut Location<'a>,
    ) -> Vec<Finding> {
        let mut findings = Vec::new();
        for (i, branch) in writer_branches.iter().enumerate() {
            at.steps.push(Step::Index(i));
            if !self.fresh(reader_union, *branch).is_empty() {
                let branch_type = self.writer.node(*branch).avro_type();
                findings.push(missing_union_branch(branch_type, at));
            }
            at.steps.pop();
        }
        findings
    }

    /// A union writer and a reader that is not: the reader must read each
    /// branch. Java 1.12 (AVRO-3612) locates each under the writer branch's
    /// index; 1.11 did not.
    fn check_each_writer_branch(
        &mut self,
        reader: NodeId,
        writer_branches: &[NodeId],
        at: &mut Location<'a>,
    ) -> Vec<Finding> {
        let mut findings = Vec::new();
        for (i, branch) in writer_branches.iter().enumerate() {
            findings.extend(self.compatibility(Step::Index(i), reader, *branch, at));
        }
        findings
    }

    /// A union reader and a writer that is not: one reader branch must read
    /// it; which one does not matter.
    fn check_some_reader_branch(
        &mut self,
        reader_branches: &[NodeId],
        writer: NodeId,
        writer_type: AvroType,
        at: &mut Location<'a>,
    ) -> Vec<Finding> {
        for branch in reader_branches {
            if self.fresh(*branch, writer).is_empty() {
                return Vec::new();
            }
        }
        vec![missing_union_branch(writer_type, at)]
    }

    /// Java's `checkReaderWriterRecordFields`: each reader field is read
    /// from the writer field of its name or aliases, or from its default.
    /// Extra writer fields are skipped.
    fn check_record_fields(
        &mut self,
        reader: &'a Record,
        writer: &'a Record,
        writer_id: NodeId,
        at: &mut Location<'a>,
    ) -> Vec<Finding> {
        let mut findings = Vec::new();
        at.steps.push(Step::Fields);
        for (position, field) in reader.fields.iter().enumerate() {
            at.steps.push(Step::Index(position));
            at.fields.push(&field.name);
            match self.lookup_writer_field(writer, field, at) {
                Some(writer_field) => findings.extend(self.compatibility(
                    Step::Type,
                    field.schema,
                    writer_field.schema,
                    at,
                )),
                None if field.has_default => {}
                None => findings.extend(self.check_field_without_default(field, writer_id, at)),
            }
            at.fields.pop();
            at.steps.pop();
        }
        at.steps.pop();
        findings
    }

    /// A reader field missing from the writer, without a default. Java
    /// lets an enum with a default symbol stand in for the field's default,
    /// but then compares that enum with the writer *record* (the AVRO-2512
    /// fix of a null pointer), which can only be a TYPE_MISMATCH of ENUM
    /// and RECORD at the field's type. Kept, being what Confluent reports.
    fn check_field_without_default(
        &mut self,
        field: &'a Field,
        writer_record: NodeId,
        at: &mut Location<'a>,
    ) -> Vec<Finding> {
        let reader_schema = self.reader;
        match reader_schema.node(field.schema) {
            Node::Enum(Enum {
                default: Some(_), ..
            }) => self.compatibility(Step::Type, field.schema, writer_record, at),
            _ => vec![field_missing_default(&field.name, at)],
        }
    }

    /// Java's `lookupWriterField`: the writer field named like the reader
    /// field or like one of its aliases. Two matches (counting a field
    /// matched twice) make Java throw.
    fn lookup_writer_field(
        &mut self,
        writer: &'a Record,
        field: &Field,
        at: &Location<'a>,
    ) -> Option<&'a Field> {
        let matches: Vec<&'a Field> = std::iter::once(&field.name)
            .chain(&field.aliases)
            .filter_map(|name| writer.positions.get(name))
            .filter_map(|position| writer.fields.get(*position))
            .collect();
        if matches.len() > 1 && self.ambiguous_field.is_none() {
            self.ambiguous_field = Some(ambiguous_field(field, &matches, &writer.named, at));
        }
        matches.first().copied()
    }
}

/// What a list of findings costs the budget: the bytes it holds.
fn cost(findings: &[Finding]) -> usize {
    findings
        .iter()
        .map(|f| std::mem::size_of::<Finding>() + f.location.len() + f.message.len())
        .sum()
}

/// The promotions of Java's switch on the reader type (the specification's
/// list): int to long, float or double; long to float or double; float to
/// double; string and bytes either way.
fn promotes(writer: AvroType, reader: AvroType) -> bool {
    use AvroType::{Bytes, Double, Float, Int, Long, String};
    matches!(
        (writer, reader),
        (Int, Long | Float | Double)
            | (Long, Float | Double)
            | (Float, Double)
            | (String, Bytes)
            | (Bytes, String)
    )
}

/// Java's `schemaNameEquals`: the unqualified names are equal (AVRO-2400:
/// the namespace is ignored), or a reader alias is the writer's full name.
fn names_match(reader: &Named, writer: &Named) -> bool {
    reader.name == writer.name || reader.aliases.contains(&writer.full_name)
}

fn check_names(reader: &Named, writer: &Named, what: &str, at: &mut Location<'_>) -> Vec<Finding> {
    if names_match(reader, writer) {
        return Vec::new();
    }
    at.steps.push(Step::Name);
    let finding = Finding {
        kind: Kind::NameMismatch,
        location: at.pointer(),
        message: format!(
            "The name of the {what} '{}' at path '{}'{} in the reader schema is not the writer \
             schema's, nor one of the reader's aliases: expected: {}",
            reader.full_name,
            at.pointer(),
            at.of_field(),
            writer.full_name
        ),
    };
    at.steps.pop();
    vec![finding]
}

fn check_fixed_size(reader: &Fixed, writer: &Fixed, at: &mut Location<'_>) -> Option<Finding> {
    if reader.size == writer.size {
        return None;
    }
    at.steps.push(Step::Size);
    let finding = Finding {
        kind: Kind::FixedSizeMismatch,
        location: at.pointer(),
        message: format!(
            "The size of the fixed '{}' at path '{}'{} in the reader schema does not match the \
             writer schema: expected: {}, found: {}",
            reader.named.full_name,
            at.pointer(),
            at.of_field(),
            writer.size,
            reader.size
        ),
    };
    at.steps.pop();
    Some(finding)
}

/// Writer symbols the reader lacks, sorted as Java's `TreeSet`, unless the
/// reader has a default symbol to read them as.
fn check_enum_symbols(reader: &Enum, writer: &Enum, at: &mut Location<'_>) -> Option<Finding> {
    let missing: BTreeSet<&str> = writer
        .symbols
        .iter()
        .filter(|symbol| !reader.symbols.contains(symbol))
        .map(String::as_str)
        .collect();
    // The parser already rejects a default that is not a symbol; Java
    // checks again here.
    let has_default = reader
        .default
        .as_ref()
        .is_some_and(|default| reader.symbols.contains(default));
    if missing.is_empty() || has_default {
        return None;
    }
    at.steps.push(Step::Symbols);
    let symbols = format!("[{}]", missing.into_iter().collect::<Vec<_>>().join(", "));
    let finding = Finding {
        kind: Kind::MissingEnumSymbols,
        location: at.pointer(),
        message: format!(
            "The enum '{}' at path '{}'{} in the reader schema lacks symbols of the writer \
             schema and has no default symbol: {symbols}",
            reader.named.full_name,
            at.pointer(),
            at.of_field()
        ),
    };
    at.steps.pop();
    Some(finding)
}

fn type_mismatch(reader: AvroType, writer: AvroType, at: &Location<'_>) -> Finding {
    Finding {
        kind: Kind::TypeMismatch,
        location: at.pointer(),
        message: format!(
            "The type at path '{}'{} in the reader schema does not match the writer schema: \
             reader type: {} not compatible with writer type: {}",
            at.pointer(),
            at.of_field(),
            reader.as_str(),
            writer.as_str()
        ),
    }
}

fn missing_union_branch(writer_type: AvroType, at: &Location<'_>) -> Finding {
    Finding {
        kind: Kind::MissingUnionBranch,
        location: at.pointer(),
        message: format!(
            "The union at path '{}'{} in the reader schema has no branch for a type of the \
             writer schema: reader union lacking writer type: {}",
            at.pointer(),
            at.of_field(),
            writer_type.as_str()
        ),
    }
}

fn field_missing_default(name: &str, at: &Location<'_>) -> Finding {
    Finding {
        kind: Kind::ReaderFieldMissingDefaultValue,
        location: at.pointer(),
        message: format!(
            "The field '{name}' at path '{}' in the reader schema has no default value and is \
             missing in the writer schema",
            at.pointer()
        ),
    }
}

/// Java has no kind for this (it throws); NAME_MISMATCH is the nearest:
/// the field's names do not single out one writer field.
fn ambiguous_field(
    field: &Field,
    matches: &[&Field],
    writer: &Named,
    at: &Location<'_>,
) -> Finding {
    let names: Vec<&str> = matches.iter().map(|f| f.name.as_str()).collect();
    Finding {
        kind: Kind::NameMismatch,
        location: at.pointer(),
        message: format!(
            "The field '{}' at path '{}' in the reader schema matches several fields of the \
             writer record '{}' by its name and aliases ({}), so the check stops: Reader record \
             field {} matches multiple fields in writer record schema {}",
            field.name,
            at.pointer(),
            writer.full_name,
            names.join(", "),
            field.name,
            writer.full_name
        ),
    }
}
