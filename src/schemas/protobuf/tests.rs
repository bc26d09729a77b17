//! Vectors for each of Confluent's rules, written after the scenarios of
//! Confluent's `diff-schema-examples.json`, plus parsing and the modes.

use super::*;
use crate::schemas::check::{self, Direction, ParsedSchema};
use crate::schemas::{Mode, ResolvedReference, SchemaError, SchemaText, SchemaType};

fn text(text: &str, references: &[(&str, &str)]) -> SchemaText {
    SchemaText {
        schema_type: SchemaType::Protobuf,
        text: text.to_owned(),
        references: references
            .iter()
            .map(|(name, text)| ResolvedReference {
                name: (*name).to_owned(),
                text: (*text).to_owned(),
            })
            .collect(),
    }
}

fn schema_with(source: &str, references: &[(&str, &str)]) -> ProtobufSchema {
    ProtobufSchema::parse(&text(source, references)).expect("the test schema compiles")
}

fn schema(source: &str) -> ProtobufSchema {
    schema_with(source, &[])
}

/// Every difference as `KIND location`, writer first as Confluent's original.
fn differences(writer: &ProtobufSchema, reader: &ProtobufSchema) -> Vec<String> {
    compare(writer, reader)
        .iter()
        .map(|d| format!("{} {}", d.kind, d.location))
        .collect()
}

fn diff(writer: &str, reader: &str) -> Vec<String> {
    differences(&schema(writer), &schema(reader))
}

/// The incompatibilities of `reader` reading `writer`, as `KIND location`.
fn problems(writer: &str, reader: &str) -> Vec<String> {
    can_read(&schema(reader), &schema(writer))
        .iter()
        .map(|i| format!("{} {}", i.kind, i.location))
        .collect()
}

fn proto3(body: &str) -> String {
    format!("syntax = \"proto3\";\n{body}")
}

fn proto2(body: &str) -> String {
    format!("syntax = \"proto2\";\n{body}")
}

/// `message M { <ty> f = 1; }` in proto3, with an enum E and a message Sub.
fn one_field(ty: &str) -> String {
    proto3(&format!(
        "message M {{ {ty} f = 1; }}\nenum E {{ E_ZERO = 0; }}\nmessage Sub {{ int32 x = 1; }}"
    ))
}

fn no_differences() -> Vec<String> {
    Vec::new()
}

// ---- fields ----

#[test]
fn a_field_added_is_compatible() {
    let w = proto3("message Order { string id = 1; }");
    let r = proto3("message Order { string id = 1; int64 total = 2; }");
    assert_eq!(diff(&w, &r), ["FIELD_ADDED #/Order/2"]);
    assert!(problems(&w, &r).is_empty());
}

#[test]
fn a_field_removed_is_compatible() {
    let w = proto3("message Order { string id = 1; int64 total = 2; }");
    let r = proto3("message Order { string id = 1; }");
    assert_eq!(diff(&w, &r), ["FIELD_REMOVED #/Order/2"]);
    assert!(problems(&w, &r).is_empty());
}

#[test]
fn a_field_renamed_is_compatible() {
    let w = proto3("message Order { string id = 1; }");
    let r = proto3("message Order { string order_id = 1; }");
    assert_eq!(diff(&w, &r), ["FIELD_NAME_CHANGED #/Order/1"]);
    assert!(problems(&w, &r).is_empty());
}

#[test]
fn a_field_renumbered_is_a_removal_and_an_addition() {
    let w = proto3("message Order { string id = 1; }");
    let r = proto3("message Order { string id = 2; }");
    assert_eq!(
        diff(&w, &r),
        ["FIELD_REMOVED #/Order/1", "FIELD_ADDED #/Order/2"]
    );
    assert!(problems(&w, &r).is_empty());
}

#[test]
fn scalars_within_a_group_are_interchangeable() {
    let groups: [&[&str]; 5] = [
        &["int32", "int64", "uint32", "uint64", "bool", "E"],
        &["sint32", "sint64"],
        &["string", "bytes"],
        &["fixed32", "sfixed32"],
        &["fixed64", "sfixed64"],
    ];
    for group in groups {
        for w in group {
            for r in group {
                assert_eq!(
                    problems(&one_field(w), &one_field(r)),
                    no_differences(),
                    "{w} -> {r}"
                );
            }
        }
    }
}

