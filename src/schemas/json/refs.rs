//! The documents a schema is made of and how a `$ref` finds its target.
//!
//! A `$ref` is `document#fragment`. An empty document part is the document
//! the `$ref` is written in. Any other names one of the
//! [`SchemaText::references`](crate::schemas::SchemaText): by its name as
//! written, or, as Confluent registers references, by the URI the name
//! resolves to against the root's `$id`. The fragment is empty (the whole
//! document), a JSON Pointer (`/definitions/Address`), or a plain-name
//! anchor (`$anchor`, or a draft-07 `$id` of `#name`). Like Confluent, a
//! pointer into `$defs` also finds the entry under `definitions`.

use serde_json::Value;

use crate::schemas::SchemaError;

/// Which rules read the keywords: Confluent loads 2019-09 and 2020-12
/// schemas with another library, which reads `items`, `dependentRequired`,
/// `unevaluatedProperties` and a `$ref` beside other keywords the modern
/// way; everything else is read as draft-07.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    Draft7,
    Modern,
}

impl Dialect {
    fn of(json: &Value) -> Option<Dialect> {
        let uri = json.get("$schema")?.as_str()?;
        Some(if uri.contains("2020-12") || uri.contains("2019-09") {
            Dialect::Modern
        } else {
            Dialect::Draft7
        })
    }
}

#[derive(Debug)]
pub(super) struct Document {
    /// `None` for the schema itself, else the reference's name.
    name: Option<String>,
    pub json: Value,
    pub dialect: Dialect,
    /// The URI relative `$ref`s in this document resolve against.
    base: Option<String>,
}

/// The schema's documents: index 0 is the schema itself.
#[derive(Debug)]
pub(super) struct Documents(Vec<Document>);

/// Where a `$ref` points: a document and the JSON Pointer (or anchor)
/// within it, as one key per distinct target.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Target {
    pub document: usize,
    pub fragment: String,
}

impl Documents {
    pub fn new(root: Value, references: Vec<(String, Value)>) -> Documents {
        let dialect = Dialect::of(&root).unwrap_or(Dialect::Draft7);
        let root_base = id_of(&root).map(|id| strip_fragment(id).to_owned());
        let mut documents = vec![Document {
            name: None,
            dialect,
            base: root_base.clone(),
            json: root,
        }];
        for (name, json) in references {
            let registered = resolve(root_base.as_deref(), &name);
            let base = match id_of(&json) {
                Some(id) => resolve(Some(&registered), strip_fragment(id)),
                None => registered,
            };
            documents.push(Document {
                name: Some(name),
                dialect: Dialect::of(&json).unwrap_or(dialect),
                base: Some(base),
                json,
            });
        }
        Documents(documents)
    }

    pub fn get(&self, index: usize) -> &Document {
        &self.0[index]
    }

    /// The target of `reference`, written in document `from`.
    pub fn target(&self, from: usize, reference: &str) -> Result<Target, SchemaError> {
        let (document, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let document = if document.is_empty() {
            from
        } else {
            self.document_named(from, document)
                .ok_or_else(|| unresolved(reference, "no reference of that name was supplied"))?
        };
        Ok(Target {
            document,
            fragment: percent_decode(fragment),
        })
    }

    fn document_named(&self, from: usize, name: &str) -> Option<usize> {
        if let Some(index) = self.0.iter().position(|d| d.name.as_deref() == Some(name)) {
            return Some(index);
        }
        let wanted = resolve(self.0[from].base.as_deref(), name);
        self.0
            .iter()
            .position(|d| d.base.as_deref() == Some(wanted.as_str()))
    }

    /// The JSON at `target`, or why there is none.
    pub fn resolve(&self, target: &Target, reference: &str) -> Result<&Value, SchemaError> {
        let json = &self.0[target.document].json;
        let found = if target.fragment.is_empty() {
            Some(json)
        } else if target.fragment.starts_with('/') {
            pointer(json, &target.fragment)
        } else {
            anchor(json, &target.fragment)
        };
        found.ok_or_else(|| unresolved(reference, "nothing is at that location"))
    }
}

fn unresolved(reference: &str, detail: &str) -> SchemaError {
    SchemaError::Reference {
        name: reference.to_owned(),
        detail: detail.to_owned(),
    }
}

fn id_of(json: &Value) -> Option<&str> {
    json.get("$id").and_then(Value::as_str)
}

fn strip_fragment(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(before, _)| before)
}

/// A JSON Pointer, with Confluent's bridge from `$defs` to `definitions`.
fn pointer<'v>(json: &'v Value, pointer: &str) -> Option<&'v Value> {
    json.pointer(pointer).or_else(|| {
        let rest = pointer.strip_prefix("/$defs/")?;
        json.pointer(&format!("/definitions/{rest}"))
    })
}

/// The subschema whose `$anchor` is `name`, or whose draft-07 `$id` is
/// `#name`, searched depth first.
fn anchor<'v>(json: &'v Value, name: &str) -> Option<&'v Value> {
    match json {
        Value::Object(map) => {
            let is_anchor = map.get("$anchor").and_then(Value::as_str) == Some(name)
                || map
                    .get("$id")
                    .and_then(Value::as_str)
                    .and_then(|id| id.strip_prefix('#'))
                    == Some(name);
            if is_anchor {
                return Some(json);
            }
            map.values().find_map(|v| anchor(v, name))
        }
        Value::Array(items) => items.iter().find_map(|v| anchor(v, name)),
        _ => None,
    }
}

/// `%2F`-style escapes in a fragment, as URIs allow.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `reference` resolved against `base` (RFC 3986, section 5.2), enough
/// for the relative names schemas use (`other.json`, `../common/x.json`,
/// `/schemas/x.json`).
fn resolve(base: Option<&str>, reference: &str) -> String {
    if has_scheme(reference) {
        return reference.to_owned();
    }
    let Some(base) = base else {
        return remove_dot_segments(reference);
    };
    let (scheme, rest) = base.split_once(':').unwrap_or(("", base));
    if let Some(network_path) = reference.strip_prefix("//") {
        return format!("{scheme}://{network_path}");
    }
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            (format!("//{}", &after[..end]), &after[end..])
        }
        None => (String::new(), rest),
    };
    let merged = if reference.starts_with('/') {
        reference.to_owned()
    } else {
        let directory = path.rfind('/').map_or("", |slash| &path[..=slash]);
        format!("{directory}{reference}")
    };
    let prefix = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}:")
    };
    format!("{prefix}{authority}{}", remove_dot_segments(&merged))
}

fn has_scheme(reference: &str) -> bool {
    reference.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *segment {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            other => out.push(other),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_names_resolve_against_the_base() {
        let base = Some("http://example.com/schemas/order.json");
        assert_eq!(
            resolve(base, "customer.json"),
            "http://example.com/schemas/customer.json"
        );
        assert_eq!(
            resolve(base, "../common/money.json"),
            "http://example.com/common/money.json"
        );
        assert_eq!(resolve(base, "/x.json"), "http://example.com/x.json");
        assert_eq!(resolve(base, "urn:example:x"), "urn:example:x");
        assert_eq!(resolve(None, "customer.json"), "customer.json");
        assert_eq!(resolve(None, "./customer.json"), "customer.json");
    }

    #[test]
    fn fragments_are_percent_decoded() {
        assert_eq!(percent_decode("/definitions/a%20b"), "/definitions/a b");
        assert_eq!(percent_decode("/x%2"), "/x%2");
    }
}
