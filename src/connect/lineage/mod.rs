//! A connector's lineage from its config alone: the tables it reads and
//! the topics it writes (sources), or the topics it reads and the tables,
//! objects or indices it writes (sinks), named as OpenLineage names them
//! (reference A2): `kafka://host:port` + topic, `postgres://host:port` +
//! `db.schema.table`, `mysql://host:port` + `db.table`, `s3://bucket` + key,
//! `bigquery` + `project.dataset.table`, `snowflake://account` +
//! `db.schema.table`. Elasticsearch has no row in the spec; its indices are
//! `elasticsearch://host:port` + index. Iceberg tables are named under the
//! catalog's URI.
//!
//! This is derived lineage (from configuration), distinct from events a
//! connector emits itself. Where the config names datasets by regular
//! expression (`topics.regex`, Debezium's include lists, Iceberg's dynamic
//! tables) the dataset is a pattern: its name is a regex over full dataset
//! names, the topic regex put where the topic goes. Stores that rewrite
//! names (dots to `_`, lower case) may name tables a pattern does not
//! match letter for letter.

use super::config::{Config, ParseError};
use super::plugin::Plugin;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Dataset {
    pub namespace: String,
    /// The dataset name, or for a pattern a regex matched against whole
    /// names.
    pub name: String,
    pub pattern: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Lineage {
    pub inputs: Vec<Dataset>,
    pub outputs: Vec<Dataset>,
    /// A routing transform (RegexRouter, ByLogicalTableRouter…) renames
    /// topics, so the Kafka side may differ from what is named here.
    pub renamed_by_transform: bool,
}

/// Why no lineage can be read. Names properties only: a connection URL can
/// carry credentials.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineageError {
    #[error(transparent)]
    Config(#[from] ParseError),
    #[error("{0} is needed to name the connector's datasets")]
    Missing(&'static str),
    #[error("{0} is not a URL Streamkeeper can name datasets from")]
    Unreadable(&'static str),
}

/// The OpenLineage Kafka namespace of a bootstrap list: the first entry,
/// protocol prefix stripped (reference A2's canonical form).
pub fn kafka_namespace(bootstrap: &str) -> String {
    let first = bootstrap
        .split([',', ';'])
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("unknown:unknown");
    let host = first.rsplit_once("://").map_or(first, |(_, h)| h);
    format!("kafka://{host}")
}

fn exact(namespace: &str, name: impl Into<String>) -> Dataset {
    Dataset {
        namespace: namespace.to_owned(),
        name: name.into(),
        pattern: false,
    }
}

fn pattern(namespace: &str, name: impl Into<String>) -> Dataset {
    Dataset {
        namespace: namespace.to_owned(),
        name: name.into(),
        pattern: true,
    }
}

/// A Debezium include-list entry read as a name when it is one: letters,
/// digits, `_`, `$`, `-`, and dots (escaped or not, as users write both).
fn literal(entry: &str) -> Option<String> {
    let unescaped = entry.replace("\\.", ".");
    unescaped
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '$' | '-'))
        .then_some(unescaped)
}

/// What a sink reads: each listed topic, or the regex.
enum Topic<'a> {
    Exact(&'a str),
    Regex(&'a str),
}

/// Carriers of a sink's topic into store names: applied to a sentinel
/// that stands for the topic, then the sentinel replaced by the regex.
const SENTINEL: &str = "\u{1}";

fn sink_topics(config: &Config) -> Vec<Topic<'_>> {
    let mut out: Vec<Topic> = config
        .list("topics")
        .into_iter()
        .map(Topic::Exact)
        .collect();
    if let Some(r) = config.value("topics.regex") {
        out.push(Topic::Regex(r));
    }
    out
}

/// The outputs of a sink whose store names each topic's dataset with
/// `name_of`.
fn sink_outputs(
    config: &Config,
    namespace: &str,
    name_of: impl Fn(&str) -> String,
) -> Vec<Dataset> {
    sink_topics(config)
        .into_iter()
        .map(|t| match t {
            Topic::Exact(topic) => exact(namespace, name_of(topic)),
            Topic::Regex(r) => {
                let named = name_of(SENTINEL);
                let escaped: Vec<String> = named.split(SENTINEL).map(regex::escape).collect();
                pattern(namespace, escaped.join(&format!("(?:{r})")))
            }
        })
        .collect()
}

fn sink_inputs(config: &Config, kafka: &str) -> Vec<Dataset> {
    sink_topics(config)
        .into_iter()
        .map(|t| match t {
            Topic::Exact(topic) => exact(kafka, topic),
            Topic::Regex(r) => pattern(kafka, r),
        })
        .collect()
}

/// A JDBC URL's store: OpenLineage scheme, `host:port` and database.
struct Jdbc {
    scheme: &'static str,
    authority: String,
    database: Option<String>,
}

fn jdbc(url: &str) -> Option<Jdbc> {
    let rest = url.trim().strip_prefix("jdbc:")?;
    let (kind, after) = rest.split_once("://")?;
    let (scheme, port) = match kind {
        "postgresql" => ("postgres", "5432"),
        "mysql" => ("mysql", "3306"),
        "mariadb" => ("mariadb", "3306"),
        "sqlserver" => ("sqlserver", "1433"),
        _ => return None,
    };
    let end = after.find(['/', '?', ';']).unwrap_or(after.len());
    let authority = &after[..end];
    // Drop `user:password@` so credentials never reach a dataset name.
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(',').next()?;
    if host.is_empty() {
        return None;
    }
    let authority = if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:{port}")
    };
    let path = &after[end..];
    let database = if let Some(p) = path.strip_prefix('/') {
        p.split(['?', ';']).next().filter(|d| !d.is_empty())
    } else {
        path.split(';')
            .find_map(|kv| kv.strip_prefix("databaseName="))
    }
    .map(str::to_owned);
    Some(Jdbc {
        scheme,
        authority,
        database,
    })
}

