//! The audit's pieces other pages show: an entry's details for people.

use crate::audit::model::detail_lines;
use leptos::prelude::*;

/// An entry's details as key/value lines, the raw JSON in the entry's API.
#[component]
pub fn DetailLines(detail: String) -> impl IntoView {
    view! {
        <dl class="detail">
            {detail_lines(&detail).into_iter().map(|(k, v)| view! {
                <div><dt>{k}</dt><dd>{v}</dd></div>
            }).collect_view()}
        </dl>
    }
}
