//! The accounts' server functions: the caller's own account, and the users and
//! teams admins manage.

// Server functions take one argument per form field, as ActionForm sends
// them, and the role checkboxes are five fields; the macro-generated client
// function does not inherit an allow on the item, so it sits here.
#![allow(clippy::too_many_arguments)]

use crate::accounts::model::{
    AccountView, Routing, SignInWays, TeamDetail, TeamSummary, UserDetail, UserSummary,
};
use crate::error::AppError;
use leptos::prelude::*;
use streamkeeper::platform::page::Page;

/// How people sign in here; asked by the sign-in page, before anyone has.
#[server(prefix = "/fn", endpoint = "sign_in_options")]
pub async fn sign_in_options() -> Result<SignInWays, AppError> {
    Ok(crate::port::backend()?.sign_in)
}

#[server(prefix = "/fn", endpoint = "account_status")]
pub async fn account_status() -> Result<AccountView, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.accounts.account(&who).await
}

#[server(prefix = "/fn", endpoint = "change_password")]
pub async fn change_password(
    current_password: String,
    new_password: String,
    confirm_password: String,
) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal, session_handle};
    let who = principal().await?;
    if new_password != confirm_password {
        return Err(AppError::Invalid(
            "The new password and its confirmation differ.".into(),
        ));
    }
    let keeper = session_handle().await?;
    let epoch = backend()?
        .accounts
        .change_password(&who, &client_addr().await, &current_password, &new_password)
        .await?;
    crate::ui::flash::noted(keeper.0.keep(epoch).await, |_| {
        "Your password is changed: your other sessions are ended and your API tokens revoked."
            .to_string()
    })
    .await
}

#[server(prefix = "/fn", endpoint = "set_time_zone")]
pub async fn set_time_zone(time_zone: String) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    crate::ui::flash::noted(
        backend()?
            .accounts
            .set_time_zone(&who, &client_addr().await, &time_zone)
            .await,
        |_| "Saved: pages now show times in this zone.".into(),
    )
    .await
}

/// The caller's email address and choices; an unticked box is absent.
#[server(prefix = "/fn", endpoint = "set_mail_preferences")]
pub async fn set_mail_preferences(
    email: String,
    waiting: Option<String>,
    outcomes: Option<String>,
) -> Result<(), AppError> {
    use crate::accounts::model::MailPreferences;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let prefs = MailPreferences {
        email,
        waiting: waiting.is_some(),
        outcomes: outcomes.is_some(),
    };
    crate::ui::flash::noted(
        backend()?
            .accounts
            .set_mail_preferences(&who, &client_addr().await, prefs)
            .await,
        |_| "Saved: what you hear by email.".into(),
    )
    .await
}

#[server(prefix = "/fn", endpoint = "start_second_factor")]
pub async fn start_second_factor() -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    backend()?
        .accounts
        .start_second_factor(&who, &client_addr().await)
        .await
}

#[server(prefix = "/fn", endpoint = "confirm_second_factor")]
pub async fn confirm_second_factor(code: String) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    crate::ui::flash::noted(
        backend()?
            .accounts
            .confirm_second_factor(&who, &client_addr().await, &code)
            .await,
        |_| "Done.".to_string(),
    )
    .await
}

#[server(prefix = "/fn", endpoint = "disable_second_factor")]
pub async fn disable_second_factor(password: String, code: String) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    crate::ui::flash::noted(
        backend()?
            .accounts
            .disable_second_factor(&who, &client_addr().await, &password, &code)
            .await,
        |_| "The second factor is off.".to_string(),
    )
    .await
}

#[server(prefix = "/fn", endpoint = "list_users")]
pub async fn list_users(
    q: Option<String>,
    sort: Option<String>,
    page: u32,
) -> Result<Page<UserSummary>, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    backend()?
        .accounts
        .list_users(&who, q, sort, PageRequest::new(Some(page), None))
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
    use crate::accounts::model::NewUser;
    use crate::port::{backend, client_addr, principal};
    use crate::ui::roles::roles_from_checks;
    let who = principal().await?;
    let new = NewUser {
        username,
        display_name,
        password,
        roles: roles_from_checks(viewer, owner, approver, manager, admin),
    };
    crate::ui::flash::noted(
        backend()?
            .accounts
            .create_user(&who, &client_addr().await, new)
            .await,
        |u| format!("Created user {}.", u.username),
    )
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
    use crate::accounts::model::UserUpdate;
    use crate::port::{backend, client_addr, principal};
    use crate::ui::roles::roles_from_checks;
    let who = principal().await?;
    let update = UserUpdate {
        roles: Some(roles_from_checks(viewer, owner, approver, manager, admin)),
        ..UserUpdate::default()
    };
    crate::ui::flash::noted(
        backend()?
            .accounts
            .update_user(&who, &client_addr().await, user_id, update)
            .await,
        |u| format!("Saved the roles of {}.", u.username),
    )
    .await
}

