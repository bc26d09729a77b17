//! Field-level impact from the store (issue 43): a column graph of
//! 100,000 datasets × 20 columns with 2,000,000 column edges, the
//! downstream of a field at depth 6 as the service answers it (a read of
//! the column edges and the dataset-level readers per column hop, then
//! the pure walk), against one recursive CTE answering the same reach
//! over the same table, in the same run.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench column_lineage -- 100000 200
//! ```
//! Arguments: datasets (20 columns each, as many column edges as
//! columns), questions asked. Works in a database of its own, dropped
//! at the end.
//!
//! The graph: datasets in 100 tiers; each column edge goes from a random
//! column of a random dataset of one tier into a random column of the
//! next, so a field feeds one other on average (a branching walk). Only
//! column lineage is written (through `store::write_columns`, the fold's
//! path): the per-hop readers query runs against a graph with no dataset
//! nodes, so it costs its index lookups but finds no cold trails.

#[path = "support/db.rs"]
mod bench_db;
#[path = "support/median.rs"]
mod bench_median;

use bench_db::BenchDb;
use std::time::{Duration, Instant};
use streamkeeper::lineage::column_walk::{ColumnGraph, walk};
use streamkeeper::lineage::columns::{ColumnEdge, ColumnVersion, FieldRef, Transform};
use streamkeeper::lineage::graph::DatasetKey;
use streamkeeper::lineage::impact::{Direction, Limits};
use streamkeeper_server::lineage::{columns, store};

const COLUMNS: usize = 20;
const TIERS: usize = 100;
const DEPTH: u32 = 6;

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

fn dataset(i: usize) -> DatasetKey {
    DatasetKey {
        namespace: "postgres://db:5432".into(),
        name: format!("shop.public.t{i}"),
    }
}

fn column(c: usize) -> String {
    format!("c{c}")
}

/// Every dataset of tiers 1.. with its incoming column edges, from the
/// tier before.
fn versions(datasets: usize) -> Vec<ColumnVersion> {
    let per_tier = datasets / TIERS;
    let mut rng = Lcg(43);
    let at = chrono::Utc::now();
    (per_tier..datasets)
        .map(|d| {
            let tier = d / per_tier;
            let edges = (0..COLUMNS)
                .map(|c| {
                    let src = (tier - 1) * per_tier + rng.next(per_tier);
                    ColumnEdge {
                        from: FieldRef {
                            dataset: dataset(src),
                            field: column(rng.next(COLUMNS)),
                        },
                        to: column(c),
                        kind: Transform::Direct,
                        subtypes: vec!["IDENTITY".into()],
                    }
                })
                .collect();
            ColumnVersion {
                dataset: dataset(d),
                at,
                edges,
            }
        })
        .collect()
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let datasets: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let questions: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let base = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let db = BenchDb::create(&base, "columns", 4).await;

    let built = Instant::now();
    let all = versions(datasets);
    let edges: usize = all.iter().map(|v| v.edges.len()).sum();
    for chunk in all.chunks(5_000) {
        let mut tx = db.pool.begin().await.expect("begin");
        store::write_columns(&mut tx, chunk).await.expect("write");
        tx.commit().await.expect("commit");
    }
    sqlx::query("ANALYZE lineage_column_edges")
        .execute(&db.pool)
        .await
        .expect("analyze");
    println!(
        "graph: {datasets} datasets x {COLUMNS} columns, {edges} column edges, written in {:.1?}",
        built.elapsed()
    );

    // Starts in the first tiers, so depth 6 has room to go.
    let per_tier = datasets / TIERS;
    let mut rng = Lcg(7);
    let starts: Vec<FieldRef> = (0..questions)
        .map(|_| FieldRef {
            dataset: dataset(rng.next(per_tier * 10)),
            field: column(rng.next(COLUMNS)),
        })
        .collect();
    let limits = Limits {
        depth: DEPTH,
        budget: 100_000,
    };
    let (mut ours, mut cte) = (Vec::new(), Vec::new());
    let (mut reached, mut most) = (0usize, 0usize);
    for start in &starts {
        let t = Instant::now();
        let mut g = ColumnGraph::new();
        columns::load(&db.pool, &mut g, start, Direction::Downstream, limits)
            .await
            .expect("load");
        let answer = walk(&g, start, Direction::Downstream, limits);
        ours.push(t.elapsed());
        let t = Instant::now();
        let n = store::column_reach_cte(&db.pool, start, DEPTH as i32)
            .await
            .expect("cte");
        cte.push(t.elapsed());
        assert_eq!(
            answer.fields.len() as i64,
            n,
            "the walk and the CTE reach the same fields from {start:?}"
        );
        reached += answer.fields.len();
        most = most.max(answer.fields.len());
    }
    println!(
        "field impact at depth {DEPTH}, {questions} questions, {:.1} fields reached on average (most {most}):",
        reached as f64 / questions as f64
    );
    println!(
        "  service (per-hop reads + walk): p50 {:.2?}  p95 {:.2?}",
        bench_median::median(&mut ours.clone()),
        pct(&mut ours, 0.95)
    );
    println!(
        "  recursive CTE (reach count):    p50 {:.2?}  p95 {:.2?}",
        bench_median::median(&mut cte.clone()),
        pct(&mut cte, 0.95)
    );
    db.drop().await;
}
