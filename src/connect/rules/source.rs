//! Rules for Debezium's PostgreSQL and MySQL sources: one task, a unique
//! topic prefix, and the server-side resources (replication slot,
//! publication, server id, schema history topic) that two connectors must
//! never share.

use super::{Draft, unused};
use crate::connect::config::{Config, TASKS_MAX};
use crate::connect::finding::{Finding, Fix, Rule};
use crate::connect::plugin::Plugin;
use std::collections::BTreeSet;

const PREFIX: &str = "topic.prefix";
const SLOT: &str = "slot.name";
const PUBLICATION: &str = "publication.name";
const SERVER_ID: &str = "database.server.id";
const HISTORY: &str = "schema.history.internal.kafka.topic";

pub(super) fn check(d: &Draft, out: &mut Vec<Finding>) {
    if d.tasks().is_some_and(|t| t > 1) {
        out.push(
            Finding::warning(
                Rule::SingleTask,
                TASKS_MAX,
                "Debezium's PostgreSQL and MySQL connectors run one task; the others stay idle."
                    .into(),
            )
            .with_fix(Fix::set(TASKS_MAX, "1")),
        );
    }
    prefix(d, out);
    snapshot(d, out);
    lists(d, out);
    match d.plugin {
        Plugin::DebeziumPostgres => postgres(d, out),
        Plugin::DebeziumMySql => mysql(d, out),
        _ => {}
    }
}

/// Debezium 3 removed `never` and `exported` (DBZ-8171) and renamed
/// `schema_only` and `schema_only_recovery`: the value that replaces each.
fn replacement(plugin: Plugin, mode: &str) -> Option<&'static str> {
    match (plugin, mode) {
        (_, "never" | "schema_only") => Some("no_data"),
        (_, "exported") => Some("initial"),
        (Plugin::DebeziumMySql, "schema_only_recovery") => Some("recovery"),
        (Plugin::DebeziumPostgres, "schema_only_recovery") => Some("when_needed"),
        _ => None,
    }
}

/// Whether `snapshot.mode` holds a removed value, which [`snapshot`]
/// reports with its replacement instead of a plain "not allowed".
pub(super) fn is_removed_snapshot_mode(d: &Draft, key: &str, value: &str) -> bool {
    key == "snapshot.mode" && replacement(d.plugin, value).is_some()
}

fn snapshot(d: &Draft, out: &mut Vec<Finding>) {
    let Some(mode) = d.get("snapshot.mode") else {
        return;
    };
    if let Some(new) = replacement(d.plugin, mode) {
        out.push(
            Finding::error(
                Rule::RemovedSnapshotMode,
                "snapshot.mode",
                format!("snapshot.mode={mode} was removed in Debezium 3; {new} does the same."),
            )
            .with_fix(Fix::set("snapshot.mode", new)),
        );
    }
}

/// Debezium's topic prefixes take `[A-Za-z0-9._-]`.
fn prefix_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

fn prefix(d: &Draft, out: &mut Vec<Finding>) {
    let Some(prefix) = d.get(PREFIX) else { return };
    if !prefix.chars().all(prefix_char) {
        let clean: String = prefix
            .chars()
            .map(|c| if prefix_char(c) { c } else { '_' })
            .collect();
        out.push(
            Finding::error(
                Rule::TopicPrefixInvalid,
                PREFIX,
                "topic.prefix may hold only letters, digits, '.', '_' and '-'.".into(),
            )
            .with_fix(Fix::set(PREFIX, clean)),
        );
    }
    let taken: BTreeSet<&str> = d
        .others()
        .filter(|c| c.plugin().is_ok_and(Plugin::is_debezium_source))
        .filter_map(|c| c.value(PREFIX))
        .collect();
    if taken.contains(prefix) {
        out.push(
            Finding::error(
                Rule::TopicPrefixShared,
                PREFIX,
                format!(
                    "Another connector of this cluster already writes topics under {prefix}; the two would mix their changes."
                ),
            )
            .with_fix(Fix::set(PREFIX, unused(&d.ident(), '_', &taken))),
        );
    }
    if let Some(old) = d.running().and_then(|c| c.value(PREFIX))
        && old != prefix
    {
        out.push(
            Finding::warning(
                Rule::TopicPrefixChanged,
                PREFIX,
                format!(
                    "The running connector writes under {old}: a new prefix means new topics and offsets, and consumers of the old topics stop getting changes."
                ),
            )
            .with_fix(Fix::set(PREFIX, old)),
        );
    }
}

