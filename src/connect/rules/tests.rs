//! Every template as drafted validates without errors; every listed
//! mistake is found, and its fix (where one exists) removes it.

use super::*;
use crate::connect::finding::{Severity, may_propose};
use crate::connect::secret::MASK;
use serde_json::{Value, json};

const REGISTRY: &str = "http://registry:8081";
const BOOTSTRAP: &str = "kafka-1:9092";

fn topics() -> BTreeMap<String, u32> {
    [
        ("orders", 3),
        ("shop.public.orders", 6),
        ("dlq.j", 1),
        ("payments", 2),
    ]
    .into_iter()
    .map(|(t, p)| (t.to_owned(), p))
    .collect()
}

fn ctx<'a>(connectors: &'a [Config], topics: &'a BTreeMap<String, u32>) -> Context<'a> {
    Context {
        connectors,
        topics: Some(topics),
        registry_url: Some(REGISTRY),
        bootstrap_servers: Some(BOOTSTRAP),
        brokers: Some(3),
        ..Context::default()
    }
}

/// What each form needs besides its defaults.
fn required(plugin: Plugin) -> Vec<(&'static str, Value)> {
    let mut v = vec![
        ("name", json!("j")),
        ("value.converter.schema.registry.url", json!(REGISTRY)),
    ];
    let pw = json!("${file:/secrets/j.properties:password}");
    v.extend(match plugin {
        Plugin::DebeziumPostgres => vec![
            ("topic.prefix", json!("shop")),
            ("database.hostname", json!("pg")),
            ("database.user", json!("dbz")),
            ("database.password", pw),
            ("database.dbname", json!("shop")),
            ("table.include.list", json!("public\\.orders")),
        ],
        Plugin::DebeziumMySql => vec![
            ("topic.prefix", json!("erp")),
            ("database.hostname", json!("mysql")),
            ("database.user", json!("dbz")),
            ("database.password", pw),
            ("database.server.id", json!(184054)),
            (
                "schema.history.internal.kafka.bootstrap.servers",
                json!(BOOTSTRAP),
            ),
        ],
        Plugin::ConfluentJdbcSink => vec![
            ("topics", json!("orders")),
            ("connection.url", json!("jdbc:postgresql://dw/dw")),
            ("connection.password", pw),
        ],
        Plugin::DebeziumJdbcSink => vec![
            ("topics", json!("orders")),
            ("connection.url", json!("jdbc:postgresql://dw/dw")),
            ("connection.username", json!("sink")),
        ],
        Plugin::S3Sink => vec![
            ("topics", json!("orders")),
            ("s3.bucket.name", json!("lake")),
        ],
        Plugin::SnowflakeSink => vec![
            ("topics", json!("orders")),
            (
                "snowflake.url.name",
                json!("acct.snowflakecomputing.com:443"),
            ),
            ("snowflake.user.name", json!("kafka")),
            (
                "snowflake.private.key",
                json!("${file:/secrets/j.properties:key}"),
            ),
            ("snowflake.database.name", json!("DB")),
            ("snowflake.schema.name", json!("RAW")),
            ("snowflake.role.name", json!("KAFKA")),
        ],
        Plugin::BigQuerySink => vec![
            ("topics", json!("orders")),
            ("project", json!("p")),
            ("defaultDataset", json!("d")),
            ("keyfile", json!("${file:/secrets/j.properties:keyfile}")),
        ],
        Plugin::IcebergSink => vec![
            ("topics", json!("orders")),
            ("iceberg.tables", json!("db.orders")),
            ("iceberg.catalog.uri", json!("https://catalog:8181")),
        ],
        Plugin::ElasticsearchSink => vec![
            ("topics", json!("orders")),
            ("connection.url", json!("https://es:9200")),
        ],
    });
    v
}

fn drafted(plugin: Plugin) -> Config {
    let values = required(plugin)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    template(plugin)
        .draft(&values, &Config::new())
        .unwrap_or_else(|e| panic!("{plugin:?}: {e}"))
}

