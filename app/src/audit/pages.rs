//! Settings → Audit log: every sign-in and change, newest first, filterable
//! and paginated on the server; beside it, the refusals by unauthenticated
//! sources, counted per source and minute.

use crate::audit::fns::{list_audit, list_refusals};
use crate::audit::widgets::DetailLines;
use crate::ui::notes::ErrorNote;
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, page_param, query_param};
use crate::ui::sort::{shown, sort_header};
use crate::ui::time::{stamp, stamp_ago};
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::audit::list::AuditColumn;

#[component]
pub fn AuditPage() -> impl IntoView {
    let actor = query_param("actor");
    let action = query_param("action");
    let target = query_param("target");
    let sort = query_param("sort");
    let page = page_param();
    let refusals_param = query_param("refusals_page");
    let refusals_page = Memo::new(move |_| {
        refusals_param
            .get()
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(1)
    });
    let rows = Resource::new(
        move || {
            (
                actor.get(),
                action.get(),
                target.get(),
                sort.get(),
                page.get(),
            )
        },
        |(actor, action, target, sort, page)| list_audit(actor, action, target, sort, page),
    );
    let refusals = Resource::new(
        move || (actor.get(), action.get(), target.get(), refusals_page.get()),
        |(actor, action, target, page)| list_refusals(actor, action, target, page),
    );
    view! {
        <Title text="Audit log" />
        <h1>"Audit log"</h1>
        <p class="note">
            "Append-only and hash-chained: " <code>"streamkeeper audit verify"</code>
            " checks every entry and names the first that was changed."
        </p>
        <form method="get" action="/settings/audit" class="filters" role="search">
            <label>"Actor " <input name="actor" value=move || actor.get().unwrap_or_default() /></label>
            <label>"Action " <input name="action" value=move || action.get().unwrap_or_default() placeholder="login.failure" /></label>
            <label>"Target " <input name="target" value=move || target.get().unwrap_or_default() placeholder="user:alice" /></label>
            // The filter keeps the order chosen by a column header.
            {move || sort.get().map(|v| view! { <input type="hidden" name="sort" value=v /> })}
            <button type="submit">"Filter"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match rows.await {
                    Ok(list) => {
                        let params = (actor.get_untracked(), action.get_untracked(), target.get_untracked(), sort.get_untracked());
                        let shown = shown::<AuditColumn>(params.3.as_deref());
                        let header = |label, column| sort_header(label, column, shown, |sort| href_with("/settings/audit", &[
                            ("actor", params.0.clone()),
                            ("action", params.1.clone()),
                            ("target", params.2.clone()),
                            ("sort", Some(sort)),
                        ]));
                        view! {
                            <table class="list audit" data-testid="audit">
                                <thead><tr>
                                    {header("#", AuditColumn::Id)}
                                    {header("When", AuditColumn::At)}
                                    {header("Actor", AuditColumn::Actor)}
                                    {header("Action", AuditColumn::Action)}
                                    {header("Target", AuditColumn::Target)}
                                    {header("From", AuditColumn::Source)}
                                    <th>"Details"</th>
                                </tr></thead>
                                <tbody>
                                    {list.items.clone().into_iter().map(|r| view! {
                                        <tr>
                                            <td>{r.id}</td>
                                            <td>{stamp_ago(r.at)}</td>
                                            <td>{r.actor}</td>
                                            <td><code>{r.action}</code></td>
                                            <td class="long">{r.target}</td>
                                            <td>{r.source}</td>
                                            <td class="long"><DetailLines detail=r.detail /></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            <Pager page=list href=move |n| href_with("/settings/audit", &[
                                ("actor", params.0.clone()),
                                ("action", params.1.clone()),
                                ("target", params.2.clone()),
                                ("sort", params.3.clone()),
                                ("page", Some(n.to_string())),
                            ]) />
                        }
                            .into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
        <h2>"Refused without signing in"</h2>
        <p class="note">
            "Cross-site requests, failed sign-ins and unknown tokens are counted per source, "
            "action and minute (anyone can send them, so one entry each would flood the log); "
            "each row shows the latest attempt."
        </p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match refusals.await {
                    Ok(list) => {
                        let params = (actor.get_untracked(), action.get_untracked(), target.get_untracked());
                        view! {
                            <table class="list audit" data-testid="audit-refusals">
                                <thead><tr><th>"Minute"</th><th>"From"</th><th>"Action"</th><th>"Count"</th><th>"First"</th><th>"Last"</th><th>"Latest target"</th><th>"Latest details"</th></tr></thead>
                                <tbody>
                                    {list.items.clone().into_iter().map(|r| view! {
                                        <tr>
                                            <td>{stamp(r.minute)}</td>
                                            <td>{r.source}</td>
                                            <td><code>{r.action}</code></td>
                                            <td>{r.count}</td>
                                            <td>{stamp(r.first_at)}</td>
                                            <td>{stamp(r.last_at)}</td>
                                            <td class="long">{r.target}</td>
                                            <td class="long"><DetailLines detail=r.detail /></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            <Pager label="Pages of refusals" page=list href=move |n| href_with("/settings/audit", &[
                                ("actor", params.0.clone()),
                                ("action", params.1.clone()),
                                ("target", params.2.clone()),
                                ("refusals_page", Some(n.to_string())),
                            ]) />
                        }
                            .into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
