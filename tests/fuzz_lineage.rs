//! Fuzz target for the OpenLineage event parser, the code every
//! producer's bytes reach (issue 14, "Bad input"): arbitrary text, and
//! events generated from the spec's shape with any JSON in any field,
//! each read as one event and as a batch, then folded. The only promise
//! checked is that nothing panics: errors are answers. `PROPTEST_CASES`
//! sets the number of cases (proptest's default, 256, when unset).

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};
use streamkeeper::lineage::graph::{FoldContext, Graph, Provenance};
use streamkeeper::lineage::naming::Clusters;
use streamkeeper::lineage::receive::{receive, receive_batch};

fn config() -> Config {
    Config {
        // Failures are kept as regression tests below, not in files.
        failure_persistence: None,
        ..Config::default()
    }
}

/// Any JSON value, nested a few levels.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "\\PC{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("kafka://null:-1"),
            Just("kafka://SASL_SSL://b1:9093,b2"),
            Just("1x:y"),
            Just("START"),
            Just("2026-01-01T00:00:00Z"),
            Just("postgres://u:p@h:5432"),
            Just("database.password=x"),
        ]
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    "[a-zA-Z_]{1,8}",
                    Just("facets".to_string()),
                    Just("password".to_string()),
                    Just("debezium_config".to_string()),
                    Just("configs".to_string()),
                    Just("lineage".to_string()),
                    Just("entries".to_string()),
                    Just("symlinks".to_string()),
                    Just("identifiers".to_string()),
                    Just("type".to_string()),
                    Just("namespace".to_string()),
                    Just("name".to_string()),
                    Just("_deleted".to_string()),
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An event of the spec's shape with fuzzed parts.
fn eventish() -> impl Strategy<Value = Value> {
    (any_json(), any_json(), any_json(), any_json(), any_json(), any_json(), 0..4usize).prop_map(
        |(run_facets, job_facets, ds_facets, io, time, ty, kind)| {
            let ds = json!([{"namespace": "kafka://b1:9092", "name": "orders", "facets": ds_facets},
                            {"namespace": io.clone(), "name": "x"}]);
            let url = ["RunEvent", "DatasetEvent", "JobEvent", "Other"][kind];
            json!({
                "eventTime": if kind == 3 { time } else { json!("2026-01-01T00:00:00Z") },
                "eventType": ty, "producer": "p",
                "schemaURL": format!("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/{url}"),
                "run": {"runId": "r", "facets": run_facets},
                "job": {"namespace": "n", "name": "j", "facets": job_facets},
                "dataset": {"namespace": io, "name": "d", "facets": ds.clone()},
                "inputs": ds.clone(), "outputs": ds,
            })
        },
    )
}

fn exercise(bytes: &[u8]) {
    let clusters = Clusters::default();
    let cx = FoldContext {
        provenance: Provenance::Observed,
        clusters: &clusters,
    };
    let mut g = Graph::new();
    if let Ok(r) = receive(bytes) {
        g.fold(&r.event, &cx);
        // Stored bytes read back as the same event.
        let again = receive(&r.canonical).expect("canonical bytes are an event");
        assert_eq!(again.hash, r.hash);
    }
    if let Ok(results) = receive_batch(bytes) {
        for r in results.into_iter().flatten() {
            g.fold(&r.event, &cx);
        }
    }
    let _ = g.alias_conflicts();
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        exercise(text.as_bytes());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        exercise(&bytes);
    }

    #[test]
    fn arbitrary_json_never_panics(v in any_json()) {
        exercise(v.to_string().as_bytes());
        exercise(json!([v]).to_string().as_bytes());
    }

    #[test]
    fn spec_shaped_events_never_panic(v in eventish()) {
        let text = v.to_string();
        exercise(text.as_bytes());
        exercise(format!("[{text},{text}]").as_bytes());
        // Cut anywhere: malformed JSON is a refusal, not a panic.
        for cut in [1, text.len() / 2, text.len().saturating_sub(1)] {
            if let Some(prefix) = text.get(..cut) {
                exercise(prefix.as_bytes());
            }
        }
    }
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let deep = "[".repeat(100_000);
    assert!(receive(deep.as_bytes()).is_err());
    let deep_facet = format!(
        r#"{{"eventTime":"2026-01-01T00:00:00Z","producer":"p","job":{{"namespace":"n","name":"j","facets":{{"x":{}1{}}}}}}}"#,
        "[".repeat(120),
        "]".repeat(120)
    );
    exercise(deep_facet.as_bytes());
}
