//! Validating a connector draft locally, as the draft form does on every
//! change: a Debezium PostgreSQL source and a JDBC sink reading by regex,
//! against a Connect cluster of 1,000 connectors and a Kafka cluster of
//! 10,000 topics. `cargo bench -p streamkeeper --bench connect_validate`
//! prints the figures (target ≤ 5 ms per draft).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;
use streamkeeper::connect::{Config, Context, Plugin, validate};

const CONNECTORS: usize = 1_000;
const TOPICS: usize = 10_000;
const RUNS: usize = 200;

/// A deterministic mix of sources and sinks, each with its own slot,
/// prefix, server id and dead letter topic.
fn existing(i: usize) -> Config {
    let name = format!("c{i}");
    let mut c: Config = [("name", name.as_str()), ("tasks.max", "1")]
        .into_iter()
        .collect();
    match i % 4 {
        0 => {
            c.set("connector.class", Plugin::DebeziumPostgres.class());
            c.set("database.hostname", format!("pg{}", i % 50));
            c.set("database.dbname", "shop");
            c.set("topic.prefix", format!("p{i}"));
            c.set("slot.name", format!("slot_{i}"));
            c.set("publication.name", format!("pub_{i}"));
        }
        1 => {
            c.set("connector.class", Plugin::DebeziumMySql.class());
            c.set("database.server.id", (10_000 + i).to_string());
            c.set("topic.prefix", format!("m{i}"));
            c.set(
                "schema.history.internal.kafka.topic",
                format!("history.m{i}"),
            );
        }
        2 => {
            c.set("connector.class", Plugin::ConfluentJdbcSink.class());
            c.set("topics", format!("t{i},t{}", i + 1));
            c.set("errors.deadletterqueue.topic.name", format!("dlq.{name}"));
        }
        _ => {
            c.set("connector.class", Plugin::IcebergSink.class());
            c.set("topics.regex", format!("t{i}.*"));
            c.set("iceberg.control.topic", format!("control-{i}"));
        }
    }
    c
}

fn draft(text: &str) -> Config {
    Config::from_json(text).unwrap_or_default()
}

fn main() {
    let connectors: Vec<Config> = (0..CONNECTORS).map(existing).collect();
    let topics: BTreeMap<String, u32> = (0..TOPICS)
        .map(|i| (format!("t{i}"), 1 + (i % 12) as u32))
        .collect();
    let ctx = Context {
        connectors: &connectors,
        topics: Some(&topics),
        registry_url: Some("http://registry:8081"),
        bootstrap_servers: Some("kafka-1:9092"),
        brokers: Some(3),
        ..Context::default()
    };
    let source = draft(
        r#"{"name":"orders-cdc","connector.class":"io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max":"1","topic.prefix":"shop","database.hostname":"pg7","database.port":"5432",
        "database.user":"dbz","database.password":"${file:/s/pg.properties:password}","database.dbname":"shop",
        "slot.name":"slot_7","publication.autocreate.mode":"filtered","snapshot.mode":"never",
        "table.include.list":"public.orders,public.customers","key.converter":"io.confluent.connect.avro.AvroConverter",
        "value.converter":"io.confluent.connect.avro.AvroConverter"}"#,
    );
    let sink = draft(
        r#"{"name":"orders-jdbc","connector.class":"io.confluent.connect.jdbc.JdbcSinkConnector",
        "tasks.max":"64","topics.regex":"t1.*","connection.url":"jdbc:postgresql://dw/dw",
        "connection.password":"hunter2","insert.mode":"upsert","errors.tolerance":"all",
        "errors.deadletterqueue.topic.name":"t1-dlq","value.converter":"io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url":"http://registry:8081"}"#,
    );

    for round in 0..3 {
        let mut line = format!("round {round}:");
        for (label, config) in [("postgres source", &source), ("jdbc sink (regex)", &sink)] {
            let mut times = Vec::with_capacity(RUNS);
            let mut findings = 0;
            for _ in 0..RUNS {
                let start = Instant::now();
                findings = black_box(validate(black_box(config), &ctx)).len();
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            line.push_str(&format!(
                " {label}: median {:.3} ms, max {:.3} ms ({findings} findings);",
                times[RUNS / 2],
                times[RUNS - 1],
            ));
        }
        println!("{line} {CONNECTORS} connectors, {TOPICS} topics, {RUNS} runs each");
    }
}
