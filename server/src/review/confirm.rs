//! Who confirms an approval, and how: a named person in a session (never
//! a token), with their password again or a fresh sign-in at the identity
//! provider, and their second factor's code when they have one. Password
//! and code attempts spend sign-in's throttle.

use streamkeeper::accounts::account::{Credential, Principal};
use streamkeeper::accounts::token::Refusal as TokenRefusal;
use streamkeeper_app::error::{AppError, ConfirmField};
use streamkeeper_app::review::model::{Approval, Confirmation};

use super::ReviewService;

impl ReviewService {
    /// How the caller confirms an approval in the browser.
    pub(in crate::review) async fn confirmation(
        &self,
        who: &Principal,
    ) -> Result<Confirmation, AppError> {
        use crate::accounts::store::sso;
        if !sso::is_single_sign_on(&self.pool, who.user_id).await? {
            return Ok(Confirmation::Password);
        }
        let window = streamkeeper::accounts::sso::REAUTH_WINDOW_SECS;
        Ok(
            if sso::reauthenticated_within(&self.pool, who.user_id, window).await? {
                Confirmation::ProviderFresh
            } else {
                Confirmation::Provider
            },
        )
    }

    /// Approving and rejecting are a named person's, in a session: no
    /// token, whatever its scopes. The auth middleware already turns tokens
    /// away from those routes; this holds even for a route it does not know.
    pub(super) async fn by_a_person(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        action: &str,
    ) -> Result<(), AppError> {
        if who.via != Credential::Token {
            return Ok(());
        }
        self.refused(who, from, id, action, "tokens cannot approve or reject")
            .await;
        Err(AppError::Refused(TokenRefusal::PersonOnly.to_string()))
    }

    /// The password check approving in the browser asks for (tokens never
    /// get here: [`Self::by_a_person`]).
    async fn reauthenticate(
        &self,
        who: &Principal,
        from: &str,
        password: Option<&str>,
    ) -> Result<bool, AppError> {
        // A single-sign-on user has no password here: a fresh sign-in at
        // the provider, asked for moments ago, is used up instead.
        if crate::accounts::store::sso::is_single_sign_on(&self.pool, who.user_id).await? {
            return Ok(crate::accounts::store::sso::use_reauthentication(
                &self.pool,
                who.user_id,
                streamkeeper::accounts::sso::REAUTH_WINDOW_SECS,
            )
            .await?);
        }
        let Some(password) = password.filter(|p| !p.is_empty()) else {
            return Ok(false);
        };
        if let Some(wait) = self.limiter.wait(&who.username, from) {
            return Err(AppError::Refused(format!(
                "Too many failed password attempts for this account: it is locked for {} s more, then confirm again.",
                wait.as_secs().max(1)
            )));
        }
        let user = crate::accounts::store::users::by_id(&self.pool, who.user_id).await?;
        let right = match user {
            Some(u) if !u.disabled => {
                crate::platform::password::verify_async(password.to_owned(), u.password_hash)
                    .await?
            }
            _ => false,
        };
        if !right {
            self.limiter.failed(&who.username, from);
        }
        Ok(right)
    }

    /// A second factor's current code, which approving in a session also
    /// asks for when the approver set one up. Throttled like the password;
    /// on refusal, the reason to audit and the error to answer.
    async fn second_factor(
        &self,
        who: &Principal,
        from: &str,
        code: Option<&str>,
    ) -> Result<(), (&'static str, AppError)> {
        let user = crate::accounts::store::users::by_id(&self.pool, who.user_id)
            .await
            .map_err(|e| ("second factor unchecked", e.into()))?;
        let Some(user) = user.filter(|u| u.has_second_factor()) else {
            return Ok(());
        };
        let Some(code) = code.filter(|c| !c.trim().is_empty()) else {
            return Err((
                "second-factor code missing",
                AppError::NotConfirmed {
                    field: ConfirmField::Code,
                    message:
                        "Confirm the approval with a code from your authenticator app as well."
                            .into(),
                },
            ));
        };
        if let Some(wait) = self.limiter.wait(&who.username, from) {
            return Err((
                "second-factor attempts throttled",
                AppError::Refused(format!(
                    "Too many failed attempts for this account: it is locked for {} s more, then confirm again.",
                    wait.as_secs().max(1)
                )),
            ));
        }
        match crate::accounts::second_factor::verify(&self.pool, &user, code, false).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(r)) => {
                self.limiter.failed(&who.username, from);
                Err((
                    "second-factor code not accepted",
                    AppError::NotConfirmed {
                        field: ConfirmField::Code,
                        message: format!("Confirm the approval with a current code: {r}."),
                    },
                ))
            }
            Err(e) => Err(("second factor unchecked", e)),
        }
    }

    /// An approval confirmed as its approver's: the password again (or a
    /// fresh sign-in at the identity provider), then the second factor's
    /// code when one is set up. Each failure is a refusal, audited.
    pub(super) async fn confirm_approval(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        approval: &Approval,
    ) -> Result<(), AppError> {
        let confirmed = match self
            .reauthenticate(who, from, approval.password.as_deref())
            .await
        {
            Ok(c) => c,
            Err(e) => {
                self.refused(
                    who,
                    from,
                    id,
                    "review.approve.refused",
                    "password attempts throttled",
                )
                .await;
                return Err(e);
            }
        };
        if !confirmed {
            let sso = who.via == Credential::Session
                && crate::accounts::store::sso::is_single_sign_on(&self.pool, who.user_id).await?;
            let (reason, message) = if sso {
                (
                    "no fresh sign-in at the identity provider",
                    "Confirm the approval at your identity provider first (Confirm at the provider, then approve within five minutes).",
                )
            } else {
                (
                    "password not confirmed",
                    "Confirm the approval with your password: the one given is not right.",
                )
            };
            self.refused(who, from, id, "review.approve.refused", reason)
                .await;
            return Err(if sso {
                AppError::Refused(message.into())
            } else {
                AppError::NotConfirmed {
                    field: ConfirmField::Password,
                    message: message.into(),
                }
            });
        }
        if let Err((reason, e)) = self
            .second_factor(who, from, approval.totp.as_deref())
            .await
        {
            self.refused(who, from, id, "review.approve.refused", reason)
                .await;
            return Err(e);
        }
        Ok(())
    }
}
