//! The routines' server functions (admins; the port refuses others and
//! audits the refusal).

use crate::error::AppError;
use crate::platform::model::{ReplicaShares, Rescheduled, RoutineStatus, RunRequested};
use leptos::prelude::*;
use streamkeeper::platform::page::Page;

#[server(prefix = "/fn", endpoint = "list_routines")]
pub async fn list_routines(page: u32) -> Result<Page<RoutineStatus>, AppError> {
    use crate::platform::model::ROUTINES_PER_PAGE;
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    backend()?
        .routines
        .list(
            &who,
            None,
            PageRequest::new(Some(page), Some(ROUTINES_PER_PAGE)),
        )
        .await
}

#[server(prefix = "/fn", endpoint = "list_replicas")]
pub async fn list_replicas() -> Result<ReplicaShares, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.routines.replicas(&who).await
}

/// Sets a routine's schedule from the form: `kind` is `default`, `every`
/// (with `interval` as `90s`, `5m`, `2h`, `1d` or seconds), `cron` (with
/// `expression`, UTC) or `paused`.
#[server(prefix = "/fn", endpoint = "set_routine_schedule")]
pub async fn set_routine_schedule(
    routine: String,
    kind: String,
    interval: String,
    expression: String,
) -> Result<Rescheduled, AppError> {
    use crate::port::{backend, client_addr, principal};
    use streamkeeper::platform::schedule::{Schedule, parse_interval};
    let who = principal().await?;
    let schedule = match kind.as_str() {
        "default" => Schedule::Default,
        "paused" => Schedule::Paused,
        "every" => parse_interval(&interval).map_err(|_| {
            AppError::Invalid(format!(
                "An interval is a number with s, m, h or d (90s, 5m, 2h), between 1 s and 7 days; not '{}'.",
                interval.trim()
            ))
        })?,
        "cron" => Schedule::Cron {
            expression: expression.trim().to_owned(),
        },
        other => {
            return Err(AppError::Invalid(format!(
                "A schedule is default, every, cron or paused; not '{other}'."
            )));
        }
    };
    let schedule = backend()?
        .routines
        .set_schedule(&who, &client_addr().await, &routine, schedule)
        .await?;
    crate::ui::flash::noted(Ok(Rescheduled { routine, schedule }), |r| {
        format!("{} now runs {}.", r.routine, r.schedule)
    })
    .await
}

/// Runs a routine once now, for one cluster or (`cluster` empty) every
/// target.
#[server(prefix = "/fn", endpoint = "run_routine")]
pub async fn run_routine(routine: String, cluster: String) -> Result<RunRequested, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let cluster = Some(cluster.trim()).filter(|c| !c.is_empty());
    crate::ui::flash::noted(
        backend()?
            .routines
            .run_now(&who, &client_addr().await, &routine, cluster)
            .await,
        |r| {
            format!(
                "{} will run once for {} target{} at the next check (within a second or two).",
                r.routine,
                r.targets,
                if r.targets == 1 { "" } else { "s" }
            )
        },
    )
    .await
}
