//! The 1,000-field Avro record of the compatibility benchmarks and its 50
//! readers (some equal, some with fields removed, some with fields added
//! with defaults, some widened, some incompatible): shared by
//! `benches/schema_avro.rs` (the engine alone) and
//! `server/benches/release.rs` (through the server, release against debug).

pub const FIELDS: usize = 1_000;
pub const READERS: usize = 50;

/// How a reader departs from the writer.
#[derive(Clone, Copy)]
pub enum Variation {
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

pub fn variation(reader: usize) -> Variation {
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

pub fn schema(variation: Variation) -> String {
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
