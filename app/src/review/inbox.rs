//! The review inbox: waiting for me, mine, all, with filters, and the unread
//! notifications.

// The edit and propose forms' server functions take one argument per
// field, as ActionForm sends them; the generated client function cannot
// carry an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::review::fns::{MarkReviewNotificationsRead, list_review_notifications, list_reviews};
use crate::review::model::{InboxScope, NotificationView, ReviewSummary};
use crate::review::widgets::state_class;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, page_param, query_param};
use crate::ui::schema::verdict_class;
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::platform::page::{Page, choice};
use streamkeeper::review::{Kind, State};

/// `/review?scope=waiting|mine|all&state=&kind=&domain=`: the inbox.
#[component]
pub fn ReviewPage() -> impl IntoView {
    let scope = query_param("scope");
    let state = query_param("state");
    let kind = query_param("kind");
    let domain = query_param("domain");
    let page = page_param();
    let mark = ServerAction::<MarkReviewNotificationsRead>::new();
    // The tab to show as current; the list itself refuses an unknown scope.
    let current = Memo::new(move |_| {
        choice::<InboxScope>(scope.get().as_deref())
            .ok()
            .flatten()
            .unwrap_or_default()
    });
    let items = Resource::new(
        move || {
            (
                scope.get(),
                state.get(),
                kind.get(),
                domain.get(),
                page.get(),
            )
        },
        |(scope, state, kind, domain, page)| list_reviews(scope, state, kind, domain, page),
    );
    let notes = Resource::new(
        move || mark.version().get(),
        |_| list_review_notifications(1),
    );
    let tab = move |s: InboxScope, label: &'static str| {
        let href = href_with(
            "/review",
            &[
                ("scope", Some(s.as_str().to_string())),
                ("state", state.get()),
                ("kind", kind.get()),
                ("domain", domain.get()),
            ],
        );
        let here = move || (current.get() == s).then_some("page");
        view! { <a href=href aria-current=here data-testid=format!("tab-{}", s.as_str())>{label}</a> }
    };
    view! {
        <Title text="Review inbox" />
        <h1>"Review inbox"</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match notes.await {
                    Ok(list) => view! { <Unread list mark /> }.into_any(),
                    Err(_) => ().into_any(),
                }
            })}
        </Suspense>
        <ActionNote value=mark.value() />
        <nav class="tabs" aria-label="Which items">
            {tab(InboxScope::Waiting, "Waiting for me")}
            {tab(InboxScope::Mine, "Mine")}
            {tab(InboxScope::All, "All")}
        </nav>
        <form method="get" action="/review" class="filters" role="search">
            <input type="hidden" name="scope" value=move || current.get().as_str() />
            <label>
                "State "
                <select name="state">
                    <option value="" selected=move || state.get().is_none()>"any"</option>
                    {State::ALL.map(|s| view! {
                        <option value=s.as_str() selected=move || state.get().as_deref() == Some(s.as_str())>{s.describe()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>
                "Kind "
                <select name="kind">
                    <option value="" selected=move || kind.get().is_none()>"any"</option>
                    {Kind::ALL.map(|k| view! {
                        <option value=k.as_str() selected=move || kind.get().as_deref() == Some(k.as_str())>{k.describe()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"Domain " <input name="domain" value=move || domain.get().unwrap_or_default() /></label>
            <button type="submit">"Filter"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match items.await {
                    Ok(list) if list.items.is_empty() => {
                        let filtered = state.get_untracked().is_some()
                            || kind.get_untracked().is_some()
                            || domain.get_untracked().is_some();
                        view! { <EmptyInbox scope=current.get_untracked() filtered /> }.into_any()
                    }
                    Ok(list) => {
                        let params = (
                            current.get_untracked(),
                            state.get_untracked(),
                            kind.get_untracked(),
                            domain.get_untracked(),
                        );
                        view! {
                            <ReviewTable items=list.items.clone() />
                            <Pager page=list href=move |n| href_with("/review", &[
                                ("scope", Some(params.0.as_str().to_string())),
                                ("state", params.1.clone()),
                                ("kind", params.2.clone()),
                                ("domain", params.3.clone()),
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

/// Unread notifications above the inbox, with "Mark all read".
#[component]
fn Unread(
    list: Page<NotificationView>,
    mark: ServerAction<MarkReviewNotificationsRead>,
) -> impl IntoView {
    let unread: Vec<NotificationView> = list.items.into_iter().filter(|n| !n.read).collect();
    (!unread.is_empty()).then(|| {
        view! {
            <section class="card" data-testid="notifications">
                <h2>"New for you"</h2>
                <ul>
                    {unread.into_iter().map(|n| view! {
                        <li>
                            {match n.item_id {
                                Some(id) => view! { <a href=format!("/review/{id}")>{n.message.clone()}</a> }.into_any(),
                                None => view! { <span>{n.message.clone()}</span> }.into_any(),
                            }}
                            <span class="note">{format!(" · {}", stamp_ago(n.created_at))}</span>
                        </li>
                    }).collect_view()}
                </ul>
                <ActionForm action=mark attr:data-testid="mark-read">
                    <button type="submit" class="secondary">"Mark all read"</button>
                </ActionForm>
            </section>
        }
    })
}

/// What an empty inbox tab means, and what to do about it.
#[component]
fn EmptyInbox(scope: InboxScope, filtered: bool) -> impl IntoView {
    let text = if filtered {
        "No items match these filters. Clear them to see the whole tab."
    } else {
        match scope {
            InboxScope::Waiting => {
                "Nothing is waiting for you. Items appear here when you are a named approver of their domain and have not decided them yet; admins name approvers under Settings → Review."
            }
            InboxScope::Mine => {
                "You have not proposed or edited anything. Propose a producer change from a stream's \"Check a producer change\" page, or a schema registration from a registry's subjects page."
            }
            InboxScope::All => {
                "There are no review items yet. They are created when someone proposes a producer change or a schema registration."
            }
        }
    };
    let clear = filtered.then(|| {
        let href = href_with("/review", &[("scope", Some(scope.as_str().to_string()))]);
        view! { " " <a href=href>"Clear the filters"</a> }
    });
    view! { <p class="note" data-testid="inbox-empty">{text} {clear}</p> }
}

#[component]
fn ReviewTable(items: Vec<ReviewSummary>) -> impl IntoView {
    view! {
        <table class="list" data-testid="review-items">
            <thead><tr>
                <th>"#"</th><th>"Title"</th><th>"Kind"</th><th>"Domain"</th><th>"Cluster / topic"</th>
                <th>"Author"</th><th>"State"</th><th>"Verdict"</th><th>"Approvals"</th><th>"Updated"</th>
            </tr></thead>
            <tbody>
                {items.into_iter().map(|r| {
                    let stream = href_with(&format!("/clusters/{}/stream", r.cluster_id), &[("name", Some(r.topic.clone()))]);
                    view! {
                        <tr data-item=r.id.to_string() class:waiting=r.waiting_for_me>
                            <td>{r.id}</td>
                            <td><a href=format!("/review/{}", r.id)>{r.title.clone()}</a></td>
                            <td>{r.kind.describe()}</td>
                            <td>{if r.domain.is_empty() { "–".to_string() } else { r.domain.clone() }}</td>
                            <td>{r.cluster.clone()} " / " <a href=stream>{r.topic.clone()}</a></td>
                            <td>{r.author.clone()}</td>
                            <td><span class=state_class(r.state) data-testid="state">{r.state.describe()}</span></td>
                            <td><span class=verdict_class(r.verdict)>{r.verdict.as_str()}</span></td>
                            <td>{format!("{} of {}", r.approval_count, r.required)}</td>
                            <td>{stamp_ago(r.updated_at)}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
