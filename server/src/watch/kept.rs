//! A cluster's window of recent passes, kept in the memory of the sampler
//! that owns the cluster, so the evaluation after a pass does not read every
//! group's window back from Postgres (500,000 partition samples at 1,000
//! groups × 10,000 partitions; BENCHMARKS.md).
//!
//! The memory holds exactly what the store holds for the passes it saw: a
//! pass's samples as `store::sample_columns` made them for the database, a
//! failed pass as an empty slot (it takes a place in the window there too).
//! It holds them in the shape the evaluation reads, every group's window,
//! and moves that on by one pass as a pass comes (the pass that left goes,
//! the new one is added) rather than splitting ten passes into windows
//! again each time: at 50,000 partitions that rebuild was a third of the
//! evaluation (BENCHMARKS.md).
//!
//! What invalidates it: anything that adds, removes or changes a pass this
//! replica did not see or could not record — the first pass after a start,
//! a lease taken over from another replica (or lost to one and taken
//! back), a pass whose storing failed, retention deleting passes, a cluster
//! removed and added again. All of these show in one place: the cluster's
//! last [`WINDOW_PASSES`] pass ids in Postgres. The memory is trusted only
//! when those are exactly the ids it holds, in order; otherwise the window
//! is read from Postgres, as before, and the memory rebuilt from it.
//!
//! Beside the window it keeps what the last evaluation left in the
//! cluster's open lag flags ([`KeptFlags`]), so the next one neither reads
//! their receipts back nor rewrites receipts that say the same: it goes
//! with the window, and is forgotten with it.

use crate::platform::errors::Db;
use crate::watch::store;
use crate::watch::store::samples::{self, SampleColumns, SampleRow};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use streamkeeper::watch::lag::consumed::NotConsumed;
use streamkeeper::watch::observe::Standings;
use streamkeeper::watch::window::{WINDOW_PASSES, WindowSample, Windows, slide};

/// One partition sample of a kept pass.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptSample {
    /// The pass it was read in: it leaves the window with it.
    pass_id: i64,
    group: Arc<str>,
    topic: Arc<str>,
    partition: i32,
    at_ms: i64,
    committed: Option<i64>,
    log_start: Option<i64>,
    log_end: Option<i64>,
}

impl WindowSample for KeptSample {
    fn group(&self) -> &str {
        &self.group
    }
    fn topic(&self) -> &str {
        &self.topic
    }
    fn partition(&self) -> i32 {
        self.partition
    }
    fn at_ms(&self) -> i64 {
        self.at_ms
    }
    fn committed(&self) -> Option<i64> {
        self.committed
    }
    fn log_start(&self) -> Option<i64> {
        self.log_start
    }
    fn log_end(&self) -> Option<i64> {
        self.log_end
    }
}

/// A cluster's last [`WINDOW_PASSES`] passes, and what the evaluations of
/// them left in the open flags.
#[derive(Debug, Default)]
pub struct KeptWindow {
    /// The passes' ids, oldest first.
    passes: VecDeque<i64>,
    /// Every group's window over those passes.
    windows: BTreeMap<String, Windows<KeptSample>>,
    pub flags: KeptFlags,
}

/// What this sampler's evaluations wrote to the cluster's open flags. Only
/// the evaluation writes group flags' receipts, so while the window is
/// trusted (no other replica recorded a pass) this is what the store holds.
#[derive(Debug, Default)]
pub struct KeptFlags {
    /// Each group's standings as its open lag flag keeps them (see
    /// `streamkeeper::watch::observe::standings`); `None` until read from
    /// the store.
    pub standings: Option<HashMap<String, Standings>>,
    /// The gist of each open flag's receipts as last written
    /// (`streamkeeper::flags::receipts`).
    pub written: HashMap<i64, u64>,
    /// Evaluations made with this memory: whose turn it is to have its
    /// receipts refreshed.
    pub evaluations: u64,
    /// Each group's topics the last pass saw unassigned for the first time
    /// (`streamkeeper::watch::lag::consumed`); kept in memory only: after
    /// a restart a topic is seen twice again before it is left out.
    pub unassigned_once: HashMap<String, NotConsumed>,
}

/// The window length as a count (a positive constant).
fn window_len() -> usize {
    usize::try_from(WINDOW_PASSES).unwrap_or(10)
}

/// A sample's time as Postgres gives it back: microseconds, truncated (as
/// sqlx encodes a timestamp), in milliseconds.
fn stored_ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros().div_euclid(1_000)
}