#[test]
fn every_template_as_drafted_validates_without_errors_or_warnings() {
    let t = topics();
    for plugin in Plugin::ALL {
        let c = drafted(plugin);
        let findings = validate(&c, &ctx(&[], &t));
        let serious: Vec<_> = findings
            .iter()
            .filter(|f| f.severity != Severity::Info)
            .collect();
        assert!(serious.is_empty(), "{plugin:?}: {serious:#?}");
        assert!(may_propose(&findings));
    }
}

/// A mistake: a change to a drafted config, the context it needs, the rule
/// that must find it and whether a fix exists.
struct Mistake {
    plugin: Plugin,
    change: Vec<(&'static str, Option<&'static str>)>,
    others: Vec<Config>,
    brokers: Option<u32>,
    rule: Rule,
    fixable: bool,
}

fn mistake(plugin: Plugin, change: &[(&'static str, Option<&'static str>)], rule: Rule) -> Mistake {
    Mistake {
        plugin,
        change: change.to_vec(),
        others: Vec::new(),
        brokers: Some(3),
        rule,
        fixable: true,
    }
}

impl Mistake {
    fn with_other(mut self, pairs: &[(&str, &str)]) -> Mistake {
        self.others.push(pairs.iter().copied().collect());
        self
    }

    fn unfixable(mut self) -> Mistake {
        self.fixable = false;
        self
    }

    fn brokers(mut self, n: u32) -> Mistake {
        self.brokers = Some(n);
        self
    }

    fn check(&self) {
        let mut config = drafted(self.plugin);
        for (k, v) in &self.change {
            match v {
                Some(v) => config.set(*k, *v),
                None => {
                    config.remove(k);
                }
            }
        }
        let t = topics();
        let mut context = ctx(&self.others, &t);
        context.brokers = self.brokers;
        let found: Vec<Finding> = validate(&config, &context)
            .into_iter()
            .filter(|f| f.rule == self.rule)
            .collect();
        let label = format!("{:?} {:?} {:?}", self.plugin, self.rule, self.change);
        assert!(!found.is_empty(), "{label}: not found");
        for f in &found {
            assert!(!f.sentence.is_empty());
            match (&f.fix, self.fixable) {
                (Some(fix), true) => {
                    let fixed = fix.apply(&config);
                    let again = validate(&fixed, &context);
                    assert!(
                        !again
                            .iter()
                            .any(|g| g.rule == self.rule && g.property == f.property),
                        "{label}: the fix {fix:?} did not remove it: {again:#?}"
                    );
                }
                (None, false) => {}
                (fix, _) => panic!("{label}: fix {fix:?}, expected fixable={}", self.fixable),
            }
        }
    }
}

const PG: Plugin = Plugin::DebeziumPostgres;
const MY: Plugin = Plugin::DebeziumMySql;
const CJ: Plugin = Plugin::ConfluentJdbcSink;
const DJ: Plugin = Plugin::DebeziumJdbcSink;
const S3: Plugin = Plugin::S3Sink;
const SF: Plugin = Plugin::SnowflakeSink;
const BQ: Plugin = Plugin::BigQuerySink;
const IC: Plugin = Plugin::IcebergSink;
const ES: Plugin = Plugin::ElasticsearchSink;

fn pg_other(pairs: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        ("connector.class", PG.class()),
        ("name", "other"),
        ("database.hostname", "pg"),
        ("database.dbname", "shop"),
        ("topic.prefix", "other"),
        ("slot.name", "other_slot"),
        ("publication.name", "other_pub"),
    ];
    v.extend_from_slice(pairs);
    v
}

#[test]
fn required_properties_and_allowed_values() {
    mistake(S3, &[("storage.class", None)], Rule::Required).check();
    mistake(
        MY,
        &[("schema.history.internal.kafka.bootstrap.servers", None)],
        Rule::Required,
    )
    .check();
    mistake(MY, &[("database.server.id", None)], Rule::Required).check();
    mistake(
        MY,
        &[("schema.history.internal.kafka.topic", None)],
        Rule::Required,
    )
    .check();
    mistake(PG, &[("database.hostname", None)], Rule::Required)
        .unfixable()
        .check();
    mistake(PG, &[("name", None)], Rule::Required)
        .unfixable()
        .check();
    mistake(
        PG,
        &[("snapshot.mode", Some("sometimes"))],
        Rule::AllowedValue,
    )
    .check();
    mistake(ES, &[("write.method", Some("merge"))], Rule::AllowedValue).check();
    mistake(CJ, &[("tasks.max", Some("0"))], Rule::AllowedValue).check();
    mistake(CJ, &[("tasks.max", Some("many"))], Rule::NotANumber).check();
    mistake(CJ, &[("delete.enabled", Some("yes"))], Rule::NotABoolean).check();
}

