//! Users and teams: the rules of who may change what, applied to the store,
//! with every change written to the audit log in the same transaction.

pub mod api;
pub mod cli;
mod own;
pub mod second_factor;
pub mod sso;
pub mod store;
pub mod token_cache;

pub use crate::platform::authz::require;

use crate::audit::store::Event;
use crate::audit::{audited, record_refusal};
use crate::platform::db::{begin, commit};
use crate::platform::limiter::LoginLimiter;
use crate::platform::password;
use crate::store::is_unique_violation;
use chrono::Utc;
use serde_json::json;
use sqlx::PgPool;
use store::users::UserRow;
use streamkeeper::accounts::account::{
    Credential, Principal, check_display_name, check_password, check_team_name, check_username,
};
use streamkeeper::accounts::list::UserColumn;
use streamkeeper::accounts::role::{self, Action};
use streamkeeper::accounts::token::{Dead, liveness};
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper_app::accounts::model::{
    AccountView, Me, NewTeam, NewUser, TeamDetail, TeamSummary, UserDetail, UserSummary, UserUpdate,
};
use streamkeeper_app::error::AppError;

#[derive(Clone)]
pub struct AccountService {
    pool: PgPool,
    /// Where team webhooks may point.
    egress: EgressPolicy,
    /// Sign-in's throttle: a current password or code asked for anywhere
    /// spends the same budget, so no form guesses faster than sign-in.
    limiter: LoginLimiter,
    /// Live bearer tokens, trusted for a few seconds (`token_cache`).
    tokens: token_cache::TokenCache,
}

/// The id of the team named `name`, or a NotFound naming it.
pub async fn team_id(pool: &PgPool, name: &str) -> Result<i64, AppError> {
    store::teams::id_by_name(pool, name)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("Team {}", name.trim())))
}

pub fn principal_of(u: &UserRow, via: Credential) -> Principal {
    Principal {
        user_id: u.id,
        username: u.username.clone(),
        display_name: u.display_name.clone(),
        roles: u.roles(),
        via,
        scopes: None,
    }
}

/// What a bearer token turned out to be.
pub enum TokenAuth {
    Live {
        principal: Principal,
        token_id: i64,
    },
    /// No such token (or one the server cannot read): no details given.
    Unknown,
    Dead(Dead),
}

impl AccountService {
    pub fn new(pool: PgPool, egress: EgressPolicy, limiter: LoginLimiter) -> Self {
        Self {
            pool,
            egress,
            limiter,
            tokens: token_cache::TokenCache::default(),
        }
    }

    /// The token cache, for the other services that change users (single
    /// sign-on sets roles): they drop it as this one does.
    pub fn token_cache(&self) -> token_cache::TokenCache {
        self.tokens.clone()
    }

