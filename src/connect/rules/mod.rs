//! The checks a draft goes through before it can be proposed: required
//! properties and allowed values from the plugin's template, then the
//! traps the references list (§5, B1), each with a one-click fix where a
//! change to the config alone fixes it.
//!
//! [`validate`] is pure: what it knows of the Connect and Kafka clusters
//! comes in a [`Context`] the server fills.

mod common;
mod sink;
mod source;
mod stores;

use super::config::{CLASS, Config, NAME, TASKS_MAX};
use super::finding::{Finding, Fix, Rule};
use super::plugin::{Direction, Plugin};
use super::template::{Field, FieldType, Template, template};
use std::collections::{BTreeMap, BTreeSet};

/// What the server knows around a draft.
#[derive(Clone, Debug, Default)]
pub struct Context<'a> {
    /// The configs of the connectors on the same Connect cluster (secrets
    /// may be masked). One with the draft's name is the connector the draft
    /// changes; the others are checked for shared slots, ids and topics.
    pub connectors: &'a [Config],
    /// The Kafka cluster's topics and their partition counts; `None` when
    /// they could not be read, and then no topic rule runs (an unknown
    /// cluster is not a cluster without topics).
    pub topics: Option<&'a BTreeMap<String, u32>>,
    /// The Schema Registry URL configured for the Kafka cluster: the fix
    /// for converters without one.
    pub registry_url: Option<&'a str>,
    /// The Kafka cluster's bootstrap servers: the fix for a missing
    /// Debezium schema history bootstrap.
    pub bootstrap_servers: Option<&'a str>,
    /// How many brokers the Kafka cluster has: a dead letter topic cannot
    /// have a larger replication factor.
    pub brokers: Option<u32>,
    /// Keys the plugin's validate answer types PASSWORD
    /// ([`super::worker::WorkerAnswer::password_keys`]).
    pub password_keys: BTreeSet<String>,
    /// The file the inline-secret fix points `${file:…}` references at;
    /// by default `/etc/kafka-connect/secrets/<connector>.properties`.
    pub secrets_file: Option<&'a str>,
}

/// What every rule gets: the draft, its plugin and template, the context,
/// and the other connectors (the draft's own running config excluded).
struct Draft<'a> {
    config: &'a Config,
    plugin: Plugin,
    template: Template,
    ctx: &'a Context<'a>,
    name: &'a str,
}

impl<'a> Draft<'a> {
    fn get(&self, key: &str) -> Option<&'a str> {
        self.config.value(key)
    }

    /// The value, or what Connect uses when it is absent.
    fn effective(&self, key: &str, default: &'a str) -> &'a str {
        self.get(key).unwrap_or(default)
    }

    /// Other connectors of the cluster.
    fn others(&self) -> impl Iterator<Item = &'a Config> + '_ {
        self.ctx
            .connectors
            .iter()
            .filter(move |c| c.name() != Some(self.name))
    }

    /// Other connectors of one plugin.
    fn others_of(&self, plugin: Plugin) -> impl Iterator<Item = &'a Config> + '_ {
        self.others()
            .filter(move |c| c.plugin().ok() == Some(plugin))
    }

    /// The running config this draft changes, if it exists.
    fn running(&self) -> Option<&'a Config> {
        self.ctx
            .connectors
            .iter()
            .find(|c| c.name() == Some(self.name))
    }

    fn tasks(&self) -> Option<i64> {
        self.get(TASKS_MAX).and_then(|v| v.parse().ok())
    }

    /// `{name_ident}` of the template defaults.
    fn ident(&self) -> String {
        super::template::ident(self.name)
    }
}

/// Checks a config. Findings come in a stable order: by severity, then
/// property, then rule. A config whose `connector.class` is missing or not
/// covered gets a single error finding (the parse errors say more).
pub fn validate(config: &Config, ctx: &Context) -> Vec<Finding> {
    let plugin = match config.plugin() {
        Ok(p) => p,
        Err(e) => return vec![Finding::error(Rule::Required, CLASS, e.to_string())],
    };
    let draft = Draft {
        config,
        plugin,
        template: template(plugin),
        ctx,
        name: config.name().unwrap_or(""),
    };
    let mut out = Vec::new();
    fields(&draft, &mut out);
    common::check(&draft, &mut out);
    match plugin.direction() {
        Direction::Source => source::check(&draft, &mut out),
        Direction::Sink => sink::check(&draft, &mut out),
    }
    stores::check(&draft, &mut out);
    out.sort_by(|a, b| (a.severity, &a.property, a.rule).cmp(&(b.severity, &b.property, b.rule)));
    out
}

