//! Rules of the stores the sinks write to (reference §5): S3, Snowflake,
//! BigQuery, Iceberg and Elasticsearch.

use super::sink::Reads;
use super::{Draft, unused};
use crate::connect::finding::{Finding, Fix, Rule};
use crate::connect::plugin::{Plugin, TABULAR_ICEBERG_CLASS};
use crate::connect::secret::is_referenced;
use crate::connect::template::{
    AVRO, SNOWFLAKE_AVRO, SNOWFLAKE_AVRO_NO_REGISTRY, SNOWFLAKE_JSON, TIME_PARTITIONERS,
};
use std::collections::BTreeSet;

pub(super) fn check(d: &Draft, out: &mut Vec<Finding>) {
    match d.plugin {
        Plugin::S3Sink => s3(d, out),
        Plugin::SnowflakeSink => snowflake(d, out),
        Plugin::BigQuerySink => bigquery(d, out),
        Plugin::IcebergSink => iceberg(d, out),
        Plugin::ElasticsearchSink => elasticsearch(d, out),
        _ => {}
    }
}

/// S3 and Elasticsearch stop the task on a tombstone by default.
fn null_values(d: &Draft, out: &mut Vec<Finding>) {
    if d.effective("behavior.on.null.values", "fail") == "fail" {
        out.push(
            Finding::info(
                Rule::NullValuesFail,
                "behavior.on.null.values",
                "A tombstone (null value) stops the task with behavior.on.null.values=fail, the default; compacted and Debezium topics carry them.".into(),
            )
            .with_fix(Fix::set("behavior.on.null.values", "ignore")),
        );
    }
}

fn s3(d: &Draft, out: &mut Vec<Finding>) {
    if d.get("rotate.interval.ms").is_none() && d.get("rotate.schedule.interval.ms").is_none() {
        out.push(
            Finding::warning(
                Rule::FlushWithoutRotation,
                "rotate.interval.ms",
                "Without rotate.interval.ms a file closes only after flush.size records, so on a quiet topic data waits in the task.".into(),
            )
            .with_fix(Fix::set("rotate.interval.ms", "600000")),
        );
    }
    let partitioner = d.get("partitioner.class").unwrap_or("");
    let mut needed: Vec<(&str, &str)> = Vec::new();
    if TIME_PARTITIONERS.contains(&partitioner) {
        needed.extend([("locale", "en-US"), ("timezone", "UTC")]);
        if partitioner.ends_with("TimeBasedPartitioner") {
            needed.extend([
                ("path.format", "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"),
                ("partition.duration.ms", "3600000"),
            ]);
        }
    }
    if d.get("rotate.schedule.interval.ms").is_some() {
        needed.push(("timezone", "UTC"));
    }
    let missing: BTreeSet<(&str, &str)> = needed
        .into_iter()
        .filter(|(k, _)| d.get(k).is_none())
        .collect();
    if !missing.is_empty() {
        let keys: Vec<&str> = missing.iter().map(|(k, _)| *k).collect();
        let fix = missing
            .iter()
            .fold(Fix::default(), |f, (k, v)| f.and_set(k, *v));
        out.push(
            Finding::error(
                Rule::TimePartitionerSettings,
                keys[0],
                format!(
                    "Time-based partitioning and scheduled rotation need {}.",
                    keys.join(", ")
                ),
            )
            .with_fix(fix),
        );
    }
    null_values(d, out);
}

fn snowflake(d: &Draft, out: &mut Vec<Finding>) {
    // The connector rewrites other characters in the names of the objects
    // it creates; renaming a connector makes a new one, so no fix.
    if !d
        .name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '-'))
    {
        out.push(Finding::warning(
            Rule::SnowflakeName,
            "name",
            "Snowflake accepts connector names of letters, digits, '_', '$' and '-' only.".into(),
        ));
    }
    if let Some(key) = d.get("snowflake.private.key")
        && !is_referenced(key)
        && (key.contains("-----BEGIN") || key.contains('\n'))
    {
        // The fix would have to show the key; the inline-secret finding
        // already asks for a reference.
        out.push(Finding::error(
            Rule::SnowflakeKeyFormat,
            "snowflake.private.key",
            "snowflake.private.key must be the PKCS8 key body alone, without the PEM header or line breaks (Error Code: 0002).".into(),
        ));
    }
    if d.effective("snowflake.ingestion.method", "SNOWPIPE") == "SNOWPIPE" {
        let converter = d.get("value.converter").unwrap_or("");
        if ![SNOWFLAKE_JSON, SNOWFLAKE_AVRO, SNOWFLAKE_AVRO_NO_REGISTRY].contains(&converter) {
            let replacement = if converter == AVRO {
                SNOWFLAKE_AVRO
            } else {
                SNOWFLAKE_JSON
            };
            out.push(
                Finding::error(
                    Rule::SnowpipeConverter,
                    "value.converter",
                    "Snowpipe ingestion needs a Snowflake value converter; or choose SNOWPIPE_STREAMING.".into(),
                )
                .with_fix(Fix::set("value.converter", replacement)),
            );
        }
    }
    if d.get("snowflake.enable.schematization").is_none() {
        out.push(
            Finding::warning(
                Rule::SchematizationImplicit,
                "snowflake.enable.schematization",
                "Set snowflake.enable.schematization explicitly: its default changed from false (v3) to true (v4), which changes the tables written.".into(),
            )
            .with_fix(Fix::set("snowflake.enable.schematization", "false")),
        );
    }
}

