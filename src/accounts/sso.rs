//! Single sign-on's rules: which roles and teams a provider's groups give,
//! where the groups and the username sit in an ID token's claims, and when
//! a sign-in at the provider is fresh enough to approve with. The protocol
//! itself (discovery, PKCE, signatures) is the `openidconnect` crate's, in
//! the server.

use crate::accounts::account::{MAX_USERNAME_LEN, check_team_name, check_username};
use crate::accounts::role::Role;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How long a fresh sign-in at the provider lets an approver approve.
pub const REAUTH_WINDOW_SECS: i64 = 300;
/// Clocks differ: an `auth_time` this much before the request still counts.
pub const CLOCK_SKEW_SECS: i64 = 30;

/// Who may sign in with a password.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LocalLogin {
    #[default]
    Everyone,
    /// Only this break-glass account (or nobody): the rest sign in
    /// through the identity provider.
    Only(Option<String>),
}

impl LocalLogin {
    pub fn allows(&self, username: &str) -> bool {
        match self {
            LocalLogin::Everyone => true,
            LocalLogin::Only(who) => who.as_deref() == Some(username),
        }
    }
}

/// What a group gives its members.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    #[serde(default)]
    pub roles: BTreeSet<Role>,
    #[serde(default)]
    pub teams: BTreeSet<String>,
}

/// The mapping file: a JSON object from a provider's group name to what it
/// gives, e.g. `{"kafka-admins": {"roles": ["admin"]},
/// "team-payments": {"teams": ["payments"], "roles": ["owner"]}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupMapping {
    groups: BTreeMap<String, Grant>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MappingError {
    #[error(
        "the group mapping is not a JSON object of groups to {{\"roles\": [...], \"teams\": [...]}}: {0}"
    )]
    Shape(String),
    #[error("the group mapping names team '{team}' for group '{group}': {reason}")]
    BadTeam {
        group: String,
        team: String,
        reason: String,
    },
}

impl GroupMapping {
    pub fn parse(text: &str) -> Result<Self, MappingError> {
        let groups: BTreeMap<String, Grant> =
            serde_json::from_str(text).map_err(|e| MappingError::Shape(e.to_string()))?;
        for (group, grant) in &groups {
            for team in &grant.teams {
                check_team_name(team).map_err(|e| MappingError::BadTeam {
                    group: group.clone(),
                    team: team.clone(),
                    reason: e.to_string(),
                })?;
            }
        }
        Ok(Self { groups })
    }

    /// What the groups give together: every user reads (viewer), and the
    /// provider's groups are the whole truth, so a group taken away at the
    /// provider takes its roles and teams away at the next sign-in.
    pub fn grant(&self, groups: &[String]) -> Grant {
        let mut roles = BTreeSet::from([Role::Viewer]);
        let mut teams = BTreeSet::new();
        for g in groups {
            if let Some(grant) = self.groups.get(g) {
                roles.extend(grant.roles.iter().copied());
                teams.extend(grant.teams.iter().cloned());
            }
        }
        Grant { roles, teams }
    }
}

