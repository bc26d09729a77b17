use super::*;

const KAFKA: &str = "SASL_SSL://b1:9093,b2:9093";

fn config(pairs: &[(&str, &str)]) -> Config {
    pairs.iter().copied().collect()
}

fn names(ds: &[Dataset]) -> Vec<(&str, &str, bool)> {
    ds.iter()
        .map(|d| (d.namespace.as_str(), d.name.as_str(), d.pattern))
        .collect()
}

#[test]
fn the_kafka_namespace_is_the_first_broker_without_protocol() {
    assert_eq!(kafka_namespace(KAFKA), "kafka://b1:9093");
    assert_eq!(kafka_namespace(" b1:9092 ; b2:9092"), "kafka://b1:9092");
    assert_eq!(kafka_namespace(""), "kafka://unknown:unknown");
}

#[test]
fn a_postgres_source_reads_tables_and_writes_prefixed_topics() {
    let c = config(&[
        ("connector.class", Plugin::DebeziumPostgres.class()),
        ("database.hostname", "db"),
        ("database.dbname", "shop"),
        ("topic.prefix", "shop"),
        (
            "table.include.list",
            "public\\.orders,public.customers,inventory\\.item_.*",
        ),
    ]);
    let l = lineage(&c, KAFKA).expect("lineage");
    assert_eq!(
        names(&l.inputs),
        [
            ("postgres://db:5432", "shop.public.orders", false),
            ("postgres://db:5432", "shop.public.customers", false),
            ("postgres://db:5432", "shop\\.(?:inventory\\.item_.*)", true),
        ]
    );
    assert_eq!(
        names(&l.outputs),
        [
            ("kafka://b1:9093", "shop.public.orders", false),
            ("kafka://b1:9093", "shop.public.customers", false),
            ("kafka://b1:9093", "shop\\.(?:inventory\\.item_.*)", true),
        ]
    );
    let re = regex::Regex::new(&format!("^{}$", l.outputs[2].name)).expect("regex");
    assert!(re.is_match("shop.inventory.item_price"));
}

#[test]
fn a_mysql_source_without_lists_captures_everything_as_a_pattern() {
    let c = config(&[
        ("connector.class", Plugin::DebeziumMySql.class()),
        ("database.hostname", "mysql"),
        ("database.port", "3307"),
        ("topic.prefix", "erp"),
        ("database.include.list", "sales"),
    ]);
    let l = lineage(&c, "b:9092").expect("lineage");
    assert_eq!(
        names(&l.inputs),
        [("mysql://mysql:3307", "(?:(?:sales)\\..*)", true)]
    );
    assert_eq!(
        names(&l.outputs),
        [("kafka://b:9092", "erp\\.(?:(?:sales)\\..*)", true)]
    );
    let c = config(&[
        ("connector.class", Plugin::DebeziumMySql.class()),
        ("database.hostname", "mysql"),
        ("topic.prefix", "erp"),
        ("table.include.list", "sales.orders"),
    ]);
    let l = lineage(&c, "b:9092").expect("lineage");
    assert_eq!(
        names(&l.inputs),
        [("mysql://mysql:3306", "sales.orders", false)]
    );
    assert_eq!(
        names(&l.outputs),
        [("kafka://b:9092", "erp.sales.orders", false)]
    );
}

