//! A cluster's window of recent passes, kept in the memory of the sampler
//! that owns the cluster, so the evaluation after a pass does not read every
//! group's window back from Postgres (500,000 partition samples at 1,000
//! groups × 10,000 partitions; BENCHMARKS.md).
//!
//! The memory holds exactly what the store holds for the passes it saw: a
//! pass's samples as `store::sample_columns` made them for the database, a
//! failed pass as an empty slot (it takes a place in the window there too).
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
use streamkeeper::watch::observe::Standings;
use streamkeeper::watch::window::{WINDOW_PASSES, WindowSample, Windows, by_group};

/// One partition sample of a kept pass.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptSample {
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

/// A pass as kept: its id and its samples by group (none for a failed pass).
#[derive(Debug)]
struct KeptPass {
    id: i64,
    groups: HashMap<Arc<str>, Vec<KeptSample>>,
}

/// A cluster's last [`WINDOW_PASSES`] passes, oldest first, and what the
/// evaluations of them left in the open flags.
#[derive(Debug, Default)]
pub struct KeptWindow {
    passes: VecDeque<KeptPass>,
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
    fn push(&mut self, pass: KeptPass) {
        self.passes.push_back(pass);
        while self.passes.len() > window_len() {
            self.passes.pop_front();
        }
    }

    /// Adds a stored pass: `samples` as written for it, at `at`.
    pub fn push_read(&mut self, pass_id: i64, at: DateTime<Utc>, samples: &SampleColumns) {
        let at_ms = stored_ms(at);
        let mut groups: HashMap<Arc<str>, Vec<KeptSample>> = HashMap::new();
        let mut names: HashMap<&str, Arc<str>> = HashMap::new();
        for i in 0..samples.len() {
            let group = intern(&mut names, &samples.groups[i]);
            let sample = KeptSample {
                group: group.clone(),
                topic: intern(&mut names, &samples.topics[i]),
                partition: samples.partitions[i],
                at_ms,
                committed: samples.committed[i],
                log_start: samples.log_start[i],
                log_end: samples.log_end[i],
            };
            groups.entry(group).or_default().push(sample);
        }
        self.push(KeptPass {
            id: pass_id,
            groups,
        });
    }

    /// Adds a pass that read nothing: an empty place in the window.
    pub fn push_failed(&mut self, pass_id: i64) {
        self.push(KeptPass {
            id: pass_id,
            groups: HashMap::new(),
        });
    }

    /// The pass ids held, newest first (as `store::recent_pass_ids`).
    pub fn ids(&self) -> Vec<i64> {
        self.passes.iter().rev().map(|p| p.id).collect()
    }

    /// Every group's window, as `by_group` makes it from the store's rows:
    /// per (topic, partition), samples in time order.
    pub fn windows(&self) -> BTreeMap<String, Windows<KeptSample>> {
        let mut out: BTreeMap<String, Windows<KeptSample>> = BTreeMap::new();
        for pass in &self.passes {
            for (group, samples) in &pass.groups {
                let windows = out.entry(group.to_string()).or_default();
                for s in samples {
                    windows
                        .entry((s.topic.to_string(), s.partition))
                        .or_default()
                        .push(s.clone());
                }
            }
        }
        // Passes are kept in the order they started, the store orders by
        // the time a pass finished: the same order for passes that never
        // overlap, sorted here so the two cannot differ.
        for windows in out.values_mut() {
            for series in windows.values_mut() {
                series.sort_by_key(|s| s.at_ms);
            }
        }
        out
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

/// Every group's window for the evaluation after a pass: from memory when
/// it matches the store's last passes, else read from Postgres and kept.
pub async fn windows(
    pool: &PgPool,
    cluster_id: i64,
    kept: &mut KeptWindow,
) -> Result<(BTreeMap<String, Windows<KeptSample>>, Source), Db> {
    let ids = store::recent_pass_ids(pool, cluster_id, WINDOW_PASSES).await?;
    if ids == kept.ids() {
        return Ok((kept.windows(), Source::Memory));
    }
    let rows = samples::cluster_window(pool, cluster_id, WINDOW_PASSES).await?;
    // The ids were read a moment before the rows: a pass another replica
    // recorded in between makes them differ next time, and the window is
    // read again then.
    *kept = KeptWindow::from_rows(&ids, &rows);
    let windows = by_group(rows)
        .into_iter()
        .map(|(group, windows)| {
            let windows = windows
                .into_iter()
                .map(|(key, series)| (key, series.iter().map(KeptSample::from).collect()))
                .collect();
            (group, windows)
        })
        .collect();
    Ok((windows, Source::Postgres))
}

impl From<&SampleRow> for KeptSample {
    fn from(r: &SampleRow) -> Self {
        KeptSample {
            group: Arc::from(r.group_name.as_str()),
            topic: Arc::from(r.topic.as_str()),
            partition: r.partition,
            at_ms: r.at.timestamp_millis(),
            committed: r.committed,
            log_start: r.log_start,
            log_end: r.log_end,
        }
    }
}
