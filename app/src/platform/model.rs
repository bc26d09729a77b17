//! The routines as the screens, the REST API and the CLI show them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use streamkeeper::platform::schedule::Schedule;

/// Routines a page of Settings → Routines lists: every routine of a few
/// clusters fits on one.
pub const ROUTINES_PER_PAGE: u32 = 100;

/// A routine for one target as the listing shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RoutineStatus {
    pub routine: String,
    /// The cluster, for a per-cluster routine.
    pub cluster_id: Option<i64>,
    pub cluster: Option<String>,
    /// One replica at a time runs it (it takes a lease), or every replica does.
    pub exclusive: bool,
    /// Every run leaves a row; when false, only runs that did something do
    /// (routines that look every second and mostly find nothing), so no row
    /// yet means nothing to do yet, not "never ran".
    pub records_idle_runs: bool,
    /// The interval of its last run (its default before the first).
    pub every_ms: i64,
    pub last_started_at: Option<DateTime<Utc>>,
    pub last_finished_at: Option<DateTime<Utc>>,
    /// `ok`, `failed` or `abandoned`; none while running or before the first run.
    pub last_outcome: Option<String>,
    pub last_error: Option<String>,
    /// The replica that ran it last.
    pub last_ran_by: Option<String>,
    pub running: bool,
    /// When the replica that ran it last means to run it next.
    pub next_due_at: Option<DateTime<Utc>>,
    /// The replica holding its lease now, if any.
    pub holder: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// The schedule an admin set (`default`: its own interval).
    pub schedule: Schedule,
    /// A run-now request waits for a replica to take it.
    pub run_requested: bool,
}

/// What a run-now request asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RunRequested {
    pub routine: String,
    /// How many targets (clusters, or the one global target) will run.
    pub targets: u64,
}

/// A schedule saved from the page, for its note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rescheduled {
    pub routine: String,
    pub schedule: Schedule,
}

/// How the per-cluster routines are shared out over the replicas, as
/// Settings → Routines, `GET /api/v1/routines/replicas` and `/metrics`
/// show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReplicaShares {
    /// Clusters the per-cluster routines run for (neither paused nor removed).
    pub clusters: u64,
    /// Replicas that wrote a heartbeat in the last few seconds.
    pub alive: u64,
    /// The most clusters of one routine a replica takes: clusters ÷ live
    /// replicas, rounded up.
    pub fair_share: u64,
    /// Every replica seen in the last day, the live ones first.
    pub replicas: Vec<ReplicaShare>,
}

/// One replica: its version (two during a rolling upgrade), its heartbeat
/// and the clusters it holds of each per-cluster routine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReplicaShare {
    pub replica: String,
    pub version: String,
    pub started_at: DateTime<Utc>,
    pub seen_at: DateTime<Utc>,
    pub alive: bool,
    /// Clusters held, by routine (routines it holds none of are left out).
    pub held: Vec<Held>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Held {
    pub routine: String,
    pub clusters: u64,
}
