//! Settings → Audit log: every sign-in and change, newest first, filterable
//! and paginated on the server.

use crate::components::{ErrorNote, Pager, href_with, page_param, query_param};
use crate::error::AppError;
use crate::model::AuditRow;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::page::Page;

#[server(prefix = "/fn", endpoint = "list_audit")]
pub async fn list_audit(
    actor: Option<String>,
    action: Option<String>,
    target: Option<String>,
    page: u32,
) -> Result<Page<AuditRow>, AppError> {
    use crate::model::AuditFilter;
    use crate::port::{backend, principal};
    use streamkeeper::page::PageRequest;
    let who = principal().await?;
    let filter = AuditFilter {
        actor,
        action,
        target,
    };
    backend()?
        .audit
        .entries(&who, filter, PageRequest::new(Some(page), None))
        .await
}

#[component]
pub fn AuditPage() -> impl IntoView {
    let actor = query_param("actor");
    let action = query_param("action");
    let target = query_param("target");
    let page = page_param();
    let rows = Resource::new(
        move || (actor.get(), action.get(), target.get(), page.get()),
        |(actor, action, target, page)| list_audit(actor, action, target, page),
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
            <button type="submit">"Filter"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match rows.await {
                    Ok(list) => {
                        let params = (actor.get_untracked(), action.get_untracked(), target.get_untracked());
                        view! {
                            <table class="list" data-testid="audit">
                                <thead><tr><th>"#"</th><th>"When (UTC)"</th><th>"Actor"</th><th>"Action"</th><th>"Target"</th><th>"From"</th><th>"Details"</th></tr></thead>
                                <tbody>
                                    {list.items.clone().into_iter().map(|r| view! {
                                        <tr>
                                            <td>{r.id}</td>
                                            <td>{r.at.format("%Y-%m-%d %H:%M:%S").to_string()}</td>
                                            <td>{r.actor}</td>
                                            <td><code>{r.action}</code></td>
                                            <td>{r.target}</td>
                                            <td>{r.source}</td>
                                            <td><code class="detail">{r.detail}</code></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            <Pager page=list href=move |n| href_with("/settings/audit", &[
                                ("actor", params.0.clone()),
                                ("action", params.1.clone()),
                                ("target", params.2.clone()),
                                ("page", Some(n.to_string())),
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
