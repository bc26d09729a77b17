//! Events shaped as openlineage-python 1.54 serialises them (reference
//! A1 "Literal 1.54 output": keys sorted, nulls dropped, empty `facets`
//! and `inputFacets` kept, the 1.54 producer and 2-0-2 schema URLs), plus
//! a Debezium event as its emitter builds it (A6) and a 1-x event of an
//! older producer. Shared by the module tests, with [`graph_in`], a graph
//! made of JobEvents.

use super::event::Event;
use super::graph::{FoldContext, Graph, Provenance};
use super::naming::Clusters;
use serde_json::json;

/// A graph from `(job, inputs, outputs)` JobEvents, every job and dataset
/// in namespace `ns`.
pub fn graph_in(ns: &str, jobs: &[(&str, &[&str], &[&str])]) -> Graph {
    let c = Clusters::default();
    let cx = FoldContext {
        provenance: Provenance::Observed,
        clusters: &c,
    };
    let mut g = Graph::new();
    for (job, ins, outs) in jobs {
        let ds = |names: &[&str]| {
            names
                .iter()
                .map(|n| json!({"namespace": ns, "name": n}))
                .collect::<Vec<_>>()
        };
        let e = Event::from_value(&json!({
            "eventTime": "2026-01-01T00:00:00Z", "producer": "p",
            "job": {"namespace": ns, "name": job}, "inputs": ds(ins), "outputs": ds(outs)
        }))
        .expect("event");
        g.fold(&e, &cx);
    }
    g
}

pub const STREAMING_START: &str = r#"{"eventTime": "2026-01-01T00:00:00Z", "eventType": "START", "inputs": [{"facets": {"schema": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet", "fields": [{"name": "order_id", "type": "long"}]}}, "inputFacets": {}, "name": "orders", "namespace": "kafka://127.0.0.1:9092"}], "job": {"facets": {"jobType": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "_schemaURL": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet", "integration": "FLINK", "jobType": "JOB", "processingType": "STREAMING"}}, "name": "orders_enricher", "namespace": "sk-test"}, "outputs": [{"facets": {}, "name": "shop.public.orders_enriched", "namespace": "postgres://127.0.0.1:5432", "outputFacets": {}}], "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "run": {"facets": {}, "runId": "0194b3a2-7c1e-7000-8000-000000000001"}, "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}"#;

/// The same run a minute later, still RUNNING: Marquez shows no edge for
/// an un-typed streaming job until COMPLETE; we must.
pub const STREAMING_RUNNING: &str = r#"{"eventTime": "2026-01-01T00:01:00Z", "eventType": "RUNNING", "inputs": [{"facets": {}, "inputFacets": {}, "name": "orders", "namespace": "kafka://127.0.0.1:9092"}], "job": {"facets": {}, "name": "orders_enricher", "namespace": "sk-test"}, "outputs": [{"facets": {}, "name": "shop.public.orders_enriched", "namespace": "postgres://127.0.0.1:5432", "outputFacets": {}}], "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "run": {"facets": {}, "runId": "0194b3a2-7c1e-7000-8000-000000000001"}, "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}"#;

pub const STREAMING_COMPLETE: &str = r#"{"eventTime": "2026-01-01T01:00:00Z", "eventType": "COMPLETE", "inputs": [], "job": {"facets": {}, "name": "orders_enricher", "namespace": "sk-test"}, "outputs": [], "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "run": {"facets": {}, "runId": "0194b3a2-7c1e-7000-8000-000000000001"}, "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}"#;

/// A dbt model run as dbt-ol names it: `postgres://host:port` and
/// `db.schema.table`, jobType BATCH/DBT, a parent run, column lineage.
pub const DBT_COMPLETE: &str = r#"{"eventTime": "2026-01-01T02:00:00Z", "eventType": "COMPLETE", "inputs": [{"facets": {}, "inputFacets": {}, "name": "shop.public.customers", "namespace": "postgres://127.0.0.1:5432"}], "job": {"facets": {"jobType": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt", "_schemaURL": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet", "integration": "DBT", "jobType": "MODEL", "processingType": "BATCH"}}, "name": "shop.analytics.customer_orders", "namespace": "dbt"}, "outputs": [{"facets": {"columnLineage": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet", "fields": {"customer_id": {"inputFields": [{"field": "id", "name": "shop.public.customers", "namespace": "postgres://127.0.0.1:5432", "transformations": [{"subtype": "IDENTITY", "type": "DIRECT"}]}]}}}, "schema": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet", "fields": [{"name": "customer_id", "type": "integer"}]}}, "name": "shop.analytics.customer_orders", "namespace": "postgres://127.0.0.1:5432", "outputFacets": {}}], "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt", "run": {"facets": {"parent": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet", "job": {"name": "dbt-run-shop", "namespace": "dbt"}, "run": {"runId": "0194b3a2-7c1e-7000-8000-0000000000aa"}}}, "runId": "0194b3a2-7c1e-7000-8000-0000000000ab"}, "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}"#;

