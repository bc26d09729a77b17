//! Users, teams and who is acting: names, the password policy and the
//! principal a request runs as.

use crate::accounts::role::{self, Action, Role};
use crate::accounts::token::Scopes;
use serde::{Deserialize, Serialize};

pub const MIN_PASSWORD_LEN: usize = 12;
/// The longest username; sign-in refuses longer ones before anything else.
pub const MAX_USERNAME_LEN: usize = 64;
pub const MAX_PASSWORD_LEN: usize = 128;
/// zxcvbn's scale runs 0–4; 3 is "safely unguessable: moderate protection
/// from offline slow-hash scenario".
const MIN_PASSWORD_SCORE: u8 = 3;

/// Who a request runs as, resolved by the server from a session or a token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Principal {
    pub user_id: i64,
    pub username: String,
    pub display_name: String,
    pub roles: Vec<Role>,
    pub via: Credential,
    /// What a token may be used for (`None` for a session, where the
    /// roles alone decide).
    #[serde(default)]
    pub scopes: Option<Scopes>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Credential {
    Session,
    Token,
}

impl Principal {
    pub fn may(&self, action: Action) -> bool {
        role::may(&self.roles, action)
    }

    pub fn has(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{what} must not be empty")]
    Empty { what: &'static str },
    #[error("{what} must be at most {max} characters")]
    TooLong { what: &'static str, max: usize },
    #[error(
        "{what} may contain only lowercase letters, digits, '.', '_' and '-', and must start with a letter or digit"
    )]
    BadCharacters { what: &'static str },
}

fn check_slug(what: &'static str, s: &str, max: usize) -> Result<String, NameError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(NameError::Empty { what });
    }
    if s.chars().count() > max {
        return Err(NameError::TooLong { what, max });
    }
    let ok_start = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let ok_rest = s
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    if !(ok_start && ok_rest) {
        return Err(NameError::BadCharacters { what });
    }
    Ok(s.to_string())
}

/// A login name: lowercase, stable, safe to show in logs and URLs.
pub fn check_username(s: &str) -> Result<String, NameError> {
    check_slug("username", s, MAX_USERNAME_LEN)
}

/// A team's name, used in URLs and routing rules.
pub fn check_team_name(s: &str) -> Result<String, NameError> {
    check_slug("team name", s, 64)
}

/// A free-text display name; falls back to the username when blank.
pub fn check_display_name(s: &str, username: &str) -> Result<String, NameError> {
    let s = s.trim();
    if s.chars().count() > 128 {
        return Err(NameError::TooLong {
            what: "display name",
            max: 128,
        });
    }
    Ok(if s.is_empty() {
        username.to_string()
    } else {
        s.to_string()
    })
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("password must be at least {MIN_PASSWORD_LEN} characters")]
    TooShort,
    #[error("password must be at most {MAX_PASSWORD_LEN} characters")]
    TooLong,
    #[error("password is too easy to guess{}", hint.as_deref().map(|h| format!(": {h}")).unwrap_or_default())]
    TooWeak { hint: Option<String> },
}

/// The password policy (ASVS 6.2): a minimum length, a generous maximum, and
/// no guessable passwords. zxcvbn carries the common-password and dictionary
/// lists that a hand-written deny list would only approximate; the user's own
/// names count as guessable.
pub fn check_password(password: &str, user_inputs: &[&str]) -> Result<(), PasswordError> {
    let len = password.chars().count();
    if len < MIN_PASSWORD_LEN {
        return Err(PasswordError::TooShort);
    }
    if len > MAX_PASSWORD_LEN {
        return Err(PasswordError::TooLong);
    }
    let estimate = zxcvbn::zxcvbn(password, user_inputs);
    if u8::from(estimate.score()) < MIN_PASSWORD_SCORE {
        let hint = estimate
            .feedback()
            .and_then(|f| f.warning())
            .map(|w| w.to_string());
        return Err(PasswordError::TooWeak { hint });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames() {
        assert_eq!(check_username(" alice "), Ok("alice".into()));
        assert_eq!(check_username("a.b_c-1"), Ok("a.b_c-1".into()));
        assert!(matches!(
            check_username("Alice"),
            Err(NameError::BadCharacters { .. })
        ));
        assert!(matches!(
            check_username("-x"),
            Err(NameError::BadCharacters { .. })
        ));
        assert!(matches!(check_username(""), Err(NameError::Empty { .. })));
        assert!(matches!(
            check_username(&"a".repeat(65)),
            Err(NameError::TooLong { .. })
        ));
    }

    #[test]
    fn display_name_defaults_to_username() {
        assert_eq!(check_display_name("  ", "bob"), Ok("bob".into()));
        assert_eq!(check_display_name(" Bob B ", "bob"), Ok("Bob B".into()));
    }

    #[test]
    fn password_policy() {
        assert_eq!(check_password("short", &[]), Err(PasswordError::TooShort));
        assert_eq!(
            check_password(&"x".repeat(129), &[]),
            Err(PasswordError::TooLong)
        );
        assert!(matches!(
            check_password("password1234", &[]),
            Err(PasswordError::TooWeak { .. })
        ));
        assert!(matches!(
            check_password("alicealice12", &["alice"]),
            Err(PasswordError::TooWeak { .. })
        ));
        assert_eq!(check_password("correct-horse-battery-staple", &[]), Ok(()));
    }

    #[test]
    fn principal_permissions_follow_roles() {
        let p = Principal {
            user_id: 1,
            username: "v".into(),
            display_name: "V".into(),
            roles: vec![Role::Viewer],
            via: Credential::Session,
            scopes: None,
        };
        assert!(p.may(Action::Read));
        assert!(!p.may(Action::ManageUsers));
        assert!(p.has(Role::Viewer) && !p.has(Role::Admin));
    }
}
