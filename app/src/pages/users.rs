//! Settings → Users: the list (searchable, paginated), creating a user, and
//! a user's page with their roles, teams and access.

// Server functions take one argument per form field, as ActionForm sends
// them, and the role checkboxes are five fields; the macro-generated client
// function does not inherit an allow on the item, so it sits here.
#![allow(clippy::too_many_arguments)]

use crate::components::{
    ActionNote, ErrorNote, Pager, RoleBadges, RoleChecks, href_with, id_param, page_param,
    query_param,
};
use crate::error::AppError;
use crate::model::{UserDetail, UserSummary};
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::page::Page;

#[server(prefix = "/fn", endpoint = "list_users")]
pub async fn list_users(q: Option<String>, page: u32) -> Result<Page<UserSummary>, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::page::PageRequest;
    let who = principal().await?;
    backend()?
        .accounts
        .list_users(&who, q, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_user")]
pub async fn get_user(id: i64) -> Result<UserDetail, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.accounts.user(&who, id).await
}

#[server(prefix = "/fn", endpoint = "create_user")]
pub async fn create_user(
    username: String,
    display_name: String,
    password: String,
    viewer: Option<String>,
    owner: Option<String>,
    approver: Option<String>,
    manager: Option<String>,
    admin: Option<String>,
) -> Result<UserSummary, AppError> {
    use crate::components::roles_from_checks;
    use crate::model::NewUser;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let new = NewUser {
        username,
        display_name,
        password,
        roles: roles_from_checks(viewer, owner, approver, manager, admin),
    };
    backend()?
        .accounts
        .create_user(&who, &client_addr().await, new)
        .await
}

#[server(prefix = "/fn", endpoint = "set_user_roles")]
pub async fn set_user_roles(
    user_id: i64,
    viewer: Option<String>,
    owner: Option<String>,
    approver: Option<String>,
    manager: Option<String>,
    admin: Option<String>,
) -> Result<UserSummary, AppError> {
    use crate::components::roles_from_checks;
    use crate::model::UserUpdate;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let update = UserUpdate {
        roles: Some(roles_from_checks(viewer, owner, approver, manager, admin)),
        ..UserUpdate::default()
    };
    backend()?
        .accounts
        .update_user(&who, &client_addr().await, user_id, update)
        .await
}

#[server(prefix = "/fn", endpoint = "set_user_disabled")]
pub async fn set_user_disabled(user_id: i64, disabled: bool) -> Result<UserSummary, AppError> {
    use crate::model::UserUpdate;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let update = UserUpdate {
        disabled: Some(disabled),
        ..UserUpdate::default()
    };
    backend()?
        .accounts
        .update_user(&who, &client_addr().await, user_id, update)
        .await
}

/// Sets a temporary password, which the user must change at their next
/// sign-in; their sessions end and their tokens are revoked.
#[server(prefix = "/fn", endpoint = "set_temporary_password")]
pub async fn set_temporary_password(
    user_id: i64,
    password: String,
) -> Result<UserSummary, AppError> {
    use crate::model::UserUpdate;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let update = UserUpdate {
        password: Some(password),
        ..UserUpdate::default()
    };
    backend()?
        .accounts
        .update_user(&who, &client_addr().await, user_id, update)
        .await
}

/// Removes a user's second factor, for a lost device.
#[server(prefix = "/fn", endpoint = "reset_second_factor")]
pub async fn reset_second_factor(user_id: i64) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    backend()?
        .accounts
        .reset_second_factor(&who, &client_addr().await, user_id)
        .await
}

