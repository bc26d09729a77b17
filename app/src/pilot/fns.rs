//! The pilot's server functions. The settings form's function takes one
//! argument per field, as ActionForm sends them.

// One argument per form field; the generated client function cannot carry
// an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::error::AppError;
use crate::pilot::model::PilotView;
use leptos::prelude::*;
use streamkeeper::pilot::PilotSettings;

/// The manager's page: the report as of now and a page of receipts.
#[server(prefix = "/fn", endpoint = "read_pilot")]
pub async fn read_pilot(receipts_page: u32) -> Result<PilotView, AppError> {
    use crate::pilot::model::RECEIPTS_PER_PAGE;
    use crate::port::{backend, client_addr, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    let from = client_addr().await;
    let pilot = backend()?.pilot;
    // The report first: a reader refused it is refused once, on the record
    // once, and never reaches the receipts (together, whether the second
    // read was refused too depended on which finished first).
    let report = pilot.report(&who, &from, chrono::Utc::now()).await?;
    let receipts = pilot
        .receipts(
            &who,
            &from,
            PageRequest::new(Some(receipts_page), Some(RECEIPTS_PER_PAGE)),
        )
        .await?;
    Ok(PilotView {
        pilot: report,
        receipts,
    })
}

#[server(prefix = "/fn", endpoint = "read_pilot_settings")]
pub async fn read_pilot_settings() -> Result<PilotSettings, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    backend()?.pilot.settings(&who, &client_addr().await).await
}

/// Sets the pilot up from the settings form: the scope one entry a line
/// (or comma-separated), the start date, and per metric its baseline in
/// minutes with a note (a metric left at its default keeps it).
#[server(prefix = "/fn", endpoint = "set_pilot")]
pub async fn set_pilot(
    scope_kind: String,
    scope: String,
    started_on: String,
    lag_flagged_minutes: String,
    lag_flagged_note: String,
    change_checked_minutes: String,
    change_checked_note: String,
    change_reviewed_minutes: String,
    change_reviewed_note: String,
    lineage_answered_minutes: String,
    lineage_answered_note: String,
    lineage_notified_minutes: String,
    lineage_notified_note: String,
) -> Result<PilotSettings, AppError> {
    use crate::port::{backend, client_addr, principal};
    use streamkeeper::pilot::{Metric, PilotInput, form_baseline};
    let who = principal().await?;
    let invalid = |e: streamkeeper::pilot::PilotError| AppError::Invalid(format!("{e}."));
    let scope_kind = scope_kind.parse().map_err(invalid)?;
    let started_on =
        chrono::NaiveDate::parse_from_str(started_on.trim(), "%Y-%m-%d").map_err(|_| {
            AppError::Invalid(format!(
                "The start is a date as YYYY-MM-DD, not '{}'.",
                started_on.trim()
            ))
        })?;
    let fields = [
        (Metric::LagFlagged, lag_flagged_minutes, lag_flagged_note),
        (
            Metric::ChangeChecked,
            change_checked_minutes,
            change_checked_note,
        ),
        (
            Metric::ChangeReviewed,
            change_reviewed_minutes,
            change_reviewed_note,
        ),
        (
            Metric::LineageAnswered,
            lineage_answered_minutes,
            lineage_answered_note,
        ),
        (
            Metric::LineageNotified,
            lineage_notified_minutes,
            lineage_notified_note,
        ),
    ];
    let mut baselines = Vec::new();
    for (metric, minutes, note) in fields {
        if let Some(b) = form_baseline(metric, &minutes, &note).map_err(invalid)? {
            baselines.push(b);
        }
    }
    let input = PilotInput {
        scope_kind,
        scope: scope
            .split([',', '\n'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        started_on,
        baselines,
    };
    crate::ui::flash::noted(
        backend()?
            .pilot
            .set(&who, &client_addr().await, input)
            .await,
        |s| {
            format!(
                "Saved the pilot (from {}).",
                s.started_on.map(|d| d.to_string()).unwrap_or_default()
            )
        },
    )
    .await
}
