//! Each plugin's form: only the properties that connector needs, with the
//! reference's defaults and allowed values (§5, B1), and the recommended
//! choices where the plugin's own default is the common mistake
//! (`pgoutput` over `decoderbufs`, a filtered publication, a slot and a
//! dead letter queue per connector, converters with a registry URL).

use super::{Field, Template};
use crate::connect::plugin::Plugin;

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

/// A sink's topics and dead letter queue: records that fail conversion go
/// to `dlq.<name>` with their cause in headers instead of stopping the task.
fn sink_common() -> [Field; 6] {
    [
        Field::text(
            "topics",
            "Topics",
            "Comma-separated topics to read; or leave empty and give a regex.",
        ),
        Field::text(
            "topics.regex",
            "Topics regex",
            "A Java regular expression matched against whole topic names (instead of a list).",
        ),
        Field::choice(
            "errors.tolerance",
            "On a bad record",
            &["all", "none"],
            "all: send it to the dead letter queue and carry on; none: stop the task.",
        )
        .default("all"),
        Field::text(
            "errors.deadletterqueue.topic.name",
            "Dead letter topic",
            "Where bad records go; must not be one of the topics read.",
        )
        .default("dlq.{name}"),
        Field::bool(
            "errors.deadletterqueue.context.headers.enable",
            "Cause in headers",
            "Adds __connect.errors.* headers saying why each record failed.",
        )
        .default("true"),
        Field::number(
            "errors.deadletterqueue.topic.replication.factor",
            "Dead letter replication",
            "The dead letter topic's replication factor; at most the number of brokers.",
        )
        .default("3"),
    ]
}

fn debezium_common(port: &'static str) -> [Field; 6] {
    [
        Field::text(
            "topic.prefix",
            "Topic prefix",
            "Names the topics (<prefix>.<schema>.<table>); unique per connector, and changing it later means new topics and offsets.",
        )
        .required(),
        Field::text("database.hostname", "Database host", "The database server's host name.")
            .required(),
        Field::number("database.port", "Database port", "The database server's port.")
            .default(port),
        Field::text("database.user", "Database user", "A user with replication rights.")
            .required(),
        Field::text(
            "database.password",
            "Database password",
            "Write a config-provider reference such as ${file:/secrets/db.properties:password}; an inline password is never stored.",
        )
        .required()
        .secret(),
        Field::text(
            "table.include.list",
            "Tables",
            "Comma-separated regular expressions matched against whole table names; escape dots (public\\.orders).",
        ),
    ]
}

fn postgres() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(debezium_common("5432"));
    fields.extend([
        Field::text("database.dbname", "Database", "The database to capture.").required(),
        Field::choice(
            "plugin.name",
            "Logical decoding plugin",
            &["pgoutput", "decoderbufs"],
            "pgoutput is built into PostgreSQL 10+ and available on RDS and Cloud SQL; decoderbufs needs a server extension.",
        )
        .default("pgoutput"),
        Field::text(
            "slot.name",
            "Replication slot",
            "One slot per connector ([a-z0-9_], at most 63); two connectors on one slot fight over it.",
        )
        .default("debezium_{name_ident}"),
        Field::text(
            "publication.name",
            "Publication",
            "The publication pgoutput reads; one per connector.",
        )
        .default("dbz_{name_ident}"),
        Field::choice(
            "publication.autocreate.mode",
            "Publication creation",
            &["filtered", "all_tables", "disabled", "no_tables"],
            "filtered publishes only the captured tables; all_tables needs a superuser.",
        )
        .default("filtered"),
        Field::choice(
            "snapshot.mode",
            "Snapshot",
            PG_SNAPSHOT_MODES,
            "initial: snapshot the tables once, then stream changes.",
        )
        .default("initial"),
        Field::number(
            "heartbeat.interval.ms",
            "Heartbeat interval (ms)",
            "Lets the slot advance while the captured tables are quiet, so WAL does not pile up.",
        )
        .default("60000"),
    ]);
    fields.extend(converters(CONVERTERS));
    Template::new(Plugin::DebeziumPostgres, fields, &[])
}

