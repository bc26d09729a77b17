//! The flags' server functions.

use crate::error::AppError;
use crate::flags::model::FlagView;
use leptos::prelude::*;
use streamkeeper::platform::page::Page;
#[cfg(feature = "ssr")]
use streamkeeper::{
    flags::{FlagScope, FlagState},
    platform::page::choice,
};

/// Flags by `scope` (`mine`, the default, or `all`) and `state` (`live`,
/// the default, or `any`).
#[server(prefix = "/fn", endpoint = "list_flags")]
pub async fn list_flags(
    scope: Option<String>,
    state: Option<String>,
    sort: Option<String>,
    page: u32,
) -> Result<Page<FlagView>, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    let mine = choice::<FlagScope>(scope.as_deref())?.unwrap_or_default() == FlagScope::Mine;
    let live = choice::<FlagState>(state.as_deref())?.unwrap_or_default() == FlagState::Live;
    backend()?
        .flags
        .list(&who, mine, live, sort, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_flag")]
pub async fn get_flag(id: i64) -> Result<FlagView, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.flags.get(&who, id).await
}

#[server(prefix = "/fn", endpoint = "acknowledge_flag")]
pub async fn acknowledge_flag(flag_id: i64) -> Result<FlagView, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    crate::ui::flash::noted(
        backend()?
            .flags
            .acknowledge(&who, &client_addr().await, flag_id)
            .await,
        |f| format!("Flag {} acknowledged.", f.id),
    )
    .await
}

/// Dismisses a flag: `dismissal` is `wrong` or `expected`; a snooze of
/// `snooze_hours` raises the trouble again then if it still lasts.
#[server(prefix = "/fn", endpoint = "dismiss_flag")]
pub async fn dismiss_flag(
    flag_id: i64,
    reason: String,
    dismissal: String,
    snooze_hours: Option<String>,
) -> Result<FlagView, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let hours = match snooze_hours.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(h) => Some(
            h.parse::<i64>()
                .map_err(|_| AppError::Invalid("A snooze is a whole number of hours.".into()))?,
        ),
    };
    let d = crate::flags::model::Dismissal {
        reason,
        dismissal,
        // Beyond a year is refused as too long anyway; clamped so the sum
        // cannot overflow.
        snooze_until: hours
            .map(|h| chrono::Utc::now() + chrono::Duration::hours(h.clamp(-1, 24 * 366))),
    };
    crate::ui::flash::noted(
        backend()?
            .flags
            .dismiss(&who, &client_addr().await, flag_id, &d)
            .await,
        |f| format!("Flag {} dismissed.", f.id),
    )
    .await
}