#[server(prefix = "/fn", endpoint = "set_user_disabled")]
pub async fn set_user_disabled(user_id: i64, disabled: bool) -> Result<UserSummary, AppError> {
    use crate::accounts::model::UserUpdate;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let update = UserUpdate {
        disabled: Some(disabled),
        ..UserUpdate::default()
    };
    crate::ui::flash::noted(
        backend()?
            .accounts
            .update_user(&who, &client_addr().await, user_id, update)
            .await,
        |u| {
            format!(
                "{} is now {}.",
                u.username,
                if u.disabled { "disabled" } else { "active" }
            )
        },
    )
    .await
}

/// Sets a temporary password, which the user must change at their next
/// sign-in; their sessions end and their tokens are revoked.
#[server(prefix = "/fn", endpoint = "set_temporary_password")]
pub async fn set_temporary_password(
    user_id: i64,
    password: String,
) -> Result<UserSummary, AppError> {
    use crate::accounts::model::UserUpdate;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let update = UserUpdate {
        password: Some(password),
        ..UserUpdate::default()
    };
    crate::ui::flash::noted(
        backend()?
            .accounts
            .update_user(&who, &client_addr().await, user_id, update)
            .await,
        |u| {
            format!(
                "{} must change this password at their next sign-in.",
                u.username
            )
        },
    )
    .await
}

/// Removes a user's second factor, for a lost device.
#[server(prefix = "/fn", endpoint = "reset_second_factor")]
pub async fn reset_second_factor(user_id: i64) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    crate::ui::flash::noted(
        backend()?
            .accounts
            .reset_second_factor(&who, &client_addr().await, user_id)
            .await,
        |_| "Their second factor is removed.".to_string(),
    )
    .await
}

#[server(prefix = "/fn", endpoint = "list_teams")]
pub async fn list_teams(page: u32) -> Result<Page<TeamSummary>, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::platform::page::PageRequest;
    let who = principal().await?;
    backend()?
        .accounts
        .list_teams(&who, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_team")]
pub async fn get_team(id: i64) -> Result<TeamDetail, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.accounts.team(&who, id).await
}

#[server(prefix = "/fn", endpoint = "create_team")]
pub async fn create_team(name: String, description: String) -> Result<TeamSummary, AppError> {
    use crate::accounts::model::NewTeam;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    crate::ui::flash::noted(
        backend()?
            .accounts
            .create_team(&who, &client_addr().await, NewTeam { name, description })
            .await,
        |t| format!("Created team {}.", t.name),
    )
    .await
}

#[server(prefix = "/fn", endpoint = "add_team_member")]
pub async fn add_team_member(team_id: i64, username: String) -> Result<String, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    backend()?
        .accounts
        .add_member(&who, &client_addr().await, team_id, &username)
        .await?;
    crate::ui::flash::noted(Ok(username), |u| format!("Added {u}.")).await
}

#[server(prefix = "/fn", endpoint = "remove_team_member")]
pub async fn remove_team_member(team_id: i64, user_id: i64) -> Result<(), AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    crate::ui::flash::noted(
        backend()?
            .accounts
            .remove_member(&who, &client_addr().await, team_id, user_id)
            .await,
        |_| "Removed the member.".to_string(),
    )
    .await
}

/// Sets a team's flag webhook; an empty `url` removes it.
#[server(prefix = "/fn", endpoint = "set_team_webhook")]
pub async fn set_team_webhook(team_id: i64, url: String) -> Result<bool, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let url = Some(url.trim()).filter(|u| !u.is_empty());
    backend()?
        .accounts
        .set_webhook(&who, &client_addr().await, team_id, url)
        .await?;
    crate::ui::flash::noted(Ok(url.is_some()), |set| {
        if *set {
            "Saved the webhook.".to_string()
        } else {
            "Removed the webhook.".to_string()
        }
    })
    .await
}

#[server(prefix = "/fn", endpoint = "set_platform_team")]
pub async fn set_platform_team(team: String) -> Result<String, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    backend()?
        .accounts
        .set_platform_team(&who, &client_addr().await, &team)
        .await?;
    crate::ui::flash::noted(Ok(team), |t| format!("{t} now receives unowned flags.")).await
}

#[server(prefix = "/fn", endpoint = "get_routing")]
pub async fn get_routing() -> Result<Routing, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.accounts.routing(&who).await
}
