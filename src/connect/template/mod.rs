//! Drafting from templates: a plugin's form ([`template`]), the complete
//! config from filled-in values ([`Template::draft`]) and back
//! ([`Template::import`], for "change this connector").
//!
//! Every field is one property, named by its key. Values come as JSON (a
//! REST body) or as strings (an HTML form); an absent value takes the
//! field's default, an empty string leaves the property out. Importing
//! writes empty strings for the properties a config lacks, so a re-draft of
//! an imported connector changes nothing the author did not change.

mod catalog;

pub use catalog::{REGISTRY_CONVERTERS, S3_STORAGE, TIME_PARTITIONERS, template};

use super::config::{CLASS, Config, NAME, ParseError};
use super::plugin::Plugin;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

pub(crate) use catalog::{AVRO, SNOWFLAKE_AVRO, SNOWFLAKE_AVRO_NO_REGISTRY, SNOWFLAKE_JSON};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    Text,
    /// A whole number (Connect's INT and LONG).
    Number,
    /// `true` or `false`.
    Bool,
    /// One of `choices`.
    Choice,
}

impl FieldType {
    fn describe(self) -> &'static str {
        match self {
            FieldType::Text => "text",
            FieldType::Number => "a whole number",
            FieldType::Bool => "true or false",
            FieldType::Choice => "one of the choices",
        }
    }
}

/// One question of a form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Field {
    /// The property it sets.
    pub key: &'static str,
    pub label: &'static str,
    #[serde(rename = "type")]
    pub kind: FieldType,
    /// For choices: the allowed values, the recommended one first.
    pub choices: &'static [&'static str],
    /// `false` when other values are legitimate too (a custom converter or
    /// partitioner class): the form offers the choices, the rules accept
    /// any value.
    pub strict: bool,
    /// What an absent value becomes. May name other fields' values as
    /// `{key}`, and `{name_ident}` is the connector name made a PostgreSQL
    /// identifier (lower case, `[a-z0-9_]`); a default whose fields are
    /// empty is left out.
    pub default: Option<&'static str>,
    pub required: bool,
    /// Shown as a password input; an inline value is flagged.
    pub secret: bool,
    pub help: &'static str,
}

impl Field {
    fn new(key: &'static str, label: &'static str, kind: FieldType, help: &'static str) -> Field {
        Field {
            key,
            label,
            kind,
            choices: &[],
            strict: true,
            default: None,
            required: false,
            secret: false,
            help,
        }
    }

    pub(crate) fn text(key: &'static str, label: &'static str, help: &'static str) -> Field {
        Field::new(key, label, FieldType::Text, help)
    }

    pub(crate) fn number(key: &'static str, label: &'static str, help: &'static str) -> Field {
        Field::new(key, label, FieldType::Number, help)
    }

    pub(crate) fn bool(key: &'static str, label: &'static str, help: &'static str) -> Field {
        Field::new(key, label, FieldType::Bool, help)
    }

    pub(crate) fn choice(
        key: &'static str,
        label: &'static str,
        choices: &'static [&'static str],
        help: &'static str,
    ) -> Field {
        Field {
            choices,
            ..Field::new(key, label, FieldType::Choice, help)
        }
    }

    pub(crate) fn required(mut self) -> Field {
        self.required = true;
        self
    }

    pub(crate) fn default(mut self, value: &'static str) -> Field {
        self.default = Some(value);
        self
    }

    pub(crate) fn secret(mut self) -> Field {
        self.secret = true;
        self
    }

    pub(crate) fn open(mut self) -> Field {
        self.strict = false;
        self
    }

    /// A default that names other fields' values (`{name_ident}`), which
    /// a form can only show as a placeholder; `${topic}` is a value.
    pub fn derived_default(&self) -> Option<&'static str> {
        self.default
            .filter(|d| d.contains('{') && !d.starts_with("${"))
    }

    /// Whether `value` (a string as a config holds it) is of this field's
    /// type. Connect trims numbers and booleans and reads booleans in any case.
    pub fn accepts(&self, value: &str) -> bool {
        let v = value.trim();
        match self.kind {
            FieldType::Text => true,
            FieldType::Number => v.parse::<i64>().is_ok(),
            FieldType::Bool => v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false"),
            FieldType::Choice => !self.strict || self.choices.contains(&v),
        }
    }
}

