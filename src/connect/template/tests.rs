use super::*;
use serde_json::json;

fn values(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn pg_values() -> BTreeMap<String, Value> {
    values(&[
        ("name", json!("Orders-CDC")),
        ("topic.prefix", json!("shop")),
        ("database.hostname", json!("db.internal")),
        ("database.user", json!("debezium")),
        (
            "database.password",
            json!("${file:/secrets/pg.properties:password}"),
        ),
        ("database.dbname", json!("shop")),
        (
            "value.converter.schema.registry.url",
            json!("http://registry:8081"),
        ),
    ])
}

#[test]
fn every_template_has_a_name_and_its_plugins_class() {
    for p in Plugin::ALL {
        let t = template(p);
        assert_eq!(t.class, p.class());
        assert!(t.field("name").is_some_and(|f| f.required), "{p:?}");
        for f in &t.fields {
            assert!(!f.help.is_empty() && !f.label.is_empty(), "{}", f.key);
            assert_eq!(
                f.kind == FieldType::Choice,
                !f.choices.is_empty(),
                "{}",
                f.key
            );
            if let Some(d) = f.default.filter(|d| !d.contains('{')) {
                assert!(f.accepts(d), "{}'s default {d} is not of its type", f.key);
            }
        }
    }
}

#[test]
fn a_postgres_draft_gets_the_recommended_defaults() {
    let c = template(Plugin::DebeziumPostgres)
        .draft(&pg_values(), &Config::new())
        .expect("drafts");
    assert_eq!(c.get(CLASS), Some(Plugin::DebeziumPostgres.class()));
    assert_eq!(c.get("plugin.name"), Some("pgoutput"));
    assert_eq!(c.get("slot.name"), Some("debezium_orders_cdc"));
    assert_eq!(c.get("publication.name"), Some("dbz_orders_cdc"));
    assert_eq!(c.get("publication.autocreate.mode"), Some("filtered"));
    assert_eq!(c.get("database.port"), Some("5432"));
    assert_eq!(
        c.get("key.converter.schema.registry.url"),
        Some("http://registry:8081")
    );
    assert_eq!(c.get("tasks.max"), Some("1"));
}

#[test]
fn a_sink_draft_gets_a_dead_letter_queue_of_its_own() {
    let c = template(Plugin::S3Sink)
        .draft(
            &values(&[
                ("name", json!("orders-s3")),
                ("topics", json!("orders")),
                ("s3.bucket.name", json!("lake")),
                ("flush.size", json!(500)),
            ]),
            &Config::new(),
        )
        .expect("drafts");
    assert_eq!(c.get("errors.tolerance"), Some("all"));
    assert_eq!(
        c.get("errors.deadletterqueue.topic.name"),
        Some("dlq.orders-s3")
    );
    assert_eq!(c.get("storage.class"), Some(S3_STORAGE));
    assert_eq!(c.get("flush.size"), Some("500"));
    // No registry URL given: the key URL that defaults to it is left out.
    assert_eq!(c.get("key.converter.schema.registry.url"), None);
}

#[test]
fn wrong_types_unknown_fields_and_missing_ones_are_all_reported() {
    let mut v = pg_values();
    v.insert("database.port".into(), json!("five"));
    v.insert("heartbeat.interval.ms".into(), json!(true));
    v.insert("plugin.name".into(), json!("wal2json"));
    v.insert("no.such".into(), json!("x"));
    v.insert("database.hostname".into(), json!(""));
    v.remove("topic.prefix");
    let DraftErrors(errors) = template(Plugin::DebeziumPostgres)
        .draft(&v, &Config::new())
        .expect_err("bad");
    assert!(errors.contains(&DraftError::WrongType {
        field: "database.port".into(),
        expected: FieldType::Number
    }));
    assert!(errors.contains(&DraftError::WrongType {
        field: "heartbeat.interval.ms".into(),
        expected: FieldType::Number
    }));
    assert!(errors.contains(&DraftError::NotAChoice {
        field: "plugin.name".into(),
        allowed: vec!["pgoutput", "decoderbufs"]
    }));
    assert!(errors.contains(&DraftError::UnknownField {
        field: "no.such".into(),
        plugin: "Debezium PostgreSQL source"
    }));
    assert!(errors.contains(&DraftError::Missing {
        field: "topic.prefix".into()
    }));
    assert!(errors.contains(&DraftError::Missing {
        field: "database.hostname".into()
    }));
    let text = DraftErrors(errors).to_string();
    assert!(
        text.contains("database.port must be a whole number"),
        "{text}"
    );
}

#[test]
fn form_values_as_strings_and_checkboxes_are_read() {
    let t = template(Plugin::ConfluentJdbcSink);
    let c = t
        .draft(
            &values(&[
                ("name", json!("j")),
                ("topics", json!("orders")),
                ("connection.url", json!("jdbc:postgresql://db/shop")),
                ("tasks.max", json!("2")),
                ("auto.create", json!("on")),
                ("delete.enabled", json!(false)),
            ]),
            &Config::new(),
        )
        .expect("drafts");
    assert_eq!(c.get("tasks.max"), Some("2"));
    assert_eq!(c.get("auto.create"), Some("true"));
    assert_eq!(c.get("delete.enabled"), Some("false"));
    assert_eq!(c.get("table.name.format"), Some("${topic}"));
}

#[test]
fn open_choices_take_other_classes() {
    let mut v = pg_values();
    v.insert(
        "value.converter".into(),
        json!("io.apicurio.registry.utils.converter.AvroConverter"),
    );
    assert!(
        template(Plugin::DebeziumPostgres)
            .draft(&v, &Config::new())
            .is_ok()
    );
}

#[test]
fn an_imported_connector_drafts_back_to_itself() {
    let t = template(Plugin::DebeziumPostgres);
    let mut original = t.draft(&pg_values(), &Config::new()).expect("drafts");
    original.set("transforms", "route");
    original.set(
        "transforms.route.type",
        "io.debezium.transforms.ByLogicalTableRouter",
    );
    original.remove("plugin.name");
    original.set("database.port", "05432");
    let imported = t.import(&original);
    assert_eq!(imported.values["plugin.name"], json!(""));
    assert_eq!(imported.values["tasks.max"], json!(1));
    assert_eq!(imported.values["database.port"], json!("05432"));
    assert_eq!(imported.extra.len(), 2);
    let again = t.draft(&imported.values, &imported.extra).expect("drafts");
    assert_eq!(again, original, "absent stays absent, extras stay");
}

#[test]
fn import_keeps_a_second_class_of_the_same_plugin() {
    let c: Config = [
        (CLASS, crate::connect::plugin::TABULAR_ICEBERG_CLASS),
        ("name", "ice"),
        ("iceberg.catalog.uri", "https://cat"),
    ]
    .into_iter()
    .collect();
    let imported = import(&c).expect("covered");
    assert_eq!(imported.plugin, Plugin::IcebergSink);
    let again = template(Plugin::IcebergSink)
        .draft(&imported.values, &imported.extra)
        .expect("drafts");
    assert_eq!(again, c);
}

#[test]
fn import_needs_a_known_class() {
    let c: Config = [(CLASS, "x.Y")].into_iter().collect();
    assert!(matches!(import(&c), Err(ParseError::UnknownPlugin { .. })));
}

#[test]
fn ident_makes_a_slot_name() {
    assert_eq!(ident("Orders-CDC.v2"), "orders_cdc_v2");
    assert_eq!(ident(&"x".repeat(80)).len(), 50);
}

#[test]
fn an_html_form_s_empty_inputs_take_derived_defaults_and_leave_others_out() {
    let t = template(Plugin::DebeziumPostgres);
    let mut form: BTreeMap<String, String> = pg_values()
        .into_iter()
        .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_owned()))
        .collect();
    form.insert("slot.name".into(), String::new());
    form.insert("table.include.list".into(), String::new());
    let c = t.draft_form(&form, &Config::new()).expect("drafts");
    assert_eq!(c.get("slot.name"), Some("debezium_orders_cdc"));
    assert_eq!(c.get("table.include.list"), None);
    form.insert("slot.name".into(), "mine".into());
    let c = t.draft_form(&form, &Config::new()).expect("drafts");
    assert_eq!(c.get("slot.name"), Some("mine"));
    assert_eq!(
        t.field("slot.name").and_then(Field::derived_default),
        Some("debezium_{name_ident}")
    );
    assert_eq!(
        t.field("plugin.name").and_then(Field::derived_default),
        None
    );
}