fn mysql() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(debezium_common("3306"));
    fields.extend([
        Field::number(
            "database.server.id",
            "Server id",
            "A positive number no other connector or replica of this MySQL server uses.",
        )
        .required(),
        Field::text(
            "schema.history.internal.kafka.bootstrap.servers",
            "Schema history brokers",
            "The Kafka cluster holding the schema history topic.",
        )
        .required(),
        Field::text(
            "schema.history.internal.kafka.topic",
            "Schema history topic",
            "One per connector, with infinite retention and one partition.",
        )
        .required()
        .default("schema-changes.{topic.prefix}"),
        Field::choice(
            "snapshot.mode",
            "Snapshot",
            MYSQL_SNAPSHOT_MODES,
            "initial: snapshot the tables once, then read the binlog.",
        )
        .default("initial"),
        Field::choice(
            "snapshot.locking.mode",
            "Snapshot locking",
            &[
                "minimal",
                "extended",
                "minimal_percona",
                "minimal_percona_no_table_locks",
                "none",
            ],
            "minimal holds the global read lock only while reading the schema; none is unsafe while DDL runs.",
        )
        .default("minimal"),
    ]);
    fields.extend(converters(CONVERTERS));
    Template::new(Plugin::DebeziumMySql, fields, &[])
}

const KEY_MODES: &[&str] = &["none", "kafka", "record_key", "record_value"];

fn confluent_jdbc() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(sink_common());
    fields.extend([
        Field::text(
            "connection.url",
            "JDBC URL",
            "e.g. jdbc:postgresql://db:5432/shop",
        )
        .required(),
        Field::text(
            "connection.user",
            "Database user",
            "The user the sink writes as.",
        ),
        Field::text(
            "connection.password",
            "Database password",
            "Write a config-provider reference; an inline password is never stored.",
        )
        .secret(),
        Field::choice(
            "insert.mode",
            "Write mode",
            &["insert", "upsert", "update"],
            "upsert needs a primary key mode.",
        )
        .default("insert"),
        Field::choice(
            "pk.mode",
            "Primary key from",
            KEY_MODES,
            "record_key takes the key columns from the record key (needed for deletes).",
        )
        .default("none"),
        Field::text(
            "pk.fields",
            "Primary key fields",
            "Comma-separated; empty takes all.",
        ),
        Field::bool(
            "delete.enabled",
            "Delete on tombstone",
            "A null value deletes the row; needs pk.mode=record_key.",
        )
        .default("false"),
        Field::bool(
            "auto.create",
            "Create tables",
            "Create missing tables from the record schema.",
        )
        .default("false"),
        Field::bool(
            "auto.evolve",
            "Add columns",
            "Add columns the record schema gains.",
        )
        .default("false"),
        Field::text(
            "table.name.format",
            "Table name",
            "${topic} is replaced by the topic name; dots split catalog, schema and table.",
        )
        .default("${topic}"),
    ]);
    fields.extend(converters(CONVERTERS));
    Template::new(Plugin::ConfluentJdbcSink, fields, &[])
}

fn debezium_jdbc() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(sink_common());
    fields.extend([
        Field::text("connection.url", "JDBC URL", "e.g. jdbc:postgresql://db:5432/shop").required(),
        Field::text("connection.username", "Database user", "The user the sink writes as.")
            .required(),
        Field::text(
            "connection.password",
            "Database password",
            "Write a config-provider reference; an inline password is never stored.",
        )
        .secret(),
        Field::choice(
            "insert.mode",
            "Write mode",
            &["insert", "upsert", "update"],
            "upsert needs a primary key mode.",
        )
        .default("insert"),
        Field::choice(
            "primary.key.mode",
            "Primary key from",
            KEY_MODES,
            "record_key takes the key columns from the record key (needed for deletes).",
        )
        .default("none"),
        Field::text("primary.key.fields", "Primary key fields", "Comma-separated; empty takes all."),
        Field::bool(
            "delete.enabled",
            "Delete on tombstone",
            "A null value deletes the row; needs primary.key.mode=record_key.",
        )
        .default("false"),
        Field::choice(
            "schema.evolution",
            "Schema evolution",
            &["none", "basic"],
            "basic creates missing tables and adds columns; with none, inserts into a missing table fail.",
        )
        .default("basic"),
        Field::text(
            "collection.name.format",
            "Table name",
            "${topic} is replaced by the topic name.",
        )
        .default("${topic}"),
        Field::text("use.time.zone", "Time zone", "For temporal columns.").default("UTC"),
    ]);
    fields.extend(converters(CONVERTERS));
    Template::new(Plugin::DebeziumJdbcSink, fields, &[])
}

