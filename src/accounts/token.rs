//! Machine tokens: the scopes a token holds, which scope each request needs,
//! and whether a token is still live. What a token may do is the
//! intersection of its scopes (checked here, once, for every request) and
//! its user's roles (checked by the services, as for a person).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One kind of use a token is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Scope {
    /// GET and HEAD: read what the user may read.
    #[serde(rename = "read")]
    Read,
    /// Schema compatibility checks (`schema check --server` in CI).
    #[serde(rename = "check")]
    Check,
    /// Propose, edit, comment on, withdraw and apply review items.
    #[serde(rename = "propose")]
    Propose,
    /// Retired: approving and rejecting once took this scope, but a
    /// sign-off is a named person's, in the console, after re-authenticating
    /// (see [`Required::Person`]). Tokens made with it still parse and keep
    /// their other scopes; no new token gets it ([`grantable`]).
    #[serde(rename = "approve")]
    Approve,
    /// Send OpenLineage events, and nothing else, for producers.
    #[serde(rename = "lineage:write")]
    LineageWrite,
    /// Scrape `/metrics`, and nothing else, for Prometheus.
    #[serde(rename = "metrics")]
    Metrics,
    /// Every other change the user's roles allow (admin setup, owners'
    /// stream descriptions); never an approval.
    #[serde(rename = "write")]
    Write,
}

impl Scope {
    pub const ALL: [Scope; 7] = [
        Scope::Read,
        Scope::Check,
        Scope::Propose,
        Scope::Approve,
        Scope::LineageWrite,
        Scope::Metrics,
        Scope::Write,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Check => "check",
            Scope::Propose => "propose",
            Scope::Approve => "approve",
            Scope::LineageWrite => "lineage:write",
            Scope::Metrics => "metrics",
            Scope::Write => "write",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown scope '{0}' (expected one of read, check, propose, lineage:write, metrics, write)"
)]
pub struct UnknownScope(pub String);

/// Why a new token cannot be given a scope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotGrantable {
    #[error(transparent)]
    Unknown(#[from] UnknownScope),
    #[error(
        "the 'approve' scope is retired: approvals are done by a person in the console, who confirms with a password, a second factor or a fresh single sign-on; tokens keep check and propose for CI"
    )]
    Retired,
}

/// A scope a new token may be given, from its name: any known one but the
/// retired `approve`.
pub fn grantable(name: &str) -> Result<Scope, NotGrantable> {
    match name.parse::<Scope>()? {
        Scope::Approve => Err(NotGrantable::Retired),
        scope => Ok(scope),
    }
}

impl FromStr for Scope {
    type Err = UnknownScope;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scope::ALL
            .into_iter()
            .find(|sc| sc.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownScope(s.to_string()))
    }
}

/// The scopes one token holds: sorted, without duplicates, never empty.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(try_from = "Vec<Scope>", into = "Vec<Scope>")]
pub struct Scopes(Vec<Scope>);

impl TryFrom<Vec<Scope>> for Scopes {
    type Error = NoScopes;

    fn try_from(v: Vec<Scope>) -> Result<Self, NoScopes> {
        Scopes::new(v)
    }
}

impl From<Scopes> for Vec<Scope> {
    fn from(s: Scopes) -> Self {
        s.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a token needs at least one scope")]
pub struct NoScopes;

impl Scopes {
    pub fn new(scopes: impl IntoIterator<Item = Scope>) -> Result<Self, NoScopes> {
        let mut v: Vec<Scope> = scopes.into_iter().collect();
        v.sort();
        v.dedup();
        if v.is_empty() {
            Err(NoScopes)
        } else {
            Ok(Self(v))
        }
    }

    /// Every scope: what the command line acts with.
    pub fn all() -> Self {
        Self(Scope::ALL.to_vec())
    }

    pub fn iter(&self) -> impl Iterator<Item = Scope> + '_ {
        self.0.iter().copied()
    }

    pub fn holds(&self, scope: Scope) -> bool {
        self.0.contains(&scope)
    }

    /// Whether a token with these scopes may send `method` to `path`.
    pub fn allow(&self, method: &str, path: &str) -> Result<(), Refusal> {
        match required_scope(method, path) {
            Required::Session => Err(Refusal::SessionOnly),
            Required::Person => Err(Refusal::PersonOnly),
            Required::Scope(s) if self.holds(s) => Ok(()),
            Required::Scope(s) => Err(Refusal::Missing(s)),
        }
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Scope::as_str).collect();
        f.write_str(&names.join(","))
    }
}