    /// Checks a username and password. `None` for an unknown, disabled or
    /// wrong-password account alike, in about the same time.
    #[tracing::instrument(skip_all)]
    pub async fn authenticate(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<UserRow>, AppError> {
        let user = store::users::by_username(&self.pool, username.trim()).await?;
        let Some(user) = user else {
            password::verify_dummy_async(password.to_owned()).await?;
            return Ok(None);
        };
        let ok = password::verify_async(password.to_owned(), user.password_hash.clone()).await?;
        Ok((ok && !user.disabled).then_some(user))
    }

    #[tracing::instrument(skip_all, fields(id = id))]
    pub async fn user_row(&self, id: i64) -> Result<Option<UserRow>, AppError> {
        Ok(store::users::by_id(&self.pool, id).await?)
    }

    /// Who a bearer token acts as, with its scopes, or why it is refused.
    #[tracing::instrument(skip_all)]
    pub async fn token_principal(&self, token: &str) -> Result<TokenAuth, AppError> {
        let digest = store::tokens::digest(token);
        let cached = match self.tokens.get(&digest) {
            Some(cached) => cached,
            None => {
                let (epoch, read) = (self.tokens.epoch(), std::time::Instant::now());
                let Some(store::tokens::TokenAndUser { token: row, user }) =
                    store::tokens::find_with_user(&self.pool, token).await?
                else {
                    return Ok(TokenAuth::Unknown);
                };
                // Only a live token is kept: a dead one is read (and its
                // refusal recorded) every time.
                if let Err(dead) = liveness(&row.facts(), Utc::now()) {
                    return Ok(TokenAuth::Dead(dead));
                }
                self.tokens.keep(epoch, read, digest, row, user)
            }
        };
        let row = &cached.row;
        // Again for a kept one: it may have expired since it was read.
        if let Err(dead) = liveness(&row.facts(), Utc::now()) {
            return Ok(TokenAuth::Dead(dead));
        }
        let Some(scopes) = row.scopes() else {
            tracing::error!(token_id = row.id, "a token with no known scope");
            return Ok(TokenAuth::Unknown);
        };
        // `touch` writes at most once a minute; asking it only when this
        // process has not for a minute spares busy producers (lineage
        // senders post thousands of times a second) a statement per
        // request.
        if cached.touch_due(Utc::now()) {
            store::tokens::touch(&self.pool, row.id).await?;
        }
        let mut principal = principal_of(&cached.user, Credential::Token);
        principal.scopes = Some(scopes);
        Ok(TokenAuth::Live {
            principal,
            token_id: row.id,
        })
    }

    pub async fn record(&self, ev: Event<'_>) -> Result<(), AppError> {
        Ok(crate::audit::store::record(&self.pool, ev)
            .await
            .map(drop)?)
    }

    /// Counts a refusal by an unauthenticated source (a failed sign-in, a
    /// cross-site request) in its per-minute row instead of the chain.
    #[tracing::instrument(skip_all)]
    pub async fn tally(&self, ev: Event<'_>) -> Result<(), AppError> {
        Ok(crate::audit::store::tally(&self.pool, ev).await?)
    }

    async fn existing_user(&self, id: i64) -> Result<UserRow, AppError> {
        self.user_row(id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("User {id}")))
    }
}

/// An SSO user's teams follow their groups at the provider, set at every
/// sign-in: a change made here would be undone then, so it is refused.
fn teams_set_here(user: &UserRow) -> Result<(), AppError> {
    if user.oidc_subject.is_some() {
        return Err(AppError::Invalid(format!(
            "{} signs in through the identity provider: their teams follow their groups there (see the group mapping).",
            user.username
        )));
    }
    Ok(())
}

/// `before` with an admin's `update` applied, and what changed (never a
/// password, only that it was reset). An SSO user's roles and password are
/// the provider's; an admin keeps their own admin role and account.
async fn edited(
    who: &Principal,
    before: &UserRow,
    update: UserUpdate,
) -> Result<(UserRow, serde_json::Map<String, serde_json::Value>), AppError> {
    let mut after = before.clone();
    let mut changes = serde_json::Map::new();
    // The provider's groups set an SSO user's roles at every sign-in,
    // and they have no password here: an edit would be undone, or
    // unusable.
    if before.oidc_subject.is_some() && (update.roles.is_some() || update.password.is_some()) {
        return Err(AppError::Invalid(format!(
            "{} signs in through the identity provider: their roles follow their groups there (see the group mapping), and their password is kept there.",
            before.username
        )));
    }
    if let Some(name) = update.display_name {
        after.display_name = check_display_name(&name, &before.username).map_err(invalid)?;
        if after.display_name != before.display_name {
            changes.insert("display_name".into(), json!(after.display_name));
        }
    }
    if let Some(roles) = update.roles {
        let roles = role::normalize(roles);
        if roles.is_empty() {
            return Err(AppError::Invalid("Give the user at least one role.".into()));
        }
        // An admin cannot take away their own admin role: it would leave
        // them unable to undo it, and possibly no admin at all.
        if who.user_id == before.id && !roles.contains(&role::Role::Admin) {
            return Err(AppError::Invalid(
                "You cannot remove your own admin role; ask another admin.".into(),
            ));
        }
        after.roles = store::users::role_strings(&roles);
        if after.roles() != before.roles() {
            changes.insert(
                "roles".into(),
                json!({ "from": before.roles, "to": after.roles }),
            );
        }
    }
    if let Some(disabled) = update.disabled {
        if disabled && who.user_id == before.id {
            return Err(AppError::Invalid(
                "You cannot disable your own account.".into(),
            ));
        }
        after.disabled = disabled;
        if disabled != before.disabled {
            changes.insert("disabled".into(), json!(disabled));
        }
    }
    if let Some(pw) = update.password {
        check_password(&pw, &[&before.username, &before.display_name]).map_err(invalid)?;
        after.password_hash = password::hash_async(pw).await?;
        after.must_change_password = true;
        // Never the password: only that it was reset.
        changes.insert("password".into(), json!("reset, to be changed at sign-in"));
    }
    Ok((after, changes))
}

