//! What the account screens and the REST API show: users, teams and the
//! signed-in user.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Role;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserSummary {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub roles: Vec<Role>,
    pub disabled: bool,
    pub created_at: DateTime<Utc>,
    /// Whether sign-in asks this user for a TOTP code.
    #[serde(default)]
    pub second_factor: bool,
    /// Whether the user must still change the password an admin set.
    #[serde(default)]
    pub must_change_password: bool,
    /// Signs in through the identity provider, whose groups set the
    /// user's roles and teams at every sign-in.
    #[serde(default)]
    pub single_sign_on: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TeamRef {
    pub id: i64,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserDetail {
    pub user: UserSummary,
    pub teams: Vec<TeamRef>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TeamSummary {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub members: i64,
    pub created_at: DateTime<Utc>,
    /// The host of the team's flag webhook, if it has one: the whole URL
    /// carries its own secret and is never shown back.
    pub webhook_host: Option<String>,
    /// Whether this team receives the flags nobody owns.
    pub platform: bool,
}

/// Where flags nobody owns go: the platform team, or nowhere.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Routing {
    pub platform_team: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TeamDetail {
    pub team: TeamSummary,
    pub members: Vec<UserSummary>,
}

/// A new user as an admin enters it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewUser {
    pub username: String,
    #[serde(default)]
    pub display_name: String,
    pub password: String,
    pub roles: Vec<Role>,
}

/// A change to a user; absent fields stay as they are.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserUpdate {
    pub display_name: Option<String>,
    pub roles: Option<Vec<Role>>,
    pub disabled: Option<bool>,
    /// A temporary password: the user must change it at their next
    /// sign-in; their sessions end and their tokens are revoked.
    #[serde(default)]
    pub password: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewTeam {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// The signed-in user's own account, for the account page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AccountView {
    pub username: String,
    pub display_name: String,
    /// An admin set the password: it must be changed before anything else.
    pub must_change_password: bool,
    /// Whether sign-in and approvals ask for a TOTP code.
    pub second_factor: bool,
    pub recovery_codes_left: i64,
    /// An enrolment or recovery-code renewal waiting for a code. Shown only
    /// to the user themself, and only until they confirm it.
    pub pending: Option<PendingFactor>,
    /// Signs in through the identity provider: no password here, and the
    /// provider's own second factor.
    #[serde(default)]
    pub single_sign_on: bool,
    /// The IANA zone the pages show times in for this user.
    pub time_zone: String,
    /// What this person hears by email, and where.
    #[serde(default)]
    pub mail: MailPreferences,
}

/// A person's own email address (empty: no mail) and what they want to
/// hear there about review items.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct MailPreferences {
    pub email: String,
    /// Items that start waiting for them as an approver.
    pub waiting: bool,
    /// Approvals, rejections, applies and failed applies of their items.
    pub outcomes: bool,
}

/// What a started enrolment shows once: the secret for the authenticator
/// app (absent when only the recovery codes are renewed) and the codes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PendingFactor {
    pub secret_base32: Option<String>,
    pub otpauth_uri: Option<String>,
    pub recovery_codes: Vec<String>,
}

/// A user's change of their own password.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PasswordChange {
    pub current_password: String,
    pub new_password: String,
}

/// The zone a user reads times in on the pages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TimeZoneChange {
    /// An IANA name, such as `Europe/Berlin` or `UTC`.
    pub time_zone: String,
}

/// The signed-in user and their teams, for the header and the home page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Me {
    pub principal: Principal,
    pub teams: Vec<TeamRef>,
}

/// How people sign in: through an identity provider (its name), with a
/// password, or both.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInWays {
    /// "Sign in with <provider>", when single sign-on is set up.
    pub provider: Option<String>,
    /// Whether everyone may sign in with a password (otherwise only the
    /// break-glass account).
    pub passwords: bool,
}
