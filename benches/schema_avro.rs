//! One producer's 1,000-field Avro record (primitives, enums, fixed,
//! arrays, maps, unions, nested records) checked against 50 consumers'
//! reader schemas: some equal, some with fields removed, some with fields
//! added with defaults, some widened, some incompatible.
//! `cargo bench -p streamkeeper --features schema --bench schema_avro`
//! prints the figures.

use std::hint::black_box;
use std::time::Instant;
use streamkeeper::schemas::avro::{AvroSchema, can_read};
use streamkeeper::schemas::{SchemaText, SchemaType};

const FIELDS: usize = 1_000;
const READERS: usize = 50;

/// How a reader departs from the writer.
#[derive(Clone, Copy)]
enum Variation {
    Same,
    /// Every `n`th field dropped: the reader ignores it.
    FieldsRemoved(usize),
    /// Fields the writer lacks, each with a default.
    DefaultsAdded(usize),
    /// Ints read as longs, one more enum symbol.
    Widened,
    /// Fields without defaults, narrowed types, enum symbols dropped.
    Incompatible(usize),
}

fn variation(reader: usize) -> Variation {
    match reader % 5 {
        0 => Variation::Same,
        1 => Variation::FieldsRemoved(2 + reader % 7),
        2 => Variation::DefaultsAdded(5 + reader),
        3 => Variation::Widened,
        _ => Variation::Incompatible(1 + reader % 4),
    }
}

/// The type of field `i`, one of twelve kinds in turn; an incompatible
/// reader narrows a long and an enum in every fifth round of twelve.
fn field_type(i: usize, variation: Variation) -> String {
    let widened = matches!(variation, Variation::Widened);
    let narrowed = matches!(variation, Variation::Incompatible(_)) && (i / 12).is_multiple_of(5);
    match i % 12 {
        0 if widened => "\"long\"".into(),
        0 => "\"int\"".into(),
        1 if narrowed => "\"int\"".into(),
        1 => "\"long\"".into(),
        2 => "\"string\"".into(),
        3 => "\"double\"".into(),
        4 => "\"boolean\"".into(),
        5 => {
            let symbols = match variation {
                Variation::Widened => r#""A","B","C","D""#,
                _ if narrowed => r#""A""#,
                _ => r#""A","B","C""#,
            };
            format!(r#"{{"type":"enum","name":"E{i}","symbols":[{symbols}]}}"#)
        }
        6 => format!(r#"{{"type":"fixed","name":"F{i}","size":16}}"#),
        7 => r#"{"type":"array","items":"string"}"#.into(),
        8 => r#"{"type":"map","values":"long"}"#.into(),
        9 => r#"["null","string","int"]"#.into(),
        10 => format!(
            r#"{{"type":"record","name":"N{i}","fields":[
                {{"name":"a","type":"int"}},{{"name":"b","type":["null","string"]}},
                {{"name":"c","type":{{"type":"array","items":"double"}}}}]}}"#
        ),
        _ => r#"{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}"#.into(),
    }
}

fn schema(variation: Variation) -> String {
    let mut fields = Vec::with_capacity(FIELDS + 40);
    for i in 0..FIELDS {
        if let Variation::FieldsRemoved(n) = variation
            && i.is_multiple_of(n)
        {
            continue;
        }
        fields.push(format!(
            r#"{{"name":"f{i}","type":{}}}"#,
            field_type(i, variation)
        ));
    }
    match variation {
        Variation::DefaultsAdded(n) => fields.extend(
            (0..n).map(|j| format!(r#"{{"name":"extra{j}","type":"string","default":"x"}}"#)),
        ),
        Variation::Incompatible(n) => {
            fields.extend((0..n).map(|j| format!(r#"{{"name":"required{j}","type":"string"}}"#)))
        }
        _ => {}
    }
    format!(
        r#"{{"type":"record","name":"Event","namespace":"com.acme","fields":[{}]}}"#,
        fields.join(",")
    )
}

fn parse(text: &str) -> AvroSchema {
    match AvroSchema::parse(&SchemaText::new(SchemaType::Avro, text)) {
        Ok(schema) => schema,
        Err(e) => panic!("the benchmark's schema does not parse: {e}"),
    }
}

fn main() {
    let writer_text = schema(Variation::Same);
    let reader_texts: Vec<String> = (0..READERS).map(|r| schema(variation(r))).collect();

    for round in 0..3 {
        let start = Instant::now();
        let writer = parse(black_box(&writer_text));
        let readers: Vec<AvroSchema> = reader_texts.iter().map(|t| parse(black_box(t))).collect();
        let parse_s = start.elapsed().as_secs_f64();

        let start = Instant::now();
        let mut incompatible = 0;
        let mut findings = 0;
        for reader in &readers {
            let found = can_read(black_box(reader), black_box(&writer));
            incompatible += usize::from(!found.is_empty());
            findings += found.len();
        }
        let check_s = start.elapsed().as_secs_f64();

        println!(
            "round {round}: parse of {} schemas ({FIELDS} fields) {:.1} ms ({:.2} ms each); \
             {READERS} checks {:.1} ms ({:.3} ms each, {incompatible} incompatible, {findings} findings); \
             total {:.1} ms",
            READERS + 1,
            parse_s * 1e3,
            parse_s * 1e3 / (READERS + 1) as f64,
            check_s * 1e3,
            check_s * 1e3 / READERS as f64,
            (parse_s + check_s) * 1e3,
        );
    }
}