/// `db.schema.table` (or `db.table` for MySQL) of a table name a JDBC sink
/// derives from a topic; dotted names carry their own schema (and catalog).
fn jdbc_table(store: &Jdbc, table: &str) -> String {
    let db = store.database.as_deref().unwrap_or("");
    let parts: Vec<&str> = table.split('.').collect();
    let two_level = matches!(store.scheme, "mysql" | "mariadb");
    let default_schema = if store.scheme == "sqlserver" {
        "dbo"
    } else {
        "public"
    };
    match (two_level, parts.as_slice()) {
        (true, [t]) => format!("{db}.{t}"),
        (true, [.., d, t]) => format!("{d}.{t}"),
        (false, [t]) => format!("{db}.{default_schema}.{t}"),
        (false, [s, t]) => format!("{db}.{s}.{t}"),
        _ => table.to_owned(),
    }
}

fn require<'a>(config: &'a Config, key: &'static str) -> Result<&'a str, LineageError> {
    config.value(key).ok_or(LineageError::Missing(key))
}

/// The `topic:table,…` maps of Snowflake and BigQuery.
fn map_of<'a>(config: &'a Config, key: &str, topic: &str) -> Option<&'a str> {
    config
        .list(key)
        .into_iter()
        .filter_map(|e| e.split_once(':'))
        .find(|(t, _)| t.trim() == topic)
        .map(|(_, table)| table.trim())
}

fn debezium(config: &Config, plugin: Plugin, kafka: &str) -> Result<Lineage, LineageError> {
    let host = require(config, "database.hostname")?;
    let prefix = require(config, "topic.prefix")?;
    let (scheme, port) = if plugin == Plugin::DebeziumPostgres {
        ("postgres", "5432")
    } else {
        ("mysql", "3306")
    };
    let namespace = format!(
        "{scheme}://{host}:{}",
        config.value("database.port").unwrap_or(port)
    );
    // PostgreSQL entries are `schema.table` in one database; MySQL entries
    // are `database.table`. The spec's Postgres name adds the database.
    let db = if plugin == Plugin::DebeziumPostgres {
        Some(require(config, "database.dbname")?)
    } else {
        None
    };
    let tables = config.list("table.include.list");
    let entries: Vec<String> = if !tables.is_empty() {
        tables.into_iter().map(str::to_owned).collect()
    } else {
        let outer = if plugin == Plugin::DebeziumPostgres {
            "schema.include.list"
        } else {
            "database.include.list"
        };
        let list = config.list(outer);
        if list.is_empty() {
            vec![".*".to_owned()]
        } else {
            list.into_iter().map(|s| format!("(?:{s})\\..*")).collect()
        }
    };
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for entry in &entries {
        match literal(entry) {
            Some(name) => {
                let full = match db {
                    Some(db) => format!("{db}.{name}"),
                    None => name.clone(),
                };
                inputs.push(exact(&namespace, full));
                outputs.push(exact(kafka, format!("{prefix}.{name}")));
            }
            None => {
                let full = match db {
                    Some(db) => format!("{}\\.(?:{entry})", regex::escape(db)),
                    None => format!("(?:{entry})"),
                };
                inputs.push(pattern(&namespace, full));
                outputs.push(pattern(
                    kafka,
                    format!("{}\\.(?:{entry})", regex::escape(prefix)),
                ));
            }
        }
    }
    Ok(Lineage {
        inputs,
        outputs,
        renamed_by_transform: false,
    })
}

