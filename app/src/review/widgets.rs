//! Pieces the inbox, the item page and the review settings share.

// The edit and propose forms' server functions take one argument per
// field, as ActionForm sends them; the generated client function cannot
// carry an allow of its own.
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;
use streamkeeper::review::{Autonomy, Base, State};

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
