//! Lineage in memory (issue 14): the impact of a topic on a graph of
//! 100,000 nodes and 500,000 edges, events parsed and hashed per second,
//! and the layout of a 200-node neighbourhood.
//! `cargo bench -p streamkeeper --bench lineage_impact` prints the figures.
//!
//! The graph: 50,000 topics and 50,000 jobs in 100 "tiers"; each job
//! reads 5 topics of its tier and writes 5 of the next (wrapping, so the
//! graph has cycles), which is 10 edges a job.

use std::hint::black_box;
use std::time::Instant;
use streamkeeper::lineage::graph::{FoldContext, Graph, NodeKey, Provenance};
use streamkeeper::lineage::impact::{Direction, Limits, impact};
use streamkeeper::lineage::layout::{LayoutOptions, layout};
use streamkeeper::lineage::naming::{Clusters, RegisteredCluster};
use streamkeeper::lineage::neighbourhood::neighbourhood;
use streamkeeper::lineage::receive::receive;

const TOPICS: usize = 50_000;
const JOBS: usize = 50_000;
const FAN: usize = 5;
const EVENTS: usize = 20_000;

/// A small deterministic generator (no rand dependency for a bench).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// A RunEvent of job `j` in the 1.54 client's shape.
fn event(j: usize, rng: &mut Lcg) -> String {
    let per_tier = TOPICS / 100;
    let tier = (j * 100) / JOBS;
    let topic = |t: usize, rng: &mut Lcg| {
        let i = (t % 100) * per_tier + rng.next(per_tier);
        format!(
            r#"{{"facets": {{}}, "inputFacets": {{}}, "name": "topic-{i}", "namespace": "kafka://SASL_SSL://broker-{}:9093"}}"#,
            i % 3
        )
    };
    let inputs: Vec<String> = (0..FAN).map(|_| topic(tier, rng)).collect();
    let outputs: Vec<String> = (0..FAN).map(|_| topic(tier + 1, rng)).collect();
    format!(
        r#"{{"eventTime": "2026-01-01T00:{:02}:00Z", "eventType": "RUNNING", "inputs": [{}], "job": {{"facets": {{"jobType": {{"_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "_schemaURL": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet", "integration": "FLINK", "jobType": "JOB", "processingType": "STREAMING"}}}}, "name": "job-{j}", "namespace": "bench"}}, "outputs": [{}], "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python", "run": {{"facets": {{}}, "runId": "0194b3a2-7c1e-7000-8000-{j:012}"}}, "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}}"#,
        j % 60,
        inputs.join(", "),
        outputs.join(", ")
    )
}

fn main() {
    let clusters = Clusters::new(&[RegisteredCluster {
        id: "bench".into(),
        brokers: (0..3).map(|b| format!("broker-{b}:9093")).collect(),
    }]);
    let cx = FoldContext {
        provenance: Provenance::Observed,
        clusters: &clusters,
    };
    let mut rng = Lcg(7);
    let texts: Vec<String> = (0..JOBS).map(|j| event(j, &mut rng)).collect();

    // Parse + redact + canonical bytes + hash, then fold, per event.
    for round in 0..3 {
        let start = Instant::now();
        let mut bytes = 0;
        for t in &texts[..EVENTS] {
            let r = receive(black_box(t.as_bytes())).expect("bench event");
            bytes += r.canonical.len();
        }
        let s = start.elapsed().as_secs_f64();
        println!(
            "round {round}: receive (parse, redact, canonical bytes, SHA-256) of {EVENTS} events: {:.0} ms, {:.0} events/s ({:.0} B each)",
            s * 1e3,
            EVENTS as f64 / s,
            bytes as f64 / EVENTS as f64
        );
    }

    let start = Instant::now();
    let mut g = Graph::new();
    for t in &texts {
        let r = receive(t.as_bytes()).expect("bench event");
        g.fold(&r.event, &cx);
    }
    let build = start.elapsed().as_secs_f64();
    println!(
        "graph: {} nodes, {} edges, received and folded from {JOBS} events in {:.1} s ({:.0} events/s)",
        g.node_count(),
        g.edge_count(),
        build,
        JOBS as f64 / build
    );

    let topic = NodeKey::dataset("kafka://broker-0:9093", "topic-0");
    for (label, limits) in [
        ("default limits (depth 6, budget 5,000)", Limits::default()),
        (
            "depth 50, budget 100,000 (the maxima)",
            Limits {
                depth: 50,
                budget: 100_000,
            },
        ),
    ] {
        for round in 0..3 {
            let start = Instant::now();
            let i =
                impact(&g, black_box(&topic), Direction::Downstream, limits).expect("topic known");
            let s = start.elapsed().as_secs_f64();
            println!(
                "round {round}: impact of a topic, {label}: {:.1} ms, {} nodes reached (deepest {}), partial {} {:?}",
                s * 1e3,
                i.nodes.len(),
                i.nodes.last().map_or(0, |r| r.depth),
                i.partial,
                i.cut
            );
        }
    }

    // A 200-node neighbourhood, laid out.
    let n = neighbourhood(
        &g,
        &topic,
        Limits {
            depth: 6,
            budget: 199,
        },
    )
    .expect("topic known");
    let edges: Vec<(usize, usize)> = n.edges.iter().map(|&(a, b, _)| (a, b)).collect();
    for round in 0..3 {
        let start = Instant::now();
        let l =
            layout(n.nodes.len(), black_box(&edges), &LayoutOptions::default()).expect("layout");
        let s = start.elapsed().as_secs_f64();
        println!(
            "round {round}: layout of {} nodes, {} edges: {:.2} ms ({} crossings left, {:.0}×{:.0} px)",
            n.nodes.len(),
            edges.len(),
            s * 1e3,
            l.crossings,
            l.width,
            l.height
        );
    }
}
