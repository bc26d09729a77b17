//! A Connect cluster's connectors (the troubled first, searchable,
//! paginated on the server) and one connector: state, tasks with their
//! traces, the masked config, the topics it reads or writes, its history.

use crate::connect::fns::{get_connector, list_connectors};
use crate::connect::model::ConnectorDetail;
use crate::connect::widgets::state_class;
use crate::error::AppError;
use crate::ui::notes::ErrorNote;
use crate::ui::owner::owned;
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, id_param, page_param, query_param};
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn ConnectorsPage() -> impl IntoView {
    let id = id_param();
    let connect = query_param("name");
    let q = query_param("q");
    let page = page_param();
    let list = Resource::new(
        move || (id.get(), connect.get(), q.get(), page.get()),
        |(id, connect, q, page)| async move {
            match (id, connect) {
                (Some(id), Some(connect)) => list_connectors(id, connect, q, page).await,
                _ => Err(AppError::NotFound("That Connect cluster".into())),
            }
        },
    );
    let title = move || format!("{} · Connectors", connect.get().unwrap_or_default());
    view! {
        <Title text=title />
        <p><a href=move || format!("/clusters/{}", id.get().unwrap_or_default())>"← Cluster"</a></p>
        <h1>"Connectors of " {move || connect.get().unwrap_or_default()}</h1>
        <p><a data-testid="new-draft" href=move || href_with(
            &format!("/clusters/{}/connect/draft", id.get().unwrap_or_default()),
            &[("name", connect.get())],
        )>"Draft a connector"</a></p>
        <form method="get" action=move || format!("/clusters/{}/connect", id.get().unwrap_or_default()) class="filters" role="search">
            <input type="hidden" name="name" value=move || connect.get().unwrap_or_default() />
            <label>"Connector " <input name="q" type="search" value=move || q.get().unwrap_or_default() /></label>
            <button type="submit">"Search"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(list) => {
                        let id = id.get_untracked().unwrap_or_default();
                        let connect = connect.get_untracked().unwrap_or_default();
                        let search = q.get_untracked();
                        let path = format!("/clusters/{id}/connect");
                        let empty = list.items.is_empty();
                        let pager_connect = connect.clone();
                        view! {
                            {empty.then(|| view! {
                                <p class="note">"No connectors here yet: the connect-status routine lists them after its next pass over this Connect cluster."</p>
                            })}
                            <table class="list" data-testid="connectors">
                                <thead><tr><th>"Connector"</th><th>"Kind"</th><th>"State"</th><th>"Tasks"</th><th>"Owner"</th><th>"Failure"</th></tr></thead>
                                <tbody>
                                    {list.items.clone().into_iter().map(|c| {
                                        let href = href_with(&format!("/clusters/{id}/connector"), &[
                                            ("connect", Some(connect.clone())),
                                            ("name", Some(c.name.clone())),
                                        ]);
                                        let tasks = format!("{} running of {}{}", c.tasks_running, c.tasks_total,
                                            if c.tasks_failed > 0 { format!(", {} failed", c.tasks_failed) } else { String::new() });
                                        let state = match c.gone_at {
                                            Some(at) => format!("gone since {}", stamp_ago(at)),
                                            None => c.state.clone(),
                                        };
                                        view! {
                                            <tr class:trouble=c.trouble>
                                                <td><a href=href>{c.name}</a></td>
                                                <td>{c.kind}</td>
                                                <td><span class=state_class(&c.state)>{state}</span></td>
                                                <td>{tasks}</td>
                                                <td>{owned(c.owner.as_deref(), c.owner_reason.as_deref(), "unowned")}</td>
                                                <td>{c.failure.unwrap_or_default()}</td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                            <Pager page=list href=move |n| href_with(&path, &[
                                ("name", Some(pager_connect.clone())),
                                ("q", search.clone()),
                                ("page", Some(n.to_string())),
                            ]) />
                        }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn ConnectorPage() -> impl IntoView {
    let id = id_param();
    let connect = query_param("connect");
    let name = query_param("name");
    let detail = Resource::new(
        move || (id.get(), connect.get(), name.get()),
        |(id, connect, name)| async move {
            match (id, connect, name) {
                (Some(id), Some(connect), Some(name)) => get_connector(id, connect, name).await,
                _ => Err(AppError::NotFound("That connector".into())),
            }
        },
    );
    let title = move || format!("{} · Connectors", name.get().unwrap_or_default());
    view! {
        <Title text=title />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match detail.await {
                    Ok(d) => view! { <Connector id=id.get_untracked().unwrap_or_default() d /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Connector(id: i64, d: ConnectorDetail) -> impl IntoView {
    let s = d.summary;
    let back = href_with(
        &format!("/clusters/{id}/connect"),
        &[("name", Some(d.connect.clone()))],
    );
    let as_of = d.read_at.map_or("not read yet".to_string(), stamp_ago);
    let change = href_with(
        &format!("/clusters/{id}/connect/draft"),
        &[
            ("name", Some(d.connect.clone())),
            ("import", Some(s.name.clone())),
        ],
    );
    view! {
        <p><a href=back>"← Connectors of " {d.connect.clone()}</a></p>
        <h1>{s.name.clone()} " " <span class=state_class(&s.state) data-testid="connector-state">{s.state.clone()}</span></h1>
        <p class="note">
            {format!("{} connector{}; owner {}; states as of {}.",
                s.kind,
                s.class.as_deref().map(|c| format!(" ({c})")).unwrap_or_default(),
                owned(s.owner.as_deref(), s.owner_reason.as_deref(), "none"),
                as_of)}
        </p>
        {d.trace.clone().map(|t| view! {
            <div class="error" role="alert">
                <p>{s.failure.clone().unwrap_or_default()}</p>
                <details><summary>"Whole trace"</summary><pre tabindex="0">{t}</pre></details>
            </div>
        })}
        <h2>"Tasks"</h2>
        <table class="list" data-testid="tasks">
            <thead><tr><th>"Task"</th><th>"State"</th><th>"Worker"</th><th>"Trace"</th></tr></thead>
            <tbody>
                {d.tasks.into_iter().map(|t| view! {
                    <tr>
                        <td>{t.task}</td>
                        <td><span class=state_class(&t.state)>{t.state.clone()}</span></td>
                        <td>{t.worker_id.unwrap_or_default()}</td>
                        <td>{t.trace.map(|tr| {
                            let first = tr.lines().next().unwrap_or_default().to_string();
                            view! { <details><summary>{first}</summary><pre tabindex="0">{tr}</pre></details> }
                        })}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        <h2>"Topics it reads or writes"</h2>
        {if d.topics.is_empty() {
            view! { <p class="note">"None named in its config (a pattern, or a source whose topics come from its tables)."</p> }.into_any()
        } else {
            view! {
                <ul data-testid="connector-topics">
                    {d.topics.into_iter().map(|t| {
                        let href = href_with(&format!("/clusters/{id}/stream"), &[("name", Some(t.clone()))]);
                        view! { <li><a href=href>{t}</a></li> }
                    }).collect_view()}
                </ul>
            }.into_any()
        }}
        <h2>"Config"</h2>
        <p><a href=change data-testid="change-connector">"Change this connector"</a>
            <small class="note">" — its running config as a draft, checked, to propose for review."</small></p>
        <p class="note">"Inline secrets are shown as ******** and never stored in clear; ${…} references as written."</p>
        <table class="list" data-testid="connector-config">
            <thead><tr><th>"Property"</th><th>"Value"</th></tr></thead>
            <tbody>
                {d.config.into_iter().map(|(k, v)| view! { <tr><td><code>{k}</code></td><td><code>{v}</code></td></tr> }).collect_view()}
            </tbody>
        </table>
        <h2>"History"</h2>
        <table class="list" data-testid="connector-history">
            <thead><tr><th>"When"</th><th>"Of"</th><th>"State"</th><th>"Why"</th></tr></thead>
            <tbody>
                {d.history.into_iter().map(|h| view! {
                    <tr>
                        <td>{stamp_ago(h.at)}</td>
                        <td>{h.task.map_or("the connector".to_string(), |t| format!("task {t}"))}</td>
                        <td><span class=state_class(&h.state)>{h.state.clone()}</span></td>
                        <td>{h.first_line.unwrap_or_default()}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