/// The claim at a dotted path (`groups`, or Keycloak's `realm_access.roles`),
/// as a list of group names: an array of strings, or one string.
pub fn groups_at(claims: &Value, path: &str) -> Vec<String> {
    let mut at = claims;
    for key in path.split('.').filter(|k| !k.is_empty()) {
        match at.get(key) {
            Some(v) => at = v,
            None => return Vec::new(),
        }
    }
    match at {
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The username a new user gets: the configured claim (by default
/// `preferred_username`), else the e-mail's local part, else the subject,
/// lowered and held to the username rules. `None` when nothing usable is
/// there; the server then refuses the sign-in with a reason.
pub fn username_from(claims: &Value, claim: &str) -> Option<String> {
    let candidates = [
        claims
            .get(claim)
            .and_then(Value::as_str)
            .map(str::to_string),
        claims
            .get("email")
            .and_then(Value::as_str)
            .and_then(|e| e.split('@').next())
            .map(str::to_string),
        claims
            .get("sub")
            .and_then(Value::as_str)
            .map(str::to_string),
    ];
    candidates.into_iter().flatten().find_map(|c| {
        let lowered: String = c
            .trim()
            .to_lowercase()
            .chars()
            .map(|ch| if ch.is_whitespace() { '-' } else { ch })
            .take(MAX_USERNAME_LEN)
            .collect();
        check_username(&lowered).ok()
    })
}

/// A display name from the standard claims, if any.
pub fn display_name_from(claims: &Value) -> Option<String> {
    ["name", "preferred_username", "email"]
        .into_iter()
        .find_map(|c| claims.get(c).and_then(Value::as_str))
        .map(|s| s.chars().take(128).collect())
}

/// Whether a provider's `auth_time` shows the user signed in at the
/// provider after the re-authentication was asked for (`asked_at`, Unix
/// seconds), give or take the clocks' skew. A provider that does not say
/// when the user signed in has not shown a fresh sign-in.
pub fn fresh_sign_in(auth_time: Option<i64>, asked_at: i64) -> bool {
    auth_time.is_some_and(|t| t >= asked_at - CLOCK_SKEW_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mapping() -> GroupMapping {
        GroupMapping::parse(
            r#"{"kafka-admins": {"roles": ["admin"]},
                "team-payments": {"teams": ["payments"], "roles": ["owner"]},
                "approvers": {"roles": ["approver"], "teams": ["payments", "risk"]}}"#,
        )
        .expect("mapping")
    }

    #[test]
    fn groups_give_the_union_of_their_grants_and_everyone_reads() {
        let g = mapping().grant(&["team-payments".into(), "approvers".into(), "x".into()]);
        assert_eq!(
            g.roles,
            [Role::Viewer, Role::Owner, Role::Approver]
                .into_iter()
                .collect()
        );
        assert_eq!(
            g.teams,
            ["payments".to_string(), "risk".to_string()]
                .into_iter()
                .collect()
        );
        let none = mapping().grant(&[]);
        assert_eq!(none.roles, [Role::Viewer].into_iter().collect());
        assert!(none.teams.is_empty());
    }

    #[test]
    fn a_mapping_with_an_unknown_role_or_a_bad_team_is_refused() {
        assert!(matches!(
            GroupMapping::parse(r#"{"g": {"roles": ["root"]}}"#),
            Err(MappingError::Shape(_))
        ));
        assert!(matches!(
            GroupMapping::parse(r#"{"g": {"teams": ["Pay Ments"]}}"#),
            Err(MappingError::BadTeam { .. })
        ));
        assert!(matches!(
            GroupMapping::parse(r#"{"g": {"role": ["admin"]}}"#),
            Err(MappingError::Shape(_))
        ));
        assert!(matches!(
            GroupMapping::parse("[]"),
            Err(MappingError::Shape(_))
        ));
    }

    #[test]
    fn groups_are_read_at_a_dotted_path_as_a_list_or_one_string() {
        let c = json!({"groups": ["a", "b", 3], "realm_access": {"roles": ["r"]}, "one": "solo"});
        assert_eq!(groups_at(&c, "groups"), vec!["a", "b"]);
        assert_eq!(groups_at(&c, "realm_access.roles"), vec!["r"]);
        assert_eq!(groups_at(&c, "one"), vec!["solo"]);
        assert!(groups_at(&c, "missing.path").is_empty());
    }

    #[test]
    fn a_username_comes_from_the_claim_the_mail_or_the_subject() {
        let c = json!({"sub": "123", "preferred_username": "Alice", "email": "al@x.io"});
        assert_eq!(
            username_from(&c, "preferred_username").as_deref(),
            Some("alice")
        );
        let c = json!({"sub": "123", "email": "Bob.Smith@x.io"});
        assert_eq!(
            username_from(&c, "preferred_username").as_deref(),
            Some("bob.smith")
        );
        let c = json!({"sub": "u-77"});
        assert_eq!(
            username_from(&c, "preferred_username").as_deref(),
            Some("u-77")
        );
        let c = json!({"sub": "!!!", "preferred_username": "@@"});
        assert_eq!(username_from(&c, "preferred_username"), None);
    }

    #[test]
    fn with_local_sign_in_off_only_the_break_glass_account_uses_a_password() {
        assert!(LocalLogin::Everyone.allows("alice"));
        let off = LocalLogin::Only(Some("root".into()));
        assert!(off.allows("root"));
        assert!(!off.allows("alice"));
        assert!(!off.allows(""));
        assert!(!LocalLogin::Only(None).allows("root"));
    }

    #[test]
    fn a_sign_in_is_fresh_only_after_it_was_asked_for() {
        assert!(fresh_sign_in(Some(1_000), 1_000));
        assert!(fresh_sign_in(Some(1_000 - CLOCK_SKEW_SECS), 1_000));
        assert!(!fresh_sign_in(Some(1_000 - CLOCK_SKEW_SECS - 1), 1_000));
        assert!(!fresh_sign_in(None, 1_000));
    }
}
