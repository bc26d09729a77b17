//! The Debezium source connectors' forms (PostgreSQL, MySQL): `pgoutput`, a
//! filtered publication and a slot per connector where the plugin's own
//! defaults are the common mistake.

use super::{CONVERTERS, MYSQL_SNAPSHOT_MODES, PG_SNAPSHOT_MODES, converters, name, tasks};
use crate::connect::plugin::Plugin;
use crate::connect::template::{Field, Template};

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

pub(super) fn postgres() -> Template {
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

pub(super) fn mysql() -> Template {
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