/// A plugin's form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Template {
    pub plugin: Plugin,
    pub class: &'static str,
    pub label: &'static str,
    pub fields: Vec<Field>,
    /// Properties every draft gets that the form does not ask about.
    pub fixed: Vec<(&'static str, &'static str)>,
}

/// Why filled-in values do not make a config. Messages name fields, never
/// values (a value may be a password).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DraftError {
    #[error("{field}: the {plugin} form has no such field")]
    UnknownField { field: String, plugin: &'static str },
    #[error("{field} must be {}", expected.describe())]
    WrongType { field: String, expected: FieldType },
    #[error("{field} must be one of {}", allowed.join(", "))]
    NotAChoice {
        field: String,
        allowed: Vec<&'static str>,
    },
    #[error("{field} is required")]
    Missing { field: String },
}

/// Every reason at once, so a form can mark all its fields in one answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct DraftErrors(pub Vec<DraftError>);

/// A config turned back into a form: the values of its fields (an empty
/// string where the config lacks the property) and every other property,
/// kept as is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Imported {
    pub plugin: Plugin,
    pub values: BTreeMap<String, Value>,
    pub extra: Config,
}

/// `{name_ident}`: a replication slot or publication name from the
/// connector name (PostgreSQL's `[a-z0-9_]{1,63}`).
pub(crate) fn ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.truncate(50);
    s
}

