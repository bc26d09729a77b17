//! The home page's one server function: each part read through the port
//! the part's own page uses, so the home shows nothing its pages would not.

use crate::error::AppError;
use crate::home::model::Home;
use leptos::prelude::*;

#[server(prefix = "/fn", endpoint = "read_home")]
pub async fn read_home() -> Result<Home, AppError> {
    use crate::home::model::{AdminHome, HOME_ROWS, OwnerHome};
    use crate::port::{backend, principal};
    use crate::review::model::{InboxScope, ReviewFilter};
    use crate::watch::model::StreamFilter;
    use streamkeeper::accounts::role::{Action, Role};
    use streamkeeper::platform::page::PageRequest;
    use streamkeeper::review::State;
    use streamkeeper::watch::cluster::ClusterState;
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
        let clusters = b.watch.clusters(&who).await?;
        let total = clusters.len();
        let clusters_not_up = clusters
            .into_iter()
            // A paused cluster is not watched, whatever its last pass said.
            .filter(|c| c.state != ClusterState::Up || c.paused.is_some())
            .collect();
        let routines_failing = b
            .routines
            .list(
                &who,
                None,
                first(streamkeeper::platform::page::MAX_PER_PAGE),
            )
            .await?
            .items
            .into_iter()
            .filter(|r| r.last_outcome.as_deref() == Some("failed"))
            .collect();
        let platform_team = b.accounts.routing(&who).await?.platform_team;
        Some(AdminHome {
            clusters_not_up,
            clusters: total,
            routines_failing,
            platform_team,
        })
    } else {
        None
    };
    Ok(Home {
        pilot: who.may(Action::ReadPilot),
        me,
        owner,
        waiting,
        admin,
    })
}
