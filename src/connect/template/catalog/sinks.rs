//! The sink connectors' forms (JDBC, S3, Snowflake, BigQuery, Iceberg,
//! Elasticsearch), each with its topics and a dead letter queue.

use super::{CONVERTERS, S3_STORAGE, SNOWFLAKE_CONVERTERS, converters, name, tasks};
use crate::connect::plugin::Plugin;
use crate::connect::template::{Field, Template};

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

const KEY_MODES: &[&str] = &["none", "kafka", "record_key", "record_value"];

pub(super) fn confluent_jdbc() -> Template {
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

pub(super) fn debezium_jdbc() -> Template {
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

pub(super) fn s3() -> Template {
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

pub(super) fn snowflake() -> Template {
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

pub(super) fn bigquery() -> Template {
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

pub(super) fn iceberg() -> Template {
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

pub(super) fn elasticsearch() -> Template {
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