/// What a request needs from a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Required {
    Scope(Scope),
    /// Server functions (`/fn/...`) are the browser's own calls, made with a
    /// session; they include approving, so no token scope may reach them.
    Session,
    /// Approving and rejecting: a named person's decision, made in a
    /// session that re-authenticated, which no token stands in for.
    Person,
}

/// Why a token was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "This token lacks the '{0}' scope this request needs; create a token with --scope {0}."
    )]
    Missing(Scope),
    #[error(
        "Server functions (/fn/...) are for signed-in browsers; tokens use the REST API under /api/v1."
    )]
    SessionOnly,
    #[error(
        "Approvals and rejections are done by a person in the console (the review item's page), confirmed with a password, a second factor or a fresh single sign-on; tokens cannot approve."
    )]
    PersonOnly,
}

/// The scope a request needs, from its method and path alone, so that one
/// rule covers every route, the ones to come included. Safe methods (as
/// `web::security` counts them) read;
/// a few writes have scopes of their own, approvals need a person; every
/// other write needs `write`.
/// Unknown paths fall to `read` or `write`, never to a narrower scope.
pub fn required_scope(method: &str, path: &str) -> Required {
    if path == "/fn" || path.starts_with("/fn/") {
        return Required::Session;
    }
    // Before the safe-method rule: a read token does not scrape, and a
    // scraper's token reads nothing else.
    if path == "/metrics" {
        return Required::Scope(Scope::Metrics);
    }
    if matches!(method, "GET" | "HEAD" | "OPTIONS") {
        return Required::Scope(Scope::Read);
    }
    let Some(api) = path.strip_prefix("/api/v1/") else {
        return Required::Scope(Scope::Write);
    };
    // Empty segments dropped, so `/a//b/` cannot slip past a pattern.
    let segments: Vec<&str> = api.split('/').filter(|s| !s.is_empty()).collect();
    if let ("POST", ["review-items", _, "approvals" | "rejections"]) = (method, segments.as_slice())
    {
        return Required::Person;
    }
    let scope = match (method, segments.as_slice()) {
        ("POST", ["clusters", _, "streams", _, "compatibility"]) => Scope::Check,
        ("POST", ["review-items"] | ["review-items", "connectors" | "connector-restarts"])
        | ("PUT", ["review-items", _] | ["review-items", _, "connector"])
        | ("POST", ["review-items", _, "withdraw" | "comments" | "apply"]) => Scope::Propose,
        ("POST", ["lineage"] | ["lineage", "batch"]) => Scope::LineageWrite,
        _ => Scope::Write,
    };
    Required::Scope(scope)
}

/// Why a token no longer works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dead {
    Revoked,
    Expired,
    /// Its user's password changed or the user was disabled since it was
    /// made (the user's token epoch moved on); re-enabling does not help.
    Superseded,
    UserDisabled,
}

/// The facts about a stored token that decide whether it still works.
#[derive(Clone, Copy, Debug)]
pub struct TokenFacts {
    pub revoked: bool,
    pub expires_at: Option<DateTime<Utc>>,
    pub epoch: i32,
    pub user_epoch: i32,
    pub user_disabled: bool,
}

/// Whether a token is live at `now`, or why not.
pub fn liveness(t: &TokenFacts, now: DateTime<Utc>) -> Result<(), Dead> {
    if t.revoked {
        Err(Dead::Revoked)
    } else if t.user_disabled {
        Err(Dead::UserDisabled)
    } else if t.epoch != t.user_epoch {
        Err(Dead::Superseded)
    } else if t.expires_at.is_some_and(|e| e <= now) {
        Err(Dead::Expired)
    } else {
        Ok(())
    }
}