/// A value that fixes a missing or malformed field: its default (with
/// `{…}` filled from the draft) or one the context knows.
fn field_fix(d: &Draft, field: &Field) -> Option<String> {
    match field.key {
        "schema.history.internal.kafka.bootstrap.servers" => {
            d.ctx.bootstrap_servers.map(str::to_owned)
        }
        "database.server.id" => Some(source::unused_server_id(d).to_string()),
        "value.converter.schema.registry.url" | "key.converter.schema.registry.url" => {
            d.ctx.registry_url.map(str::to_owned)
        }
        _ => {
            let default = field.default?;
            let mut out = default.to_owned();
            if default.contains("{name_ident}") {
                out = out.replace("{name_ident}", &d.ident());
            }
            for (k, v) in d.config.iter() {
                let placeholder = format!("{{{k}}}");
                if out.contains(&placeholder) {
                    out = out.replace(&placeholder, v);
                }
            }
            // A default naming a value the draft lacks has no fix yet.
            let unresolved = out.replace("${topic}", "");
            (!unresolved.contains('{') && !out.is_empty()).then_some(out)
        }
    }
}

/// Required fields present, and each field's value of its type and, for
/// strict choices, one of them.
fn fields(d: &Draft, out: &mut Vec<Finding>) {
    if d.get(NAME).is_none() {
        out.push(Finding::error(
            Rule::Required,
            NAME,
            "Every connector needs a name.".into(),
        ));
    }
    for field in &d.template.fields {
        let value = d.get(field.key);
        match value {
            None if field.required && field.key != NAME => {
                out.push(
                    Finding::error(
                        Rule::Required,
                        field.key,
                        format!("{} ({}) is required.", field.key, field.label),
                    )
                    .with(field_fix(d, field).map(|v| Fix::set(field.key, v))),
                );
            }
            Some(v) if !field.accepts(v) && !source::is_removed_snapshot_mode(d, field.key, v) => {
                let (rule, sentence) = match field.kind {
                    FieldType::Number => (
                        Rule::NotANumber,
                        format!("{} must be a whole number.", field.key),
                    ),
                    FieldType::Bool => (
                        Rule::NotABoolean,
                        format!("{} must be true or false.", field.key),
                    ),
                    FieldType::Choice | FieldType::Text => (
                        Rule::AllowedValue,
                        format!(
                            "{} is \"{v}\", which is not one of {}.",
                            field.key,
                            field.choices.join(", ")
                        ),
                    ),
                };
                out.push(
                    Finding::error(rule, field.key, sentence)
                        .with(field_fix(d, field).map(|v| Fix::set(field.key, v))),
                );
            }
            _ => {}
        }
    }
    for (key, value) in &d.template.fixed {
        if d.get(key).is_none() {
            out.push(
                Finding::error(Rule::Required, key, format!("{key} is required."))
                    .with_fix(Fix::set(key, *value)),
            );
        }
    }
    if d.tasks().is_some_and(|t| t < 1) {
        out.push(
            Finding::error(
                Rule::AllowedValue,
                TASKS_MAX,
                "tasks.max must be at least 1.".into(),
            )
            .with_fix(Fix::set(TASKS_MAX, "1")),
        );
    }
}

/// A topic regex as Connect applies it: `Pattern.matches`, the whole name.
/// `None` when it is not a regex the Rust engine reads (look-around and
/// back-references), and then the rules that need it stay silent rather
/// than guess.
fn whole(pattern: &str, case_insensitive: bool) -> Option<regex::Regex> {
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .case_insensitive(case_insensitive)
        .build()
        .ok()
}

/// A name for a new property value that no other connector uses:
/// `base`, then `base_2`, `base_3`…
fn unused(base: &str, sep: char, taken: &BTreeSet<&str>) -> String {
    if !taken.contains(base) {
        return base.to_owned();
    }
    (2..)
        .map(|i| format!("{base}{sep}{i}"))
        .find(|c| !taken.contains(c.as_str()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
