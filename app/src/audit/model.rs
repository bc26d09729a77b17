//! Audit entries and refusal tallies as the screens and the REST API show them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditRow {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub detail: String,
    pub source: String,
}

/// Refusals by unauthenticated sources (cross-site requests, failed
/// sign-ins, unknown tokens), counted per source, action and minute beside
/// the chained entries; the row shows the latest attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RefusalTally {
    pub source: String,
    pub action: String,
    /// The minute counted (UTC, start of the minute).
    pub minute: DateTime<Utc>,
    pub actor: String,
    pub target: String,
    pub detail: String,
    pub count: i64,
    pub first_at: DateTime<Utc>,
    pub last_at: DateTime<Utc>,
}

/// Filters for the audit log; empty fields do not filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditFilter {
    pub actor: Option<String>,
    pub action: Option<String>,
    pub target: Option<String>,
}

/// An entry's details as key/value lines for people: a JSON object's
/// fields (nested ones with dotted keys, strings without quotes, lists
/// joined by commas); anything else as one line with no key.
pub fn detail_lines(detail: &str) -> Vec<(String, String)> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(m) if !m.is_empty() => {
                for (k, v) in m {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            serde_json::Value::Array(items) if items.iter().all(|i| !i.is_object()) => {
                let joined: Vec<String> = items.iter().map(text).collect();
                out.push((prefix.to_owned(), joined.join(", ")));
            }
            other => out.push((prefix.to_owned(), text(other))),
        }
    }
    fn text(v: &serde_json::Value) -> String {
        match v {
            // A time in the details reads as every page shows one.
            serde_json::Value::String(s) => crate::ui::time::stamp_text(s),
            serde_json::Value::Null => "–".into(),
            other => other.to_string(),
        }
    }
    match serde_json::from_str::<serde_json::Value>(detail) {
        Ok(serde_json::Value::Object(m)) if m.is_empty() => Vec::new(),
        Ok(v @ serde_json::Value::Object(_)) => {
            let mut out = Vec::new();
            walk("", &v, &mut out);
            out
        }
        _ if detail.trim().is_empty() => Vec::new(),
        _ => vec![(String::new(), detail.to_owned())],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_read_as_key_value_lines() {
        let lines = detail_lines(
            r#"{"reason":"wrong password","cluster":{"id":3,"name":"prod"},"scopes":["read","check"],"ttl":null,"until":"2026-12-02T00:41:07Z"}"#,
        );
        assert_eq!(
            lines,
            vec![
                ("cluster.id".to_owned(), "3".to_owned()),
                ("cluster.name".to_owned(), "prod".to_owned()),
                ("reason".to_owned(), "wrong password".to_owned()),
                ("scopes".to_owned(), "read, check".to_owned()),
                ("ttl".to_owned(), "–".to_owned()),
                ("until".to_owned(), "2026-12-02 00:41:07 UTC".to_owned()),
            ]
        );
        assert!(detail_lines("{}").is_empty());
        assert_eq!(
            detail_lines("not json"),
            vec![(String::new(), "not json".to_owned())]
        );
    }
}