/// The host:port of an HTTP(S) URL, without credentials.
fn http_authority(url: &str) -> Option<String> {
    let after = url.split_once("://").map_or(url, |(_, a)| a);
    let authority = after.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| host.to_owned())
}

/// Reads a config's datasets. `kafka_bootstrap` is the Kafka cluster's
/// bootstrap list (see [`kafka_namespace`]).
pub fn lineage(config: &Config, kafka_bootstrap: &str) -> Result<Lineage, LineageError> {
    let plugin = config.plugin()?;
    let kafka = kafka_namespace(kafka_bootstrap);
    let mut result = match plugin {
        Plugin::DebeziumPostgres | Plugin::DebeziumMySql => debezium(config, plugin, &kafka)?,
        _ => Lineage {
            inputs: sink_inputs(config, &kafka),
            outputs: sink_outputs_of(config, plugin)?,
            renamed_by_transform: false,
        },
    };
    result.renamed_by_transform = config.list("transforms").iter().any(|a| {
        config
            .value(&format!("transforms.{a}.type"))
            .is_some_and(|t| t.contains("Router"))
    });
    Ok(result)
}

fn sink_outputs_of(config: &Config, plugin: Plugin) -> Result<Vec<Dataset>, LineageError> {
    Ok(match plugin {
        Plugin::ConfluentJdbcSink | Plugin::DebeziumJdbcSink => {
            let store = jdbc(require(config, "connection.url")?)
                .ok_or(LineageError::Unreadable("connection.url"))?;
            let namespace = format!("{}://{}", store.scheme, store.authority);
            let debezium = plugin == Plugin::DebeziumJdbcSink;
            let key = if debezium {
                "collection.name.format"
            } else {
                "table.name.format"
            };
            let format = config.value(key).unwrap_or("${topic}");
            sink_outputs(config, &namespace, |topic| {
                let table = format.replace("${topic}", topic);
                // Debezium's default naming strategy turns the dots of
                // `prefix.schema.table` topics into `_` (as read).
                let table = if debezium {
                    table.replace('.', "_")
                } else {
                    table
                };
                jdbc_table(&store, &table)
            })
        }
        Plugin::S3Sink => {
            let bucket = require(config, "s3.bucket.name")?;
            let dir = config.value("topics.dir").unwrap_or("topics");
            sink_outputs(config, &format!("s3://{bucket}"), |t| format!("{dir}/{t}"))
        }
        Plugin::SnowflakeSink => {
            let url = require(config, "snowflake.url.name")?;
            let host = http_authority(url).ok_or(LineageError::Unreadable("snowflake.url.name"))?;
            let host = host.split(':').next().unwrap_or(&host);
            let account = host.strip_suffix(".snowflakecomputing.com").unwrap_or(host);
            let db = require(config, "snowflake.database.name")?;
            let schema = require(config, "snowflake.schema.name")?;
            sink_outputs(config, &format!("snowflake://{account}"), |t| {
                let table = map_of(config, "snowflake.topic2table.map", t)
                    .map(str::to_owned)
                    .unwrap_or_else(|| sanitise(t));
                format!("{db}.{schema}.{table}")
            })
        }
        Plugin::BigQuerySink => {
            let project = require(config, "project")?;
            let dataset = require(config, "defaultDataset")?;
            let sanitize = config.is_true("sanitizeTopics");
            sink_outputs(config, "bigquery", |t| {
                let table = match map_of(config, "topic2TableMap", t) {
                    Some(table) => table.to_owned(),
                    None if sanitize => sanitise(t),
                    None => t.to_owned(),
                };
                format!("{project}.{dataset}.{table}")
            })
        }
        Plugin::IcebergSink => {
            let namespace = config.value("iceberg.catalog.uri").unwrap_or("iceberg");
            let tables = config.list("iceberg.tables");
            if tables.is_empty() {
                vec![pattern(namespace, ".*")]
            } else {
                tables.into_iter().map(|t| exact(namespace, t)).collect()
            }
        }
        Plugin::ElasticsearchSink => {
            let url = require(config, "connection.url")?;
            let first = url.split(',').next().unwrap_or(url);
            let host = http_authority(first).ok_or(LineageError::Unreadable("connection.url"))?;
            sink_outputs(config, &format!("elasticsearch://{host}"), |t| {
                t.to_lowercase()
            })
        }
        Plugin::DebeziumPostgres | Plugin::DebeziumMySql => Vec::new(),
    })
}

/// A topic as a table name of stores that take only `[A-Za-z0-9_]`.
fn sanitise(topic: &str) -> String {
    topic
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '\u{1}' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
