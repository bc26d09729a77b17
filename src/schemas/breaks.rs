//! Why a change breaks a consumer, said the way its owner would: the group,
//! the field and what happens ("analytics reads `amount` without a default:
//! data written without it breaks analytics"). The checkers' own messages
//! stay Confluent's words (the verdicts are compared with Confluent's), so
//! this reads the kind and the names those messages quote; a kind it has no
//! sentence for keeps the checker's message, with the group named.

use super::Incompatibility;

/// The first name the message quotes ('…').
fn quoted(message: &str) -> Option<&str> {
    let start = message.find('\'')? + 1;
    let len = message[start..].find('\'')?;
    Some(&message[start..start + len])
}

/// The text after `label` up to the next `label`-like break (" not ",
/// ", " or the end).
fn after<'a>(message: &'a str, label: &str) -> Option<&'a str> {
    let start = message.find(label)? + label.len();
    let rest = &message[start..];
    let end = [" not compatible", ", found"]
        .iter()
        .filter_map(|b| rest.find(b))
        .min()
        .unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// The sentence for `group` reading data written with the change.
pub fn sentence(group: &str, i: &Incompatibility) -> String {
    let m = i.message.as_str();
    let at = if i.location.is_empty() {
        "the schema".to_owned()
    } else {
        format!("`{}`", i.location)
    };
    match (i.kind.as_str(), quoted(m)) {
        ("READER_FIELD_MISSING_DEFAULT_VALUE", Some(f)) => format!(
            "{group} reads `{f}` without a default: data written without `{f}` breaks {group}"
        ),
        ("TYPE_MISMATCH", _) => match (after(m, "reader type: "), after(m, "writer type: ")) {
            // Java names the types in capitals (DOUBLE); Avro writes them lower.
            (Some(r), Some(w)) => format!(
                "{group} reads {at} as {}: data written as {} there breaks {group}",
                r.to_lowercase(),
                w.to_lowercase()
            ),
            _ => format!("{group} reads {at} as another type: the change breaks {group}"),
        },
        ("MISSING_ENUM_SYMBOLS", Some(e)) => {
            let symbols = m.rsplit(": ").next().unwrap_or_default();
            format!(
                "{group} does not know the symbols {symbols} of enum `{e}` and has no default: data with them breaks {group}"
            )
        }
        ("MISSING_UNION_BRANCH", _) => {
            let t = after(m, "lacking writer type: ").unwrap_or("a type");
            format!(
                "{group} has no branch for {t} in the union at {at}: data of that type breaks {group}"
            )
        }
        ("NAME_MISMATCH", Some(n)) => format!(
            "{group} reads `{n}` under another name: every record breaks {group} (add the writer's name as an alias)"
        ),
        ("FIXED_SIZE_MISMATCH", Some(n)) => {
            format!("{group} reads the fixed `{n}` with another size: every record breaks {group}")
        }
        _ => format!("{group} cannot read data written with the change: {m}"),
    }
}

#[cfg(all(test, feature = "schema"))]
mod tests {
    use super::*;
    use crate::schemas::avro::{AvroSchema, can_read};
    use crate::schemas::{SchemaText, SchemaType};

    fn reasons(reader: &str, writer: &str) -> Vec<Incompatibility> {
        let parse =
            |t: &str| AvroSchema::parse(&SchemaText::new(SchemaType::Avro, t)).expect("parses");
        can_read(&parse(reader), &parse(writer))
    }

    const ORDER: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"}]}"#;

    #[test]
    fn a_removed_field_without_default_names_the_field_and_the_group() {
        let writer = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}"#;
        let r = reasons(ORDER, writer);
        assert_eq!(
            sentence("analytics", &r[0]),
            "analytics reads `amount` without a default: data written without `amount` breaks analytics"
        );
    }

    #[test]
    fn a_changed_type_says_both_types() {
        let writer = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"string"}]}"#;
        let r = reasons(ORDER, writer);
        let s = sentence("billing", &r[0]);
        assert!(s.starts_with("billing reads `/fields/1/type` as "), "{s}");
        assert!(s.ends_with("there breaks billing"), "{s}");
        assert!(s.contains("double") && s.contains("string"), "{s}");
    }

    #[test]
    fn other_kinds_keep_the_checkers_words_with_the_group() {
        let i = Incompatibility {
            kind: "FIELD_KIND_CHANGED".into(),
            location: "#/Order/3".into(),
            message: "The kind of field 3 changed".into(),
        };
        assert_eq!(
            sentence("ledger", &i),
            "ledger cannot read data written with the change: The kind of field 3 changed"
        );
    }
}
