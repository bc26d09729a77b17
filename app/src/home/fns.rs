//! The home page's one server function: each part read through the port
//! the part's own page uses, so the home shows nothing its pages would not.

use crate::error::AppError;
use crate::home::model::Home;
use leptos::prelude::*;

#[server(prefix = "/fn", endpoint = "read_home")]
pub async fn read_home() -> Result<Home, AppError> {
    use crate::home::model::{HOME_ROWS, OwnerHome};
    use crate::port::{backend, principal};
    use crate::review::model::{InboxScope, ReviewFilter};
    use crate::watch::model::StreamFilter;
    use streamkeeper::accounts::role::{Action, Role};
    use streamkeeper::platform::page::PageRequest;
    use streamkeeper::review::State;
    let who = principal().await?;
    let b = backend()?;
    let me = b.accounts.me(&who).await?;
    let first = |n| PageRequest::new(Some(1), Some(n));
    let owner = if me.teams.is_empty() {
        None
    } else {
        let flags = b
            .flags
            .list(&who, true, true, None, first(HOME_ROWS))
            .await?;
        let mine = ReviewFilter {
            scope: InboxScope::Mine,
            state: Some(State::InReview),
            kind: None,
            domain: None,
        };
        let in_review = b.reviews.list(&who, mine, first(HOME_ROWS)).await?;
        let unowned = StreamFilter {
            q: None,
            owner: Some("unowned".into()),
            status: None,
            sort: None,
        };
        let unowned_streams = b.watch.streams(&who, unowned, first(1)).await?.total;
        Some(OwnerHome {
            flags,
            in_review,
            unowned_streams,
        })
    };
    let waiting = if who.roles.contains(&Role::Approver) {
        let filter = ReviewFilter {
            scope: InboxScope::Waiting,
            state: None,
            kind: None,
            domain: None,
        };
        Some(b.reviews.list(&who, filter, first(HOME_ROWS)).await?)
    } else {
        None
    };
    let admin = if who.may(Action::ManageRoutines) {
        Some(admin_home(&b, &who).await?)
    } else {
        None
    };
    let broken_channels = b.notify.broken_channels(&who).await?;
    Ok(Home {
        pilot: who.may(Action::ReadPilot),
        broken_channels,
        me,
        owner,
        waiting,
        admin,
    })
}

/// An admin's open trouble: clusters not up, live flags by kind, failed
/// connectors, routines that failed or never ran, and where unowned
/// trouble goes.
#[cfg(feature = "ssr")]
async fn admin_home(
    b: &crate::port::Backend,
    who: &streamkeeper::accounts::account::Principal,
) -> Result<crate::home::model::AdminHome, AppError> {
    use crate::home::model::{AdminHome, by_kind};
    use streamkeeper::platform::page::{MAX_PER_PAGE, PageRequest};
    use streamkeeper::platform::schedule::Schedule;
    use streamkeeper::watch::cluster::ClusterState;
    let all = || PageRequest::new(Some(1), Some(MAX_PER_PAGE));
    let clusters = b.watch.clusters(who).await?;
    let total = clusters.len();
    let failed_connectors = failed_connectors(b, who, &clusters).await?;
    // A paused cluster's routines do not run: it is listed as paused, not
    // its routines as never run.
    let paused: Vec<i64> = clusters
        .iter()
        .filter(|c| c.paused.is_some())
        .map(|c| c.id)
        .collect();
    let clusters_not_up = clusters
        .into_iter()
        // A paused cluster is not watched, whatever its last pass said.
        .filter(|c| c.state != ClusterState::Up || c.paused.is_some())
        .collect();
    let flags = b.flags.list(who, false, true, None, all()).await?;
    let open_flags = by_kind(flags.items.iter().map(|f| f.kind.as_str()));
    let (routines_failing, routines_never_ran) = b
        .routines
        .list(who, None, all())
        .await?
        .items
        .into_iter()
        .filter(|r| {
            r.last_outcome.as_deref() == Some("failed")
                || (r.last_started_at.is_none()
                    && r.records_idle_runs
                    && !r.running
                    && r.schedule != Schedule::Paused
                    && !r.cluster_id.is_some_and(|id| paused.contains(&id)))
        })
        .partition(|r| r.last_outcome.as_deref() == Some("failed"));
    let platform_team = b.accounts.routing(who).await?.platform_team;
    // Only those who manage teams read their members.
    let platform_team_empty = match &platform_team {
        Some(name) if who.may(streamkeeper::accounts::role::Action::ManageUsers) => b
            .accounts
            .list_teams(who, all())
            .await?
            .items
            .iter()
            .any(|t| &t.name == name && t.members == 0),
        _ => false,
    };
    Ok(AdminHome {
        open_flags,
        open_flags_total: flags.total,
        failed_connectors,
        routines_never_ran,
        platform_team_empty,
        clusters_not_up,
        clusters: total,
        routines_failing,
        platform_team,
    })
}

/// The connectors that failed (or have a failed task) on each cluster's
/// Connect clusters: the troubled are listed first, so the first page
/// holds them.
#[cfg(feature = "ssr")]
async fn failed_connectors(
    b: &crate::port::Backend,
    who: &streamkeeper::accounts::account::Principal,
    clusters: &[crate::watch::model::ClusterView],
) -> Result<Vec<crate::home::model::FailedConnector>, AppError> {
    use crate::home::model::{FailedConnector, HOME_ROWS};
    use streamkeeper::platform::page::PageRequest;
    let mut out = Vec::new();
    for c in clusters {
        for connect in b.connect.connect_clusters(who, c.id).await? {
            if connect.failing == 0 {
                continue;
            }
            let first = PageRequest::new(Some(1), Some(HOME_ROWS));
            let page = b
                .connect
                .connectors(who, c.id, &connect.name, None, first)
                .await?;
            out.extend(
                page.items
                    .into_iter()
                    .filter(|k| k.gone_at.is_none() && (k.state == "FAILED" || k.tasks_failed > 0))
                    .map(|k| FailedConnector {
                        cluster_id: c.id,
                        connect: connect.name.clone(),
                        name: k.name,
                        failure: k.failure,
                    }),
            );
        }
    }
    Ok(out)
}
