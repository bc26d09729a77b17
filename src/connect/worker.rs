//! The worker's own verdict: the answer of
//! `PUT /connector-plugins/{plugin}/config/validate` (Connect's
//! ConfigInfos, reference B2), read into per-property errors and shown
//! beside the rules' findings.

use super::finding::{Finding, Severity};
use super::secret::is_secret_key;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Why a validate answer could not be read. Neither variant quotes the
/// body: it echoes the config, and resolved secrets with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkerAnswerError {
    #[error("the worker's validate answer is not JSON (line {line}, column {column})")]
    NotJson { line: usize, column: usize },
    #[error(
        "the worker's validate answer is not a ConfigInfos object (line {line}, column {column})"
    )]
    Shape { line: usize, column: usize },
}

#[derive(Deserialize)]
struct RawInfos {
    name: String,
    error_count: u32,
    #[serde(default)]
    configs: Vec<RawConfig>,
}

#[derive(Deserialize)]
struct RawConfig {
    definition: RawDefinition,
    value: RawValue,
}

#[derive(Deserialize)]
struct RawDefinition {
    name: String,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    group: Option<String>,
}

/// `value.value` is deliberately not read: a STRING-typed key that got a
/// resolved secret comes back resolved (reference B2).
#[derive(Deserialize)]
struct RawValue {
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    recommended_values: Vec<String>,
    #[serde(default = "visible")]
    visible: bool,
}

fn visible() -> bool {
    true
}

/// One property as the worker sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkerField {
    pub name: String,
    /// Connect's ConfigDef type: STRING, INT, LONG, BOOLEAN, LIST, CLASS,
    /// PASSWORD…
    pub kind: String,
    /// True only when the key has no default, whatever the plugin means.
    pub required: bool,
    pub group: Option<String>,
    pub errors: Vec<String>,
    pub recommended_values: Vec<String>,
    pub visible: bool,
}

/// A validate answer, without the values it echoed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkerAnswer {
    /// The plugin class the worker validated against.
    pub class: String,
    /// As the worker counted (the sum of every field's errors).
    pub error_count: u32,
    pub fields: Vec<WorkerField>,
}

impl WorkerAnswer {
    /// Reads the body of a 200 answer. The HTTP status says nothing about
    /// validity (200 even when invalid); `error_count` does.
    pub fn parse(body: &str) -> Result<WorkerAnswer, WorkerAnswerError> {
        let value: serde_json::Value =
            serde_json::from_str(body).map_err(|e| WorkerAnswerError::NotJson {
                line: e.line(),
                column: e.column(),
            })?;
        let raw: RawInfos =
            serde_json::from_value(value).map_err(|e| WorkerAnswerError::Shape {
                line: e.line(),
                column: e.column(),
            })?;
        Ok(WorkerAnswer {
            class: raw.name,
            error_count: raw.error_count,
            fields: raw
                .configs
                .into_iter()
                .map(|c| WorkerField {
                    name: c.definition.name,
                    kind: c.definition.kind,
                    required: c.definition.required,
                    group: c.definition.group,
                    errors: c.value.errors,
                    recommended_values: c.value.recommended_values,
                    visible: c.value.visible,
                })
                .collect(),
        })
    }

    /// Keys the plugin types PASSWORD: secrets whatever their name (the
    /// input [`super::rules::Context::password_keys`] and masking take).
    pub fn password_keys(&self) -> BTreeSet<String> {
        self.fields
            .iter()
            .filter(|f| f.kind == "PASSWORD")
            .map(|f| f.name.clone())
            .collect()
    }

    /// Each property's errors.
    pub fn errors(&self) -> BTreeMap<&str, &[String]> {
        self.fields
            .iter()
            .filter(|f| !f.errors.is_empty())
            .map(|f| (f.name.as_str(), f.errors.as_slice()))
            .collect()
    }
}

/// One property with what the rules and the worker say about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Row {
    pub property: String,
    pub rules: Vec<Finding>,
    pub worker: Vec<String>,
}

/// Worker error texts about a secret can carry its value (ConfigException's
/// "Invalid value <v> for configuration <k>"): the value is cut out.
fn scrub(property: &str, message: &str, marked: &BTreeSet<String>) -> String {
    if !is_secret_key(property, marked) {
        return message.to_owned();
    }
    match (
        message.find("Invalid value "),
        message.find(" for configuration"),
    ) {
        (Some(start), Some(end)) if start < end => format!(
            "{}Invalid value (hidden){}",
            &message[..start],
            &message[end..]
        ),
        _ if message.contains("Invalid value") => "Invalid value (hidden)".to_owned(),
        _ => message.to_owned(),
    }
}