#[test]
fn secrets_overrides_converters_transforms_and_tolerance() {
    mistake(
        PG,
        &[("database.password", Some("hunter2"))],
        Rule::InlineSecret,
    )
    .check();
    mistake(
        ES,
        &[("connection.url", Some("https://elastic:changeme@es:9200"))],
        Rule::InlineSecret,
    )
    .check();
    mistake(PG, &[("database.password", Some(MASK))], Rule::MaskedValue).check();
    mistake(
        CJ,
        &[("connection.password", Some("[hidden]"))],
        Rule::MaskedValue,
    )
    .check();
    mistake(
        CJ,
        &[(
            "consumer.override.sasl.jaas.config",
            Some("${file:/s:jaas}"),
        )],
        Rule::ClientOverride,
    )
    .check();
    mistake(
        PG,
        &[("producer.override.bootstrap.servers", Some("other:9092"))],
        Rule::ClientOverride,
    )
    .check();
    mistake(
        PG,
        &[("value.converter.schema.registry.url", None)],
        Rule::ConverterWithoutRegistry,
    )
    .check();
    mistake(
        S3,
        &[("key.converter.schema.registry.url", None)],
        Rule::ConverterWithoutRegistry,
    )
    .check();
    mistake(
        PG,
        &[("transforms", Some("unwrap"))],
        Rule::TransformWithoutType,
    )
    .check();
    mistake(
        PG,
        &[
            ("transforms", Some("unwrap,route")),
            (
                "transforms.route.type",
                Some("org.apache.kafka.connect.transforms.RegexRouter"),
            ),
        ],
        Rule::TransformWithoutType,
    )
    .check();
    mistake(
        CJ,
        &[("errors.deadletterqueue.topic.name", None)],
        Rule::ErrorsToleranceWithoutDlq,
    )
    .check();
    mistake(
        PG,
        &[("errors.tolerance", Some("all"))],
        Rule::ErrorsToleranceWithoutDlq,
    )
    .check();
}

#[test]
fn sink_topics_and_dead_letters() {
    mistake(
        CJ,
        &[("topics.regex", Some("orders.*"))],
        Rule::TopicsAndRegex,
    )
    .check();
    mistake(CJ, &[("topics", None)], Rule::NoTopics)
        .unfixable()
        .check();
    mistake(CJ, &[("topics", Some("orders,dlq.j"))], Rule::DlqInTopics).check();
    mistake(
        CJ,
        &[("topics", None), ("topics.regex", Some("orders|dlq\\..*"))],
        Rule::DlqInTopics,
    )
    .check();
    mistake(
        CJ,
        &[("topics", None), ("topics.regex", Some(".*"))],
        Rule::DlqInTopics,
    )
    .unfixable()
    .check();
    mistake(S3, &[], Rule::DlqReplicationFactor)
        .brokers(1)
        .check();
    mistake(CJ, &[("topics", Some("orders,nope"))], Rule::MissingTopic).check();
    mistake(CJ, &[("topics", Some("nope"))], Rule::MissingTopic)
        .unfixable()
        .check();
    mistake(
        CJ,
        &[("topics", None), ("topics.regex", Some("zzz.*"))],
        Rule::RegexMatchesNothing,
    )
    .unfixable()
    .check();
    mistake(CJ, &[("tasks.max", Some("10"))], Rule::TasksOverPartitions).check();
    mistake(
        CJ,
        &[
            ("topics", None),
            ("topics.regex", Some("orders|payments")),
            ("tasks.max", Some("8")),
        ],
        Rule::TasksOverPartitions,
    )
    .check();
    mistake(
        DJ,
        &[("topics", Some("orders,shop"))],
        Rule::SchemaChangeTopic,
    )
    .with_other(&pg_other(&[("topic.prefix", "shop")]))
    .check();
}

