//! `/`: the home page, a card per part the caller's roles hold.

use crate::flags::model::FlagView;
use crate::home::fns::read_home;
use crate::home::model::{AdminHome, FailedConnector, Home, KindCount, OwnerHome};
use crate::notify::widgets::BrokenChannels;
use crate::platform::model::RoutineStatus;
use crate::review::model::ReviewSummary;
use crate::ui::notes::ErrorNote;
use crate::ui::params::href_with;
use crate::ui::roles::RoleBadges;
use crate::ui::time::stamp;
use crate::watch::model::ClusterView;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::accounts::role::Action;
use streamkeeper::platform::page::Page;
use streamkeeper::platform::words::counted;

#[component]
pub fn HomePage() -> impl IntoView {
    let home = Resource::new(|| (), |_| read_home());
    view! {
        <Title text="Home" />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match home.await {
                    Ok(home) => view! { <Welcome home /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Welcome(home: Home) -> impl IntoView {
    let p = home.me.principal;
    let admin_links = p.may(Action::ManageUsers);
    let teams = home.me.teams;
    let team_names = teams
        .iter()
        .map(|t| t.name.clone())
        .collect::<Vec<_>>()
        .join(", ");
    let no_teams = teams.is_empty();
    view! {
        <h1>"Welcome, " {p.display_name.clone()}</h1>
        <BrokenChannels list=home.broken_channels />
        {home.admin.map(|a| view! { <AdminCard a /> })}
        {home.owner.map(|o| view! { <OwnerCards o teams=team_names.clone() /> })}
        {home.waiting.map(|w| view! { <WaitingCard w /> })}
        {home.pilot.then(|| view! {
            <section class="card" data-testid="home-pilot">
                <h2>"Pilot"</h2>
                <p>"Time to flag lag to its owner, to check a producer change and to answer a lineage question, against your baseline: "
                    <a href="/pilot">"the pilot's page"</a>"."</p>
            </section>
        })}
        <section class="card">
            <h2>"You"</h2>
            <dl>
                <dt>"Username"</dt>
                <dd>{p.username.clone()}</dd>
                <dt>"Roles"</dt>
                <dd><RoleBadges roles=p.roles.clone() /></dd>
                <dt>"Teams"</dt>
                <dd>
                    <Show when=move || no_teams fallback=move || view! {
                        <ul class="inline">
                            {teams.clone().into_iter().map(|t| view! { <li>{t.name} " (" <a href=format!("/settings/teams/{}/notifications", t.id)>"notifications"</a> ")"</li> }).collect_view()}
                        </ul>
                    }>
                        "You are not in a team yet. An admin adds you to your team's stream ownership."
                    </Show>
                </dd>
            </dl>
        </section>
        <Show when=move || admin_links>
            <section class="card">
                <h2>"Administration"</h2>
                <ul>
                    <li><a href="/settings/users">"Users"</a>": create accounts, set roles, disable access."</li>
                    <li><a href="/settings/teams">"Teams"</a>": create teams and manage their members."</li>
                    <li><a href="/settings/routines">"Routines"</a>": schedules, last runs, run one now."</li>
                    <li><a href="/settings/silences">"Silences"</a>": clusters, streams and groups muted, and why."</li>
                    <li><a href="/settings/audit">"Audit log"</a>": every sign-in and change, hash-chained."</li>
                </ul>
            </section>
        </Show>
    }
}

#[component]
fn AdminCard(a: AdminHome) -> impl IntoView {
    // Calm only when nothing at all is wrong: an open STOP on an UP
    // cluster is still trouble.
    let calm = a.clusters_not_up.is_empty()
        && a.routines_failing.is_empty()
        && a.routines_never_ran.is_empty()
        && a.open_flags.is_empty()
        && a.failed_connectors.is_empty()
        && a.platform_team.is_some()
        && !a.platform_team_empty;
    let no_clusters = a.clusters == 0;
    view! {
        <section class="card" data-testid="home-admin">
            <h2>"Needs attention"</h2>
            {a.platform_team.is_none().then(|| view! {
                <p class="warning" data-testid="no-platform-team">"No platform team is set: flags on streams nobody owns reach no one. "
                    <a href="/settings/teams">"Set one under Teams"</a>"."</p>
            })}
            {a.platform_team_empty.then(|| view! {
                <p class="warning" data-testid="platform-team-empty">
                    {format!("The platform team {} has no members: flags on streams nobody owns reach no one. ", a.platform_team.clone().unwrap_or_default())}
                    <a href="/settings/teams">"Add members under Teams"</a>"."</p>
            })}
            {no_clusters.then(|| view! {
                <p>"No cluster is watched yet. " <a href="/settings/clusters">"Add a cluster"</a>" to start."</p>
            })}
            <ClustersNotUp clusters=a.clusters_not_up total=a.clusters />
            <OpenFlags kinds=a.open_flags total=a.open_flags_total />
            <FailedConnectors connectors=a.failed_connectors />
            <RoutineTrouble failing=a.routines_failing never_ran=a.routines_never_ran />
            {(calm && !no_clusters).then(|| view! {
                <p class="ok" data-testid="all-well">"Every cluster is up, no flag is open, no connector has failed and every routine has run and succeeded."</p>
            })}
        </section>
    }
}

#[component]
fn ClustersNotUp(clusters: Vec<ClusterView>, total: usize) -> impl IntoView {
    (!clusters.is_empty()).then(|| view! {
        <h3>{format!("Clusters not up or paused ({} of {total})", clusters.len())}</h3>
        <ul data-testid="clusters-not-up">
            {clusters.into_iter().map(|c| view! {
                <li>
                    <a href=format!("/clusters/{}", c.id)>{c.name}</a>" "
                    {match &c.paused {
                        Some(p) => view! {
                            <span class="badge" data-testid="paused">"PAUSED"</span>" "
                            <small class="note">{format!("Not watched: {}.", p.text())}</small>
                        }.into_any(),
                        None => view! {
                            <span class="badge state-bad">{c.state.as_str()}</span>" "
                            <small class="note">{c.problems.first().cloned().unwrap_or_default()}</small>
                        }.into_any(),
                    }}
                </li>
            }).collect_view()}
        </ul>
    })
}

/// A flag kind's badge, as the flags' pages draw it: WARN amber, the rest
/// (STOP, STALL, FAILED…) red.
fn kind_class(kind: &str) -> &'static str {
    match kind {
        "WARN" => "badge state-warn",
        _ => "badge state-bad",
    }
}

/// Live flags of every team by kind, each kind a link to the list.
#[component]
fn OpenFlags(kinds: Vec<KindCount>, total: u64) -> impl IntoView {
    // Counted over the newest page of them when there are more.
    let counted_over: u64 = kinds.iter().map(|k| k.count).sum();
    (total > 0).then(|| {
        view! {
            <h3>{format!("Open flags ({total})")}</h3>
            {(counted_over < total).then(|| view! {
                <p class="note">{format!("By kind, the newest {counted_over}:")}</p>
            })}
            <ul class="inline" data-testid="open-flags">
                {kinds.into_iter().map(|k| view! {
                    <li><span class=kind_class(&k.kind)>{k.kind.clone()}</span>" "{k.count}</li>
                }).collect_view()}
            </ul>
            <p><a href="/flags?scope=all">"All open flags"</a></p>
        }
    })
}

#[component]
fn FailedConnectors(connectors: Vec<FailedConnector>) -> impl IntoView {
    (!connectors.is_empty()).then(|| {
        view! {
            <h3>{format!("Failed connectors ({})", connectors.len())}</h3>
            <ul data-testid="failed-connectors">
                {connectors.into_iter().map(|c| {
                    let href = href_with(&format!("/clusters/{}/connector", c.cluster_id), &[
                        ("connect", Some(c.connect.clone())),
                        ("name", Some(c.name.clone())),
                    ]);
                    view! {
                        <li>
                            <a href=href>{c.name}</a>" on "{c.connect}" "
                            <span class="badge state-bad">"FAILED"</span>" "
                            <small class="note">{c.failure.unwrap_or_default()}</small>
                        </li>
                    }
                }).collect_view()}
            </ul>
        }
    })
}

#[component]
fn RoutineTrouble(failing: Vec<RoutineStatus>, never_ran: Vec<RoutineStatus>) -> impl IntoView {
    let target = |r: &RoutineStatus| match &r.cluster {
        Some(c) => format!(" for {c}"),
        None => String::new(),
    };
    view! {
        {(!failing.is_empty()).then(|| view! {
            <h3>{format!("Routines whose last run failed ({})", failing.len())}</h3>
            <ul data-testid="routines-failing">
                {failing.into_iter().map(|r| view! {
                    <li>
                        <a href="/settings/routines"><code>{r.routine.clone()}</code></a>
                        {target(&r)}": "
                        {r.last_error.unwrap_or_default()}
                    </li>
                }).collect_view()}
            </ul>
        })}
        {(!never_ran.is_empty()).then(|| view! {
            <h3>{format!("Routines that never ran ({})", never_ran.len())}</h3>
            <ul data-testid="routines-never-ran">
                {never_ran.into_iter().map(|r| view! {
                    <li>
                        <a href="/settings/routines"><code>{r.routine.clone()}</code></a>
                        {target(&r)}
                    </li>
                }).collect_view()}
            </ul>
        })}
    }
}

#[component]
fn OwnerCards(o: OwnerHome, teams: String) -> impl IntoView {
    let unowned = o.unowned_streams;
    view! {
        <section class="card" data-testid="home-flags">
            <h2>{format!("Open flags of {teams}")}</h2>
            {if o.flags.items.is_empty() {
                view! { <p class="note">"None open. Streamkeeper flags lag, stalls, quiet topics and failed connectors here and at your team's webhook."</p> }.into_any()
            } else {
                view! { <FlagList flags=o.flags /> }.into_any()
            }}
            {(unowned > 0).then(|| view! {
                <p class="warning" data-testid="unowned-streams">
                    <a href="/streams?owner=unowned">{format!("{unowned} stream{} without an owner", if unowned == 1 { "" } else { "s" })}</a>
                    ": their trouble goes to the platform team. Claim yours on the stream's page."
                </p>
            })}
        </section>
        <section class="card" data-testid="home-mine">
            <h2>"Your changes in review"</h2>
            {if o.in_review.items.is_empty() {
                view! { <p class="note">"None. Propose a schema change from its stream's page, or draft a connector from its Connect cluster."</p> }.into_any()
            } else {
                view! { <ReviewList items=o.in_review all="/review?scope=mine" /> }.into_any()
            }}
        </section>
    }
}

#[component]
fn WaitingCard(w: Page<ReviewSummary>) -> impl IntoView {
    view! {
        <section class="card" data-testid="home-waiting">
            <h2>"Waiting for your approval"</h2>
            {if w.items.is_empty() {
                view! { <p class="note">"Nothing waits for you. Items of your domains appear here and in the inbox when they are proposed."</p> }.into_any()
            } else {
                view! { <ReviewList items=w all="/review" /> }.into_any()
            }}
        </section>
    }
}

#[component]
fn FlagList(flags: Page<FlagView>) -> impl IntoView {
    let more = flags.total > flags.items.len() as u64;
    let total = flags.total;
    view! {
        <ul data-testid="flag-list">
            {flags.items.into_iter().map(|f| view! {
                <li>
                    <span class=kind_class(&f.kind)>{f.kind.clone()}</span>" "
                    // Which group, connector or topic it is about, so the
                    // owner knows where to look before opening it.
                    <strong data-testid="flag-subject">{format!("{} {}", f.subject_kind, f.subject)}</strong>": "
                    <a href=format!("/flags/{}", f.id)>{f.reason}</a>" "
                    {(f.state == "acknowledged").then(|| view! {
                        <span class="badge" data-testid="acknowledged">
                            {match &f.acknowledged_by {
                                Some(by) => format!("acknowledged by {by}"),
                                None => "acknowledged".to_string(),
                            }}
                        </span>" "
                    })}
                    <small class="note">{format!("{} · raised {}", f.cluster, stamp(f.raised_at))}</small>
                </li>
            }).collect_view()}
        </ul>
        {more.then(|| view! { <p><a href="/flags">{format!("All {total} open flags")}</a></p> })}
    }
}

#[component]
fn ReviewList(items: Page<ReviewSummary>, all: &'static str) -> impl IntoView {
    let total = items.total;
    let more = total > items.items.len() as u64;
    view! {
        <ul>
            {items.items.into_iter().map(|r| view! {
                <li>
                    <a href=format!("/review/{}", r.id)>{r.title}</a>" "
                    <small class="note">{format!("{} · {} by {} · {} of {}", r.domain, r.state.describe(), r.author, r.approval_count, counted(r.required, "approval"))}</small>
                </li>
            }).collect_view()}
        </ul>
        {more.then(|| view! { <p><a href=all>{format!("All {total}")}</a></p> })}
    }
}
