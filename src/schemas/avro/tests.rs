//! Vectors for each rule of Java's `SchemaCompatibility`, compatible and
//! not, written from the specification and Java's source; then parse
//! errors; then the modes through [`crate::schemas::check`].

use super::{AvroSchema, can_read};
use crate::schemas::check::{Direction, ParsedSchema, check};
use crate::schemas::{
    Incompatibility, Mode, ResolvedReference, SchemaError, SchemaText, SchemaType,
};

fn parse(text: &str) -> Result<AvroSchema, SchemaError> {
    AvroSchema::parse(&SchemaText::new(SchemaType::Avro, text))
}

fn avro(text: &str) -> AvroSchema {
    parse(text).unwrap_or_else(|e| panic!("{text} should parse: {e}"))
}

fn findings(reader: &str, writer: &str) -> Vec<Incompatibility> {
    can_read(&avro(reader), &avro(writer))
}

/// (kind, location) of each finding, in order.
fn found(reader: &str, writer: &str) -> Vec<(String, String)> {
    findings(reader, writer)
        .into_iter()
        .map(|i| (i.kind, i.location))
        .collect()
}

fn one(kind: &str, location: &str) -> Vec<(String, String)> {
    vec![(kind.to_string(), location.to_string())]
}

fn compatible(reader: &str, writer: &str) -> bool {
    findings(reader, writer).is_empty()
}

/// A record `R` with the fields given as JSON objects.
fn record(fields: &[&str]) -> String {
    format!(
        r#"{{"type":"record","name":"R","fields":[{}]}}"#,
        fields.join(",")
    )
}

fn field(name: &str, schema: &str) -> String {
    format!(r#"{{"name":"{name}","type":{schema}}}"#)
}

const PRIMITIVES: [&str; 8] = [
    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
];

/// (writer, reader) pairs Java promotes.
const PROMOTIONS: [(&str, &str); 8] = [
    ("int", "long"),
    ("int", "float"),
    ("int", "double"),
    ("long", "float"),
    ("long", "double"),
    ("float", "double"),
    ("string", "bytes"),
    ("bytes", "string"),
];

fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

// ---- primitives --------------------------------------------------------

#[test]
fn each_primitive_reads_itself() {
    for p in PRIMITIVES {
        assert!(compatible(&quoted(p), &quoted(p)), "{p}");
    }
}

#[test]
fn each_promotion_reads_the_narrower_writer() {
    for (writer, reader) in PROMOTIONS {
        assert!(
            compatible(&quoted(reader), &quoted(writer)),
            "{reader} reads {writer}"
        );
    }
}

#[test]
fn every_other_pair_of_primitives_is_a_type_mismatch_at_the_root() {
    for writer in PRIMITIVES {
        for reader in PRIMITIVES {
            if reader == writer || PROMOTIONS.contains(&(writer, reader)) {
                continue;
            }
            let f = findings(&quoted(reader), &quoted(writer));
            assert_eq!(f.len(), 1, "{reader} reading {writer}");
            assert_eq!(f[0].kind, "TYPE_MISMATCH");
            assert_eq!(f[0].location, "/");
            let info = format!(
                "reader type: {} not compatible with writer type: {}",
                reader.to_uppercase(),
                writer.to_uppercase()
            );
            assert!(f[0].message.ends_with(&info), "{}", f[0].message);
        }
    }
}

#[test]
fn narrowing_a_field_names_the_field_and_java_types() {
    let reader = record(&[&field("age", "\"int\"")]);
    let writer = record(&[&field("age", "\"long\"")]);
    let f = findings(&reader, &writer);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "TYPE_MISMATCH");
    assert_eq!(f[0].location, "/fields/0/type");
    assert_eq!(
        f[0].message,
        "The type at path '/fields/0/type' (field 'age') in the reader schema does not match \
         the writer schema: reader type: INT not compatible with writer type: LONG"
    );
}