#[test]
fn scalars_across_groups_are_not() {
    let pairs = [
        ("int32", "sint32"),
        ("int64", "fixed64"),
        ("uint32", "fixed32"),
        ("bool", "string"),
        ("E", "string"),
        ("sint64", "sfixed64"),
        ("string", "int32"),
        ("bytes", "fixed32"),
        ("fixed32", "fixed64"),
        ("sfixed32", "float"),
        ("float", "double"),
        ("double", "fixed64"),
    ];
    for (w, r) in pairs {
        assert_eq!(
            problems(&one_field(w), &one_field(r)),
            ["FIELD_SCALAR_KIND_CHANGED #/M/1"],
            "{w} -> {r}"
        );
    }
}

#[test]
fn scalar_message_and_map_do_not_convert() {
    let pairs = [
        ("int32", "Sub"),
        ("Sub", "string"),
        ("E", "Sub"),
        ("map<string, int32>", "Sub"),
        ("map<string, string>", "string"),
        ("repeated Sub", "map<int32, int32>"),
    ];
    for (w, r) in pairs {
        assert_eq!(
            problems(&one_field(w), &one_field(r)),
            ["FIELD_KIND_CHANGED #/M/1"],
            "{w} -> {r}"
        );
    }
}

#[test]
fn a_message_type_changed_by_name() {
    let w = proto3(
        "message Order { Item item = 1; }\nmessage Item { string sku = 1; }\nmessage Product { string sku = 1; }",
    );
    let r = proto3(
        "message Order { Product item = 1; }\nmessage Item { string sku = 1; }\nmessage Product { string sku = 1; }",
    );
    assert_eq!(diff(&w, &r), ["FIELD_NAMED_TYPE_CHANGED #/Order/1"]);
}

#[test]
fn a_qualified_name_is_the_same_type() {
    let w =
        proto3("package shop;\nmessage Order { Item item = 1; message Item { string sku = 1; } }");
    let r = proto3(
        "package shop;\nmessage Order { .shop.Order.Item item = 1; message Item { string sku = 1; } }",
    );
    assert_eq!(diff(&w, &r), no_differences());
}

// ---- maps ----

#[test]
fn map_keys_and_values_follow_the_scalar_rules() {
    assert_eq!(
        problems(
            &one_field("map<string, int32>"),
            &one_field("map<string, int64>")
        ),
        no_differences()
    );
    assert_eq!(
        problems(
            &one_field("map<string, int32>"),
            &one_field("map<string, string>")
        ),
        ["FIELD_SCALAR_KIND_CHANGED #/M/1"]
    );
    assert_eq!(
        problems(
            &one_field("map<string, int32>"),
            &one_field("map<int64, int32>")
        ),
        ["FIELD_SCALAR_KIND_CHANGED #/M/1"]
    );
    assert_eq!(
        problems(
            &one_field("map<string, Sub>"),
            &one_field("map<string, int32>")
        ),
        ["FIELD_KIND_CHANGED #/M/1"]
    );
}

#[test]
fn map_entries_are_not_messages() {
    // The synthetic entry message is neither added nor removed.
    let w = proto3("message M { int32 a = 1; }");
    let r = proto3("message M { int32 a = 1; map<string, string> tags = 2; }");
    assert_eq!(diff(&w, &r), ["FIELD_ADDED #/M/2"]);
    let w = proto3("message M { map<string, Item> items = 1; message Item { string s = 1; } }");
    let r = proto3("message M { map<string, M.Item> items = 1; message Item { string s = 1; } }");
    assert_eq!(diff(&w, &r), no_differences());
}

#[test]
fn a_map_value_message_is_compared_by_name() {
    let w = proto3(
        "message M { map<string, A> m = 1; }\nmessage A { int32 x = 1; }\nmessage B { int32 x = 1; }",
    );
    let r = proto3(
        "message M { map<string, B> m = 1; }\nmessage A { int32 x = 1; }\nmessage B { int32 x = 1; }",
    );
    assert_eq!(problems(&w, &r), ["FIELD_NAMED_TYPE_CHANGED #/M/1"]);
}

// ---- labels ----

