//! Flags: the ones routed to my teams (or all), and a flag's page with its
//! receipts, timings, and the acknowledge and dismiss forms.

use crate::accounts::fns::get_routing;
use crate::error::AppError;
use crate::flags::fns::{AcknowledgeFlag, DismissFlag, get_flag, list_flags};
use crate::flags::model::FlagView;
use crate::flags::widgets::Receipts;
use crate::notify::widgets::DeliveryLog;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, id_param, page_param, query_param};
use crate::ui::sort::{shown, sort_header};
use crate::ui::time::{stamp_ago, stamp_ago_or_dash};
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::flags::lifecycle::dismissal_words;
use streamkeeper::flags::{FlagColumn, FlagScope, FlagState};
use streamkeeper::platform::page::choice;

fn kind_class(kind: &str) -> &'static str {
    match kind {
        "WARN" => "badge state-warn",
        _ => "badge state-bad",
    }
}

/// A flag's state as listed: a dismissal says which kind it was.
fn state_words(f: &crate::flags::model::FlagView) -> String {
    if f.state == "dismissed" {
        dismissal_words(f.dismissal.as_deref(), None)
    } else {
        f.state.clone()
    }
}

#[component]
pub fn FlagsPage() -> impl IntoView {
    let scope = query_param("scope");
    let state = query_param("state");
    let sort = query_param("sort");
    let page = page_param();
    // For the pager's links; the list itself refuses an unknown value.
    let all =
        Memo::new(move |_| choice(scope.get().as_deref()).ok().flatten() == Some(FlagScope::All));
    let any =
        Memo::new(move |_| choice(state.get().as_deref()).ok().flatten() == Some(FlagState::Any));
    let flags = Resource::new(
        move || (scope.get(), state.get(), sort.get(), page.get()),
        |(scope, state, sort, page)| list_flags(scope, state, sort, page),
    );
    // Which flags, keeping the order chosen by a column header.
    let link = move |scope: &str, state: &str| {
        href_with(
            "/flags",
            &[
                ("scope", Some(scope.to_string())),
                ("state", Some(state.to_string())),
                ("sort", sort.get()),
            ],
        )
    };
    let routing = Resource::new(|| (), |_| get_routing());
    view! {
        <Title text="Flags" />
        <h1>"Flags"</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                routing.await.ok().filter(|r| r.platform_team.is_none()).map(|_| view! {
                    <p class="error" role="alert" data-testid="no-platform-team">
                        "No platform team is set: flags on streams, groups and connectors nobody owns reach no one. An admin sets one under Settings → Teams."
                    </p>
                })
            })}
        </Suspense>
        <nav class="ranges" aria-label="Which flags">
            {[
                (false, false, "My teams, open"),
                (false, true, "My teams, all"),
                (true, false, "Everyone's, open"),
                (true, true, "Everyone's, all"),
            ].into_iter().map(|(everyone, every_state, label)| {
                let here = move || (all.get() == everyone && any.get() == every_state).then_some("page");
                view! {
                    <a href=link(if everyone { "all" } else { "mine" }, if every_state { "any" } else { "live" })
                        aria-current=here>{label}</a>
                }
            }).collect_view()}
        </nav>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match flags.await {
                    Ok(list) if list.items.is_empty() => view! {
                        <p class="note">"No flags here. Flags raised to your teams show up here first."</p>
                    }.into_any(),
                    Ok(list) => {
                        let (a, s) = (all.get_untracked(), any.get_untracked());
                        let order = sort.get_untracked();
                        let which = move |sort: Option<String>, page: Option<String>| href_with("/flags", &[
                            ("scope", Some(if a { "all" } else { "mine" }.to_string())),
                            ("state", Some(if s { "any" } else { "live" }.to_string())),
                            ("sort", sort),
                            ("page", page),
                        ]);
                        let shown = shown::<FlagColumn>(order.as_deref());
                        let header = |label, column| sort_header(label, column, shown, |sort| which(Some(sort), None));
                        view! {
                            <table class="list" data-testid="flags">
                                <thead><tr>
                                    {header("Flag", FlagColumn::Kind)}
                                    {header("Subject", FlagColumn::Subject)}
                                    {header("Cluster", FlagColumn::Cluster)}
                                    {header("Team", FlagColumn::Team)}
                                    {header("State", FlagColumn::State)}
                                    {header("Since", FlagColumn::Since)}
                                    <th>"Why"</th>
                                </tr></thead>
                                <tbody>
                                    {list.items.clone().into_iter().map(|f| { let state = state_words(&f); view! {
                                        <tr class="row-link" data-state=f.state.clone()>
                                            <td><a href=format!("/flags/{}", f.id)><span class=kind_class(&f.kind)>{f.kind.clone()}</span></a></td>
                                            <td>{format!("{} {}", f.subject_kind, f.subject)}</td>
                                            <td>{f.cluster}</td>
                                            <td>{f.team.unwrap_or_else(|| "unrouted".into())}</td>
                                            <td>{state}</td>
                                            <td>{stamp_ago_or_dash(Some(f.onset_at))}</td>
                                            <td>{f.reason}</td>
                                        </tr>
                                    }}).collect_view()}
                                </tbody>
                            </table>
                            <Pager page=list href=move |n| which(order.clone(), Some(n.to_string())) />
                        }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn FlagPage() -> impl IntoView {
    let id = id_param();
    let ack = ServerAction::<AcknowledgeFlag>::new();
    let dismiss = ServerAction::<DismissFlag>::new();
    let flag = Resource::new(
        move || (id.get(), ack.version().get(), dismiss.version().get()),
        |(id, _, _)| async move {
            match id {
                Some(id) => get_flag(id).await,
                None => Err(AppError::NotFound("That flag".into())),
            }
        },
    );
    view! {
        <p><a href="/flags">"← Flags"</a></p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match flag.await {
                    Ok(f) => view! { <FlagDetail f ack dismiss /> }.into_any(),
                    Err(err) => view! { <Title text="Flags" /> <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn FlagDetail(
    f: FlagView,
    ack: ServerAction<AcknowledgeFlag>,
    dismiss: ServerAction<DismissFlag>,
) -> impl IntoView {
    let id = f.id.to_string();
    let id2 = id.clone();
    let can_ack = f.actionable && f.state == "open";
    let can_dismiss = f.actionable && matches!(f.state.as_str(), "open" | "acknowledged");
    let group_link = (f.subject_kind == "group").then(|| {
        href_with(
            &format!("/clusters/{}/group", f.cluster_id),
            &[("name", Some(f.subject.clone()))],
        )
    });
    let title = page_title(
        Some(&format!("{} {} {}", f.kind, f.subject_kind, f.subject)),
        "Flags",
    );
    view! {
        <Title text=title />
        <h1>
            <span class=kind_class(&f.kind) data-testid="flag-kind">{f.kind.clone()}</span> " "
            {format!("{} {}", f.subject_kind, f.subject)}
        </h1>
        <p class="lead" data-testid="flag-reason">{f.reason.clone()}</p>
        <section class="card">
            <dl>
                <dt>"State"</dt><dd data-testid="flag-state">{f.state.clone()}</dd>
                <dt>"Cluster"</dt><dd>{f.cluster.clone()}</dd>
                <dt>"Routed to"</dt><dd>{f.team.clone().unwrap_or_else(|| "nobody: no owner and no platform team".into())}</dd>
                <dt>"Trouble began"</dt><dd>{stamp_ago_or_dash(Some(f.onset_at))}</dd>
                <dt>"Raised"</dt><dd>{stamp_ago_or_dash(Some(f.raised_at))}</dd>
                <dt>"Owner notified"</dt><dd>{stamp_ago_or_dash(f.notified_at)}</dd>
                <dt>"Acknowledged"</dt><dd>{format!("{} {}", stamp_ago_or_dash(f.acknowledged_at), f.acknowledged_by.clone().map(|b| format!("by {b}")).unwrap_or_default())}</dd>
                <dt>"Dismissed"</dt><dd data-testid="flag-dismissed">{format!("{} · {} ({})", stamp_ago_or_dash(f.dismissed_at), dismissal_words(f.dismissal.as_deref(), f.dismissed_reason.as_deref()), f.dismissed_by.clone().unwrap_or_default())}</dd>
                {f.snoozed_until.map(|t| view! { <dt>"Snoozed until"</dt><dd>{stamp_ago(t)}</dd> })}
                {(f.state == "dismissed").then(|| view! {
                    <dt>"Holding back"</dt><dd>{match f.released_at {
                        Some(t) => format!("no longer: let go {}", stamp_ago(t)),
                        None => "its trouble, while it lasts".to_string(),
                    }}</dd>
                })}
                <dt>"Resolved"</dt><dd>{stamp_ago_or_dash(f.resolved_at)}</dd>
            </dl>
            {group_link.map(|h| view! { <p><a href=h>"Open the group's lag and chart"</a></p> })}
        </section>
        {(can_ack || can_dismiss).then(|| view! {
            <section class="card">
                <h2>"Act on it"</h2>
                {can_ack.then(|| view! {
                    <ActionForm action=ack attr:data-testid="acknowledge">
                        <input type="hidden" name="flag_id" value=id />
                        <button type="submit">"Acknowledge: I am on it"</button>
                    </ActionForm>
                })}
                <ActionForm action=dismiss attr:class="inline-form" attr:data-testid="dismiss">
                    <input type="hidden" name="flag_id" value=id2 />
                    <fieldset>
                        <legend>"Why"</legend>
                        <label><input type="radio" name="dismissal" value="wrong" required />" The flag is wrong: there is no trouble"</label>
                        <label><input type="radio" name="dismissal" value="expected" />" The trouble is expected"</label>
                    </fieldset>
                    <label>"Reason " <input name="reason" required placeholder="backfill paused until Monday" /></label>
                    <label>"Snooze " <select name="snooze_hours">
                        <option value="">"until the trouble clears"</option>
                        <option value="1">"1 hour"</option>
                        <option value="8">"8 hours"</option>
                        <option value="24">"1 day"</option>
                        <option value="168">"1 week"</option>
                    </select></label>
                    <p class="note">"While the trouble lasts nothing is raised again and nobody is paged. It comes back once the trouble clears and returns, or when the snooze ends."</p>
                    <button type="submit" class="danger">"Dismiss"</button>
                </ActionForm>
            </section>
        })}
        <ActionNote value=ack.value() />
        <ActionNote value=dismiss.value() />
        <Receipts f=f.clone() />
        // Where it was told is its team's (channel names, receivers'
        // answers): shown to those who may act on it, as the service rules.
        {if f.actionable {
            view! { <DeliveryLog flag_id=f.id /> }.into_any()
        } else {
            view! {
                <section class="card"><h2>"Deliveries"</h2>
                <p class="muted">"Where it was delivered is shown to its team's members."</p></section>
            }
            .into_any()
        }}
    }
}