fn s3() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(sink_common());
    fields.extend([
        Field::text("s3.bucket.name", "Bucket", "The S3 bucket written to.").required(),
        Field::text("s3.region", "Region", "The bucket's region.").default("us-east-1"),
        Field::text(
            "aws.access.key.id",
            "Access key id",
            "Leave empty to use the worker's IAM role.",
        ),
        Field::text(
            "aws.secret.access.key",
            "Secret access key",
            "Write a config-provider reference; leave empty to use the worker's IAM role.",
        )
        .secret(),
        Field::choice(
            "format.class",
            "File format",
            &[
                "io.confluent.connect.s3.format.parquet.ParquetFormat",
                "io.confluent.connect.s3.format.avro.AvroFormat",
                "io.confluent.connect.s3.format.json.JsonFormat",
                "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            ],
            "Parquet and Avro need records with schemas.",
        )
        .default("io.confluent.connect.s3.format.parquet.ParquetFormat")
        .open(),
        Field::number(
            "flush.size",
            "Records per file",
            "A file is written after this many records.",
        )
        .required()
        .default("1000"),
        Field::number(
            "rotate.interval.ms",
            "Close files after (ms)",
            "Closes files on quiet topics too, so data does not wait for flush.size.",
        )
        .default("600000"),
        Field::choice(
            "partitioner.class",
            "Partitioning",
            &[
                "io.confluent.connect.storage.partitioner.DefaultPartitioner",
                "io.confluent.connect.storage.partitioner.HourlyPartitioner",
                "io.confluent.connect.storage.partitioner.DailyPartitioner",
                "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
                "io.confluent.connect.storage.partitioner.FieldPartitioner",
            ],
            "How objects are laid out in the bucket.",
        )
        .default("io.confluent.connect.storage.partitioner.DefaultPartitioner")
        .open(),
        Field::text(
            "path.format",
            "Path format",
            "For time-based partitioning: the date path of each object.",
        )
        .default("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"),
        Field::number(
            "partition.duration.ms",
            "Partition length (ms)",
            "For time-based partitioning.",
        )
        .default("3600000"),
        Field::text("locale", "Locale", "For time-based partitioning.").default("en-US"),
        Field::text(
            "timezone",
            "Time zone",
            "For time-based partitioning and scheduled rotation.",
        )
        .default("UTC"),
        Field::choice(
            "behavior.on.null.values",
            "On a tombstone",
            &["fail", "ignore", "write"],
            "fail stops the task on a null value; ignore skips it.",
        )
        .default("ignore"),
    ]);
    fields.extend(converters(CONVERTERS));
    Template::new(Plugin::S3Sink, fields, &[("storage.class", S3_STORAGE)])
}

fn snowflake() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(sink_common());
    fields.extend([
        Field::text(
            "snowflake.url.name",
            "Account URL",
            "e.g. myorg-account.snowflakecomputing.com:443",
        )
        .required(),
        Field::text("snowflake.user.name", "User", "The Snowflake user.").required(),
        Field::text(
            "snowflake.private.key",
            "Private key",
            "A config-provider reference to the PKCS8 key body, without the PEM header or line breaks.",
        )
        .required()
        .secret(),
        Field::text(
            "snowflake.private.key.passphrase",
            "Key passphrase",
            "For an encrypted key; a config-provider reference.",
        )
        .secret(),
        Field::text("snowflake.database.name", "Database", "The database written to.").required(),
        Field::text("snowflake.schema.name", "Schema", "The schema written to.").required(),
        Field::text("snowflake.role.name", "Role", "The role the connector uses.").required(),
        Field::choice(
            "snowflake.ingestion.method",
            "Ingestion",
            &["SNOWPIPE_STREAMING", "SNOWPIPE"],
            "SNOWPIPE needs a Snowflake value converter.",
        )
        .default("SNOWPIPE_STREAMING"),
        Field::bool(
            "snowflake.enable.schematization",
            "Columns from the schema",
            "Set explicitly: the default changed from false (v3) to true (v4).",
        )
        .default("false"),
    ]);
    fields.extend(converters(SNOWFLAKE_CONVERTERS));
    Template::new(Plugin::SnowflakeSink, fields, &[])
}