#[test]
fn jdbc_sinks_map_topics_to_tables() {
    let c = config(&[
        ("connector.class", Plugin::ConfluentJdbcSink.class()),
        (
            "connection.url",
            "jdbc:postgresql://u:pw@wh:6543/dw?ssl=true",
        ),
        ("topics", "orders,shop.sales.refunds"),
        ("table.name.format", "kafka_${topic}"),
    ]);
    let l = lineage(&c, KAFKA).expect("lineage");
    assert_eq!(
        names(&l.inputs),
        [
            ("kafka://b1:9093", "orders", false),
            ("kafka://b1:9093", "shop.sales.refunds", false)
        ]
    );
    assert_eq!(
        names(&l.outputs),
        [
            ("postgres://wh:6543", "dw.public.kafka_orders", false),
            ("postgres://wh:6543", "kafka_shop.sales.refunds", false)
        ]
    );
    assert!(!format!("{l:?}").contains("pw"), "no credentials in names");

    let c = config(&[
        ("connector.class", Plugin::DebeziumJdbcSink.class()),
        ("connection.url", "jdbc:mysql://my/dw"),
        ("topics.regex", "shop\\..*"),
    ]);
    let l = lineage(&c, KAFKA).expect("lineage");
    assert_eq!(names(&l.inputs), [("kafka://b1:9093", "shop\\..*", true)]);
    assert_eq!(
        names(&l.outputs),
        [("mysql://my:3306", "dw\\.(?:shop\\..*)", true)]
    );
    let c = config(&[
        ("connector.class", Plugin::DebeziumJdbcSink.class()),
        ("connection.url", "jdbc:postgresql://pg/dw"),
        ("topics", "shop.public.orders"),
    ]);
    let l = lineage(&c, KAFKA).expect("lineage");
    assert_eq!(
        names(&l.outputs),
        [("postgres://pg:5432", "dw.public.shop_public_orders", false)]
    );
}

#[test]
fn object_and_warehouse_sinks_name_their_datasets() {
    let s3 = config(&[
        ("connector.class", Plugin::S3Sink.class()),
        ("s3.bucket.name", "lake"),
        ("topics", "orders"),
    ]);
    assert_eq!(
        names(&lineage(&s3, KAFKA).expect("s3").outputs),
        [("s3://lake", "topics/orders", false)]
    );
    let bq = config(&[
        ("connector.class", Plugin::BigQuerySink.class()),
        ("project", "p"),
        ("defaultDataset", "d"),
        ("sanitizeTopics", "true"),
        ("topics", "shop.public.orders,pay"),
        ("topic2TableMap", "pay:payments"),
    ]);
    assert_eq!(
        names(&lineage(&bq, KAFKA).expect("bq").outputs),
        [
            ("bigquery", "p.d.shop_public_orders", false),
            ("bigquery", "p.d.payments", false)
        ]
    );
    let sf = config(&[
        ("connector.class", Plugin::SnowflakeSink.class()),
        (
            "snowflake.url.name",
            "https://myorg-acct.snowflakecomputing.com:443",
        ),
        ("snowflake.database.name", "DB"),
        ("snowflake.schema.name", "RAW"),
        ("topics", "orders"),
    ]);
    assert_eq!(
        names(&lineage(&sf, KAFKA).expect("sf").outputs),
        [("snowflake://myorg-acct", "DB.RAW.orders", false)]
    );
    let ice = config(&[
        ("connector.class", Plugin::IcebergSink.class()),
        ("iceberg.catalog.uri", "https://cat:8181"),
        ("iceberg.tables", "db.orders"),
        ("topics", "orders"),
    ]);
    assert_eq!(
        names(&lineage(&ice, KAFKA).expect("ice").outputs),
        [("https://cat:8181", "db.orders", false)]
    );
    let es = config(&[
        ("connector.class", Plugin::ElasticsearchSink.class()),
        (
            "connection.url",
            "https://elastic:pw@es:9200,https://es2:9200",
        ),
        ("topics", "Orders"),
        ("transforms", "route"),
        (
            "transforms.route.type",
            "org.apache.kafka.connect.transforms.RegexRouter",
        ),
    ]);
    let l = lineage(&es, KAFKA).expect("es");
    assert_eq!(
        names(&l.outputs),
        [("elasticsearch://es:9200", "orders", false)]
    );
    assert!(l.renamed_by_transform);
}

#[test]
fn missing_or_unreadable_properties_are_named() {
    let c = config(&[("connector.class", Plugin::DebeziumPostgres.class())]);
    assert_eq!(
        lineage(&c, KAFKA),
        Err(LineageError::Missing("database.hostname"))
    );
    let c = config(&[
        ("connector.class", Plugin::ConfluentJdbcSink.class()),
        ("connection.url", "jdbc:weird:user/secret@x"),
    ]);
    let e = lineage(&c, KAFKA).expect_err("unreadable");
    assert_eq!(e, LineageError::Unreadable("connection.url"));
    assert!(!e.to_string().contains("secret"));
    assert!(matches!(
        lineage(&Config::new(), KAFKA),
        Err(LineageError::Config(ParseError::MissingClass))
    ));
}
