//! A connector config: a JSON object whose values are all strings
//! (Connect's own rule: the REST API takes `Map<String, String>`), read
//! from pasted text, either flat as `PUT /connectors/{n}/config` and
//! validate take it or wrapped as `{"name", "config"}` as `POST /connectors`
//! takes it.

use super::plugin::Plugin;
use crate::platform::limit::{TooLarge, cap};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Property keys every connector has.
pub const CLASS: &str = "connector.class";
pub const NAME: &str = "name";
pub const TASKS_MAX: &str = "tasks.max";

/// The most one value may hold. Connect keeps a connector's whole config as
/// one record of its config topic (about 1 MiB at most by default), and no
/// real property comes near this; a value this size is a mistake or an
/// attempt to fill the console's storage and the worker's topic.
pub const MAX_VALUE_BYTES: u64 = 100 * 1024;
/// The most a whole config (keys and values) may hold: the config topic's
/// record.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Why a pasted config was refused. The messages name keys, never values:
/// a value may be a password.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// serde_json's own message can quote the input, so only the position
    /// is kept.
    #[error("the config is not JSON (syntax error at line {line}, column {column})")]
    NotJson { line: usize, column: usize },
    #[error("the config must be a JSON object of properties, not {found}")]
    NotAnObject { found: &'static str },
    #[error("\"config\" must be a JSON object of properties, not {found}")]
    WrappedNotAnObject { found: &'static str },
    #[error(
        "the value of \"{key}\" is {found}; Connect takes only strings (write it in quotes, e.g. \"1\" or \"true\")"
    )]
    NotAString { key: String, found: &'static str },
    #[error("\"name\" is \"{outer}\" outside \"config\" but \"{inner}\" inside it")]
    NameMismatch { outer: String, inner: String },
    #[error("\"name\" outside \"config\" must be a string, not {found}")]
    NameNotAString { found: &'static str },
    #[error("the config has no \"connector.class\"")]
    MissingClass,
    #[error(
        "connector.class \"{class}\" is not a plugin Streamkeeper drafts (Debezium PostgreSQL or MySQL, Confluent or Debezium JDBC sink, S3, Snowflake, BigQuery, Iceberg, Elasticsearch)"
    )]
    UnknownPlugin { class: String },
}