#[test]
fn debezium_sources() {
    mistake(PG, &[("tasks.max", Some("4"))], Rule::SingleTask).check();
    mistake(
        PG,
        &[("topic.prefix", Some("shop orders"))],
        Rule::TopicPrefixInvalid,
    )
    .check();
    mistake(PG, &[], Rule::TopicPrefixShared)
        .with_other(&pg_other(&[
            ("topic.prefix", "shop"),
            ("database.hostname", "elsewhere"),
        ]))
        .check();
    mistake(MY, &[], Rule::TopicPrefixShared)
        .with_other(&pg_other(&[("topic.prefix", "erp")]))
        .check();
    let running = [
        ("connector.class", PG.class()),
        ("name", "j"),
        ("topic.prefix", "old"),
    ];
    mistake(PG, &[], Rule::TopicPrefixChanged)
        .with_other(&running)
        .check();
    mistake(
        PG,
        &[("snapshot.mode", Some("never"))],
        Rule::RemovedSnapshotMode,
    )
    .check();
    mistake(
        PG,
        &[("snapshot.mode", Some("exported"))],
        Rule::RemovedSnapshotMode,
    )
    .check();
    mistake(
        MY,
        &[("snapshot.mode", Some("schema_only"))],
        Rule::RemovedSnapshotMode,
    )
    .check();
    mistake(
        MY,
        &[("snapshot.mode", Some("schema_only_recovery"))],
        Rule::RemovedSnapshotMode,
    )
    .check();
    mistake(
        PG,
        &[("table.exclude.list", Some("public\\.audit"))],
        Rule::IncludeAndExclude,
    )
    .check();
    mistake(
        DJ,
        &[
            ("field.include.list", Some("a")),
            ("field.exclude.list", Some("b")),
        ],
        Rule::IncludeAndExclude,
    )
    .check();
    mistake(
        PG,
        &[("table.include.list", Some("public.orders"))],
        Rule::UnescapedDot,
    )
    .check();
}

#[test]
fn postgres_slots_publications_and_plugins() {
    mistake(PG, &[("heartbeat.interval.ms", None)], Rule::HeartbeatOff).check();
    mistake(
        PG,
        &[("heartbeat.interval.ms", Some("0"))],
        Rule::HeartbeatOff,
    )
    .check();
    mistake(PG, &[("plugin.name", None)], Rule::DecoderbufsDefault).check();
    mistake(
        PG,
        &[("plugin.name", Some("decoderbufs"))],
        Rule::DecoderbufsDefault,
    )
    .check();
    mistake(
        PG,
        &[("slot.name", Some("Orders-Slot"))],
        Rule::SlotNameInvalid,
    )
    .check();
    mistake(PG, &[("slot.name", Some("debezium_j"))], Rule::SlotShared)
        .with_other(&pg_other(&[("slot.name", "debezium_j")]))
        .check();
    // Both on the default slot name.
    let mut other = pg_other(&[]);
    other.retain(|(k, _)| *k != "slot.name");
    mistake(PG, &[("slot.name", None)], Rule::SlotShared)
        .with_other(&other)
        .check();
    mistake(
        PG,
        &[("publication.autocreate.mode", None)],
        Rule::PublicationAllTables,
    )
    .check();
    mistake(
        PG,
        &[("publication.name", Some("shared"))],
        Rule::PublicationShared,
    )
    .with_other(&pg_other(&[("publication.name", "shared")]))
    .check();
}

#[test]
fn mysql_server_ids_and_schema_history() {
    mistake(
        MY,
        &[("database.server.id", Some("0"))],
        Rule::ServerIdInvalid,
    )
    .check();
    let other = [
        ("connector.class", MY.class()),
        ("name", "other"),
        ("database.server.id", "184054"),
        ("topic.prefix", "other"),
        (
            "schema.history.internal.kafka.topic",
            "schema-changes.other",
        ),
    ];
    mistake(MY, &[], Rule::ServerIdShared)
        .with_other(&other)
        .check();
    let other = [
        ("connector.class", MY.class()),
        ("name", "other"),
        ("database.server.id", "1"),
        ("topic.prefix", "other"),
        ("schema.history.internal.kafka.topic", "schema-changes.erp"),
    ];
    mistake(MY, &[], Rule::SchemaHistoryShared)
        .with_other(&other)
        .check();
}

