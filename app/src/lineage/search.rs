//! `/lineage`: datasets and jobs found by name, each with links to its
//! graph and to what breaks if it changes.

use crate::lineage::fns::lineage_search;
use crate::lineage::widgets::{graph_href, impact_href};
use crate::ui::notes::ErrorNote;
use crate::ui::params::query_param;
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn LineageSearchPage() -> impl IntoView {
    let q = query_param("q");
    let hits = Resource::new(
        move || q.get(),
        |q| async move {
            match q {
                Some(q) => lineage_search(q).await.map(Some),
                None => Ok(None),
            }
        },
    );
    view! {
        <Title text="Lineage" />
        <h1>"Lineage"</h1>
        <p class="note">"Topics, consumer groups, connectors, tables, jobs and dashboards, as OpenLineage events and Streamkeeper's own discoveries report them. Find one by name to see its graph and what breaks if it changes."</p>
        <form method="get" action="/lineage" class="filters" role="search">
            <label>"Dataset or job " <input name="q" type="search" value=move || q.get().unwrap_or_default() /></label>
            <button type="submit">"Search"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match hits.await {
                    Ok(None) => ().into_any(),
                    Ok(Some(hits)) if hits.is_empty() => view! {
                        <p class="note" data-testid="no-hits">"Nothing of that name in the lineage graph."</p>
                    }.into_any(),
                    Ok(Some(hits)) => view! {
                        <table class="list" data-testid="lineage-hits">
                            <thead><tr><th>"Name"</th><th>"Kind"</th><th>"Namespace"</th><th>"Last seen"</th><th>"Impact"</th></tr></thead>
                            <tbody>
                                {hits.into_iter().map(|h| view! {
                                    <tr>
                                        <td><a href=graph_href(&h.id, None)>{h.name.clone()}</a></td>
                                        <td>{h.kind.clone()}</td>
                                        <td><code>{h.namespace.clone()}</code></td>
                                        <td>{h.last_seen.map(stamp_ago).unwrap_or_default()}</td>
                                        <td><a href=impact_href(&h.id, "downstream")>"What breaks"</a></td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
