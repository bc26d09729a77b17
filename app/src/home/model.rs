//! What the home page shows each kind of user: the parts their roles call
//! for, each `None` when the caller does not hold that part.

use crate::accounts::model::Me;
use crate::flags::model::FlagView;
use crate::platform::model::RoutineStatus;
use crate::review::model::ReviewSummary;
use crate::watch::model::ClusterView;
use serde::{Deserialize, Serialize};
use streamkeeper::platform::page::Page;

/// How many of each list the home page shows before "all N".
pub const HOME_ROWS: u32 = 5;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Home {
    pub me: Me,
    /// For members of a team (what a stream owner lives in).
    pub owner: Option<OwnerHome>,
    /// For approvers: what waits for their decision.
    pub waiting: Option<Page<ReviewSummary>>,
    pub admin: Option<AdminHome>,
    /// Managers read the pilot.
    pub pilot: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OwnerHome {
    /// Open flags routed to the caller's teams, newest first.
    pub flags: Page<FlagView>,
    /// The caller's own changes still in review.
    pub in_review: Page<ReviewSummary>,
    /// Streams nobody owns: their trouble reaches only the platform team.
    pub unowned_streams: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdminHome {
    /// Clusters whose last pass was not UP (unknown, degraded, unreachable),
    /// and paused ones (not watched).
    pub clusters_not_up: Vec<ClusterView>,
    pub clusters: usize,
    /// Routine targets whose last run failed.
    pub routines_failing: Vec<RoutineStatus>,
    /// Where flags of unowned streams go; none: to no one.
    pub platform_team: Option<String>,
}