#[test]
fn jdbc_sinks() {
    mistake(
        CJ,
        &[("insert.mode", Some("upsert"))],
        Rule::UpsertWithoutKey,
    )
    .check();
    mistake(
        DJ,
        &[("insert.mode", Some("upsert"))],
        Rule::UpsertWithoutKey,
    )
    .check();
    mistake(
        CJ,
        &[("delete.enabled", Some("true"))],
        Rule::DeleteWithoutRecordKey,
    )
    .check();
    mistake(
        DJ,
        &[
            ("delete.enabled", Some("true")),
            ("primary.key.mode", Some("record_value")),
        ],
        Rule::DeleteWithoutRecordKey,
    )
    .check();
}

#[test]
fn object_stores_and_warehouses() {
    mistake(
        S3,
        &[("rotate.interval.ms", None)],
        Rule::FlushWithoutRotation,
    )
    .check();
    mistake(
        S3,
        &[
            (
                "partitioner.class",
                Some("io.confluent.connect.storage.partitioner.TimeBasedPartitioner"),
            ),
            ("path.format", None),
            ("timezone", None),
        ],
        Rule::TimePartitionerSettings,
    )
    .check();
    mistake(
        S3,
        &[
            ("rotate.schedule.interval.ms", Some("3600000")),
            ("timezone", None),
        ],
        Rule::TimePartitionerSettings,
    )
    .check();
    mistake(
        S3,
        &[("behavior.on.null.values", Some("fail"))],
        Rule::NullValuesFail,
    )
    .check();
    mistake(
        ES,
        &[("behavior.on.null.values", None)],
        Rule::NullValuesFail,
    )
    .check();
    mistake(SF, &[("name", Some("orders sink"))], Rule::SnowflakeName)
        .unfixable()
        .check();
    mistake(
        SF,
        &[(
            "snowflake.private.key",
            Some("-----BEGIN PRIVATE KEY-----\nMIIE"),
        )],
        Rule::SnowflakeKeyFormat,
    )
    .unfixable()
    .check();
    mistake(
        SF,
        &[("snowflake.ingestion.method", Some("SNOWPIPE"))],
        Rule::SnowpipeConverter,
    )
    .check();
    mistake(
        SF,
        &[("snowflake.enable.schematization", None)],
        Rule::SchematizationImplicit,
    )
    .check();
    mistake(BQ, &[("keyfile", None)], Rule::KeyfileSource).check();
    mistake(
        BQ,
        &[("keyfile", Some("{\"type\":\"service_account\"}"))],
        Rule::KeyfileSource,
    )
    .check();
    mistake(BQ, &[("upsertEnabled", Some("true"))], Rule::UpsertKeyField).check();
    mistake(
        BQ,
        &[
            ("deleteEnabled", Some("true")),
            ("kafkaKeyFieldName", Some("k")),
            ("mergeIntervalMs", Some("-1")),
            ("mergeRecordsThreshold", Some("-1")),
        ],
        Rule::MergeNeverRuns,
    )
    .check();
    mistake(
        BQ,
        &[
            ("upsertEnabled", Some("true")),
            ("kafkaKeyFieldName", Some("k")),
            ("useStorageWriteApi", Some("true")),
        ],
        Rule::UpsertWithStorageWrite,
    )
    .check();
    mistake(
        BQ,
        &[
            ("sanitizeTopics", Some("false")),
            ("topics", Some("shop.public.orders")),
        ],
        Rule::DottedTopicNames,
    )
    .check();
    mistake(
        BQ,
        &[
            ("sanitizeTopics", None),
            ("topics", None),
            ("topics.regex", Some("shop\\..*")),
        ],
        Rule::DottedTopicNames,
    )
    .check();
}

