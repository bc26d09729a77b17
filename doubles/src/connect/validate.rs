//! The double's own validation, written from each connector's documented
//! settings (reference §5 and B1): which keys have no default, which take a
//! fixed set of values, the sink's topics rule, and a few cross-key checks
//! the plugins' validators make. It answers in Connect's ConfigInfos shape
//! (reference B2): `required` true only for keys without a default, the
//! messages Connect's `ConfigDef` and Debezium's `Field` write, PASSWORD
//! values echoed as `[hidden]`, `error_count` the sum of all errors.

use serde_json::{Value, json};
use std::collections::BTreeMap;

/// How a plugin words a missing value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Need {
    Optional,
    /// `ConfigDef`'s NO_DEFAULT_VALUE (Confluent's and Apache connectors).
    NoDefault,
    /// Debezium's `Field.required()`: a default of null, and its own text.
    Debezium,
}

pub(super) struct Key {
    name: &'static str,
    kind: &'static str,
    need: Need,
    default: Option<&'static str>,
    group: &'static str,
    choices: &'static [&'static str],
}

const fn key(name: &'static str, kind: &'static str, need: Need, group: &'static str) -> Key {
    Key {
        name,
        kind,
        need,
        default: None,
        group,
        choices: &[],
    }
}

const fn choice(
    name: &'static str,
    default: &'static str,
    group: &'static str,
    choices: &'static [&'static str],
) -> Key {
    Key {
        name,
        kind: "STRING",
        need: Need::Optional,
        default: Some(default),
        group,
        choices,
    }
}

use Need::{Debezium, NoDefault, Optional};

const COMMON: &[Key] = &[
    key("name", "STRING", NoDefault, "Common"),
    key("connector.class", "STRING", NoDefault, "Common"),
    Key {
        default: Some("1"),
        ..key("tasks.max", "INT", Optional, "Common")
    },
    key("key.converter", "CLASS", Optional, "Common"),
    key("value.converter", "CLASS", Optional, "Common"),
    choice(
        "errors.tolerance",
        "none",
        "Error Handling",
        &["none", "all"],
    ),
];

const SINK: &[Key] = &[
    Key {
        default: Some(""),
        ..key("topics", "LIST", Optional, "Common")
    },
    Key {
        default: Some(""),
        ..key("topics.regex", "STRING", Optional, "Common")
    },
    Key {
        default: Some(""),
        ..key(
            "errors.deadletterqueue.topic.name",
            "STRING",
            Optional,
            "Error Handling",
        )
    },
];

const POSTGRES: &[Key] = &[
    key("topic.prefix", "STRING", Debezium, "Connection"),
    key("database.hostname", "STRING", Debezium, "Connection"),
    Key {
        default: Some("5432"),
        ..key("database.port", "INT", Optional, "Connection")
    },
    key("database.user", "STRING", Debezium, "Connection"),
    key("database.password", "PASSWORD", Optional, "Connection"),
    key("database.dbname", "STRING", Debezium, "Connection"),
    choice(
        "plugin.name",
        "decoderbufs",
        "Connection",
        &["decoderbufs", "pgoutput"],
    ),
    choice(
        "snapshot.mode",
        "initial",
        "Connector",
        &[
            "always",
            "initial",
            "initial_only",
            "no_data",
            "when_needed",
            "configuration_based",
            "custom",
        ],
    ),
    choice(
        "publication.autocreate.mode",
        "all_tables",
        "Connector",
        &["all_tables", "disabled", "filtered", "no_tables"],
    ),
];

const MYSQL: &[Key] = &[
    key("topic.prefix", "STRING", Debezium, "Connection"),
    key("database.hostname", "STRING", Debezium, "Connection"),
    key("database.user", "STRING", Debezium, "Connection"),
    key("database.password", "PASSWORD", Optional, "Connection"),
    key("database.server.id", "LONG", Debezium, "Connection"),
    key(
        "schema.history.internal.kafka.topic",
        "STRING",
        Debezium,
        "History Storage",
    ),
    key(
        "schema.history.internal.kafka.bootstrap.servers",
        "STRING",
        Debezium,
        "History Storage",
    ),
    choice(
        "snapshot.mode",
        "initial",
        "Connector",
        &[
            "initial",
            "always",
            "when_needed",
            "no_data",
            "recovery",
            "initial_only",
            "configuration_based",
            "custom",
        ],
    ),
];

