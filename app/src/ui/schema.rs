//! Schema widgets shared by the schema pages and the review item page: the type
//! select, a check's findings per consumer group, and a side-by-side diff.

use crate::schemas::model::{CompatibilityReport, ReaderSource};
use leptos::prelude::*;
use streamkeeper::platform::words::counted;
use streamkeeper::schemas::{SchemaType, Verdict, breaks};

pub fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Compatible => "badge state-ok",
        Verdict::Incompatible => "badge state-bad",
        Verdict::Undecided => "badge state-warn",
    }
}

pub fn reader_label(r: ReaderSource) -> &'static str {
    match r {
        ReaderSource::Declared => "declared",
        ReaderSource::Assumed => "assumed",
        ReaderSource::Missing => "unknown",
    }
}

/// A schema's text to read or edit: a JSON document (Avro, JSON Schema)
/// written on one line is indented one key a line, keys in their order;
/// anything else (Protobuf, JSON already laid out) as it is.
pub fn editable(text: &str) -> String {
    if text.trim().contains('\n') || serde_json::from_str::<serde_json::Value>(text).is_err() {
        return text.to_owned();
    }
    indent_json(text.trim())
}

/// Valid one-line JSON re-laid out two spaces a level, keeping its tokens
/// and their order (a `Value` would sort an object's keys).
fn indent_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                // An empty object or array stays on its line.
                if matches!(chars.peek(), Some('}' | ']')) {
                    continue;
                }
                depth += 1;
                newline(&mut out, depth);
            }
            '}' | ']' => {
                if !matches!(out.chars().last(), Some('{' | '[')) {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                }
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}
/// The schema format as a `schema_type` select (AVRO first unless
/// `selected` says otherwise).
#[component]
pub fn TypeSelect(#[prop(optional)] selected: Option<SchemaType>) -> impl IntoView {
    view! {
        <label>
            "Format "
            <select name="schema_type">
                {SchemaType::ALL.map(|t| view! { <option value=t.as_str() selected=selected == Some(t)>{t.as_str()}</option> }).collect_view()}
            </select>
        </label>
    }
}

/// A check's findings: each consumer group's verdict and reasons, the
/// subject's history and the registry's opinion. Shared by the report page
/// and the review item page (`nested` puts its headings one level down).
#[component]
pub fn CheckFindings(r: CompatibilityReport, #[prop(optional)] nested: bool) -> impl IntoView {
    let heading = move |text: &'static str| {
        if nested {
            view! { <h3>{text}</h3> }.into_any()
        } else {
            view! { <h2>{text}</h2> }.into_any()
        }
    };
    let h = r.history;
    view! {
        {heading("Consumer groups")}
        {if r.consumers.is_empty() {
            view! { <p class="note">"No consumer group reads this topic."</p> }.into_any()
        } else {
            view! {
                <table class="list" data-testid="consumer-verdicts">
                    <thead><tr><th>"Group"</th><th>"Owner"</th><th>"Verdict"</th><th>"Why"</th></tr></thead>
                    <tbody>
                        {r.consumers.into_iter().map(|c| {
                            let group = c.group.clone();
                            view! {
                            <tr data-group=c.group.clone()>
                                <td>{c.group.clone()}</td>
                                <td>{c.owner.unwrap_or_else(|| "unowned".into())}</td>
                                <td><span class=verdict_class(c.verdict)>{c.verdict.as_str()}</span></td>
                                <td>
                                    <p class="note">{format!("Reader schema: {}", c.reader_note)}</p>
                                    <ul>
                                        {c.reasons.into_iter().map(|i| view! {
                                            <li>
                                                {breaks::sentence(&group, &i)}
                                                <br /><small class="note"><code>{i.kind}</code> " at " <code>{i.location}</code> ": " {i.message}</small>
                                            </li>
                                        }).collect_view()}
                                    </ul>
                                </td>
                            </tr>
                        }}).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}
        {(!r.downstream.is_empty()).then(|| view! {
            {heading("Downstream")}
            <p class="note">"What the fields the change removes, renames or retypes reach past the consumer groups, by column lineage."</p>
            <ul data-testid="downstream-breakage">
                {r.downstream.iter().map(|b| view! {
                    <li data-field=b.touched.field.clone()>{b.sentence()}</li>
                }).collect_view()}
            </ul>
        })}
        {heading("Subject history")}
        <p data-testid="history-verdict">
            <span class=verdict_class(h.verdict)>{h.verdict.as_str()}</span>
            {format!(" {} under {} ({}, from the {}) — {}", h.subject, h.mode.as_str(), counted(h.versions, "version"), h.source, h.note)}
        </p>
        <ul>
            {h.findings.into_iter().map(|f| view! {
                <li>{format!("version {} ({}): ", f.version, f.direction.replace('_', " "))} <code>{f.incompatibility.kind}</code> " at " <code>{f.incompatibility.location}</code> ": " {f.incompatibility.message}</li>
            }).collect_view()}
        </ul>
        {r.registry.map(|o| view! {
            {heading("The registry's own check")}
            {match (o.is_compatible, o.error) {
                (_, Some(e)) => view! { <p class="error">{format!("No answer from the registry: {e}")}</p> }.into_any(),
                (Some(ok), None) => view! {
                    <p>{format!("{}: {}", o.subject, if ok { "compatible" } else { "incompatible" })}</p>
                    <ul>{o.messages.into_iter().map(|m| view! { <li><code>{m}</code></li> }).collect_view()}</ul>
                }.into_any(),
                (None, None) => ().into_any(),
            }}
        })}
    }
}

/// Two texts side by side, line by line: removed lines marked on the
/// left, added ones on the right.
#[component]
pub fn DiffTable(
    left: String,
    right: String,
    lines: Vec<crate::schemas::model::DiffLine>,
) -> impl IntoView {
    view! {
        <table class="diff" data-testid="diff">
            <thead><tr><th>{left}</th><th>{right}</th></tr></thead>
            <tbody>
                {lines.into_iter().map(|l| {
                    let class = match (&l.left, &l.right) {
                        (Some(_), None) => "removed",
                        (None, Some(_)) => "added",
                        _ => "same",
                    };
                    view! {
                        <tr class=class>
                            <td><code>{l.left.unwrap_or_default()}</code></td>
                            <td><code>{l.right.unwrap_or_default()}</code></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[cfg(test)]
mod tests {
    use super::editable;

    #[test]
    fn one_line_json_is_laid_out_with_its_keys_in_order() {
        let avro = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":["null","string"],"default":null,"doc":"a, \"b\": {c}"}],"x":{}}"#;
        let laid = editable(avro);
        assert_eq!(
            laid,
            r#"{
  "type": "record",
  "name": "Order",
  "fields": [
    {
      "name": "id",
      "type": "string"
    },
    {
      "name": "note",
      "type": [
        "null",
        "string"
      ],
      "default": null,
      "doc": "a, \"b\": {c}"
    }
  ],
  "x": {}
}"#
        );
        let same: serde_json::Value = serde_json::from_str(&laid).expect("still JSON");
        assert_eq!(
            same,
            serde_json::from_str::<serde_json::Value>(avro).expect("JSON")
        );
    }

    #[test]
    fn laid_out_json_and_protobuf_stay_as_they_are() {
        let laid = "{\n    \"type\": \"string\"\n}";
        assert_eq!(editable(laid), laid);
        let proto = "syntax = \"proto3\"; message A { string id = 1; }";
        assert_eq!(editable(proto), proto);
    }
}