#[test]
fn iceberg_and_elasticsearch() {
    mistake(IC, &[("iceberg.catalog.type", None)], Rule::IcebergCatalog).check();
    mistake(
        IC,
        &[
            ("iceberg.catalog.type", None),
            ("iceberg.catalog.uri", Some("file:///tmp")),
        ],
        Rule::IcebergCatalog,
    )
    .unfixable()
    .check();
    mistake(
        IC,
        &[("iceberg.tables.dynamic-enabled", Some("true"))],
        Rule::IcebergTables,
    )
    .check();
    mistake(IC, &[("iceberg.tables", None)], Rule::IcebergTables)
        .unfixable()
        .check();
    mistake(
        IC,
        &[
            ("iceberg.tables", None),
            ("iceberg.tables.dynamic-enabled", Some("true")),
        ],
        Rule::IcebergTables,
    )
    .unfixable()
    .check();
    mistake(
        IC,
        &[("iceberg.control.topic", None)],
        Rule::ControlTopicShared,
    )
    .with_other(&[("connector.class", IC.class()), ("name", "other")])
    .check();
    mistake(
        IC,
        &[("iceberg.tables.upsert-mode-enabled", Some("true"))],
        Rule::UpsertOnAppendOnly,
    )
    .check();
    mistake(
        ES,
        &[("connection.username", Some("elastic"))],
        Rule::HalfCredentials,
    )
    .check();
    mistake(
        ES,
        &[("connection.password", Some("${env:ES_PW}"))],
        Rule::HalfCredentials,
    )
    .check();
    mistake(
        ES,
        &[("topic.key.ignore", Some("orders"))],
        Rule::IgnorePair,
    )
    .check();
    mistake(
        ES,
        &[
            ("data.stream.type", Some("logs")),
            ("behavior.on.null.values", Some("delete")),
        ],
        Rule::DataStreamNulls,
    )
    .check();
    mistake(
        ES,
        &[
            ("data.stream.type", Some("logs")),
            ("write.method", Some("upsert")),
        ],
        Rule::DataStreamUpsert,
    )
    .check();
}

#[test]
fn a_draft_with_an_error_cannot_be_proposed() {
    let t = topics();
    let mut c = drafted(PG);
    c.remove("plugin.name");
    let findings = validate(&c, &ctx(&[], &t));
    assert!(!may_propose(&findings));
    let fix = findings
        .iter()
        .find(|f| f.rule == Rule::DecoderbufsDefault)
        .and_then(|f| f.fix.clone())
        .expect("fix");
    assert!(may_propose(&validate(&fix.apply(&c), &ctx(&[], &t))));
}

#[test]
fn an_uncovered_class_is_one_error() {
    let c: Config = [("connector.class", "com.example.X")].into_iter().collect();
    let f = validate(&c, &Context::default());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].property, CLASS);
    assert_eq!(f[0].severity, Severity::Error);
}

#[test]
fn without_the_topic_list_no_topic_rule_runs() {
    let mut c = drafted(CJ);
    c.set("topics", "nope");
    c.set("tasks.max", "50");
    let f = validate(&c, &Context::default());
    assert!(!f.iter().any(|f| matches!(
        f.rule,
        Rule::MissingTopic | Rule::TasksOverPartitions | Rule::RegexMatchesNothing
    )));
}

#[test]
fn findings_come_errors_first_and_never_quote_secrets() {
    let t = topics();
    let mut c = drafted(PG);
    c.set("database.password", "hunter2");
    c.set("heartbeat.interval.ms", "0");
    c.set("tasks.max", "2");
    let f = validate(&c, &ctx(&[], &t));
    let severities: Vec<Severity> = f.iter().map(|f| f.severity).collect();
    let mut sorted = severities.clone();
    sorted.sort();
    assert_eq!(severities, sorted);
    assert_eq!(severities.first(), Some(&Severity::Error));
    assert!(!serde_json::to_string(&f).expect("json").contains("hunter2"));
}

#[test]
fn keys_the_worker_types_password_are_secrets_to_the_rules() {
    let t = topics();
    let mut c = drafted(CJ);
    c.set("custom.credential", "plain");
    let mut context = ctx(&[], &t);
    assert!(
        !validate(&c, &context)
            .iter()
            .any(|f| f.rule == Rule::InlineSecret)
    );
    context.password_keys.insert("custom.credential".into());
    assert!(
        validate(&c, &context)
            .iter()
            .any(|f| f.rule == Rule::InlineSecret)
    );
}