/// Expands `{key}` placeholders from `given`; `None` when one names an
/// empty or absent value.
fn expand(default: &str, given: &BTreeMap<&str, String>) -> Option<String> {
    let mut out = String::new();
    let mut rest = default;
    while let Some(start) = rest.find('{') {
        // `${topic}` is the JDBC sinks' own placeholder, written as is.
        if rest[..start].ends_with('$') {
            let end = rest[start..]
                .find('}')
                .map_or(rest.len(), |e| start + e + 1);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        out.push_str(&rest[..start]);
        let end = start + rest[start..].find('}')?;
        let key = &rest[start + 1..end];
        let value = if key == "name_ident" {
            given.get(NAME).map(|n| ident(n))
        } else {
            given.get(key).cloned()
        }
        .filter(|v| !v.is_empty())?;
        out.push_str(&value);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

impl Template {
    fn new(plugin: Plugin, fields: Vec<Field>, fixed: &[(&'static str, &'static str)]) -> Template {
        Template {
            plugin,
            class: plugin.class(),
            label: plugin.label(),
            fields,
            fixed: fixed.to_vec(),
        }
    }

    pub fn field(&self, key: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.key == key)
    }

    /// One value as the config string it becomes.
    fn read(&self, field: &Field, value: &Value) -> Result<String, DraftError> {
        let wrong = || DraftError::WrongType {
            field: field.key.to_owned(),
            expected: field.kind,
        };
        let s = match (field.kind, value) {
            (_, Value::String(s)) => s.clone(),
            (FieldType::Number, Value::Number(n)) if n.is_i64() => n.to_string(),
            (FieldType::Bool, Value::Bool(b)) => b.to_string(),
            _ => return Err(wrong()),
        };
        if s.is_empty() {
            return Ok(s);
        }
        // An HTML checkbox sends "on" when ticked.
        if field.kind == FieldType::Bool && s == "on" {
            return Ok("true".to_owned());
        }
        if field.accepts(&s) {
            Ok(s)
        } else if field.kind == FieldType::Choice {
            Err(DraftError::NotAChoice {
                field: field.key.to_owned(),
                allowed: field.choices.to_vec(),
            })
        } else {
            Err(wrong())
        }
    }

    /// The complete config from filled-in values: the fixed properties,
    /// `extra` (properties the form does not ask about, e.g. from an
    /// import), then each field's value or default. Every problem is
    /// reported at once.
    pub fn draft(
        &self,
        values: &BTreeMap<String, Value>,
        extra: &Config,
    ) -> Result<Config, DraftErrors> {
        let mut errors = Vec::new();
        for key in values.keys() {
            if self.field(key).is_none() {
                errors.push(DraftError::UnknownField {
                    field: key.clone(),
                    plugin: self.label,
                });
            }
        }
        // First what was given or defaults without placeholders, then the
        // defaults that name those.
        let mut given: BTreeMap<&str, String> = BTreeMap::new();
        let mut derived = Vec::new();
        for field in &self.fields {
            match values.get(field.key) {
                Some(v) => match self.read(field, v) {
                    Ok(s) => {
                        given.insert(field.key, s);
                    }
                    Err(e) => errors.push(e),
                },
                None => match field.default {
                    Some(_) if field.derived_default().is_some() => derived.push(field),
                    Some(d) => {
                        given.insert(field.key, d.to_owned());
                    }
                    None => {}
                },
            }
        }
        let expanded: Vec<(&str, String)> = derived
            .iter()
            .filter_map(|f| Some((f.key, expand(f.default?, &given)?)))
            .collect();
        given.extend(expanded);
        for field in self.fields.iter().filter(|f| f.required) {
            if given.get(field.key).is_none_or(|v| v.trim().is_empty()) {
                errors.push(DraftError::Missing {
                    field: field.key.to_owned(),
                });
            }
        }
        if !errors.is_empty() {
            return Err(DraftErrors(errors));
        }
        let mut config = Config::new();
        config.set(CLASS, self.class);
        for (k, v) in &self.fixed {
            config.set(*k, *v);
        }
        for (k, v) in extra.iter() {
            if self.field(k).is_none() {
                config.set(k, v);
            }
        }
        for (k, v) in given {
            if !v.is_empty() {
                config.set(k, v);
            }
        }
        Ok(config)
    }

    /// [`Template::draft`] from an HTML form, which sends every input: an
    /// empty value whose field's default names other fields (a slot from
    /// the connector name, a dead letter topic) takes that default, as an
    /// absent value does; the form shows such defaults as placeholders.
    pub fn draft_form(
        &self,
        values: &BTreeMap<String, String>,
        extra: &Config,
    ) -> Result<Config, DraftErrors> {
        let values = values
            .iter()
            .filter(|(k, v)| {
                !(v.is_empty() && self.field(k).is_some_and(|f| f.derived_default().is_some()))
            })
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        self.draft(&values, extra)
    }

    /// An existing config as this form's values (typed where the value
    /// reads as its field's type) and the properties the form does not ask
    /// about. `connector.class` and fixed properties at the template's
    /// value are left out, since the draft writes them again; another class
    /// of the same plugin (Tabular's Iceberg sink) is kept.
    pub fn import(&self, config: &Config) -> Imported {
        let mut values = BTreeMap::new();
        for field in &self.fields {
            let value = match (field.kind, config.get(field.key)) {
                (_, None) => Value::String(String::new()),
                (FieldType::Number, Some(s)) => match s.parse::<i64>() {
                    Ok(n) if n.to_string() == s => Value::from(n),
                    _ => Value::String(s.to_owned()),
                },
                (FieldType::Bool, Some("true")) => Value::Bool(true),
                (FieldType::Bool, Some("false")) => Value::Bool(false),
                (_, Some(s)) => Value::String(s.to_owned()),
            };
            values.insert(field.key.to_owned(), value);
        }
        let extra = config
            .iter()
            .filter(|(k, v)| {
                (*k != CLASS || *v != self.class)
                    && self.field(k).is_none()
                    && !self.fixed.iter().any(|(fk, fv)| fk == k && fv == v)
            })
            .collect();
        Imported {
            plugin: self.plugin,
            values,
            extra,
        }
    }
}

/// Imports a config of any covered plugin ("change this connector").
pub fn import(config: &Config) -> Result<Imported, ParseError> {
    Ok(template(config.plugin()?).import(config))
}

#[cfg(test)]
mod tests;
