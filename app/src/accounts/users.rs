//! Settings → Users: the list (searchable, paginated), creating a user, and
//! a user's page with their roles, teams and access.

// Server functions take one argument per form field, as ActionForm sends
// them, and the role checkboxes are five fields; the macro-generated client
// function does not inherit an allow on the item, so it sits here.
#![allow(clippy::too_many_arguments)]

use crate::accounts::fns::{
    CreateUser, ResetSecondFactor, SetTemporaryPassword, SetUserDisabled, SetUserRoles, get_user,
    list_users,
};
use crate::accounts::model::{UserDetail, UserSummary};
use crate::error::AppError;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, id_param, page_param, query_param};
use crate::ui::roles::{RoleBadges, RoleChecks};
use crate::ui::sort::{shown, sort_header};
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::accounts::list::UserColumn;
use streamkeeper::accounts::role::Action;

#[component]
pub fn UsersPage() -> impl IntoView {
    let create = ServerAction::<CreateUser>::new();
    let q = query_param("q");
    let sort = query_param("sort");
    let page = page_param();
    let users = Resource::new(
        move || (q.get(), sort.get(), page.get(), create.version().get()),
        |(q, sort, page, _)| list_users(q, sort, page),
    );
    view! {
        <Title text="Users" />
        <h1>"Users"</h1>
        <form method="get" action="/settings/users" class="filters" role="search">
            <label>
                "Search "
                <input name="q" type="search" value=move || q.get().unwrap_or_default() placeholder="username or name" />
            </label>
            // The search keeps the order chosen by a column header.
            {move || sort.get().map(|v| view! { <input type="hidden" name="sort" value=v /> })}
            <button type="submit">"Search"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match users.await {
                    Ok(list) => {
                        let (q, sort) = (q.get_untracked(), sort.get_untracked());
                        let link = move |sort: Option<String>, page: Option<String>| {
                            href_with("/settings/users", &[("q", q.clone()), ("sort", sort), ("page", page)])
                        };
                        let shown = shown::<UserColumn>(sort.as_deref());
                        let header = |label, column| sort_header(label, column, shown, |s| link(Some(s), None));
                        let head = view! {
                            <tr>
                                {header("Username", UserColumn::Username)}
                                {header("Name", UserColumn::Name)}
                                <th>"Roles"</th>
                                {header("Status", UserColumn::Status)}
                                {header("Created", UserColumn::Created)}
                            </tr>
                        }.into_any();
                        view! {
                            <UserTable head users=list.items.clone() />
                            <Pager page=list href=move |n| link(sort.clone(), Some(n.to_string())) />
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
                                    <RoleChecks checked=vec![streamkeeper::accounts::role::Role::Viewer] />
                                    <button type="submit">"Create user"</button>
                                </ActionForm>
                                <ActionNote value=create.value() />
                            </section>
                        }
                            .into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn UserTable(head: AnyView, users: Vec<UserSummary>) -> impl IntoView {
    view! {
        <table class="list" data-testid="users">
            <thead>{head}</thead>
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
                                <td>{stamp_ago(u.created_at)}</td>
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
            let Some(id) = id else {
                return Err(AppError::NotFound("That user".into()));
            };
            // Anyone reads their own account here; only admins see the
            // forms that change one.
            let admin = matches!(
                crate::ui::header::current_user().await,
                Ok(Some(me)) if me.principal.may(Action::ManageUsers)
            );
            get_user(id).await.map(|d| (d, admin))
        },
    );
    view! {
        <Title text="User" />
        <p><a href="/settings/users">"← Users"</a></p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok((d, admin)) => view! { <Title text=page_title(Some(&d.user.username), "Users") /> <UserDetailView d admin roles access secrets /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn UserDetailView(
    d: UserDetail,
    admin: bool,
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
    let sso = u.single_sign_on;
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
                <dd>{stamp_ago(u.created_at)}</dd>
                <dt>"Signs in"</dt>
                <dd data-testid="user-sign-in">
                    {if sso {
                        "through the identity provider: roles and teams follow their groups there, at every sign-in"
                    } else {
                        "with a password here"
                    }}
                </dd>
            </dl>
        </section>
        {(!admin).then(|| view! {
            <p class="note" data-testid="own-account">
                "An admin changes roles and access. Your password, second factor and time zone are on "
                <a href="/account">"your account page"</a>"."
            </p>
        })}
        {admin.then(|| view! {
        <section class="card" hidden=sso>
            <h2>"Roles"</h2>
            <ActionForm action=roles attr:class="stack" attr:data-testid="set-roles">
                <input type="hidden" name="user_id" value=id.clone() />
                <RoleChecks checked=u.roles.clone() />
                <button type="submit">"Save roles"</button>
            </ActionForm>
            <ActionNote value=roles.value() />
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
            <ActionNote value=access.value() />
        </section>
        <section class="card" hidden=sso>
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
            <ActionNote value=secrets.password.value() />
            {second_factor.then(|| view! {
                <ActionForm action=secrets.factor attr:data-testid="reset-second-factor">
                    <input type="hidden" name="user_id" value=id4 />
                    <button type="submit" class="danger">"Reset their second factor (lost device)"</button>
                </ActionForm>
            })}
            <ActionNote value=secrets.factor.value() />
        </section>
        })}
    }
}

#[derive(Clone, Copy)]
struct Secrets {
    password: ServerAction<SetTemporaryPassword>,
    factor: ServerAction<ResetSecondFactor>,
}