const CONFLUENT_JDBC: &[Key] = &[
    key("connection.url", "STRING", NoDefault, "Connection"),
    key("connection.user", "STRING", Optional, "Connection"),
    key("connection.password", "PASSWORD", Optional, "Connection"),
    choice(
        "insert.mode",
        "insert",
        "Writes",
        &["insert", "upsert", "update"],
    ),
    choice(
        "pk.mode",
        "none",
        "Data Mapping",
        &["none", "kafka", "record_key", "record_value"],
    ),
];

const DEBEZIUM_JDBC: &[Key] = &[
    key("connection.url", "STRING", Debezium, "Connection"),
    key("connection.username", "STRING", Debezium, "Connection"),
    key("connection.password", "PASSWORD", Optional, "Connection"),
    choice(
        "insert.mode",
        "insert",
        "Writes",
        &["insert", "upsert", "update"],
    ),
    choice(
        "primary.key.mode",
        "none",
        "Writes",
        &["none", "kafka", "record_key", "record_value"],
    ),
    choice("schema.evolution", "none", "Writes", &["none", "basic"]),
];

const S3: &[Key] = &[
    key("s3.bucket.name", "STRING", NoDefault, "S3"),
    key("format.class", "CLASS", NoDefault, "Connector"),
    key("flush.size", "INT", NoDefault, "Connector"),
    key("storage.class", "CLASS", NoDefault, "Storage"),
    key("aws.secret.access.key", "PASSWORD", Optional, "S3"),
    choice(
        "behavior.on.null.values",
        "fail",
        "Connector",
        &["fail", "ignore", "write"],
    ),
];

const SNOWFLAKE: &[Key] = &[
    key("snowflake.url.name", "STRING", NoDefault, "Snowflake"),
    key("snowflake.user.name", "STRING", NoDefault, "Snowflake"),
    key("snowflake.private.key", "PASSWORD", NoDefault, "Snowflake"),
    key(
        "snowflake.private.key.passphrase",
        "PASSWORD",
        Optional,
        "Snowflake",
    ),
    key("snowflake.database.name", "STRING", NoDefault, "Snowflake"),
    key("snowflake.schema.name", "STRING", NoDefault, "Snowflake"),
    choice(
        "snowflake.ingestion.method",
        "SNOWPIPE",
        "Snowflake",
        &["SNOWPIPE", "SNOWPIPE_STREAMING"],
    ),
];

const BIGQUERY: &[Key] = &[
    key("project", "STRING", NoDefault, "BigQuery"),
    key("defaultDataset", "STRING", NoDefault, "BigQuery"),
    key("keyfile", "PASSWORD", Optional, "BigQuery"),
    choice(
        "keySource",
        "FILE",
        "BigQuery",
        &["FILE", "JSON", "APPLICATION_DEFAULT"],
    ),
];

const ICEBERG: &[Key] = &[
    key("iceberg.tables", "LIST", Optional, "Iceberg"),
    Key {
        default: Some("false"),
        ..key(
            "iceberg.tables.dynamic-enabled",
            "BOOLEAN",
            Optional,
            "Iceberg",
        )
    },
    key("iceberg.catalog.uri", "STRING", Optional, "Iceberg"),
];

const ELASTICSEARCH: &[Key] = &[
    key("connection.url", "LIST", NoDefault, "Connector"),
    key("connection.username", "STRING", Optional, "Connector"),
    key("connection.password", "PASSWORD", Optional, "Connector"),
    choice(
        "behavior.on.null.values",
        "fail",
        "Data Conversion",
        &["fail", "ignore", "delete"],
    ),
    choice("write.method", "insert", "Connector", &["insert", "upsert"]),
];

/// Confluent's Azure Blob Storage sink: its account key is typed PASSWORD
/// though its name says nothing of a secret, which only the validate
/// answer's `definition.type` tells.
const AZURE_BLOB: &[Key] = &[
    key("azblob.account.name", "STRING", NoDefault, "Azure"),
    key("azblob.account.key", "PASSWORD", Optional, "Azure"),
    key("azblob.container.name", "STRING", Optional, "Azure"),
    key("format.class", "CLASS", NoDefault, "Connector"),
    key("flush.size", "INT", NoDefault, "Connector"),
];

