//! Fuzz targets for the schema parsers and compatibility checks, the
//! parsers every user's schema reaches (issue 12): arbitrary text, and
//! schemas generated from each format's grammar and then mutated (bytes
//! cut, doubled or spliced in), each parsed and, where two parse,
//! compared both ways in every mode. The only promise checked is that
//! nothing panics or overflows the stack: errors are answers.
//!
//! Cases per target: `PROPTEST_CASES` (proptest's default, 256, when
//! unset); `scripts/test` sets it so the targets finish in about a
//! minute. The parses run on a thread with tokio's 2 MiB stack, where the
//! server runs them.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};
use streamkeeper::schemas::check::{ParsedSchema, can_read, check};
use streamkeeper::schemas::{Mode, ResolvedReference, SchemaText, SchemaType};

/// The stack of tokio's blocking threads, where the server parses.
const SERVER_STACK: usize = 2 << 20;

/// Runs `f` on a thread with the server's stack: an overflow there
/// aborts the test binary, as it would the server.
fn on_server_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SERVER_STACK)
        .spawn(f)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

fn config() -> Config {
    Config {
        // Failures are kept as regression tests below, not in files.
        failure_persistence: None,
        ..Config::default()
    }
}

/// Parses each text as `ty` and compares every two that parse, both
/// ways, in every mode.
fn exercise(ty: SchemaType, texts: Vec<String>, references: Vec<ResolvedReference>) {
    on_server_stack(move || {
        let parsed: Vec<ParsedSchema> = texts
            .into_iter()
            .filter_map(|text| {
                ParsedSchema::parse(&SchemaText {
                    schema_type: ty,
                    text,
                    references: references.clone(),
                })
                .ok()
            })
            .collect();
        for a in &parsed {
            for b in &parsed {
                let _ = can_read(a, b);
            }
        }
        if let [first, rest @ ..] = parsed.as_slice() {
            for mode in Mode::ALL {
                let _ = check(mode, rest, first);
            }
        }
    });
}