#[test]
fn a_numeric_field_cannot_change_label() {
    let w = proto3("message M { optional int32 n = 1; }");
    let r = proto3("message M { repeated int32 n = 1; }");
    assert_eq!(problems(&w, &r), ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"]);
    assert_eq!(problems(&r, &w), ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"]);
    let w = proto3("message M { repeated E e = 1; }\nenum E { A = 0; }");
    let r = proto3("message M { optional E e = 1; }\nenum E { A = 0; }");
    assert_eq!(problems(&w, &r), ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"]);
    let w = proto2("message M { optional fixed64 n = 1; }");
    let r = proto2("message M { required fixed64 n = 1; }");
    assert_eq!(problems(&w, &r), ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"]);
}

#[test]
fn a_string_or_bytes_field_may_change_label() {
    let w = proto3("message M { optional string s = 1; optional bytes b = 2; }");
    let r = proto3("message M { repeated string s = 1; repeated bytes b = 2; }");
    assert_eq!(
        diff(&w, &r),
        [
            "FIELD_STRING_OR_BYTES_LABEL_CHANGED #/M/1",
            "FIELD_STRING_OR_BYTES_LABEL_CHANGED #/M/2"
        ]
    );
    assert!(problems(&w, &r).is_empty());
}

#[test]
fn a_message_field_may_change_label() {
    let w = proto3("message M { optional Sub s = 1; }\nmessage Sub { int32 x = 1; }");
    let r = proto3("message M { repeated Sub s = 1; }\nmessage Sub { int32 x = 1; }");
    assert_eq!(diff(&w, &r), no_differences());
}

#[test]
fn a_proto3_field_without_a_label_is_not_compared_by_label() {
    // Confluent compares labels only when both are written: Wire parses a
    // proto3 field without one as having none.
    let w = proto3("message M { int32 n = 1; }");
    let r = proto3("message M { repeated int32 n = 1; }");
    assert_eq!(diff(&w, &r), no_differences());
    let r = proto3("message M { optional int32 n = 1; }");
    assert_eq!(diff(&w, &r), no_differences());
}

#[test]
fn proto3_optional_makes_no_oneof() {
    let w = proto3("message M { optional int32 a = 1; string b = 2; }");
    let r = proto3("message M { int32 a = 1; optional string b = 2; }");
    assert_eq!(diff(&w, &r), no_differences());
}

// ---- proto2 required ----

#[test]
fn a_required_field_added_or_removed_is_incompatible() {
    let w = proto2("message M { optional string a = 1; }");
    let r = proto2("message M { optional string a = 1; required int32 b = 2; }");
    assert_eq!(problems(&w, &r), ["REQUIRED_FIELD_ADDED #/M/2"]);
    assert_eq!(problems(&r, &w), ["REQUIRED_FIELD_REMOVED #/M/2"]);
    let r = proto2("message M { optional string a = 1; optional int32 b = 2; }");
    assert_eq!(diff(&w, &r), ["FIELD_ADDED #/M/2"]);
}

#[test]
fn a_proto2_group_is_left_out_as_by_wire() {
    let w = proto2("message M { optional int32 a = 1; }");
    let r = proto2(
        "message M { optional int32 a = 1; optional group G = 2 { optional int32 x = 3; } }",
    );
    assert_eq!(diff(&w, &r), no_differences());
}

// ---- oneofs ----

#[test]
fn a_new_oneof_with_new_fields_is_compatible() {
    let w = proto3("message M { string a = 1; }");
    let r = proto3("message M { string a = 1; oneof choice { int32 b = 2; string c = 3; } }");
    assert_eq!(
        diff(&w, &r),
        [
            "ONEOF_ADDED #/M/choice",
            "ONEOF_FIELD_ADDED #/M/choice/2",
            "ONEOF_FIELD_ADDED #/M/choice/3"
        ]
    );
    assert!(problems(&w, &r).is_empty());
}

#[test]
fn one_field_moved_into_a_new_oneof_is_compatible() {
    let w = proto3("message M { string a = 1; int32 b = 2; }");
    let r = proto3("message M { string a = 1; oneof choice { int32 b = 2; string c = 3; } }");
    assert_eq!(
        diff(&w, &r),
        ["ONEOF_ADDED #/M/choice", "ONEOF_FIELD_ADDED #/M/choice/3"]
    );
}

#[test]
fn several_fields_moved_into_a_oneof_are_incompatible() {
    let w = proto3("message M { string a = 1; int32 b = 2; }");
    let r = proto3("message M { oneof choice { string a = 1; int32 b = 2; string c = 3; } }");
    assert_eq!(
        diff(&w, &r),
        [
            "MULTIPLE_FIELDS_MOVED_TO_ONEOF #/M/choice",
            "ONEOF_ADDED #/M/choice",
            "ONEOF_FIELD_ADDED #/M/choice/3"
        ]
    );
    assert_eq!(
        problems(&w, &r),
        ["MULTIPLE_FIELDS_MOVED_TO_ONEOF #/M/choice"]
    );
}

#[test]
fn a_field_moved_into_an_existing_oneof_is_incompatible() {
    let w = proto3("message M { string a = 1; oneof choice { int32 b = 2; } }");
    let r = proto3("message M { oneof choice { string a = 1; int32 b = 2; } }");
    assert_eq!(
        problems(&w, &r),
        ["FIELD_MOVED_TO_EXISTING_ONEOF #/M/choice"]
    );
    // The same when the oneof is renamed on the way.
    let r = proto3("message M { oneof pick { string a = 1; int32 b = 2; } }");
    assert_eq!(
        diff(&w, &r),
        [
            "FIELD_MOVED_TO_EXISTING_ONEOF #/M/pick",
            "ONEOF_REMOVED #/M/choice",
            "ONEOF_ADDED #/M/pick"
        ]
    );
}

#[test]
fn two_oneofs_merged_are_incompatible() {
    let w = proto3("message M { oneof x { int32 a = 1; } oneof y { int32 b = 2; } }");
    let r = proto3("message M { oneof z { int32 a = 1; int32 b = 2; } }");
    assert_eq!(
        diff(&w, &r),
        [
            "FIELD_MOVED_TO_EXISTING_ONEOF #/M/z",
            "ONEOF_REMOVED #/M/x",
            "ONEOF_REMOVED #/M/y",
            "ONEOF_ADDED #/M/z"
        ]
    );
}

#[test]
fn a_field_removed_from_a_oneof_is_incompatible() {
    let w = proto3("message M { oneof choice { int32 a = 1; string b = 2; } }");
    let r = proto3("message M { oneof choice { int32 a = 1; } }");
    assert_eq!(diff(&w, &r), ["ONEOF_FIELD_REMOVED #/M/choice/2"]);
    assert_eq!(problems(&w, &r), ["ONEOF_FIELD_REMOVED #/M/choice/2"]);
    // Also when the oneof is renamed: the removal is at the writer's oneof.
    let r = proto3("message M { oneof pick { int32 a = 1; } }");
    assert_eq!(
        diff(&w, &r),
        [
            "ONEOF_REMOVED #/M/choice",
            "ONEOF_ADDED #/M/pick",
            "ONEOF_FIELD_REMOVED #/M/choice/2"
        ]
    );
}

#[test]
fn a_oneof_deleted_whole_is_compatible() {
    let w = proto3("message M { string a = 1; oneof choice { int32 b = 2; string c = 3; } }");
    let r = proto3("message M { string a = 1; }");
    assert_eq!(diff(&w, &r), ["ONEOF_REMOVED #/M/choice"]);
}

#[test]
fn a_field_moved_out_of_a_oneof_is_compatible_but_still_compared() {
    let w = proto3("message M { oneof choice { int32 a = 1; string b = 2; } }");
    let r = proto3("message M { oneof choice { int32 a = 1; } string b = 2; }");
    assert_eq!(diff(&w, &r), ["ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/M/2"]);
    let r = proto3("message M { oneof choice { int32 a = 1; } int64 b = 2; }");
    assert_eq!(
        diff(&w, &r),
        [
            "ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/M/2",
            "FIELD_SCALAR_KIND_CHANGED #/M/2"
        ]
    );
}

#[test]
fn a_type_change_is_found_across_a_oneof_rename() {
    let w = proto3("message M { oneof old { int32 a = 1; string b = 2; } }");
    let r = proto3("message M { oneof new { int32 a = 1; int32 b = 2; } }");
    assert_eq!(
        diff(&w, &r),
        [
            "ONEOF_ADDED #/M/new",
            "ONEOF_REMOVED #/M/old",
            "FIELD_SCALAR_KIND_CHANGED #/M/new/2"
        ]
    );
}

// ---- messages, nesting, package ----

#[test]
fn a_package_change_is_incompatible() {
    let w = proto3("package shop.v1;\nmessage M { int32 a = 1; }");
    let r = proto3("package shop.v2;\nmessage M { int32 a = 1; }");
    assert_eq!(problems(&w, &r), ["PACKAGE_CHANGED #/"]);
    assert_eq!(
        problems(&proto3("message M { int32 a = 1; }"), &w),
        ["PACKAGE_CHANGED #/"]
    );
}

#[test]
fn a_message_removed_is_incompatible_and_one_added_is_not() {
    let w = proto3("message M { int32 a = 1; }\nmessage Extra { int32 a = 1; }");
    let r = proto3("message M { int32 a = 1; }");
    assert_eq!(problems(&w, &r), ["MESSAGE_REMOVED #/Extra"]);
    assert_eq!(diff(&r, &w), ["MESSAGE_ADDED #/Extra"]);
    assert!(problems(&r, &w).is_empty());
}

#[test]
fn every_top_level_message_is_compared_not_only_the_first() {
    let w = proto3("message M { int32 a = 1; }\nmessage N { int32 b = 1; }");
    let r = proto3("message M { int32 a = 1; }\nmessage N { string b = 1; }");
    assert_eq!(problems(&w, &r), ["FIELD_SCALAR_KIND_CHANGED #/N/1"]);
}

#[test]
fn reordered_messages_are_moved() {
    let w = proto3("message A { int32 a = 1; }\nenum E { Z = 0; }\nmessage B { int32 b = 1; }");
    let r = proto3("message B { int32 b = 1; }\nmessage A { int32 a = 1; }\nenum E { Z = 0; }");
    assert_eq!(diff(&w, &r), ["MESSAGE_MOVED #/A", "MESSAGE_MOVED #/B"]);
    assert!(problems(&w, &r).is_empty());
}

#[test]
fn nested_messages_are_compared_where_they_are_declared() {
    let w = proto3("message Order { Item item = 1; message Item { int32 qty = 1; } }");
    let r =
        proto3("message Order { Item item = 1; message Item { int32 qty = 1; string sku = 2; } }");
    assert_eq!(diff(&w, &r), ["FIELD_ADDED #/Order/Item/2"]);
    // A local message type is not followed from the field: only its own
    // declaration reports the change.
    let r = proto3("message Order { Item item = 1; message Item { string qty = 1; } }");
    assert_eq!(
        problems(&w, &r),
        ["FIELD_SCALAR_KIND_CHANGED #/Order/Item/1"]
    );
    let r = proto3("message Order { int32 total = 2; }");
    assert_eq!(
        diff(&w, &r),
        [
            "FIELD_REMOVED #/Order/1",
            "FIELD_ADDED #/Order/2",
            "MESSAGE_REMOVED #/Order/Item"
        ]
    );
}

#[test]
fn a_message_and_an_enum_of_one_name_are_different_types() {
    let w = proto3("message M { int32 status = 1; }");
    let r = proto3(
        "message M { .M.Status status = 1; message Status { string s = 1; } }\nenum Status { A = 0; }",
    );
    assert_eq!(
        diff(&w, &r),
        [
            "FIELD_KIND_CHANGED #/M/1",
            "MESSAGE_ADDED #/M/Status",
            "ENUM_ADDED #/Status"
        ]
    );
}

// ---- enums ----

#[test]
fn enum_changes_are_compatible() {
    let w = proto3("message M { E e = 1; }\nenum E { A = 0; B = 1; C = 2; }\nenum Gone { G = 0; }");
    let r =
        proto3("message M { E e = 1; }\nenum E { A = 0; BEE = 1; D = 3; }\nenum New { N = 0; }");
    assert_eq!(
        diff(&w, &r),
        [
            "ENUM_CONST_CHANGED #/E/1",
            "ENUM_CONST_REMOVED #/E/2",
            "ENUM_CONST_ADDED #/E/3",
            "ENUM_REMOVED #/Gone",
            "ENUM_ADDED #/New"
        ]
    );
    assert!(problems(&w, &r).is_empty());
}

#[test]
fn nested_enums_are_located_in_their_message() {
    let w = proto3("message M { Status s = 1; enum Status { A = 0; } }");
    let r = proto3("message M { Status s = 1; enum Status { A = 0; B = 1; } }");
    assert_eq!(diff(&w, &r), ["ENUM_CONST_ADDED #/M/Status/1"]);
}

#[test]
fn an_enum_field_may_become_another_enum_or_an_integer() {
    let w = proto3("message M { E e = 1; }\nenum E { A = 0; }\nenum F { B = 0; }");
    let r = proto3("message M { F e = 1; }\nenum E { A = 0; }\nenum F { B = 0; }");
    assert_eq!(diff(&w, &r), no_differences());
    let r = proto3("message M { uint64 e = 1; }\nenum E { A = 0; }\nenum F { B = 0; }");
    assert_eq!(diff(&w, &r), no_differences());
}

// ---- imports ----

const ORDER_WITH_MONEY: &str = "syntax = \"proto3\";\nimport \"money.proto\";\nmessage Order { shop.Money total = 1; shop.Money tax = 2; }";
const MONEY_V1: &str =
    "syntax = \"proto3\";\npackage shop;\nmessage Money { int64 units = 1; string currency = 2; }";
const MONEY_V2: &str =
    "syntax = \"proto3\";\npackage shop;\nmessage Money { string units = 1; string currency = 2; }";

#[test]
fn an_imported_message_is_followed() {
    let w = schema_with(ORDER_WITH_MONEY, &[("money.proto", MONEY_V1)]);
    let r = schema_with(ORDER_WITH_MONEY, &[("money.proto", MONEY_V2)]);
    // The change is reported once, where Money is declared; each field that
    // reaches it changes type.
    assert_eq!(
        differences(&w, &r),
        [
            "FIELD_SCALAR_KIND_CHANGED #/Money/1",
            "FIELD_NAMED_TYPE_CHANGED #/Order/1",
            "FIELD_NAMED_TYPE_CHANGED #/Order/2"
        ]
    );
    let same = schema_with(ORDER_WITH_MONEY, &[("money.proto", MONEY_V1)]);
    assert_eq!(differences(&w, &same), no_differences());
}

#[test]
fn an_imported_message_may_change_package_or_file() {
    let w = schema_with(ORDER_WITH_MONEY, &[("money.proto", MONEY_V1)]);
    let reader_text = "syntax = \"proto3\";\nimport \"money2.proto\";\nmessage Order { shop2.Money total = 1; shop2.Money tax = 2; }";
    let r = schema_with(
        reader_text,
        &[(
            "money2.proto",
            &MONEY_V1.replace("package shop;", "package shop2;"),
        )],
    );
    assert_eq!(differences(&w, &r), no_differences());
    let r = schema_with(
        reader_text,
        &[(
            "money2.proto",
            &MONEY_V2.replace("package shop;", "package shop2;"),
        )],
    );
    assert_eq!(
        can_read(&r, &w)
            .iter()
            .map(|i| i.location.as_str())
            .collect::<Vec<_>>(),
        ["#/Money/1", "#/Order/1", "#/Order/2"]
    );
}

#[test]
fn a_nested_imported_message_is_located_by_its_local_name() {
    let import = |ty: &str| {
        format!(
            "syntax = \"proto3\";\npackage geo;\nmessage Outer {{ message Point {{ {ty} lat = 1; }} }}"
        )
    };
    let main = "syntax = \"proto3\";\nimport \"geo.proto\";\nmessage M { geo.Outer.Point p = 1; }";
    let w = schema_with(main, &[("geo.proto", &import("double"))]);
    let r = schema_with(main, &[("geo.proto", &import("float"))]);
    assert_eq!(
        differences(&w, &r),
        [
            "FIELD_SCALAR_KIND_CHANGED #/Outer/Point/1",
            "FIELD_NAMED_TYPE_CHANGED #/M/1"
        ]
    );
}

#[test]
fn moving_a_message_between_the_file_and_an_import() {
    let local = proto3("message Order { Money total = 1; }\nmessage Money { int64 units = 1; }");
    let imported = schema_with(
        "syntax = \"proto3\";\nimport \"money.proto\";\nmessage Order { Money total = 1; }",
        &[(
            "money.proto",
            "syntax = \"proto3\";\nmessage Money { int64 units = 1; }",
        )],
    );
    assert_eq!(
        differences(&schema(&local), &imported),
        ["MESSAGE_REMOVED #/Money"]
    );
    assert_eq!(
        differences(&imported, &schema(&local)),
        ["MESSAGE_ADDED #/Money"]
    );
}

#[test]
fn a_recursive_imported_message_is_followed_once_per_path() {
    let tree = |ty: &str| {
        format!(
            "syntax = \"proto3\";\npackage t;\nmessage Node {{ repeated Node children = 1; {ty} value = 2; }}"
        )
    };
    let main = "syntax = \"proto3\";\nimport \"tree.proto\";\nmessage Root { t.Node node = 1; }";
    let w = schema_with(main, &[("tree.proto", &tree("int32"))]);
    let r = schema_with(main, &[("tree.proto", &tree("string"))]);
    // Node's own field to Node is cut short by the recursion guard, so it
    // is not reported as changing type; the field from Root is.
    assert_eq!(
        differences(&w, &r),
        [
            "FIELD_SCALAR_KIND_CHANGED #/Node/2",
            "FIELD_NAMED_TYPE_CHANGED #/Root/1"
        ]
    );
}

#[test]
fn mutually_recursive_imports_terminate() {
    let file = |ty: &str| {
        format!(
            "syntax = \"proto3\";\npackage r;\nmessage A {{ B b = 1; {ty} v = 2; }}\nmessage B {{ A a = 1; repeated A more = 2; }}"
        )
    };
    let main = "syntax = \"proto3\";\nimport \"r.proto\";\nmessage M { r.A a = 1; r.B b = 2; }";
    let w = schema_with(main, &[("r.proto", &file("int32"))]);
    let r = schema_with(main, &[("r.proto", &file("double"))]);
    let found = differences(&w, &r);
    assert!(
        found.contains(&"FIELD_SCALAR_KIND_CHANGED #/A/2".to_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&"FIELD_NAMED_TYPE_CHANGED #/M/1".to_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&"FIELD_NAMED_TYPE_CHANGED #/M/2".to_owned()),
        "{found:?}"
    );
}

#[test]
fn well_known_types_need_no_reference() {
    let with = |ty: &str| {
        format!(
            "syntax = \"proto3\";\nimport \"google/protobuf/timestamp.proto\";\nimport \"google/protobuf/duration.proto\";\nmessage Event {{ {ty} at = 1; }}"
        )
    };
    let at = schema(&with("google.protobuf.Timestamp"));
    assert_eq!(
        differences(&at, &schema(&with("google.protobuf.Timestamp"))),
        no_differences()
    );
    assert_eq!(
        differences(&at, &schema(&with("google.protobuf.Duration"))),
        ["FIELD_NAMED_TYPE_CHANGED #/Event/1"]
    );
    assert_eq!(
        differences(&at, &schema(&with("int64"))),
        ["FIELD_KIND_CHANGED #/Event/1"]
    );
}

#[test]
fn confluent_files_need_no_reference() {
    let with = |ty: &str| {
        format!(
            "syntax = \"proto3\";\nimport \"confluent/meta.proto\";\nimport \"confluent/type/decimal.proto\";\nmessage Payment {{\n  option (confluent.message_meta).tags = \"PII\";\n  {ty} amount = 1 [(confluent.field_meta).doc = \"The amount\"];\n}}"
        )
    };
    let decimal = schema(&with("confluent.type.Decimal"));
    assert_eq!(
        differences(&decimal, &schema(&with("confluent.type.Decimal"))),
        no_differences()
    );
    assert_eq!(
        differences(&decimal, &schema(&with("double"))),
        ["FIELD_KIND_CHANGED #/Payment/1"]
    );
}

// ---- sentences ----

#[test]
fn a_message_names_the_message_the_field_and_both_types() {
    let w = proto3("package shop;\nmessage Order { int32 amount = 3; }");
    let r = proto3("package shop;\nmessage Order { string amount = 3; }");
    let found = can_read(&schema(&r), &schema(&w));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, "FIELD_SCALAR_KIND_CHANGED");
    assert_eq!(found[0].location, "#/Order/3");
    assert_eq!(
        found[0].message,
        "In message `shop.Order`, field `amount` (3) is int32 in the writer's schema but string in the reader's, and the two are not encoded alike."
    );
}

#[test]
fn every_sentence_says_writer_or_reader_never_old_or_new() {
    let w = proto2(
        "package p;\nmessage M { required int32 a = 1; oneof o { int32 b = 2; int32 c = 3; } optional int32 d = 4; optional int32 e = 5; }\nmessage X { optional int32 x = 1; }",
    );
    let r = proto2(
        "package q;\nmessage M { required string a = 1; oneof o { int32 b = 2; int32 d = 4; int32 e = 5; } required int32 f = 6; repeated int32 g = 7; }",
    );
    let found = compare(&schema(&w), &schema(&r));
    assert!(found.len() >= 6, "{found:?}");
    for d in found {
        assert!(
            d.message.contains("writer") || d.message.contains("reader"),
            "{d:?}"
        );
        for word in ["old", "new", "previous", "update", "original"] {
            assert!(
                !d.message
                    .split(|c: char| !c.is_alphanumeric())
                    .any(|w| w == word),
                "{d:?}"
            );
        }
    }
}

// ---- parsing ----

#[test]
fn a_syntax_error_is_a_parse_error_with_line_and_column() {
    let err = ProtobufSchema::parse(&text(
        "syntax = \"proto3\";\nmessage M {\n  int32 a = ;\n}",
        &[],
    ))
    .expect_err("does not parse");
    let SchemaError::Parse {
        schema_type,
        detail,
    } = err
    else {
        panic!("expected a parse error, got {err:?}");
    };
    assert_eq!(schema_type, SchemaType::Protobuf);
    assert!(detail.contains("schema.proto:3:"), "{detail}");
}

#[test]
fn an_undefined_type_is_a_parse_error() {
    let err = ProtobufSchema::parse(&text(
        "syntax = \"proto3\";\nmessage M { Nope n = 1; }",
        &[],
    ))
    .expect_err("does not compile");
    assert!(
        matches!(err, SchemaError::Parse { ref detail, .. } if detail.contains("Nope")),
        "{err:?}"
    );
}

#[test]
fn an_unknown_import_is_a_reference_error() {
    let err = ProtobufSchema::parse(&text(
        "syntax = \"proto3\";\nimport \"other.proto\";\nmessage M { int32 a = 1; }",
        &[],
    ))
    .expect_err("does not resolve");
    assert!(
        matches!(err, SchemaError::Reference { ref name, .. } if name == "other.proto"),
        "{err:?}"
    );
}

#[test]
fn a_broken_reference_is_a_reference_error() {
    let err = ProtobufSchema::parse(&text(
        "syntax = \"proto3\";\nimport \"other.proto\";\nmessage M { int32 a = 1; }",
        &[("other.proto", "syntax = \"proto3\";\nmessage {")],
    ))
    .expect_err("does not compile");
    assert!(
        matches!(err, SchemaError::Reference { ref name, .. } if name == "other.proto"),
        "{err:?}"
    );
}

#[test]
fn a_reference_named_like_the_main_file_does_not_clash() {
    let parsed = ProtobufSchema::parse(&text(
        "syntax = \"proto3\";\nimport \"schema.proto\";\nmessage M { Other o = 1; }",
        &[(
            "schema.proto",
            "syntax = \"proto3\";\nmessage Other { int32 a = 1; }",
        )],
    ));
    assert!(parsed.is_ok(), "{parsed:?}");
}

#[test]
fn an_explicit_map_entry_without_fields_does_not_panic() {
    // protox accepts `option map_entry = true` on a message of one's own.
    let source = proto3(
        "message Entry { option map_entry = true; }\nmessage M { repeated Entry e = 1; int32 a = 2; }",
    );
    assert_eq!(diff(&source, &source), no_differences());
}

// ---- modes ----

fn parsed(source: &str) -> ParsedSchema {
    ParsedSchema::parse(&text(source, &[])).expect("the test schema compiles")
}

#[test]
fn backward_is_the_new_schema_reading_the_old() {
    let old = parsed(&proto3(
        "message M { int32 a = 1; }\nmessage Extra { int32 a = 1; }",
    ));
    let new = parsed(&proto3("message M { int32 a = 1; }"));
    let verdict = check::check(Mode::Backward, &[old], &new);
    assert!(!verdict.compatible);
    assert_eq!(verdict.findings.len(), 1);
    assert_eq!(verdict.findings[0].direction, Direction::NewReadsOld);
    assert_eq!(verdict.findings[0].incompatibility.kind, "MESSAGE_REMOVED");
}

#[test]
fn forward_is_the_old_schema_reading_the_new() {
    let with_extra = || {
        parsed(&proto3(
            "message M { int32 a = 1; }\nmessage Extra { int32 a = 1; }",
        ))
    };
    let without = || parsed(&proto3("message M { int32 a = 1; }"));
    // Dropping Extra: old readers of new data only miss a message they knew.
    assert!(check::check(Mode::Forward, &[with_extra()], &without()).compatible);
    // Adding Extra: old readers lack a message the new writer has.
    let verdict = check::check(Mode::Forward, &[without()], &with_extra());
    assert!(!verdict.compatible);
    assert_eq!(verdict.findings.len(), 1);
    assert_eq!(verdict.findings[0].direction, Direction::OldReadsNew);
    assert_eq!(verdict.findings[0].incompatibility.kind, "MESSAGE_REMOVED");
    // FULL sees both ways; dropping Extra fails only backward.
    let verdict = check::check(Mode::Full, &[with_extra()], &without());
    assert_eq!(verdict.findings.len(), 1);
    assert_eq!(verdict.findings[0].direction, Direction::NewReadsOld);
}

#[test]
fn merging_fields_into_a_oneof_fails_backward_only() {
    let old = || parsed(&proto3("message M { int32 a = 1; int32 b = 2; }"));
    let new = || {
        parsed(&proto3(
            "message M { oneof o { int32 a = 1; int32 b = 2; } }",
        ))
    };
    let backward = check::check(Mode::Backward, &[old()], &new());
    assert_eq!(
        backward.findings[0].incompatibility.kind,
        "MULTIPLE_FIELDS_MOVED_TO_ONEOF"
    );
    assert!(check::check(Mode::Forward, &[old()], &new()).compatible);
    let full = check::check(Mode::FullTransitive, &[old(), old()], &new());
    assert!(
        full.findings
            .iter()
            .all(|f| f.direction == Direction::NewReadsOld && f.version == 2)
    );
}