/// One shared copy of each name in a pass (a group's name is in each of
/// its samples, a topic's in every group's that reads it).
fn intern<'a>(names: &mut HashMap<&'a str, Arc<str>>, name: &'a str) -> Arc<str> {
    names.entry(name).or_insert_with(|| Arc::from(name)).clone()
}

impl KeptWindow {
    /// Adds pass `id` with its samples, and lets the oldest pass go when
    /// the window is full.
    fn push(&mut self, id: i64, samples: Vec<KeptSample>) {
        self.passes.push_back(id);
        let mut left = Vec::new();
        while self.passes.len() > window_len() {
            left.extend(self.passes.pop_front());
        }
        slide(&mut self.windows, |s| left.contains(&s.pass_id), samples);
    }

    /// Adds a stored pass: `samples` as written for it, at `at`.
    pub fn push_read(&mut self, pass_id: i64, at: DateTime<Utc>, samples: &SampleColumns) {
        let at_ms = stored_ms(at);
        let mut names: HashMap<&str, Arc<str>> = HashMap::new();
        let kept = (0..samples.len())
            .map(|i| KeptSample {
                pass_id,
                group: intern(&mut names, &samples.groups[i]),
                topic: intern(&mut names, &samples.topics[i]),
                partition: samples.partitions[i],
                at_ms,
                committed: samples.committed[i],
                log_start: samples.log_start[i],
                log_end: samples.log_end[i],
            })
            .collect();
        self.push(pass_id, kept);
    }

    /// Adds a pass that read nothing: an empty place in the window.
    pub fn push_failed(&mut self, pass_id: i64) {
        self.push(pass_id, Vec::new());
    }

    /// The pass ids held, newest first (as `store::recent_pass_ids`).
    pub fn ids(&self) -> Vec<i64> {
        self.passes.iter().rev().copied().collect()
    }

    /// Every group's window, as `by_group` makes it from the store's rows:
    /// per (topic, partition), samples in time order. (Passes are kept in
    /// the order they started, the store orders by the time a pass
    /// finished: the same order for passes that never overlap, and
    /// `slide` keeps each series in time order so the two cannot differ.)
    pub fn windows(&self) -> &BTreeMap<String, Windows<KeptSample>> {
        &self.windows
    }

    /// The memory rebuilt from the store's rows of the passes `ids`
    /// (newest first, as `store::recent_pass_ids` gives them).
    fn from_rows(ids: &[i64], rows: &[SampleRow]) -> Self {
        let mut by_pass: HashMap<i64, SampleColumns> = HashMap::new();
        let mut at: HashMap<i64, i64> = HashMap::new();
        for r in rows {
            let c = by_pass.entry(r.pass_id).or_default();
            c.groups.push(r.group_name.clone());
            c.topics.push(r.topic.clone());
            c.partitions.push(r.partition);
            c.committed.push(r.committed);
            c.log_start.push(r.log_start);
            c.log_end.push(r.log_end);
            at.insert(r.pass_id, r.at.timestamp_millis());
        }
        let mut kept = KeptWindow::default();
        for id in ids.iter().rev() {
            match (by_pass.get(id), at.get(id)) {
                (Some(c), Some(ms)) => match DateTime::from_timestamp_millis(*ms) {
                    Some(t) => kept.push_read(*id, t, c),
                    None => kept.push_failed(*id),
                },
                _ => kept.push_failed(*id),
            }
        }
        kept
    }
}

/// Where the window of an evaluation came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Memory,
    Postgres,
}

/// Makes `kept` the window for the evaluation after a pass: kept as it is
/// when it matches the store's last passes, else read from Postgres.
/// [`KeptWindow::windows`] then gives every group's window.
pub async fn current(pool: &PgPool, cluster_id: i64, kept: &mut KeptWindow) -> Result<Source, Db> {
    let ids = store::recent_pass_ids(pool, cluster_id, WINDOW_PASSES).await?;
    if ids == kept.ids() {
        return Ok(Source::Memory);
    }
    let rows = samples::cluster_window(pool, cluster_id, WINDOW_PASSES).await?;
    // The ids were read a moment before the rows: a pass another replica
    // recorded in between makes them differ next time, and the window is
    // read again then.
    *kept = KeptWindow::from_rows(&ids, &rows);
    Ok(Source::Postgres)
}
