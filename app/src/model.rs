//! What the screens and the REST API show: users, teams, audit entries and
//! the signed-in user. Shared by the server functions and the REST handlers,
//! so both answer with the same shapes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use streamkeeper::account::Principal;
use streamkeeper::role::Role;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserSummary {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub roles: Vec<Role>,
    pub disabled: bool,
    pub created_at: DateTime<Utc>,
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
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TeamDetail {
    pub team: TeamSummary,
    pub members: Vec<UserSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditRow {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub detail: String,
    pub source: String,
}

/// Filters for the audit log; empty fields do not filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditFilter {
    pub actor: Option<String>,
    pub action: Option<String>,
    pub target: Option<String>,
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
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewTeam {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// The signed-in user and their teams, for the header and the home page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Me {
    pub principal: Principal,
    pub teams: Vec<TeamRef>,
}
