//! Roles and what each one may do. The server asks these functions; the UI
//! asks the same ones only to decide what to show.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A role a user holds. A user may hold several; every signed-in user can at
/// least read (viewer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Owner,
    Approver,
    Manager,
    Admin,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Viewer,
        Role::Owner,
        Role::Approver,
        Role::Manager,
        Role::Admin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Owner => "owner",
            Role::Approver => "approver",
            Role::Manager => "manager",
            Role::Admin => "admin",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Role::Viewer => "reads streams, flags, schemas and lineage",
            Role::Owner => "owns streams of their teams and acknowledges their flags",
            Role::Approver => "approves changes in the domains they are named for",
            Role::Manager => "reads pilot metrics and sets baselines",
            Role::Admin => "manages users, teams, clusters and settings; reads the audit log",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role '{0}' (expected one of viewer, owner, approver, manager, admin)")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownRole(s.to_string()))
    }
}

/// Something a principal may try to do. Each handler names the action it
/// performs and asks [`may`]; nothing else decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Read the console's pages and the read-only API.
    Read,
    /// Create, change and disable users; manage teams and memberships.
    ManageUsers,
    /// Browse the audit log.
    ReadAudit,
    /// Add and change the clusters Streamkeeper watches.
    ManageClusters,
    /// See the background routines: their runs, failures and leases.
    SeeRoutines,
    /// Send OpenLineage events (`POST /api/v1/lineage`). Lineage is shown
    /// to everyone and its owners are notified from it, so forging it is a
    /// change: owners and admins (a producer's account is an owner whose
    /// token holds only `lineage:write`).
    SendLineage,
    /// Change a routine's schedule, pause it, or run it now.
    ManageRoutines,
    /// Read the pilot: its metrics against the baseline, its receipts and
    /// their CSV (managers and admins).
    ReadPilot,
    /// Set the pilot up: scope, start date, baselines (managers and admins).
    SetPilot,
}

/// Whether someone holding `roles` may perform `action`.
pub fn may(roles: &[Role], action: Action) -> bool {
    let admin = roles.contains(&Role::Admin);
    match action {
        // Every role includes reading; a user with no role at all reads nothing.
        Action::Read => !roles.is_empty(),
        Action::ManageUsers
        | Action::ReadAudit
        | Action::ManageClusters
        | Action::SeeRoutines
        | Action::ManageRoutines => admin,
        // The manager reads the pilot and sets it up, and changes nothing else.
        Action::ReadPilot | Action::SetPilot => admin || roles.contains(&Role::Manager),
        Action::SendLineage => admin || roles.contains(&Role::Owner),
    }
}

/// Sorted, de-duplicated roles, so that stored and compared sets are canonical.
pub fn normalize(roles: impl IntoIterator<Item = Role>) -> Vec<Role> {
    let mut v: Vec<Role> = roles.into_iter().collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_roles_case_insensitively() {
        assert_eq!("Admin".parse::<Role>(), Ok(Role::Admin));
        assert_eq!(" viewer ".parse::<Role>(), Ok(Role::Viewer));
        assert!("root".parse::<Role>().is_err());
    }

    #[test]
    fn only_admins_manage_users_and_read_audit() {
        for role in Role::ALL {
            let admin = role == Role::Admin;
            assert_eq!(may(&[role], Action::ManageUsers), admin, "{role}");
            assert_eq!(may(&[role], Action::ReadAudit), admin, "{role}");
            assert_eq!(may(&[role], Action::SeeRoutines), admin, "{role}");
            assert_eq!(may(&[role], Action::ManageRoutines), admin, "{role}");
            assert!(may(&[role], Action::Read), "{role}");
        }
        assert!(!may(&[], Action::Read));
    }

    #[test]
    fn owners_and_admins_send_lineage() {
        for role in Role::ALL {
            let may_send = matches!(role, Role::Owner | Role::Admin);
            assert_eq!(may(&[role], Action::SendLineage), may_send, "{role}");
        }
    }

    #[test]
    fn managers_and_admins_read_and_set_the_pilot_and_managers_change_nothing_else() {
        for role in Role::ALL {
            let pilot = matches!(role, Role::Manager | Role::Admin);
            assert_eq!(may(&[role], Action::ReadPilot), pilot, "{role}");
            assert_eq!(may(&[role], Action::SetPilot), pilot, "{role}");
        }
        for action in [
            Action::ManageUsers,
            Action::ReadAudit,
            Action::ManageClusters,
            Action::SeeRoutines,
            Action::ManageRoutines,
            Action::SendLineage,
        ] {
            assert!(!may(&[Role::Manager], action), "{action:?}");
        }
        assert!(may(&[Role::Manager], Action::Read));
    }

    #[test]
    fn normalize_sorts_and_dedups() {
        assert_eq!(
            normalize([Role::Admin, Role::Viewer, Role::Admin]),
            vec![Role::Viewer, Role::Admin]
        );
    }
}