/// One edit of a text: the mutations that turn a valid schema into a
/// near-valid one.
#[derive(Clone, Debug)]
enum Edit {
    Delete(prop::sample::Index, usize),
    Insert(prop::sample::Index, String),
    Duplicate(prop::sample::Index, usize),
    Truncate(prop::sample::Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    let snippet = prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("\"".to_owned()),
        Just(",".to_owned()),
        Just(":".to_owned()),
        Just("\\".to_owned()),
        Just(";".to_owned()),
        Just("=".to_owned()),
        Just("\u{0}".to_owned()),
        Just("é💥".to_owned()),
        Just("-1".to_owned()),
        Just("1e999".to_owned()),
        Just("9223372036854775808".to_owned()),
        Just("null".to_owned()),
        Just(r#""type":"#.to_owned()),
        Just(r##""$ref":"#""##.to_owned()),
        Just("message M {".to_owned()),
        Just("repeated".to_owned()),
        Just("oneof".to_owned()),
        Just("import \"a.proto\";".to_owned()),
        any::<String>(),
    ];
    prop_oneof![
        (any::<prop::sample::Index>(), 1..8_usize).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<prop::sample::Index>(), snippet).prop_map(|(i, s)| Edit::Insert(i, s)),
        (any::<prop::sample::Index>(), 1..40_usize).prop_map(|(i, n)| Edit::Duplicate(i, n)),
        any::<prop::sample::Index>().prop_map(Edit::Truncate),
    ]
}

/// `text` with `edits` applied, at char boundaries.
fn mutated(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        let at = |i: &prop::sample::Index, len: usize| i.index(len + 1);
        match e {
            Edit::Delete(i, n) => {
                let start = at(i, chars.len()).min(chars.len());
                let end = (start + n).min(chars.len());
                chars.drain(start..end);
            }
            Edit::Insert(i, s) => {
                let start = at(i, chars.len());
                chars.splice(start..start, s.chars());
            }
            Edit::Duplicate(i, n) => {
                let start = at(i, chars.len()).min(chars.len());
                let end = (start + n).min(chars.len());
                let copy: Vec<char> = chars[start..end].to_vec();
                chars.splice(end..end, copy);
            }
            Edit::Truncate(i) => {
                let end = at(i, chars.len());
                chars.truncate(end);
            }
        }
    }
    chars.into_iter().collect()
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("A".to_owned()),
        Just("B".to_owned()),
        Just("Order".to_owned()),
        Just("ns.A".to_owned()),
        Just("com.example.Order".to_owned()),
        Just("1bad".to_owned()),
        Just(String::new()),
        "[a-z]{1,6}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

// ---- Avro --------------------------------------------------------------

fn avro_type() -> impl Strategy<Value = Value> {
    let leaf =
        prop_oneof![
        prop::sample::select(vec![
            "null", "boolean", "int", "long", "float", "double", "bytes", "string",
        ])
        .prop_map(Value::from),
        name().prop_map(Value::from),
        prop::sample::select(vec![
            ("int", "date"),
            ("int", "time-millis"),
            ("long", "timestamp-micros"),
            ("string", "uuid"),
            ("long", "local-timestamp-nanos"),
            ("bytes", "big-decimal"),
        ])
        .prop_map(|(t, l)| json!({"type": t, "logicalType": l})),
        (any::<i64>(), any::<i64>()).prop_map(|(p, s)| {
            json!({"type": "bytes", "logicalType": "decimal", "precision": p % 40, "scale": s % 40})
        }),
        (name(), any::<i32>()).prop_map(|(n, size)| {
            json!({"type": "fixed", "name": n, "size": size % 64, "logicalType": "duration"})
        }),
        (name(), prop::collection::vec("[A-Z]{1,3}", 0..4), any::<bool>()).prop_map(
            |(n, symbols, default)| {
                let mut e = json!({"type": "enum", "name": n, "symbols": symbols.clone()});
                if default {
                    e["default"] = json!(symbols.first().cloned().unwrap_or_default());
                }
                e
            }
        ),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        let field = (
            "[a-z]{1,4}",
            inner.clone(),
            prop::option::of(json_value()),
            prop::option::of(prop::sample::select(vec!["a", "b", "c"])),
        )
            .prop_map(|(n, t, default, alias)| {
                let mut f = json!({"name": n, "type": t});
                if let Some(d) = default {
                    f["default"] = d;
                }
                if let Some(a) = alias {
                    f["aliases"] = json!([a]);
                }
                f
            });
        prop_oneof![
            (
                name(),
                prop::option::of("[a-z]{1,4}(\\.[a-z]{1,4})?"),
                prop::collection::vec(field, 0..5)
            )
                .prop_map(|(n, ns, fields)| {
                    let mut r = json!({"type": "record", "name": n, "fields": fields});
                    if let Some(ns) = ns {
                        r["namespace"] = json!(ns);
                    }
                    r
                }),
            inner
                .clone()
                .prop_map(|t| json!({"type": "array", "items": t})),
            inner
                .clone()
                .prop_map(|t| json!({"type": "map", "values": t})),
            prop::collection::vec(inner, 0..4).prop_map(Value::from),
        ]
    })
}

/// Named types other schemas may reference.
fn avro_references() -> Vec<ResolvedReference> {
    vec![ResolvedReference {
        name: "com.example.Money".into(),
        text: r#"{"type":"record","name":"Money","namespace":"com.example","fields":[{"name":"cents","type":"long"}]}"#.into(),
    }]
}

// ---- JSON Schema ------------------------------------------------------

