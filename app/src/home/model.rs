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
    /// Channels that do not deliver, told to their team's owners, admins
    /// and the platform team until mended or removed.
    pub broken_channels: Vec<crate::notify::model::BrokenChannel>,
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
    /// Open and acknowledged flags of every team, counted by kind (STOP,
    /// STALL, WARN, FAILED…), the most first.
    pub open_flags: Vec<KindCount>,
    /// How many flags are live in all; the counts by kind cover the newest
    /// `MAX_PER_PAGE` of them.
    pub open_flags_total: u64,
    /// Connectors FAILED or with a FAILED task, on every Connect cluster.
    pub failed_connectors: Vec<FailedConnector>,
    /// Routine targets that are scheduled but have never run.
    pub routines_never_ran: Vec<RoutineStatus>,
    /// The platform team has no members: what reaches it reaches no one.
    pub platform_team_empty: bool,
    /// Clusters whose last pass was not UP (unknown, degraded, unreachable),
    /// and paused ones (not watched).
    pub clusters_not_up: Vec<ClusterView>,
    pub clusters: usize,
    /// Routine targets whose last run failed.
    pub routines_failing: Vec<RoutineStatus>,
    /// Where flags of unowned streams go; none: to no one.
    pub platform_team: Option<String>,
}

/// How many live flags of one kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCount {
    pub kind: String,
    pub count: u64,
}

/// A connector in trouble, where to find it and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailedConnector {
    pub cluster_id: i64,
    /// The Connect cluster's name.
    pub connect: String,
    pub name: String,
    /// The first line of the failure's trace.
    pub failure: Option<String>,
}

/// Live flags counted by kind, the most first (then by name, so the order
/// is stable).
pub fn by_kind<'a>(kinds: impl IntoIterator<Item = &'a str>) -> Vec<KindCount> {
    let mut counts = std::collections::BTreeMap::<&str, u64>::new();
    for k in kinds {
        *counts.entry(k).or_default() += 1;
    }
    let mut out: Vec<KindCount> = counts
        .into_iter()
        .map(|(kind, count)| KindCount {
            kind: kind.to_owned(),
            count,
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kind.cmp(&b.kind)));
    out
}