fn bigquery(d: &Draft, out: &mut Vec<Finding>) {
    let source = d.effective("keySource", "FILE");
    let keyfile = d.get("keyfile");
    match keyfile {
        None if source != "APPLICATION_DEFAULT" => out.push(
            Finding::error(
                Rule::KeyfileSource,
                "keyfile",
                format!("keySource={source} needs keyfile; or use the workers' identity with APPLICATION_DEFAULT."),
            )
            .with_fix(Fix::set("keySource", "APPLICATION_DEFAULT")),
        ),
        Some(k) if source == "FILE" && k.starts_with('{') => out.push(
            Finding::error(
                Rule::KeyfileSource,
                "keySource",
                "keyfile holds key JSON but keySource=FILE reads it as a path.".into(),
            )
            .with_fix(Fix::set("keySource", "JSON")),
        ),
        _ => {}
    }
    let merging = d.config.is_true("upsertEnabled") || d.config.is_true("deleteEnabled");
    if merging {
        if d.get("kafkaKeyFieldName").is_none() {
            out.push(
                Finding::error(
                    Rule::UpsertKeyField,
                    "kafkaKeyFieldName",
                    "Upserts and deletes need kafkaKeyFieldName, the column the record key goes to.".into(),
                )
                .with_fix(Fix::set("kafkaKeyFieldName", "kafkaKey")),
            );
        }
        if d.get("mergeIntervalMs") == Some("-1") && d.get("mergeRecordsThreshold") == Some("-1") {
            out.push(
                Finding::error(
                    Rule::MergeNeverRuns,
                    "mergeIntervalMs",
                    "mergeIntervalMs and mergeRecordsThreshold cannot both be -1: merges would never run.".into(),
                )
                .with_fix(Fix::set("mergeIntervalMs", "60000")),
            );
        }
        if d.config.is_true("useStorageWriteApi") {
            out.push(
                Finding::error(
                    Rule::UpsertWithStorageWrite,
                    "useStorageWriteApi",
                    "Upserts and deletes do not work with the Storage Write API.".into(),
                )
                .with_fix(Fix::set("useStorageWriteApi", "false")),
            );
        }
    }
    if !d.config.is_true("sanitizeTopics") && d.get("topic2TableMap").is_none() {
        let reads = Reads::of(d);
        let dotted = reads.listed.iter().any(|t| t.contains('.'))
            || d.ctx.topics.is_some_and(|known| {
                reads
                    .regex
                    .as_ref()
                    .is_some_and(|r| known.keys().any(|t| t.contains('.') && r.is_match(t)))
            });
        if dotted {
            out.push(
                Finding::warning(
                    Rule::DottedTopicNames,
                    "sanitizeTopics",
                    "BigQuery table names cannot hold '.', as Debezium's prefix.schema.table topics do: sanitise them or map topics to tables.".into(),
                )
                .with_fix(Fix::set("sanitizeTopics", "true")),
            );
        }
    }
}