fn json_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        prop::sample::select(vec![
            "string", "integer", "number", "boolean", "null", "object", "array", "bogus",
        ])
        .prop_map(|t| json!({"type": t})),
        prop::sample::select(vec![
            "#",
            "#/definitions/a",
            "#/$defs/b",
            "#/properties/x",
            "#/items",
            "common.json",
            "common.json#/definitions/money",
            "http://example.com/x.json",
            "#/definitions/%7E0",
            "",
        ])
        .prop_map(|r| json!({"$ref": r})),
        (
            prop::option::of(any::<i64>()),
            prop::option::of(any::<f64>()),
            prop::option::of(-3.0..10.0f64)
        )
            .prop_map(|(min, max, multiple)| {
                let mut s = json!({"type": "number"});
                if let Some(m) = min {
                    s["minimum"] = json!(m);
                }
                if let Some(m) = max {
                    s["exclusiveMaximum"] = json!(m);
                }
                if let Some(m) = multiple {
                    s["multipleOf"] = json!(m);
                }
                s
            }),
        (
            prop::option::of(any::<u64>()),
            prop::option::of(any::<u32>()),
            prop::option::of(prop::sample::select(vec![
                "^[a-z]+$", "(a+)+$", "(?<=a)b", "(a)\\1", "\\p{L}+", "[", "(?", "a{99999}", ".*",
            ]))
        )
            .prop_map(|(min, max, pattern)| {
                let mut s = json!({"type": "string"});
                if let Some(m) = min {
                    s["minLength"] = json!(m);
                }
                if let Some(m) = max {
                    s["maxLength"] = json!(m);
                }
                if let Some(p) = pattern {
                    s["pattern"] = json!(p);
                }
                s
            }),
        prop::collection::vec(json_value(), 0..4).prop_map(|values| json!({"enum": values})),
        json_value().prop_map(|v| json!({"const": v})),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            (
                prop::collection::btree_map("[a-c]{1,2}", inner.clone(), 0..4),
                prop::collection::vec("[a-c]{1,2}", 0..3),
                prop::option::of(inner.clone()),
            )
                .prop_map(|(props, required, additional)| {
                    let mut s = json!({"type": "object", "properties": props, "required": required});
                    if let Some(a) = additional {
                        s["additionalProperties"] = a;
                    }
                    s
                }),
            (inner.clone(), prop::option::of(0..5u64), prop::option::of(0..5u64)).prop_map(
                |(items, min, max)| {
                    let mut s = json!({"type": "array", "items": items});
                    if let Some(m) = min {
                        s["minItems"] = json!(m);
                    }
                    if let Some(m) = max {
                        s["maxItems"] = json!(m);
                    }
                    s
                }
            ),
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|items| json!({"type": "array", "prefixItems": items, "items": false})),
            (
                prop::sample::select(vec!["oneOf", "anyOf", "allOf"]),
                prop::collection::vec(inner.clone(), 0..4)
            )
                .prop_map(|(k, v)| json!({ k: v })),
            inner.clone().prop_map(|s| json!({"not": s})),
            prop::collection::btree_map("[a-b]", inner.clone(), 0..3)
                .prop_map(|defs| json!({"definitions": defs, "$ref": "#/definitions/a"})),
            prop::collection::btree_map("[a-b]", inner.clone(), 0..3)
                .prop_map(|defs| json!({"$defs": defs, "allOf": [{"$ref": "#/$defs/b"}]})),
            (inner.clone(), inner.clone()).prop_map(|(i, t)| json!({"if": i, "then": t})),
            prop::collection::btree_map("\\^[a-c]\\*", inner.clone(), 0..2)
                .prop_map(|p| json!({"type": "object", "patternProperties": p})),
            (inner.clone(), "[a-c]").prop_map(
                |(s, k)| json!({"type": "object", "dependentSchemas": { k: s }, "dependencies": {"a": ["b"]}})
            ),
        ]
    })
}

fn json_references() -> Vec<ResolvedReference> {
    vec![ResolvedReference {
        name: "common.json".into(),
        text: r#"{"definitions":{"money":{"type":"object","properties":{"cents":{"type":"integer"}}}}}"#
            .into(),
    }]
}

// ---- Protobuf -------------------------------------------------------------

#[derive(Clone, Debug)]
struct ProtoField {
    label: &'static str,
    ty: String,
    name: String,
    number: i64,
}

