//! Fuzz targets for the connector config reader and everything a pasted
//! config reaches (issue 13): arbitrary text, arbitrary JSON values, and
//! configs built from the covered plugins' keys with hostile values, each
//! read, validated, imported, masked, diffed and turned into lineage. The
//! promises checked: nothing panics, and no inline secret survives
//! masking into the canonical content, the diff or the findings.
//!
//! Cases per target: `PROPTEST_CASES` (proptest's default, 256, when unset).

use proptest::prelude::*;
use proptest::test_runner::Config as Runner;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use streamkeeper::connect::canonical::{canonical_json, config_hash, diff};
use streamkeeper::connect::lineage::lineage;
use streamkeeper::connect::secret::is_secret_key;
use streamkeeper::connect::template::{import, template};
use streamkeeper::connect::worker::WorkerAnswer;
use streamkeeper::connect::{Config, Context, Plugin, parse_draft, validate};

fn runner() -> Runner {
    Runner {
        failure_persistence: None,
        ..Runner::default()
    }
}

/// Everything downstream of a parsed config, as the server would run it.
fn exercise(config: &Config) {
    let topics: BTreeMap<String, u32> = [("orders".to_owned(), 3), ("a.b".to_owned(), 0)]
        .into_iter()
        .collect();
    let others = [config.clone()];
    let ctx = Context {
        connectors: &others,
        topics: Some(&topics),
        registry_url: Some("http://r:8081"),
        brokers: Some(1),
        ..Context::default()
    };
    let findings = validate(config, &ctx);
    for f in &findings {
        if let Some(fix) = &f.fix {
            let _ = validate(&fix.apply(config), &ctx);
        }
    }
    let _ = validate(config, &Context::default());
    let marked = BTreeSet::new();
    let _ = canonical_json(config, &marked);
    let _ = config_hash(config, &marked);
    let _ = diff(Some(config), &Config::new(), &marked);
    let _ = lineage(config, "SASL_SSL://b:9093");
    if let Ok(imported) = import(config) {
        let _ = template(imported.plugin).draft(&imported.values, &imported.extra);
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        ".{0,20}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,12}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Keys the rules and lineage read, plus noise.
const KEYS: &[&str] = &[
    "name",
    "tasks.max",
    "topic.prefix",
    "topics",
    "topics.regex",
    "database.hostname",
    "database.port",
    "database.dbname",
    "database.password",
    "database.server.id",
    "slot.name",
    "publication.name",
    "publication.autocreate.mode",
    "plugin.name",
    "snapshot.mode",
    "table.include.list",
    "table.exclude.list",
    "schema.include.list",
    "schema.history.internal.kafka.topic",
    "connection.url",
    "connection.username",
    "connection.password",
    "table.name.format",
    "collection.name.format",
    "errors.tolerance",
    "errors.deadletterqueue.topic.name",
    "errors.deadletterqueue.topic.replication.factor",
    "transforms",
    "transforms.a.type",
    "value.converter",
    "key.converter",
    "s3.bucket.name",
    "partitioner.class",
    "snowflake.url.name",
    "snowflake.private.key",
    "snowflake.topic2table.map",
    "topic2TableMap",
    "keyfile",
    "keySource",
    "iceberg.tables",
    "iceberg.catalog.uri",
    "data.stream.type",
    "consumer.override.sasl.jaas.config",
];

fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,30}",
        "[a-z.]{1,10}",
        Just("${file:/s:k}".to_owned()),
        Just("${".to_owned()),
        Just("(((".to_owned()),
        Just("a{99999}".to_owned()),
        Just("jdbc:postgresql://u:p@h:1/d?x".to_owned()),
        Just("jdbc:sqlserver://h;databaseName=d".to_owned()),
        Just("https://u:p@".to_owned()),
        Just("\u{1}.\u{1}".to_owned()),
        Just("-1".to_owned()),
        Just("99999999999999999999".to_owned()),
    ]
}

fn built_config() -> impl Strategy<Value = Config> {
    (
        prop::sample::select(Plugin::ALL.to_vec()),
        prop::collection::vec((prop::sample::select(KEYS.to_vec()), hostile()), 0..20),
    )
        .prop_map(|(plugin, pairs)| {
            let mut c: Config = pairs.into_iter().collect();
            c.set("connector.class", plugin.class());
            c
        })
}

proptest! {
    #![proptest_config(runner())]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        if let Ok((config, _)) = parse_draft(&text) {
            exercise(&config);
        }
        let _ = WorkerAnswer::parse(&text);
    }

    #[test]
    fn arbitrary_json_never_panics(value in json_value()) {
        if let Ok(config) = Config::from_value(&value) {
            exercise(&config);
        }
        let _ = WorkerAnswer::parse(&value.to_string());
    }

    #[test]
    fn configs_of_covered_plugins_never_panic(config in built_config()) {
        exercise(&config);
    }

    #[test]
    fn inline_secrets_never_leave_masking(config in built_config(), n in 0u32..1000) {
        let mut config = config;
        let secret = format!("S3CRET{n}X");
        config.set("database.password", secret.as_str());
        config.set("custom.token", secret.as_str());
        prop_assert!(is_secret_key("custom.token", &BTreeSet::new()));
        let marked = BTreeSet::new();
        prop_assert!(!canonical_json(&config, &marked).contains(&secret));
        let d = serde_json::to_string(&diff(None, &config, &marked)).unwrap_or_default();
        prop_assert!(!d.contains(&secret));
        let f = serde_json::to_string(&validate(&config, &Context::default())).unwrap_or_default();
        prop_assert!(!f.contains(&secret));
    }
}

#[test]
fn a_deeply_nested_paste_is_an_error_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(parse_draft(&deep).is_err());
    let deep = format!(
        "{{\"config\":{}1{}}}",
        "{\"a\":".repeat(50_000),
        "}".repeat(50_000)
    );
    assert!(parse_draft(&deep).is_err());
}
