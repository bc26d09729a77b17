//! Evaluation of 100,000 partitions' windows: offset lag, windowed status
//! and time lag, as one sampler pass over a large cluster would need.
//! `cargo bench -p streamkeeper --bench lag` prints the figures.

use std::hint::black_box;
use std::time::Instant;
use streamkeeper::watch::lag::status::{Rules, Sample, partition_status};
use streamkeeper::watch::lag::time::{EndOffsets, Point};

const PARTITIONS: usize = 100_000;
const WINDOW: usize = 10;
const HISTORY: usize = 60;

/// A deterministic mix: healthy, falling behind, stopped, rewound.
fn window(p: usize) -> Vec<Sample> {
    (0..WINDOW)
        .map(|i| {
            let t = i as i64;
            let end = 1_000 + t * 100;
            let committed = match p % 4 {
                0 => end - 5,
                1 => 1_000 + t * 60,
                2 => 900,
                _ => {
                    if i < WINDOW / 2 {
                        end - 10
                    } else {
                        500
                    }
                }
            };
            Sample {
                at_ms: t * 15_000,
                committed: Some(committed),
                log_start: 0,
                log_end: end,
            }
        })
        .collect()
}

fn history(p: usize) -> EndOffsets {
    let mut h = EndOffsets::new(HISTORY);
    for i in 0..HISTORY as i64 {
        let _ = h.add(Point {
            offset: i * (10 + (p as i64 % 7)),
            at_ms: i * 15_000,
        });
    }
    h
}

fn main() {
    let windows: Vec<Vec<Sample>> = (0..PARTITIONS).map(window).collect();
    let histories: Vec<EndOffsets> = (0..PARTITIONS).map(history).collect();
    let rules = Rules::default();

    for round in 0..3 {
        let start = Instant::now();
        let mut troubled = 0;
        for w in &windows {
            let v = partition_status(black_box(w), black_box(true), &rules, None);
            troubled += usize::from(v.status.is_trouble());
        }
        let status_s = start.elapsed().as_secs_f64();

        let start = Instant::now();
        let mut total = 0.0;
        for (p, h) in histories.iter().enumerate() {
            let committed = (p as i64 % 500) * 3;
            total += h
                .time_lag(black_box(committed), 900_000)
                .seconds()
                .unwrap_or(0.0);
        }
        let time_s = start.elapsed().as_secs_f64();
        println!(
            "round {round}: status of {PARTITIONS} windows ({WINDOW} samples) {:.1} ms ({:.0} ns each, {troubled} in trouble); \
             time lag of {PARTITIONS} partitions ({HISTORY}-point history) {:.1} ms ({:.0} ns each, checksum {total:.0})",
            status_s * 1e3,
            status_s * 1e9 / PARTITIONS as f64,
            time_s * 1e3,
            time_s * 1e9 / PARTITIONS as f64,
        );
    }
}
