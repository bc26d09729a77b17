//! The start page of a signed-in user: who they are, their roles and teams,
//! and where to go next.

use crate::accounts::model::Me;
use crate::error::AppError;
use crate::ui::header::current_user;
use crate::ui::notes::ErrorNote;
use crate::ui::roles::RoleBadges;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::accounts::role::Action;

#[component]
pub fn HomePage() -> impl IntoView {
    let me = Resource::new(|| (), |_| current_user());
    view! {
        <Title text="Home" />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match me.await {
                    Ok(Some(me)) => view! { <Welcome me /> }.into_any(),
                    Ok(None) => view! { <ErrorNote err=AppError::Unauthenticated /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Welcome(me: Me) -> impl IntoView {
    let p = me.principal;
    let admin = p.may(Action::ManageUsers);
    let teams = me.teams;
    let no_teams = teams.is_empty();
    view! {
        <h1>"Welcome, " {p.display_name.clone()}</h1>
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
                            {teams.clone().into_iter().map(|t| view! { <li>{t.name}</li> }).collect_view()}
                        </ul>
                    }>
                        "You are not in a team yet. An admin adds you to your team's stream ownership."
                    </Show>
                </dd>
            </dl>
        </section>
        <Show when=move || admin>
            <section class="card">
                <h2>"Administration"</h2>
                <ul>
                    <li><a href="/settings/users">"Users"</a>": create accounts, set roles, disable access."</li>
                    <li><a href="/settings/teams">"Teams"</a>": create teams and manage their members."</li>
                    <li><a href="/settings/audit">"Audit log"</a>": every sign-in and change, hash-chained."</li>
                </ul>
            </section>
        </Show>
    }
}