fn invalid(e: impl std::fmt::Display) -> AppError {
    AppError::Invalid(e.to_string())
}

#[async_trait::async_trait]
impl streamkeeper_app::port::Accounts for AccountService {
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn me(&self, who: &Principal) -> Result<Me, AppError> {
        let teams = store::users::teams_of(&self.pool, who.user_id).await?;
        Ok(Me {
            principal: who.clone(),
            teams,
        })
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn list_users(
        &self,
        who: &Principal,
        query: Option<String>,
        sort: Option<String>,
        page: PageRequest,
    ) -> Result<Page<UserSummary>, AppError> {
        require(who, Action::ManageUsers, "list users")?;
        let order = Sorted::<UserColumn>::parse(sort.as_deref())?;
        Ok(store::users::list(&self.pool, query.as_deref(), order, page).await?)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn user(&self, who: &Principal, id: i64) -> Result<UserDetail, AppError> {
        // Anyone may read their own account; only admins read others'.
        if who.user_id != id {
            require(who, Action::ManageUsers, "see other users")?;
        }
        let user = self.existing_user(id).await?;
        let teams = store::users::teams_of(&self.pool, id).await?;
        Ok(UserDetail {
            user: user.summary(),
            teams,
        })
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn create_user(
        &self,
        who: &Principal,
        from: &str,
        new: NewUser,
    ) -> Result<UserSummary, AppError> {
        require(who, Action::ManageUsers, "create users")?;
        let username = check_username(&new.username).map_err(invalid)?;
        let display_name = check_display_name(&new.display_name, &username).map_err(invalid)?;
        check_password(&new.password, &[&username, &display_name]).map_err(invalid)?;
        let roles = role::normalize(new.roles);
        if roles.is_empty() {
            return Err(AppError::Invalid("Give the user at least one role.".into()));
        }
        let hash = password::hash_async(new.password.clone()).await?;
        let mut tx = begin(&self.pool).await?;
        // A password an admin chose is the admin's: the user replaces it
        // at first sign-in.
        let row = match store::users::insert(&mut tx, &username, &display_name, &hash, &roles, true)
            .await
        {
            Ok(row) => row,
            Err(e) if is_unique_violation(&e) => {
                return Err(AppError::Conflict(format!(
                    "A user named {username} already exists."
                )));
            }
            Err(e) => return Err(e.into()),
        };
        audited(
            &mut tx,
            who,
            from,
            "user.create",
            format!("user:{username}"),
            json!({ "roles": store::users::role_strings(&roles), "display_name": display_name,
                    "must_change_password": true }),
        )
        .await?;
        commit(tx).await?;
        Ok(row.summary())
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn update_user(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        update: UserUpdate,
    ) -> Result<UserSummary, AppError> {
        require(who, Action::ManageUsers, "change users")?;
        let mut tx = begin(&self.pool).await?;
        let before = store::users::lock(&mut tx, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("User {id}")))?;
        let disabling = update.disabled;
        let (after, changes) = edited(who, &before, update).await?;
        if changes.is_empty() {
            return Ok(before.summary());
        }
        // Disabling, losing roles and a new password all end the user's
        // sessions, so a demoted user does not keep a session with the old
        // powers cached (a new password also revokes their tokens: the
        // users_token_epoch trigger).
        let end_sessions =
            after.disabled || changes.contains_key("roles") || changes.contains_key("password");
        let row = store::users::update(&mut tx, &after, end_sessions).await?;
        let action = match disabling {
            Some(true) if changes.contains_key("disabled") => "user.disable",
            Some(false) if changes.contains_key("disabled") => "user.enable",
            _ => "user.update",
        };
        audited(
            &mut tx,
            who,
            from,
            action,
            format!("user:{}", row.username),
            serde_json::Value::Object(changes),
        )
        .await?;
        commit(tx).await?;
        // The user's tokens may be ended, or act with other roles now.
        self.tokens.drop_all();
        Ok(row.summary())
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn list_teams(
        &self,
        who: &Principal,
        page: PageRequest,
    ) -> Result<Page<TeamSummary>, AppError> {
        require(who, Action::ManageUsers, "manage teams")?;
        Ok(store::teams::list(&self.pool, page).await?)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn team(&self, who: &Principal, id: i64) -> Result<TeamDetail, AppError> {
        require(who, Action::ManageUsers, "manage teams")?;
        let team = store::teams::by_id(&self.pool, id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Team {id}")))?;
        let members = store::teams::members(&self.pool, id).await?;
        Ok(TeamDetail { team, members })
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn create_team(
        &self,
        who: &Principal,
        from: &str,
        new: NewTeam,
    ) -> Result<TeamSummary, AppError> {
        require(who, Action::ManageUsers, "create teams")?;
        let name = check_team_name(&new.name).map_err(invalid)?;
        let description = new.description.trim().to_string();
        if description.chars().count() > 500 {
            return Err(AppError::Invalid(
                "The description must be at most 500 characters.".into(),
            ));
        }
        let mut tx = begin(&self.pool).await?;
        let team = match store::teams::insert(&mut tx, &name, &description).await {
            Ok(t) => t,
            Err(e) if is_unique_violation(&e) => {
                return Err(AppError::Conflict(format!(
                    "A team named {name} already exists."
                )));
            }
            Err(e) => return Err(e.into()),
        };
        audited(
            &mut tx,
            who,
            from,
            "team.create",
            format!("team:{name}"),
            json!({ "description": description }),
        )
        .await?;
        commit(tx).await?;
        Ok(team)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, team_id = team_id))]
    async fn add_member(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        username: &str,
    ) -> Result<(), AppError> {
        require(who, Action::ManageUsers, "manage teams")?;
        let team = store::teams::by_id(&self.pool, team_id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Team {team_id}")))?;
        let user = store::users::by_username(&self.pool, username.trim())
            .await?
            .ok_or_else(|| AppError::NotFound(format!("User {}", username.trim())))?;
        teams_set_here(&user)?;
        let mut tx = begin(&self.pool).await?;
        if !store::teams::add_member(&mut tx, team_id, user.id).await? {
            return Err(AppError::Conflict(format!(
                "{} is already a member of {}.",
                user.username, team.name
            )));
        }
        audited(
            &mut tx,
            who,
            from,
            "team.member.add",
            format!("team:{}", team.name),
            json!({ "user": user.username }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, team_id = team_id, user_id = user_id))]
    async fn remove_member(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        user_id: i64,
    ) -> Result<(), AppError> {
        require(who, Action::ManageUsers, "manage teams")?;
        let team = store::teams::by_id(&self.pool, team_id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("Team {team_id}")))?;
        let user = self.existing_user(user_id).await?;
        teams_set_here(&user)?;
        let mut tx = begin(&self.pool).await?;
        if !store::teams::remove_member(&mut tx, team_id, user_id).await? {
            return Err(AppError::NotFound(format!(
                "{} in team {}",
                user.username, team.name
            )));
        }
        audited(
            &mut tx,
            who,
            from,
            "team.member.remove",
            format!("team:{}", team.name),
            json!({ "user": user.username }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    async fn account(&self, who: &Principal) -> Result<AccountView, AppError> {
        self.own_account(who).await
    }

    async fn change_password(
        &self,
        who: &Principal,
        from: &str,
        current: &str,
        new: &str,
    ) -> Result<i32, AppError> {
        self.change_own_password(who, from, current, new).await
    }

    async fn start_second_factor(&self, who: &Principal, from: &str) -> Result<(), AppError> {
        self.start_own_factor(who, from).await
    }

    async fn confirm_second_factor(
        &self,
        who: &Principal,
        from: &str,
        code: &str,
    ) -> Result<(), AppError> {
        self.confirm_own_factor(who, from, code).await
    }

    async fn disable_second_factor(
        &self,
        who: &Principal,
        from: &str,
        password: &str,
        code: &str,
    ) -> Result<(), AppError> {
        self.disable_own_factor(who, from, password, code).await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, user_id = user_id))]
    async fn reset_second_factor(
        &self,
        who: &Principal,
        from: &str,
        user_id: i64,
    ) -> Result<(), AppError> {
        require(who, Action::ManageUsers, "reset a user's second factor")?;
        let u = self.existing_user(user_id).await?;
        let mut tx = begin(&self.pool).await?;
        store::users::clear_totp(&mut tx, u.id).await?;
        audited(
            &mut tx,
            who,
            from,
            "user.second_factor.reset",
            format!("user:{}", u.username),
            json!({ "had_second_factor": u.has_second_factor() }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    /// Sets or clears a team's Slack-compatible webhook (admin).
    #[tracing::instrument(skip_all, fields(user = %who.username, team_id = team_id))]
    async fn set_webhook(
        &self,
        who: &Principal,
        from: &str,
        team_id: i64,
        url: Option<&str>,
    ) -> Result<(), AppError> {
        require(who, Action::ManageUsers, "manage teams")?;
        let url = url.map(str::trim).filter(|u| !u.is_empty());
        if let Some(u) = url {
            let host = url::Url::parse(u)
                .ok()
                .filter(|p| matches!(p.scheme(), "http" | "https"))
                .and_then(|p| p.host_str().map(str::to_owned));
            let Some(host) = host else {
                return Err(AppError::Invalid(
                    "The webhook must be an http:// or https:// URL.".into(),
                ));
            };
            if let Err(e) = self.egress.check_saved(&host) {
                let why = format!("The webhook cannot be used: {e}.");
                let target = format!("team:{team_id}");
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "team.webhook.refused",
                    target,
                    json!({ "refused": why }),
                )
                .await;
                return Err(AppError::Invalid(why));
            }
        }
        let mut tx = begin(&self.pool).await?;
        if !store::teams::set_webhook(&mut tx, team_id, url).await? {
            return Err(AppError::NotFound(format!("Team {team_id}")));
        }
        // Webhook URLs carry their own secret: only the host is recorded.
        let host = url
            .and_then(|u| url::Url::parse(u).ok())
            .and_then(|u| u.host_str().map(str::to_string));
        audited(
            &mut tx,
            who,
            from,
            "team.webhook",
            format!("team:{team_id}"),
            json!({ "host": host }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    async fn set_time_zone(&self, who: &Principal, from: &str, zone: &str) -> Result<(), AppError> {
        self.set_own_time_zone(who, from, zone).await
    }

    async fn set_mail_preferences(
        &self,
        who: &Principal,
        from: &str,
        prefs: streamkeeper_app::accounts::model::MailPreferences,
    ) -> Result<(), AppError> {
        self.set_own_mail(who, from, prefs).await
    }

    async fn set_platform_team(
        &self,
        who: &Principal,
        from: &str,
        team: &str,
    ) -> Result<(), AppError> {
        require(who, Action::ManageUsers, "change settings")?;
        let id = team_id(&self.pool, team).await?;
        let mut tx = begin(&self.pool).await?;
        store::teams::set_setting(&mut tx, "platform_team_id", &id.to_string()).await?;
        audited(
            &mut tx,
            who,
            from,
            "settings.platform_team",
            format!("team:{}", team.trim()),
            json!({}),
        )
        .await?;
        Ok(commit(tx).await?)
    }
    async fn routing(
        &self,
        who: &Principal,
    ) -> Result<streamkeeper_app::accounts::model::Routing, AppError> {
        require(who, Action::Read, "see where flags go")?;
        Ok(streamkeeper_app::accounts::model::Routing {
            platform_team: store::teams::platform_team(&self.pool).await?,
        })
    }
}