fn proto_field() -> impl Strategy<Value = ProtoField> {
    let ty = prop_oneof![
        prop::sample::select(vec![
            "int32",
            "int64",
            "uint32",
            "sint64",
            "fixed32",
            "sfixed64",
            "bool",
            "string",
            "bytes",
            "double",
            "float",
            "M",
            "N",
            "E",
            "M.Inner",
            ".pkg.M",
            "common.Money",
            "google.protobuf.Timestamp",
            "Unknown",
        ])
        .prop_map(str::to_owned),
        (
            prop::sample::select(vec!["string", "int32", "bool", "double"]),
            prop::sample::select(vec!["string", "M", "E", "bytes"])
        )
            .prop_map(|(k, v)| format!("map<{k}, {v}>")),
    ];
    let number = prop_oneof![
        1..20_i64,
        Just(0),
        Just(-1),
        Just(19_000),
        Just(536_870_911),
        Just(536_870_912),
        Just(i64::MAX),
    ];
    (
        prop::sample::select(vec!["", "optional ", "repeated ", "required "]),
        ty,
        "[a-e]{1,3}",
        number,
    )
        .prop_map(|(label, ty, name, number)| ProtoField {
            label,
            ty,
            name,
            number,
        })
}

fn proto_file() -> impl Strategy<Value = String> {
    let message = (
        prop::sample::select(vec!["M", "N", "Inner", "M"]),
        prop::collection::vec(proto_field(), 0..6),
        prop::collection::vec(proto_field(), 0..3),
        prop::option::of((1..20_i64, 1..30_i64)),
        any::<bool>(),
    )
        .prop_map(|(name, fields, oneof, reserved, nested)| {
            let mut m = format!("message {name} {{\n");
            for f in fields {
                m += &format!("  {}{} {} = {};\n", f.label, f.ty, f.name, f.number);
            }
            if !oneof.is_empty() {
                m += "  oneof choice {\n";
                for f in oneof {
                    m += &format!("    {} {}_o = {};\n", f.ty, f.name, f.number);
                }
                m += "  }\n";
            }
            if let Some((from, to)) = reserved {
                m += &format!("  reserved {from} to {to};\n  reserved \"old\";\n");
            }
            if nested {
                m += "  message Inner { string x = 1; }\n  enum Kind { KIND_UNSPECIFIED = 0; KIND_A = 1; }\n";
            }
            m + "}\n"
        });
    let enumeration =
        (prop::collection::vec(-2..4_i64, 0..4), any::<bool>()).prop_map(|(values, alias)| {
            let mut e = String::from("enum E {\n");
            if alias {
                e += "  option allow_alias = true;\n";
            }
            for (i, v) in values.iter().enumerate() {
                e += &format!("  E_{i} = {v};\n");
            }
            e + "}\n"
        });
    (
        prop::sample::select(vec![
            "syntax = \"proto3\";\n",
            "syntax = \"proto2\";\n",
            "edition = \"2023\";\n",
            "",
        ]),
        prop::option::of(prop::sample::select(vec!["pkg", "com.example", "a.b.c"])),
        prop::collection::vec(
            prop::sample::select(vec![
                "import \"common.proto\";\n",
                "import \"google/protobuf/timestamp.proto\";\n",
                "import public \"missing.proto\";\n",
            ]),
            0..3,
        ),
        prop::collection::vec(message, 0..4),
        prop::option::of(enumeration),
    )
        .prop_map(|(syntax, package, imports, messages, enumeration)| {
            let mut f = syntax.to_owned();
            if let Some(p) = package {
                f += &format!("package {p};\n");
            }
            for i in imports {
                f += i;
            }
            for m in messages {
                f += &m;
            }
            f + &enumeration.unwrap_or_default()
        })
}

fn proto_references() -> Vec<ResolvedReference> {
    vec![ResolvedReference {
        name: "common.proto".into(),
        text: "syntax = \"proto3\";\npackage common;\nmessage Money { int64 cents = 1; string currency = 2; }\n".into(),
    }]
}