fn bigquery() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(sink_common());
    fields.extend([
        Field::text("project", "Project", "The Google Cloud project.").required(),
        Field::text("defaultDataset", "Dataset", "The BigQuery dataset written to.").required(),
        Field::choice(
            "keySource",
            "Credentials from",
            &["FILE", "JSON", "APPLICATION_DEFAULT"],
            "FILE: keyfile is a path; JSON: keyfile is the key itself; APPLICATION_DEFAULT: the worker's identity.",
        )
        .default("FILE"),
        Field::text(
            "keyfile",
            "Key file",
            "A config-provider reference to the key file's path or the key JSON.",
        )
        .secret(),
        Field::bool(
            "autoCreateTables",
            "Create tables",
            "Create missing tables from the record schema.",
        )
        .default("false"),
        Field::bool(
            "allowNewBigQueryFields",
            "Add columns",
            "Add columns the record schema gains.",
        )
        .default("false"),
        Field::bool(
            "sanitizeTopics",
            "Sanitise table names",
            "Turns dotted topic names (Debezium's prefix.schema.table) into valid table names.",
        )
        .default("true"),
        Field::bool("upsertEnabled", "Upserts", "Merge by key; needs kafkaKeyFieldName.")
            .default("false"),
        Field::bool("deleteEnabled", "Deletes", "Tombstones delete rows; needs kafkaKeyFieldName.")
            .default("false"),
        Field::text(
            "kafkaKeyFieldName",
            "Key field",
            "The column the record key is written to (for upserts and deletes).",
        ),
    ]);
    fields.extend(converters(CONVERTERS));
    Template::new(Plugin::BigQuerySink, fields, &[])
}

fn iceberg() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(sink_common());
    fields.extend([
        Field::text(
            "iceberg.tables",
            "Tables",
            "Comma-separated db.table names; or leave empty and route by a field.",
        ),
        Field::bool(
            "iceberg.tables.dynamic-enabled",
            "Route by field",
            "Each record names its table in the route field.",
        )
        .default("false"),
        Field::text(
            "iceberg.tables.route-field",
            "Route field",
            "The record field naming the table.",
        ),
        Field::choice(
            "iceberg.catalog.type",
            "Catalog",
            &["rest", "hive", "hadoop"],
            "The Iceberg catalog kind.",
        )
        .default("rest")
        .open(),
        Field::text(
            "iceberg.catalog.uri",
            "Catalog URI",
            "e.g. https://catalog:8181",
        )
        .required(),
        Field::text(
            "iceberg.catalog.warehouse",
            "Warehouse",
            "e.g. s3://bucket/warehouse",
        ),
        Field::text(
            "iceberg.control.topic",
            "Control topic",
            "One per connector; create it when brokers do not auto-create topics.",
        )
        .default("control-iceberg-{name}"),
        Field::number(
            "iceberg.control.commit.interval-ms",
            "Commit interval (ms)",
            "How often data files are committed to the table.",
        )
        .default("300000"),
    ]);
    fields.extend(converters(CONVERTERS));
    Template::new(Plugin::IcebergSink, fields, &[])
}

fn elasticsearch() -> Template {
    let mut fields = vec![name(), tasks("1")];
    fields.extend(sink_common());
    fields.extend([
        Field::text("connection.url", "Elasticsearch URL", "e.g. https://es:9200").required(),
        Field::text("connection.username", "User", "Give both user and password, or neither."),
        Field::text(
            "connection.password",
            "Password",
            "A config-provider reference; give both user and password, or neither.",
        )
        .secret(),
        Field::bool(
            "key.ignore",
            "Ignore keys",
            "true: document ids from topic+partition+offset; false: from the record key, which must not be null.",
        )
        .default("false"),
        Field::bool(
            "schema.ignore",
            "Ignore schemas",
            "true lets Elasticsearch infer the mapping (needed for schemaless JSON).",
        )
        .default("false"),
        Field::choice(
            "behavior.on.null.values",
            "On a tombstone",
            &["fail", "ignore", "delete"],
            "delete removes the document (not with data streams).",
        )
        .default("ignore"),
        Field::choice(
            "write.method",
            "Write method",
            &["insert", "upsert"],
            "upsert is not allowed with data streams.",
        )
        .default("insert"),
    ]);
    fields.extend(converters(CONVERTERS));
    Template::new(Plugin::ElasticsearchSink, fields, &[])
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