/// The plugins the double has installed: class, type, version, keys.
pub(super) const PLUGINS: &[(&str, &str, &str, &[Key])] = &[
    (
        "io.debezium.connector.postgresql.PostgresConnector",
        "source",
        "3.0.7.Final",
        POSTGRES,
    ),
    (
        "io.debezium.connector.mysql.MySqlConnector",
        "source",
        "3.0.7.Final",
        MYSQL,
    ),
    (
        "io.confluent.connect.jdbc.JdbcSinkConnector",
        "sink",
        "10.8.0",
        CONFLUENT_JDBC,
    ),
    (
        "io.debezium.connector.jdbc.JdbcSinkConnector",
        "sink",
        "3.0.7.Final",
        DEBEZIUM_JDBC,
    ),
    (
        "io.confluent.connect.s3.S3SinkConnector",
        "sink",
        "10.5.17",
        S3,
    ),
    (
        "com.snowflake.kafka.connector.SnowflakeSinkConnector",
        "sink",
        "3.1.0",
        SNOWFLAKE,
    ),
    (
        "com.wepay.kafka.connect.bigquery.BigQuerySinkConnector",
        "sink",
        "2.5.7",
        BIGQUERY,
    ),
    (
        "org.apache.iceberg.connect.IcebergSinkConnector",
        "sink",
        "1.8.1",
        ICEBERG,
    ),
    (
        "io.tabular.iceberg.connect.IcebergSinkConnector",
        "sink",
        "0.6.19",
        ICEBERG,
    ),
    (
        "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector",
        "sink",
        "14.1.2",
        ELASTICSEARCH,
    ),
    (
        "io.confluent.connect.azure.blob.AzureBlobStorageSinkConnector",
        "sink",
        "1.6.24",
        AZURE_BLOB,
    ),
];

/// Worker plugins that are not connectors (`connectorsOnly=false`).
pub(super) const OTHER_PLUGINS: &[(&str, &str)] = &[
    ("io.confluent.connect.avro.AvroConverter", "converter"),
    ("org.apache.kafka.connect.json.JsonConverter", "converter"),
    (
        "org.apache.kafka.connect.storage.StringConverter",
        "converter",
    ),
    (
        "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        "header_converter",
    ),
    (
        "org.apache.kafka.connect.transforms.RegexRouter",
        "transformation",
    ),
    (
        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        "predicate",
    ),
];

/// Why validation could not start (Connect answers 400).
pub(super) enum Refused {
    /// `AbstractHerder`: the message echoes the whole config, secrets and
    /// all, as Connect's does.
    NoClass(String),
    UnknownClass(String),
}

impl Refused {
    pub fn message(&self) -> String {
        match self {
            Refused::NoClass(config) => {
                format!("Connector config {config} contains no connector type")
            }
            Refused::UnknownClass(class) => format!(
                "Failed to find any class that implements Connector and which name matches {class}"
            ),
        }
    }
}

pub(super) struct Verdict {
    pub infos: Value,
    pub errors: Vec<String>,
}

fn java_map(config: &BTreeMap<String, String>) -> String {
    let inner: Vec<String> = config.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", inner.join(", "))
}

