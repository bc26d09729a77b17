//! Roles as badges and as the checkboxes of the user forms.

use leptos::prelude::*;
use streamkeeper::accounts::role::Role;

/// The roles as small labels.
#[component]
pub fn RoleBadges(roles: Vec<Role>) -> impl IntoView {
    view! {
        <span class="roles">
            {roles.into_iter().map(|r| view! { <span class="badge">{r.as_str()}</span> }).collect_view()}
        </span>
    }
}

/// One checkbox per role, named after the role, as the role server functions
/// take them.
#[component]
pub fn RoleChecks(checked: Vec<Role>) -> impl IntoView {
    view! {
        <fieldset class="roles-choice">
            <legend>"Roles"</legend>
            {Role::ALL
                .into_iter()
                .map(|r| {
                    let on = checked.contains(&r);
                    view! {
                        <label title=r.describe()>
                            <input type="checkbox" name=r.as_str() value="on" checked=on />
                            {r.as_str()}
                        </label>
                    }
                })
                .collect_view()}
        </fieldset>
    }
}

/// Roles from the checkboxes of [`RoleChecks`].
pub fn roles_from_checks(
    viewer: Option<String>,
    owner: Option<String>,
    approver: Option<String>,
    manager: Option<String>,
    admin: Option<String>,
) -> Vec<Role> {
    [
        (viewer, Role::Viewer),
        (owner, Role::Owner),
        (approver, Role::Approver),
        (manager, Role::Manager),
        (admin, Role::Admin),
    ]
    .into_iter()
    .filter_map(|(v, r)| v.is_some().then_some(r))
    .collect()
}
