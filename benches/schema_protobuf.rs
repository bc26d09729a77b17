//! Protobuf compatibility of a 1,000-field message (scalars, nested
//! messages, enums, maps, oneofs, a well-known type) against 50 reader
//! schemas, some of them incompatible, as a producer's proposed schema is
//! checked against every consumer group's.
//! `cargo bench -p streamkeeper --features schema --bench schema_protobuf`
//! prints the figures.

use std::fmt::Write;
use std::hint::black_box;
use std::time::Instant;

use streamkeeper::schemas::protobuf::{ProtobufSchema, can_read};
use streamkeeper::schemas::{SchemaText, SchemaType};

const FIELDS: usize = 1_000;
const READERS: usize = 50;
const NESTED: usize = 20;
const ENUMS: usize = 5;
const ONEOFS: usize = 20;
const ONEOF_SIZE: usize = 5;

const SCALARS: [&str; 10] = [
    "int32", "int64", "uint32", "bool", "sint64", "string", "bytes", "fixed32", "double", "float",
];

/// Field `n`'s type: scalars mostly, then nested messages, enums, maps and
/// a timestamp, in a fixed rotation.
fn field_type(n: usize) -> String {
    match n % 16 {
        10 | 11 => format!("Nested{}", n % NESTED),
        12 => format!("Kind{}", n % ENUMS),
        13 => format!("map<string, Nested{}>", n % NESTED),
        14 => "map<int64, string>".to_owned(),
        15 => "google.protobuf.Timestamp".to_owned(),
        k => SCALARS[k].to_owned(),
    }
}

/// The fields of one schema as (type, name, number, oneof), changed as
/// reader `variant` changes them; variant 0 is the writer.
fn fields(variant: usize) -> Vec<(String, String, usize, Option<usize>)> {
    let in_oneofs = ONEOFS * ONEOF_SIZE;
    (1..=FIELDS)
        .filter(|&n| variant == 0 || n % 97 != variant % 97 || n <= in_oneofs)
        .map(|n| {
            let mut ty = field_type(n);
            let mut name = format!("f{n}");
            let oneof = (n <= in_oneofs).then(|| (n - 1) / ONEOF_SIZE);
            if variant > 0 {
                // Compatible: a rename and a change within a scalar group.
                if n % 50 == variant % 50 {
                    name = format!("renamed{n}");
                }
                if n % 16 == 0 && n % 7 == variant % 7 {
                    ty = "uint64".to_owned();
                }
                // Incompatible, in every fifth reader: a change of scalar
                // kind and of message type.
                let incompatible = variant.is_multiple_of(5);
                if incompatible && n % 16 == 1 && n % 13 == variant % 13 {
                    ty = "sfixed64".to_owned();
                }
                if incompatible && n % 16 == 10 && n % 11 == variant % 11 {
                    ty = format!("Nested{}", (n + 1) % NESTED);
                }
            }
            (ty, name, n, oneof)
        })
        .collect()
}

fn proto(variant: usize) -> String {
    let mut s = String::from(
        "syntax = \"proto3\";\npackage bench;\nimport \"google/protobuf/timestamp.proto\";\n\nmessage Big {\n",
    );
    let fields = fields(variant);
    for (ty, name, n, _) in fields.iter().filter(|f| f.3.is_none()) {
        let _ = writeln!(s, "  {ty} {name} = {n};");
    }
    for o in 0..ONEOFS {
        let _ = writeln!(s, "  oneof choice{o} {{");
        for (ty, name, n, _) in fields.iter().filter(|f| f.3 == Some(o)) {
            // Maps cannot be oneof members.
            let ty = if ty.starts_with("map<") { "string" } else { ty };
            let _ = writeln!(s, "    {ty} {name} = {n};");
        }
        s.push_str("  }\n");
    }
    for m in 0..NESTED {
        let extra = if variant > 0 && m == variant % NESTED {
            "    string added = 6;\n"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  message Nested{m} {{\n    int64 id = 1;\n    string label = 2;\n    repeated double values = 3;\n    Kind{} kind = 4;\n    map<string, string> tags = 5;\n{extra}  }}",
            m % ENUMS
        );
    }
    for e in 0..ENUMS {
        let extra = if variant > 0 && e == variant % ENUMS {
            format!("    K{e}_EXTRA = 3;\n")
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "  enum Kind{e} {{\n    K{e}_UNKNOWN = 0;\n    K{e}_ONE = 1;\n    K{e}_TWO = 2;\n{extra}  }}"
        );
    }
    s.push_str("}\n");
    s
}

fn parse(text: &str) -> ProtobufSchema {
    match ProtobufSchema::parse(&SchemaText::new(SchemaType::Protobuf, text)) {
        Ok(schema) => schema,
        Err(err) => panic!("the bench schema does not parse: {err}"),
    }
}

fn main() {
    let writer_text = proto(0);
    let reader_texts: Vec<String> = (1..=READERS).map(proto).collect();

    for round in 0..3 {
        let start = Instant::now();
        let writer = parse(black_box(&writer_text));
        let readers: Vec<ProtobufSchema> =
            reader_texts.iter().map(|t| parse(black_box(t))).collect();
        let parse_s = start.elapsed().as_secs_f64();

        let start = Instant::now();
        let mut incompatible_readers = 0;
        let mut findings = 0;
        for reader in &readers {
            let found = can_read(black_box(reader), black_box(&writer));
            incompatible_readers += usize::from(!found.is_empty());
            findings += found.len();
        }
        let check_s = start.elapsed().as_secs_f64();
        println!(
            "round {round}: parse of {} schemas ({FIELDS} fields each) {:.1} ms ({:.2} ms each); \
             {READERS} checks {:.2} ms ({:.0} µs each; {incompatible_readers} readers incompatible, {findings} findings); \
             total {:.1} ms",
            READERS + 1,
            parse_s * 1e3,
            parse_s * 1e3 / (READERS + 1) as f64,
            check_s * 1e3,
            check_s * 1e6 / READERS as f64,
            (parse_s + check_s) * 1e3,
        );
    }
}