/// Include and exclude lists of one kind together are refused; a dot left
/// unescaped in a table list matches any character.
fn lists(d: &Draft, out: &mut Vec<Finding>) {
    for kind in ["table", "schema", "database", "column"] {
        let include = format!("{kind}.include.list");
        let exclude = format!("{kind}.exclude.list");
        if d.get(&include).is_some() && d.get(&exclude).is_some() {
            out.push(
                Finding::error(
                    Rule::IncludeAndExclude,
                    &exclude,
                    format!("{include} and {exclude} cannot both be set; the include list already says what is captured."),
                )
                .with_fix(Fix::remove(&exclude)),
            );
        }
    }
    let entries = d.config.list("table.include.list");
    let plain = |e: &str| {
        e.contains('.')
            && !e.contains('\\')
            && e.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '$'))
    };
    if entries.iter().any(|e| plain(e)) {
        let escaped: Vec<String> = entries
            .iter()
            .map(|e| {
                if plain(e) {
                    e.replace('.', "\\.")
                } else {
                    (*e).to_owned()
                }
            })
            .collect();
        out.push(
            Finding::info(
                Rule::UnescapedDot,
                "table.include.list",
                "Entries are regular expressions: an unescaped '.' matches any character (public.orders also matches publicXorders).".into(),
            )
            .with_fix(Fix::set("table.include.list", escaped.join(","))),
        );
    }
}

/// The PostgreSQL server a connector reads, for resources that are per
/// server (slots) or per database (publications).
fn pg_server(c: &Config) -> (Option<&str>, &str) {
    (
        c.value("database.hostname"),
        c.value("database.port").unwrap_or("5432"),
    )
}

fn postgres(d: &Draft, out: &mut Vec<Finding>) {
    match d.get("plugin.name") {
        None => out.push(
            Finding::error(
                Rule::DecoderbufsDefault,
                "plugin.name",
                "plugin.name is not set, so Debezium uses decoderbufs, an extension RDS, Cloud SQL and stock PostgreSQL do not have; use pgoutput.".into(),
            )
            .with_fix(Fix::set("plugin.name", "pgoutput")),
        ),
        Some("decoderbufs") => out.push(
            Finding::warning(
                Rule::DecoderbufsDefault,
                "plugin.name",
                "decoderbufs needs a server extension that managed PostgreSQL does not offer; pgoutput is built in.".into(),
            )
            .with_fix(Fix::set("plugin.name", "pgoutput")),
        ),
        Some(_) => {}
    }
    let server = pg_server(d.config);
    let same_server: Vec<&Config> = d
        .others_of(Plugin::DebeziumPostgres)
        .filter(|c| server.0.is_some() && pg_server(c) == server)
        .collect();

    let slot = d.effective(SLOT, "debezium");
    let slot_ok = !slot.is_empty()
        && slot.len() <= 63
        && slot
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let taken: BTreeSet<&str> = same_server
        .iter()
        .map(|c| c.value(SLOT).unwrap_or("debezium"))
        .collect();
    let fresh = || unused(&format!("debezium_{}", d.ident()), '_', &taken);
    if !slot_ok {
        out.push(
            Finding::error(
                Rule::SlotNameInvalid,
                SLOT,
                "A replication slot name may hold only lower-case letters, digits and '_', at most 63.".into(),
            )
            .with_fix(Fix::set(SLOT, fresh())),
        );
    } else if taken.contains(slot) {
        out.push(
            Finding::error(
                Rule::SlotShared,
                SLOT,
                format!(
                    "Another connector reads this PostgreSQL server through the slot {slot}; only one can hold it (\"replication slot is active for PID …\"), and a slot left behind keeps WAL until the disk fills."
                ),
            )
            .with_fix(Fix::set(SLOT, fresh())),
        );
    }

    let mode = d.effective("publication.autocreate.mode", "all_tables");
    if mode == "all_tables" {
        out.push(
            Finding::warning(
                Rule::PublicationAllTables,
                "publication.autocreate.mode",
                "publication.autocreate.mode=all_tables (the default) needs a superuser to create the publication; filtered publishes only the captured tables.".into(),
            )
            .with_fix(Fix::set("publication.autocreate.mode", "filtered")),
        );
    }
    let db = d.get("database.dbname");
    let publication = d.effective(PUBLICATION, "dbz_publication");
    let taken: BTreeSet<&str> = same_server
        .iter()
        .filter(|c| c.value("database.dbname") == db)
        .map(|c| c.value(PUBLICATION).unwrap_or("dbz_publication"))
        .collect();
    if taken.contains(publication) {
        // In filtered mode each connector rewrites the publication to its
        // own tables at start, taking the other's away.
        let f = Finding::new(
            Rule::PublicationShared,
            if mode == "filtered" {
                crate::connect::finding::Severity::Error
            } else {
                crate::connect::finding::Severity::Warning
            },
            PUBLICATION,
            format!(
                "Another connector on this database uses the publication {publication}; each connector should have its own."
            ),
        );
        out.push(f.with_fix(Fix::set(
            PUBLICATION,
            unused(&format!("dbz_{}", d.ident()), '_', &taken),
        )));
    }

    if d.get("heartbeat.interval.ms").is_none_or(|v| v == "0") {
        out.push(
            Finding::info(
                Rule::HeartbeatOff,
                "heartbeat.interval.ms",
                "Without heartbeats the slot does not advance while the captured tables are quiet, and the server keeps WAL for it.".into(),
            )
            .with_fix(Fix::set("heartbeat.interval.ms", "60000")),
        );
    }
}

