//! Each plugin's form: only the properties that connector needs, with the
//! reference's defaults and allowed values (§5, B1), and the recommended
//! choices where the plugin's own default is the common mistake
//! (`pgoutput` over `decoderbufs`, a filtered publication, a slot and a
//! dead letter queue per connector, converters with a registry URL).

mod sinks;
mod sources;

use crate::connect::plugin::Plugin;
use crate::connect::template::{Field, Template};
use sinks::{bigquery, confluent_jdbc, debezium_jdbc, elasticsearch, iceberg, s3, snowflake};
use sources::{mysql, postgres};

pub const AVRO: &str = "io.confluent.connect.avro.AvroConverter";
const PROTOBUF: &str = "io.confluent.connect.protobuf.ProtobufConverter";
const JSON_SCHEMA: &str = "io.confluent.connect.json.JsonSchemaConverter";
const JSON: &str = "org.apache.kafka.connect.json.JsonConverter";
const STRING: &str = "org.apache.kafka.connect.storage.StringConverter";
const BYTES: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";
pub const SNOWFLAKE_JSON: &str = "com.snowflake.kafka.connector.records.SnowflakeJsonConverter";
pub const SNOWFLAKE_AVRO: &str = "com.snowflake.kafka.connector.records.SnowflakeAvroConverter";
pub const SNOWFLAKE_AVRO_NO_REGISTRY: &str =
    "com.snowflake.kafka.connector.records.SnowflakeAvroConverterWithoutSchemaRegistry";

/// Converters that read and write through a Schema Registry, and so need
/// `<prefix>.schema.registry.url`.
pub const REGISTRY_CONVERTERS: [&str; 4] = [AVRO, PROTOBUF, JSON_SCHEMA, SNOWFLAKE_AVRO];

const CONVERTERS: &[&str] = &[AVRO, PROTOBUF, JSON_SCHEMA, JSON, STRING, BYTES];
const SNOWFLAKE_CONVERTERS: &[&str] = &[
    AVRO,
    PROTOBUF,
    JSON_SCHEMA,
    JSON,
    STRING,
    SNOWFLAKE_JSON,
    SNOWFLAKE_AVRO,
    SNOWFLAKE_AVRO_NO_REGISTRY,
];

const PG_SNAPSHOT_MODES: &[&str] = &[
    "initial",
    "always",
    "no_data",
    "initial_only",
    "when_needed",
    "configuration_based",
    "custom",
];
const MYSQL_SNAPSHOT_MODES: &[&str] = &[
    "initial",
    "always",
    "when_needed",
    "no_data",
    "recovery",
    "initial_only",
    "configuration_based",
    "custom",
];
pub const S3_STORAGE: &str = "io.confluent.connect.s3.storage.S3Storage";
pub const TIME_PARTITIONERS: [&str; 3] = [
    "io.confluent.connect.storage.partitioner.HourlyPartitioner",
    "io.confluent.connect.storage.partitioner.DailyPartitioner",
    "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
];

fn name() -> Field {
    Field::text(
        "name",
        "Connector name",
        "The connector's name on the Connect cluster; also its URL name.",
    )
    .required()
}

fn tasks(default: &'static str) -> Field {
    Field::number(
        "tasks.max",
        "Tasks",
        "How many tasks may run; more tasks than the topics' partitions sit idle.",
    )
    .default(default)
}

fn converters(choices: &'static [&'static str]) -> [Field; 4] {
    [
        Field::choice(
            "key.converter",
            "Key converter",
            choices,
            "How record keys are (de)serialised.",
        )
        .default(AVRO)
        .open(),
        Field::choice(
            "value.converter",
            "Value converter",
            choices,
            "How record values are (de)serialised; Avro, Protobuf and JSON Schema go through the Schema Registry.",
        )
        .default(AVRO)
        .open(),
        Field::text(
            "value.converter.schema.registry.url",
            "Schema Registry URL",
            "The registry the converters use (the cluster's registry when one is configured).",
        ),
        Field::text(
            "key.converter.schema.registry.url",
            "Schema Registry URL for keys",
            "Defaults to the values' registry.",
        )
        .default("{value.converter.schema.registry.url}"),
    ]
}

/// The form of a plugin.
pub fn template(plugin: Plugin) -> Template {
    match plugin {
        Plugin::DebeziumPostgres => postgres(),
        Plugin::DebeziumMySql => mysql(),
        Plugin::ConfluentJdbcSink => confluent_jdbc(),
        Plugin::DebeziumJdbcSink => debezium_jdbc(),
        Plugin::S3Sink => s3(),
        Plugin::SnowflakeSink => snowflake(),
        Plugin::BigQuerySink => bigquery(),
        Plugin::IcebergSink => iceberg(),
        Plugin::ElasticsearchSink => elasticsearch(),
    }
}
