//! The connector plugins Streamkeeper drafts and checks, named by the exact
//! `connector.class` each one registers (reference §5 and B1).

use serde::{Deserialize, Serialize};

/// Whether a connector reads from an outside system into Kafka or writes
/// Kafka topics out: sinks take `topics`/`topics.regex` and a dead letter
/// queue, sources do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Source,
    Sink,
}

/// A plugin the templates and rules cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Plugin {
    DebeziumPostgres,
    DebeziumMySql,
    ConfluentJdbcSink,
    DebeziumJdbcSink,
    S3Sink,
    SnowflakeSink,
    BigQuerySink,
    IcebergSink,
    ElasticsearchSink,
}

/// The Tabular Iceberg sink, the Apache one's predecessor: same properties,
/// plus upserts (reference §5, Iceberg sink).
pub const TABULAR_ICEBERG_CLASS: &str = "io.tabular.iceberg.connect.IcebergSinkConnector";

impl Plugin {
    pub const ALL: [Plugin; 9] = [
        Plugin::DebeziumPostgres,
        Plugin::DebeziumMySql,
        Plugin::ConfluentJdbcSink,
        Plugin::DebeziumJdbcSink,
        Plugin::S3Sink,
        Plugin::SnowflakeSink,
        Plugin::BigQuerySink,
        Plugin::IcebergSink,
        Plugin::ElasticsearchSink,
    ];

    /// The `connector.class` a template writes.
    pub fn class(self) -> &'static str {
        match self {
            Plugin::DebeziumPostgres => "io.debezium.connector.postgresql.PostgresConnector",
            Plugin::DebeziumMySql => "io.debezium.connector.mysql.MySqlConnector",
            Plugin::ConfluentJdbcSink => "io.confluent.connect.jdbc.JdbcSinkConnector",
            Plugin::DebeziumJdbcSink => "io.debezium.connector.jdbc.JdbcSinkConnector",
            Plugin::S3Sink => "io.confluent.connect.s3.S3SinkConnector",
            Plugin::SnowflakeSink => "com.snowflake.kafka.connector.SnowflakeSinkConnector",
            Plugin::BigQuerySink => "com.wepay.kafka.connect.bigquery.BigQuerySinkConnector",
            Plugin::IcebergSink => "org.apache.iceberg.connect.IcebergSinkConnector",
            Plugin::ElasticsearchSink => {
                "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector"
            }
        }
    }

    /// The plugin a `connector.class` names. Only full class names count:
    /// Connect also accepts short aliases, but `JdbcSinkConnector` names two
    /// different plugins, so a short name is ambiguous.
    pub fn from_class(class: &str) -> Option<Plugin> {
        let class = class.trim();
        if class == TABULAR_ICEBERG_CLASS {
            return Some(Plugin::IcebergSink);
        }
        Plugin::ALL.into_iter().find(|p| p.class() == class)
    }

    pub fn direction(self) -> Direction {
        match self {
            Plugin::DebeziumPostgres | Plugin::DebeziumMySql => Direction::Source,
            _ => Direction::Sink,
        }
    }

    /// A name for screens.
    pub fn label(self) -> &'static str {
        match self {
            Plugin::DebeziumPostgres => "Debezium PostgreSQL source",
            Plugin::DebeziumMySql => "Debezium MySQL source",
            Plugin::ConfluentJdbcSink => "JDBC sink (Confluent)",
            Plugin::DebeziumJdbcSink => "JDBC sink (Debezium)",
            Plugin::S3Sink => "Amazon S3 sink",
            Plugin::SnowflakeSink => "Snowflake sink",
            Plugin::BigQuerySink => "Google BigQuery sink",
            Plugin::IcebergSink => "Apache Iceberg sink",
            Plugin::ElasticsearchSink => "Elasticsearch sink",
        }
    }

    /// A stable identifier for URLs and the CLI's `--plugin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Plugin::DebeziumPostgres => "debezium_postgres",
            Plugin::DebeziumMySql => "debezium_mysql",
            Plugin::ConfluentJdbcSink => "confluent_jdbc_sink",
            Plugin::DebeziumJdbcSink => "debezium_jdbc_sink",
            Plugin::S3Sink => "s3_sink",
            Plugin::SnowflakeSink => "snowflake_sink",
            Plugin::BigQuerySink => "bigquery_sink",
            Plugin::IcebergSink => "iceberg_sink",
            Plugin::ElasticsearchSink => "elasticsearch_sink",
        }
    }

    /// The plugin named by [`Plugin::as_str`] or by its class.
    pub fn parse(s: &str) -> Option<Plugin> {
        let s = s.trim();
        Plugin::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .or_else(|| Plugin::from_class(s))
    }

    /// The keys this plugin types PASSWORD (its `ConfigDef`, reference B1):
    /// secrets whatever their name, masked before a worker's own validate
    /// answer for the class is learned.
    pub fn password_keys(self) -> &'static [&'static str] {
        match self {
            Plugin::DebeziumPostgres | Plugin::DebeziumMySql => &["database.password"],
            Plugin::ConfluentJdbcSink | Plugin::DebeziumJdbcSink | Plugin::ElasticsearchSink => {
                &["connection.password"]
            }
            Plugin::S3Sink => &["aws.secret.access.key"],
            Plugin::SnowflakeSink => &["snowflake.private.key", "snowflake.private.key.passphrase"],
            Plugin::BigQuerySink => &["keyfile"],
            Plugin::IcebergSink => &[],
        }
    }

    /// Debezium's CDC sources: one task only, topics named
    /// `topic.prefix`.schema.table.
    pub fn is_debezium_source(self) -> bool {
        self.direction() == Direction::Source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plugin_is_found_by_its_class_and_its_name() {
        for p in Plugin::ALL {
            assert_eq!(Plugin::from_class(p.class()), Some(p));
            assert_eq!(Plugin::parse(p.as_str()), Some(p));
            assert_eq!(Plugin::parse(p.class()), Some(p));
        }
        assert_eq!(
            Plugin::from_class(TABULAR_ICEBERG_CLASS),
            Some(Plugin::IcebergSink)
        );
    }

    #[test]
    fn short_and_unknown_classes_are_not_guessed() {
        assert_eq!(Plugin::from_class("JdbcSinkConnector"), None);
        assert_eq!(Plugin::from_class("com.example.MySink"), None);
        assert_eq!(Plugin::parse(""), None);
    }

    #[test]
    fn only_the_debezium_connectors_are_sources() {
        let sources: Vec<_> = Plugin::ALL
            .into_iter()
            .filter(|p| p.direction() == Direction::Source)
            .collect();
        assert_eq!(sources, [Plugin::DebeziumPostgres, Plugin::DebeziumMySql]);
    }
}