/// A server id no other MySQL connector of the cluster uses: one above the
/// largest (MySQL's own ids are usually small, so start well above them).
pub(super) fn unused_server_id(d: &Draft) -> u64 {
    d.others_of(Plugin::DebeziumMySql)
        .filter_map(|c| c.value(SERVER_ID)?.parse::<u64>().ok())
        .max()
        .map_or(184_054, |m| m.saturating_add(1).max(184_054))
}

fn mysql(d: &Draft, out: &mut Vec<Finding>) {
    if let Some(id) = d.get(SERVER_ID) {
        match id.parse::<i64>() {
            Ok(n) if n < 1 => out.push(
                Finding::error(
                    Rule::ServerIdInvalid,
                    SERVER_ID,
                    "database.server.id must be a positive number.".into(),
                )
                .with_fix(Fix::set(SERVER_ID, unused_server_id(d).to_string())),
            ),
            Ok(_)
                if d.others_of(Plugin::DebeziumMySql)
                    .any(|c| c.value(SERVER_ID) == Some(id)) =>
            {
                out.push(
                    Finding::error(
                        Rule::ServerIdShared,
                        SERVER_ID,
                        format!("Another connector of this cluster already uses server id {id}; MySQL disconnects one of two clients with the same id."),
                    )
                    .with_fix(Fix::set(SERVER_ID, unused_server_id(d).to_string())),
                );
            }
            _ => {}
        }
    }
    if let Some(topic) = d.get(HISTORY) {
        let taken: BTreeSet<&str> = d.others().filter_map(|c| c.value(HISTORY)).collect();
        if taken.contains(topic) {
            let base = match d.get(PREFIX) {
                Some(p) => format!("schema-changes.{p}"),
                None => format!("schema-changes.{}", d.ident()),
            };
            out.push(
                Finding::error(
                    Rule::SchemaHistoryShared,
                    HISTORY,
                    format!("Another connector keeps its schema history in {topic}; each connector needs its own, or both recover the wrong table definitions."),
                )
                .with_fix(Fix::set(HISTORY, unused(&base, '-', &taken))),
            );
        }
    }
}