#[test]
fn primitives_in_object_form_are_the_same_types() {
    assert!(compatible(r#"{"type":"long"}"#, "\"int\""));
    assert!(compatible(r#"{"type":{"type":"string"}}"#, "\"bytes\""));
}

// ---- record fields ------------------------------------------------------

#[test]
fn a_reader_field_with_a_default_may_be_missing_in_the_writer() {
    let writer = record(&[&field("id", "\"int\"")]);
    let reader = record(&[
        &field("id", "\"int\""),
        r#"{"name":"email","type":"string","default":""}"#,
    ]);
    assert!(compatible(&reader, &writer));
}

#[test]
fn a_null_default_is_a_default() {
    let writer = record(&[&field("id", "\"int\"")]);
    let reader = record(&[
        &field("id", "\"int\""),
        r#"{"name":"email","type":["null","string"],"default":null}"#,
    ]);
    assert!(compatible(&reader, &writer));
}

#[test]
fn a_reader_field_without_default_missing_in_the_writer_is_reported() {
    let writer = record(&[&field("id", "\"int\"")]);
    let reader = record(&[&field("id", "\"int\""), &field("email", "\"string\"")]);
    let f = findings(&reader, &writer);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "READER_FIELD_MISSING_DEFAULT_VALUE");
    assert_eq!(f[0].location, "/fields/1");
    assert_eq!(
        f[0].message,
        "The field 'email' at path '/fields/1' in the reader schema has no default value and is \
         missing in the writer schema"
    );
}

#[test]
fn extra_writer_fields_are_skipped() {
    let writer = record(&[&field("id", "\"int\""), &field("email", "\"string\"")]);
    let reader = record(&[&field("id", "\"int\"")]);
    assert!(compatible(&reader, &writer));
}

#[test]
fn fields_match_by_name_whatever_their_order() {
    let writer = record(&[&field("a", "\"int\""), &field("b", "\"string\"")]);
    let reader = record(&[&field("b", "\"string\""), &field("a", "\"long\"")]);
    assert!(compatible(&reader, &writer));
}

#[test]
fn every_finding_is_reported_in_reader_field_order() {
    let writer = record(&[&field("a", "\"string\""), &field("b", "\"int\"")]);
    let reader = record(&[
        &field("a", "\"int\""),
        &field("c", "\"int\""),
        &field("b", "\"boolean\""),
    ]);
    assert_eq!(
        found(&reader, &writer),
        vec![
            ("TYPE_MISMATCH".to_string(), "/fields/0/type".to_string()),
            (
                "READER_FIELD_MISSING_DEFAULT_VALUE".to_string(),
                "/fields/1".to_string()
            ),
            ("TYPE_MISMATCH".to_string(), "/fields/2/type".to_string()),
        ]
    );
}

#[test]
fn a_reader_field_alias_matches_the_renamed_writer_field() {
    let writer = record(&[&field("email", "\"string\"")]);
    let renamed = record(&[&field("mail", "\"string\"")]);
    assert_eq!(
        found(&renamed, &writer),
        one("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0")
    );
    let aliased = record(&[r#"{"name":"mail","type":"string","aliases":["email"]}"#]);
    assert!(compatible(&aliased, &writer));
    // The alias leads to the writer field, whose type is then checked.
    let aliased_int = record(&[r#"{"name":"mail","type":"int","aliases":["email"]}"#]);
    assert_eq!(
        found(&aliased_int, &writer),
        one("TYPE_MISMATCH", "/fields/0/type")
    );
}

#[test]
fn writer_field_aliases_do_not_count() {
    let writer = record(&[r#"{"name":"email","type":"string","aliases":["mail"]}"#]);
    let reader = record(&[&field("mail", "\"string\"")]);
    assert_eq!(
        found(&reader, &writer),
        one("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/0")
    );
}

#[test]
fn a_reader_field_matching_two_writer_fields_stops_the_check_as_java_throws() {
    let writer = record(&[
        &field("mail", "\"string\""),
        &field("email", "\"string\""),
        &field("x", "\"int\""),
    ]);
    let reader = record(&[
        r#"{"name":"mail","type":"string","aliases":["email"]}"#,
        &field("x", "\"string\""),
    ]);
    let f = findings(&reader, &writer);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].kind, "NAME_MISMATCH");
    assert_eq!(f[0].location, "/fields/0");
    assert!(
        f[0].message.ends_with(
            "Reader record field mail matches multiple fields in writer record schema R"
        ),
        "{}",
        f[0].message
    );
}

// ---- named types: names, aliases, namespaces ----------------------------

#[test]
fn a_renamed_record_is_a_name_mismatch_unless_aliased() {
    let writer = r#"{"type":"record","name":"User","fields":[]}"#;
    let reader = r#"{"type":"record","name":"Person","fields":[]}"#;
    let f = findings(reader, writer);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "NAME_MISMATCH");
    assert_eq!(f[0].location, "/name");
    assert_eq!(
        f[0].message,
        "The name of the record 'Person' at path '/name' in the reader schema is not the \
         writer schema's, nor one of the reader's aliases: expected: User"
    );
    let aliased = r#"{"type":"record","name":"Person","aliases":["User"],"fields":[]}"#;
    assert!(compatible(aliased, writer));
    // Writer aliases do not count.
    let writer_aliased = r#"{"type":"record","name":"User","aliases":["Person"],"fields":[]}"#;
    assert_eq!(found(reader, writer_aliased), one("NAME_MISMATCH", "/name"));
}

#[test]
fn names_match_without_their_namespace() {
    // AVRO-2400: unqualified names are compared.
    let writer = r#"{"type":"record","name":"User","namespace":"com.a","fields":[]}"#;
    let reader = r#"{"type":"record","name":"com.b.User","fields":[]}"#;
    assert!(compatible(reader, writer));
}

#[test]
fn an_alias_matches_the_writer_full_name_only() {
    let writer = r#"{"type":"record","name":"User","namespace":"com.b","fields":[]}"#;
    // "User" is qualified with the reader's namespace: com.a.User.
    let same_space = r#"{"type":"record","name":"Person","namespace":"com.a",
        "aliases":["User"],"fields":[]}"#;
    let f = findings(same_space, writer);
    assert_eq!(f.len(), 1);
    assert!(
        f[0].message.ends_with("expected: com.b.User"),
        "{}",
        f[0].message
    );
    let full = r#"{"type":"record","name":"Person","namespace":"com.a",
        "aliases":["com.b.User"],"fields":[]}"#;
    assert!(compatible(full, writer));
}

#[test]
fn a_nested_name_mismatch_is_located_under_the_field() {
    let writer = record(&[&field(
        "address",
        r#"{"type":"record","name":"Address","fields":[]}"#,
    )]);
    let reader = record(&[&field(
        "address",
        r#"{"type":"record","name":"Location","fields":[]}"#,
    )]);
    assert_eq!(
        found(&reader, &writer),
        one("NAME_MISMATCH", "/fields/0/type/name")
    );
}

#[test]
fn a_name_mismatch_does_not_stop_the_field_checks() {
    let writer = r#"{"type":"record","name":"A","fields":[{"name":"x","type":"int"}]}"#;
    let reader = r#"{"type":"record","name":"B","fields":[{"name":"x","type":"string"}]}"#;
    assert_eq!(
        found(reader, writer),
        vec![
            ("NAME_MISMATCH".to_string(), "/name".to_string()),
            ("TYPE_MISMATCH".to_string(), "/fields/0/type".to_string()),
        ]
    );
}

#[test]
fn different_named_kinds_are_a_type_mismatch() {
    let writer = r#"{"type":"enum","name":"X","symbols":["A"]}"#;
    let reader = r#"{"type":"fixed","name":"X","size":1}"#;
    let f = findings(reader, writer);
    assert_eq!(f.len(), 1);
    assert!(
        f[0].message
            .ends_with("reader type: FIXED not compatible with writer type: ENUM")
    );
}

// ---- enums ----------------------------------------------------------------

fn color(symbols: &str, extra: &str) -> String {
    record(&[&field(
        "color",
        &format!(r#"{{"type":"enum","name":"Color","symbols":[{symbols}]{extra}}}"#),
    )])
}

#[test]
fn a_reader_enum_with_more_symbols_reads_the_writer() {
    assert!(compatible(
        &color(r#""RED","BLUE""#, ""),
        &color(r#""RED""#, "")
    ));
}

#[test]
fn writer_symbols_missing_in_the_reader_are_listed_sorted() {
    let writer = color(r#""RED","TEAL","BLUE","AMBER""#, "");
    let reader = color(r#""RED""#, "");
    let f = findings(&reader, &writer);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "MISSING_ENUM_SYMBOLS");
    assert_eq!(f[0].location, "/fields/0/type/symbols");
    assert_eq!(
        f[0].message,
        "The enum 'Color' at path '/fields/0/type/symbols' (field 'color') in the reader schema \
         lacks symbols of the writer schema and has no default symbol: [AMBER, BLUE, TEAL]"
    );
}

#[test]
fn a_reader_enum_default_reads_unknown_symbols() {
    let writer = color(r#""RED","TEAL""#, "");
    let reader = color(r#""RED","OTHER""#, r#","default":"OTHER""#);
    assert!(compatible(&reader, &writer));
}

#[test]
fn a_writer_enum_default_does_not_help_the_reader() {
    let writer = color(r#""RED","TEAL""#, r#","default":"RED""#);
    let reader = color(r#""RED""#, "");
    assert_eq!(
        found(&reader, &writer),
        one("MISSING_ENUM_SYMBOLS", "/fields/0/type/symbols")
    );
}

#[test]
fn an_enum_default_that_is_not_a_symbol_does_not_parse() {
    // Java's parser rejects it too ("The Enum Default: X is not in the enum
    // symbol set").
    let text = r#"{"type":"enum","name":"Color","symbols":["RED"],"default":"BLUE"}"#;
    assert!(matches!(parse(text), Err(SchemaError::Parse { .. })));
}

#[test]
fn a_renamed_enum_is_a_name_mismatch_beside_its_symbols() {
    let writer = r#"{"type":"enum","name":"Color","symbols":["RED","BLUE"]}"#;
    let reader = r#"{"type":"enum","name":"Colour","symbols":["RED"]}"#;
    assert_eq!(
        found(reader, writer),
        vec![
            ("NAME_MISMATCH".to_string(), "/name".to_string()),
            ("MISSING_ENUM_SYMBOLS".to_string(), "/symbols".to_string()),
        ]
    );
}

#[test]
fn a_missing_enum_field_with_an_enum_default_is_java_s_type_mismatch() {
    // Java compares the enum with the writer record (AVRO-2512) instead of
    // reporting the missing default.
    let writer = record(&[&field("id", "\"int\"")]);
    let reader = record(&[
        &field("id", "\"int\""),
        r#"{"name":"color","type":{"type":"enum","name":"Color","symbols":["RED"],"default":"RED"}}"#,
    ]);
    let f = findings(&reader, &writer);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "TYPE_MISMATCH");
    assert_eq!(f[0].location, "/fields/1/type");
    assert!(
        f[0].message
            .ends_with("reader type: ENUM not compatible with writer type: RECORD")
    );
}

// ---- fixed ----------------------------------------------------------------

#[test]
fn a_fixed_size_change_reports_writer_then_reader_size() {
    let writer = r#"{"type":"fixed","name":"Hash","size":16}"#;
    let reader = r#"{"type":"fixed","name":"Hash","size":8}"#;
    let f = findings(reader, writer);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "FIXED_SIZE_MISMATCH");
    assert_eq!(f[0].location, "/size");
    assert_eq!(
        f[0].message,
        "The size of the fixed 'Hash' at path '/size' in the reader schema does not match the \
         writer schema: expected: 16, found: 8"
    );
    assert!(compatible(writer, writer));
}

#[test]
fn a_fixed_name_change_is_a_name_mismatch_unless_aliased() {
    let writer = record(&[&field("h", r#"{"type":"fixed","name":"Md5","size":16}"#)]);
    let reader = record(&[&field("h", r#"{"type":"fixed","name":"Digest","size":16}"#)]);
    assert_eq!(
        found(&reader, &writer),
        one("NAME_MISMATCH", "/fields/0/type/name")
    );
    let aliased = record(&[&field(
        "h",
        r#"{"type":"fixed","name":"Digest","aliases":["Md5"],"size":16}"#,
    )]);
    assert!(compatible(&aliased, &writer));
}

#[test]
fn a_renamed_and_resized_fixed_reports_both() {
    let writer = r#"{"type":"fixed","name":"A","size":4}"#;
    let reader = r#"{"type":"fixed","name":"B","size":2}"#;
    assert_eq!(
        found(reader, writer),
        vec![
            ("NAME_MISMATCH".to_string(), "/name".to_string()),
            ("FIXED_SIZE_MISMATCH".to_string(), "/size".to_string()),
        ]
    );
}

// ---- arrays and maps ----------------------------------------------------

#[test]
fn array_items_follow_the_item_rules() {
    let of = |items: &str| {
        record(&[&field(
            "tags",
            &format!(r#"{{"type":"array","items":{items}}}"#),
        )])
    };
    assert!(compatible(&of("\"long\""), &of("\"int\"")));
    assert_eq!(
        found(&of("\"int\""), &of("\"string\"")),
        one("TYPE_MISMATCH", "/fields/0/type/items")
    );
}

#[test]
fn map_values_follow_the_value_rules() {
    let of = |values: &str| {
        record(&[&field(
            "attrs",
            &format!(r#"{{"type":"map","values":{values}}}"#),
        )])
    };
    assert!(compatible(&of("\"double\""), &of("\"float\"")));
    assert_eq!(
        found(&of("\"float\""), &of("\"double\"")),
        one("TYPE_MISMATCH", "/fields/0/type/values")
    );
}

#[test]
fn records_in_arrays_are_located_under_items() {
    let of = |fields: &str| {
        format!(
            r#"{{"type":"array","items":{{"type":"record","name":"Line","fields":[{fields}]}}}}"#
        )
    };
    let writer = of(r#"{"name":"sku","type":"string"}"#);
    let reader = of(r#"{"name":"sku","type":"string"},{"name":"qty","type":"int"}"#);
    assert_eq!(
        found(&reader, &writer),
        one("READER_FIELD_MISSING_DEFAULT_VALUE", "/items/fields/1")
    );
}

#[test]
fn an_array_does_not_read_a_map() {
    let f = findings(
        r#"{"type":"array","items":"string"}"#,
        r#"{"type":"map","values":"string"}"#,
    );
    assert_eq!(f.len(), 1);
    assert!(
        f[0].message
            .ends_with("reader type: ARRAY not compatible with writer type: MAP")
    );
}

// ---- unions -----------------------------------------------------------------

fn union_field(branches: &str) -> String {
    record(&[&field("v", &format!("[{branches}]"))])
}

#[test]
fn a_wider_reader_union_reads_a_narrower_writer_union() {
    assert!(compatible(
        &union_field(r#""null","string","int""#),
        &union_field(r#""null","string""#)
    ));
}

#[test]
fn a_narrower_reader_union_misses_the_writer_branch_at_its_writer_index() {
    let f = findings(
        &union_field(r#""null","string""#),
        &union_field(r#""null","string","int""#),
    );
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "MISSING_UNION_BRANCH");
    assert_eq!(f[0].location, "/fields/0/type/2");
    assert_eq!(
        f[0].message,
        "The union at path '/fields/0/type/2' (field 'v') in the reader schema has no branch for \
         a type of the writer schema: reader union lacking writer type: INT"
    );
}

#[test]
fn union_branches_are_matched_whatever_their_order_and_with_promotions() {
    assert!(compatible(
        &union_field(r#""long","null""#),
        &union_field(r#""null","int""#)
    ));
}

#[test]
fn a_reader_union_reads_a_writer_of_one_of_its_branches() {
    let writer = record(&[&field("v", "\"string\"")]);
    assert!(compatible(&union_field(r#""null","string""#), &writer));
    let writer_null = record(&[&field("v", "\"null\"")]);
    assert!(compatible(&union_field(r#""null","string""#), &writer_null));
    let writer_long = record(&[&field("v", "\"long\"")]);
    let f = findings(&union_field(r#""null","string""#), &writer_long);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "MISSING_UNION_BRANCH");
    assert_eq!(f[0].location, "/fields/0/type");
    assert!(
        f[0].message
            .ends_with("reader union lacking writer type: LONG")
    );
}

#[test]
fn a_plain_reader_must_read_every_branch_of_a_writer_union() {
    // Java 1.12 (AVRO-3612) puts the writer branch index in the location.
    let reader = record(&[&field("v", "\"string\"")]);
    let f = findings(&reader, &union_field(r#""null","string""#));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "TYPE_MISMATCH");
    assert_eq!(f[0].location, "/fields/0/type/0");
    assert!(
        f[0].message
            .ends_with("reader type: STRING not compatible with writer type: NULL")
    );
    // A writer union of types the reader reads is fine.
    let wide_reader = record(&[&field("v", "\"double\"")]);
    assert!(compatible(&wide_reader, &union_field(r#""int","float""#)));
}

#[test]
fn a_union_branch_record_is_only_matched_or_not() {
    // Inside a reader union, Java reports the missing branch, not why the
    // record branch does not read the writer's.
    let writer = union_field(
        r#""null",{"type":"record","name":"Inner","fields":[{"name":"a","type":"int"}]}"#,
    );
    let reader = union_field(
        r#""null",{"type":"record","name":"Inner","fields":[{"name":"a","type":"int"},{"name":"b","type":"int"}]}"#,
    );
    let f = findings(&reader, &writer);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "MISSING_UNION_BRANCH");
    assert_eq!(f[0].location, "/fields/0/type/1");
    assert!(
        f[0].message
            .ends_with("reader union lacking writer type: RECORD")
    );
    let reader_ok = union_field(
        r#""null",{"type":"record","name":"Inner","fields":[{"name":"a","type":"long"}]}"#,
    );
    assert!(compatible(&reader_ok, &writer));
}

#[test]
fn a_union_at_the_root_is_located_by_branch_alone() {
    assert_eq!(
        found(r#"["null","string"]"#, r#"["null","string","bytes","int"]"#),
        one("MISSING_UNION_BRANCH", "/3")
    );
}

// ---- nesting, recursion, shared named types --------------------------------

#[test]
fn nested_records_are_located_exactly() {
    let address =
        |fields: &str| format!(r#"{{"type":"record","name":"Address","fields":[{fields}]}}"#);
    let writer = record(&[
        &field("id", "\"int\""),
        &field("name", "\"string\""),
        &field("address", &address(r#"{"name":"street","type":"string"}"#)),
    ]);
    let reader = record(&[
        &field("id", "\"int\""),
        &field("name", "\"string\""),
        &field(
            "address",
            &address(r#"{"name":"zip","type":"string"},{"name":"street","type":"int"}"#),
        ),
    ]);
    let f = findings(&reader, &writer);
    assert_eq!(
        f.iter()
            .map(|i| (i.kind.as_str(), i.location.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                "READER_FIELD_MISSING_DEFAULT_VALUE",
                "/fields/2/type/fields/0"
            ),
            ("TYPE_MISMATCH", "/fields/2/type/fields/1/type"),
        ]
    );
    assert!(
        f[0].message
            .starts_with("The field 'zip' at path '/fields/2/type/fields/0'")
    );
    assert!(f[1].message.contains("(field 'street')"));
}

const LIST: &str = r#"{"type":"record","name":"Node","fields":[
    {"name":"value","type":"int"},
    {"name":"next","type":["null","Node"]}]}"#;

#[test]
fn a_recursive_schema_reads_itself() {
    assert!(compatible(LIST, LIST));
}

#[test]
fn a_recursive_schema_is_checked_once_per_pair() {
    let reader = LIST.replace(r#""type":"int""#, r#""type":"long""#);
    assert!(compatible(&reader, LIST));
    let reader = LIST.replace(r#""type":"int""#, r#""type":"string""#);
    // The mismatch is reported where it is first met. The recursive
    // branch meets the (Node, Node) pair still in progress, which Java
    // takes as compatible.
    assert_eq!(found(&reader, LIST), one("TYPE_MISMATCH", "/fields/0/type"));
}

#[test]
fn mutually_recursive_records_terminate() {
    let tree = |extra: &str| {
        format!(
            r#"{{"type":"record","name":"Tree","fields":[
            {{"name":"children","type":{{"type":"array","items":{{"type":"record","name":"Branch",
              "fields":[{{"name":"tree","type":"Tree"}}{extra}]}}}}}}]}}"#
        )
    };
    assert!(compatible(&tree(""), &tree("")));
    assert_eq!(
        found(&tree(r#",{"name":"w","type":"int"}"#), &tree("")),
        one(
            "READER_FIELD_MISSING_DEFAULT_VALUE",
            "/fields/0/type/items/fields/1"
        )
    );
}

#[test]
fn a_record_with_no_way_out_still_terminates() {
    let endless = r#"{"type":"record","name":"E","fields":[{"name":"e","type":"E"}]}"#;
    assert!(compatible(endless, endless));
}

#[test]
fn a_named_type_used_twice_repeats_the_first_finding_as_java_does() {
    // Java memoises the (reader Address, writer Address) pair: the second
    // field gets the first field's result, locations included.
    let schema = |street: &str| {
        record(&[
            &field(
                "home",
                &format!(
                    r#"{{"type":"record","name":"Address","fields":[{{"name":"street","type":{street}}}]}}"#
                ),
            ),
            &field("work", "\"Address\""),
        ])
    };
    assert_eq!(
        found(&schema("\"int\""), &schema("\"string\"")),
        vec![
            (
                "TYPE_MISMATCH".to_string(),
                "/fields/0/type/fields/0/type".to_string()
            ),
            (
                "TYPE_MISMATCH".to_string(),
                "/fields/0/type/fields/0/type".to_string()
            ),
        ]
    );
}

#[test]
fn a_pair_first_met_inside_a_union_keeps_its_union_relative_location() {
    // Java checks union branches from a new location root and memoises the
    // result: when the same (reader, writer) pair is met again outside the
    // union, Java reports the findings located from that root. Kept.
    let schema = |street: &str| {
        record(&[
            &field(
                "previous",
                &format!(
                    r#"["null",{{"type":"record","name":"Address","fields":[{{"name":"street","type":{street}}}]}}]"#
                ),
            ),
            &field("current", "\"Address\""),
        ])
    };
    assert_eq!(
        found(&schema("\"int\""), &schema("\"string\"")),
        vec![
            (
                "MISSING_UNION_BRANCH".to_string(),
                "/fields/0/type/1".to_string()
            ),
            ("TYPE_MISMATCH".to_string(), "/fields/0/type".to_string()),
        ]
    );
}

// ---- logical types ------------------------------------------------------

#[test]
fn a_decimal_precision_or_scale_change_passes() {
    let decimal = |p: u32, s: u32| {
        record(&[&field(
            "amount",
            &format!(r#"{{"type":"bytes","logicalType":"decimal","precision":{p},"scale":{s}}}"#),
        )])
    };
    assert!(compatible(&decimal(12, 4), &decimal(10, 2)));
    assert!(compatible(&decimal(4, 0), &decimal(10, 2)));
}

#[test]
fn a_decimal_on_fixed_is_its_fixed() {
    let decimal = |size: u32| {
        format!(
            r#"{{"type":"fixed","name":"Money","size":{size},"logicalType":"decimal","precision":4,"scale":2}}"#
        )
    };
    assert!(compatible(&decimal(8), &decimal(8)));
    assert_eq!(
        found(&decimal(4), &decimal(8)),
        one("FIXED_SIZE_MISMATCH", "/size")
    );
}

#[test]
fn a_date_is_its_int() {
    let date = r#"{"type":"int","logicalType":"date"}"#;
    let f = findings(date, "\"long\"");
    assert_eq!(f.len(), 1);
    assert!(
        f[0].message
            .ends_with("reader type: INT not compatible with writer type: LONG")
    );
    // int promotes to long: a long reader reads a date writer.
    assert!(compatible("\"long\"", date));
    assert!(compatible(date, "\"int\""));
}

#[test]
fn other_logical_types_are_their_underlying_types() {
    let ts = r#"{"type":"long","logicalType":"timestamp-millis"}"#;
    assert!(compatible(
        ts,
        r#"{"type":"long","logicalType":"timestamp-micros"}"#
    ));
    assert!(compatible(
        ts,
        r#"{"type":"int","logicalType":"time-millis"}"#
    ));
    assert!(compatible(
        r#"{"type":"string","logicalType":"uuid"}"#,
        "\"string\""
    ));
    assert!(compatible(
        "\"bytes\"",
        r#"{"type":"string","logicalType":"uuid"}"#
    ));
    let unknown = r#"{"type":"string","logicalType":"made-up"}"#;
    assert!(compatible(unknown, "\"string\""));
}

// ---- references ---------------------------------------------------------

const ADDRESS: &str = r#"{"type":"record","name":"Address","namespace":"com.acme",
    "fields":[{"name":"street","type":"string"},{"name":"city","type":"string"}]}"#;

fn with_references(text: &str, references: &[(&str, &str)]) -> Result<AvroSchema, SchemaError> {
    let mut schema = SchemaText::new(SchemaType::Avro, text);
    schema.references = references
        .iter()
        .map(|(name, text)| ResolvedReference {
            name: name.to_string(),
            text: text.to_string(),
        })
        .collect();
    AvroSchema::parse(&schema)
}

const CUSTOMER: &str = r#"{"type":"record","name":"Customer","namespace":"com.acme",
    "fields":[{"name":"address","type":"Address"}]}"#;

#[test]
fn a_referenced_type_is_resolved_and_checked() {
    let writer = with_references(CUSTOMER, &[("com.acme.Address", ADDRESS)]).expect("parses");
    let reader = with_references(CUSTOMER, &[("com.acme.Address", ADDRESS)]).expect("parses");
    assert!(can_read(&reader, &writer).is_empty());
    let zip = ADDRESS.replace(
        r#"{"name":"city","type":"string"}"#,
        r#"{"name":"city","type":"string"},{"name":"zip","type":"string"}"#,
    );
    let reader = with_references(CUSTOMER, &[("com.acme.Address", &zip)]).expect("parses");
    let f = can_read(&reader, &writer);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].location, "/fields/0/type/fields/2");
}

#[test]
fn references_may_refer_to_each_other_in_any_order() {
    let street = r#"{"type":"record","name":"Street","namespace":"com.acme",
        "fields":[{"name":"name","type":"string"}]}"#;
    let address = r#"{"type":"record","name":"Address","namespace":"com.acme",
        "fields":[{"name":"street","type":"Street"}]}"#;
    for references in [
        [("com.acme.Street", street), ("com.acme.Address", address)],
        [("com.acme.Address", address), ("com.acme.Street", street)],
    ] {
        let schema = with_references(CUSTOMER, &references).expect("parses");
        assert!(can_read(&schema, &schema).is_empty());
    }
}

#[test]
fn a_schema_may_be_just_a_referenced_name() {
    let schema =
        with_references("\"com.acme.Address\"", &[("com.acme.Address", ADDRESS)]).expect("parses");
    assert!(can_read(&schema, &avro(ADDRESS)).is_empty());
}

#[test]
fn an_unresolved_name_is_a_reference_error() {
    match with_references(CUSTOMER, &[]) {
        Err(SchemaError::Reference { name, .. }) => assert_eq!(name, "com.acme.Address"),
        other => panic!("expected a reference error, got {other:?}"),
    }
    // An alias is not a name to refer to, in Java either.
    let aliased = ADDRESS.replace(
        r#""name":"Address""#,
        r#""name":"Address","aliases":["Place"]"#,
    );
    let place = CUSTOMER.replace("\"Address\"", "\"Place\"");
    assert!(matches!(
        with_references(&place, &[("com.acme.Address", &aliased)]),
        Err(SchemaError::Reference { .. })
    ));
}

#[test]
fn a_broken_reference_is_a_reference_error_under_its_name() {
    for text in [
        "{not json",
        r#""string""#,
        r#"{"name":"Address","type":{"type":"record","name":"Other","fields":[]}}"#,
        r#"{"type":"record","name":"Address","fields":[7]}"#,
    ] {
        match with_references(CUSTOMER, &[("com.acme.Address", text)]) {
            Err(SchemaError::Reference { name, .. }) => assert_eq!(name, "com.acme.Address"),
            other => panic!("{text}: expected a reference error, got {other:?}"),
        }
    }
}

#[test]
fn a_type_defined_in_the_schema_and_a_reference_is_defined_twice() {
    let inline = CUSTOMER.replace("\"Address\"", ADDRESS);
    assert!(matches!(
        with_references(&inline, &[("com.acme.Address", ADDRESS)]),
        Err(SchemaError::Parse { .. })
    ));
}

// ---- parse errors -------------------------------------------------------

fn parse_error(text: &str) -> String {
    match parse(text) {
        Err(SchemaError::Parse { detail, .. }) => detail,
        other => panic!("{text}: expected a parse error, got {other:?}"),
    }
}

#[test]
fn invalid_schemas_are_parse_errors() {
    for text in [
        "",
        "{not json",
        "42",
        "{}",
        r#"{"type":42}"#,
        r#"{"type":"record","fields":[]}"#,
        r#"{"type":"record","name":"R"}"#,
        r#"{"type":"array"}"#,
        r#"{"type":"map"}"#,
        r#"{"type":"fixed","name":"F"}"#,
        r#"{"type":"fixed","name":"F","size":-1}"#,
        r#"{"type":"enum","name":"E","symbols":[1]}"#,
        r#"{"type":"enum","name":"E","symbols":["A","A"]}"#,
        r#"{"type":"record","name":"1R","fields":[]}"#,
        r#"["null",["int"]]"#,
        r#"["int","int"]"#,
    ] {
        parse_error(text);
    }
}

#[test]
fn an_unknown_type_name_is_an_unresolved_reference() {
    // Avro cannot tell a misspelt primitive from a named type it lacks.
    assert!(matches!(
        parse(r#"{"type":"integer"}"#),
        Err(SchemaError::Reference { name, .. }) if name == "integer"
    ));
}

#[test]
fn an_invalid_default_is_a_parse_error() {
    parse_error(&record(&[r#"{"name":"a","type":"int","default":"seven"}"#]));
    parse_error(&record(&[r#"{"name":"a","type":"string","default":null}"#]));
}

#[test]
fn duplicate_names_are_parse_errors() {
    let detail = parse_error(&record(&[
        &field("a", r#"{"type":"fixed","name":"F","size":1}"#),
        &field("b", r#"{"type":"fixed","name":"F","size":2}"#),
    ]));
    assert!(detail.contains("F is defined more than once"), "{detail}");
    parse_error(&record(&[&field("a", "\"int\""), &field("a", "\"long\"")]));
}

#[test]
fn a_field_that_is_not_an_object_is_a_parse_error() {
    // The crate would skip it, shifting the positions of the fields after.
    let detail =
        parse_error(r#"{"type":"record","name":"R","fields":["a",{"name":"b","type":"int"}]}"#);
    assert!(detail.contains("field 0 of record \"R\""), "{detail}");
    parse_error(&record(&[&field(
        "inner",
        r#"["null",{"type":"record","name":"I","fields":[3]}]"#,
    )]));
}

#[test]
fn odd_inputs_never_panic() {
    let deep = format!("{}\"int\"{}", "[".repeat(200), "]".repeat(200));
    let nested = format!(
        "{}\"int\"{}",
        r#"{"type":"array","items":"#.repeat(100),
        "}".repeat(100)
    );
    for text in [
        "null",
        "[]",
        "\"\"",
        r#"{"type":null}"#,
        r#"{"type":{"type":{"type":"int"}}}"#,
        r#"{"type":"record","name":"R","fields":[{"name":"a"}]}"#,
        r#"{"type":"record","name":"R","fields":[{"type":"int"}]}"#,
        r#"{"type":"record","name":"record","fields":[]}"#,
        r#"{"type":"enum","name":"E","symbols":["A"],"default":7}"#,
        r#"{"type":"int","logicalType":7}"#,
        r#"{"type":"bytes","logicalType":"decimal","precision":-1}"#,
        r#"{"type":"fixed","name":"F","size":18446744073709551615}"#,
        r#"{"type":"record","name":"R","aliases":[""],"fields":[]}"#,
        deep.as_str(),
        nested.as_str(),
    ] {
        if let Ok(schema) = parse(text) {
            let _ = can_read(&schema, &schema);
        }
    }
}

// ---- modes, through the registry's checker -------------------------------

fn parsed(text: &str) -> ParsedSchema {
    ParsedSchema::Avro(avro(text))
}

fn user(extra: &[&str]) -> ParsedSchema {
    let mut fields = vec![field("id", "\"int\"")];
    fields.extend(extra.iter().map(|f| f.to_string()));
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    parsed(&record(&fields))
}

const EMAIL: &str = r#"{"name":"email","type":"string"}"#;
const EMAIL_DEFAULT: &str = r#"{"name":"email","type":"string","default":""}"#;

#[test]
fn adding_a_field_without_default_is_forward_but_not_backward_compatible() {
    let history = [user(&[])];
    let new = user(&[EMAIL]);
    assert!(check(Mode::Forward, &history, &new).compatible);
    let backward = check(Mode::Backward, &history, &new);
    assert!(!backward.compatible);
    assert_eq!(backward.findings.len(), 1);
    assert_eq!(backward.findings[0].direction, Direction::NewReadsOld);
    assert_eq!(
        backward.findings[0].incompatibility.kind,
        "READER_FIELD_MISSING_DEFAULT_VALUE"
    );
    assert_eq!(backward.findings[0].incompatibility.location, "/fields/1");
    assert!(!check(Mode::Full, &history, &new).compatible);
}

#[test]
fn adding_a_field_with_a_default_is_fully_compatible() {
    assert!(check(Mode::Full, &[user(&[])], &user(&[EMAIL_DEFAULT])).compatible);
}

#[test]
fn removing_a_field_without_default_is_backward_but_not_forward_compatible() {
    let history = [user(&[EMAIL])];
    let new = user(&[]);
    assert!(check(Mode::Backward, &history, &new).compatible);
    let forward = check(Mode::Forward, &history, &new);
    assert!(!forward.compatible);
    assert_eq!(forward.findings[0].direction, Direction::OldReadsNew);
    assert_eq!(forward.findings[0].incompatibility.location, "/fields/1");
}

#[test]
fn transitive_modes_check_every_earlier_version() {
    // v1 has no email, v2 has one with a default; the new version's email
    // has none: it reads v2 but not v1.
    let history = [user(&[]), user(&[EMAIL_DEFAULT])];
    let new = user(&[EMAIL]);
    assert!(check(Mode::Backward, &history, &new).compatible);
    let transitive = check(Mode::BackwardTransitive, &history, &new);
    assert!(!transitive.compatible);
    assert_eq!(transitive.findings[0].version, 1);
}

#[test]
fn a_new_enum_symbol_is_backward_but_not_forward_compatible() {
    let suit = |symbols: &str| {
        parsed(&format!(
            r#"{{"type":"enum","name":"Suit","symbols":[{symbols}]}}"#
        ))
    };
    let history = [suit(r#""HEARTS""#)];
    let new = suit(r#""HEARTS","SPADES""#);
    assert!(check(Mode::Backward, &history, &new).compatible);
    let forward = check(Mode::Forward, &history, &new);
    assert_eq!(
        forward.findings[0].incompatibility.kind,
        "MISSING_ENUM_SYMBOLS"
    );
    assert!(
        forward.findings[0]
            .incompatibility
            .message
            .ends_with("[SPADES]")
    );
}

// ---- limits of the walk ---------------------------------------------------

/// A top-level union of `links` records, each referencing the one before
/// by name, the first holding a field of type `last`.
fn chain(links: usize, last: &str) -> String {
    let mut types = vec![format!(
        r#"{{"type":"record","name":"T0","fields":[{{"name":"v","type":"{last}"}}]}}"#
    )];
    for i in 1..links {
        types.push(format!(
            r#"{{"type":"record","name":"T{i}","fields":[{{"name":"next","type":"T{}"}}]}}"#,
            i - 1
        ));
    }
    format!("[{}]", types.join(","))
}

fn kinds(reader: &str, writer: &str) -> Vec<String> {
    findings(reader, writer)
        .into_iter()
        .map(|i| i.kind)
        .collect()
}

#[test]
fn a_short_chain_of_named_types_is_compared_as_java_does() {
    let (old, new) = (chain(50, "int"), chain(50, "long"));
    assert!(compatible(&new, &old), "{:?}", findings(&new, &old));
    let back = kinds(&old, &new);
    assert!(!back.is_empty());
    assert!(back.iter().all(|k| k == "MISSING_UNION_BRANCH"), "{back:?}");
}

/// `links` one-field records, each naming the one before, under a top
/// record that names the last.
fn chained(links: usize) -> SchemaText {
    let references = (0..links)
        .map(|i| ResolvedReference {
            name: format!("T{i}"),
            text: if i == 0 {
                r#"{"type":"record","name":"T0","fields":[{"name":"v","type":"int"}]}"#.to_owned()
            } else {
                format!(
                    r#"{{"type":"record","name":"T{i}","fields":[{{"name":"next","type":"T{}"}}]}}"#,
                    i - 1
                )
            },
        })
        .collect();
    SchemaText {
        schema_type: SchemaType::Avro,
        text: format!(
            r#"{{"type":"record","name":"Top","fields":[{{"name":"x","type":"T{}"}}]}}"#,
            links - 1
        ),
        references,
    }
}

/// Found by the long-chain fuzz target: the crate resolves a reference
/// to another by recursion, and 150 chained references overflowed the
/// server's stack while parsing. Refused before the crate sees them.
#[test]
fn a_long_chain_of_references_is_refused_before_the_crate_recurses() {
    let e = AvroSchema::parse(&chained(5_000)).expect_err("too deep");
    assert!(e.to_string().contains("at most 256 are read"), "{e}");
}

/// A chain at the limit (three levels of JSON a link) parses on half the
/// stack the server gives every parse, on every run: the crate takes the
/// links in a different order each time, and an unlucky order overflowed
/// a 2 MiB test thread now and then.
#[test]
fn a_chain_at_the_limit_parses_on_half_the_stack_the_server_gives() {
    let links = super::parse::MAX_REFERENCE_NESTING / 3;
    std::thread::Builder::new()
        .stack_size(crate::schemas::PARSE_STACK_BYTES / 2)
        .spawn(move || {
            for _ in 0..50 {
                assert!(AvroSchema::parse(&chained(links)).is_ok());
            }
        })
        .expect("a thread")
        .join()
        .expect("no overflow");
}

/// Java's union walk is quadratic in branches and copies every finding
/// each time a pair is met: 200 chained records cost it 5 s in a debug
/// build and 3,000 would cost hours; the budget stops it.
#[test]
fn a_union_too_wide_to_compare_stops_at_the_work_limit() {
    let wide = |n: usize| {
        let branches: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"type":"record","name":"R{i}","fields":[{{"name":"v","type":"int"}}]}}"#
                )
            })
            .collect();
        format!("[{}]", branches.join(","))
    };
    assert!(compatible(&wide(100), &wide(100)));
    let started = std::time::Instant::now();
    assert_eq!(kinds(&wide(3_000), &wide(3_000)), ["TOO_COMPLEX_TO_CHECK"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // Fewer branches, but chained: each pair's findings hold the chain's,
    // copied at every meeting. Stopped too, and fast.
    let started = std::time::Instant::now();
    assert_eq!(
        kinds(&chain(120, "long"), &chain(120, "int")),
        ["TOO_COMPLEX_TO_CHECK"]
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}