/// The rules' findings and the worker's errors per property, side by side,
/// properties with an error (from either) first, then by name. Properties
/// neither side remarks on are left out. `None` for the worker: it has not
/// answered (unreachable, or not asked yet).
pub fn side_by_side(findings: &[Finding], worker: Option<&WorkerAnswer>) -> Vec<Row> {
    let marked = worker.map(WorkerAnswer::password_keys).unwrap_or_default();
    let mut rows: BTreeMap<&str, Row> = BTreeMap::new();
    let row = |p: &str| Row {
        property: p.to_owned(),
        rules: Vec::new(),
        worker: Vec::new(),
    };
    for f in findings {
        rows.entry(&f.property)
            .or_insert_with(|| row(&f.property))
            .rules
            .push(f.clone());
    }
    if let Some(w) = worker {
        for (p, errors) in w.errors() {
            rows.entry(p)
                .or_insert_with(|| row(p))
                .worker
                .extend(errors.iter().map(|e| scrub(p, e, &marked)));
        }
    }
    let mut rows: Vec<Row> = rows.into_values().collect();
    rows.sort_by_key(|r| {
        let error = !r.worker.is_empty() || r.rules.iter().any(|f| f.severity == Severity::Error);
        !error
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::finding::Rule;

    /// The literal example of reference B2.
    const ANSWER: &str = r#"{"name":"io.confluent.connect.jdbc.JdbcSinkConnector","error_count":1,
 "groups":["Common","Transforms","Predicates","Error Handling","Connection","Writes","Data Mapping"],
 "configs":[
  {"definition":{"name":"topics","type":"LIST","required":false,"default_value":"","importance":"HIGH","documentation":"List of topics to consume, separated by commas","group":"Common","width":"LONG","display_name":"Topics","dependents":[],"order":4},
   "value":{"name":"topics","value":"","recommended_values":[],"errors":["Must configure one of topics or topics.regex"],"visible":true}},
  {"definition":{"name":"connection.password","type":"PASSWORD","required":false,"default_value":null,"importance":"HIGH","documentation":"JDBC connection password.","group":"Connection","width":"MEDIUM","display_name":"JDBC Password","dependents":[],"order":3},
   "value":{"name":"connection.password","value":"[hidden]","recommended_values":[],"errors":[],"visible":true}}]}"#;

    #[test]
    fn the_reference_answer_is_read_into_errors_and_password_keys() {
        let a = WorkerAnswer::parse(ANSWER).expect("reads");
        assert_eq!(a.class, "io.confluent.connect.jdbc.JdbcSinkConnector");
        assert_eq!(a.error_count, 1);
        assert_eq!(a.fields.len(), 2);
        assert_eq!(
            a.errors().get("topics").map(|e| e.to_vec()),
            Some(vec![
                "Must configure one of topics or topics.regex".to_owned()
            ])
        );
        assert_eq!(
            a.password_keys(),
            BTreeSet::from(["connection.password".to_owned()])
        );
        assert_eq!(a.fields[1].group.as_deref(), Some("Connection"));
    }

    #[test]
    fn echoed_values_are_not_kept() {
        let body = ANSWER.replace("[hidden]", "resolved-secret");
        let a = WorkerAnswer::parse(&body).expect("reads");
        assert!(
            !serde_json::to_string(&a)
                .expect("json")
                .contains("resolved-secret")
        );
    }

    #[test]
    fn bad_answers_are_typed_errors_that_quote_nothing() {
        assert!(matches!(
            WorkerAnswer::parse("<html>502</html>"),
            Err(WorkerAnswerError::NotJson { .. })
        ));
        let e =
            WorkerAnswer::parse(r#"{"error_code":500,"message":"secret-ish"}"#).expect_err("shape");
        assert!(matches!(e, WorkerAnswerError::Shape { .. }));
        assert!(!e.to_string().contains("secret-ish"));
        assert!(WorkerAnswer::parse(r#"{"name":"x","error_count":"1","configs":[]}"#).is_err());
    }

    #[test]
    fn rules_and_worker_are_merged_per_property_errors_first() {
        let a = WorkerAnswer::parse(ANSWER).expect("reads");
        let findings = vec![
            Finding::info(Rule::HeartbeatOff, "a.first", "i".into()),
            Finding::error(Rule::NoTopics, "topics", "Must configure…".into()),
        ];
        let rows = side_by_side(&findings, Some(&a));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].property, "topics");
        assert_eq!(rows[0].rules.len(), 1);
        assert_eq!(rows[0].worker.len(), 1);
        assert_eq!(rows[1].property, "a.first");
        assert!(rows[1].worker.is_empty());
        assert_eq!(side_by_side(&findings, None).len(), 2);
    }

    #[test]
    fn worker_errors_about_secrets_lose_their_values() {
        let body = ANSWER.replace(
            r#""value":"[hidden]","recommended_values":[],"errors":[]"#,
            r#""value":"[hidden]","recommended_values":[],"errors":["Invalid value hunter2 for configuration connection.password: bad"]"#,
        );
        let a = WorkerAnswer::parse(&body).expect("reads");
        let rows = side_by_side(&[], Some(&a));
        let pw = rows
            .iter()
            .find(|r| r.property == "connection.password")
            .expect("row");
        assert_eq!(
            pw.worker,
            ["Invalid value (hidden) for configuration connection.password: bad"]
        );
    }
}