#[component]
pub fn UsersPage() -> impl IntoView {
    let create = ServerAction::<CreateUser>::new();
    let q = query_param("q");
    let page = page_param();
    let users = Resource::new(
        move || (q.get(), page.get(), create.version().get()),
        |(q, page, _)| list_users(q, page),
    );
    view! {
        <Title text="Users" />
        <h1>"Users"</h1>
        <form method="get" action="/settings/users" class="filters" role="search">
            <label>
                "Search "
                <input name="q" type="search" value=move || q.get().unwrap_or_default() placeholder="username or name" />
            </label>
            <button type="submit">"Search"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match users.await {
                    Ok(list) => {
                        let q = q.get_untracked();
                        view! {
                            <UserTable users=list.items.clone() />
                            <Pager page=list href=move |n| href_with("/settings/users", &[("q", q.clone()), ("page", Some(n.to_string()))]) />
                        }
                            .into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
        <section class="card">
            <h2>"Create a user"</h2>
            <ActionForm action=create attr:class="stack" attr:data-testid="create-user">
                <label>"Username" <input name="username" required autocomplete="off" /></label>
                <label>"Display name" <input name="display_name" autocomplete="off" /></label>
                <label>
                    "Initial password"
                    <input name="password" type="password" required autocomplete="new-password" minlength="12" />
                    <small>"At least 12 characters and hard to guess. Hand it over in person; the user changes it."</small>
                </label>
                <RoleChecks checked=vec![streamkeeper::role::Role::Viewer] />
                <button type="submit">"Create user"</button>
            </ActionForm>
            <ActionNote value=create.value() ok=|u: &UserSummary| format!("Created user {}.", u.username) />
        </section>
    }
}

#[component]
fn UserTable(users: Vec<UserSummary>) -> impl IntoView {
    view! {
        <table class="list">
            <thead>
                <tr><th>"Username"</th><th>"Name"</th><th>"Roles"</th><th>"Status"</th><th>"Created"</th></tr>
            </thead>
            <tbody>
                {users
                    .into_iter()
                    .map(|u| {
                        view! {
                            <tr>
                                <td><a href=format!("/settings/users/{}", u.id)>{u.username}</a></td>
                                <td>{u.display_name}</td>
                                <td><RoleBadges roles=u.roles /></td>
                                <td>{if u.disabled { "disabled" } else { "active" }}</td>
                                <td>{u.created_at.format("%Y-%m-%d %H:%M UTC").to_string()}</td>
                            </tr>
                        }
                    })
                    .collect_view()}
            </tbody>
        </table>
    }
}

#[component]
pub fn UserPage() -> impl IntoView {
    let id = id_param();
    let roles = ServerAction::<SetUserRoles>::new();
    let access = ServerAction::<SetUserDisabled>::new();
    let secrets = Secrets {
        password: ServerAction::<SetTemporaryPassword>::new(),
        factor: ServerAction::<ResetSecondFactor>::new(),
    };
    let user = Resource::new(
        move || {
            (
                id.get(),
                roles.version().get(),
                access.version().get(),
                secrets.password.version().get(),
                secrets.factor.version().get(),
            )
        },
        |(id, ..)| async move {
            match id {
                Some(id) => get_user(id).await,
                None => Err(AppError::NotFound("That user".into())),
            }
        },
    );
    view! {
        <Title text="User" />
        <p><a href="/settings/users">"← Users"</a></p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(d) => view! { <UserDetailView d roles access secrets /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn UserDetailView(
    d: UserDetail,
    roles: ServerAction<SetUserRoles>,
    access: ServerAction<SetUserDisabled>,
    secrets: Secrets,
) -> impl IntoView {
    let u = d.user;
    let id = u.id.to_string();
    let id2 = id.clone();
    let id3 = id.clone();
    let id4 = id.clone();
    let second_factor = u.second_factor;
    let must_change = u.must_change_password;
    let disabled = u.disabled;
    let teams = d.teams;
    view! {
        <h1>{u.display_name.clone()} " " <small>"(" {u.username.clone()} ")"</small></h1>
        <section class="card">
            <dl>
                <dt>"Status"</dt>
                <dd data-testid="user-status">{if disabled { "disabled" } else { "active" }}</dd>
                <dt>"Roles"</dt>
                <dd><RoleBadges roles=u.roles.clone() /></dd>
                <dt>"Teams"</dt>
                <dd>
                    {if teams.is_empty() {
                        view! { "none" }.into_any()
                    } else {
                        teams
                            .into_iter()
                            .map(|t| view! { <a class="chip" href=format!("/settings/teams/{}", t.id)>{t.name}</a> })
                            .collect_view()
                            .into_any()
                    }}
                </dd>
                <dt>"Created"</dt>
                <dd>{u.created_at.format("%Y-%m-%d %H:%M UTC").to_string()}</dd>
            </dl>
        </section>
        <section class="card">
            <h2>"Roles"</h2>
            <ActionForm action=roles attr:class="stack" attr:data-testid="set-roles">
                <input type="hidden" name="user_id" value=id.clone() />
                <RoleChecks checked=u.roles.clone() />
                <button type="submit">"Save roles"</button>
            </ActionForm>
            <ActionNote value=roles.value() ok=|u: &UserSummary| format!("Saved the roles of {}.", u.username) />
        </section>
        <section class="card">
            <h2>"Access"</h2>
            <ActionForm action=access attr:data-testid="set-access">
                <input type="hidden" name="user_id" value=id2 />
                <input type="hidden" name="disabled" value=if disabled { "false" } else { "true" } />
                <button type="submit" class=if disabled { "" } else { "danger" }>
                    {if disabled { "Enable this user" } else { "Disable this user and end their sessions" }}
                </button>
            </ActionForm>
            <ActionNote value=access.value() ok=|u: &UserSummary| {
                format!("{} is now {}.", u.username, if u.disabled { "disabled" } else { "active" })
            } />
        </section>
        <section class="card">
            <h2>"Password and second factor"</h2>
            <p data-testid="user-credentials">
                {if must_change { "Must change the password an admin set. " } else { "" }}
                {if second_factor { "Second factor: on." } else { "Second factor: off." }}
            </p>
            <ActionForm action=secrets.password attr:class="stack" attr:data-testid="set-temporary-password">
                <input type="hidden" name="user_id" value=id3 />
                <label>
                    "Temporary password (to be changed at next sign-in)"
                    <input name="password" type="password" required minlength="12" autocomplete="new-password" />
                </label>
                <button type="submit">"Set a temporary password"</button>
            </ActionForm>
            <ActionNote value=secrets.password.value() ok=|u: &UserSummary| {
                format!("{} must change this password at their next sign-in.", u.username)
            } />
            {second_factor.then(|| view! {
                <ActionForm action=secrets.factor attr:data-testid="reset-second-factor">
                    <input type="hidden" name="user_id" value=id4 />
                    <button type="submit" class="danger">"Reset their second factor (lost device)"</button>
                </ActionForm>
            })}
            <ActionNote value=secrets.factor.value() ok=|_: &()| "Their second factor is removed.".into() />
        </section>
    }
}

#[derive(Clone, Copy)]
struct Secrets {
    password: ServerAction<SetTemporaryPassword>,
    factor: ServerAction<ResetSecondFactor>,
}
