//! Column lineage on the screens (issue 43, item 4): the impact page's
//! field picker and the column paths it draws, and a dataset's columns
//! with where each comes from.

use crate::error::AppError;
use crate::lineage::model::{DatasetColumnsView, FieldImpactView};
use crate::lineage::widgets::graph_href;
use crate::ui::notes::ErrorText;
use leptos::prelude::*;

/// A plain GET form (it works with JavaScript off) that asks the impact
/// page again for one field of `node`, among `fields`.
#[component]
pub fn FieldPicker(
    node: String,
    direction: String,
    depth: Option<u32>,
    fields: Vec<String>,
    chosen: Option<String>,
) -> impl IntoView {
    if fields.is_empty() {
        return view! {
            <p class="note" data-testid="field-picker-none">"No field of it is known (no schema facet or column lineage names one): the answer is for the whole dataset."</p>
        }
        .into_any();
    }
    view! {
        <form method="get" action="/lineage/impact" class="filters" data-testid="field-picker">
            <input type="hidden" name="node" value=node />
            <input type="hidden" name="direction" value=direction />
            {depth.map(|d| view! { <input type="hidden" name="depth" value=d.to_string() /> })}
            <label>
                "Field "
                <select name="field">
                    <option value="" selected=chosen.is_none()>"The whole dataset"</option>
                    {fields.into_iter().map(|f| {
                        let selected = chosen.as_deref() == Some(f.as_str());
                        view! { <option value=f.clone() selected=selected>{f.clone()}</option> }
                    }).collect_view()}
                </select>
            </label>
            <button type="submit">"Show"</button>
        </form>
    }
    .into_any()
}

/// The paths a field's column lineage takes: each reached field with the
/// chain of fields that leads to it, its owner and whether every hop is
/// DIRECT; then where the trail goes cold.
#[component]
pub fn ColumnPaths(v: Result<FieldImpactView, AppError>) -> impl IntoView {
    let v = match v {
        Ok(v) => v,
        // The page went well; only this part is missing: its status stays.
        Err(err) => return view! { <ErrorText err /> }.into_any(),
    };
    let summary = format!(
        "{} reaches {} field{}{}.",
        v.start,
        v.fields.len(),
        if v.fields.len() == 1 { "" } else { "s" },
        if v.partial {
            " (partial: the walk was cut)"
        } else {
            ""
        }
    );
    view! {
        <section data-testid="column-paths">
            <h2>"Column paths"</h2>
            <p class="note" data-testid="column-summary">{summary}</p>
            <ol class="column-paths">
                {v.fields.into_iter().map(|f| {
                    let hops = f.path.len();
                    view! {
                        <li data-field=format!("{}.{}", f.dataset, f.field) class:indirect={f.kind == "INDIRECT"}>
                            <span class="path">
                                {f.path.into_iter().enumerate().map(|(i, p)| view! {
                                    {(i > 0).then(|| view! { <span class="arrow">" → "</span> })}
                                    {if i + 1 == hops {
                                        view! { <a href=graph_href(&f.node, None)><code>{p}</code></a> }.into_any()
                                    } else {
                                        view! { <code>{p}</code> }.into_any()
                                    }}
                                }).collect_view()}
                            </span>
                            <span class="note">{format!(
                                " · {} · {}{}",
                                f.kind,
                                f.owner.map_or("no owner".to_owned(), |o| format!("team {o}")),
                                if f.known { "" } else { " · not in the graph" }
                            )}</span>
                        </li>
                    }
                }).collect_view()}
            </ol>
            {(!v.cold.is_empty()).then(|| view! {
                <p class="note">"Where the trail goes cold:"</p>
                <ul data-testid="column-cold">
                    {v.cold.into_iter().map(|c| view! {
                        <li>{format!("{} {} ({})", c.job, c.message, c.owner.unwrap_or_else(|| "no owner".into()))}</li>
                    }).collect_view()}
                </ul>
            })}
        </section>
    }
    .into_any()
}

/// A dataset's columns, each with the input fields it comes from.
#[component]
pub fn DatasetColumns(v: DatasetColumnsView) -> impl IntoView {
    if v.columns.is_empty() {
        return view! {
            <p class="note" data-testid="dataset-columns-none">"No column of it is known: no schema facet or column lineage names one."</p>
        }
        .into_any();
    }
    view! {
        <table class="list" data-testid="dataset-columns">
            <thead><tr><th>"Column"</th><th>"Comes from"</th><th>"Read downstream"</th></tr></thead>
            <tbody>
                {v.columns.into_iter().map(|c| view! {
                    <tr data-column=c.field.clone()>
                        <td><code>{c.field.clone()}</code></td>
                        <td>
                            {if c.sources.is_empty() {
                                view! { <span class="note">"unknown: no column lineage writes it"</span> }.into_any()
                            } else {
                                view! {
                                    <ul>
                                        {c.sources.into_iter().map(|s| view! {
                                            <li>
                                                <a href=graph_href(&s.node, None)><code>{s.from}</code></a>
                                                {format!(" ({}{})", s.kind, if s.subtypes.is_empty() { String::new() } else { format!(", {}", s.subtypes.join(", ")) })}
                                            </li>
                                        }).collect_view()}
                                    </ul>
                                }.into_any()
                            }}
                        </td>
                        <td>{if c.read_downstream { "yes" } else { "no" }}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