// ---- the targets ------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// Any text, as each format.
    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        for ty in SchemaType::ALL {
            exercise(ty, vec![text.clone()], Vec::new());
        }
    }

    /// Text that looks like schemas of each format.
    #[test]
    fn schema_shaped_text_never_panics(
        text in "[{}\\[\\]\":,a-z0-9 =;<>.$#/\\\\-]{0,80}",
    ) {
        for ty in SchemaType::ALL {
            exercise(ty, vec![text.clone()], Vec::new());
        }
    }

    #[test]
    fn avro_schemas_and_mutations_never_panic(
        a in avro_type(),
        b in avro_type(),
        edits in prop::collection::vec(edit(), 0..4),
    ) {
        let (a, b) = (a.to_string(), b.to_string());
        let m = mutated(&a, &edits);
        exercise(SchemaType::Avro, vec![a, b, m], avro_references());
    }

    #[test]
    fn json_schemas_and_mutations_never_panic(
        a in json_schema(),
        b in json_schema(),
        edits in prop::collection::vec(edit(), 0..4),
    ) {
        let (a, b) = (a.to_string(), b.to_string());
        let m = mutated(&a, &edits);
        exercise(SchemaType::Json, vec![a, b, m], json_references());
    }

    #[test]
    fn protobuf_schemas_and_mutations_never_panic(
        a in proto_file(),
        b in proto_file(),
        edits in prop::collection::vec(edit(), 0..4),
    ) {
        let m = mutated(&a, &edits);
        exercise(SchemaType::Protobuf, vec![a, b, m], proto_references());
    }
}

// ---- deep input, which grammars at random rarely reach ------------------

/// Nested past the parsers' own limits (protox: 31 nested messages;
/// serde_json: 128 levels): refused, not a crash.
#[test]
fn nesting_past_the_parsers_limits_is_refused() {
    let deep_avro = format!(
        "{}\"int\"{}",
        r#"{"type":"record","name":"R","fields":[{"name":"f","type":"#.repeat(5_000),
        "}]}".repeat(5_000)
    );
    let deep_proto = format!(
        "syntax = \"proto3\";\n{}{}",
        "message M { ".repeat(5_000),
        "} ".repeat(5_000)
    );
    let deep_json = format!(
        "{}{{}}{}",
        r#"{"properties":{"a":"#.repeat(5_000),
        "}}".repeat(5_000)
    );
    for (ty, text) in [
        (SchemaType::Avro, deep_avro),
        (SchemaType::Protobuf, deep_proto),
        (SchemaType::Json, deep_json),
    ] {
        let parsed =
            on_server_stack(move || ParsedSchema::parse(&SchemaText::new(ty, text)).map(|_| ()));
        assert!(
            parsed.is_err(),
            "{ty:?} nested 5,000 deep should be refused"
        );
    }
}

/// Flat text whose types reference each other in a long chain: no
/// parser limit applies, so the comparers must not recurse once per link.
#[test]
fn long_chains_of_types_compare_on_the_servers_stack() {
    const LINKS: usize = 5_000;
    let avro = |last: &str| {
        let mut types = vec![format!(
            r#"{{"type":"record","name":"T0","fields":[{{"name":"v","type":"{last}"}}]}}"#
        )];
        for i in 1..LINKS {
            types.push(format!(
                r#"{{"type":"record","name":"T{i}","fields":[{{"name":"next","type":"T{}"}}]}}"#,
                i - 1
            ));
        }
        format!("[{}]", types.join(","))
    };
    let proto = |last: &str| {
        let mut f = format!("syntax = \"proto3\";\nmessage T0 {{ {last} v = 1; }}\n");
        for i in 1..LINKS {
            f += &format!("message T{i} {{ T{} next = 1; }}\n", i - 1);
        }
        f
    };
    let json = |last: &str| {
        let defs: Vec<String> = (0..LINKS)
            .map(|i| {
                if i + 1 == LINKS {
                    format!(r#""d{i}":{{"type":"{last}"}}"#)
                } else {
                    format!(
                        r##""d{i}":{{"type":"object","properties":{{"next":{{"$ref":"#/definitions/d{}"}}}}}}"##,
                        i + 1
                    )
                }
            })
            .collect();
        format!(
            r##"{{"definitions":{{{}}},"$ref":"#/definitions/d0"}}"##,
            defs.join(",")
        )
    };
    for (ty, old, new) in [
        (SchemaType::Avro, avro("int"), avro("long")),
        (SchemaType::Protobuf, proto("int32"), proto("string")),
        (SchemaType::Json, json("integer"), json("string")),
    ] {
        exercise(ty, vec![old, new], Vec::new());
    }
}