fn iceberg(d: &Draft, out: &mut Vec<Finding>) {
    if d.get("iceberg.catalog.type").is_none() && d.get("iceberg.catalog.catalog-impl").is_none() {
        let guess = d.get("iceberg.catalog.uri").and_then(|u| {
            if u.starts_with("http") {
                Some("rest")
            } else if u.starts_with("thrift") {
                Some("hive")
            } else {
                None
            }
        });
        out.push(
            Finding::error(
                Rule::IcebergCatalog,
                "iceberg.catalog.type",
                "Must specify Iceberg catalog properties: iceberg.catalog.type or iceberg.catalog.catalog-impl.".into(),
            )
            .with(guess.map(|g| Fix::set("iceberg.catalog.type", g))),
        );
    }
    let fixed = d.get("iceberg.tables").is_some();
    let dynamic = d.config.is_true("iceberg.tables.dynamic-enabled");
    if fixed && dynamic {
        out.push(
            Finding::error(
                Rule::IcebergTables,
                "iceberg.tables.dynamic-enabled",
                "Cannot specify both static and dynamic table names.".into(),
            )
            .with_fix(
                Fix::remove("iceberg.tables.dynamic-enabled")
                    .and_remove("iceberg.tables.route-field"),
            ),
        );
    } else if !fixed && !dynamic {
        out.push(Finding::error(
            Rule::IcebergTables,
            "iceberg.tables",
            "Name the tables (iceberg.tables) or route records by a field (iceberg.tables.dynamic-enabled).".into(),
        ));
    } else if dynamic && d.get("iceberg.tables.route-field").is_none() {
        out.push(Finding::error(
            Rule::IcebergTables,
            "iceberg.tables.route-field",
            "Dynamic tables need iceberg.tables.route-field, the record field naming the table."
                .into(),
        ));
    }
    let control = d.effective("iceberg.control.topic", "control-iceberg");
    let taken: BTreeSet<&str> = d
        .others_of(Plugin::IcebergSink)
        .map(|c| {
            c.value("iceberg.control.topic")
                .unwrap_or("control-iceberg")
        })
        .collect();
    if taken.contains(control) {
        out.push(
            Finding::error(
                Rule::ControlTopicShared,
                "iceberg.control.topic",
                format!("Another Iceberg sink coordinates its commits on {control}; each needs its own control topic."),
            )
            .with_fix(Fix::set(
                "iceberg.control.topic",
                unused(&format!("control-iceberg-{}", d.name), '-', &taken),
            )),
        );
    }
    if d.config.is_true("iceberg.tables.upsert-mode-enabled")
        && d.get("connector.class") != Some(TABULAR_ICEBERG_CLASS)
    {
        out.push(
            Finding::error(
                Rule::UpsertOnAppendOnly,
                "iceberg.tables.upsert-mode-enabled",
                "The Apache Iceberg sink only appends; upsert mode is the Tabular sink's.".into(),
            )
            .with_fix(Fix::remove("iceberg.tables.upsert-mode-enabled")),
        );
    }
}

fn elasticsearch(d: &Draft, out: &mut Vec<Finding>) {
    match (d.get("connection.username"), d.get("connection.password")) {
        (Some(_), None) => out.push(
            Finding::error(
                Rule::HalfCredentials,
                "connection.password",
                "connection.username is set without connection.password; give both or neither."
                    .into(),
            )
            .with_fix(Fix::remove("connection.username")),
        ),
        (None, Some(_)) => out.push(
            Finding::error(
                Rule::HalfCredentials,
                "connection.username",
                "connection.password is set without connection.username; give both or neither."
                    .into(),
            )
            .with_fix(Fix::remove("connection.password")),
        ),
        _ => {}
    }
    for (all, per_topic) in [
        ("key.ignore", "topic.key.ignore"),
        ("schema.ignore", "topic.schema.ignore"),
    ] {
        if d.get(all).is_some() && d.get(per_topic).is_some() {
            out.push(
                Finding::error(
                    Rule::IgnorePair,
                    per_topic,
                    format!("{all} and {per_topic} cannot both be set."),
                )
                .with_fix(Fix::remove(per_topic)),
            );
        }
    }
    let data_stream = d
        .get("data.stream.type")
        .is_some_and(|t| !t.eq_ignore_ascii_case("none"));
    if data_stream {
        if d.get("behavior.on.null.values") == Some("delete") {
            out.push(
                Finding::error(
                    Rule::DataStreamNulls,
                    "behavior.on.null.values",
                    "Data streams are append-only: behavior.on.null.values=delete is not allowed."
                        .into(),
                )
                .with_fix(Fix::set("behavior.on.null.values", "ignore")),
            );
        }
        if d.get("write.method") == Some("upsert") {
            out.push(
                Finding::error(
                    Rule::DataStreamUpsert,
                    "write.method",
                    "Data streams are append-only: write.method=upsert is not allowed.".into(),
                )
                .with_fix(Fix::set("write.method", "insert")),
            );
        }
    }
    null_values(d, out);
}