/// A connector's properties, sorted by key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct Config(BTreeMap<String, String>);

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Config {
    pub fn new() -> Config {
        Config::default()
    }

    /// Reads pasted text: a flat object of properties, or
    /// `{"name": …, "config": {…}}` (then `name` is copied into the
    /// properties, as Connect does, and must agree with one already there).
    pub fn from_json(text: &str) -> Result<Config, ParseError> {
        let value: Value = serde_json::from_str(text).map_err(|e| ParseError::NotJson {
            line: e.line(),
            column: e.column(),
        })?;
        Config::from_value(&value)
    }

    /// [`Config::from_json`] for an already parsed JSON value.
    pub fn from_value(value: &Value) -> Result<Config, ParseError> {
        let Value::Object(object) = value else {
            return Err(ParseError::NotAnObject { found: kind(value) });
        };
        // The POST /connectors shape: only these three keys, and "config"
        // an object. A flat config never has a "config" key of its own.
        let wrapped = object.contains_key("config")
            && object
                .keys()
                .all(|k| matches!(k.as_str(), "name" | "config" | "initial_state"));
        if !wrapped {
            return Config::from_object(object);
        }
        let inner = match object.get("config") {
            Some(Value::Object(inner)) => inner,
            Some(other) => return Err(ParseError::WrappedNotAnObject { found: kind(other) }),
            None => return Err(ParseError::WrappedNotAnObject { found: "null" }),
        };
        let mut config = Config::from_object(inner)?;
        match object.get(NAME) {
            None => {}
            Some(Value::String(outer)) => match config.get(NAME) {
                Some(inner) if inner != outer => {
                    return Err(ParseError::NameMismatch {
                        outer: outer.clone(),
                        inner: inner.to_owned(),
                    });
                }
                _ => config.set(NAME, outer),
            },
            Some(other) => return Err(ParseError::NameNotAString { found: kind(other) }),
        }
        Ok(config)
    }

    fn from_object(object: &serde_json::Map<String, Value>) -> Result<Config, ParseError> {
        let mut map = BTreeMap::new();
        for (key, value) in object {
            let Value::String(s) = value else {
                return Err(ParseError::NotAString {
                    key: key.clone(),
                    found: kind(value),
                });
            };
            map.insert(key.clone(), s.clone());
        }
        Ok(Config(map))
    }

    /// The plugin named by `connector.class`.
    pub fn plugin(&self) -> Result<Plugin, ParseError> {
        let class = self.value(CLASS).ok_or(ParseError::MissingClass)?;
        Plugin::from_class(class).ok_or_else(|| ParseError::UnknownPlugin {
            class: class.to_owned(),
        })
    }

    /// The value as written.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// The value trimmed, `None` when absent or blank: Connect treats an
    /// empty string as unset for most keys (e.g. `topics=""`).
    pub fn value(&self, key: &str) -> Option<&str> {
        self.get(key).map(str::trim).filter(|v| !v.is_empty())
    }

    /// Whether a boolean property is `true` (Connect parses booleans
    /// case-insensitively after trimming).
    pub fn is_true(&self, key: &str) -> bool {
        self.value(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// A comma-separated list property (Connect's LIST type), entries
    /// trimmed, blanks dropped.
    pub fn list(&self, key: &str) -> Vec<&str> {
        self.get(key)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn name(&self) -> Option<&str> {
        self.value(NAME)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.0.insert(key.into(), value.into());
    }

    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.0.remove(key)
    }

    /// Properties in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Refuses a value over [`MAX_VALUE_BYTES`] (naming its key, never its
    /// value) or a config over [`MAX_CONFIG_BYTES`]: checked before any rule
    /// reads the config or the worker is asked.
    pub fn within_limits(&self) -> Result<(), TooLarge> {
        let mut total: u64 = 0;
        for (key, value) in &self.0 {
            let bytes = u64::try_from(value.len()).unwrap_or(u64::MAX);
            cap(format!("the value of \"{key}\""), bytes, MAX_VALUE_BYTES)?;
            total = total
                .saturating_add(bytes)
                .saturating_add(u64::try_from(key.len()).unwrap_or(u64::MAX));
        }
        cap("the config", total, MAX_CONFIG_BYTES)
    }

    /// The config as the JSON object Connect takes.
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Config {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Config {
        Config(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

/// Reads pasted text as a config of a plugin Streamkeeper covers: the
/// shape errors of [`Config::from_json`], then a missing or unknown
/// `connector.class`.
pub fn parse_draft(text: &str) -> Result<(Config, Plugin), ParseError> {
    let config = Config::from_json(text)?;
    let plugin = config.plugin()?;
    Ok((config, plugin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_or_a_config_over_its_limit_is_refused_by_key() {
        let limit = usize::try_from(MAX_VALUE_BYTES).expect("fits");
        let at = Config::from_iter([("transforms.x.regex", "a".repeat(limit))]);
        assert_eq!(at.within_limits(), Ok(()));
        let over = Config::from_iter([("transforms.x.regex", "a".repeat(1024 * 1024))]);
        let e = over.within_limits().expect_err("a 1 MiB value");
        assert_eq!(e.limit, MAX_VALUE_BYTES);
        assert!(e.to_string().contains("\"transforms.x.regex\""), "{e}");
        assert!(e.to_string().contains("100 KiB"), "{e}");
        // Eleven values under the value limit, over the config's together.
        let many: Config = (0..11)
            .map(|i| (format!("k{i}"), "a".repeat(limit)))
            .collect();
        let e = many.within_limits().expect_err("over 1 MiB");
        assert_eq!((e.what.as_str(), e.limit), ("the config", MAX_CONFIG_BYTES));
    }

    const PG: &str = "io.debezium.connector.postgresql.PostgresConnector";

    #[test]
    fn a_flat_config_is_read_as_written() {
        let (c, p) = parse_draft(&format!(
            r#"{{"connector.class":"{PG}","name":"pg","tasks.max":"1","topics":" a, b ,,"}}"#
        ))
        .expect("valid");
        assert_eq!(p, Plugin::DebeziumPostgres);
        assert_eq!(c.name(), Some("pg"));
        assert_eq!(c.list("topics"), ["a", "b"]);
        assert_eq!(c.len(), 4);
    }

    #[test]
    fn the_post_shape_is_unwrapped_and_its_name_copied_in() {
        let c = Config::from_json(&format!(
            r#"{{"name":"pg","config":{{"connector.class":"{PG}"}},"initial_state":"PAUSED"}}"#
        ))
        .expect("valid");
        assert_eq!(c.name(), Some("pg"));
        assert_eq!(c.get("initial_state"), None);
        let err = Config::from_json(r#"{"name":"a","config":{"name":"b"}}"#);
        assert_eq!(
            err,
            Err(ParseError::NameMismatch {
                outer: "a".into(),
                inner: "b".into()
            })
        );
        assert_eq!(
            Config::from_json(r#"{"name":"a","config":"x"}"#),
            Err(ParseError::WrappedNotAnObject { found: "a string" })
        );
        assert_eq!(
            Config::from_json(r#"{"name":1,"config":{}}"#),
            Err(ParseError::NameNotAString { found: "a number" })
        );
    }

    #[test]
    fn a_property_called_config_beside_others_is_a_flat_config() {
        let c = Config::from_json(r#"{"config":"x","topics":"a"}"#).expect("flat");
        assert_eq!(c.get("config"), Some("x"));
    }

    #[test]
    fn shape_errors_say_what_and_which_key() {
        assert_eq!(
            Config::from_json("[1]"),
            Err(ParseError::NotAnObject { found: "an array" })
        );
        let e = Config::from_json(r#"{"tasks.max":1}"#).expect_err("number");
        assert_eq!(
            e,
            ParseError::NotAString {
                key: "tasks.max".into(),
                found: "a number"
            }
        );
        assert!(e.to_string().contains("\"tasks.max\""));
        assert!(matches!(
            Config::from_json("{\"a\":"),
            Err(ParseError::NotJson { line: 1, .. })
        ));
    }

    #[test]
    fn a_syntax_error_never_quotes_the_input() {
        let e = Config::from_json(r#"{"database.password":"hunter2" "x"}"#).expect_err("bad");
        assert!(!e.to_string().contains("hunter2"));
    }

    #[test]
    fn the_class_must_be_there_and_known() {
        assert_eq!(parse_draft("{}"), Err(ParseError::MissingClass));
        assert_eq!(
            parse_draft(r#"{"connector.class":"  "}"#),
            Err(ParseError::MissingClass)
        );
        assert_eq!(
            parse_draft(r#"{"connector.class":"com.example.X"}"#),
            Err(ParseError::UnknownPlugin {
                class: "com.example.X".into()
            })
        );
    }

    #[test]
    fn booleans_and_blanks_read_as_connect_reads_them() {
        let c: Config = [("a", " TRUE "), ("b", "yes"), ("c", "  ")]
            .into_iter()
            .collect();
        assert!(c.is_true("a"));
        assert!(!c.is_true("b"));
        assert_eq!(c.value("c"), None);
        assert!(c.contains("c"));
        assert_eq!(c.to_json()["a"], " TRUE ");
    }
}
