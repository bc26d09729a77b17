//! Rules for every connector: secrets, client overrides, converters,
//! transforms, error tolerance.

use super::Draft;
use crate::connect::finding::{Finding, Fix, Rule};
use crate::connect::plugin::Direction;
use crate::connect::secret::{is_inline_secret, is_mask};
use crate::connect::template::REGISTRY_CONVERTERS;

pub(super) fn check(d: &Draft, out: &mut Vec<Finding>) {
    secrets(d, out);
    overrides(d, out);
    converters(d, out);
    transforms(d, out);
    tolerance(d, out);
}

/// The reference the inline-secret fix writes: the key in a per-connector
/// properties file on the workers (Connect's FileConfigProvider).
fn reference(d: &Draft, key: &str) -> String {
    let file = match d.ctx.secrets_file {
        Some(f) => f.to_owned(),
        None => format!("/etc/kafka-connect/secrets/{}.properties", d.ident()),
    };
    format!("${{file:{file}:{key}}}")
}

/// Inline secrets cannot be kept: storage and diffs hold only masks, so
/// what was approved could not be applied. A mask written back would
/// overwrite the real secret with asterisks (akhq#291, kafbat#1887).
fn secrets(d: &Draft, out: &mut Vec<Finding>) {
    for (key, value) in d.config.iter() {
        if !is_inline_secret(key, value, &d.ctx.password_keys) {
            continue;
        }
        let finding = if is_mask(value) {
            Finding::error(
                Rule::MaskedValue,
                key,
                format!(
                    "{key} holds a mask, not the secret: applying it would overwrite the real value. Write a ${{…}} reference."
                ),
            )
        } else {
            Finding::error(
                Rule::InlineSecret,
                key,
                format!(
                    "{key} is a secret written inline; Streamkeeper stores only masks, so write a config-provider reference such as ${{file:…:{key}}} and put the value in the workers' secrets file."
                ),
            )
        };
        out.push(finding.with_fix(Fix::set(key, reference(d, key))));
    }
}

/// Per-connector client overrides of credentials or of the cluster bypass
/// the workers' identity, and need the workers'
/// `connector.client.config.override.policy` to allow them.
fn overrides(d: &Draft, out: &mut Vec<Finding>) {
    for (key, _) in d.config.iter() {
        let Some(setting) = [
            "producer.override.",
            "consumer.override.",
            "admin.override.",
        ]
        .iter()
        .find_map(|p| key.strip_prefix(p)) else {
            continue;
        };
        let sensitive = setting.starts_with("sasl.")
            || setting.starts_with("ssl.")
            || setting == "security.protocol"
            || setting == "bootstrap.servers";
        if sensitive {
            out.push(
                Finding::warning(
                    Rule::ClientOverride,
                    key,
                    format!(
                        "{key} overrides the workers' own Kafka client ({setting}): the connector would connect with other credentials or to another cluster, and only if the workers' override policy allows it."
                    ),
                )
                .with_fix(Fix::remove(key)),
            );
        }
    }
}

/// Avro, Protobuf and JSON Schema converters fail every record without a
/// registry URL of their own (converter settings are not inherited).
fn converters(d: &Draft, out: &mut Vec<Finding>) {
    for prefix in ["key.converter", "value.converter"] {
        let Some(class) = d.get(prefix) else { continue };
        if !REGISTRY_CONVERTERS.contains(&class) {
            continue;
        }
        let url_key = format!("{prefix}.schema.registry.url");
        if d.get(&url_key).is_some() {
            continue;
        }
        let f = Finding::error(
            Rule::ConverterWithoutRegistry,
            &url_key,
            match d.ctx.registry_url {
                Some(_) => format!("{prefix} uses the Schema Registry but {url_key} is not set."),
                None => format!(
                    "{prefix} uses the Schema Registry but {url_key} is not set, and no registry is configured for this Kafka cluster."
                ),
            },
        );
        out.push(f.with(d.ctx.registry_url.map(|u| Fix::set(&url_key, u))));
    }
}

/// An alias in `transforms` without `transforms.<alias>.type` fails the
/// connector at start.
fn transforms(d: &Draft, out: &mut Vec<Finding>) {
    let aliases = d.config.list("transforms");
    let missing: Vec<&str> = aliases
        .iter()
        .copied()
        .filter(|a| d.get(&format!("transforms.{a}.type")).is_none())
        .collect();
    for alias in &missing {
        let kept: Vec<&str> = aliases
            .iter()
            .copied()
            .filter(|a| !missing.contains(a))
            .collect();
        let fix = if kept.is_empty() {
            Fix::remove("transforms")
        } else {
            Fix::set("transforms", kept.join(","))
        };
        out.push(
            Finding::error(
                Rule::TransformWithoutType,
                &format!("transforms.{alias}.type"),
                format!("The transform {alias} has no transforms.{alias}.type."),
            )
            .with_fix(fix),
        );
    }
}

/// `errors.tolerance=all` skips bad records; without a dead letter queue
/// or error log they vanish without a trace.
fn tolerance(d: &Draft, out: &mut Vec<Finding>) {
    if d.get("errors.tolerance") != Some("all") || d.config.is_true("errors.log.enable") {
        return;
    }
    let fix = match d.plugin.direction() {
        Direction::Sink if d.get("errors.deadletterqueue.topic.name").is_none() => Some(
            Fix::set(
                "errors.deadletterqueue.topic.name",
                format!("dlq.{}", d.name),
            )
            .and_set("errors.deadletterqueue.context.headers.enable", "true"),
        ),
        Direction::Sink => None,
        // Sources have no dead letter queue: log what is skipped.
        Direction::Source => Some(Fix::set("errors.log.enable", "true")),
    };
    if let Some(fix) = fix {
        out.push(
            Finding::warning(
                Rule::ErrorsToleranceWithoutDlq,
                "errors.tolerance",
                "errors.tolerance=all skips failing records, and with no dead letter queue or error log they are lost without a trace.".into(),
            )
            .with_fix(fix),
        );
    }
}