/// Validates `config` as `PUT /connector-plugins/{p}/config/validate` does.
pub(super) fn validate(config: &BTreeMap<String, String>) -> Result<Verdict, Refused> {
    let Some(class) = config
        .get("connector.class")
        .filter(|c| !c.trim().is_empty())
    else {
        return Err(Refused::NoClass(java_map(config)));
    };
    let Some((class, kind, _, keys)) = PLUGINS.iter().find(|(c, ..)| *c == class.trim()) else {
        return Err(Refused::UnknownClass(class.clone()));
    };
    let all: Vec<&Key> = COMMON
        .iter()
        .chain(if *kind == "sink" { SINK } else { &[] })
        .chain(keys.iter())
        .collect();
    let mut errors: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let value = |k: &str| config.get(k).map(String::as_str);
    for k in &all {
        let v = value(k.name);
        let blank = v.is_none_or(|v| v.trim().is_empty());
        match k.need {
            NoDefault if v.is_none() => errors.entry(k.name).or_default().push(format!(
                "Missing required configuration \"{}\" which has no default value.",
                k.name
            )),
            Debezium if blank => errors.entry(k.name).or_default().push(format!(
                "The '{}' value is invalid: A value is required",
                k.name
            )),
            _ => {}
        }
        let Some(v) = v else { continue };
        if !k.choices.is_empty() && !k.choices.contains(&v) {
            let text = if class.starts_with("io.debezium") {
                format!(
                    "The '{}' value is invalid: Value must be one of {}",
                    k.name,
                    k.choices.join(", ")
                )
            } else {
                format!(
                    "Invalid value {v} for configuration {}: String must be one of: {}",
                    k.name,
                    k.choices.join(", ")
                )
            };
            errors.entry(k.name).or_default().push(text);
        }
        let number = match k.kind {
            "INT" => v.trim().parse::<i32>().is_err(),
            "LONG" => v.trim().parse::<i64>().is_err(),
            _ => false,
        };
        if number && !v.trim().is_empty() {
            errors.entry(k.name).or_default().push(format!(
                "Invalid value {v} for configuration {}: Not a number of type {}",
                k.name, k.kind
            ));
        }
    }
    if *kind == "sink" {
        let topics = value("topics").filter(|t| !t.trim().is_empty());
        let regex = value("topics.regex").filter(|t| !t.trim().is_empty());
        match (topics, regex) {
            (None, None) => errors
                .entry("topics")
                .or_default()
                .push("Must configure one of topics or topics.regex".into()),
            (Some(_), Some(_)) => errors
                .entry("topics")
                .or_default()
                .push("Must configure only one of topics or topics.regex".into()),
            _ => {}
        }
        if let (Some(dlq), Some(topics)) = (
            value("errors.deadletterqueue.topic.name").filter(|d| !d.is_empty()),
            topics,
        ) && topics.split(',').any(|t| t.trim() == dlq)
        {
            errors
                .entry("errors.deadletterqueue.topic.name")
                .or_default()
                .push(format!(
                    "The DLQ topic '{dlq}' may not be included in the list of topics ('topics={topics}') consumed by the connector"
                ));
        }
    }
    if keys.as_ptr() == ELASTICSEARCH.as_ptr()
        && value("connection.username").is_some() != value("connection.password").is_some()
    {
        errors
            .entry("connection.username")
            .or_default()
            .push("Both 'connection.username' and 'connection.password' must be set.".into());
    }
    if keys.as_ptr() == ICEBERG.as_ptr()
        && value("iceberg.tables").is_some_and(|t| !t.is_empty())
        && value("iceberg.tables.dynamic-enabled") == Some("true")
    {
        errors
            .entry("iceberg.tables")
            .or_default()
            .push("Cannot specify both static and dynamic table names".into());
    }
    let configs: Vec<Value> = all
        .iter()
        .enumerate()
        .map(|(order, k)| {
            let shown = match value(k.name) {
                Some(_) if k.kind == "PASSWORD" => json!("[hidden]"),
                Some(v) => json!(v),
                None => Value::Null,
            };
            json!({
                "definition": {
                    "name": k.name, "type": k.kind, "required": k.need == NoDefault,
                    "default_value": k.default, "importance": "HIGH", "documentation": "",
                    "group": k.group, "width": "MEDIUM", "display_name": k.name,
                    "dependents": [], "order": order + 1,
                },
                "value": {
                    "name": k.name, "value": shown,
                    "recommended_values": k.choices,
                    "errors": errors.get(k.name).cloned().unwrap_or_default(),
                    "visible": true,
                },
            })
        })
        .collect();
    let mut groups: Vec<&str> = Vec::new();
    for k in &all {
        if !groups.contains(&k.group) {
            groups.push(k.group);
        }
    }
    let flat: Vec<String> = errors.into_values().flatten().collect();
    Ok(Verdict {
        infos: json!({"name": class, "error_count": flat.len(), "groups": groups, "configs": configs}),
        errors: flat,
    })
}
