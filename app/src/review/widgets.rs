//! Pieces the inbox, the item page and the review settings share.

// The edit and propose forms' server functions take one argument per
// field, as ActionForm sends them; the generated client function cannot
// carry an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::schemas::model::CompatibilityReport;
use leptos::prelude::*;
use streamkeeper::platform::words::counted;
use streamkeeper::review::{Autonomy, Base, State};
use streamkeeper::schemas::Verdict;

pub fn state_class(s: State) -> &'static str {
    match s {
        State::InReview => "badge state-warn",
        State::Approved | State::Applied => "badge state-ok",
        State::Rejected | State::ApplyFailed => "badge state-bad",
        State::Withdrawn => "badge",
    }
}

pub fn base_text(b: &Base) -> String {
    match (b.version, b.schema_id) {
        (Some(v), Some(id)) => format!("version {v} (schema id {id})"),
        (Some(v), None) => format!("version {v}"),
        (None, _) => "subject not registered yet".to_string(),
    }
}

/// The autonomy levels as a select, with their descriptions.
#[component]
pub fn AutonomySelect(selected: Autonomy) -> impl IntoView {
    view! {
        <label>
            "Autonomy level "
            <select name="autonomy">
                {Autonomy::ALL.map(|a| view! {
                    <option value=a.as_str() selected=a == selected>{a.describe()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// A revision apply sent back to review on a moved base: which fields of
/// the new base its schema leaves out, so nobody approves dropping them
/// without reading their names.
#[component]
pub fn RebaseDrops(base: Base, drops: Vec<String>) -> impl IntoView {
    let on = base
        .version
        .map_or("the new base".to_string(), |v| format!("version {v}"));
    (!drops.is_empty()).then(|| {
        let fields = drops
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ");
        view! {
            <p class="warning" role="alert" data-testid="rebase-drops">
                {format!(
                    "Rebased onto {on}, which moved under it: this revision leaves out {} of {on} ({fields}). Registering it drops {}; edit the schema to keep {}.",
                    counted(drops.len() as u64, "field"),
                    if drops.len() == 1 { "it" } else { "them" },
                    if drops.len() == 1 { "it" } else { "them" },
                )}
            </p>
        }
    })
}

/// Beside the approve button of an INCOMPATIBLE change: the consumers it
/// breaks, and whether the registry will refuse it, so an approval is not
/// given in the belief that it will simply apply.
#[component]
pub fn WhatItBreaks(r: CompatibilityReport) -> impl IntoView {
    (r.verdict == Verdict::Incompatible).then(|| {
        let broken: Vec<String> = r
            .consumers
            .iter()
            .filter(|c| c.verdict == Verdict::Incompatible)
            .map(|c| match &c.owner {
                Some(o) => format!("{} ({o})", c.group),
                None => c.group.clone(),
            })
            .collect();
        let refuses = r.history.verdict == Verdict::Incompatible
            || r.registry.as_ref().and_then(|o| o.is_compatible) == Some(false);
        view! {
            <div class="warning" role="alert" data-testid="approve-breaks">
                <p>
                    <span class="badge state-bad">"INCOMPATIBLE"</span>" "
                    {if broken.is_empty() {
                        "It breaks no consumer group, but it is incompatible with the subject's history.".to_string()
                    } else {
                        format!("Approving it breaks {}: {}.", counted(broken.len() as u64, "consumer group"), broken.join(", "))
                    }}
                </p>
                {refuses.then(|| view! {
                    <p data-testid="registry-refuses">{format!(
                        "The registry will refuse it: {} is at {} and this schema is incompatible with its history.",
                        r.history.subject,
                        r.history.mode.as_str()
                    )}</p>
                })}
            </div>
        }
    })
}
