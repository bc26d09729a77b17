//! Settings → Teams: the list, creating a team, and a team's members.

use crate::accounts::fns::{
    AddTeamMember, CreateTeam, RemoveTeamMember, SetPlatformTeam, SetTeamWebhook, get_team,
    list_teams,
};
use crate::accounts::model::TeamDetail;
use crate::error::AppError;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, id_param, page_param};
use crate::ui::roles::RoleBadges;
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn TeamsPage() -> impl IntoView {
    let create = ServerAction::<CreateTeam>::new();
    let page = page_param();
    let teams = Resource::new(
        move || (page.get(), create.version().get()),
        |(page, _)| list_teams(page),
    );
    view! {
        <Title text="Teams" />
        <h1>"Teams"</h1>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match teams.await {
                    Ok(list) => view! {
                        {(list.total > 0 && !list.items.iter().any(|t| t.platform)).then(|| view! {
                            <p class="error" role="alert" data-testid="no-platform-team">
                                "No platform team is set: flags on streams and groups nobody owns reach no one. Open a team and make it the platform team."
                            </p>
                        })}
                        <table class="list">
                            <thead><tr><th>"Team"</th><th>"Description"</th><th>"Members"</th><th>"Flag webhook"</th><th>"Unowned flags"</th></tr></thead>
                            <tbody>
                                {list.items.clone().into_iter().map(|t| view! {
                                    <tr>
                                        <td><a href=format!("/settings/teams/{}", t.id)>{t.name}</a></td>
                                        <td>{t.description}</td>
                                        <td>{t.members}</td>
                                        <td>{t.webhook_host.unwrap_or_else(|| "none".into())}</td>
                                        <td>{t.platform.then_some("receives them")}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                        <Pager page=list href=|n| href_with("/settings/teams", &[("page", Some(n.to_string()))]) />
                        <section class="card">
                            <h2>"Create a team"</h2>
                            <ActionForm action=create attr:class="stack" attr:data-testid="create-team">
                                <label>"Name" <input name="name" required placeholder="payments" /></label>
                                <label>"Description" <input name="description" /></label>
                                <button type="submit">"Create team"</button>
                            </ActionForm>
                            <ActionNote value=create.value() />
                        </section>
                    }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn TeamPage() -> impl IntoView {
    let id = id_param();
    let add = ServerAction::<AddTeamMember>::new();
    let remove = ServerAction::<RemoveTeamMember>::new();
    let webhook = ServerAction::<SetTeamWebhook>::new();
    let platform = ServerAction::<SetPlatformTeam>::new();
    let team = Resource::new(
        move || {
            (
                id.get(),
                add.version().get(),
                remove.version().get(),
                webhook.version().get(),
                platform.version().get(),
            )
        },
        |(id, ..)| async move {
            match id {
                Some(id) => get_team(id).await,
                None => Err(AppError::NotFound("That team".into())),
            }
        },
    );
    view! {
        <Title text="Team" />
        <p><a href="/settings/teams">"← Teams"</a></p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match team.await {
                    Ok(d) => view! { <Title text=page_title(Some(&d.team.name), "Teams") /> <TeamDetailView d add remove webhook platform /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn TeamDetailView(
    d: TeamDetail,
    add: ServerAction<AddTeamMember>,
    remove: ServerAction<RemoveTeamMember>,
    webhook: ServerAction<SetTeamWebhook>,
    platform: ServerAction<SetPlatformTeam>,
) -> impl IntoView {
    let team_id = d.team.id.to_string();
    let tid = team_id.clone();
    let wid = team_id.clone();
    let name = d.team.name.clone();
    let hook = d.team.webhook_host.clone();
    let is_platform = d.team.platform;
    view! {
        <h1>{d.team.name.clone()}</h1>
        <p>{d.team.description.clone()}</p>
        <p><a href=format!("/settings/teams/{}/notifications", d.team.id) data-testid="team-notifications">"Notifications: channels, tests and repeat"</a></p>
        <section class="card">
            <h2>"Members"</h2>
            <table class="list" data-testid="members">
                <thead><tr><th>"Username"</th><th>"Name"</th><th>"Roles"</th><th></th></tr></thead>
                <tbody>
                    {d.members.into_iter().map(|u| {
                        let tid = tid.clone();
                        view! {
                            <tr>
                                <td><a href=format!("/settings/users/{}", u.id)>{u.username.clone()}</a></td>
                                <td>{u.display_name}</td>
                                <td><RoleBadges roles=u.roles /></td>
                                <td>
                                    <ActionForm action=remove>
                                        <input type="hidden" name="team_id" value=tid />
                                        <input type="hidden" name="user_id" value=u.id.to_string() />
                                        <button type="submit" class="link danger">"Remove"</button>
                                    </ActionForm>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            <ActionNote value=remove.value() />
        </section>
        <section class="card">
            <h2>"Add a member"</h2>
            <ActionForm action=add attr:class="inline-form" attr:data-testid="add-member">
                <input type="hidden" name="team_id" value=team_id />
                <label>"Username " <input name="username" required /></label>
                <button type="submit">"Add"</button>
            </ActionForm>
            <ActionNote value=add.value() />
        </section>
        <section class="card">
            <h2>"Flag webhook"</h2>
            <p data-testid="webhook-state">{match hook {
                Some(h) => format!("Flags for this team are posted to a webhook at {h}."),
                None => "No webhook: this team sees its flags only in the console.".to_string(),
            }}</p>
            <ActionForm action=webhook attr:class="inline-form" attr:data-testid="set-webhook">
                <input type="hidden" name="team_id" value=wid />
                <label>"Slack-compatible webhook URL " <input name="url" type="url" placeholder="https://hooks.slack.com/services/…" /></label>
                <button type="submit">"Save"</button>
            </ActionForm>
            <small class="note">"Saved as given and never shown back (the URL is its own secret); leave it empty to remove the webhook."</small>
            <ActionNote value=webhook.value() />
        </section>
        <section class="card">
            <h2>"Flags nobody owns"</h2>
            {if is_platform {
                view! { <p data-testid="platform-state">"This is the platform team: it receives the flags of streams, groups and connectors nobody owns."</p> }.into_any()
            } else {
                view! {
                    <ActionForm action=platform attr:data-testid="make-platform">
                        <input type="hidden" name="team" value=name />
                        <button type="submit">"Make this the platform team"</button>
                    </ActionForm>
                    <small class="note">"The platform team receives the flags of streams, groups and connectors nobody owns."</small>
                }.into_any()
            }}
            <ActionNote value=platform.value() />
        </section>
    }
}
