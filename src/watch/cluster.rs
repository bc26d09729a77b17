//! A cluster's health as the console shows it: UP, DEGRADED or
//! UNREACHABLE, from its latest pass, and stale when passes stop arriving.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ClusterState {
    /// Never sampled yet.
    Unknown,
    Up,
    /// The last pass read the cluster but not all of it.
    Degraded,
    /// The last pass read nothing, or no pass finished for three intervals.
    Unreachable,
}

/// What the state is based on: the newest pass's outcome and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastPass {
    pub outcome: ClusterState,
    pub finished_at: DateTime<Utc>,
}

/// The state now. Three missed intervals make a cluster UNREACHABLE even
/// if its last pass was good: the sampler itself may be stuck, and data
/// that old must not be shown as current.
pub fn state(last: Option<LastPass>, interval_s: i64, now: DateTime<Utc>) -> ClusterState {
    match last {
        None => ClusterState::Unknown,
        Some(p) if (now - p.finished_at).num_seconds() > 3 * interval_s.max(1) => {
            ClusterState::Unreachable
        }
        Some(p) => p.outcome,
    }
}

/// How long a cluster's history is kept: the hourly lag rollups' retention,
/// and how long a removed cluster waits, restorable, before it is purged
/// with everything recorded of it.
pub const HISTORY_DAYS: i64 = 90;

/// When a cluster removed at `removed_at` is purged for good.
pub fn purged_on(removed_at: DateTime<Utc>) -> DateTime<Utc> {
    removed_at + chrono::Duration::days(HISTORY_DAYS)
}

/// Clusters removed at or before this time are past their kept period `now`.
pub fn purge_cutoff(now: DateTime<Utc>) -> DateTime<Utc> {
    now - chrono::Duration::days(HISTORY_DAYS)
}

impl ClusterState {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterState::Unknown => "UNKNOWN",
            ClusterState::Up => "UP",
            ClusterState::Degraded => "DEGRADED",
            ClusterState::Unreachable => "UNREACHABLE",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "UP" => ClusterState::Up,
            "DEGRADED" => ClusterState::Degraded,
            "UNREACHABLE" => ClusterState::Unreachable,
            _ => ClusterState::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn follows_the_last_pass_until_it_is_stale() {
        let now = Utc::now();
        let pass = |outcome, ago| LastPass {
            outcome,
            finished_at: now - Duration::seconds(ago),
        };
        assert_eq!(state(None, 15, now), ClusterState::Unknown);
        assert_eq!(
            state(Some(pass(ClusterState::Up, 10)), 15, now),
            ClusterState::Up
        );
        assert_eq!(
            state(Some(pass(ClusterState::Degraded, 10)), 15, now),
            ClusterState::Degraded
        );
        assert_eq!(
            state(Some(pass(ClusterState::Up, 46)), 15, now),
            ClusterState::Unreachable
        );
        assert_eq!(
            ClusterState::parse(ClusterState::Degraded.as_str()),
            ClusterState::Degraded
        );
    }

    #[test]
    fn a_removed_cluster_is_kept_for_the_history_period() {
        let removed = DateTime::parse_from_rfc3339("2026-12-05T10:00:00Z")
            .expect("a valid time")
            .with_timezone(&Utc);
        let purged = purged_on(removed);
        assert_eq!(purged.to_rfc3339(), "2027-03-05T10:00:00+00:00");
        // Due exactly when its period is over, not a second before.
        assert!(purge_cutoff(purged - Duration::seconds(1)) < removed);
        assert_eq!(purge_cutoff(purged), removed);
    }
}