/// Debezium's emitter: job `{topic.prefix}.{taskId}`, a table input, a
/// topic output named `prefix.schema.table`, its config in
/// `debezium_config` with one password it failed to mask (the older test
/// asserted it in plain text) and one URL with credentials.
pub const DEBEZIUM_RUNNING: &str = r#"{"eventTime": "2026-01-01T00:00:30Z", "eventType": "RUNNING", "inputs": [{"facets": {"datasetType": {"_producer": "https://github.com/debezium/debezium", "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DatasetTypeDatasetFacet.json#/$defs/DatasetTypeDatasetFacet", "datasetType": "TABLE"}}, "inputFacets": {}, "name": "public.customers", "namespace": "postgres://127.0.0.1:5432"}], "job": {"facets": {"jobType": {"_producer": "https://github.com/debezium/debezium", "_schemaURL": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet", "integration": "DEBEZIUM", "jobType": "TASK", "processingType": "STREAMING"}}, "name": "inventory.0", "namespace": "inventory"}, "outputs": [{"facets": {}, "name": "inventory.public.customers", "namespace": "kafka://SASL_SSL://B1:9093,b2:9093", "outputFacets": {}}], "producer": "https://github.com/debezium/debezium", "run": {"facets": {"debezium_config": {"_producer": "https://github.com/debezium/debezium", "_schemaURL": "https://github.com/debezium/debezium/DebeziumConfigFacet.json", "configs": ["connector.class=io.debezium.connector.postgresql.PostgresConnector", "database.dbname=shop", "database.password=postgres", "database.user=debezium", "schema.history.internal.kafka.bootstrap.servers=b1:9093", "connection.url=jdbc:postgresql://debezium:hunter2@127.0.0.1:5432/shop"]}, "processing_engine": {"_producer": "https://github.com/debezium/debezium", "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet", "name": "Debezium", "version": "3.2.0.Final"}}, "runId": "0194b3a2-7c1e-7000-8000-0000000000d1"}, "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}"#;

pub const DATASET_EVENT: &str = r#"{"dataset": {"facets": {}, "name": "orders", "namespace": "kafka://broker-1:9092"}, "eventTime": "2026-01-01T00:00:00Z", "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"}"#;

pub const JOB_EVENT: &str = r#"{"eventTime": "2026-01-01T00:00:00Z", "inputs": [{"facets": {}, "inputFacets": {}, "name": "orders", "namespace": "kafka://broker-1:9092"}], "job": {"facets": {}, "name": "j", "namespace": "ns"}, "outputs": [], "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"}"#;

/// An older producer: spec 1-0-5, `#/definitions/`, the legacy
/// `parentRun` key, no `eventType`.
pub const SPEC_1_EVENT: &str = r#"{"eventTime": "2021-11-03T10:53:52.427343+01:00", "job": {"facets": {}, "name": "legacy.task", "namespace": "airflow"}, "inputs": [{"name": "shop.public.customers", "namespace": "postgres://127.0.0.1:5432"}], "outputs": [], "producer": "https://github.com/OpenLineage/OpenLineage/tree/0.3.1/integration/airflow", "run": {"facets": {"parentRun": {"_producer": "https://github.com/OpenLineage/OpenLineage/tree/0.3.1/integration/airflow", "_schemaURL": "https://openlineage.io/spec/1-0-2/OpenLineage.json#/definitions/ParentRunFacet", "job": {"name": "legacy", "namespace": "airflow"}, "run": {"runId": "d6d8b0b6-0b32-4c1c-9c0b-5d1f8c0f0a01"}}}, "runId": "d6d8b0b6-0b32-4c1c-9c0b-5d1f8c0f0a02"}, "schemaURL": "https://openlineage.io/spec/1-0-5/OpenLineage.json#/definitions/RunEvent"}"#;
