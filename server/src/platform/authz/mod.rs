//! What the authorization rules need to know about the caller beyond the
//! roles their principal carries: the teams they belong to. Every service
//! loads it the same way, once per call, and hands it to the pure rules in
//! `streamkeeper::access` (`may_steward` and friends).

mod store;

use sqlx::PgPool;
use streamkeeper::access::stewardship::Steward;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper_app::error::AppError;

use crate::platform::errors::Db;

/// The caller's facts, as read at the start of a call.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    teams: Vec<i64>,
}

impl Facts {
    /// Reads `who`'s facts (one query).
    pub async fn load(pool: &PgPool, who: &Principal) -> Result<Self, Db> {
        Ok(Facts {
            teams: store::teams_of(pool, who.user_id).await?,
        })
    }

    /// The ids of the teams the caller belongs to.
    pub fn teams(&self) -> &[i64] {
        &self.teams
    }

    /// The caller as the stewardship rules see them.
    pub fn steward<'a>(&'a self, who: &Principal) -> Steward<'a> {
        Steward::of(who, &self.teams)
    }
}

/// Refuses `who` unless one of their roles allows `action`; `what` names
/// the attempt in the refusal ("read the audit log").
pub fn require(who: &Principal, action: Action, what: &str) -> Result<(), AppError> {
    if who.may(action) {
        Ok(())
    } else {
        Err(AppError::Forbidden(what.to_string()))
    }
}
