//! A signed-in person's own account: their password, second factor and
//! time zone. Each change asks again for what proves it is them (the
//! current password, a code) under sign-in's throttle, and each wrong
//! answer is a refusal in the audit log.

use serde_json::json;
use streamkeeper::accounts::account::{Credential, Principal, check_password};
use streamkeeper_app::accounts::model::{AccountView, MailPreferences};
use streamkeeper_app::error::AppError;

use super::store::users::UserRow;
use super::{AccountService, invalid, second_factor, store};
use crate::audit::{audited, record_refusal};
use crate::platform::db::{begin, commit};
use crate::platform::password;

/// The account page is the signed-in person's own: a token cannot reach it.
fn session_only(who: &Principal) -> Result<(), AppError> {
    if who.via == Credential::Session {
        Ok(())
    } else {
        Err(AppError::Forbidden(
            "manage an account with an API token; sign in instead".into(),
        ))
    }
}

impl AccountService {
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub(super) async fn own_account(&self, who: &Principal) -> Result<AccountView, AppError> {
        session_only(who)?;
        let u = self.existing_user(who.user_id).await?;
        let left = store::users::recovery_codes_left(&self.pool, u.id).await?;
        Ok(AccountView {
            username: u.username.clone(),
            display_name: u.display_name.clone(),
            must_change_password: u.must_change_password,
            second_factor: u.has_second_factor(),
            recovery_codes_left: left,
            pending: second_factor::pending(&u)?,
            single_sign_on: store::sso::is_single_sign_on(&self.pool, u.id).await?,
            time_zone: u.time_zone.clone(),
            mail: store::mail::preferences(&self.pool, u.id)
                .await?
                .map(|m| MailPreferences {
                    email: m.email.unwrap_or_default(),
                    waiting: m.mail_waiting,
                    outcomes: m.mail_outcomes,
                })
                .unwrap_or_default(),
        })
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub(super) async fn change_own_password(
        &self,
        who: &Principal,
        from: &str,
        current: &str,
        new: &str,
    ) -> Result<i32, AppError> {
        const ACTION: &str = "account.password.refused";
        session_only(who)?;
        let u = self.confirm_password(who, from, ACTION, current).await?;
        check_password(new, &[&u.username, &u.display_name]).map_err(invalid)?;
        if new == current {
            return Err(AppError::Invalid(
                "Choose a new password, not the current one.".into(),
            ));
        }
        let hash = password::hash_async(new.to_owned()).await?;
        let mut tx = begin(&self.pool).await?;
        let mut after = store::users::lock(&mut tx, u.id)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("User {}", u.id)))?;
        after.password_hash = hash;
        after.must_change_password = false;
        // Every session of the user ends (the epoch moves on); the caller
        // keeps its own by taking on the new epoch.
        let row = store::users::update(&mut tx, &after, true).await?;
        audited(
            &mut tx,
            who,
            from,
            "account.password",
            format!("user:{}", u.username),
            json!({ "other_sessions_ended": true, "tokens_revoked": true,
                    "was_temporary": u.must_change_password }),
        )
        .await?;
        commit(tx).await?;
        // The user's tokens are revoked (the token epoch moved on).
        self.tokens.drop_all();
        Ok(row.session_epoch)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub(super) async fn start_own_factor(
        &self,
        who: &Principal,
        from: &str,
    ) -> Result<(), AppError> {
        session_only(who)?;
        let u = self.existing_user(who.user_id).await?;
        let mut tx = begin(&self.pool).await?;
        store::users::set_totp_pending(&mut tx, u.id, Some(&second_factor::new_seed())).await?;
        audited(
            &mut tx,
            who,
            from,
            "account.second_factor.start",
            format!("user:{}", u.username),
            json!({ "renewal": u.has_second_factor() }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub(super) async fn confirm_own_factor(
        &self,
        who: &Principal,
        from: &str,
        code: &str,
    ) -> Result<(), AppError> {
        const ACTION: &str = "account.second_factor.refused";
        session_only(who)?;
        self.throttle(who, from, ACTION).await?;
        let u = self.existing_user(who.user_id).await?;
        let done = match second_factor::confirm(&u, code)? {
            Ok(c) => c,
            Err(refusal) => {
                return Err(self
                    .wrong(
                        who,
                        from,
                        ACTION,
                        &format!("The code was not accepted: {refusal}"),
                    )
                    .await);
            }
        };
        let mut tx = begin(&self.pool).await?;
        let renewal = done.secret.is_none();
        match &done.secret {
            Some(secret) => {
                let stored = second_factor::for_storage(u.id, secret);
                store::users::enable_totp(&mut tx, u.id, &stored, done.step).await?
            }
            None => {
                if !store::users::use_totp_step(&mut tx, u.id, done.step).await? {
                    drop(tx);
                    return Err(self
                        .refuse(
                            who,
                            from,
                            ACTION,
                            "The code was not accepted: that code was used already; wait for the next one",
                        )
                        .await);
                }
            }
        }
        store::users::replace_recovery_codes(&mut tx, u.id, &done.hashes).await?;
        audited(
            &mut tx,
            who,
            from,
            if renewal {
                "account.recovery_codes.renew"
            } else {
                "account.second_factor.enable"
            },
            format!("user:{}", u.username),
            json!({ "recovery_codes": done.hashes.len() }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub(super) async fn disable_own_factor(
        &self,
        who: &Principal,
        from: &str,
        password: &str,
        code: &str,
    ) -> Result<(), AppError> {
        const ACTION: &str = "account.second_factor.refused";
        session_only(who)?;
        let u = self.confirm_password(who, from, ACTION, password).await?;
        if !u.has_second_factor() {
            return Err(AppError::Conflict("You have no second factor.".into()));
        }
        let factor = self.confirm_code(who, from, ACTION, &u, code, true).await?;
        let mut tx = begin(&self.pool).await?;
        store::users::clear_totp(&mut tx, u.id).await?;
        audited(
            &mut tx,
            who,
            from,
            "account.second_factor.disable",
            format!("user:{}", u.username),
            json!({ "confirmed_with": factor.as_str() }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    /// The team that receives flags nobody owns (admin).
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub(super) async fn set_own_time_zone(
        &self,
        who: &Principal,
        from: &str,
        zone: &str,
    ) -> Result<(), AppError> {
        // Any signed-in person chooses their own zone; a token may too (it
        // changes only how pages show its owner's times).
        let tz = streamkeeper::accounts::time_zone::parse(zone).map_err(invalid)?;
        let mut tx = begin(&self.pool).await?;
        let was = store::users::set_time_zone(&mut tx, who.user_id, tz.name())
            .await?
            .ok_or_else(|| AppError::NotFound(format!("User {}", who.user_id)))?;
        audited(
            &mut tx,
            who,
            from,
            "account.time_zone",
            format!("user:{}", who.username),
            json!({ "from": was, "to": tz.name() }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    /// The caller's own email address and choices. A bad address is a
    /// 422, audited as refused without the address typed; the change is
    /// audited with whether an address is set, not the address.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub(super) async fn set_own_mail(
        &self,
        who: &Principal,
        from: &str,
        prefs: MailPreferences,
    ) -> Result<(), AppError> {
        session_only(who)?;
        let email = match streamkeeper::review::mail::parse_email(&prefs.email) {
            Ok(e) => e,
            Err(e) => {
                let reason = match e {
                    streamkeeper::review::mail::BadEmail::TooLong => "too long",
                    streamkeeper::review::mail::BadEmail::NotAnAddress(_) => "not an address",
                };
                let target = format!("user:{}", who.username);
                let detail = json!({ "reason": reason });
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "account.mail.refused",
                    target,
                    detail,
                )
                .await;
                return Err(invalid(e));
            }
        };
        let new = store::mail::MailPrefs {
            email,
            mail_waiting: prefs.waiting,
            mail_outcomes: prefs.outcomes,
        };
        let mut tx = begin(&self.pool).await?;
        let was = store::mail::set_preferences(&mut tx, who.user_id, &new)
            .await?
            .ok_or_else(|| AppError::NotFound(format!("User {}", who.user_id)))?;
        audited(
            &mut tx,
            who,
            from,
            "account.mail",
            format!("user:{}", who.username),
            json!({ "address_set": new.email.is_some(), "address_changed": was.email != new.email,
                    "waiting": new.mail_waiting, "outcomes": new.mail_outcomes }),
        )
        .await?;
        Ok(commit(tx).await?)
    }

    /// Records a refused account change (audited, never with what was
    /// typed) and answers the refusal for the user to see.
    async fn refuse(&self, who: &Principal, from: &str, action: &str, reason: &str) -> AppError {
        record_refusal(
            &self.pool,
            who,
            from,
            action,
            format!("user:{}", who.username),
            json!({ "reason": reason }),
        )
        .await;
        AppError::Refused(format!("{reason}."))
    }

    /// The sign-in throttle for a typed password or code; refused (and
    /// audited) when spent.
    async fn throttle(&self, who: &Principal, from: &str, action: &str) -> Result<(), AppError> {
        let Some(wait) = self.limiter.wait(&who.username, from) else {
            return Ok(());
        };
        Err(self
            .refuse(
                who,
                from,
                action,
                &format!(
                    "Too many failed attempts for this account: it is locked for {} s more",
                    wait.as_secs().max(1)
                ),
            )
            .await)
    }

    /// A wrong password or code: it counts against the throttle, and is a
    /// refusal, audited.
    async fn wrong(&self, who: &Principal, from: &str, action: &str, reason: &str) -> AppError {
        self.limiter.failed(&who.username, from);
        self.refuse(who, from, action, reason).await
    }

    /// Checks the caller's current password (throttled); a wrong one is a
    /// refusal, audited.
    async fn confirm_password(
        &self,
        who: &Principal,
        from: &str,
        action: &str,
        given: &str,
    ) -> Result<UserRow, AppError> {
        self.throttle(who, from, action).await?;
        let u = self.existing_user(who.user_id).await?;
        if u.disabled || !password::verify_async(given.to_owned(), u.password_hash.clone()).await? {
            return Err(self
                .wrong(who, from, action, "The current password is not right")
                .await);
        }
        Ok(u)
    }

    /// A second-factor code of the caller, used up when right; the caller
    /// has spent the throttle for this attempt already. A recovery code
    /// counts only where `recovery` allows it.
    async fn confirm_code(
        &self,
        who: &Principal,
        from: &str,
        action: &str,
        u: &UserRow,
        given: &str,
        recovery: bool,
    ) -> Result<second_factor::Factor, AppError> {
        match second_factor::verify(&self.pool, u, given, recovery).await? {
            Ok(f) => Ok(f),
            Err(refusal) => Err(self
                .wrong(
                    who,
                    from,
                    action,
                    &format!("The second-factor code was not accepted: {refusal}"),
                )
                .await),
        }
    }

    /// The second step of signing in: the pending user's code or recovery
    /// code, used up when right. `Ok(None)` when it is not (the sign-in
    /// handler counts and throttles those, as it does passwords).
    #[tracing::instrument(skip_all, fields(user_id = user_id))]
    pub async fn second_factor_sign_in(
        &self,
        user_id: i64,
        given: &str,
    ) -> Result<Option<(UserRow, second_factor::Factor)>, AppError> {
        let Some(u) = self.user_row(user_id).await? else {
            return Ok(None);
        };
        if u.disabled {
            return Ok(None);
        }
        Ok(second_factor::verify(&self.pool, &u, given, true)
            .await?
            .ok()
            .map(|f| (u, f)))
    }
}