impl Dead {
    /// The 401's message: enough for the token's owner to know what to do,
    /// nothing about other users.
    pub fn message(self) -> &'static str {
        match self {
            Dead::Revoked => "The bearer token was revoked.",
            Dead::Expired => "The bearer token has expired; create a new one.",
            Dead::Superseded => {
                "The bearer token was revoked when its user's password changed or the user was disabled; create a new one."
            }
            Dead::UserDisabled => "The bearer token's user is disabled.",
        }
    }

    /// How `token list` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Dead::Revoked => "revoked",
            Dead::Expired => "expired",
            Dead::Superseded => "revoked (password changed or user disabled)",
            Dead::UserDisabled => "user disabled",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn need(method: &str, path: &str) -> Required {
        required_scope(method, path)
    }

    fn scope(method: &str, path: &str) -> Scope {
        match need(method, path) {
            Required::Scope(s) => s,
            other => panic!("{method} {path} needs {other:?}, not a scope"),
        }
    }

    #[test]
    fn scopes_parse_and_print() {
        assert_eq!("lineage:write".parse::<Scope>(), Ok(Scope::LineageWrite));
        // Stored tokens may hold the retired scope.
        assert_eq!(" Approve ".parse::<Scope>(), Ok(Scope::Approve));
        assert!("admin".parse::<Scope>().is_err());
        for s in Scope::ALL {
            assert_eq!(s.as_str().parse::<Scope>(), Ok(s));
            assert_eq!(serde_json::to_value(s).ok(), Some(s.as_str().into()));
        }
        let set = Scopes::new([Scope::Write, Scope::Read, Scope::Write]);
        assert_eq!(set.map(|s| s.to_string()), Ok("read,write".to_string()));
        assert_eq!(Scopes::new([]), Err(NoScopes));
    }

    #[test]
    fn reads_need_read_everywhere() {
        for path in [
            "/api/v1/me",
            "/api/v1/clusters/1/streams",
            "/api/v1/review-items/3",
            "/api/v1/audit",
            "/api/v1/lineage",
            "/api/v1/openapi.json",
            "/",
            "/streams/1/orders",
        ] {
            assert_eq!(scope("GET", path), Scope::Read, "{path}");
            assert_eq!(scope("HEAD", path), Scope::Read, "{path}");
            assert_eq!(scope("OPTIONS", path), Scope::Read, "{path}");
        }
    }

    #[test]
    fn compatibility_checks_need_check() {
        assert_eq!(
            scope("POST", "/api/v1/clusters/1/streams/orders/compatibility"),
            Scope::Check
        );
        assert_eq!(
            scope("POST", "/api/v1/clusters/1/streams/a%2Fb/compatibility"),
            Scope::Check
        );
        // Recording a schema is a write, not a check.
        assert_eq!(
            scope("PUT", "/api/v1/clusters/1/streams/orders/schema"),
            Scope::Write
        );
    }

    #[test]
    fn review_items_are_proposed_by_tokens_and_approved_by_people() {
        assert_eq!(scope("POST", "/api/v1/review-items"), Scope::Propose);
        assert_eq!(scope("PUT", "/api/v1/review-items/7"), Scope::Propose);
        // Connector drafts and restarts are proposals too.
        assert_eq!(
            scope("POST", "/api/v1/review-items/connectors"),
            Scope::Propose
        );
        assert_eq!(
            scope("POST", "/api/v1/review-items/connector-restarts"),
            Scope::Propose
        );
        assert_eq!(
            scope("PUT", "/api/v1/review-items/7/connector"),
            Scope::Propose
        );
        for tail in ["withdraw", "comments", "apply"] {
            assert_eq!(
                scope("POST", &format!("/api/v1/review-items/7/{tail}")),
                Scope::Propose,
                "{tail}"
            );
        }
        for tail in ["approvals", "rejections"] {
            assert_eq!(
                need("POST", &format!("/api/v1/review-items/7/{tail}")),
                Required::Person,
                "{tail}"
            );
            // A stray slash does not turn an approval into something else.
            assert_eq!(
                need("POST", &format!("/api/v1/review-items//7/{tail}/")),
                Required::Person,
                "{tail}"
            );
        }
        // Domains and their approvers are admin setup.
        assert_eq!(
            scope("PUT", "/api/v1/review-domains/payments"),
            Scope::Write
        );
    }

    #[test]
    fn lineage_has_its_own_write_scope() {
        assert_eq!(scope("POST", "/api/v1/lineage"), Scope::LineageWrite);
        assert_eq!(scope("POST", "/api/v1/lineage/batch"), Scope::LineageWrite);
        assert_eq!(scope("PUT", "/api/v1/lineage"), Scope::Write);
        assert_eq!(scope("POST", "/api/v1/lineage/other"), Scope::Write);
    }

    #[test]
    fn metrics_has_its_own_scope_and_it_reads_nothing_else() {
        assert_eq!(scope("GET", "/metrics"), Scope::Metrics);
        let scraper = Scopes::new([Scope::Metrics]).expect("scopes");
        assert_eq!(scraper.allow("GET", "/metrics"), Ok(()));
        assert_eq!(
            scraper.allow("GET", "/api/v1/clusters"),
            Err(Refusal::Missing(Scope::Read))
        );
        let reader = Scopes::new([Scope::Read]).expect("scopes");
        assert_eq!(
            reader.allow("GET", "/metrics"),
            Err(Refusal::Missing(Scope::Metrics))
        );
        assert_eq!("metrics".parse::<Scope>(), Ok(Scope::Metrics));
    }

    #[test]
    fn every_other_change_needs_write() {
        for (method, path) in [
            ("POST", "/api/v1/users"),
            ("PATCH", "/api/v1/users/2"),
            ("POST", "/api/v1/teams"),
            ("POST", "/api/v1/teams/1/members"),
            ("DELETE", "/api/v1/teams/1/members/2"),
            ("PUT", "/api/v1/teams/1/webhook"),
            ("POST", "/api/v1/clusters"),
            ("PUT", "/api/v1/clusters/1/streams/orders"),
            ("PUT", "/api/v1/clusters/1/groups/g/owner"),
            ("PUT", "/api/v1/clusters/1/groups/g/reader-schemas/orders"),
            ("PUT", "/api/v1/clusters/1/registry"),
            ("POST", "/api/v1/flags/1/acknowledge"),
            ("POST", "/api/v1/flags/1/dismiss"),
            ("PUT", "/api/v1/settings/platform-team"),
            ("POST", "/api/v1/notifications/read"),
            ("POST", "/api/v1/not-yet-a-route"),
            ("POST", "/logout"),
        ] {
            assert_eq!(scope(method, path), Scope::Write, "{method} {path}");
        }
    }

    #[test]
    fn server_functions_are_for_sessions() {
        for method in ["GET", "POST"] {
            assert_eq!(need(method, "/fn/approve_review"), Required::Session);
            assert_eq!(need(method, "/fn/create_team"), Required::Session);
        }
        assert_eq!(
            Scopes::all().allow("POST", "/fn/approve_review"),
            Err(Refusal::SessionOnly)
        );
    }

    #[test]
    fn allow_is_the_intersection() {
        let read = Scopes::new([Scope::Read]).expect("scopes");
        assert_eq!(read.allow("GET", "/api/v1/teams"), Ok(()));
        assert_eq!(
            read.allow("POST", "/api/v1/teams"),
            Err(Refusal::Missing(Scope::Write))
        );
        let lineage = Scopes::new([Scope::LineageWrite]).expect("scopes");
        assert_eq!(lineage.allow("POST", "/api/v1/lineage/batch"), Ok(()));
        assert!(lineage.allow("GET", "/api/v1/streams").is_err());
    }

    #[test]
    fn no_token_approves_and_no_new_token_gets_the_approve_scope() {
        for scopes in [
            Scopes::all(),
            Scopes::new([Scope::Approve]).expect("scopes"),
        ] {
            for tail in ["approvals", "rejections"] {
                assert_eq!(
                    scopes.allow("POST", &format!("/api/v1/review-items/1/{tail}")),
                    Err(Refusal::PersonOnly)
                );
            }
        }
        assert!(Refusal::PersonOnly.to_string().contains("in the console"));
        // An old token's retired scope neither reads nor writes.
        let approve = Scopes::new([Scope::Approve]).expect("scopes");
        assert_eq!(
            approve.allow("GET", "/api/v1/review-items/1"),
            Err(Refusal::Missing(Scope::Read))
        );
        assert_eq!(grantable(" approve"), Err(NotGrantable::Retired));
        assert!(NotGrantable::Retired.to_string().contains("in the console"));
        assert_eq!(grantable("propose"), Ok(Scope::Propose));
        assert!(matches!(grantable("admin"), Err(NotGrantable::Unknown(_))));
    }

    #[test]
    fn liveness_names_why_a_token_died() {
        let now = Utc::now();
        let live = TokenFacts {
            revoked: false,
            expires_at: None,
            epoch: 2,
            user_epoch: 2,
            user_disabled: false,
        };
        assert_eq!(liveness(&live, now), Ok(()));
        let later = TokenFacts {
            expires_at: Some(now + Duration::days(1)),
            ..live
        };
        assert_eq!(liveness(&later, now), Ok(()));
        let expired = TokenFacts {
            expires_at: Some(now),
            ..live
        };
        assert_eq!(liveness(&expired, now), Err(Dead::Expired));
        let revoked = TokenFacts {
            revoked: true,
            ..expired
        };
        assert_eq!(liveness(&revoked, now), Err(Dead::Revoked));
        // A password change or a disable moved the user's epoch on:
        // re-enabling the user leaves the token dead.
        let superseded = TokenFacts {
            user_epoch: 3,
            ..live
        };
        assert_eq!(liveness(&superseded, now), Err(Dead::Superseded));
        let disabled = TokenFacts {
            user_disabled: true,
            ..live
        };
        assert_eq!(liveness(&disabled, now), Err(Dead::UserDisabled));
    }
}
