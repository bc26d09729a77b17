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
use wide_avro::{FIELDS, READERS, Variation, schema, variation};

#[path = "support/wide_avro.rs"]
mod wide_avro;

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
